"""The reminder of a subscription's last charge: a metered subscription cancelled at its
period's end still pays the usage of that period, the day after its last day
(billing/operations/final_usage.py). That charge is a payment like any other, so the
customer hears of it the cadence's reminder lead before, with the usage as it stands
(docs/USAGE.md "Billed at a cancellation").

The reminder run reads the usage end entries due within the longest lead (one Query of
their one partition, ``ending_entries``; ``invoice.upcoming`` reads the same), and for
each one due to be reminded claims it (``RemindedOn``, a conditional write), then sends
the e-mail: two runs at once send it once, a re-run sends nothing more, and a run that
missed days still sends it before the charge. Nothing used so far: nothing to announce
yet, so the entry is looked at again by the next run (the usage may still come)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date, timedelta

from django.conf import settings
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.access.usage_billing import claim_usage_reminder, usage_end_entries
from billing.batches.outcomes import ReminderOutcome, ReminderStatus
from billing.batches.upcoming_invoices import notice_days
from billing.models import UsageEndEntry
from billing.notify import subscription_context
from billing.operations.final_usage import last_usage_charge, still_ends, told_in_advance
from billing.rules.projection import usage_words
from billing.rules.schedule import LONG_PERIOD_REMINDER_DAYS, cadence_of, reminder_days
from billing.rules.tax import Seller
from core.localformat import LocalDate
from core.mail import money_text, send_customer_email


def _longest_lead() -> int:
    """The most days before a payment any cadence reminds it (a year's or longer)."""
    return max(settings.REMINDER_DAYS_BEFORE, LONG_PERIOD_REMINDER_DAYS)


def ending_entries(today: date) -> list[UsageEndEntry]:
    """The last usage charges after ``today`` that a reminder run may announce today: due
    within the longest reminder lead (or ``invoice.upcoming``'s days). One Query."""
    return list(usage_end_entries(today + timedelta(days=max(_longest_lead(), notice_days())), after=today))


def remind_last_usage(today: date, entries: Iterable[UsageEndEntry], *, takes: Callable[[str], bool] | None = None,
                      seller: Seller | None = None) -> list[ReminderOutcome]:
    """Send the reminders of the last usage charges due to be reminded by ``today`` (of
    ``entries``: ``ending_entries``; the charge after ``today``, its lead reached);
    ``takes(sub_id)``: only these (a run's shards). Returns each one sent (its
    ``mail_error`` if the e-mail failed). Requests: per entry whose ``RemindOn`` has come
    one GetItem, ``last_usage_charge``'s reads and the claim (an entry still to be reminded
    with some usage: a GetItem each run until it is)."""
    sent = []
    for entry in entries:
        if entry.RemindedOn or not told_in_advance(entry):
            continue  # reminded already; a retry after a decline (told by its own e-mail); a cancel now's
        if entry.RemindOn and entry.RemindOn > today.isoformat():
            continue  # its lead not reached yet (the day stored with it: no subscription read)
        if takes is not None and not takes(entry.SubId):
            continue
        if (outcome := _remind(entry, today, seller)) is not None:
            sent.append(outcome)
    return sent


def _remind(entry: UsageEndEntry, today: date, seller: Seller | None) -> ReminderOutcome | None:
    sub = access.get_subscription(entry.AccountId, entry.SubId, entry.SKU)
    if sub is None or not still_ends(sub, entry):
        return None  # kept or ended otherwise: the payment run deletes the entry
    lead = reminder_days(cadence_of(sub), settings.REMINDER_DAYS_BEFORE)
    if lead is None or entry.due - timedelta(days=lead) > today:
        return None  # no reminder at a cadence shorter than a month; not yet
    charge = last_usage_charge(sub, today)
    if charge is None or charge.amount <= 0:
        return None
    try:
        claim_usage_reminder(entry, today)
    except access.ConditionFailed:
        return None  # claimed by another run, or billed meanwhile
    context = {**subscription_context(sub), "last_usage": True, "payment_date": charge.date,
               "amount": format_lazy(_("about {amount}"), amount=money_text(charge.amount, sub.Currency)),
               "usage_used": usage_words(charge.usages), "usage_last_day": charge.period_end}
    subject = _("Last payment: {product}, your usage, on {date}")
    error = send_customer_email("reminder", sub.Email,
                                format_lazy(subject, product=sub.ProductName or sub.SKU, date=LocalDate(charge.date)),
                                context, language=sub.Language)
    return ReminderOutcome(ReminderStatus.SENT, sub.sub_id, sub.account_id, day=today, payment_date=charge.date,
                           reason="last usage charge", mail_error=error)
