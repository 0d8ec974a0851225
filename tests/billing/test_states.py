"""One status, the same words everywhere (rules.lifecycle.state_of and the ``{% sub_status %}``
badge), and a declined first payment said in words, the subscribe form keeping what was
chosen."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine

from billing import access
from billing.models import Subscription, SubscriptionStatus
from billing.rules.lifecycle import KINDS, state_of
from billing.templatetags.lifecycle import status_words
from core.payments.gateway import get_gateway
from tests.billing.test_portal_lifecycle import ON, on, paid_subscription
from tests.builders import BILLING_COUNTRY, GOOD_CARD, PASSWORD, fresh

pytestmark = pytest.mark.django_db


def sub_with(**fields) -> Subscription:
    base = {"PaymentDay": 15, "PaymentAmount": 999, "Currency": "USD", "Email": "pat@example.com", "SKU": "X",
            "CreatedDate": "2027-03-10T12:00:00+00:00", "Status": "active", "NextPaymentDate": "2027-04-15",
            "PaidThroughDate": "2027-04-14"}
    return Subscription("ACC#a", "SUB#s#SKU#X", **{**base, **fields})


TODAY = date(2027, 3, 20)


@pytest.mark.parametrize(("fields", "kind", "words"), [
    ({}, "active", "Active"),
    ({"TrialEnd": "2027-03-23", "PaidThroughDate": "2027-03-23", "NextPaymentDate": "2027-03-24"},
     "trialing", "Free until 2027-03-23"),
    ({"Status": "cancelled", "CancelMode": "period_end"}, "cancelling", "Cancels on 2027-04-14"),
    ({"Status": "cancelled", "CancelMode": "now", "PaidThroughDate": "2027-03-20"}, "ended", "Ended"),
    ({"PausedFrom": "2027-04-15", "PausedUntil": "2027-06-15", "NextPaymentDate": "2027-06-15"},
     "paused", "Paused until 2027-06-15"),
    ({"PausedFrom": "2027-04-15", "NextPaymentDate": None}, "paused", "Paused"),
    ({"Status": "past_due", "BillingPeriod": "2027-03-15"}, "past_due", "Past due"),
    ({"Status": "incomplete"}, "incomplete", "Incomplete: payment to confirm"),
    ({"Status": "incomplete_expired"}, "not_started", "Expired: never started"),
    ({"Status": "cancelled", "CancelReason": "first_payment_declined"}, "not_started", "Never started"),
])
def test_each_state_has_one_kind_and_one_label(fields, kind, words) -> None:
    now = datetime(2027, 3, 10, 13, tzinfo=UTC)  # an hour after it was made
    state = state_of(sub_with(**fields), TODAY if kind != "incomplete" else now.date(), now)
    assert state.kind == kind and kind in KINDS
    assert status_words(state, lambda d: d.isoformat()) == words


def test_a_trial_that_paid_nothing_has_no_paid_through_and_a_paid_one_has() -> None:
    trial = sub_with(TrialEnd="2027-03-23", PaidThroughDate="2027-03-23", NextPaymentDate="2027-03-24")
    assert state_of(trial, TODAY).paid_through is None
    after = sub_with(TrialEnd="2027-03-23", PaidThroughDate="2027-04-14", NextPaymentDate="2027-04-15")
    assert state_of(after, date(2027, 3, 30)).paid_through == date(2027, 4, 14)


def test_an_incomplete_one_expires_on_the_pages_at_23_hours() -> None:
    made = datetime(2027, 3, 10, 12, tzinfo=UTC)
    sub = sub_with(Status="incomplete")
    assert state_of(sub, made.date(), made + timedelta(hours=22, minutes=59)).kind == "incomplete"
    late = state_of(sub, made.date(), made + timedelta(hours=23))
    assert late.kind == "not_started" and late.expired and not late.listed and not late.live


def test_a_trial_shows_free_until_never_paid_through(customer) -> None:
    access.update_product("NEWS-DAILY", name="Daily News", amount=999, currency="USD", trial_days=14)
    with on(ON, customer):
        customer.client.post("/subscribe/", {"product": "NEWS-DAILY", "payment_day": "15", **GOOD_CARD})
        confirm = customer.client.get("/subscribe/confirm/")
        quote = re.search(r'name="quote" value="([^"]+)"', confirm.content.decode()).group(1)
        customer.client.post("/subscribe/confirm/", {"quote": quote})
        home = customer.client.get("/").content.decode()
    assert 'data-state="trialing">Free until' in home and "Paid through" not in home and ">Active<" not in home


def test_paused_says_paused_only_and_the_paid_days_name_the_paid_through_day(customer) -> None:
    for language, paid_through in (("en", "14 March 2027"), ("it", "14 marzo 2027")):
        with on(ON, customer):
            sub = paid_subscription(customer)
            customer.client.post(f"/subscriptions/{sub.sub_id}/pause/", {"how": "skip", "payments": "2",
                                                                         "version": sub.Version})
            page = customer.client.get(f"/subscriptions/{sub.sub_id}/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert fresh(sub).PaidThroughDate == "2027-03-14"
        paused = re.search(r'data-testid="paused">(.*?)</div>', page, re.S).group(1)
        assert paid_through in paused  # "the days you paid for run until 14 March", as "Paid through"
        assert re.search(r'data-testid="paid-through">14 (Mar|mar) 2027<', page)
        assert 'data-state="paused"' in page and 'data-state="active"' not in page and ">Active<" not in page


def test_a_cancel_at_period_end_is_listed_with_the_live_ones_not_counted(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{sub.sub_id}/cancel/", {"when": "period_end", "reason": "other",
                                                                      "version": sub.Version})
        home = customer.client.get("/")
    html = home.content.decode()
    assert 'data-state="cancelling">Cancels on 14 Mar 2027<' in html and "Cancelled subscriptions" not in html
    assert home.context["totals"] == [] and home.context["upcoming"] == []


def test_the_staff_page_uses_the_same_label(customer, client) -> None:
    from tests.builders import make_user

    with on(ON, customer):
        sub = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{sub.sub_id}/pause/", {"how": "open", "version": sub.Version})
        client.force_login(make_user("clerk@rpay.localhost", staff=True))
        staff = client.get(f"/admin/staff/accounts/{customer.account_id}/").content.decode()
    assert 'data-state="paused">Paused<' in staff and ">active<" not in staff


# --- a declined first payment ----------------------------------------------------------------


def test_a_declined_first_payment_keeps_the_choices_and_says_what_happened(customer) -> None:
    access.create_coupon("WELCOME", percent_off=10, duration="once", max_uses=5, actor="staff")
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        # a wallet card that is declined when charged
        token = get_gateway().tokenize_card("4000000000000002", 12, 2030, "123")
        declining = access.add_card(customer.account_id, token, None, actor=customer.email)
        customer.client.post("/subscribe/", {"product": "GYM", "payment_day": "20", "coupon": "WELCOME",
                                             "saved_card": declining.card_id, **BILLING_COUNTRY})
        confirm = customer.client.get("/subscribe/confirm/")
        quote = re.search(r'name="quote" value="([^"]+)"', confirm.content.decode()).group(1)
        answer = customer.client.post("/subscribe/confirm/", {"quote": quote}, follow=True)
        form = answer.context["form"]
        html = answer.content.decode()
        receipts = customer.client.get("/receipts/").content.decode()
        home = customer.client.get("/").content.decode()
        [sub] = access.get_subscriptions_by_account(customer.account_id)
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
    assert "was declined (card declined)" in html and "card_declined" not in html
    assert (form["product"].value(), form["payment_day"].value(), form["coupon"].value(),
            form["saved_card"].value()) == ("GYM", 20, "WELCOME", declining.card_id)
    attempt = re.search(r'data-testid="failed-attempt">(.*?)</li>', receipts, re.S).group(1)
    assert "City Gym" in attempt and "card declined" in attempt
    assert "first_payment_declined" not in attempt and ">GYM<" not in attempt and " GYM " not in attempt
    assert "Cancelled subscriptions" not in home and "never started" in home
    assert sub.Status == SubscriptionStatus.CANCELLED
    assert "Paid through" not in page and "Last period paid" not in page and "never started" in page
