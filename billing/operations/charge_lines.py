"""A coming charge line by line, for a page or the API to show (``GET
/subscriptions/{id}/upcoming``): each line's amount before its tax, the lines summing to
what is charged (``ComingCharge.amount``)."""

from __future__ import annotations

from typing import NamedTuple

from billing.models import Subscription
from billing.rules.invoice_tax import TaxTerms
from billing.rules.projection import ComingCharge


class ChargeLine(NamedTuple):
    description: str
    price: str | None  # the price's id, when the subscription names one
    meter: str | None  # the meter's event name, for a usage line
    quantity: int  # seats, or the usage's units
    amount: int  # minor units, before the line's tax
    tax: int  # minor units


def charge_lines(sub: Subscription, charge: ComingCharge, tax: TaxTerms | None = None) -> list[ChargeLine]:
    """The fixed fee of the period paid in advance (after the coupon), then the usage of
    the period just ended, if any. The tax is the invoice's, computed once on the whole
    (``projection.with_usage``): the fixed fee's line is taxed alone (``tax``: the terms
    the charge was taxed by), the usage's line has the rest, so the lines sum to the charge."""
    fixed = charge.list_price - charge.discount
    total = charge.tax_line
    if total is None:
        net, paid_tax = (fixed, 0) if charge.usage else (charge.amount, 0)
    elif charge.usage is None:
        net, paid_tax = total.net, total.tax
    else:
        assert tax is not None, "a charge with usage is itemised with its tax terms"
        alone = tax.line(fixed, charge.date)
        net, paid_tax = alone.net, alone.tax
    days = f"{charge.period_start.isoformat()} to {charge.period_end.isoformat()}"
    lines = [ChargeLine(f"{sub.ProductName or sub.SKU}, {days}", getattr(sub, "PriceId", None), None,
                        int(sub.Quantity or 1), net, paid_tax)]
    if charge.usage is not None:
        usage = charge.usage
        used = f"{usage.meter}, {usage.start.isoformat()} to {usage.end.isoformat()} (exclusive)"
        if total is None:
            lines.append(ChargeLine(used, usage.price_id, usage.meter, usage.quantity, usage.amount, 0))
        else:
            lines.append(ChargeLine(used, usage.price_id, usage.meter, usage.quantity, total.net - net,
                                    total.tax - paid_tax))
    return lines


def upcoming_object(sub: Subscription, charge: ComingCharge, tax: TaxTerms | None = None) -> dict[str, object]:
    """The coming payment as the API shows it (``GET /subscriptions/{id}/upcoming``) and
    the merchant's ``invoice.upcoming`` carries it: ``amount_due`` is what is charged, the
    sum of its lines (each ``amount`` before its ``tax``)."""
    return {
        "object": "upcoming_payment", "subscription": sub.sub_id,
        "amount_due": charge.amount, "currency": sub.Currency, "date": charge.date.isoformat(),
        "period_start": charge.period_start.isoformat(), "period_end": charge.period_end.isoformat(),
        "lines": [line._asdict() for line in charge_lines(sub, charge, tax)],
    }
