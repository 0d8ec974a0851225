"""The tax of an invoice and of the credit notes that correct it, in minor units. Pure.

* A charge's tax line: ``tax.tax_line`` on the price the projection computed (proration
  and coupons first, tax after), at the rate ``tax.applicable_rate`` gives for the seller
  and the buyer on the charge's day. Tax-inclusive prices charge the price; tax-exclusive
  ones charge ``net + tax``.
* A credit note (a refund of ``refund`` of an invoice's gross): the refund's share of the
  invoice's tax, rounded half up on the refunded total (``refund_share``); the refund that
  leaves nothing of the gross takes what the earlier ones left of the tax, so the credit
  notes of a fully refunded invoice sum to it exactly (tests/billing/test_tax_ledger.py,
  hypothesis).
* The ledger's shard: the quarter's totals of one country and rate are spread over
  ``TOTAL_SHARDS`` items, chosen from the invoice's key, so concurrent payments in one
  country seldom meet on one item (docs/TABLE.md, "Tax totals").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from billing.rules.tax import Buyer, Rate, Seller, TaxLine, Treatment, applicable_rate, tax_line

TOTAL_SHARDS = 16


@dataclass(frozen=True)
class TaxTerms:
    """Who sells to whom: what a charge's rate depends on, with its date."""

    seller: Seller
    buyer: Buyer

    @property
    def prices_include_tax(self) -> bool:
        return self.seller.prices_include_tax

    def line(self, price: int, on: date) -> TaxLine:
        """The tax line of a charge of ``price`` (after proration and coupons) on ``on``."""
        return tax_line(price, applicable_rate(self.seller, self.buyer, on),
                        prices_include_tax=self.seller.prices_include_tax)


def rate_text(percent: Decimal) -> str:
    """A rate as stored and keyed: ``22``, ``25.5``, ``0`` (no exponent, no trailing zeros:
    ``normalize`` drops the zeros, the ``f`` format the exponent it leaves on ``1E+1``)."""
    return format(percent.normalize(), "f")


def charged_line(amount: int, rate: Rate, *, net: int | None = None, tax: int | None = None) -> TaxLine:
    """The tax line of a charge of ``amount`` already made: the figures the charge carried
    (its metadata's ``net`` and ``tax``) when they add up to it, else the tax included in
    it at ``rate`` (a charge made before taxes were computed)."""
    if net is not None and tax is not None and net + tax == amount:
        return TaxLine(net=net, tax=tax, gross=amount, rate=rate)
    return tax_line(amount, rate, prices_include_tax=True)


@dataclass(frozen=True)
class Share:
    """A credit note's figures, positive (the note stores them negated)."""

    net: int
    tax: int
    gross: int


def _half_up(value: Decimal) -> int:
    return int(value.to_integral_value(rounding=ROUND_HALF_UP))


def refund_share(*, tax: int, gross: int, earlier: Iterable[int], refund: int) -> Share:
    """The share of an invoice (``net + tax = gross``) that a refund of ``refund`` takes,
    after the refunds ``earlier`` (their amounts). Its tax is the invoice's tax on all that
    is refunded with it, rounded half up, less the same on what was refunded before:

        tax_share = round_half_up(tax × (before + refund) / gross) − round_half_up(tax × before / gross)

    The first refund's is ``round_half_up(tax × refund / gross)``; the one that refunds the
    rest takes exactly what is left, so the credit notes of a fully refunded invoice sum
    to it. Rounding each refund on its own instead can take the whole tax before the last
    refund, or leave the last one more tax than its amount (a credit note with a negative
    net): the cumulative rounding keeps every share within one minor unit of its exact
    part and never above the refund."""
    before = sum(earlier)
    if refund <= 0 or before < 0 or before + refund > gross:
        raise ValueError("a refund is positive and at most what is left of the invoice")
    share_tax = _half_up(Decimal(tax) * (before + refund) / gross) - _half_up(Decimal(tax) * before / gross)
    return Share(net=refund - share_tax, tax=share_tax, gross=refund)


def total_shard(key: str) -> int:
    """The totals' shard of an invoice or credit note (0..15), from its key: stable
    across processes (FNV-1a, not Python's salted ``hash``)."""
    value = 0x811C9DC5
    for byte in key.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value % TOTAL_SHARDS


def is_reverse_charge(treatment: str | None) -> bool:
    return treatment == Treatment.REVERSE_CHARGE


# The tax figures a charge carries in its metadata (Stripe's PaymentIntent), so that what
# is recorded is what was charged, and the reconciliation can check them.
TAX_METADATA = ("net", "tax", "tax_rate", "tax_country", "tax_treatment", "prices_include_tax")


def tax_metadata(line: TaxLine, *, prices_include_tax: bool) -> dict[str, str]:
    return {"net": str(line.net), "tax": str(line.tax), "tax_rate": rate_text(line.rate.percent),
            "tax_country": line.rate.country, "tax_treatment": str(line.rate.treatment),
            "prices_include_tax": "1" if prices_include_tax else "0"}


def rate_of_metadata(metadata: dict[str, str]) -> Rate | None:
    """The rate a charge's metadata names, or None (a charge made before taxes were kept)."""
    try:
        return Rate(Decimal(metadata["tax_rate"]), metadata["tax_country"], Treatment(metadata["tax_treatment"]))
    except (KeyError, ValueError, ArithmeticError):
        return None


def line_of_metadata(metadata: dict[str, str], amount: int) -> TaxLine | None:
    """The tax line a charge of ``amount`` carried in its metadata, or None."""
    rate = rate_of_metadata(metadata)
    if rate is None:
        return None
    try:
        net, tax = int(metadata["net"]), int(metadata["tax"])
    except (KeyError, ValueError):
        return charged_line(amount, rate)
    return charged_line(amount, rate, net=net, tax=tax)
