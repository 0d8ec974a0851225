"""A subscription state's words, one source for the pages' badge (``{% sub_status %}``)
and the API's ``status_label``: the customer pages' words, the dates worded by the caller
(the pages in the reader's language and format, the API in English and ISO)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from django.utils.translation import gettext as _

from billing.rules.lifecycle import SubState


def state_words(state: SubState, day: Callable[[date | None], str]) -> str:
    """The state's label in the active language, its dates worded by ``day``."""
    kind = state.kind
    if kind == "trialing":
        return _("Free until %(date)s") % {"date": day(state.until)}
    if kind == "cancelling":
        return _("Cancels on %(date)s") % {"date": day(state.until)}
    if kind == "paused":
        return _("Paused until %(date)s") % {"date": day(state.until)} if state.until else _("Paused")
    return {
        "active": _("Active"), "past_due": _("Past due"), "action_required": _("Action required"),
        "incomplete": _("Incomplete: payment to confirm"),
        "not_started": _("Expired: never started") if state.expired else _("Never started"),
        "ended": _("Ended"),
    }[kind]
