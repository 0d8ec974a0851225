"""The subscribe flow with the wallet: "Change details" keeps the product, day
and card; a wallet card pays without retyping; a new card joins the wallet once it paid;
a second subscription to the same product is asked about, not refused."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from billing import access
from billing.views.common import SESSION_PENDING
from tests.builders import BILLING_COUNTRY, GOOD_CARD

pytestmark = pytest.mark.django_db


def quote_of(response) -> str:
    return re.search(r'name="quote" value="([^"]+)"', response.content.decode()).group(1)


def step_one(customer, **changes):
    return customer.client.post("/subscribe/", {"product": "GYM", "payment_day": "20", **GOOD_CARD, **changes})


def test_change_details_keeps_the_product_day_and_card(customer) -> None:
    step_one(customer)
    confirm = customer.client.get("/subscribe/confirm/")
    url = confirm.context["change_url"]
    assert url == "/subscribe/?product=GYM&day=20&card=new"
    assert f'href="{url.replace("&", "&amp;")}"' in confirm.content.decode()
    back = customer.client.get(url)
    form = back.context["form"]
    assert form["product"].value() == "GYM" and form["payment_day"].value() == 20
    html = back.content.decode()
    assert re.search(r'name="product" value="GYM"[^>]*checked', html)
    assert re.search(r'<option value="20" selected>', html)
    # a day that is not one is ignored, not an error
    assert customer.client.get("/subscribe/?day=99").context["form"]["payment_day"].value() != 99


def test_a_new_card_joins_the_wallet_once_it_paid(customer) -> None:
    step_one(customer, billing_address="1 Main St")
    confirm = customer.client.get("/subscribe/confirm/")
    customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm)})
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    [card] = access.get_cards(customer.account_id)
    assert sub.PaymentDetails.CardId == card.card_id and card.Details.Token == sub.PaymentDetails.Token
    assert card.Details.BillingAddress == "1 Main St"
    assert access.get_account(customer.account_id).DefaultCardId == card.card_id  # the first card
    created = next(e for e in access.get_events_by_account(customer.account_id) if e.Action == "subscription.created")
    assert created.After["CardId"] == card.card_id


def test_a_declined_card_does_not_join_the_wallet(customer) -> None:
    step_one(customer, card_number="4000 0000 0000 0002")
    confirm = customer.client.get("/subscribe/confirm/")
    customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm)})
    assert access.get_cards(customer.account_id) == []


def test_subscribe_with_a_wallet_card(customer, ddb_requests) -> None:
    customer.client.post("/wallet/add/", {**GOOD_CARD, "billing_address": "1 Main St"})
    [card] = access.get_cards(customer.account_id)
    page = customer.client.get("/subscribe/")
    assert page.context["form"]["saved_card"].value() == card.card_id  # the default is chosen
    ddb_requests.reset()
    response = customer.client.post("/subscribe/", {"product": "GYM", "payment_day": "20",
                                                    "saved_card": card.card_id, **BILLING_COUNTRY})
    assert response["Location"] == "/subscribe/confirm/" and ddb_requests.ops == ["Query", "Query"]
    pending = customer.client.session[SESSION_PENDING]
    assert pending["card_id"] == card.card_id and pending["new_card"] is False
    confirm = customer.client.get("/subscribe/confirm/")
    assert confirm.context["change_url"].endswith(f"card={card.card_id}")
    assert "Visa ending in 4242" in confirm.content.decode()
    mail.outbox.clear()
    customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm)})
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.is_live and sub.PaymentDetails.CardId == card.card_id
    assert sub.PaymentDetails.Token == card.Details.Token and sub.PaymentDetails.BillingAddress == "1 Main St"
    assert len(access.get_cards(customer.account_id)) == 1  # no second copy of the card
    # a card id that is not in the wallet is a form error, not a 500
    bad = customer.client.post("/subscribe/", {"product": "GYM", "payment_day": "20", "saved_card": "x#y"})
    assert bad.status_code == 200 and bad.context["form"].errors["saved_card"]


def test_a_wallet_card_removed_while_the_subscribe_is_confirmed_is_refused(customer) -> None:
    customer.client.post("/wallet/add/", {**GOOD_CARD})
    customer.client.post("/wallet/add/", {**GOOD_CARD, "card_number": "5555 5555 5555 4444"})
    chosen = next(c for c in access.get_cards(customer.account_id) if c.Details.Last4 == "4444")
    customer.client.post("/subscribe/", {"product": "GYM", "payment_day": "20", "saved_card": chosen.card_id,
                                         **BILLING_COUNTRY})
    confirm = customer.client.get("/subscribe/confirm/")
    customer.client.post(f"/wallet/{chosen.card_id}/remove/")  # another tab
    assert access.get_card(customer.account_id, chosen.card_id) is None
    mail.outbox.clear()
    response = customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm)}, follow=True)
    assert "removed from your wallet meanwhile" in response.content.decode()
    assert response.redirect_chain[-1][0] == "/subscribe/"
    assert access.get_subscriptions_by_account(customer.account_id) == [] and mail.outbox == []
    assert SESSION_PENDING not in customer.client.session


def test_a_second_subscription_to_the_same_product_is_asked_about(customer, ddb_requests) -> None:
    for _ in range(2):
        step_one(customer)
        confirm = customer.client.get("/subscribe/confirm/")
        if not access.get_subscriptions_by_account(customer.account_id):
            assert "already-subscribed" not in confirm.content.decode()
            customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm)})
    html = confirm.content.decode()
    assert "You already have City Gym; subscribe again?" in html and 'name="again"' in html
    # confirming without the tick: asked again, nothing made
    ddb_requests.reset()
    refused = customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm)})
    assert ddb_requests.ops == ["GetItem", "GetItem", "Query"]
    assert refused.status_code == 200 and "Tick the box to subscribe to it a second time" in refused.content.decode()
    assert len(access.get_subscriptions_by_account(customer.account_id)) == 1
    done = customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm), "again": "on"})
    assert done.status_code == 302
    subs = access.get_subscriptions_by_account(customer.account_id)
    assert len(subs) == 2 and {s.SKU for s in subs} == {"GYM"} and all(s.is_live for s in subs)
