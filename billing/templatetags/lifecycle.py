"""A subscription's one state, the same words on every page.

``{% sub_state sub as state %}``: its ``billing.rules.lifecycle.SubState`` today (active,
trialing, cancelling, paused, past due, action required, incomplete, not started, ended).
``{% sub_status sub %}``: that state as a badge with its words ("Free until 3 Dec 2026",
"Cancels on 30 Nov 2026", ...): the dashboard, the subscription page and the staff
pages all show this one, so no page calls a paused or never-started subscription
"Active" (``staff=True``: the staff pages' dates).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from billing.models import Subscription
from billing.rules.lifecycle import SubState, state_of
from billing.rules.state_words import state_words
from billing.templatetags.staff_pages import staff_date, status_label
from core import localformat
from core.pages import today

register = template.Library()

# The staff stylesheet's badge classes (static/staff/staff.css).
_STAFF_CSS = {"past_due": "past_due", "action_required": "past_due", "incomplete": "dispute-open",
              "cancelling": "dispute-open", "not_started": "cancelled", "ended": "cancelled"}
_CSS = {
    "active": "text-bg-success", "trialing": "text-bg-success", "cancelling": "text-bg-warning",
    "paused": "text-bg-info", "past_due": "text-bg-danger", "action_required": "text-bg-danger",
    "incomplete": "text-bg-warning", "not_started": "text-bg-secondary", "ended": "text-bg-secondary",
}


@register.simple_tag
def sub_state(sub: Subscription) -> SubState:
    return state_of(sub, today())


# On the staff pages a state that is one stored status is named by it (English keeps the
# stored word, as staff meet it in logs and exports: ``staff_pages.status_label``).
_STAFF_STORED = {"active": "active", "past_due": "past_due", "ended": "cancelled", "incomplete": "incomplete"}


def status_words(state: SubState, day: Callable[[date | None], str], *, staff: bool = False) -> str:
    """The state's label, its dates worded by ``day``."""
    kind = state.kind
    if staff and kind in _STAFF_STORED:
        return status_label(_STAFF_STORED[kind])
    return state_words(state, day)


@register.simple_tag
def sub_status(sub: Subscription, staff: bool = False) -> SafeString:
    """The state's badge, ``data-state`` its kind (for tests and styles)."""
    state = state_of(sub, today())
    day = staff_date if staff else (lambda value: localformat.local_day(value, "j M Y"))
    css = _STAFF_CSS.get(state.kind, state.kind) if staff else _CSS[state.kind]
    return format_html('<span class="badge {}" data-testid="sub-status" data-state="{}">{}</span>',
                       css, state.kind, status_words(state, day, staff=staff))


@register.simple_tag
def sub_words(sub: Subscription, staff: bool = False) -> str:
    """The state's words alone (the summary's "Status" line, the staff lists)."""
    day = staff_date if staff else (lambda value: localformat.local_day(value, "j M Y"))
    return status_words(state_of(sub, today()), day, staff=staff)
