"""A refund's credit note line by line (billing/rules/credit_lines.py): each note's lines
add up to its share of the invoice (``refund_share``, unchanged), no line is credited more
than it holds or gets a negative net, and refunds that take the whole invoice take each
line exactly: its gross and its tax."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.rules.credit_lines import CreditedLine, InvoiceLine, credit_lines, largest_remainder
from billing.rules.invoice_tax import refund_share


@st.composite
def invoice_lines(draw) -> list[InvoiceLine]:
    lines = []
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        gross = draw(st.integers(min_value=0, max_value=50_000))
        lines.append(InvoiceLine(gross, draw(st.integers(min_value=0, max_value=gross))))
    if sum(line.gross for line in lines) == 0:
        lines[0] = InvoiceLine(1, 0)
    return lines


@st.composite
def refunded(draw) -> tuple[list[InvoiceLine], list[int]]:
    lines = draw(invoice_lines())
    left, refunds = sum(line.gross for line in lines), []
    while left and draw(st.booleans()):
        amount = draw(st.integers(min_value=1, max_value=left))
        refunds.append(amount)
        left -= amount
    if draw(st.booleans()) and left:
        refunds.append(left)  # the rest
    return lines, refunds


@given(refunded())
def test_each_note_is_its_share_split_over_the_lines_it_may_take(case) -> None:
    lines, refunds = case
    gross, tax = sum(line.gross for line in lines), sum(line.tax for line in lines)
    notes = credit_lines(lines, refunds)
    assert len(notes) == len(refunds)
    for n, (note, refund) in enumerate(zip(notes, refunds, strict=True)):
        share = refund_share(tax=tax, gross=gross, earlier=refunds[:n], refund=refund)
        assert (sum(part.gross for part in note), sum(part.tax for part in note)) == (share.gross, share.tax)
        assert all(0 <= part.tax <= part.gross for part in note)  # no negative net
    for i, line in enumerate(lines):
        assert sum(note[i].gross for note in notes) <= line.gross
    if sum(refunds) == gross:  # all refunded: each line exactly, its tax included
        assert [sum(note[i].gross for note in notes) for i in range(len(lines))] == [line.gross for line in lines]
        assert sum(part.tax for note in notes for part in note) == tax


@given(invoice_lines())
def test_one_refund_of_everything_is_the_invoice_s_lines(lines) -> None:
    [note] = credit_lines(lines, [sum(line.gross for line in lines)])
    assert [(part.gross, part.tax) for part in note] == [(line.gross, line.tax) for line in lines]
    assert all(part.whole for part in note if part.gross)


@given(st.integers(min_value=1, max_value=10_000), st.integers(min_value=0, max_value=10_000), st.data())
def test_an_invoice_of_one_line_credits_what_refund_share_says(gross, tax, data) -> None:
    tax = min(tax, gross)
    first = data.draw(st.integers(min_value=1, max_value=gross))
    for n, [part] in enumerate(credit_lines([InvoiceLine(gross, tax)], [first, gross - first][:2 if gross > first else 1])):
        share = refund_share(tax=tax, gross=gross, earlier=[first][:n], refund=part.gross)
        assert (part.gross, part.tax, part.net) == (share.gross, share.tax, share.net)


def test_a_partial_refund_of_a_fee_and_two_tiers_in_figures() -> None:
    # $10.00 fee (tax $1.74) + 1,000 free calls ($0) + 235 calls ($0.47, tax $0.08): $5.00
    # back is split 1000:0:47, what each holds; its tax (rounded on the total, $0.87) as those parts.
    lines = [InvoiceLine(1000, 174), InvoiceLine(0, 0), InvoiceLine(47, 8)]
    first, rest = credit_lines(lines, [500, 547])
    assert first == [CreditedLine(478, 83), CreditedLine(0, 0), CreditedLine(22, 4)]
    assert sum(p.tax for p in first) == refund_share(tax=182, gross=1047, earlier=[], refund=500).tax == 87
    assert rest == [CreditedLine(522, 91), CreditedLine(0, 0), CreditedLine(25, 4)]  # the rest of each line


def test_largest_remainder_gives_the_odd_units_to_the_largest_fractions() -> None:
    assert largest_remainder(10, [1, 1, 1]) == [4, 3, 3]  # a tie: the earlier line
    assert largest_remainder(7, [0, 5, 2]) == [0, 5, 2]
    assert largest_remainder(0, [0, 0]) == [0, 0]
    assert largest_remainder(0, [3, 4]) == [0, 0]
    with pytest.raises(ValueError, match="^nothing to split over$"):
        largest_remainder(1, [0, 0])


def test_each_refund_splits_what_the_earlier_ones_left() -> None:
    # 3 and 2 refunded 1, 1, then the rest: the odd units go where most is left, and the
    # rest is each line's own rest (never a line credited more than it holds).
    notes = credit_lines([InvoiceLine(3, 0), InvoiceLine(2, 0)], [1, 1, 3])
    assert [[part.gross for part in note] for note in notes] == [[1, 0], [1, 0], [1, 2]]
