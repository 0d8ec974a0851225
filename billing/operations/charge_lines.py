"""A coming charge line by line, for a page or the API to show (``GET
/subscriptions/{id}/upcoming``): each line's amount before its tax, the lines summing to
what is charged (``ComingCharge.amount``)."""

from __future__ import annotations

from typing import NamedTuple

from django.utils.translation import override

from billing.models import Subscription
from billing.rules.add_ons import billed_on, plan_amount, split_fee
from billing.rules.invoice_tax import TaxTerms
from billing.rules.price_words import part_words
from billing.rules.projection import ChargeKind, ComingCharge
from billing.rules.switch import usage_only
from billing.rules.usage_lines import parts_of, plain_part, split_usages


class ChargeLine(NamedTuple):
    description: str
    price: str | None  # the price's id, when the subscription names one
    meter: str | None  # the meter's event name, for a usage line
    quantity: int  # seats, or the usage's units (a usage tier's: its units, or its packages)
    amount: int  # minor units, before the line's tax
    tax: int  # minor units
    # a usage tier's line: its unit amount (minor units, a decimal string), flat amount and
    # package size; None on the fixed fee's line
    unit_amount_decimal: str | None = None
    flat_amount: int | None = None
    package_size: int | None = None


def charge_lines(sub: Subscription, charge: ComingCharge, tax: TaxTerms | None = None) -> list[ChargeLine]:
    """The fixed fee of the period paid in advance (after the coupon), then the usage of
    the period just ended, if any, each metered price's, one line a tier of its price (as
    its receipt will be: billing/rules/usage_lines.py). The tax is the invoice's, computed
    once on the whole (``projection.with_usage``): the fixed fee's line is taxed alone
    (``tax``: the terms the charge was taxed by), the usage's lines share the rest, so the
    lines sum to the charge."""
    fixed = charge.list_price - charge.discount
    total = charge.tax_line
    if total is None:
        net, paid_tax = (fixed, 0) if charge.usages else (charge.amount, 0)
    elif not charge.usages:
        net, paid_tax = total.net, total.tax
    else:
        assert tax is not None, "a charge with usage is itemised with its tax terms"
        alone = tax.line(fixed, charge.date)
        net, paid_tax = alone.net, alone.tax
    days = f"{charge.period_start.isoformat()} to {charge.period_end.isoformat()}"
    # Usage alone has no fixed fee, nor has the last usage charge after a cancellation:
    # the usage's lines are the whole charge (usage alone's first payment, which bills no
    # usage, keeps the period's line of 0).
    no_fee = usage_only(sub) or charge.kind == ChargeKind.FINAL_USAGE
    lines = [] if no_fee and charge.usages else _fee_lines(sub, charge, days, net, paid_tax,
                                                           bool(total is not None and tax and tax.prices_include_tax))
    if not charge.usages:
        return lines
    if total is None:
        usage_net, usage_tax, include = charge.usage_amount, 0, False
    else:
        usage_net, usage_tax, include = total.net - net, total.tax - paid_tax, bool(tax and tax.prices_include_tax)
    shares = dict(net=usage_net, tax=usage_tax, gross=usage_net + usage_tax, prices_include_tax=include)
    split = split_usages([parts_of(u) for u in charge.usages], **shares)
    # Without tiers to show (never for a charge priced here): a line a metered price.
    plain = split is None and split_usages([plain_part(u.quantity, u.amount) for u in charge.usages], **shares)
    for n, usage in enumerate(charge.usages):
        used = f"{usage.meter}, {usage.start.isoformat()} to {usage.end.isoformat()} (exclusive)"
        if split is None:
            net_tax = (plain[n][0].net, plain[n][0].tax) if plain else (usage.amount, 0)
            lines.append(ChargeLine(used, usage.price_id, usage.meter, usage.quantity, *net_tax))
            continue
        if not usage.parts:  # no tier entered (nothing used of a graduated price): its one line
            [line] = split[n]
            lines.append(ChargeLine(used, usage.price_id, usage.meter, usage.quantity, line.net, line.tax))
            continue
        for line in split[n]:
            part = line.part
            with override("en"):
                words = part_words(part, sub.Currency, usage.unit_label)
            lines.append(ChargeLine(f"{used}: {words}", usage.price_id, usage.meter, part.units, line.net, line.tax,
                                    str(part.unit_amount), part.flat_amount, part.package_size))
    return lines


def _fee_lines(sub: Subscription, charge: ComingCharge, days: str, net: int, tax: int,
               prices_include_tax: bool) -> list[ChargeLine]:
    """The fixed fee's line, or, when the payment bills add-ons, one line an item (the
    plan's, then each add-on's), shared as its receipt will share it
    (billing/access/receipts.py ``_itemise_add_ons``)."""
    plan = ChargeLine(f"{sub.ProductName or sub.SKU}, {days}", sub.PriceId, None,
                      int(sub.Quantity or 1), net, tax)
    # by the first day it pays for, as its receipt (a past-due retry is charged later)
    add_ons = billed_on(sub, charge.period_start)
    if not add_ons:
        return [plan]
    (plan_net, plan_tax, _), *parts = split_fee(plan_amount(sub), [add_on.amount for add_on in add_ons], net=net,
                                                tax=tax, gross=net + tax, prices_include_tax=prices_include_tax)
    return [plan._replace(amount=plan_net, tax=plan_tax),
            *(ChargeLine(f"{add_on.name}, {days}", add_on.price_id, None, 1, part_net, part_tax)
              for add_on, (part_net, part_tax, _) in zip(add_ons, parts, strict=True))]


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
