"""Numbers, money and dates in the active language, through Babel (CLDR data).

English keeps rpay's own formats ("$9.99", "9.99 USD", "30 November 2026"), which its
customers and tests know; Italian, Korean and Chinese get CLDR's: "9,99 €", "₩9,900",
"2026年11月30日". The number of decimals is always the currency's ISO-4217 exponent
(core.money), never CLDR's own table, so an amount has one precision everywhere.
"""

from __future__ import annotations

from copy import copy
from datetime import date, datetime
from decimal import Decimal
from functools import lru_cache
from zoneinfo import ZoneInfo

from babel import Locale, UnknownLocaleError
from babel.dates import format_date, format_skeleton
from babel.numbers import parse_pattern
from django.conf import settings
from django.utils import translation
from django.utils.dateformat import format as django_date_format


def active_locale() -> Locale | None:
    """Babel's locale for the active language; None for English (rpay's own formats)."""
    return _locale_of(translation.get_language() or "en")


@lru_cache(maxsize=64)
def _locale_of(language: str) -> Locale | None:
    # Once per language: Locale.parse builds a new object on every call, and a batch's
    # e-mails ask for one for every amount and date.
    if language.split("-")[0] == "en":
        return None
    try:
        return Locale.parse(translation.to_locale(language))
    except (UnknownLocaleError, ValueError):
        return None


def currency(value: Decimal, code: str, digits: int, locale: Locale, *, with_code: bool = False) -> str:
    """``value`` in ``locale``'s currency pattern with exactly ``digits`` decimals; with
    the ISO code ("9,99 USD") instead of the symbol ("9,99 US$") when ``with_code``."""
    pattern = copy(locale.currency_formats["standard"])
    pattern.frac_prec = (digits, digits)
    if with_code:
        # CLDR's "¤¤" is the ISO code; the number keeps the locale's separators.
        pattern = parse_pattern("#,##0.00 ¤¤")
        pattern.frac_prec = (digits, digits)
    return pattern.apply(value, locale, currency=code, currency_digits=False)


# The Django date formats rpay's templates use, and the CLDR style each becomes in
# another language: a named width ("long"), or a skeleton for partial dates.
_STYLES: dict[str, tuple[str, str]] = {
    "j F Y": ("date", "long"),
    "j M Y": ("date", "medium"),
    "d M Y": ("date", "medium"),
    "l j F Y": ("date", "full"),
    "F Y": ("skeleton", "yMMMM"),
    "j M": ("skeleton", "MMMd"),
    "j F": ("skeleton", "MMMMd"),
    # CLDR has no "yMMMdHm" skeleton (Babel's look-up fails): a date and a 24-hour time,
    # joined by the locale's own date-time pattern.
    "j F Y, H:i": ("datetime", "yMMMd"),
    # The staff pages': ISO-like in English (what staff search logs for), CLDR's elsewhere.
    "Y-m-d": ("date", "medium"),
    "D Y-m-d": ("skeleton", "yMMMEd"),
    "Y-m-d H:i": ("datetime", "medium"),
}


def parse_date(value: str | date | None) -> date | datetime | None:
    """Items store dates as ISO-8601 strings; None when empty or not a date."""
    if not value or isinstance(value, date):
        return value or None
    try:
        return datetime.fromisoformat(value) if "T" in value else date.fromisoformat(value)
    except ValueError:
        return None


def billing_day(value: str | date | None) -> date | None:
    """The calendar day of ``BILLING_TIMEZONE`` a stored date or timestamp falls on: the day
    a money document states (an invoice's date of issue, a receipt's day paid), which is the
    day its tax was chosen for. A timestamp is stored in UTC; east or west of it, its UTC date
    is another day for part of every day. A date is already a billing day."""
    day = parse_date(value)
    if isinstance(day, datetime):
        return day.astimezone(ZoneInfo(settings.BILLING_TIMEZONE)).date() if day.tzinfo else day.date()
    return day


def local_date(value: str | date | None, django_format: str = "j F Y") -> str:
    """A date in the active language: in English with ``django_format`` (as ``|date``
    would), in another the CLDR style that stands for that format (see ``_STYLES``)."""
    day = parse_date(value)
    if day is None:
        return ""
    locale = active_locale()
    if locale is None:
        return django_date_format(day, django_format)
    kind, style = _STYLES.get(django_format, ("date", "medium"))
    if kind in ("skeleton", "datetime"):
        if not isinstance(day, datetime):
            day = datetime(day.year, day.month, day.day)
        if kind == "datetime":
            # the date as a named width ("medium", as "Y-m-d" is) or a skeleton
            on = (format_date(day.date(), style, locale=locale) if style in ("short", "medium", "long", "full")
                  else format_skeleton(style, day, locale=locale))
            return str(locale.datetime_formats["medium"]).format(format_skeleton("Hm", day, locale=locale), on)
        return format_skeleton(style, day, locale=locale)
    return format_date(day.date() if isinstance(day, datetime) else day, style, locale=locale)


class LocalDate:
    """A date that formats itself in the language active when it is shown (for subjects
    and messages built before the language of the e-mail is known). By default as the
    pages and the e-mails' bodies write a date ("15 March 2027", "15 marzo 2027"), so a
    subject never writes it another way."""

    def __init__(self, value: date, django_format: str = "j F Y") -> None:
        self.value = value
        self.django_format = django_format

    def __str__(self) -> str:
        return local_date(self.value, self.django_format)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def local_day(value: str | date | None, django_format: str = "j F Y") -> str:
    """``local_date``, remembered for days (a ``date`` or an ISO date string, not a
    datetime): a payment run's receipt e-mails show the same few days thousands of times,
    and a day's text depends only on the language and the format."""
    if type(value) is date or (isinstance(value, str) and "T" not in value):
        return _day_text(translation.get_language() or "", value, django_format)
    return local_date(value, django_format)


@lru_cache(maxsize=1024)
def _day_text(language: str, value: str | date, django_format: str) -> str:
    return local_date(value, django_format)
