"""The Stripe gateway against localstripe (a real HTTP server speaking Stripe's API):
customers, cards saved through SetupIntents, off-session PaymentIntents (paid, declined,
authentication required), refunds, the reconciliation's list, and the keys each create
request carries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.checks import run_checks

from core.payments.errors import CardError, GatewayError
from core.payments.stripe import StripeGateway
from devtools.localengine import free_port
from tests.stripe_server import confirm_setup_in_browser, saved_card_token
from tests.wallclock import per_test

pytestmark = pytest.mark.django_db

TODAY = per_test(__name__, "TODAY", lambda now: now.date())


@pytest.fixture
def customer(stripe_gateway: StripeGateway) -> str:
    return stripe_gateway.create_customer("acct-1", "pat@example.com")


def test_a_customer_is_made_under_the_accounts_key(stripe_gateway, customer) -> None:
    assert customer.startswith("cus_")
    sent = stripe_gateway.recorded.creates("/v1/customers")
    assert [r.idempotency_key for r in sent] == ["customer:acct-1"]
    assert sent[0].params["metadata[account_id]"] == ["acct-1"]


def test_a_card_saved_in_the_browser_is_read_back_without_its_number(stripe_gateway, localstripe, customer) -> None:
    card = saved_card_token(stripe_gateway, localstripe, customer, "4000056655665556")
    assert (card.brand, card.last4, card.exp_month, card.exp_year) == ("Visa", "5556", 12, 2034)
    assert card.token.startswith(f"{customer}/pm_")
    # The server's requests name the SetupIntent and the customer, never the card number.
    assert not any("4000056655665556" in str(r.params) for r in stripe_gateway.recorded.sent)
    setup = stripe_gateway.recorded.creates("/v1/setup_intents")[0]
    assert setup.params["usage"] == ["off_session"] and setup.params["customer"] == [customer]


def test_another_customers_setup_intent_is_refused(stripe_gateway, localstripe, customer) -> None:
    other = stripe_gateway.create_customer("acct-2", "sam@example.com")
    entry = stripe_gateway.start_card_entry(other)
    confirm_setup_in_browser(localstripe, entry.client_secret)
    with pytest.raises(CardError):
        stripe_gateway.saved_card(customer, entry.client_secret.split("_secret_")[0])


@pytest.mark.parametrize("setup_intent", ["seti_madeup123", "pm_notasetupintent", ""])
def test_a_made_up_setup_intent_is_refused(stripe_gateway, customer, setup_intent) -> None:
    with pytest.raises(CardError):
        stripe_gateway.saved_card(customer, setup_intent)


def test_an_unconfirmed_or_refused_setup_is_refused(stripe_gateway, localstripe, customer) -> None:
    entry = stripe_gateway.start_card_entry(customer)  # the browser never confirmed it
    with pytest.raises(CardError):
        stripe_gateway.saved_card(customer, entry.client_secret.split("_secret_")[0])
    refused = stripe_gateway.start_card_entry(customer)
    answer = confirm_setup_in_browser(localstripe, refused.client_secret, "4000000000009995")
    assert answer.get("error")  # Stripe declined the card at set-up
    with pytest.raises(CardError):
        stripe_gateway.saved_card(customer, refused.client_secret.split("_secret_")[0])


def test_an_off_session_charge_carries_its_key_and_metadata(stripe_gateway, localstripe, customer) -> None:
    card = saved_card_token(stripe_gateway, localstripe, customer)
    result = stripe_gateway.charge(card.token, 1299, "eur", "sub-1:2026-11-15", {"sub_id": "sub-1"})
    assert result.succeeded and result.charge_id.startswith("pi_")
    assert (result.amount, result.currency, result.metadata) == (1299, "EUR", {"sub_id": "sub-1"})
    sent = stripe_gateway.recorded.creates("/v1/payment_intents")
    assert [r.idempotency_key for r in sent] == ["sub-1:2026-11-15"]
    assert sent[0].params["off_session"] == ["true"] and sent[0].params["confirm"] == ["true"]
    assert sent[0].params["customer"] == [customer]


def test_an_on_session_charge_is_not_marked_off_session(stripe_gateway, localstripe, customer) -> None:
    card = saved_card_token(stripe_gateway, localstripe, customer)
    assert stripe_gateway.charge(card.token, 500, "EUR", "order-1:card", off_session=False).succeeded
    assert "off_session" not in stripe_gateway.recorded.creates("/v1/payment_intents")[0].params


def test_a_declined_card_is_a_decline_with_stripes_code(stripe_gateway, localstripe, customer) -> None:
    card = saved_card_token(stripe_gateway, localstripe, customer, "4000000000000341")
    result = stripe_gateway.charge(card.token, 700, "EUR", "sub-2:2026-11-15")
    assert not result.succeeded and result.decline_code == "card_declined"


def test_a_charge_the_bank_wants_authenticated_is_not_paid(stripe_gateway, customer) -> None:
    card = stripe_gateway.tokenize_card("4000002760003184", 12, 2034, "123", customer=customer)
    result = stripe_gateway.charge(card.token, 700, "EUR", "sub-3:2026-11-15")
    assert not result.succeeded and result.decline_code == "authentication_required"


def test_an_unknown_payment_method_is_a_decline_not_a_crash(stripe_gateway, customer) -> None:
    result = stripe_gateway.charge(f"{customer}/pm_gone", 700, "EUR", "sub-4:2026-11-15")
    assert not result.succeeded and result.decline_code


def test_partial_refunds_under_their_keys(stripe_gateway, localstripe, customer) -> None:
    # localstripe refunds more than was paid where Stripe refuses: that rule (M5) is rpay's
    # own (the receipt's conditional write), proven on the simulated gateway.
    card = saved_card_token(stripe_gateway, localstripe, customer)
    paid = stripe_gateway.charge(card.token, 1000, "EUR", "sub-5:2026-11-15")
    first = stripe_gateway.refund(paid.charge_id, 300, "refund:pi:r1", reason="goodwill")
    second = stripe_gateway.refund(paid.charge_id, 500, "refund:pi:r2")
    assert (first.status, first.amount, second.status, second.amount) == ("succeeded", 300, "succeeded", 500)
    refused = stripe_gateway.refund("pi_nosuchcharge", 300, "refund:pi:r3")
    assert refused.status == "failed" and refused.reason
    keys = [r.idempotency_key for r in stripe_gateway.recorded.creates("/v1/refunds")]
    assert keys == ["refund:pi:r1", "refund:pi:r2", "refund:pi:r3"]


def test_the_reconciliations_list_holds_the_ranges_charges_by_metadata(stripe_gateway, localstripe, customer) -> None:
    card = saved_card_token(stripe_gateway, localstripe, customer)
    mine = stripe_gateway.charge(card.token, 100, "EUR", "sub-6:a", {"sub_id": "sub-6", "run": "list"})
    stripe_gateway.charge(card.token, 200, "EUR", "sub-7:a", {"sub_id": "sub-7", "run": "list"})
    listed = stripe_gateway.list_charges(TODAY - timedelta(days=1), TODAY, sub_id="sub-6")
    assert [c.charge_id for c in listed] == [mine.charge_id]
    assert listed[0].metadata == {"sub_id": "sub-6", "run": "list"} and listed[0].created[:10] == TODAY.isoformat()
    assert stripe_gateway.list_charges(TODAY - timedelta(days=9), TODAY - timedelta(days=2), run="list") == []


def test_stripe_unreachable_is_a_gateway_error(settings, stripe_gateway) -> None:
    settings.STRIPE_API_BASE = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    down = StripeGateway()
    with pytest.raises(GatewayError):
        down.charge("cus_x/pm_x", 100, "EUR", "k")
    with pytest.raises(GatewayError):
        down.create_customer("acct-9", "x@example.com")
    with pytest.raises(GatewayError):
        down.saved_card("cus_x", "seti_x")


def _check_ids(settings) -> set[str]:
    return {m.id for m in run_checks() if m.id and m.id.startswith("billing.")}


def test_system_checks_refuse_stripe_without_keys_and_warn_on_live_keys_in_debug(settings) -> None:
    settings.PAYMENT_GATEWAY = "stripe"
    settings.STRIPE_SECRET_KEY, settings.STRIPE_PUBLISHABLE_KEY = "", ""
    assert "billing.E006" in _check_ids(settings)
    settings.STRIPE_SECRET_KEY, settings.STRIPE_PUBLISHABLE_KEY = "sk_test_a", "pk_live_b"
    assert "billing.E007" in _check_ids(settings)
    settings.STRIPE_SECRET_KEY, settings.STRIPE_PUBLISHABLE_KEY = "sk_live_a", "pk_live_b"
    settings.DEBUG = True
    assert "billing.W001" in _check_ids(settings)
    settings.DEBUG = False
    settings.STRIPE_WEBHOOK_SECRET = ""
    assert "billing.W002" in _check_ids(settings)  # webhooks would all be refused
    settings.STRIPE_WEBHOOK_SECRET = "whsec_x"
    assert not {"billing.E006", "billing.E007", "billing.W001", "billing.W002"} & _check_ids(settings)
    settings.PAYMENT_GATEWAY = "simulated"
    settings.STRIPE_SECRET_KEY = ""
    assert not {"billing.E004", "billing.E006"} & _check_ids(settings)
