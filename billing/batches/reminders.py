"""One reminder: when it falls, which payment it announces, and the claim-then-send that
makes two runs send it once.
"""

from __future__ import annotations

import contextlib
from datetime import date, timedelta

from django.conf import settings
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.batches.outcomes import ReminderOutcome, ReminderStatus
from billing.models import Subscription, SubscriptionStatus
from billing.notify import manage_url, subscription_context
from billing.operations.charge_lines import upcoming_object
from billing.operations.payments import next_charge
from billing.rules.card_expiry import expires_before
from billing.rules.projection import ComingCharge, coming_charges, usage_words
from billing.rules.schedule import cadence_of, next_payment_date, reminder_days, renewal_reminder
from billing.rules.tax import Seller
from core.localformat import LocalDate
from core.mail import money_text, send_customer_email


def _days_before() -> int:
    return settings.REMINDER_DAYS_BEFORE


def _lead(sub: Subscription) -> int | None:
    """The subscription's reminder lead at its cadence (``schedule.reminder_days``):
    ``REMINDER_DAYS_BEFORE``, more for a year or longer, None shorter than a month."""
    return reminder_days(cadence_of(sub), _days_before())


def reminded_payment_date(sub: Subscription, day: date) -> date:
    """The payment a reminder due on ``day`` announces. While past due,
    ``NextPaymentDate`` is a retry date, and the reminder is for the next anchor date,
    the cadence's reminder lead after ``day``."""
    if sub.Status == SubscriptionStatus.PAST_DUE or not sub.NextPaymentDate:
        return day + timedelta(days=_lead(sub) or _days_before())
    return date.fromisoformat(sub.NextPaymentDate)


def ends_trial(sub: Subscription, day: date) -> bool:
    """The payment the reminder due on ``day`` announces is the first charge after a free
    trial. ``create_subscription`` sets ``LastReminderDate`` (GSI-1's range key, so always
    in the index) to that charge's day, and every claimed reminder sets it to its own day,
    before the payment it announces: so it equals ``NextPaymentDate`` only until the trial's
    reminder is claimed. Or for a subscription whose first charge at subscribing was never
    taken (its ``Last*`` dates are that day, and ``NextPaymentDate`` still is too): its
    reminders come after that day, never on or before it as a trial's does."""
    return sub.Status == SubscriptionStatus.ACTIVE and bool(sub.NextPaymentDate) \
        and sub.LastReminderDate == sub.NextPaymentDate and sub.NextPaymentDate >= day.isoformat()


def _announced(sub: Subscription, day: date, seller: Seller | None = None) -> ComingCharge | None:
    """The charge the reminder due on ``day`` announces, as the payment run will take it
    (``payments.next_charge``, the function ``take_payment`` charges by: prorated after a
    change of day, to the first anchor date after a trial, less the coupon's discount, the
    tax as charged). GSI-1 does not project ``LastPaymentDate``: whether it is a first
    period is ``ends_trial``'s. None while past due (the reminder is for a later anchor
    date, not for the owed period)."""
    if sub.Status != SubscriptionStatus.ACTIVE or not sub.NextPaymentDate:
        return None
    return next_charge(sub, seller=seller, first=ends_trial(sub, day))


def _days_of(sub: Subscription, day: date) -> ComingCharge | None:
    """The days the announced charge pays for (its amount untaxed: no read of the
    seller's profile), for a reminder claimed but not sent."""
    if sub.Status != SubscriptionStatus.ACTIVE or not sub.NextPaymentDate:
        return None
    return coming_charges(sub, 1, first=ends_trial(sub, day))[0]


def _following_reminder(sub: Subscription, payment: date, day: date, charge: ComingCharge | None) -> date | None:
    """The reminder of the payment after ``payment``: that payment is due the day after
    the days ``payment`` pays for (a trial's first period ends before the first anchor
    date, a changed day's runs past the next one), else on the next anchor date (GSI-1
    projects ``PaymentDay`` for this: no GetItem per reminder). Never on or before
    ``payment``: ``NextPaymentDate`` is still ``payment`` until it is paid, so a reminder
    due by then would announce ``payment`` a second time. Each payment is reminded once.
    None at a cadence shorter than a month: the item leaves GSI-1 (a trial's first charge
    was its only reminder)."""
    following = charge.period_end + timedelta(days=1) if charge else next_payment_date(cadence_of(sub), payment)
    return renewal_reminder(cadence_of(sub), following, _days_before(), max(day, payment))


def _trial(sub: Subscription, payment: date, day: date) -> dict[str, object]:
    """The end of the free trial, for the reminder of the first charge after it."""
    return {"trial_end": payment - timedelta(days=1)} if ends_trial(sub, day) else {}


def send_reminder(sub: Subscription, *, day: date, dry_run: bool = False,
                  seller: Seller | None = None) -> ReminderOutcome:
    """Claim the reminder due on ``day`` (conditional update), then e-mail it. ``seller``:
    the seller's tax profile (a run reads it once; default: read here)."""
    out = ReminderOutcome(ReminderStatus.SKIPPED, sub.sub_id, sub.account_id, day=day)
    if not sub.is_live or sub.NextReminderDate != day.isoformat():
        out.reason = "not live or not due"
        return out
    if _lead(sub) is None and not ends_trial(sub, day):
        # Written before reminders followed the cadence: moved out of GSI-1, not sent.
        out.reason = "no renewal reminder at a cadence shorter than a month"
        if not dry_run:
            with contextlib.suppress(access.ConditionFailed):
                access.claim_reminder(sub, day=day, next_reminder=None)
        return out
    payment = out.payment_date = reminded_payment_date(sub, day)
    if dry_run:
        out.status = ReminderStatus.DRY_RUN
        return out
    # What the e-mail says is read before the claim moves LastReminderDate on (ends_trial).
    whole = _whole_if_metered(sub)
    charge = _announced(whole, day, seller)
    upcoming = _upcoming(whole, charge, seller)
    context = {**subscription_context(sub), "payment_date": payment, **_trial(sub, payment, day),
               **({"amount": money_text(charge.amount, sub.Currency)} if charge else {}),
               **(_usage_so_far(sub, charge, upcoming) if charge and upcoming else {}),
               **_card_warning(sub, payment)}
    try:
        access.claim_reminder(sub, day=day, next_reminder=_following_reminder(sub, payment, day, charge))
    except access.ConditionFailed:
        out.reason = "claimed by another run"
        return out
    out.status = ReminderStatus.SENT
    subject = _("Your free trial ends soon: {product}, first payment on {date}") if "trial_end" in context \
        else _("Upcoming payment: {product} on {date}")
    out.mail_error = send_customer_email(
        "reminder", sub.Email, format_lazy(subject, product=sub.ProductName or sub.SKU, date=LocalDate(payment)),
        context, language=sub.Language,
    )
    return out


def _whole_if_metered(sub: Subscription) -> Subscription:
    """A metered subscription read by key (GSI-1 projects ``MeteredPriceId`` but not the
    price and seats its lines name): one GetItem for these only, never for a fixed price's."""
    if not sub.MeteredPriceId:
        return sub
    return access.get_subscription(sub.account_id, sub.sub_id, sub.key_sku) or sub


def _upcoming(sub: Subscription, charge: ComingCharge | None, seller: Seller | None) -> dict[str, object] | None:
    """For a charge with usage: the coming payment as ``GET /subscriptions/{id}/upcoming``
    shows it at this moment (its usage lines are the e-mail's usage so far), else None."""
    if charge is None or not charge.usages:
        return None
    return upcoming_object(sub, charge, access.tax_terms(sub, seller))


def _usage_so_far(sub: Subscription, charge: ComingCharge, upcoming: dict[str, object]) -> dict[str, object]:
    """The amount is an estimate: the usage up to the period's last day is added on the
    payment day (docs/USAGE.md "Billing a period"). Its words: 'about' the total, and the
    usage so far, its line with its tax (what it adds to the fixed fee)."""
    assert charge.usages
    # the usage's lines (one a tier of its price), each with its tax
    used = sum(int(line["amount"]) + int(line["tax"]) for line in upcoming["lines"] if line["meter"])  # type: ignore[attr-defined]
    return {"amount": format_lazy(_("about {amount}"), amount=money_text(charge.amount, sub.Currency)),
            "usage_amount": money_text(used, sub.Currency),
            "usage_used": usage_words(charge.usages), "usage_last_day": charge.usage_last_day}


def _card_warning(sub: Subscription, payment: date) -> dict[str, object]:
    """A card that expires before the payment it announces adds a warning to the same
    e-mail: from GSI-1's projection of PaymentDetails, no read per item."""
    card = sub.PaymentDetails
    if not expires_before(card, payment):
        return {}
    return {"card_expires": f"{int(card.ExpMonth):02d}/{int(card.ExpYear)}",
            "change_card_url": manage_url(sub, "card/")}


def skip_stale_reminder(sub: Subscription, day: date, dry_run: bool) -> ReminderOutcome:
    """A missed reminder whose payment has already passed: claimed (so it moves on to
    the next period) but not sent."""
    out = ReminderOutcome(ReminderStatus.SKIPPED, sub.sub_id, sub.account_id, day=day,
                          reason="payment date already passed")
    if not dry_run:
        payment = reminded_payment_date(sub, day)
        with contextlib.suppress(access.ConditionFailed):
            access.claim_reminder(sub, day=day, next_reminder=_following_reminder(sub, payment, day, _days_of(sub, day)))
    return out


# The merchant hears that a free trial ends this many days before its last free day
# (``subscription.trial_will_end``, Stripe's habit).
TRIAL_WILL_END_DAYS = 3


def announce_trial_ends(day: date, *, shards: list[int] | None = None) -> int:
    """Write ``subscription.trial_will_end`` for the trials whose last free day is
    ``TRIAL_WILL_END_DAYS`` after ``day``: the subscriptions whose first charge is due the
    day after (one Query of GSI-2 per shard) and still unpaid (``LastPaymentDate`` is the
    first charge's day until it is paid), each read by key (a trial's full item), and
    written once per trial whatever the re-runs (``access.record_trial_will_end``).
    Returns how many were written."""
    first_charge = day + timedelta(days=TRIAL_WILL_END_DAYS + 1)
    written = 0
    for due in access.get_due_payments_by_date(first_charge, shards=shards):
        if due.Status != SubscriptionStatus.ACTIVE or due.LastPaymentDate != due.NextPaymentDate:
            continue
        sub = access.get_subscription(due.account_id, due.sub_id, due.key_sku)
        last_free = (first_charge - timedelta(days=1)).isoformat()
        if sub is not None and sub.TrialEnd == last_free and sub.LastPaymentDate == first_charge.isoformat():
            written += access.record_trial_will_end(sub)
    return written
