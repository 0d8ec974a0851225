"""A customer's VAT number, checked offline: its format and check digit (python-stdnum's
``stdnum.eu.vat``, the member states' own algorithms), and that its prefix is the
billing country's (Greece's prefix is EL). Pure: the online confirmation (VIES) is
billing/actions/tax_identity.py's, through core.vies.
"""

from __future__ import annotations

import re
from enum import StrEnum

from stdnum.eu import vat
from stdnum.exceptions import ValidationError

from billing.rules.tax import country_of


class VatCheck(StrEnum):
    """How far a stored VAT number was checked (``Account.VatNumberCheck``)."""

    FORMAT = "format"  # format and check digit, offline
    VIES = "vies"  # confirmed registered by the EU's VIES service


class VatProblem(StrEnum):
    INVALID = "invalid"  # not a VAT number of any member state (format, check digit)
    COUNTRY = "country"  # a valid number of another country than the billing country


def compact(number: str) -> str:
    """The number as stored: no spaces, dots or dashes, upper case ("IT 007 431 101 57" ->
    "IT00743110157"); a number of no member state (a UK one) only cleaned so."""
    try:
        return vat.compact(number or "")
    except ValidationError:
        return re.sub(r"[\s.\-/]", "", number or "").upper()


def vat_number_problem(number: str, billing_country: str | None) -> VatProblem | None:
    """Why ``number`` cannot be the VAT number of a customer billed in ``billing_country``
    (None: it can). A number without its prefix is not guessed at: it is invalid."""
    try:
        valid = vat.validate(number)
    except ValidationError:
        return VatProblem.INVALID
    if billing_country and country_of(valid[:2]) != country_of(billing_country):
        return VatProblem.COUNTRY
    return None


def countries_disagree(billing_country: str | None, card_country: str | None) -> bool:
    """The tax evidence disagrees: the declared billing country is not the card's (both
    known). The invoice follows the billing country all the same; staff see a flag."""
    if not billing_country or not card_country:
        return False
    return country_of(billing_country) != country_of(card_country)
