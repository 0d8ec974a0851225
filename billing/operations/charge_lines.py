"""A coming charge line by line, for a page or the API to show (``GET
/subscriptions/{id}/upcoming``): each line's amount before its tax, the lines summing to
what is charged (``ComingCharge.amount``)."""

from __future__ import annotations

from typing import NamedTuple

from billing.models import Subscription
from billing.rules.projection import ComingCharge


class ChargeLine(NamedTuple):
    description: str
    price: str | None  # the price's id, when the subscription names one
    meter: str | None  # the meter's event name, for a usage line
    quantity: int | str  # a usage quantity may be a decimal (as a string: exact)
    amount: int  # minor units, before the line's tax
    tax: int  # minor units


def _net_and_tax(gross: int, charge: ComingCharge) -> tuple[int, int]:
    # With the tax known, the line's net and tax are its figures (tax-inclusive prices: the
    # net is the price less the tax in it); without, the amount is the line's whole.
    if charge.tax_line is None:
        return gross, 0
    return charge.tax_line.net, charge.tax_line.tax


def charge_lines(sub: Subscription, charge: ComingCharge) -> list[ChargeLine]:
    """The fixed fee of the period paid in advance (after the coupon), one line."""
    net, tax = _net_and_tax(charge.amount, charge)
    days = f"{charge.period_start.isoformat()} to {charge.period_end.isoformat()}"
    return [ChargeLine(f"{sub.ProductName or sub.SKU}, {days}", getattr(sub, "PriceId", None), None,
                       int(sub.Quantity or 1), net, tax)]
