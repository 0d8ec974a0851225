"""The wallet: an account's cards, ``ACC#<AccountId>`` / ``CARD#<CardId>``.

A subscription pays with one card and keeps a copy of it in ``PaymentDetails`` (with the
card's ``CardId``), so the payment batch stays at two requests per payment and the
index projections keep working. Each write here is one ``TransactWriteItems`` with its
audit event: the card and every subscription that copies it change together, or none.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pynamodb.exceptions import DoesNotExist
from pynamodb.transactions import TransactWrite

from billing.access._common import absent_if_invalid, iso_now, live, new_id, refused_as
from billing.access.events import new_event, subscription_snapshot
from billing.access.outbox import preview, save_item, subscription_event
from billing.access.subscriptions import update_subscription
from billing.exceptions import CardInUse, ConditionFailed
from billing.models import (
    Account,
    AuditAction,
    BillingItem,
    Card,
    MerchantEventType,
    PaymentDetails,
    Subscription,
)
from core.dynamo import engine
from core.payments.gateway import CardToken

# DynamoDB takes at most 100 items in one transaction; the card and its event take two.
MAX_SUBSCRIPTIONS_PER_TRANSACTION = 98


def card_details(card: CardToken, card_id: str | None, billing_address: str | None) -> PaymentDetails:
    return PaymentDetails(
        Token=card.token, Brand=card.brand, Last4=card.last4, ExpMonth=card.exp_month,
        ExpYear=card.exp_year, BillingAddress=billing_address, CardId=card_id, Country=card.country,
    )


def card_country_action(country: str | None) -> Any:
    """The account's ``CardCountry`` (tax evidence) for a default card of ``country``."""
    return Account.CardCountry.set(country.upper()) if country else Account.CardCountry.remove()


def card_snapshot(details: PaymentDetails | None) -> dict | None:
    """What an audit event keeps of a card: never the token."""
    if details is None:
        return None
    return {"Card": f"{details.Brand} ****{details.Last4}", "Expiry": f"{details.ExpMonth:02d}/{details.ExpYear}",
            "CardId": details.CardId, "BillingAddress": details.BillingAddress}


def _transaction() -> TransactWrite:
    return engine.transact_write()


@absent_if_invalid(list)
def get_cards(account_id: str) -> list[Card]:
    """Query base table, ``begins_with(SK, "CARD#")``: the wallet, oldest card first
    (ids are random, so the order is the ids'; pages sort by ``CreatedDate``)."""
    cards = list(Card.query(Card.pk(account_id=account_id), Card.SK.startswith(Card.sk_template.prefix),
                            consistent_read=True))
    return sorted(cards, key=lambda c: c.CreatedDate)


@dataclass
class Wallet:
    account: Account | None
    cards: list[Card]

    @property
    def default(self) -> Card | None:
        return default_card(self.account, self.cards)


@absent_if_invalid(lambda: Wallet(None, []))
def get_wallet(account_id: str) -> Wallet:
    """The account item and its cards in one Query: their sort keys ``ACC#<id>`` and
    ``CARD#<id>`` are neighbours (events, receipts and subscriptions sort after them).
    Any other item in that range is ignored by type, so a new prefix cannot break it."""
    pk = Account.pk(account_id=account_id)
    account, cards = None, []
    for item in BillingItem.query(pk, BillingItem.SK.between(Account.sk_template.prefix,
                                                             Card.sk_template.prefix + "\uffff"),
                                  consistent_read=True):
        if isinstance(item, Account):
            account = item
        elif isinstance(item, Card):
            cards.append(item)
    return Wallet(account, sorted(cards, key=lambda c: c.CreatedDate))


@absent_if_invalid()
def get_card(account_id: str, card_id: str) -> Card | None:
    try:
        return Card.get(Card.pk(account_id=account_id), Card.sk(card_id=card_id), consistent_read=True)
    except DoesNotExist:
        return None


def default_card(account: Account | None, cards: list[Card]) -> Card | None:
    """The account's default card: the one it names, else the oldest (a removed default
    leaves the oldest remaining card as the default)."""
    by_id = {c.card_id: c for c in cards}
    if account is not None and account.DefaultCardId in by_id:
        return by_id[account.DefaultCardId]
    return cards[0] if cards else None


def add_card(account_id: str, card: CardToken, billing_address: str | None = None, *, actor: str,
             make_default: bool = False, card_id: str | None = None, audit: bool = True) -> Card:
    """PutItem of a new card (only if absent), its event, and the account's default when
    asked: one transaction. ``card_id`` and ``audit=False`` are for a card a subscription
    already pays with (``replace_card(..., card_id=)`` made first): its event, the
    subscription's ``card_replaced``, names the card id, so the one change has one event."""
    card_id = card_id or new_id()
    item = Card(Card.pk(account_id=account_id), Card.sk(card_id=card_id),
                Details=card_details(card, card_id, billing_address), CreatedDate=iso_now())
    with refused_as(ConditionFailed, item.SK), _transaction() as tx:
        tx.save(item, condition=Card.SK.does_not_exist())
        if audit:
            tx.save(new_event(account_id, actor=actor, action=AuditAction.CARD_ADDED, subject=item.SK,
                              after={**(card_snapshot(item.Details) or {}), "Default": make_default}))
        if make_default:
            account = Account(Account.pk(account_id=account_id), Account.sk(account_id=account_id))
            tx.update(account, [Account.DefaultCardId.set(card_id), card_country_action(card.country)],
                      condition=Account.PK.exists())
    return item


def set_default_card(account: Account, card: Card, *, actor: str) -> Account:
    """The account's default card, on condition the card is still in the wallet."""
    before = account.DefaultCardId
    event = new_event(account.account_id, actor=actor, action=AuditAction.DEFAULT_CARD_CHANGED, subject=card.SK,
                      before={"DefaultCardId": before}, after={"DefaultCardId": card.card_id})
    with refused_as(ConditionFailed, card.SK), _transaction() as tx:
        tx.condition_check(Card, card.PK, card.SK, condition=Card.SK.exists())
        tx.update(account, [Account.DefaultCardId.set(card.card_id), card_country_action(card.Details.Country)],
                  condition=Account.PK.exists())
        tx.save(event)
    account.DefaultCardId = card.card_id
    account.CardCountry = card.Details.Country or None
    return account


def subscriptions_using(card_id: str, subscriptions: list[Subscription]) -> list[Subscription]:
    """The live subscriptions among ``subscriptions`` that pay with the wallet card."""
    return [s for s in subscriptions if s.is_live and s.PaymentDetails is not None
            and s.PaymentDetails.CardId == card_id]


def _copy_to(tx: TransactWrite, sub: Subscription, details: PaymentDetails, card_id: str) -> None:
    # The condition is the business one (still live, still on this card), not the
    # Version: a payment run advancing the subscription meanwhile must not undo this.
    tx.update(sub, [Subscription.PaymentDetails.set(details)],
              condition=live() & (Subscription.PaymentDetails.CardId == card_id), add_version_condition=False)


@dataclass
class Replaced:
    """A replaced wallet card and the subscriptions now paying with it."""

    card: Card
    moved: list[Subscription] = field(default_factory=list)
    # Subscriptions that changed card or ended between the read and the write: left as they are.
    skipped: list[Subscription] = field(default_factory=list)


def replace_card_everywhere(card: Card, new: CardToken, billing_address: str | None, subscriptions: list[Subscription],
                            *, actor: str, action: AuditAction = AuditAction.CARD_UPDATED,
                            updated_at: str | None = None) -> Replaced:
    """New card details in the same wallet slot, and in every live subscription that
    used it: one transaction of the card, its event and up to 98 subscriptions (each on
    condition it is live and still on this card), so none keeps the old card while the
    wallet shows the new one. Beyond 98 (rare: one account), each further subscription
    is one conditional UpdateItem after the transaction. ``action`` and ``updated_at``
    (the card's ``UpdatedDate``, now unless given) are for the bank's own update of the
    card (``actions.card_events``): the time the processor reported it."""
    old = card.Details
    details = card_details(new, card.card_id, billing_address)
    using = subscriptions_using(card.card_id, subscriptions)
    first, rest = using[:MAX_SUBSCRIPTIONS_PER_TRANSACTION], using[MAX_SUBSCRIPTIONS_PER_TRANSACTION:]
    event = new_event(card.account_id, actor=actor, action=action, subject=card.SK,
                      before=card_snapshot(old),
                      after={**(card_snapshot(details) or {}), "Subscriptions": [s.sub_id for s in using]})
    updated_at = updated_at or iso_now()
    with refused_as(ConditionFailed, card.SK), _transaction() as tx:
        # Still the card that was read: two replacements racing do not both win.
        tx.update(card, [Card.Details.set(details), Card.UpdatedDate.set(updated_at)],
                  condition=Card.Details.Token == old.Token)
        tx.save(event)
        for sub in first:
            _copy_to(tx, sub, details, card.card_id)
    card.Details = details
    card.UpdatedDate = updated_at
    result = Replaced(card)
    for sub in first:
        sub.PaymentDetails = details
        result.moved.append(sub)
    for sub in rest:
        try:
            update_subscription(sub, [Subscription.PaymentDetails.set(details)],
                                live() & (Subscription.PaymentDetails.CardId == card.card_id), check_version=False)
            result.moved.append(sub)
        except ConditionFailed:
            result.skipped.append(sub)
    return result


def use_card(sub: Subscription, card: Card, *, actor: str,
             action: AuditAction = AuditAction.CARD_REPLACED) -> Subscription:
    """The subscription pays with this wallet card from now on: its copy, on condition the
    card is still in the wallet with the details read, and the subscription unchanged
    since the page was shown (Version); with its event, one transaction."""
    before = {**subscription_snapshot(sub), "CardId": sub.PaymentDetails.CardId if sub.PaymentDetails else None}
    after = {**before, "Card": f"{card.Details.Brand} ****{card.Details.Last4}", "CardId": card.card_id}
    actions = [Subscription.PaymentDetails.set(card.Details)]
    updated = subscription_event(MerchantEventType.SUBSCRIPTION_UPDATED, preview(sub, actions))
    with refused_as(ConditionFailed, sub.SK), _transaction() as tx:
        tx.condition_check(Card, card.PK, card.SK, condition=Card.Details.Token == card.Details.Token)
        tx.update(sub, actions, condition=live())
        tx.save(new_event(sub.account_id, actor=actor, action=action, subject=sub.SK, before=before, after=after))
        save_item(tx, updated)
    sub.PaymentDetails = card.Details
    return sub


def remove_card(account: Account, card: Card, subscriptions: list[Subscription], *, actor: str,
                keep_copies: bool = False) -> list[Subscription]:
    """Delete a card no live subscription uses (``CardInUse`` otherwise, naming them);
    the account's default is cleared with it when it was this card. ``keep_copies``: the
    processor has detached the card already, so it goes whatever uses it; those live
    subscriptions keep their copy (named in the event, and returned)."""
    in_use = subscriptions_using(card.card_id, subscriptions)
    if in_use and not keep_copies:
        raise CardInUse(in_use)
    event = new_event(account.account_id, actor=actor, action=AuditAction.CARD_REMOVED, subject=card.SK,
                      before=card_snapshot(card.Details),
                      after={"Subscriptions": [s.sub_id for s in in_use]} if in_use else None)
    with refused_as(ConditionFailed, card.SK), _transaction() as tx:
        tx.delete(card, condition=Card.SK.exists())
        tx.save(event)
        if account.DefaultCardId == card.card_id:
            tx.update(account, [Account.DefaultCardId.remove()],
                      condition=Account.DefaultCardId == card.card_id)
    if account.DefaultCardId == card.card_id:
        account.DefaultCardId = None
    return in_use


def update_card_copies(subscriptions: list[Subscription], new: CardToken, *, actor: str,
                       action: AuditAction) -> list[Subscription]:
    """New details (brand, last four, expiry; each keeps its token) for live subscriptions' own
    copies of a card that no wallet card holds (made before the wallet, or its wallet card
    since removed): each subscription, on condition it is live and still holds the copy
    read (token and card id), with its event; one transaction per 49 (two items each)."""
    done: list[Subscription] = []
    per_transaction = (MAX_SUBSCRIPTIONS_PER_TRANSACTION + 2) // 2
    for start in range(0, len(subscriptions), per_transaction):
        chunk = subscriptions[start:start + per_transaction]
        written = []
        with refused_as(ConditionFailed, chunk[0].SK), _transaction() as tx:
            for sub in chunk:
                old = sub.PaymentDetails
                details = card_details(replace(new, token=old.Token), old.CardId, old.BillingAddress)
                same_copy = Subscription.PaymentDetails.Token == old.Token
                same_copy &= (Subscription.PaymentDetails.CardId == old.CardId if old.CardId
                              else Subscription.PaymentDetails.CardId.does_not_exist())
                tx.update(sub, [Subscription.PaymentDetails.set(details)], condition=live() & same_copy,
                          add_version_condition=False)
                tx.save(new_event(sub.account_id, actor=actor, action=action, subject=sub.SK,
                                  before=card_snapshot(old), after=card_snapshot(details)))
                written.append((sub, details))
        for sub, details in written:
            sub.PaymentDetails = details
            done.append(sub)
    return done
