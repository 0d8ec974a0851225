"""Who the customer is: the one module of billing that other apps (the shop) may import.

A shop customer is an rpay account (docs/SHOP.md): its pages take the account from the
session as the portal's do, its e-mails go to the account's address in the account's
language, and its staff changes are audited in the site's one audit log (billing's
table) under a pseudo-account of their own.

In billing's layers it sits with the pages, above the actions: it opens the account of a
customer whose sign-up stopped half-way, makes the processor's customer for a card form and
changes a billing country, as the portal's pages do. No action, batch or operation imports
it (docs/DEVELOPMENT.md, "The rules of the layout").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponseBase
from django.shortcuts import redirect
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods

from billing import access

# The registry of what other apps hold about an account lives below the actions (their close
# erases through it); the shop reaches it here, through its one seam.
from billing.account_data import AccountData as AccountData
from billing.account_data import register_account_data as register_account_data
from billing.actions import accounts, tax_identity, wallet
from billing.models import Account, AuditEvent
from billing.operations.retention import retention_end, retention_years
from billing.rules.invoice_tax import rate_text
from billing.rules.tax import applicable_rate, tax_line
from core.language import remember_language
from core.payments.gateway import CardToken

SESSION_ACCOUNT = "account_id"


def remember_account(request: HttpRequest) -> str | None:
    """Put the user's account id and language in the session: one GetItem (the user
    link, which carries both), only when missing."""
    account_id = request.session.get(SESSION_ACCOUNT)
    if not account_id and request.user.is_authenticated:
        link = access.get_user_link(request.user.pk)
        account_id = link.AccountId if link else None
        if link:
            request.session[SESSION_ACCOUNT] = account_id
            remember_language(request, link.Language)
    return account_id


def customer_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """``login_required`` plus the account id from the session as ``account_id``.

    Staff users without a billing account belong in the admin; a customer whose sign-up
    stopped between creating the user and the account gets the account now.
    """

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        account_id = remember_account(request)
        if not account_id:
            if request.user.is_staff:
                return redirect("admin:index")
            account = accounts.open_account(request.user.email or request.user.get_username(),
                                            user_id=request.user.pk)
            account_id = request.session[SESSION_ACCOUNT] = account.account_id
        return view(request, account_id, *args, **kwargs)

    return wrapper


def card_entry_page(*more_secrets: str) -> Callable[[Callable[..., HttpResponseBase]], Callable[..., HttpResponseBase]]:
    """A customer's page with card fields (subscribe, the wallet, the shop's checkout): GET
    and POST only, the account from ``customer_required``, and the card number, the CVC
    and ``more_secrets`` kept out of Django's error reports and logs (docs/TABLE.md, "No card
    numbers"): the POST fields by name, and every local variable of the view's frames, which
    may hold them under any name (``sensitive_variables``)."""

    def decorate(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        page = customer_required(sensitive_variables()(view))
        return sensitive_post_parameters("card_number", "cvc", *more_secrets)(require_http_methods(["GET", "POST"])(page))

    return decorate


def card_customer(account_id: str, account: Account | None = None) -> Callable[[], str]:
    """For a card form: the paying account's customer at the processor, looked up (and made,
    for a first card) only when the card is entered in the browser; ``account`` if the page
    has read it already."""
    known: list[str] = []

    def customer() -> str:
        if not known:
            found = account or access.get_account(account_id)
            if found is None:
                raise Http404("no account")
            known.append(accounts.payment_customer(found))
        return known[0]

    return customer


@dataclass(frozen=True)
class WalletCard:
    """A wallet card as another app offers it: its id, its label, its token (never a number)."""

    card_id: str
    label: str
    token: CardToken
    is_default: bool


@dataclass(frozen=True)
class PayingAccount:
    """The account paying at a checkout: its wallet and its processor customer (one Query)."""

    cards: list[WalletCard]
    customer: Callable[[], str]
    # The country the checkout's billing country opens on: the account's, else its default
    # card's, else the seller's (the customer sees it and changes it where it is wrong).
    billing_country: str = ""
    stored_billing_country: str | None = None  # the account's own, None until it has one

    @property
    def default(self) -> WalletCard | None:
        return next((c for c in self.cards if c.is_default), None)


def paying_account(account_id: str) -> PayingAccount:
    """The account's wallet cards (the default first) and its processor customer for a new
    card: one Query (the account item and its cards are neighbours)."""
    found = access.get_wallet(account_id)
    default = access.default_card(found.account, found.cards)
    cards = [WalletCard(c.card_id, wallet.card_label(c.Details), CardToken(
        token=c.Details.Token, brand=c.Details.Brand, last4=c.Details.Last4, exp_month=c.Details.ExpMonth,
        exp_year=c.Details.ExpYear, country=c.Details.Country), c is default) for c in found.cards]
    cards.sort(key=lambda c: not c.is_default)
    account = found.account
    country = (account.BillingCountry or account.CardCountry if account else None) \
        or access.default_seller_profile().Country
    return PayingAccount(cards, card_customer(account_id, account), country,
                         account.BillingCountry if account else None)


def remember_billing_country(account_id: str, country: str, *, actor: str) -> None:
    """The billing country given at a checkout becomes the account's (copied onto its live
    subscriptions) when it differs; a VAT number of another country is dropped with it."""
    account = access.get_account(account_id)
    if account is not None and account.BillingCountry != country.upper():
        tax_identity.change_billing_country(account, country, actor=actor)


def contact(account_id: str) -> tuple[str | None, str | None]:
    """The account's e-mail and language (one GetItem); (None, None) for no account."""
    account = access.get_account(account_id)
    return (account.Email, account.Language) if account else (None, None)


def record_staff_event(log: str, *, actor: str, action: str, subject: str, after: dict | None = None,
                       note: str | None = None) -> AuditEvent:
    """An audit event of a change that belongs to no customer, under the pseudo-account
    ``log`` (the shop's: "SHOP")."""
    return access.record_event(log, actor=actor, action=action, subject=subject, after=after, note=note)


def staff_events(log: str, *, limit: int = 20) -> list[AuditEvent]:
    """The newest audit events of pseudo-account ``log``, newest first."""
    return access.get_events_by_account(log, limit=limit)


def ensure_demo_customer(account_id: str, email: str, name: str, user_id: int) -> bool:
    """Demo data: an account with a given id (a seed's customer id), linked to the Django
    user ``user_id``. False when that user already has an account (nothing done)."""
    if access.get_account_id_for_user(user_id):
        return False
    if access.get_account(account_id) is None:
        access.create_account(email, name=name, account_id=account_id, created="2020-06-01T00:00:00+00:00")
    access.link_user(user_id, account_id, email)
    return True


# --- data rights: what another app holds about an account ---------------------------------


def invoice_retained_until(issued: date) -> datetime:
    """When tax law lets an invoice issued on ``issued`` go (the seller country's years,
    ``INVOICE_RETENTION_YEARS``): the shop's invoices are kept as long as billing's receipts."""
    return retention_end(issued, retention_years())


def account_closed(account_id: str) -> bool:
    """Whether the account was closed by its customer or by staff (one GetItem)."""
    account = access.get_account(account_id)
    return account is not None and bool(account.ClosedDate)


@dataclass(frozen=True)
class InvoiceTaxFigures:
    """A shop invoice's seller and VAT, as billing's invoices carry them: the seller's
    snapshot (its name, address, country and VAT number at the sale: a later change of the
    business profile never reaches the invoice) and the VAT included in the total, at the
    rate billing's rules give for the buyer (their billing country and VAT number)."""

    seller_name: str
    seller_address: str
    seller_country: str
    seller_vat_number: str
    net: int
    tax: int
    rate: str  # percent, as billing stores it: "22", "25.5", "0"
    treatment: str  # a billing.rules.tax.Treatment value
    buyer_country: str
    buyer_vat_number: str | None


def invoice_tax_figures(account_id: str, total: int, on: date) -> InvoiceTaxFigures:
    """The seller and the VAT of a shop invoice of ``total`` (minor units, VAT included)
    issued on ``on`` to the account: the business profile (one GetItem, once a request) and
    the account (one GetItem)."""
    seller = access.invoice_seller()
    buyer = access.buyer_of(access.get_account(account_id), seller.tax.country)
    line = tax_line(total, applicable_rate(seller.tax, buyer, on), prices_include_tax=True)
    return InvoiceTaxFigures(
        seller_name=seller.name or "", seller_address=seller.address or "", seller_country=seller.tax.country,
        seller_vat_number=seller.tax.vat_number or "", net=line.net, tax=line.tax,
        rate=rate_text(line.rate.percent), treatment=str(line.rate.treatment), buyer_country=buyer.country,
        buyer_vat_number=buyer.vat_number)


def seller_now() -> InvoiceTaxFigures:
    """Today's seller alone (no VAT figures): for a shop invoice written before invoices
    kept their seller."""
    seller = access.invoice_seller()
    return InvoiceTaxFigures(seller.name or "", seller.address or "", seller.tax.country, seller.tax.vat_number or "",
                             0, 0, "", "", "", None)
