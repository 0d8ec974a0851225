"""Stripe's events about a saved card (``payment_method.*``): the wallet and the
subscriptions' copies of its cards kept true to what the processor holds.

* ``payment_method.automatically_updated``: the card's bank sent new details (a new
  expiry, maybe a new number: brand, last four); the payment method, so rpay's token, is
  the same. The wallet card holding it and every live subscription's copy of it take the
  new details by the wallet's own replace path (one transaction with the card's audit
  event ``card.updated_by_bank``); live subscriptions holding it with no wallet card
  (made before the wallet, or their wallet card since removed) take them too, each with
  its event. No e-mail (the customer's card is the same card) and no charge: a past-due
  period is retried on its dunning date, with the new details.
* ``payment_method.detached``: the payment method was detached from the customer at
  Stripe (its dashboard): Stripe will not charge it any more, so its wallet card goes by
  the wallet's own remove path (``card.removed``, actor ``stripe``; not detached again).
  That cannot be refused as the customer's own removal of a card in use is: the live
  subscriptions paying with it keep their copy (their next charge is declined and goes
  through dunning) and the customer's e-mail names them, so they choose another card.

Both find the account through the Stripe customer: its ``metadata.account_id`` (one
request to Stripe: ``GatewayError`` when it cannot be asked, answered 500 so Stripe
delivers again, nothing written), the id checked before it reaches a key, then the
account's own ``StripeCustomerId`` must be that customer (a customer made for another
account, or by someone else, changes nothing). Then one Query reads the account and its
wallet. Nothing found: ``ignored`` with the reason, answered 200.

Safe to run twice: a redelivery finds the new details written (nothing to change) or
the card gone (nothing to remove); an update older than the card's last bank update
(``Card.UpdatedDate`` is the time Stripe reported that one) is ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date
from typing import Any

from billing import access
from billing.actions import wallet as wallet_actions
from billing.models import Account, AuditAction, Card, PaymentDetails, Subscription
from core.dynamo.keys import InvalidKey, check_id
from core.payments.gateway import CardToken, get_gateway
from core.payments.stripe.gateway import iso_from_epoch
from core.payments.stripe.webhooks import card_from_payment_method

ACTOR = "stripe"  # the audit events' actor for what the processor told us

Handler = Callable[[dict[str, Any], date], tuple[str, str]]


def whole_event(handler: Handler) -> Handler:
    """Mark a handler that ``actions.webhooks.handle_event`` gives the whole event (its
    ``created`` time, ``data.previous_attributes``), not only ``data.object``."""
    handler.takes_event = True  # type: ignore[attr-defined]
    return handler


def _customer_wallet(customer: object) -> tuple[access.Wallet | None, str]:
    """The wallet (with its account) of the account whose Stripe customer is
    ``customer``, or (None, why not). ``GatewayError`` when Stripe cannot be asked."""
    if isinstance(customer, dict):  # expanded (not in today's events, but cheap to read)
        customer = customer.get("id")
    if not isinstance(customer, str) or not customer:
        return None, "no customer named"
    account_id = get_gateway().customer_account(customer)
    if not account_id:
        return None, f"customer {customer} was made for no rpay account"
    try:
        # Before it reaches a key (docs/TABLE.md, "Ids are checked before they reach a key").
        check_id("account_id", account_id)
    except InvalidKey:
        return None, f"customer {customer} names no valid account id"
    wallet = access.get_wallet(account_id)
    if wallet.account is None:
        return None, f"customer {customer}: no account {account_id}"
    if wallet.account.StripeCustomerId != customer:
        return None, f"customer {customer} is not account {account_id}'s"
    return wallet, ""


def _method_id(method: dict[str, Any]) -> str:
    method_id = method.get("id")
    return method_id if isinstance(method_id, str) and method_id and "/" not in method_id else ""


def _holds(details: PaymentDetails | None, method_id: str) -> bool:
    """Whether a stored card (``<customer>/<payment method>``) is this payment method."""
    return details is not None and details.Token.endswith(f"/{method_id}")


def _same(details: PaymentDetails, card: CardToken) -> bool:
    return (details.Brand, details.Last4, int(details.ExpMonth), int(details.ExpYear)) == (
        card.brand, card.last4, card.exp_month, card.exp_year)


def _wallet_card(cards: list[Card], method_id: str) -> Card | None:
    return next((c for c in cards if _holds(c.Details, method_id)), None)


@whole_event
def bank_updated_card(event: dict[str, Any], today: date) -> tuple[str, str]:
    """``payment_method.automatically_updated``: new details for the card everywhere rpay keeps it."""
    method = event["data"]["object"]
    method_id, new = _method_id(method), card_from_payment_method(method)
    if not method_id or new is None:
        return "ignored", f"{method.get('id')}: not a card payment method"
    wallet, why = _customer_wallet(method.get("customer"))
    if wallet is None or wallet.account is None:
        return "ignored", f"{method_id}: {why}"
    account: Account = wallet.account
    card = _wallet_card(wallet.cards, method_id)
    # When Stripe reported it (every event has ``created``; without it, now).
    created = event.get("created")
    reported_at = iso_from_epoch(created) if isinstance(created, int) and created > 0 else \
        access.utc_now().isoformat(timespec="seconds")
    if card is not None and card.UpdatedDate and reported_at < card.UpdatedDate:
        return "ignored", f"{method_id}: an update older than wallet card {card.card_id}'s last change"
    subs = access.get_subscriptions_by_account(account.account_id)
    done = []
    if card is not None and not _same(card.Details, new):
        # Same token, same billing address: only what the bank changed.
        replaced = access.replace_card_everywhere(
            card, replace(new, token=card.Details.Token), card.Details.BillingAddress, subs, actor=ACTOR,
            action=AuditAction.CARD_UPDATED_BY_BANK, updated_at=reported_at)
        done.append(f"wallet card {card.card_id} and {len(replaced.moved)} subscription(s) paying with it")
        moved = {s.SK for s in replaced.moved}
    else:
        moved = set()
    # Copies the wallet card's replacement did not reach: subscriptions holding the card
    # with no wallet card (before the wallet, or the card removed since), or left behind
    # by a delivery that failed half-way.
    copies = [s for s in subs if s.is_live and _holds(s.PaymentDetails, method_id) and s.SK not in moved
              and not _same(s.PaymentDetails, new)]
    if copies:
        updated = access.update_card_copies(copies, new, actor=ACTOR, action=AuditAction.CARD_UPDATED_BY_BANK)
        done.append(f"subscription(s) {', '.join(s.sub_id for s in updated)}")
    if done:
        return "done", f"{method_id}: {new.brand} ****{new.last4} {new.exp_month:02d}/{new.exp_year} on " + \
            "; ".join(done)
    if card is None and not any(_holds(s.PaymentDetails, method_id) for s in subs):
        return "ignored", f"{method_id}: no card of account {account.account_id} is this payment method"
    return "ignored", f"{method_id}: every copy has these details already"


@whole_event
def card_detached(event: dict[str, Any], today: date) -> tuple[str, str]:
    """``payment_method.detached``: its wallet card removed; the subscriptions' copies kept."""
    method = event["data"]["object"]
    method_id = _method_id(method)
    if not method_id:
        return "ignored", f"{method.get('id')}: not a payment method"
    # Detached: the object's ``customer`` is null, the former one is in previous_attributes.
    previous = event["data"].get("previous_attributes")
    customer = previous.get("customer") if isinstance(previous, dict) else None
    wallet, why = _customer_wallet(customer)
    if wallet is None or wallet.account is None:
        return "ignored", f"{method_id}: {why}"
    card = _wallet_card(wallet.cards, method_id)
    if card is None:
        return "ignored", f"{method_id}: in no wallet card of account {wallet.account.account_id} (removed already?)"
    still_using: list[Subscription] = wallet_actions.remove_card(wallet.account, card, actor=ACTOR, detached=True)
    kept = f"; subscription(s) {', '.join(s.sub_id for s in still_using)} keep their copy" if still_using else ""
    return "done", f"{method_id}: wallet card {card.card_id} removed{kept}"
