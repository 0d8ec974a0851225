"""The wallet: cards belong to the account; a subscription pays with one of
them; replacing a card moves every subscription that used it; a card in use cannot be
removed; every change is audited and e-mailed (text + HTML); request counts per page."""

from __future__ import annotations

import re
from collections import Counter
from datetime import date

import pytest
from django.core import mail

from billing import access
from billing.forms import WalletCardForm
from billing.models import Card
from core.cardforms import default_expiry
from core.pages import today
from core.payments.gateway import CardToken
from tests.builders import GOOD_CARD, TEST_CARD, make_account, subscribe

pytestmark = pytest.mark.django_db

MASTERCARD = {**GOOD_CARD, "card_number": "5555 5555 5555 4444", "exp_month": "6", "exp_year": "2031"}


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def token_of(card: Card) -> CardToken:
    d = card.Details
    return CardToken(token=d.Token, brand=d.Brand, last4=d.Last4, exp_month=d.ExpMonth, exp_year=d.ExpYear)


def subscribe_with(account_id: str, card: Card, sku: str = "NEWS-DAILY", *, on: date = date(2027, 1, 10)):
    account = access.get_account(account_id)
    return access.create_subscription(
        account, sku=sku, payment_day=15, amount=999, currency="USD", card=token_of(card), today=on,
        reminder_days_before=7, product_name=sku.title(), billing_address=card.Details.BillingAddress,
        card_id=card.card_id)


def events(account_id: str, prefix: str = "card.") -> list:
    return [e for e in access.get_events_by_account(account_id) if e.Action.startswith(prefix)]


# --- the access layer, on both engines ----------------------------------------------------


def test_replacing_a_card_moves_every_subscription_that_used_it(table, ddb_requests) -> None:
    account = make_account("wally@example.com")
    card = access.add_card(account.account_id, TEST_CARD, "1 Main St", actor="wally", make_default=True)
    other = access.add_card(account.account_id, TEST_CARD, None, actor="wally")
    subs = [subscribe_with(account.account_id, card, sku) for sku in ("NEWS", "GYM", "TEA")]
    elsewhere = subscribe_with(account.account_id, other, "CLOUD")
    all_subs = access.get_subscriptions_by_account(account.account_id)
    new = CardToken(token="tok_new", brand="Mastercard", last4="4444", exp_month=6, exp_year=2031)
    ddb_requests.reset()
    done = access.replace_card_everywhere(card, new, "1 Main St", all_subs, actor="wally")
    # one transaction: the card, its event and the three subscriptions
    assert ddb_requests.ops == ["TransactWriteItems"]
    assert sorted(s.sub_id for s in done.moved) == sorted(s.sub_id for s in subs)
    for sub in access.get_subscriptions_by_account(account.account_id):
        details = sub.PaymentDetails
        if sub.sub_id == elsewhere.sub_id:
            assert details.CardId == other.card_id and details.Token == TEST_CARD.token
        else:
            assert (details.Token, details.Last4, details.CardId) == ("tok_new", "4444", card.card_id)
            assert details.BillingAddress == "1 Main St"
    stored = access.get_card(account.account_id, card.card_id)
    assert stored.Details.Token == "tok_new" and stored.Details.CardId == card.card_id
    [event] = events(account.account_id, "card.replaced")
    assert event.Before["Card"] == "Visa ****4242" and event.After["Card"] == "Mastercard ****4444"
    assert sorted(event.After["Subscriptions"]) == sorted(s.sub_id for s in subs)
    assert "tok_new" not in str(event.After)  # never the token in the audit trail


def test_beyond_one_transaction_each_further_subscription_is_its_own_update(table, ddb_requests, monkeypatch) -> None:
    """An account with more subscriptions on one card than a transaction holds: the rest
    move one conditional UpdateItem each, and one that changed card meanwhile is skipped."""
    monkeypatch.setattr(access.cards, "MAX_SUBSCRIPTIONS_PER_TRANSACTION", 1)
    account = make_account("many@example.com")
    card = access.add_card(account.account_id, TEST_CARD, None, actor="many", make_default=True)
    other = access.add_card(account.account_id, TEST_CARD, None, actor="many")
    for sku in ("NEWS", "GYM", "TEA"):
        subscribe_with(account.account_id, card, sku)
    read = access.get_subscriptions_by_account(account.account_id)
    access.use_card(access.get_subscription(account.account_id, read[-1].sub_id), other, actor="many")
    new = CardToken(token="tok_new", brand="Mastercard", last4="4444", exp_month=6, exp_year=2031)
    ddb_requests.reset()
    done = access.replace_card_everywhere(card, new, None, read, actor="many")
    assert ddb_requests.ops == ["TransactWriteItems", "UpdateItem", "UpdateItem"]
    assert [s.sub_id for s in done.skipped] == [read[-1].sub_id]
    for sub in done.moved:  # as stored, read back from what the update changed
        assert sub.PaymentDetails.Token == "tok_new"
        assert sub.serialize() == access.get_subscription(account.account_id, sub.sub_id, sub.SKU).serialize()
    assert access.get_subscription(account.account_id, read[-1].sub_id).PaymentDetails.CardId == other.card_id


def test_a_replacement_is_all_or_nothing(table) -> None:
    """A subscription moved to another card after the wallet was read: the transaction's
    condition on it fails, and neither the card nor any subscription changes."""
    account = make_account("wally@example.com")
    card = access.add_card(account.account_id, TEST_CARD, None, actor="wally", make_default=True)
    other = access.add_card(account.account_id, TEST_CARD, None, actor="wally")
    a, b = subscribe_with(account.account_id, card, "A"), subscribe_with(account.account_id, card, "B")
    read = access.get_subscriptions_by_account(account.account_id)
    access.use_card(access.get_subscription(account.account_id, b.sub_id), other, actor="elsewhere")
    new = CardToken(token="tok_new", brand="Mastercard", last4="4444", exp_month=6, exp_year=2031)
    with pytest.raises(access.ConditionFailed):
        access.replace_card_everywhere(card, new, None, read, actor="wally")
    assert access.get_card(account.account_id, card.card_id).Details.Token == TEST_CARD.token
    assert access.get_subscription(account.account_id, a.sub_id).PaymentDetails.Token == TEST_CARD.token
    assert events(account.account_id, "card.replaced") == []


def test_a_card_in_use_cannot_be_removed(table) -> None:
    account = make_account("wally@example.com")
    card = access.add_card(account.account_id, TEST_CARD, None, actor="wally", make_default=True)
    sub = subscribe_with(account.account_id, card)
    account = access.get_account(account.account_id)
    with pytest.raises(access.CardInUse) as refused:
        access.remove_card(account, card, access.get_subscriptions_by_account(account.account_id), actor="wally")
    assert [s.sub_id for s in refused.value.subscriptions] == [sub.sub_id]
    assert access.get_card(account.account_id, card.card_id) is not None
    access.cancel_subscription(sub, actor="wally")
    access.remove_card(account, card, access.get_subscriptions_by_account(account.account_id), actor="wally")
    assert access.get_card(account.account_id, card.card_id) is None
    assert access.get_account(account.account_id).DefaultCardId is None  # the default went with it


def test_ids_are_checked_before_keys(table) -> None:
    account = make_account("wally@example.com")
    assert access.get_card(account.account_id, "x#y") is None
    assert access.get_card(account.account_id, "x" * 500) is None
    assert access.get_cards("a#b") == []


# --- the pages ------------------------------------------------------------------------------


def test_the_card_form_opens_on_a_future_expiry_and_keeps_the_address() -> None:
    form = WalletCardForm(today=date(2026, 11, 23), initial={"billing_address": "1 Main St"})
    assert (form["exp_month"].value(), form["exp_year"].value()) == (12, 2026)
    assert default_expiry(date(2026, 12, 5)) == (1, 2027)
    html = str(form)
    assert '<option value="12" selected>' in html and '<option value="2026" selected>' in html
    assert "1 Main St" in html


def test_add_cards_the_first_is_the_default(customer, ddb_requests) -> None:
    ddb_requests.reset()
    page = customer.client.get("/wallet/")
    assert ddb_requests.ops == ["Query"] and "Your wallet is empty" in page.content.decode()
    add = customer.client.get("/wallet/add/").content.decode()
    expiry = default_expiry(today())
    assert f'<option value="{expiry[0]}" selected>' in add and f'<option value="{expiry[1]}" selected>' in add
    ddb_requests.reset()
    response = customer.client.post("/wallet/add/", {**GOOD_CARD, "billing_address": "1 Main St"}, follow=True)
    # account, wallet (is it empty?), the card with its event and the default: one transaction
    assert ddb_requests.ops[:3] == ["GetItem", "Query", "TransactWriteItems"]
    assert "Visa ending 4242 (12/2030) is in your wallet." in messages_of(response)
    [card] = access.get_cards(customer.account_id)
    assert access.get_account(customer.account_id).DefaultCardId == card.card_id
    assert card.Details.BillingAddress == "1 Main St"
    [message] = mail.outbox
    assert message.to == [customer.email] and "added" in message.subject
    for text in (message.body, message.alternatives[0][0]):
        assert "Visa ending 4242 (12/2030)" in text and "default card" in text
        assert "4242424242424242" not in text and "4242 4242 4242 4242" not in text
    customer.client.post("/wallet/add/", MASTERCARD)
    cards = access.get_cards(customer.account_id)
    assert len(cards) == 2 and access.get_account(customer.account_id).DefaultCardId == card.card_id
    ddb_requests.reset()
    html = customer.client.get("/wallet/").content.decode()
    assert ddb_requests.ops == ["Query"]
    assert html.count('data-testid="wallet-card"') == 2 and html.count('data-testid="default-card"') == 1
    assert [e.Action for e in events(customer.account_id)] == ["card.added", "card.added"]


def test_make_another_card_the_default(customer, ddb_requests) -> None:
    customer.client.post("/wallet/add/", GOOD_CARD)
    customer.client.post("/wallet/add/", MASTERCARD)
    second = [c for c in access.get_cards(customer.account_id) if c.Details.Last4 == "4444"][0]
    mail.outbox.clear()
    ddb_requests.reset()
    response = customer.client.post(f"/wallet/{second.card_id}/default/", follow=True)
    assert ddb_requests.ops[:3] == ["GetItem", "GetItem", "TransactWriteItems"]
    assert access.get_account(customer.account_id).DefaultCardId == second.card_id
    assert "Mastercard ending 4444 (06/2031) is now your default card." in messages_of(response)
    [message] = mail.outbox
    assert "default card" in message.subject and "Mastercard ending 4444" in message.alternatives[0][0]
    [event] = events(customer.account_id, "card.default_changed")
    assert event.After == {"DefaultCardId": second.card_id}
    assert customer.client.get("/wallet/default/").status_code == 404  # no GET changes a thing


def test_replace_on_the_wallet_moves_three_subscriptions_with_one_email(customer, ddb_requests) -> None:
    customer.client.post("/wallet/add/", {**GOOD_CARD, "billing_address": "1 Main St"})
    [card] = access.get_cards(customer.account_id)
    subs = [subscribe_with(customer.account_id, card, sku) for sku in ("NEWS-DAILY", "GYM", "TEA-JP")]
    page = customer.client.get(f"/wallet/{card.card_id}/replace/").content.decode()
    assert "1 Main St</textarea>" in page  # kept unless changed
    mail.outbox.clear()
    ddb_requests.reset()
    response = customer.client.post(f"/wallet/{card.card_id}/replace/",
                                    {**MASTERCARD, "billing_address": "1 Main St"}, follow=True)
    # card, account, subscriptions, then one transaction for the card and all three
    assert ddb_requests.ops[:4] == ["GetItem", "GetItem", "Query", "TransactWriteItems"]
    assert ddb_requests.by_name()["TransactWriteItems"] == 1
    assert any("It now pays for:" in m for m in messages_of(response))
    for sub in subs:
        details = access.get_subscription(customer.account_id, sub.sub_id).PaymentDetails
        assert (details.Last4, details.BillingAddress, details.CardId) == ("4444", "1 Main St", card.card_id)
    [message] = mail.outbox  # one e-mail for the three
    for text in (message.body, message.alternatives[0][0]):
        assert "Mastercard ending 4444 (06/2031)" in text and "Visa ending 4242 (12/2030)" in text
        assert all(name in text for name in ("News-Daily", "Gym", "Tea-Jp"))
        assert "5555555555554444" not in text
    assert len(events(customer.account_id, "card.replaced")) == 1


def test_remove_a_card_in_use_is_refused_with_a_clear_message(customer) -> None:
    customer.client.post("/wallet/add/", GOOD_CARD)
    customer.client.post("/wallet/add/", MASTERCARD)
    used, spare = sorted(access.get_cards(customer.account_id), key=lambda c: c.Details.Last4)
    subscribe_with(customer.account_id, used)
    mail.outbox.clear()
    response = customer.client.post(f"/wallet/{used.card_id}/remove/", follow=True)
    text = messages_of(response)[-1]
    assert "Visa ending 4242 (12/2030) cannot be removed: News-Daily pays with it." in text
    assert len(access.get_cards(customer.account_id)) == 2 and mail.outbox == []
    response = customer.client.post(f"/wallet/{spare.card_id}/remove/", follow=True)
    assert "Mastercard ending 4444 (06/2031) was removed from your wallet." in messages_of(response)
    assert [c.card_id for c in access.get_cards(customer.account_id)] == [used.card_id]
    [message] = mail.outbox
    assert "removed" in message.subject and "Mastercard ending 4444" in message.body
    # a card not in the wallet (removed in another tab): the wallet as it is now, not a 404
    assert customer.client.post("/wallet/nope/remove/").status_code == 409
    assert customer.client.post("/wallet/a%23b/remove/").status_code == 409


def test_another_customers_card_is_not_found(customer, other_customer) -> None:
    customer.client.post("/wallet/add/", GOOD_CARD)
    [card] = access.get_cards(customer.account_id)
    # A page or button naming a card not in one's own wallet is answered as one removed in
    # another tab (409, one's own wallet as it is now): the same answer as for any unknown
    # id, so nothing of the other customer's card is shown or changed.
    for action in ("replace", "remove", "default"):
        response = other_customer.client.post(f"/wallet/{card.card_id}/{action}/")
        html = response.content.decode()
        assert response.status_code == 409 and "Your wallet is empty." in html and "4242" not in html
    assert access.get_cards(customer.account_id) != []


def test_a_subscription_chooses_a_wallet_card(customer, ddb_requests) -> None:
    customer.client.post("/wallet/add/", GOOD_CARD)
    customer.client.post("/wallet/add/", MASTERCARD)
    visa, master = sorted(access.get_cards(customer.account_id), key=lambda c: c.Details.Last4)
    sub = subscribe_with(customer.account_id, visa)
    ddb_requests.reset()
    page = customer.client.get(f"/subscriptions/{sub.sub_id}/card/")
    assert ddb_requests.ops == ["Query", "Query"]  # the subscription, the wallet
    # every wallet card but the one it pays with
    assert page.context["choose_form"].fields["card"].choices == [(master.card_id, "Mastercard ending 4444 (06/2031)")]
    assert 'data-testid="choose-card"' in page.content.decode()
    mail.outbox.clear()
    ddb_requests.reset()
    response = customer.client.post(f"/subscriptions/{sub.sub_id}/card/choose/",
                                    {"card": master.card_id, "version": "1"}, follow=True)
    assert ddb_requests.ops[:3] == ["Query", "Query", "TransactWriteItems"]
    assert "Future payments will use your Mastercard ending 4444 (06/2031)." in messages_of(response)
    details = access.get_subscription(customer.account_id, sub.sub_id).PaymentDetails
    assert (details.CardId, details.Token) == (master.card_id, master.Details.Token)
    [message] = mail.outbox
    assert "Card replaced" in message.subject and "Mastercard ending 4444" in message.body
    [event] = [e for e in access.get_events_by_account(customer.account_id)
               if e.Action == "subscription.card_replaced"]
    assert event.Before["CardId"] == visa.card_id and event.After["CardId"] == master.card_id
    # a stale form (version 1 again) is refused kindly and changes nothing
    response = customer.client.post(f"/subscriptions/{sub.sub_id}/card/choose/",
                                    {"card": visa.card_id, "version": "1"}, follow=True)
    assert "changed elsewhere" in " ".join(messages_of(response))
    assert access.get_subscription(customer.account_id, sub.sub_id).PaymentDetails.CardId == master.card_id
    # a card id that is not in the wallet is refused
    response = customer.client.post(f"/subscriptions/{sub.sub_id}/card/choose/",
                                    {"card": "nope", "version": "2"}, follow=True)
    assert "Choose one of the cards in your wallet." in messages_of(response)


def test_a_subscription_from_before_the_wallet(customer) -> None:
    """No CardId: shown as the card on this subscription (nothing written on a GET); a new
    card typed on its page joins the wallet and the subscription pays with it."""
    old = subscribe(customer)  # made the old way: PaymentDetails without CardId
    assert old.PaymentDetails.CardId is None
    html = customer.client.get("/wallet/").content.decode()
    assert "Not saved in your wallet" in html and "News-Daily" in html
    assert access.get_cards(customer.account_id) == []
    customer.client.post(f"/subscriptions/{old.sub_id}/card/", {**MASTERCARD, "version": "1"})
    [card] = access.get_cards(customer.account_id)
    details = access.get_subscription(customer.account_id, old.sub_id).PaymentDetails
    assert details.CardId == card.card_id and details.Last4 == "4444" == card.Details.Last4
    assert access.get_account(customer.account_id).DefaultCardId == card.card_id  # the wallet was empty
    assert Counter(e.Action for e in access.get_events_by_account(customer.account_id))["card.added"] == 0


def test_a_card_from_before_the_wallet_is_saved_to_it_with_one_click(customer) -> None:
    """The wallet's migration path for old subscriptions: "Save to wallet" makes the card a
    wallet card (the default, the wallet being empty) and every live subscription paying
    with it names it; the card itself does not change, so nothing is charged or mailed
    but the wallet's own notice."""
    first, second = subscribe(customer), subscribe(customer, sku="GYM", day=20)
    html = customer.client.get("/wallet/").content.decode()
    assert html.count('data-testid="not-in-wallet"') == 1  # one card, two subscriptions
    [via] = re.findall(r'action="/wallet/save/([0-9a-f]+)/"', html)  # through either subscription
    assert via in (first.sub_id, second.sub_id)
    mail.outbox.clear()
    response = customer.client.post(f"/wallet/save/{via}/", follow=True)
    assert "Visa ending 4242" in response.content.decode() and "is in your wallet" in response.content.decode()
    [card] = access.get_cards(customer.account_id)
    assert card.Details.Token == TEST_CARD.token and access.get_account(customer.account_id).DefaultCardId == card.card_id
    for sub in (first, second):
        assert access.get_subscription(customer.account_id, sub.sub_id).PaymentDetails.CardId == card.card_id
    saved = [e for e in access.get_events_by_account(customer.account_id) if e.Action == "subscription.card_saved_to_wallet"]
    assert len(saved) == 2
    assert len(mail.outbox) == 1  # the wallet's "a card was added"
    after = customer.client.get("/wallet/").content.decode()
    assert 'data-testid="not-in-wallet"' not in after
    # saving again (a second click) changes nothing
    customer.client.post(f"/wallet/save/{via}/")
    assert len(access.get_cards(customer.account_id)) == 1


def test_replacing_on_a_subscription_keeps_the_billing_address(customer) -> None:
    account = access.get_account(customer.account_id)
    sub = access.create_subscription(account, sku="NEWS-DAILY", payment_day=15, amount=999, currency="USD",
                                     card=TEST_CARD, today=today(), reminder_days_before=7,
                                     billing_address="Ann Example\n1 Main St")
    page = customer.client.get(f"/subscriptions/{sub.sub_id}/card/").content.decode()
    assert "Ann Example\n1 Main St</textarea>" in page
    customer.client.post(f"/subscriptions/{sub.sub_id}/card/",
                         {**MASTERCARD, "billing_address": "Ann Example\n1 Main St", "version": "1"})
    details = access.get_subscription(customer.account_id, sub.sub_id).PaymentDetails
    assert details.BillingAddress == "Ann Example\n1 Main St" and details.Last4 == "4444"
