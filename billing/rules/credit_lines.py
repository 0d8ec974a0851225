"""A refund's credit note, line by line: how its share of the invoice
(``invoice_tax.refund_share``, the note's totals, unchanged) is split over the lines of the
invoice it credits (the fixed fee, seats, the usage's tiers), as Stripe's credit notes
name the invoice lines they credit.

* **Gross.** Each refund is split over what each line still holds (its gross less what
  the earlier refunds took of it), in proportion, by largest remainder (ties: the earlier
  line): no line is ever credited more than it holds, and the refund that takes the rest
  of the invoice takes the rest of every line. A single full refund credits each line
  exactly.
* **Tax.** The note's tax (``refund_share``'s, rounded on the refunded total) is split over
  the same lines in proportion to their gross in this note, by largest remainder: a line's
  tax never exceeds its gross (the share's tax never exceeds the refund), so no line has
  a negative net. The refund that takes the rest of the invoice gives each line the rest of
  its own tax, when that keeps every line's net at zero or more (it always does but at a
  rounding's edge): a full refund's note is then the invoice's lines negated.
* **One line chosen** (Stripe's credit note ``lines``): a refund may credit one line alone,
  at most what that line still holds. Its gross is all that line's; its tax is the note's
  tax as for any refund (``refund_share``: the totals and the tax ledger do not depend on
  which lines a refund credits), never more than its gross. Later refunds share what the
  lines still hold, so a line refunded alone is never credited again beyond it.

Every figure is replayed from the invoice's lines and the refunds in their order, so each
note is worked out again the same way, whatever process writes it. Integer minor units
throughout (the proportions as integer quotients and remainders: no float).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from billing.rules.invoice_tax import refund_share


@dataclass(frozen=True)
class InvoiceLine:
    """An invoice line's figures (positive): what a refund may credit of it."""

    gross: int
    tax: int


@dataclass(frozen=True)
class CreditedLine:
    """One line of a credit note, positive (the note stores it negated): ``whole``, the
    line credited in full by this note alone."""

    gross: int
    tax: int
    whole: bool = False

    @property
    def net(self) -> int:
        return self.gross - self.tax


@dataclass(frozen=True)
class Refunded:
    """A refund as its credit note splits it: its amount, and the one invoice line it
    credits alone (its index), or None: shared over the lines."""

    amount: int
    line: int | None = None

    @staticmethod
    def of(refund: int | Refunded) -> Refunded:
        """An amount alone as a refund shared over the lines."""
        return refund if isinstance(refund, Refunded) else Refunded(refund)


def largest_remainder(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` split in proportion to ``weights`` (non-negative integers): each part the
    floor of its exact share, then one more to the largest fractions (ties: the earlier)
    until the parts sum to ``total``. A zero weight (or a zero exact share) gets nothing
    more than its floor, and a part never exceeds the ceiling of its exact share."""
    whole = sum(weights)
    if total == 0 or whole == 0:
        if total:
            raise ValueError("nothing to split over")
        return [0] * len(weights)
    # each exact share is parts[n] + remainders[n] / whole: integers only, no float
    parts = [total * weight // whole for weight in weights]
    remainders = [total * weight % whole for weight in weights]
    order = sorted(range(len(weights)), key=lambda n: (-remainders[n], n))
    for n in order[:total - sum(parts)]:
        parts[n] += 1
    return parts


def credit_lines(lines: Sequence[InvoiceLine], refunds: Sequence[int | Refunded]) -> list[list[CreditedLine]]:
    """Each refund's credit note lines (one list a refund, in order; a line each invoice
    line, zero where the refund takes nothing of it), for an invoice of ``lines`` refunded
    by ``refunds`` (positive amounts whose sum is at most the invoice's gross; an amount
    alone is shared over the lines, a ``Refunded`` with a line credits that line alone).
    A refund of a line of more than the line still holds is a ValueError."""
    gross = sum(line.gross for line in lines)
    tax = sum(line.tax for line in lines)
    count = range(len(lines))
    took_gross = [0 for _ in count]
    took_tax = [0 for _ in count]
    notes: list[list[CreditedLine]] = []
    before = 0
    for refund in map(Refunded.of, refunds):
        amount = refund.amount
        share = refund_share(tax=tax, gross=gross, earlier=[before], refund=amount)
        left = [lines[n].gross - took_gross[n] for n in count]
        if refund.line is None:
            gross_parts = largest_remainder(amount, left)
            tax_parts = largest_remainder(share.tax, gross_parts)
        else:
            if not 0 <= refund.line < len(lines) or amount > left[refund.line]:
                raise ValueError("a refund of one line is at most what that line still holds")
            gross_parts = [amount if n == refund.line else 0 for n in count]
            tax_parts = [share.tax if n == refund.line else 0 for n in count]
        if before + amount == gross:
            rest = [lines[n].tax - took_tax[n] for n in count]
            if all(0 <= rest[n] <= gross_parts[n] for n in count):
                tax_parts = rest
        notes.append([CreditedLine(gross_parts[n], tax_parts[n], whole=gross_parts[n] == lines[n].gross > 0)
                      for n in count])
        for n in count:
            took_gross[n] += gross_parts[n]
            took_tax[n] += tax_parts[n]
        before += amount
    return notes


def lines_left(lines: Sequence[InvoiceLine], refunds: Sequence[int | Refunded]) -> list[int]:
    """What each line still holds (gross) after ``refunds``: what a refund of it alone may
    take."""
    notes = credit_lines(lines, refunds)
    return [line.gross - sum(note[n].gross for note in notes) for n, line in enumerate(lines)]
