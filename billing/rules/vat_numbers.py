"""A VAT number, checked offline: its format and check digit (python-stdnum: ``stdnum.eu.vat``
for the member states, and the country's own module, e.g. ``stdnum.gb.vat``,
``stdnum.ch.vat`` or ``stdnum.no.mva``, for a country outside the EU), and that it is the
billing country's (Greece's prefix is EL). Any number python-stdnum validates for its
country is accepted: a UK seller's own number as well as a German customer's. Pure: the
online confirmation (VIES, EU numbers only) is billing/actions/tax_identity.py's, through
core.vies.
"""

from __future__ import annotations

import re
from enum import StrEnum
from types import ModuleType

from stdnum.eu import vat
from stdnum.exceptions import ValidationError
from stdnum.util import get_cc_module

from billing.rules.tax import country_of


class VatCheck(StrEnum):
    """How far a stored VAT number was checked (``Account.VatNumberCheck``)."""

    FORMAT = "format"  # format and check digit, offline
    VIES = "vies"  # confirmed registered by the EU's VIES service


class VatProblem(StrEnum):
    INVALID = "invalid"  # not a VAT number of its country (format, check digit)
    COUNTRY = "country"  # a valid number of another country than the billing country


def compact(number: str) -> str:
    """The number as stored: no spaces, dots or dashes, upper case ("IT 007 431 101 57" ->
    "IT00743110157"); a number of no member state (a UK one) only cleaned so."""
    try:
        return vat.compact(number or "")
    except ValidationError:
        return re.sub(r"[\s.\-/]", "", number or "").upper()


def _national_module(country: str) -> ModuleType | None:
    """python-stdnum's VAT module of a country outside the EU (None: it has none)."""
    if len(country) != 2 or not country.isalpha():
        return None
    try:
        return get_cc_module(country.lower(), "vat")
    except (ImportError, ValueError):
        return None


def vat_number_problem(number: str, billing_country: str | None) -> VatProblem | None:
    """Why ``number`` cannot be the VAT number of a customer (or the seller) billed in
    ``billing_country`` (None: it can). An EU number carries its member state's prefix (a
    number without it is not guessed at: it is invalid); a number of a country outside
    the EU is checked by that country's module, with or without its prefix."""
    try:
        valid = vat.validate(number)
    except ValidationError:
        return _national_problem(number, billing_country)
    if billing_country and country_of(valid[:2]) != country_of(billing_country):
        return VatProblem.COUNTRY
    return None


def _national_problem(number: str, billing_country: str | None) -> VatProblem | None:
    prefix = compact(number)[:2]
    for country in dict.fromkeys(c for c in (billing_country or "", prefix) if c):
        module = _national_module(country.upper())
        if module is None or country.upper() in _EU_PREFIXES:
            continue
        try:
            module.validate(number)
        except ValidationError:
            continue
        return None if not billing_country or country.upper() == billing_country.upper() else VatProblem.COUNTRY
    return VatProblem.INVALID


# The member states' prefixes: their numbers are stdnum.eu.vat's (above), never a national module's.
_EU_PREFIXES = frozenset(code.upper() for code in vat.MEMBER_STATES) | {"EL"}


def countries_disagree(billing_country: str | None, card_country: str | None) -> bool:
    """The tax evidence disagrees: the declared billing country is not the card's (both
    known). The invoice follows the billing country all the same; staff see a flag."""
    if not billing_country or not card_country:
        return False
    return country_of(billing_country) != country_of(card_country)
