"""One metered price's usage line split into the invoice lines of its tiers
(billing/rules/usage_lines.py ``split_usage``): each shown tier its amount, the line's tax
shared over them by largest remainder, prices with tax included or added. A worked example
beside the property test of test_usage_invoice_lines.py, which finds the same faults but
only after shrinking its examples (slow enough that a mutation run counted them as timeouts)."""

from __future__ import annotations

from decimal import Decimal

from billing.rules.pricing import UsagePart
from billing.rules.tax import Rate, Treatment, tax_line
from billing.rules.usage_lines import split_usage

RATE = Rate(Decimal(22), "IT", Treatment.DOMESTIC)
# 1,235 calls: the first 1,000 free, 200 at 2.5 cents (5.00), 35 at 2 cents plus a flat 3.00 (3.70)
TIERS = [UsagePart(1000, Decimal(0), 0, 0), UsagePart(200, Decimal("2.5"), 0, 500), UsagePart(35, Decimal(2), 300, 370)]


def lines(*, include: bool) -> list[tuple[int, int, int, int]]:
    whole = tax_line(870, RATE, prices_include_tax=include)
    split = split_usage(TIERS, net=whole.net, tax=whole.tax, gross=whole.gross, prices_include_tax=include)
    assert split is not None
    return [(s.part.units, s.net, s.tax, s.gross) for s in split]


def test_a_usage_line_with_tax_included_is_split_into_its_tiers_sharing_its_tax() -> None:
    # 8.70 with 22% included: 7.13 + 1.57 of tax, shared 500:370 (0.90 and 0.67, the
    # larger remainder taking the odd cent)
    assert lines(include=True) == [(1000, 0, 0, 0), (200, 410, 90, 500), (35, 303, 67, 370)]


def test_a_usage_line_with_tax_added_is_split_into_its_tiers_sharing_its_tax() -> None:
    # 8.70 before tax, 1.91 added: 1.10 and 0.81
    assert lines(include=False) == [(1000, 0, 0, 0), (200, 500, 110, 610), (35, 370, 81, 451)]


def test_a_usage_line_whose_tiers_are_not_its_amount_is_not_split() -> None:
    whole = tax_line(871, RATE, prices_include_tax=True)
    assert split_usage(TIERS, net=whole.net, tax=whole.tax, gross=whole.gross, prices_include_tax=True) is None
