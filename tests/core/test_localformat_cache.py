"""localformat.local_day (the ``local_date`` filter) remembers a day's text per language
and format: it must give exactly what ``local_date`` gives, in whichever language is
active when it is asked, never the text cached for another."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from django.template import Context, Template
from django.utils import translation

from core import localformat

DAYS = [date(2026, 11, 30), date(2027, 2, 1), "2026-12-01", "not a date", "", None]
FORMATS = ["j F Y", "j M Y", "F Y", "j M"]


@pytest.mark.parametrize("language", ["en", "it", "ko", "zh-hans"])
def test_local_day_is_local_date(language: str) -> None:
    with translation.override(language):
        for value in DAYS:
            for fmt in FORMATS:
                assert localformat.local_day(value, fmt) == localformat.local_date(value, fmt)
                assert localformat.local_day(value, fmt) == localformat.local_date(value, fmt)  # from the cache


def test_the_cached_text_follows_the_active_language() -> None:
    day = date(2026, 11, 30)
    with translation.override("en"):
        english = localformat.local_day(day)
    with translation.override("it"):
        italian = localformat.local_day(day)
    with translation.override("en"):
        again = localformat.local_day(day)
    assert english == again == "30 November 2026"
    assert italian == "30 novembre 2026"


def test_datetimes_are_not_cached_but_still_formatted() -> None:
    moment = datetime(2026, 11, 30, 14, 5)
    with translation.override("en"):
        assert localformat.local_day(moment, "j F Y") == localformat.local_date(moment, "j F Y") == "30 November 2026"
        assert localformat.local_day("2026-11-30T14:05:00", "j F Y") == "30 November 2026"


def test_the_template_filter_uses_it() -> None:
    template = Template('{% load portal %}{{ day|local_date:"j F Y" }}')
    with translation.override("it"):
        assert template.render(Context({"day": date(2026, 12, 1)})) == "1 dicembre 2026"
    with translation.override("en"):
        assert template.render(Context({"day": date(2026, 12, 1)})) == "1 December 2026"


def test_the_locale_is_parsed_once_per_language() -> None:
    with translation.override("it"):
        first = localformat.active_locale()
        assert first is not None and first is localformat.active_locale()
    with translation.override("en"):
        assert localformat.active_locale() is None
