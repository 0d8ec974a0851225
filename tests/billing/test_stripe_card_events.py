"""Stripe's ``payment_method.automatically_updated`` and ``payment_method.detached``,
against localstripe (a real customer made for the account, cards saved through a
SetupIntent, a real detach) with the events signed by the test: the wallet card and every
subscription's copy take the bank's new details once; an event of another customer, of
a customer made for no account or for another one changes nothing; a detached card
leaves the wallet and the subscriptions keep their copy; Stripe unreachable is a 500
and writes nothing, and the redelivery does it."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest
from django.core import mail

from billing import access
from billing.actions.accounts import payment_customer
from billing.models import Account, Card, Subscription
from core.payments.gateway import CardToken
from tests.builders import fresh
from tests.stripe_events import SECRET, deliver, event, stored
from tests.stripe_server import saved_card_token
from tests.wallclock import per_test

pytestmark = pytest.mark.django_db

TODAY = per_test(__name__, "TODAY", lambda now: now.date())
UPDATED = "payment_method.automatically_updated"
DETACHED = "payment_method.detached"


@pytest.fixture(autouse=True)
def webhook_secret(settings) -> None:
    settings.STRIPE_WEBHOOK_SECRET = SECRET


@dataclass
class Holder:
    """An account with a Stripe customer, one saved card and live subscriptions paying with it."""

    account: Account
    customer: str
    token: CardToken
    card: Card | None  # its wallet card (None: the subscriptions' card is from before the wallet)
    subs: list[Subscription]

    @property
    def method(self) -> str:
        return self.token.token.split("/")[1]


def holder(stripe_gateway, localstripe, n: int, *, in_wallet: bool = True, subs: int = 2) -> Holder:
    account = access.create_account(f"holder{n}@example.com")
    customer = payment_customer(account)  # Stripe's customer, metadata account_id, stored on the account
    token = saved_card_token(stripe_gateway, localstripe, customer)
    card = access.add_card(account.account_id, token, "1 Main St", actor="test", make_default=True) \
        if in_wallet else None
    items = [access.due_subscription(account.account_id, f"sub-{n}-{i}", due=TODAY, sku=f"SKU-{i}",
                                     product_name=f"Product {i}",
                                     card=access.payment_details_from(token, "1 Main St",
                                                                      card_id=card.card_id if card else None))
             for i in range(subs)]
    access.batch_items(items)
    return Holder(access.get_account(account.account_id), customer, token, card, items)


def method_object(stripe_gateway, method: str, customer: str | None, **card: object) -> dict:
    """The PaymentMethod as Stripe has it (localstripe's), with the customer the event names
    (localstripe leaves it empty) and the card fields the bank changed."""
    obj = stripe_gateway.client.v1.payment_methods.retrieve(method).to_dict()
    obj = {"id": obj["id"], "object": "payment_method", "type": "card", "customer": customer,
           "card": {"brand": obj["card"]["brand"], "last4": obj["card"]["last4"],
                    "exp_month": obj["card"]["exp_month"], "exp_year": obj["card"]["exp_year"], **card}}
    return obj


def details(item: Card | Subscription) -> tuple:
    d = item.Details if isinstance(item, Card) else item.PaymentDetails
    return (d.Token, d.Brand, d.Last4, int(d.ExpMonth), int(d.ExpYear), d.BillingAddress, d.CardId)


def events_of(account_id: str, action: str | None = None) -> list:
    return [e for e in access.get_events_by_account(account_id) if action is None or e.Action == action]


def snapshot(h: Holder) -> tuple:
    """Everything the handlers could write for the holder: wallet, subscriptions, events."""
    wallet = access.get_wallet(h.account.account_id)
    return ([details(c) for c in wallet.cards], wallet.account.DefaultCardId,
            [details(fresh(s)) for s in h.subs], [(e.Action, e.Subject) for e in events_of(h.account.account_id)])


def test_the_banks_update_reaches_the_wallet_card_and_every_copy_once(client, moto_table, stripe_gateway,
                                                                      localstripe) -> None:
    h = holder(stripe_gateway, localstripe, 1)
    other = holder(stripe_gateway, localstripe, 2)  # another account's card: untouched
    untouched = snapshot(other)
    new = method_object(stripe_gateway, h.method, h.customer, brand="mastercard", last4="4444", exp_month=7,
                        exp_year=2039)
    response = deliver(client, event(UPDATED, new, "evt_upd"))
    assert response.status_code == 200 and response.json()["status"] == "done", response.json()
    expected = (h.token.token, "Mastercard", "4444", 7, 2039, "1 Main St", h.card.card_id)
    assert details(access.get_card(h.account.account_id, h.card.card_id)) == expected  # same token, same address
    assert [details(fresh(s)) for s in h.subs] == [expected, expected]
    [audit] = events_of(h.account.account_id, "card.updated_by_bank")
    assert audit.Actor == "stripe" and audit.Subject == h.card.SK
    assert audit.Before["Card"] == "Visa ****4242" and audit.After["Card"] == "Mastercard ****4444"
    assert sorted(audit.After["Subscriptions"]) == sorted(s.sub_id for s in h.subs)
    assert h.token.token not in str(audit.Before) + str(audit.After)  # never the token in an event
    assert not mail.outbox  # the same card: nothing for the customer to do
    after = snapshot(h)
    # The same event again (a redelivery), or another event with the same details: nothing more.
    assert deliver(client, event(UPDATED, new, "evt_upd")).json()["status"] == "replay"
    again = deliver(client, event(UPDATED, new, "evt_upd2"))
    assert again.status_code == 200 and again.json()["status"] == "ignored", again.json()
    # An older update arriving late (Stripe does not promise the order): not applied.
    older = method_object(stripe_gateway, h.method, h.customer, exp_month=1, exp_year=2038)
    late = deliver(client, event(UPDATED, older, "evt_old", created=int(time.time()) - 3600))
    assert late.status_code == 200 and late.json()["status"] == "ignored" and "older" in late.json()["outcome"]
    assert snapshot(h) == after and snapshot(other) == untouched
    # A newer one is applied.
    newer = method_object(stripe_gateway, h.method, h.customer, brand="mastercard", last4="4444", exp_month=8,
                          exp_year=2040)
    assert deliver(client, event(UPDATED, newer, "evt_new", created=int(time.time()) + 5)).json()["status"] == "done"
    assert {(d[3], d[4]) for d in [details(fresh(s)) for s in h.subs]} == {(8, 2040)}
    assert len(events_of(h.account.account_id, "card.updated_by_bank")) == 2


def test_the_banks_update_reaches_a_card_kept_on_subscriptions_only(client, moto_table, stripe_gateway,
                                                                    localstripe) -> None:
    h = holder(stripe_gateway, localstripe, 3, in_wallet=False)  # subscriptions from before the wallet
    new = method_object(stripe_gateway, h.method, h.customer, exp_month=3, exp_year=2037)
    response = deliver(client, event(UPDATED, new, "evt_pre"))
    assert response.status_code == 200 and response.json()["status"] == "done", response.json()
    assert [details(fresh(s)) for s in h.subs] == [(h.token.token, "Visa", "4242", 3, 2037, "1 Main St", None)] * 2
    assert access.get_cards(h.account.account_id) == []  # none added to the wallet
    audits = events_of(h.account.account_id, "card.updated_by_bank")
    assert sorted(e.Subject for e in audits) == sorted(s.SK for s in h.subs)
    assert {e.Actor for e in audits} == {"stripe"}
    assert deliver(client, event(UPDATED, new, "evt_pre2")).json()["status"] == "ignored"
    assert len(events_of(h.account.account_id, "card.updated_by_bank")) == 2


def test_an_event_of_another_customer_or_of_none_changes_nothing(client, moto_table, stripe_gateway,
                                                                 localstripe) -> None:
    a = holder(stripe_gateway, localstripe, 4)
    b = holder(stripe_gateway, localstripe, 5)
    before_a, before_b = snapshot(a), snapshot(b)
    new = {"exp_month": 5, "exp_year": 2041, "last4": "0005"}
    # A's payment method under B's customer: B's wallet holds no such card.
    crossed = deliver(client, event(UPDATED, method_object(stripe_gateway, a.method, b.customer, **new), "evt_x1"))
    # A customer Stripe does not know.
    unknown = deliver(client, event(UPDATED, method_object(stripe_gateway, a.method, "cus_nobody", **new), "evt_x2"))
    # A customer whose metadata names A, but who is not A's customer (made elsewhere).
    impostor = stripe_gateway.client.v1.customers.create({"metadata": {"account_id": a.account.account_id}}).id
    pretender = deliver(client, event(UPDATED, method_object(stripe_gateway, a.method, impostor, **new), "evt_x3"))
    # A customer whose metadata names no valid account id (a '#' would reach a key).
    bad_id = stripe_gateway.client.v1.customers.create({"metadata": {"account_id": "ACC#x"}}).id
    malformed = deliver(client, event(UPDATED, method_object(stripe_gateway, a.method, bad_id, **new), "evt_x4"))
    # The same, detached.
    detached = deliver(client, event(DETACHED, method_object(stripe_gateway, a.method, None), "evt_x5",
                                     previous_attributes={"customer": b.customer}))
    no_customer = deliver(client, event(DETACHED, method_object(stripe_gateway, a.method, None), "evt_x6"))
    for response, why in [(crossed, "no card"), (unknown, "no rpay account"), (pretender, "is not account"),
                          (malformed, "no valid account id"), (detached, "in no wallet card"),
                          (no_customer, "no customer")]:
        assert response.status_code == 200 and response.json()["status"] == "ignored", response.json()
        assert why in response.json()["outcome"], response.json()
    assert snapshot(a) == before_a and snapshot(b) == before_b
    assert stored("evt_x3").Status == "ignored" and not mail.outbox


def test_the_simulated_gateway_knows_no_customer(client, moto_table) -> None:
    response = deliver(client, event(UPDATED, {"id": "pm_1", "customer": "cus_1", "card": {
        "brand": "visa", "last4": "4242", "exp_month": 1, "exp_year": 2040}}, "evt_sim"))
    assert response.status_code == 200 and response.json()["status"] == "ignored"
    assert "no rpay account" in response.json()["outcome"]


def test_a_detached_card_leaves_the_wallet_and_its_subscriptions_keep_their_copy(client, moto_table, stripe_gateway,
                                                                                 localstripe) -> None:
    h = holder(stripe_gateway, localstripe, 6)
    spare = access.add_card(h.account.account_id, saved_card_token(stripe_gateway, localstripe, h.customer),
                            actor="test")  # a second card: stays
    copies = [details(fresh(s)) for s in h.subs]
    stripe_gateway.client.v1.payment_methods.detach(h.method)  # in Stripe's dashboard
    sent = len(stripe_gateway.recorded.sent)
    obj = method_object(stripe_gateway, h.method, None)
    response = deliver(client, event(DETACHED, obj, "evt_det", previous_attributes={"customer": h.customer}))
    assert response.status_code == 200 and response.json()["status"] == "done", response.json()
    wallet = access.get_wallet(h.account.account_id)
    assert [c.card_id for c in wallet.cards] == [spare.card_id]
    assert wallet.account.DefaultCardId is None  # the removed card was the default: the oldest left is
    assert [details(fresh(s)) for s in h.subs] == copies  # still named, still charged (declined: dunning)
    [audit] = events_of(h.account.account_id, "card.removed")
    assert audit.Actor == "stripe" and audit.Subject == h.card.SK
    assert sorted(audit.After["Subscriptions"]) == sorted(s.sub_id for s in h.subs)
    # Not detached again: the handler asked Stripe only who the customer is.
    assert [r.path for r in stripe_gateway.recorded.sent[sent:]] == [
        f"/v1/payment_methods/{h.method}", f"/v1/customers/{h.customer}"]
    [message] = mail.outbox  # the customer is told, with the subscriptions to move
    assert message.to == [h.account.Email] and "Product 0" in message.body and "Product 1" in message.body
    after = snapshot(h)
    assert deliver(client, event(DETACHED, obj, "evt_det", previous_attributes={
        "customer": h.customer})).json()["status"] == "replay"
    again = deliver(client, event(DETACHED, obj, "evt_det2", previous_attributes={"customer": h.customer}))
    assert again.status_code == 200 and again.json()["status"] == "ignored"
    assert snapshot(h) == after and len(mail.outbox) == 1


def test_stripe_unreachable_is_500_writes_nothing_and_the_redelivery_does_it(client, moto_table, stripe_gateway,
                                                                             localstripe, settings) -> None:
    from core.payments.stripe.client import build_client
    from devtools.localengine import free_port

    h = holder(stripe_gateway, localstripe, 7)
    before = snapshot(h)
    updated = event(UPDATED, method_object(stripe_gateway, h.method, h.customer, exp_month=9, exp_year=2040),
                    "evt_down")
    detached = event(DETACHED, method_object(stripe_gateway, h.method, None), "evt_down2",
                     previous_attributes={"customer": h.customer})
    live = stripe_gateway.client
    settings.STRIPE_API_BASE = f"http://127.0.0.1:{free_port()}"
    stripe_gateway.client = build_client()  # the same gateway, Stripe unreachable
    for sent in (updated, detached):
        response = deliver(client, sent)
        assert response.status_code == 500 and stored(sent["id"]).Status == "failed"
        assert "GatewayError" in stored(sent["id"]).Outcome
    assert snapshot(h) == before and not mail.outbox
    stripe_gateway.client = live
    assert deliver(client, updated).json()["status"] == "done"
    assert {(d[3], d[4]) for d in [details(fresh(s)) for s in h.subs]} == {(9, 2040)}
    assert deliver(client, detached).json()["status"] == "done"
    assert access.get_cards(h.account.account_id) == []


def test_a_delivery_failed_half_way_is_finished_by_the_redelivery(client, moto_table, stripe_gateway, localstripe,
                                                                  monkeypatch) -> None:
    """The wallet card's transaction written, the copies kept outside the wallet not (the
    table failed): 500, and the redelivery writes only what is missing."""
    h = holder(stripe_gateway, localstripe, 8)
    pre_wallet = access.due_subscription(h.account.account_id, "sub-8-old", due=TODAY, sku="OLD",
                                         card=access.payment_details_from(h.token))
    access.batch_items([pre_wallet])
    new = event(UPDATED, method_object(stripe_gateway, h.method, h.customer, exp_month=4, exp_year=2042), "evt_half")
    with monkeypatch.context() as mp:
        mp.setattr(access, "update_card_copies", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("table down")))
        assert deliver(client, new).status_code == 500
    assert {(d[3], d[4]) for d in [details(fresh(s)) for s in h.subs]} == {(4, 2042)}
    assert (details(fresh(pre_wallet))[3:5]) == (12, 2034)  # saved_card_token's expiry: not yet
    assert deliver(client, new).json()["status"] == "done"
    assert details(fresh(pre_wallet)) == (h.token.token, "Visa", "4242", 4, 2042, None, None)
    assert len(events_of(h.account.account_id, "card.updated_by_bank")) == 2  # the card's, the copy's


def test_customer_account_reads_the_customers_metadata(moto_table, stripe_gateway) -> None:
    made = stripe_gateway.create_customer("acct-meta", "meta@example.com")
    assert stripe_gateway.customer_account(made) == "acct-meta"
    bare = stripe_gateway.client.v1.customers.create({"email": "bare@example.com"}).id
    assert stripe_gateway.customer_account(bare) == ""  # made by someone else
    stripe_gateway.client.v1.customers.delete(made)
    assert stripe_gateway.customer_account(made) == ""  # deleted (or never known)
    assert stripe_gateway.customer_account("not-a-customer") == ""
