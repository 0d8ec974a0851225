"""The customer's tax identity: the billing country and VAT number on the account, copied
onto each live subscription (the payment run reads only those), and the evidence beside
it (the default card's country). ``buyer_of`` gives the tax rules' ``Buyer`` of either.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from billing.access._common import live, refused_as
from billing.access.events import new_event
from billing.access.seller import get_seller_profile
from billing.access.subscriptions import update_subscription
from billing.exceptions import ConditionFailed
from billing.models import Account, AuditAction, Subscription
from billing.rules.tax import Buyer
from billing.rules.vat_numbers import VatCheck, countries_disagree
from core.dynamo import engine


@dataclass(frozen=True)
class TaxIdentity:
    """What the customer declared, as checked: ``vat_check`` says how far the number was
    checked (``VatCheck``), ``checked_on`` the day VIES confirmed it."""

    country: str
    vat_number: str | None = None
    vat_check: VatCheck | None = None
    checked_on: date | None = None


def tax_identity_snapshot(item: Account | Subscription) -> dict:
    snapshot = {"BillingCountry": item.BillingCountry, "VatNumber": item.VatNumber}
    if isinstance(item, Account):
        snapshot.update(VatNumberCheck=item.VatNumberCheck, VatCheckedAt=item.VatCheckedAt)
    return snapshot


def buyer_of(item: Account | Subscription | None, seller_country: str | None = None) -> Buyer:
    """The buyer of an account or a subscription (its copy of the account's identity). A
    missing country (an account not yet given one, or no item: a visitor's quote) is the
    seller's: ``seller_country``, else read from the seller's profile (one GetItem)."""
    country = getattr(item, "BillingCountry", None) or seller_country or get_seller_profile().Country
    return Buyer(country=country.upper(), vat_number=getattr(item, "VatNumber", None) or None)


def tax_evidence_mismatch(account: Account) -> bool:
    """The declared billing country is not the default card's country (both known)."""
    return countries_disagree(account.BillingCountry, account.CardCountry)


def set_tax_identity(account: Account, identity: TaxIdentity, subscriptions: list[Subscription], *,
                     actor: str) -> list[Subscription]:
    """Store ``identity`` on the account (with its audit event, in one transaction) and
    copy country and VAT number onto each of ``subscriptions`` that is live (one UpdateItem
    each, conditional on it still being live; its version is not checked: the copy
    touches no schedule, so a concurrent portal form or batch write must not be refused
    because of it). Returns the subscriptions updated."""
    before = tax_identity_snapshot(account)
    account.BillingCountry = identity.country.upper()
    account.VatNumber = identity.vat_number or None
    account.VatNumberCheck = identity.vat_check.value if identity.vat_number and identity.vat_check else None
    account.VatCheckedAt = identity.checked_on.isoformat() if identity.vat_number and identity.checked_on else None
    values = [(Account.BillingCountry, account.BillingCountry), (Account.VatNumber, account.VatNumber),
              (Account.VatNumberCheck, account.VatNumberCheck), (Account.VatCheckedAt, account.VatCheckedAt)]
    actions = [attribute.set(value) if value else attribute.remove() for attribute, value in values]
    event = new_event(account.account_id, actor=actor, action=AuditAction.TAX_IDENTITY_CHANGED,
                      subject=account.PK, before=before, after=tax_identity_snapshot(account))
    with refused_as(ConditionFailed, account.PK), engine.transact_write() as tx:
        tx.update(Account(account.PK, account.SK), actions=actions, condition=Account.PK.exists())
        tx.save(event)
    return copy_tax_identity(account, subscriptions)


def copy_tax_identity(account: Account, subscriptions: list[Subscription]) -> list[Subscription]:
    """The account's country and VAT number onto each live subscription that differs."""
    updated = []
    for sub in subscriptions:
        if not sub.is_live or (sub.BillingCountry, sub.VatNumber) == (account.BillingCountry, account.VatNumber):
            continue
        actions = [Subscription.BillingCountry.set(account.BillingCountry) if account.BillingCountry
                   else Subscription.BillingCountry.remove(),
                   Subscription.VatNumber.set(account.VatNumber) if account.VatNumber
                   else Subscription.VatNumber.remove()]
        try:
            update_subscription(sub, actions, live(), check_version=False)
        except ConditionFailed:
            continue  # ended meanwhile: an ended subscription is charged no more
        updated.append(sub)
    return updated


def backfill_billing_country(account: Account, country: str, subscriptions: list[Subscription]) -> bool:
    """Give ``account`` its first billing country, only where it has none (a conditional
    write: a customer's own choice made meanwhile is kept), and its live subscriptions
    the copy, each only where absent. True when the account was given it now; either way
    the subscriptions get the account's stored country (a re-run finishes a killed one)."""
    given = True
    try:
        with refused_as(ConditionFailed, account.PK):
            Account(account.PK, account.SK).update(
                actions=[Account.BillingCountry.set(country.upper())],
                condition=Account.PK.exists() & Account.BillingCountry.does_not_exist())
        account.BillingCountry = country.upper()
    except ConditionFailed:
        given = False
        account.BillingCountry = Account.get(account.PK, account.SK, consistent_read=True).BillingCountry
    for sub in subscriptions:
        if not sub.is_live or sub.BillingCountry:
            continue
        actions = [Subscription.BillingCountry.set(account.BillingCountry)]
        if account.VatNumber and not sub.VatNumber:
            actions.append(Subscription.VatNumber.set(account.VatNumber))
        try:
            update_subscription(sub, actions, live() & Subscription.BillingCountry.does_not_exist(),
                                check_version=False)
        except ConditionFailed:
            continue
    return given


def set_card_country(account: Account, country: str | None) -> None:
    """The evidence: the default card's country (absent: unknown, e.g. a card saved
    before rpay kept it). Not audited: the customer changed their default card, which is."""
    if (account.CardCountry or None) == (country or None):
        return
    action = Account.CardCountry.set(country.upper()) if country else Account.CardCountry.remove()
    Account(account.PK, account.SK).update(actions=[action], condition=Account.PK.exists())
    account.CardCountry = country.upper() if country else None
