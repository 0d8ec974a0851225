"""Cadences on the pages, the API and in e-mails: the amount per period in words, a yearly
day change (the anniversary moves within its month), and the refusals (weeks and days
have no day of the month; only a monthly subscription switches product)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import translation

from billing import access
from billing.actions import api_keys
from billing.rules.cadence_words import amount_per_period
from billing.rules.schedule import new_cadence
from billing.rules.switch import SwitchRefused, SwitchTarget, check_switch, quote_switch
from core.pages import today
from tests.api.conftest import ApiClient, error_of
from tests.builders import TEST_CARD, fresh, make_customer, make_user


def _made(account_id: str, interval: str, count: int = 1, amount: int = 12000):
    return access.create_subscription(access.get_account(account_id), sku="NEWS-DAILY", payment_day=15, amount=amount,
                                      currency="USD", card=TEST_CARD, today=today(), reminder_days_before=7,
                                      product_name="Daily News", interval=interval, interval_count=count)


def test_the_words_of_an_amount_per_period() -> None:
    with translation.override("en"):
        assert amount_per_period("$9.99", new_cadence(15, date(2027, 1, 1))) == "$9.99 a month"
        assert amount_per_period("$120.00", new_cadence(15, date(2027, 1, 1), "year")) == "$120.00 a year"
        assert amount_per_period("$30.00", new_cadence(31, date(2027, 1, 1), "month", 3)) == "$30.00 every 3 months"
        assert amount_per_period("$7.00", new_cadence(1, date(2027, 1, 1), "week", 2)) == "$7.00 every 2 weeks"
    with translation.override("it"):
        # the monthly words are the ones the pages always had, translated
        assert amount_per_period("9,99 $", new_cadence(15, date(2027, 1, 1))) != "9,99 $ a month"


@pytest.mark.django_db
def test_the_portal_shows_a_yearly_amount_a_year(moto_table) -> None:
    customer = make_customer("year@example.com")
    sub = _made(customer.account_id, "year")
    page = customer.client.get(f"/subscriptions/{sub.sub_id}/")
    assert page.status_code == 200 and "$120.00 a year" in page.content.decode()
    dashboard = customer.client.get("/").content.decode()
    assert "$120.00 a year" in dashboard
    # a year's payment is not a month's: the monthly total leaves it out
    assert 'data-testid="monthly-total">—' in dashboard
    cancel = customer.client.get(f"/subscriptions/{sub.sub_id}/cancel/").content.decode()
    assert "you pay $120.00 a year, in advance" in cancel and "of each month" not in cancel
    day_page = customer.client.get(f"/subscriptions/{sub.sub_id}/payment-day/").content.decode()
    assert "renews less often than monthly ($120.00 a year)" in day_page
    # paid ahead, so that it may be paused
    access.set_schedule(fresh(sub), next_payment=today() + timedelta(days=300), last_payment=today(),
                        next_reminder=today() + timedelta(days=293), last_reminder=today())
    pause = customer.client.get(f"/subscriptions/{sub.sub_id}/pause/").content.decode()
    assert "with a full period's payment" in pause


@pytest.mark.django_db
def test_every_2_weeks_has_no_payment_day_to_change(moto_table) -> None:
    customer = make_customer("weeks@example.com")
    sub = _made(customer.account_id, "week", 2, 700)
    answer = customer.client.post(f"/subscriptions/{sub.sub_id}/payment-day/", {"payment_day": 3}, follow=True)
    assert "it has no day of the month to change" in answer.content.decode()
    assert fresh(sub).PaymentDay == 15
    with pytest.raises(ValueError):
        access.change_payment_day(sub, 3)



@pytest.mark.django_db
def test_staff_cannot_move_a_weekly_subscription_to_a_day(client, moto_table) -> None:
    customer = make_customer("staff-weeks@example.com")
    sub = _made(customer.account_id, "week", 1, 700)
    client.force_login(make_user("clerk@rpay.localhost", staff=True))
    url = reverse("admin:staff_payment_day", args=[customer.account_id, sub.sub_id])
    answer = client.post(url, {"payment_day": "3"}, follow=True)
    assert "it has no day of the month to change" in answer.content.decode()
    assert fresh(sub).PaymentDay == 15
    account_page = client.get(reverse("admin:staff_account", args=[customer.account_id])).content.decode()
    assert 'data-testid="sub-cadence">a week<' in account_page


@pytest.fixture
def write_api(db, moto_table) -> ApiClient:
    _, secret = api_keys.create_key("warehouse", "write", actor="test")
    return ApiClient(secret, Client(enforce_csrf_checks=True))


@pytest.mark.django_db
def test_the_api_moves_a_yearly_anniversary_and_refuses_weeks(write_api: ApiClient) -> None:
    customer = make_customer("api@example.com")
    yearly = access.set_schedule(_made(customer.account_id, "year"), next_payment=date(2027, 3, 15),
                                 last_payment=date(2026, 3, 15), next_reminder=date(2027, 3, 8),
                                 last_reminder=date(2026, 3, 8))
    moved = write_api.post(f"/subscriptions/{yearly.sub_id}/payment_day", {"payment_day": 20})
    assert moved.status_code == 200, moved.content
    after = fresh(yearly)
    # the next payment keeps its date and pays up to the new anniversary in the anchor's
    # month at least 336 days on: 15 March 2027 to 19 March 2028, prorated
    assert (after.PaymentDay, after.NextPaymentDate, after.Interval) == (20, "2027-03-15", "year")
    assert moved.json()["next_payment"]["date"] == "2027-03-15"
    assert (moved.json()["interval"], moved.json()["interval_count"]) == ("year", 1)
    weekly = _made(customer.account_id, "week", 1, 700)
    refused = write_api.post(f"/subscriptions/{weekly.sub_id}/payment_day", {"payment_day": 3})
    assert refused.status_code == 409 and error_of(refused)["type"] == "invalid_state"
    assert "no day of the month" in error_of(refused)["message"]


@pytest.mark.django_db
def test_a_yearly_subscription_switches_to_a_monthly_product_from_its_next_payment(moto_table) -> None:
    # Every cadence switches now (docs/MONEY.md "Switching price or cadence"): a shorter
    # interval waits for the end of the paid year.
    customer = make_customer("switch@example.com")
    product = access.create_product("NEWS-PLUS", "News Plus", 1500, "USD")
    made = _made(customer.account_id, "year")
    # paid, its next payment a month on (on its payment day the switch waits for the run)
    yearly = access.set_schedule(made, next_payment=today() + timedelta(days=30),
                                 last_payment=today() - timedelta(days=335), next_reminder=today() + timedelta(days=1),
                                 last_reminder=today() - timedelta(days=335))
    assert check_switch(yearly, product, today()) == product
    quote = quote_switch(yearly, product, [], today())
    assert (quote.upgrade, quote.due_now, quote.effective) == (False, 0, date.fromisoformat(yearly.NextPaymentDate))
    with pytest.raises(SwitchRefused, match="already"):
        check_switch(yearly, access.get_product("NEWS-DAILY") or access.create_product("NEWS-DAILY", "Daily News",
                                                                                       999, "USD"), today(),
                     SwitchTarget("NEWS-DAILY", "Daily News", 12000, "price_default_NEWS-DAILY", "USD", "year"))


@pytest.mark.django_db
def test_the_confirmation_e_mail_says_a_year(moto_table) -> None:
    from billing.notify import tell

    customer = make_customer("mail@example.com")
    sub = _made(customer.account_id, "year")
    mail.outbox.clear()
    tell("subscription_confirmed", sub, "Confirmed", next_payment=date(2027, 3, 15), period_start=date(2026, 3, 15),
         period_end=date(2027, 3, 14), first_charge="$120.00")
    [message] = mail.outbox
    assert "a year" in message.body and "every month" not in message.body
