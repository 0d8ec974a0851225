"""A declined upgrade retried the same day: each failed attempt gives the next its own
idempotency key (``:retry<N>``), so a card replaced after a decline is really charged, once;
an attempt whose answer was lost repeats its key (exactly once); a key the processor
refuses (Stripe's IdempotencyError: the same key with another card) is answered in words,
and the attempt after it has a key of its own. On the simulated gateway (moto and DynamoDB
Local) and on localstripe (which ignores Idempotency-Key: exactly-once is proven here on the
simulated gateway)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
import stripe
import time_machine

from billing import access
from billing.actions import subscriptions as subscribing
from billing.actions import switch
from core.payments.errors import GatewayError, KeyReused
from core.payments.gateway import get_gateway
from core.payments.simulated import SimulatedGateway
from tests.builders import card, fresh, receipts_of
from tests.wallclock import per_test

pytestmark = pytest.mark.django_db(databases=[])

MADE = date(2027, 3, 10)
MID = date(2027, 3, 25)
DECLINING = "4000000000000002"


@pytest.fixture
def catalog(table) -> None:
    access.create_product("NEWS", "News", 1000, "USD")
    access.create_product("NEWS-PLUS", "News Plus", 2000, "USD")


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def subscribed():
    with at(MADE):
        started = subscribing.subscribe(
            access.create_account("retry@example.com"), sku="NEWS", product_name="News", payment_day=10,
            amount=1000, currency="USD", card=card(), today=MADE, actor="customer")
    assert started.started
    return started.sub


def replace_card(sub, number: str) -> None:
    with at(MID):
        subscribing.replace_card(fresh(sub), card(number), actor="customer", today=MID)


def switch_charges(sub) -> list[dict]:
    return [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "switch"]


def test_a_declined_upgrade_is_retried_with_a_new_card_the_same_day_and_charged_once(catalog) -> None:
    sub = subscribed()
    replace_card(sub, DECLINING)
    base = f"{sub.sub_id}:switch:{MID.isoformat()}:NEWS-PLUS"
    with at(MID):
        with pytest.raises(switch.SwitchDeclined):
            switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer")
        assert fresh(sub).SKU == "NEWS"
        # the same declining card again: a new attempt, declined again under its own key
        with pytest.raises(switch.SwitchDeclined):
            switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer")
    replace_card(sub, "4242424242424242")
    with at(MID):
        done = switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer")
    assert done.charged == 516 and fresh(sub).SKU == "NEWS-PLUS"
    charges = switch_charges(sub)
    assert [(c["idempotency_key"], c["status"]) for c in charges] == [
        (base, "declined"), (f"{base}:retry1", "declined"), (f"{base}:retry2", "succeeded")]
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert receipt.ProcessedAmount == 516 and receipt.ChargeId == charges[-1]["charge_id"]
    # a new day starts again from the plain key
    later = MID + timedelta(days=1)
    assert switch.switch_key(fresh(sub), done.quote, later) == f"{sub.sub_id}:switch:{later.isoformat()}:NEWS-PLUS"


def test_an_attempt_whose_answer_was_lost_repeats_its_key_and_charges_once(catalog, monkeypatch) -> None:
    sub = subscribed()
    real = SimulatedGateway.charge

    def lost(gateway, *args, **kwargs):
        real(gateway, *args, **kwargs)
        raise GatewayError("read timeout")

    monkeypatch.setattr(SimulatedGateway, "charge", lost)
    with at(MID), pytest.raises(GatewayError):
        switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer")
    assert fresh(sub).SKU == "NEWS" and fresh(sub).SwitchFailures is None  # not counted: its outcome is unknown
    monkeypatch.setattr(SimulatedGateway, "charge", real)
    with at(MID):
        done = switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer")
    [charge] = switch_charges(sub)  # the repeat got the first attempt's charge, not a second one
    assert charge["idempotency_key"] == f"{sub.sub_id}:switch:{MID.isoformat()}:NEWS-PLUS"
    assert done.charged == charge["amount"] == 516 and fresh(sub).SKU == "NEWS-PLUS"


def test_a_key_the_processor_refuses_is_answered_in_words_and_the_next_attempt_has_its_own(catalog,
                                                                                           monkeypatch) -> None:
    sub = subscribed()
    real = SimulatedGateway.charge
    keys = []

    def refused(gateway, token, amount, currency, idempotency_key, *args, **kwargs):
        keys.append(idempotency_key)
        raise KeyReused("Keys for idempotent requests can only be used with the same parameters")

    monkeypatch.setattr(SimulatedGateway, "charge", refused)
    with at(MID), pytest.raises(switch.AttemptUnsettled, match="Please try again"):
        switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer")
    assert fresh(sub).SKU == "NEWS" and not switch_charges(sub)
    monkeypatch.setattr(SimulatedGateway, "charge", real)
    with at(MID):
        done = switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer")
    [charge] = switch_charges(sub)
    assert keys == [f"{sub.sub_id}:switch:{MID.isoformat()}:NEWS-PLUS"]
    assert charge["idempotency_key"] == keys[0] + ":retry1" and done.charged == 516


@pytest.mark.django_db
def test_the_customer_page_says_so_in_words(customer, monkeypatch) -> None:
    from tests.billing.test_portal_switch import log_in, paid_subscription

    sub = paid_subscription(customer)
    url = f"/subscriptions/{sub.sub_id}/switch/"

    def refused(*args, **kwargs):
        raise KeyReused("Keys for idempotent requests can only be used with the same parameters")

    with time_machine.travel("2027-03-25 12:00Z", tick=False):
        log_in(customer)
        quote = customer.client.post(url, {"sku": "NEWS-PLUS"}).context["quote"]
        monkeypatch.setattr(SimulatedGateway, "charge", refused)
        page = customer.client.post(url, {"sku": "NEWS-PLUS", "step": "confirm", "upgrade": "1",
                                          "charge": quote.charge, "credit": quote.credit}, follow=True)
    assert page.status_code == 200
    assert "An earlier attempt of this switch, with other payment details, is not settled" in page.content.decode()
    assert fresh(sub).SKU == "NEWS-DAILY"


# --- Stripe (localstripe) ----------------------------------------------------------------

STRIPE_TODAY = per_test(__name__, "STRIPE_TODAY", lambda now: now.date())


def stripe_subscription(gateway, localstripe, number: str):
    from tests.stripe_server import saved_card_token

    access.create_product("NEWS-DAILY", "Daily News", 999, "USD")
    access.create_product("NEWS-PLUS", "Daily News Plus", 1999, "USD")
    account_id = "acct-retry"
    customer = gateway.create_customer(account_id, "retry@example.com")
    token = saved_card_token(gateway, localstripe, customer, number)
    due = STRIPE_TODAY + timedelta(days=10)
    sub = access.due_subscription(account_id, "sub-retry", due=due, card=access.payment_details_from(token),
                                  payment_day=due.day)
    access.batch_items([sub])
    return sub, customer


@pytest.mark.django_db
def test_on_stripe_a_declined_upgrade_is_retried_with_a_new_card_under_a_new_key(moto_table, stripe_gateway,
                                                                                 localstripe) -> None:
    from tests.stripe_server import saved_card_token

    sub, customer = stripe_subscription(stripe_gateway, localstripe, "4000000000000341")
    with pytest.raises(switch.SwitchDeclined):
        switch.switch(fresh(sub), "NEWS-PLUS", today=STRIPE_TODAY, actor="customer")
    good = saved_card_token(stripe_gateway, localstripe, customer)
    access.replace_card(fresh(sub), good, actor="customer")
    done = switch.switch(fresh(sub), "NEWS-PLUS", today=STRIPE_TODAY, actor="customer")
    assert done.charged > 0 and fresh(sub).SKU == "NEWS-PLUS"
    base = f"sub-retry:switch:{STRIPE_TODAY.isoformat()}:NEWS-PLUS"
    assert [r.idempotency_key for r in stripe_gateway.recorded.creates("/v1/payment_intents")] == [
        base, f"{base}:retry1"]
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert receipt.ChargeId.startswith("pi_") and receipt.ProcessedAmount == done.charged


@pytest.mark.django_db
def test_on_stripe_an_idempotency_error_is_a_refused_attempt_not_a_crash(moto_table, stripe_gateway, localstripe,
                                                                        monkeypatch) -> None:
    sub, _ = stripe_subscription(stripe_gateway, localstripe, "4242424242424242")

    def idempotency_error(*args, **kwargs):
        raise stripe.IdempotencyError("Keys for idempotent requests can only be used with the same parameters "
                                      "they were first used with.")

    with monkeypatch.context() as patched:
        # A charge is created through the client's raw request (its answer read as JSON), a
        # refund through the typed call: Stripe refuses the reused key on either.
        patched.setattr(stripe_gateway.client, "raw_request", idempotency_error)
        patched.setattr(type(stripe_gateway.client.v1.refunds), "create", idempotency_error)
        with pytest.raises(KeyReused):  # a refund's key reused for another amount: the same answer
            stripe_gateway.refund("pi_x", 100, "refund:pi_x:r1")
        with pytest.raises(KeyReused):
            stripe_gateway.charge(fresh(sub).PaymentDetails.Token, 100, "USD", "k", {})
        with pytest.raises(switch.AttemptUnsettled):
            switch.switch(fresh(sub), "NEWS-PLUS", today=STRIPE_TODAY, actor="customer")
    done = switch.switch(fresh(sub), "NEWS-PLUS", today=STRIPE_TODAY, actor="customer")
    assert done.charged > 0
    [create] = stripe_gateway.recorded.creates("/v1/payment_intents")
    assert create.idempotency_key == f"sub-retry:switch:{STRIPE_TODAY.isoformat()}:NEWS-PLUS:retry1"
