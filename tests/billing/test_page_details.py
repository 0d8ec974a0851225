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
