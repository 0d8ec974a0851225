"""Small display helpers for the portal templates."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.models import Subscription
from billing.rules.add_ons import add_ons_words as add_on_words
from billing.rules.cadence_words import amount_per_period as per_period
from billing.rules.lifecycle import NEVER_STARTED_REASONS
from billing.rules.price_words import interval_words
from billing.rules.projection import ComingCharge, coming_charges
from billing.rules.schedule import cadence_of
from billing.rules.switch import usage_only
from core import localformat
from core.money import format_with_symbol
from core.pages import today

register = template.Library()


# Items store dates as ISO-8601 strings; templates format real dates (``|date``).
isodate = register.filter("isodate", localformat.parse_date)


@register.filter
def local_date(value: str | date | None, django_format: str = "j F Y") -> str:
    """``{{ sub.NextPaymentDate|local_date:"j F Y" }}``: an ISO string or a date in the
    active language ("30 November 2026", "30 novembre 2026", "2026年11月30日")."""
    return localformat.local_day(value, django_format)


@register.filter
def billing_date(value: str | date | None, django_format: str = "j F Y") -> str:
    """``{{ receipt.ProcessedDate|billing_date }}``: a stored timestamp's day in the billing
    time zone (``localformat.billing_day``), in the active language: the date a money
    document states, as its tax was chosen for that day."""
    return localformat.local_day(localformat.billing_day(value), django_format)


_STATUS = {
    "active": (_("Active"), "text-bg-success"),
    "past_due": (_("Past due"), "text-bg-danger"),
    "cancelled": (_("Cancelled"), "text-bg-secondary"),
    "paid": (_("Paid"), "text-bg-success"),
    "refunded": (_("Refunded"), "text-bg-warning"),
    "partially_refunded": (_("Partially refunded"), "text-bg-warning"),
    # The shop's orders, shipments and payments (labels only: the look stays the default's).
    "pending_payment": (_("Pending payment"), "text-bg-light"),
    "partially_shipped": (_("Partially shipped"), "text-bg-light"),
    "shipped": (_("Shipped"), "text-bg-light"),
    "declined": (_("Declined"), "text-bg-light"),
    "created": (_("Created"), "text-bg-light"),
    "reversed": (_("Reversed"), "text-bg-light"),
}


@register.filter
def status_badge(status: str | None) -> SafeString:
    label, css = _STATUS.get(status or "", ((status or "").replace("_", " ").capitalize(), "text-bg-light"))
    return format_html('<span class="badge {}">{}</span>', css, label)


# Stripe's dispute reasons, as the customer's receipt page names them.
_DISPUTE_REASONS = {
    "fraudulent": _("Fraudulent (not made by the card holder)"),
    "duplicate": _("Duplicate payment"),
    "subscription_canceled": _("Subscription cancelled"),
    "product_not_received": _("Service not received"),
    "product_unacceptable": _("Service not acceptable"),
    "unrecognized": _("Payment not recognised"),
    "credit_not_processed": _("Refund not processed"),
    "general": _("Other"),
}


@register.filter
def dispute_reason(reason: str | None) -> str:
    """``{{ receipt.DisputeReason|dispute_reason }}``: a dispute's reason in words."""
    return _in_words(reason, _DISPUTE_REASONS, sentence=True)


# Why a payment was refunded (a refund's, and so its credit note's, reason), in words:
# Stripe's refund reasons, the dispute reasons above (a dispute lost is refunded), and the
# reasons billing writes itself. A staff member's own words are shown as they typed them.
_REFUND_REASONS = {
    **_DISPUTE_REASONS,
    "requested_by_customer": _("Requested by the customer"),
    "expired_uncaptured_charge": _("Payment not completed"),
    "dispute lost": _("Dispute lost"),
    "switch of product not made": _("Switch of product not made"),
    "charged after the account was closed": _("Charged after the account was closed"),
    "refunded at the payment processor": _("Refunded by the seller"),
    "staff refund": _("Refunded by the seller"),
}
# A cancel now's refund of the days after it (billing/actions/lifecycle.py).
_CANCELLED_NOW = re.compile(r"cancelled now: days after (\d{4}-\d{2}-\d{2}) unused")


@register.filter
def refund_reason(reason: str | None) -> str:
    """``{{ doc.reason|refund_reason }}``: a refund's (a credit note's) reason in words."""
    cancelled = _CANCELLED_NOW.fullmatch(reason or "")
    if cancelled:
        return _("Cancelled: the days after %(date)s refunded") % {"date": local_date(cancelled.group(1), "j F Y")}
    label = _REFUND_REASONS.get(reason or "")
    return str(label) if label is not None else reason or ""  # else a staff member's own words


# Why a payment failed, in words: the processor's decline codes and the reasons a
# subscription ended for (billing/access/history.py PAYMENT_FAILURE_REASONS).
_DECLINE_REASONS = {
    "card_declined": _("card declined"),
    "declined": _("card declined"),
    "generic_decline": _("card declined"),
    "do_not_honor": _("card declined"),
    "insufficient_funds": _("insufficient funds"),
    "expired_card": _("card expired"),
    "incorrect_cvc": _("wrong security code"),
    "invalid_token": _("card not usable"),
    "authentication_required": _("not confirmed with your bank"),
    "authentication_failed": _("not confirmed with your bank"),
    "canceled": _("not confirmed with your bank"),
    "first_payment_declined": _("card declined"),
    "first_payment_not_confirmed": _("not confirmed with your bank"),
    "incomplete_expired": _("not confirmed with your bank in time"),
    "first_payment_failed": _("the payment could not be completed"),
    "payment_failed": _("declined on every attempt"),
}


@register.filter
def decline_reason(code: str | None) -> str:
    """``{{ attempt.reason|decline_reason }}``: why a payment failed, in the customer's words."""
    return _in_words(code, _DECLINE_REASONS, sentence=False)


def _in_words(code: str | None, words: dict[str, Any], *, sentence: bool) -> str:
    """``code`` in the active language, from ``words``; one it does not know as it is
    stored, its underscores spaces (capitalized, as a ``sentence``)."""
    label = words.get(code or "")
    if label is not None:
        return str(label)
    shown = (code or "").replace("_", " ")
    return shown.capitalize() if sentence else shown


@register.filter
def first_payment_failure(code: str | None) -> bool:
    """Whether a failed attempt's reason says the subscription never started."""
    return code in NEVER_STARTED_REASONS


@register.filter
def coming_charge(sub: Subscription) -> ComingCharge | None:
    """``{% with charge=sub|coming_charge %}``: the subscription's next payment as the
    payment run will take it (``rules.projection``: its days, price, coupon's discount and
    amount), or None when none is due (paused with no end, cancelled)."""
    charges = coming_charges(sub, 1, tax=access.tax_terms(sub))
    return charges[0] if charges else None


@register.filter
def amount_per_period(sub: Subscription) -> str:
    """``{{ sub|amount_per_period }}``: the subscription's amount for one period of its
    cadence: "$9.99 a month", "$99.00 a year", "$30.00 every 3 months"; usage alone has
    no fixed amount (its metered price's words stand beside it)."""
    if usage_only(sub):
        return gettext("No fixed fee: you pay for your usage")
    return per_period(format_with_symbol(int(sub.PaymentAmount), sub.Currency), cadence_of(sub))


@register.filter
def add_ons_words(sub: Subscription) -> list[str]:
    """``{% for words in sub|add_ons_words %}``: each add-on in force or to come, in words
    (``rules.add_ons.add_ons_words``: "Extra storage: $3.00 a month, from 10 Apr 2027")."""
    return add_on_words(sub, today(), lambda day: localformat.local_day(day, "j M Y"))


@register.filter
def cadence_words(sub: Subscription) -> str:
    """``{{ sub|cadence_words }}``: how often it renews, "a month", "every 3 months",
    "a year" (the staff pages put it beside the amount in their own format)."""
    cadence = cadence_of(sub)
    return interval_words(cadence.interval, cadence.count)
