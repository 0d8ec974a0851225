"""The portal's subscribe form with a chosen price of a product: the product's active
prices in words as radio choices, seats for a price by the seat, the confirm page's first
charge being what is charged, and the refusals (an archived price, too many seats)."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

import pytest
import time_machine
from django.core import signing

from billing import access
from billing.actions import prices as price_actions
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from billing.views.subscribe_pages import QUOTE_SALT, _price_changed
from tests.builders import GOOD_CARD, receipts_of

pytestmark = pytest.mark.django_db

TODAY = date(2027, 3, 10)
QUOTE = re.compile(r'name="quote" value="([^"]+)"')
FIRST = re.compile(r'data-testid="first-charge">([^<]+?)\s*<')


@pytest.fixture
def travel():
    with time_machine.travel(f"{TODAY.isoformat()} 12:00Z", tick=False):
        yield


@pytest.fixture
def yearly(products):
    return price_actions.add_price("NEWS-DAILY", PriceTerms("USD", unit_amount=Decimal(9900), interval="year"),
                                   actor="t", nickname="Yearly")


@pytest.fixture
def seats(products):
    access.create_product("TEAM", "Team workspace", 1000, "USD")
    return price_actions.add_price("TEAM", PriceTerms("USD", unit_amount=Decimal(1000)), actor="t",
                                   nickname="Per seat", unit_label="seat", min_quantity=1, max_quantity=50)


def _step_one(customer, **data):
    return customer.client.post("/subscribe/", {"payment_day": str(TODAY.day), **GOOD_CARD, **data})


def test_the_form_lists_the_products_prices_in_words(travel, customer, yearly, seats) -> None:
    html = customer.client.get("/subscribe/?product=NEWS-DAILY").content.decode()
    assert "$99.00 a year" in html and "$9.99 a month" in html
    assert f'value="{yearly.PriceId}"' in html and 'for="id_price_0"' in html and 'for="id_price_1"' in html
    assert 'name="quantity"' not in html  # no price of it is by the seat
    html = customer.client.get("/subscribe/?product=TEAM").content.decode()
    assert "$10.00 a seat a month" in html and 'for="id_quantity"' in html


def test_a_yearly_price_is_quoted_and_charged_alike(travel, customer, yearly) -> None:
    step = _step_one(customer, product="NEWS-DAILY", price=yearly.PriceId)
    assert step.status_code == 302, step.content.decode()
    confirm = customer.client.get("/subscribe/confirm/")
    html = confirm.content.decode()
    assert "$99.00 a year" in html
    # the page's intro says how often it renews, not "every month"
    assert "then once a year." in html and "then every month" not in html
    shown = FIRST.search(html)[1].strip()
    done = customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    assert done.status_code == 302
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert (sub.PriceId, sub.PaymentAmount, sub.Interval, sub.NextPaymentDate) == (yearly.PriceId, 9900, "year",
                                                                                  "2028-03-10")
    [receipt] = receipts_of(sub)
    assert shown == "$99.00" and int(receipt.ProcessedAmount) == 9900


def test_seats_are_bounded_and_charged(travel, customer, seats) -> None:
    refused = _step_one(customer, product="TEAM", price=seats.PriceId, quantity="51")
    assert refused.status_code == 200 and "Choose between 1 and 50 seats." in refused.content.decode()
    assert _step_one(customer, product="TEAM", price=seats.PriceId, quantity="5").status_code == 302
    html = customer.client.get("/subscribe/confirm/").content.decode()
    assert "$10.00 a seat a month × 5" in html and FIRST.search(html)[1].strip() == "$50.00"
    customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert (sub.Quantity, sub.UnitAmount, sub.PaymentAmount, sub.PriceId) == (5, 1000, 5000, seats.PriceId)


def test_a_price_archived_before_confirming_is_refused(travel, customer, yearly) -> None:
    assert _step_one(customer, product="NEWS-DAILY", price=yearly.PriceId).status_code == 302
    price_actions.archive_price(yearly, actor="t")
    response = customer.client.get("/subscribe/confirm/", follow=True)
    assert "archived" in response.content.decode() and "nothing was charged" in response.content.decode()
    assert access.get_subscriptions_by_account(customer.account_id) == []
    # ...and it is no longer offered.
    assert yearly.PriceId not in customer.client.get("/subscribe/?product=NEWS-DAILY").content.decode()


def test_a_price_of_another_product_is_a_field_error(travel, customer, yearly, seats) -> None:
    response = _step_one(customer, product="TEAM", price=yearly.PriceId)
    assert response.status_code == 200 and 'id="error_1_id_price"' in response.content.decode()


def test_a_price_with_its_own_trial(travel, customer, products) -> None:
    trial = price_actions.add_price("NEWS-DAILY", PriceTerms("USD", unit_amount=Decimal(9900), interval="year"),
                                    actor="t", trial_days=30)
    # The payment day the day after the trial: a whole year is its first charge.
    assert _step_one(customer, product="NEWS-DAILY", price=trial.PriceId, payment_day="9").status_code == 302
    html = customer.client.get("/subscribe/confirm/").content.decode()
    assert "Free until 8 April 2027, then $99.00 on 9 April 2027, then $99.00 a year" in html
    # The intro says what the trial means, not "you pay today for your first period".
    intro = re.search(r'data-testid="step-intro">(.*?)</p>', html, re.S)[1]
    assert "Nothing is charged today: your free trial runs until 8 April 2027" in intro
    assert "today for your first period" not in intro
    customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert (sub.TrialEnd, sub.PriceId, sub.Interval, receipts_of(sub)) == ("2027-04-08", trial.PriceId, "year", [])
    assert (sub.NextPaymentDate, sub.PaymentAmount) == ("2027-04-09", 9900)


# The confirm page's intro names the price's cadence in each language, in the words of the
# language the page is drawn in (never stored in the signed quote).
RENEWS = {"en": "then once a year.", "it": "poi una volta all'anno.", "ko": "그 후에는 매년 한 번 결제합니다.",
          "zh-hans": "之后每年付款一次。"}


@pytest.mark.parametrize("language", list(RENEWS))
def test_the_confirm_intro_names_a_yearly_cadence_in_each_language(travel, customer, yearly, language) -> None:
    import html as markup

    from django.utils import translation

    assert _step_one(customer, product="NEWS-DAILY", price=yearly.PriceId).status_code == 302
    page = customer.client.get("/subscribe/confirm/", HTTP_ACCEPT_LANGUAGE=language)
    intro = markup.unescape(re.search(r'data-testid="step-intro">(.*?)</p>', page.content.decode(), re.S)[1])
    with translation.override(language):
        monthly = translation.gettext("Step 2 of 2: check the details, then confirm. You pay in advance: today for "
                                      "the days up to your first payment day, then every month.")
    assert RENEWS[language] in " ".join(intro.split()) and intro != monthly
    assert "renews" not in signing.loads(QUOTE.search(page.content.decode())[1], salt=QUOTE_SALT)


def test_the_confirm_intro_of_every_2_weeks_and_its_price_change_words(travel, customer, products) -> None:
    every_2_weeks = price_actions.add_price(
        "NEWS-DAILY", PriceTerms("USD", unit_amount=Decimal(700), interval="week", interval_count=2),
        actor="t", nickname="Fortnightly")
    assert _step_one(customer, product="NEWS-DAILY", price=every_2_weeks.PriceId).status_code == 302
    html = customer.client.get("/subscribe/confirm/").content.decode()
    assert "then once every 2 weeks." in html and "then every month" not in html
    seen = {"price": 700, "currency": "USD", "interval": "week", "interval_count": 2}
    words = str(_price_changed(products["NEWS-DAILY"], seen, {**seen, "price": 800}))
    assert "from $7.00 every 2 weeks to $8.00 every 2 weeks." in words and "a month" not in words


def test_seats_priced_by_volume_tiers_are_quoted_and_charged_alike(travel, customer, products) -> None:
    access.create_product("DESK", "Support desk", 1200, "USD")
    volume = price_actions.add_price(
        "DESK", PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                           tiers=(Tier(10, Decimal(1200)), Tier(None, Decimal(900)))),
        actor="t", nickname="By volume", unit_label="agent", min_quantity=1, max_quantity=100)
    listed = customer.client.get("/subscribe/?product=DESK").content.decode()
    assert "$12.00 an agent up to 10 agents" in listed
    assert _step_one(customer, product="DESK", price=volume.PriceId, quantity="12").status_code == 302
    html = customer.client.get("/subscribe/confirm/").content.decode()
    # 12 agents fall in the second tier: every one at $9.00
    assert FIRST.search(html)[1].strip() == "$108.00"
    customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert (sub.Quantity, sub.UnitAmount, sub.PaymentAmount, sub.PriceId) == (12, None, 10800, volume.PriceId)
    assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [10800]


@pytest.mark.parametrize("day", [TODAY.day, TODAY.day + 5], ids=["whole-month", "prorated"])
def test_a_price_with_vat_added_says_so_and_charges_what_it_says(travel, customer, products, day: int) -> None:
    """A price whose amounts have the VAT added (docs/TAX.md "A price's tax behaviour"), the
    seller's catalogue prices including it, bought from Italy: the confirm page names the VAT the charge adds
    and says "prorated by day" only for a first period shorter than a month, and the
    charge is what it showed."""
    added = price_actions.add_price("NEWS-DAILY", PriceTerms("USD", unit_amount=Decimal(2000)), actor="t",
                                    nickname="VAT added", tax_behavior="exclusive")
    step = customer.client.post("/subscribe/", {"payment_day": str(day), **GOOD_CARD, "billing_country": "IT",
                                                "product": "NEWS-DAILY", "price": added.PriceId})
    assert step.status_code == 302, step.content.decode()
    html = customer.client.get("/subscribe/confirm/").content.decode()
    shown = FIRST.search(html)[1].strip()
    vat = re.search(r'data-testid="vat-added">, with ([^ ]+) of VAT added to the price<', html)[1]
    assert ("prorated by day" in html) is (day != TODAY.day)
    done = customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    assert done.status_code == 302
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    [receipt] = receipts_of(sub)
    assert sub.TaxBehavior == "exclusive" and int(receipt.Tax) > 0
    assert (shown, vat) == (f"${int(receipt.ProcessedAmount) / 100:.2f}", f"${int(receipt.Tax) / 100:.2f}")
    if day == TODAY.day:  # a whole month: the price and its VAT
        assert int(receipt.Net) == 2000


def test_a_price_whose_amounts_include_the_vat_adds_none(travel, customer, products) -> None:
    included = price_actions.add_price("NEWS-DAILY", PriceTerms("USD", unit_amount=Decimal(2000)), actor="t",
                                       nickname="VAT included", tax_behavior="inclusive")
    customer.client.post("/subscribe/", {"payment_day": str(TODAY.day), **GOOD_CARD, "billing_country": "IT",
                                         "product": "NEWS-DAILY", "price": included.PriceId})
    html = customer.client.get("/subscribe/confirm/").content.decode()
    assert FIRST.search(html)[1].strip() == "$20.00" and 'data-testid="vat-added"' not in html
    assert "prorated by day" not in html
