"""The customer's billing country and VAT number: checking the number (offline always,
with VIES when ``VAT_VIES_CHECK`` is on) and storing both on the account and its live
subscriptions, as one action. The invoice's VAT follows the billing country; the card's
country is evidence beside it (``access.tax_evidence_mismatch``), never a correction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.conf import settings

from billing import access
from billing.models import Account, Subscription
from billing.rules.vat_numbers import VatCheck, compact
from core import vies


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
    if not settings.VAT_VIES_CHECK:
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
