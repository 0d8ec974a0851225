"""What a customer does to the wallet, one operation each: the access function
makes the change and records its audit event, this module tells the customer by e-mail
(``core.mail``, text + HTML) and retries a past-due period with the new card.
``billing.actions.subscriptions`` is the same thing for subscriptions; this is its wallet half.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date

from django.utils.functional import lazy
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from billing import access
from billing.models import Account, AuditAction, Card, PaymentDetails, Subscription, SubscriptionStatus
from billing.notify import tell, tell_account
from billing.operations.outcomes import PaymentOutcome
from billing.operations.payments import take_payment
from core.mail import lazy_message
from core.payments.errors import GatewayError, PaymentError
from core.payments.gateway import CardToken, get_gateway

log = logging.getLogger(__name__)


def card_label(details: PaymentDetails | CardToken) -> str:
    """"Visa ending 4242 (12/2030)": what pages and e-mails name a card by."""
    if isinstance(details, CardToken):
        brand, last4, month, year = details.brand, details.last4, details.exp_month, details.exp_year
    else:
        brand, last4, month, year = details.Brand, details.Last4, details.ExpMonth, details.ExpYear
    return _("%(brand)s ending %(last4)s (%(month)02d/%(year)d)") % {
        "brand": brand, "last4": last4, "month": int(month), "year": int(year)}


# The label, worked out when an e-mail is rendered (in the customer's language).
card_text = lazy(card_label, str)


@dataclass
class PaidNow:
    """A past-due subscription retried at once with its new card: the outcome, or None
    when the gateway could not be reached (the next retry date tries again)."""

    sub: Subscription
    outcome: PaymentOutcome | None


def _retry_past_due(subs: list[Subscription], *, actor: str, today: date) -> list[PaidNow]:
    """A past-due period stays owed (money rule M1): a new card pays it at once."""
    paid: list[PaidNow] = []
    for sub in subs:
        if sub.Status != SubscriptionStatus.PAST_DUE:
            continue
        try:
            paid.append(PaidNow(sub, take_payment(sub, run_date=today, actor=actor)))
        except GatewayError:
            paid.append(PaidNow(sub, None))
    return paid


def add_card(account: Account, card: CardToken, billing_address: str | None = None, *, actor: str,
             make_default: bool = False, cards: list[Card] | None = None) -> Card:
    """A new wallet card; the first one is the default whatever was asked."""
    make_default = make_default or not (cards if cards is not None else access.get_cards(account.account_id))
    added = access.add_card(account.account_id, card, billing_address, actor=actor, make_default=make_default)
    if make_default:
        account.DefaultCardId = added.card_id
    tell_account("wallet_card_added", account, gettext_lazy("A card was added to your wallet"),
          card=card_text(added.Details), default=make_default)
    return added


@dataclass
class WalletReplaced:
    card: Card
    moved: list[Subscription] = field(default_factory=list)
    skipped: list[Subscription] = field(default_factory=list)
    paid_now: list[PaidNow] = field(default_factory=list)


def replace_card(account: Account, card: Card, new: CardToken, billing_address: str | None, *, actor: str,
                 today: date) -> WalletReplaced:
    """New details for a wallet card, and for every subscription that pays with it (one
    transaction, one audit event, one e-mail listing them); past-due ones are retried
    with it at once. ``access.ConditionFailed`` when the card changed meanwhile."""
    old_label = card_text(card.Details)
    subs = access.get_subscriptions_by_account(account.account_id)
    done = access.replace_card_everywhere(card, new, billing_address, subs, actor=actor)
    if account.DefaultCardId == card.card_id:  # the tax evidence is the default card's country
        access.set_card_country(account, new.country)
    tell_account("wallet_card_replaced", account, lazy_message(gettext_noop("Card replaced: %(card)s"),
                                                        card=card_text(done.card.Details)),
          old_card=old_label, card=card_text(done.card.Details),
          subscriptions=[s.ProductName or s.SKU for s in done.moved])
    return WalletReplaced(done.card, done.moved, done.skipped, _retry_past_due(done.moved, actor=actor, today=today))


def set_default_card(account: Account, card: Card, *, actor: str) -> Account:
    access.set_default_card(account, card, actor=actor)
    tell_account("wallet_default_changed", account, lazy_message(gettext_noop("Your default card is now %(card)s"),
                                                          card=card_text(card.Details)), card=card_text(card.Details))
    return account


def remove_card(account: Account, card: Card, *, actor: str, detached: bool = False) -> list[Subscription]:
    """Remove a card no live subscription pays with; ``access.CardInUse`` names those that do.

    ``detached``: the processor has detached the card already (Stripe's dashboard:
    ``actions.card_events``). That cannot be refused, so the card leaves the wallet
    whatever pays with it, and is not detached again; the live subscriptions paying with
    it keep their copy (their next charge is declined and goes through dunning) and are
    returned, and the e-mail names them so the customer chooses another card."""
    subs = access.get_subscriptions_by_account(account.account_id)
    still_using = access.remove_card(account, card, subs, actor=actor, keep_copies=detached)
    if detached:
        tell_account("wallet_card_detached", account, gettext_lazy("A card was removed from your wallet"),
                     card=card_text(card.Details), subscriptions=[s.ProductName or s.SKU for s in still_using])
        return still_using
    try:  # Stripe: detach the payment method from the customer, so it is not kept there
        get_gateway().forget_card(card.Details.Token)
    except PaymentError as error:  # removed from the wallet all the same: rpay never charges it again
        log.warning("card %s removed from the wallet but not detached at the gateway: %s", card.card_id, error)
    tell_account("wallet_card_removed", account, gettext_lazy("A card was removed from your wallet"),
          card=card_text(card.Details))
    return still_using


def save_to_wallet(account: Account, sub: Subscription, *, actor: str) -> Card:
    """The card a subscription made before the wallet pays with joins the wallet (the
    default when the wallet is empty), and every live subscription paying with that card
    names it from now on, so the wallet's "make default", "replace" and "remove" reach it.
    Nothing changes for the customer's payments, so no e-mail but the wallet's own."""
    details = sub.PaymentDetails
    token = CardToken(token=details.Token, brand=details.Brand, last4=details.Last4, exp_month=details.ExpMonth,
                      exp_year=details.ExpYear)
    card = add_card(account, token, details.BillingAddress, actor=actor)
    for other in access.get_subscriptions_by_account(account.account_id):
        theirs = other.PaymentDetails
        if other.is_live and theirs is not None and theirs.Token == details.Token and not theirs.CardId:
            access.use_card(other, card, actor=actor, action=AuditAction.CARD_SAVED)
    return card


def use_card(sub: Subscription, card: Card, *, actor: str, today: date,
             action: AuditAction = AuditAction.CARD_REPLACED) -> PaidNow | None:
    """The subscription pays with this wallet card from now on (one e-mail); a past-due
    period is retried with it at once, and that retry's outcome returned."""
    access.use_card(sub, card, actor=actor, action=action)
    tell("card_replaced", sub, format_lazy(gettext_lazy("Card replaced: {product}"), product=sub.ProductName or sub.SKU))
    paid = _retry_past_due([sub], actor=actor, today=today)
    return paid[0] if paid else None


def keep_in_wallet(account_id: str, card: CardToken, billing_address: str | None, *, card_id: str,
                   actor: str, make_default: bool | None = None) -> Card:
    """The wallet entry of a card just typed for one subscription (``actions.replace_card``
    or ``actions.subscribe`` with this ``card_id`` first, which record the change and send
    its e-mail): the default when asked, or else when the wallet was empty. Should this
    write be lost (a crash between the two), the subscription still pays with its own
    copy and the wallet shows it as the card on that subscription."""
    if make_default is None:
        make_default = not access.get_cards(account_id)
    return access.add_card(account_id, card, billing_address, actor=actor, make_default=make_default,
                           card_id=card_id, audit=False)
