"""Closing an account at localstripe: its cards are detached and its Stripe customer
deleted (a second close asks Stripe again and finds nothing to do)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest
import stripe

from billing import access
from billing.actions import data_rights
from billing.actions.accounts import payment_customer
from tests.shop.conftest import _shop_table
from tests.stripe_server import saved_card_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def tables(request: pytest.FixtureRequest, settings) -> Iterator[str]:
    yield from _shop_table("moto", request, settings)


def test_closing_detaches_the_cards_and_deletes_the_stripe_customer(tables, stripe_gateway, localstripe) -> None:
    account = access.create_account("holder@example.com", name="Holder Example")
    customer = payment_customer(account)
    token = saved_card_token(stripe_gateway, localstripe, customer)
    access.add_card(account.account_id, token, "1 Main St", actor="test", make_default=True)
    method = token.token.split("/")[1]
    assert stripe_gateway.customer_account(customer) == account.account_id

    data_rights.close_account(account.account_id, today=date.today())
    data_rights.close_account(account.account_id, today=date.today())  # twice: nothing left to do

    try:
        found = stripe_gateway.client.v1.customers.retrieve(customer)
        assert found.to_dict().get("deleted") is True
    except stripe.InvalidRequestError:  # a deleted customer is not found at all
        pass
    # the detach was asked of Stripe (localstripe does not record a method's customer)
    assert len(stripe_gateway.recorded.creates(f"/v1/payment_methods/{method}/detach")) == 1
    assert [r for r in stripe_gateway.recorded.sent if r.method == "DELETE"
            and r.path == f"/v1/customers/{customer}"] != []
    assert stripe_gateway.customer_account(customer) == ""
    stored = access.get_account(account.account_id)
    assert stored.StripeCustomerId is None and stored.Name is None
    assert access.get_cards(account.account_id) == []
