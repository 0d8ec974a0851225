"""VAT on a charge: which rate applies (the place-of-supply rules for electronic services
sold to EU customers) and the arithmetic, in minor units. Pure: the seller's settings and
the buyer's country and VAT number are handed in.

Who pays what (Directive 2006/112/EC; the One-Stop Shop since July 2021):

* a consumer in the seller's own country: the seller's rate (``domestic``);
* a consumer in another member state: that state's rate, declared through the OSS
  (``oss``); or the seller's own rate while its cross-border EU sales stay under the
  EUR 10,000 threshold and it chose so (``domestic``);
* a business with a valid VAT number in another member state: no VAT, the customer
  accounts for it (``reverse_charge``, Article 196);
* a business in the seller's own country: the seller's rate (``domestic``);
* a customer in the seller's own country outside the EU (a UK seller's UK customer): the
  seller's own VAT when it has a VAT number there (``domestic``, the dataset's rate for the
  country, or the rate staff gave for it);
* elsewhere outside the EU: the rate of a country the seller is registered in
  (``registered``), else none (``not_subject``).

The rates come from the ``eu-vat-rates-data`` package (the European Commission's TEDB,
republished whenever a rate changes: no rate is typed here). It carries the rates in
force today; the few changes since 2024 are in :data:`EARLIER_STANDARD_RATES`, so an
invoice dated before a change keeps the rate of its own date.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum

from eu_vat_rates_data import data_version, get_all_rates

RATES = get_all_rates()
EU_COUNTRIES = frozenset(code for code, rate in RATES.items() if rate["eu_member"])
# The dataset says GR; VAT numbers and the VIES service say EL (Greece's VAT prefix).
VAT_PREFIX_COUNTRY = {"EL": "GR"}
RATES_AS_OF = date.fromisoformat(data_version)

# Standard rates before their latest change: (country, first day of the *next* rate,
# the rate until then). Only what changed since the dataset's rates are used for
# invoices rpay may still issue or correct (2024 on); tests/billing/test_tax_rules.py
# checks each against the dataset's current rate, so a stale entry is caught.
EARLIER_STANDARD_RATES: tuple[tuple[str, date, Decimal], ...] = (
    ("FI", date(2024, 9, 1), Decimal("24")),
    ("SK", date(2025, 1, 1), Decimal("20")),
    ("EE", date(2025, 7, 1), Decimal("22")),
    ("RO", date(2025, 8, 1), Decimal("19")),
)

# Reduced rates the dataset lists with the country's though only a part of it applies them
# (the country's lowest would otherwise be taken for a reduced-rate product): France's 0.9%
# (Corsica) and 1.05% (its overseas departments). rpay taxes mainland France at 5.5%.
REGIONAL_REDUCED_RATES: Mapping[str, frozenset[float]] = {"FR": frozenset({0.9, 1.05})}

REVERSE_CHARGE_NOTE = "Reverse charge — VAT to be accounted for by the recipient (Article 196, Directive 2006/112/EC)"


class Treatment(StrEnum):
    DOMESTIC = "domestic"
    OSS = "oss"
    REVERSE_CHARGE = "reverse_charge"
    REGISTERED = "registered"  # a country outside the EU the seller is registered in
    NOT_SUBJECT = "not_subject"  # outside the EU and not registered there: no VAT


class TaxCategory(StrEnum):
    """A product's VAT category. ``reduced`` is the country's lowest reduced rate (the one
    member states apply to e-books and newspapers), leaving out the rates of a part of a
    country only (:data:`REGIONAL_REDUCED_RATES`); the dataset does not say which goods
    each reduced rate covers, so staff choose it for a product knowingly."""

    STANDARD = "standard"
    REDUCED = "reduced"


class TaxBehavior(StrEnum):
    """Whether a price's amounts include the tax (Stripe's ``tax_behavior``): ``inclusive``
    (the customer pays the amount, the tax is part of it), ``exclusive`` (the tax is added
    to it) or ``unspecified`` (as the seller's profile says at each charge: "Catalogue
    prices include VAT"). Stored as null when unspecified (docs/TAX.md, "A price's tax
    behaviour")."""

    INCLUSIVE = "inclusive"
    EXCLUSIVE = "exclusive"
    UNSPECIFIED = "unspecified"


def stored_tax_behavior(behavior: str | None) -> str | None:
    """The stored ``TaxBehavior`` of a price or subscription: null for ``unspecified``.
    ``ValueError`` for a word that is not one of :class:`TaxBehavior`'s."""
    value = TaxBehavior(behavior or TaxBehavior.UNSPECIFIED)
    return None if value == TaxBehavior.UNSPECIFIED else str(value)


def tax_behavior_word(stored: str | None) -> str:
    """A stored ``TaxBehavior`` in Stripe's words, as the API shows it (null: ``unspecified``)."""
    return stored or str(TaxBehavior.UNSPECIFIED)


def includes_tax(behavior: str | None, seller_default: bool) -> bool:
    """Whether amounts of that behaviour include the tax: the behaviour's own answer, or
    ``seller_default`` (the seller's profile) when it is unspecified."""
    if behavior == TaxBehavior.INCLUSIVE:
        return True
    if behavior == TaxBehavior.EXCLUSIVE:
        return False
    return seller_default


@dataclass(frozen=True)
class Seller:
    country: str
    vat_number: str | None = None
    oss_registered: bool = True
    # Cross-border EU consumer sales under EUR 10,000 a year, and the seller chose to
    # charge its own VAT on them (Article 59c).
    under_threshold: bool = False
    prices_include_tax: bool = True
    # Countries outside the EU the seller is registered in, and its rate there (percent).
    registrations: Mapping[str, Decimal] = field(default_factory=dict)


@dataclass(frozen=True)
class Buyer:
    country: str
    # A VAT number that passed the checks (python-stdnum, VIES when on): a business.
    vat_number: str | None = None

    @property
    def is_business(self) -> bool:
        return bool(self.vat_number)


@dataclass(frozen=True)
class Rate:
    percent: Decimal
    country: str  # whose VAT it is (the OSS country, the seller's, a registration's)
    treatment: Treatment

    @property
    def note(self) -> str | None:
        return REVERSE_CHARGE_NOTE if self.treatment == Treatment.REVERSE_CHARGE else None


@dataclass(frozen=True)
class TaxLine:
    net: int
    tax: int
    gross: int  # what is charged: net + tax
    rate: Rate


def country_of(code: str) -> str:
    code = code.upper()
    return VAT_PREFIX_COUNTRY.get(code, code)


def is_eu(country: str) -> bool:
    return country_of(country) in EU_COUNTRIES


def standard_rate(country: str, on: date) -> Decimal:
    """The standard rate in force in an EU member state on ``on`` (percent)."""
    country = country_of(country)
    for code, until, percent in sorted(EARLIER_STANDARD_RATES):  # a country's earliest change first
        if code == country and on < until:
            return percent
    return Decimal(str(RATES[country]["standard"]))


def category_rate(country: str, on: date, category: TaxCategory) -> Decimal:
    if category == TaxCategory.REDUCED:
        code = country_of(country)
        reduced = [rate for rate in RATES[code]["reduced"] if rate not in REGIONAL_REDUCED_RATES.get(code, ())]
        if reduced:
            return Decimal(str(min(reduced)))
    return standard_rate(country, on)


def applicable_rate(seller: Seller, buyer: Buyer, on: date,
                    category: TaxCategory = TaxCategory.STANDARD) -> Rate:
    """The rate of a charge to ``buyer`` invoiced on ``on`` (the module's docstring)."""
    own, theirs = country_of(seller.country), country_of(buyer.country)
    if is_eu(theirs):
        if buyer.is_business and theirs != own:
            return Rate(Decimal(0), theirs, Treatment.REVERSE_CHARGE)
        if theirs == own or (seller.under_threshold and is_eu(own)):
            return Rate(category_rate(own, on, category), own, Treatment.DOMESTIC)
        return Rate(category_rate(theirs, on, category), theirs, Treatment.OSS)
    if theirs == own and theirs in seller.registrations:
        return Rate(Decimal(seller.registrations[theirs]), own, Treatment.DOMESTIC)
    if theirs == own and seller.vat_number and own in RATES:
        # Its VAT number registers the seller for VAT at home: a UK seller charges UK VAT
        # to UK customers, at the dataset's rate, as an EU seller charges its own.
        return Rate(category_rate(own, on, category), own, Treatment.DOMESTIC)
    if theirs in seller.registrations:
        return Rate(Decimal(seller.registrations[theirs]), theirs, Treatment.REGISTERED)
    return Rate(Decimal(0), theirs, Treatment.NOT_SUBJECT)


def _half_up(value: Decimal) -> int:
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def tax_line(price: int, rate: Rate, *, prices_include_tax: bool) -> TaxLine:
    """Tax on one invoice line whose price (after proration and coupons, in minor units)
    is ``price``. Tax-inclusive: ``price`` is the gross, the tax is the part of it at
    ``rate``; tax-exclusive: ``price`` is the net and the tax is added to it. Rounded half
    up to the minor unit, once per line."""
    percent = rate.percent
    if prices_include_tax:
        tax = _half_up(Decimal(price) * percent / (100 + percent))
        return TaxLine(net=price - tax, tax=tax, gross=price, rate=rate)
    tax = _half_up(Decimal(price) * percent / 100)
    return TaxLine(net=price, tax=tax, gross=price + tax, rate=rate)


def quarter_of(day: date) -> str:
    """``2026Q4``: the OSS return's period."""
    return f"{day.year}Q{(day.month - 1) // 3 + 1}"
