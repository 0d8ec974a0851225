"""The customer's billing country and VAT number: checking the number (offline always,
with VIES when ``VAT_VIES_CHECK`` is on) and storing both on the account and its live
subscriptions, as one action. The invoice's VAT follows the billing country; the card's
country is evidence beside it (``access.tax_evidence_mismatch``), never a correction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from django.conf import settings

from billing import access
from billing.models import Account, Subscription
from billing.rules.tax import is_eu
from billing.rules.vat_numbers import VatCheck, compact, vat_number_problem
from core import vies
from core.countries import country_in_address


@dataclass(frozen=True)
class VatVerdict:
    """What the checks made of a VAT number that passed the offline ones: ``check`` how
    far it was checked; ``vies_unreachable``: VIES was asked and did not answer (the
    number stays "format valid", the page says so); ``vies_refused``: VIES answered that
    it is not registered (the form shows a field error)."""

    number: str
    check: VatCheck = VatCheck.FORMAT
    checked_on: date | None = None
    vies_unreachable: bool = False
    vies_refused: bool = False


def verify_vat_number(number: str, account: Account | None = None) -> VatVerdict:
    """Check a VAT number that passed the offline checks (the form's) with VIES, when on.
    The number the account has, confirmed already, keeps its confirmation while the
    check is off (it was true when made; VIES is asked again when it is on)."""
    number = compact(number)
    # VIES knows the member states' numbers only: a UK or Swiss number stays checked offline.
    if not settings.VAT_VIES_CHECK or not is_eu(number[:2]):
        if account is not None and account.VatNumber == number and account.VatNumberCheck == VatCheck.VIES:
            checked = date.fromisoformat(account.VatCheckedAt) if account.VatCheckedAt else None
            return VatVerdict(number, VatCheck.VIES, checked)
        return VatVerdict(number)
    try:
        answer = vies.ask_vies(number)
    except vies.ViesUnreachable:
        return VatVerdict(number, vies_unreachable=True)
    if not answer.valid:
        return VatVerdict(number, vies_refused=True)
    return VatVerdict(number, VatCheck.VIES, answer.checked_on)


def change_tax_identity(account: Account, country: str, verdict: VatVerdict | None, *, actor: str,
                        subscriptions: list[Subscription] | None = None) -> list[Subscription]:
    """Store the billing country and VAT number (``verdict``: None for none) on the
    account and copy them onto each live subscription (read here unless given). Nothing
    is written when nothing changed (but the copies onto ``subscriptions`` when given and
    behind). Returns the subscriptions updated."""
    identity = access.TaxIdentity(
        country=country.upper(), vat_number=verdict.number if verdict else None,
        vat_check=verdict.check if verdict else None, checked_on=verdict.checked_on if verdict else None)
    stored = (account.BillingCountry, account.VatNumber, account.VatNumberCheck, account.VatCheckedAt)
    wanted = (identity.country, identity.vat_number, identity.vat_check.value if identity.vat_check else None,
              identity.checked_on.isoformat() if identity.checked_on else None)
    if stored == wanted:
        return access.copy_tax_identity(account, subscriptions or [])  # a copy a crash left undone
    if subscriptions is None:
        subscriptions = access.get_subscriptions_by_account(account.account_id)
    return access.set_tax_identity(account, identity, subscriptions, actor=actor)


def change_billing_country(account: Account, country: str, *, actor: str) -> list[Subscription]:
    """A new billing country alone (the shop's checkout): the VAT number stays when it is of
    that country, and goes when it is not (it no longer names this customer's business)."""
    verdict = None
    if account.VatNumber and vat_number_problem(account.VatNumber, country) is None:
        checked = date.fromisoformat(account.VatCheckedAt) if account.VatCheckedAt else None
        verdict = VatVerdict(account.VatNumber, VatCheck(account.VatNumberCheck or VatCheck.FORMAT), checked)
    return change_tax_identity(account, country, verdict, actor=actor)


# --- giving existing accounts a billing country (manage.py backfill_billing_country) ------


class Decision(StrEnum):
    ALREADY = "already"  # the account has a country (its own choice or an earlier run's)
    FROM_ADDRESS = "address"  # a card's billing address names the country
    DEFAULTED = "seller"  # nothing names one: the seller's country, for staff to check
    CLOSED = "closed"  # a closed account bills no more: left alone


@dataclass(frozen=True)
class Backfilled:
    account_id: str
    email: str
    decision: Decision
    country: str | None
    source: str | None = None  # the address the country was read from
    written: bool = False  # False in a dry run, or when someone gave it a country meanwhile


def address_country(collection: access.AccountCollection) -> tuple[str | None, str | None]:
    """The country the account's billing addresses name, and the address: the default
    card's first, then the other wallet cards (oldest first), then the subscriptions'
    own cards (made before the wallet)."""
    default = access.default_card(collection.account, collection.cards)
    cards = [c.Details for c in ([default] if default else []) + [c for c in collection.cards if c is not default]]
    cards += [s.PaymentDetails for s in collection.subscriptions if s.PaymentDetails is not None]
    for details in cards:
        country = country_in_address(details.BillingAddress)
        if country:
            return country, details.BillingAddress
    return None, None


def backfill_country(account_id: str, seller_country: str, *, dry_run: bool = False) -> Backfilled | None:
    """Decide an existing account's billing country and store it where it has none (a
    conditional write, so the customer's own choice made meanwhile is kept); its live
    subscriptions get the copy. None: no such account."""
    collection = access.get_account_collection(account_id)  # account, subscriptions and cards: one Query
    account = collection.account
    if account is None:
        return None
    if account.ClosedDate:
        return Backfilled(account_id, account.Email, Decision.CLOSED, account.BillingCountry)
    if account.BillingCountry:
        if not dry_run:  # a subscription a killed run left without its copy
            access.backfill_billing_country(account, account.BillingCountry, collection.subscriptions)
        return Backfilled(account_id, account.Email, Decision.ALREADY, account.BillingCountry)
    country, source = address_country(collection)
    decision = Decision.FROM_ADDRESS if country else Decision.DEFAULTED
    country = country or seller_country
    written = False if dry_run else access.backfill_billing_country(account, country, collection.subscriptions)
    if not dry_run and not written:  # given one meanwhile: that one stands
        return Backfilled(account_id, account.Email, Decision.ALREADY, account.BillingCountry)
    return Backfilled(account_id, account.Email, decision, country, source, written)
