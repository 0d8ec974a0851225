"""Small things the pages say, each seen wrong once: the pause page's date in every
language, the payment-day options, the log-in and sign-up forms, the staff pages'
hidden fields, failures and coupons."""

from __future__ import annotations

import re

import pytest

from tests.billing.test_portal_lifecycle import ON, on, paid_subscription

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("language", ["en", "it", "ko", "zh-hans"])
def test_the_pause_pages_date_is_filled_in_every_language(customer, language) -> None:
    # <input type=date> takes YYYY-MM-DD whatever the page's language (Italian's
    # "15/04/2027" or Chinese "2027年4月15日" left it empty).
    with on(ON, customer):
        sub = paid_subscription(customer)
        html = customer.client.get(f"/subscriptions/{sub.sub_id}/pause/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    field = re.search(r'<input type="date" name="until"[^>]*>', html)
    assert field and 'value="2027-04-15"' in field.group(0)


@pytest.mark.parametrize("day, text", [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"),
                                       (13, "13th"), (21, "21st"), (22, "22nd"), (23, "23rd"), (30, "30th"),
                                       (31, "31st")])
def test_a_payment_day_is_an_english_ordinal(day, text) -> None:
    from django.utils import translation

    from core.ordinals import day_of_month

    with translation.override("en"):
        assert day_of_month(day) == text


def test_the_confirmation_of_a_new_payment_day_says_the_1st(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/payment-day/",
                                        {"payment_day": "1", "version": sub.Version}, follow=True)
    text = " ".join(str(m) for m in response.context["messages"])
    assert "Your payment day is now the 1st." in text and "the 1." not in text
