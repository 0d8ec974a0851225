"""A day of the month as a sentence names it, in the active language: "the 1st", "the
22nd" in English; each other language its own form through its translation ("1일",
"1日", Italian's plain "1" in "il giorno 1"), never "the 1."."""

from __future__ import annotations

from django.utils import translation
from django.utils.translation import pgettext


def english_ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th ... 11th, 12th, 13th ... 21st, 22nd, 23rd, 31st."""
    if 10 <= number % 100 <= 20:
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th')}"


def day_of_month(day: int) -> str:
    """The day as "the <day>" fills it in a sentence of the active language ("Your
    payment day is now the %(day)s"): English's ordinal; elsewhere the translation of the
    pattern below (Korean "{day}일", Chinese "{day}日", Italian "{day}")."""
    if (translation.get_language() or "en").split("-")[0] == "en":
        return english_ordinal(day)
    return pgettext("a day of the month, in a sentence: '{day}' is its number", "{day}").format(day=day)
