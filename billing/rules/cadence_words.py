"""A subscription's cadence in words (docs/MONEY.md "Cadences"): its amount per period
("€9.99 a month", "€99.00 a year", "€30.00 every 3 months") and the refusals that follow
from it, in the active language. The interval's own words are the price's
(``price_words.interval_words``), so a price and a subscription of it read alike."""

from __future__ import annotations

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from billing.rules.price_words import interval_words
from billing.rules.schedule import Cadence

# Weeks and days fall on a weekday or every few days, not on a day of the month.
NO_PAYMENT_DAY = _("This subscription renews every few days or weeks: it has no day of the month to change.")


def amount_per_period(amount: str, cadence: Cadence) -> str:
    """``amount`` (already formatted) per period of ``cadence``: the monthly words are the
    ones the pages always used ("%(amount)s a month"), so their translations stand."""
    return amount_every(amount, cadence.interval, cadence.count)


def amount_every(amount: str, interval: str, count: int = 1) -> str:
    """``amount_per_period`` of a price's interval and count, before any subscription
    (and its anchor) exists: the subscribe pages' quote."""
    if (interval, count) == ("month", 1):
        return gettext("%(amount)s a month") % {"amount": amount}
    return gettext("%(amount)s %(interval)s") % {"amount": amount, "interval": interval_words(interval, count)}


def next_payment_words(amount: str, *, metered: bool, usage_alone: bool) -> str:
    """The next payment, announced before its usage is known (a keep, a resume, a pause):
    a metered price's usage of the period is charged beside the fixed fee ``amount``
    (already formatted), and usage alone is that usage only; any other is ``amount``."""
    if usage_alone:
        return gettext("your usage of the period")
    if metered:
        return gettext("%(amount)s plus your usage") % {"amount": amount}
    return amount
