"""A usage line of an invoice as one line per tier (docs/MONEY.md, "Usage lines by tier"):
the usage's net, tax and gross, computed once with the rest of the invoice, shared out
over the parts ``pricing.amount_parts`` gives, so that the tier lines add up to the one
usage line exactly (the receipt's totals, the tax ledger, the credit notes and the
revenue figures read the same figures as before).

The rule: each line's price (its gross when prices include tax, else its net) is its
part's amount; the usage's tax is shared in proportion to those amounts by largest
remainder (each line takes the whole minor units of its share, then the units left go one
each to the largest remainders, the earlier line on a tie); the other side is the price
less (or plus) the line's tax. So each line's tax is within one minor unit of its exact
share, and the lines sum to the usage's net, tax and gross."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from billing.rules.pricing import UsagePart
from billing.rules.projection import MeteredUsage


@dataclass(frozen=True)
class SplitLine:
    part: UsagePart
    net: int
    tax: int
    gross: int


def shown_parts(parts: list[UsagePart] | tuple[UsagePart, ...]) -> list[UsagePart]:
    """The parts an invoice shows: a part of 0 units and 0 left out (a volume or per-unit
    price at quantity 0); a free tier's units kept ("1,000 calls free"). Nothing used at
    all: the first part, so the invoice still names the usage (at 0)."""
    kept = [p for p in parts if p.units or p.amount]
    return kept or list(parts[:1])


def share_tax(tax: int, amounts: list[int]) -> list[int]:
    """``tax`` shared in proportion to ``amounts`` (each >= 0) by largest remainder: sums
    to ``tax`` exactly. All amounts 0: the tax on the first."""
    total = sum(amounts)
    if not amounts:
        return []
    if total == 0:
        return [tax] + [0] * (len(amounts) - 1)
    shares = [tax * a // total for a in amounts]
    left = tax - sum(shares)
    # the largest remainders first; on a tie the earlier line
    order = sorted(range(len(amounts)), key=lambda i: (-(tax * amounts[i] % total), i))
    for i in order[:left]:
        shares[i] += 1
    return shares


def plain_part(quantity: int, amount: int) -> tuple[UsagePart]:
    """A metered price's usage as one part, without its tiers (a price no longer there to
    read them from): its quantity and its amount, so its line takes its share of the tax."""
    return (UsagePart(quantity, Decimal(0), 0, amount),)


def parts_of(usage: MeteredUsage) -> tuple[UsagePart, ...]:
    """The parts a usage's lines are made of: its price's tiers entered, or, when it
    entered none (nothing used of a graduated price), its plain part, so that every
    metered price keeps a line on the invoice ("api_calls × 0")."""
    return usage.parts or plain_part(usage.quantity, usage.amount)


def split_usages(groups: list[tuple[UsagePart, ...]], *, net: int, tax: int, gross: int,
                 prices_include_tax: bool) -> list[list[SplitLine]] | None:
    """The usage of several metered prices (``groups``, each one's parts), one usage line
    (``net``, ``tax``, ``gross``) in all, as one line per shown part of each, the tax
    shared over every part at once (so the lines sum to the one usage line whatever the
    number of prices); or None when the parts are not that line's (their amounts do not
    add up to its price): the caller keeps its own lines."""
    shown = [shown_parts(parts) for parts in groups]
    flat = [part for parts in shown for part in parts]
    amounts = [p.amount for p in flat]
    price = gross if prices_include_tax else net
    if not flat or sum(amounts) != price or net + tax != gross:
        return None
    lines = []
    for part, amount, part_tax in zip(flat, amounts, share_tax(tax, amounts), strict=True):
        if prices_include_tax:
            lines.append(SplitLine(part, amount - part_tax, part_tax, amount))
        else:
            lines.append(SplitLine(part, amount, part_tax, amount + part_tax))
    taken = iter(lines)
    return [[next(taken) for _ in parts] for parts in shown]


def split_usage(parts: list[UsagePart] | tuple[UsagePart, ...], *, net: int, tax: int, gross: int,
                prices_include_tax: bool) -> list[SplitLine] | None:
    """One metered price's usage line as one line per shown part (``split_usages``)."""
    split = split_usages([tuple(parts)], net=net, tax=tax, gross=gross, prices_include_tax=prices_include_tax)
    return split[0] if split is not None else None
