"""Countries by their ISO 3166 alpha-2 code, named in the active language (Babel's CLDR
data, as core.localformat does numbers and dates), and found in a free-text address.

A billing country is chosen from a list, never typed: the VAT rate is looked up by the
code, and a typo would be a wrong rate.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from babel import Locale
from django.utils import translation

# CLDR's territories that are not countries a customer lives in (the EU, the eurozone, the
# UN, "unknown", pseudo-locales); Kosovo (XK) stays: card issuers use it.
NOT_COUNTRIES = frozenset({"EU", "EZ", "QO", "UN", "XA", "XB", "ZZ"})
# The languages whose country names an address is matched against (the site's four and
# the EU's main ones, where customers write their address in their own language).
ADDRESS_LANGUAGES = ("en", "it", "de", "fr", "es", "nl", "pt", "pl", "sv", "ko", "zh_Hans")
# What people write that CLDR does not call so.
ALIASES = {"UK": "GB", "ENGLAND": "GB", "SCOTLAND": "GB", "WALES": "GB", "GREAT BRITAIN": "GB",
           "USA": "US", "U.S.A.": "US", "U.S.": "US", "UNITED STATES OF AMERICA": "US", "HOLLAND": "NL",
           "DEUTSCHLAND": "DE", "ITALIA": "IT", "EL": "GR"}

COUNTRY_CODES = frozenset(code for code in Locale("en").territories
                          if len(code) == 2 and code.isalpha() and code not in NOT_COUNTRIES)


def is_country(code: str | None) -> bool:
    return bool(code) and code.upper() in COUNTRY_CODES


@lru_cache(maxsize=16)
def _names(language: str) -> dict[str, str]:
    locale = Locale.parse(translation.to_locale(language)) if language != "en" else Locale("en")
    return {code: locale.territories.get(code, code) for code in COUNTRY_CODES}


def country_name(code: str | None) -> str:
    """The country's name in the active language ("Italy", "Italia", "이탈리아"); the code
    itself when it is no country."""
    if not code:
        return ""
    names = _names(_language())
    return names.get(code.upper(), code)


def country_choices() -> list[tuple[str, str]]:
    """Every country as (code, name), sorted by name in the active language."""
    names = _names(_language())
    return sorted(names.items(), key=lambda item: _fold(item[1]))


def _language() -> str:
    language = (translation.get_language() or "en").lower()
    if language.startswith("zh"):
        return "zh_Hans"
    return language.split("-")[0]


def _fold(text: str) -> str:
    """Upper case without accents or punctuation: "Côte d’Ivoire" and "COTE D'IVOIRE" match."""
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return re.sub(r"[^\w]+", " ", plain).strip().upper()


@lru_cache(maxsize=1)
def _by_name() -> dict[str, str]:
    found: dict[str, str] = {}
    for language in ADDRESS_LANGUAGES:
        for code, name in _names(language).items():
            found.setdefault(_fold(name), code)
    for alias, code in ALIASES.items():
        found.setdefault(_fold(alias), code)
    return found


def country_in_address(address: str | None) -> str | None:
    """The country an address names in its last line (or the last part after a comma): a
    country's name in one of ``ADDRESS_LANGUAGES`` or its alpha-2 code. None when the
    address names none: the caller decides, rather than guessing from a city."""
    if not address:
        return None
    lines = [line.strip() for line in re.split(r"[\n\r]+", address) if line.strip()]
    if not lines:
        return None
    last = lines[-1]
    # A code alone on the last line ("DE") is a country; after a comma it may be a state
    # or a province ("San Francisco, CA" is not Canada), so there only names count.
    if last.upper() in COUNTRY_CODES:
        return last.upper()
    for candidate in [last, *reversed([part.strip() for part in last.split(",")])]:
        folded = _fold(candidate)
        if (len(folded) > 2 or folded in ALIASES) and folded in _by_name():
            return _by_name()[folded]
    return None
