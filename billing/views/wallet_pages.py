"""The wallet: the account's cards, which subscriptions pay with each, and the
four changes (add, make default, replace, remove), each made by ``billing.actions.wallet``
(audit event and e-mail included). The list is the account's one Query.

Subscriptions made before the wallet have no ``CardId``: they are listed as "the card
on this subscription", not copied into the wallet by a page view (no write on a GET);
choosing a wallet card for them, or typing a new one, moves them into it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST, require_safe

from billing import access
from billing.actions import wallet
from billing.customers import card_customer, card_entry_page, customer_required
from billing.forms import ChooseCardForm, WalletCardForm
from billing.models import Account, Card, PaymentDetails, Subscription
from billing.operations.outcomes import PaymentStatus
from billing.views.common import STALE_MESSAGE, changed_since, live_subscription, subscription_or_404
from core.cardforms import tokenize_card_form
from core.money import format_with_symbol
from core.pages import actor, bound_data, today


@dataclass
class WalletRow:
    """One card as the wallet shows it. ``card`` is None for the card of a subscription
    made before the wallet (``details`` is then that subscription's copy)."""

    details: PaymentDetails
    card: Card | None = None
    is_default: bool = False
    subscriptions: list[Subscription] = field(default_factory=list)


def wallet_rows(account: Account | None, cards: list[Card], subscriptions: list[Subscription]) -> list[WalletRow]:
    default = access.default_card(account, cards)
    rows = {c.card_id: WalletRow(c.Details, c, c is default) for c in cards}
    own: dict[str, WalletRow] = {}  # cards kept on subscriptions only, by token
    for sub in subscriptions:
        if not sub.is_live or sub.PaymentDetails is None:
            continue
        row = rows.get(sub.PaymentDetails.CardId or "")
        if row is None:
            row = own.setdefault(sub.PaymentDetails.Token, WalletRow(sub.PaymentDetails))
        row.subscriptions.append(sub)
    return [*rows.values(), *own.values()]


def _account_or_404(account_id: str) -> Account:
    account = access.get_account(account_id)
    if account is None:
        raise Http404("no account")
    return account


def wallet_context(account_id: str) -> dict[str, object]:
    collection = access.get_account_collection(account_id)  # the page's one Query
    return {"rows": wallet_rows(collection.account, collection.cards, collection.subscriptions)}


@require_safe
@customer_required
def wallet_page(request: HttpRequest, account_id: str) -> HttpResponse:
    return render(request, "portal/wallet.html", wallet_context(account_id))


def _wallet_changed(request: HttpRequest, account_id: str) -> HttpResponse:
    """A wallet button from a page drawn before another tab changed the wallet (the card
    removed, say): the wallet as it is now, with the message; never a 404."""
    return changed_since(request, "portal/wallet.html", wallet_context(account_id))


@card_entry_page()
def wallet_add(request: HttpRequest, account_id: str) -> HttpResponse:
    form = WalletCardForm(bound_data(request), today=today(), customer=card_customer(account_id))
    if request.method == "POST" and form.is_valid() and (token := tokenize_card_form(form)):
        account = _account_or_404(account_id)
        added = wallet.add_card(account, token, form.billing_address_text(), actor=actor(request),
                                make_default=form.cleaned_data.get("make_default", False))
        messages.success(request, _("%(card)s is in your wallet.") % {"card": wallet.card_label(added.Details)})
        return redirect("wallet")
    return render(request, "portal/wallet_card.html", {"form": form, "card": None})


@card_entry_page()
def wallet_replace(request: HttpRequest, account_id: str, card_id: str) -> HttpResponse:
    card = access.get_card(account_id, card_id)
    if card is None:  # removed in another tab since the wallet was shown
        return _wallet_changed(request, account_id)
    # The stored billing address fills the form, so it is kept unless changed.
    form = WalletCardForm(bound_data(request), today=today(), offer_default=False, customer=card_customer(account_id),
                          initial={"billing_address": card.Details.BillingAddress or ""})
    if request.method == "POST" and form.is_valid() and (token := tokenize_card_form(form)):
        account = _account_or_404(account_id)
        try:
            done = wallet.replace_card(account, card, token, form.billing_address_text(), actor=actor(request),
                                       today=today())
        except access.ConditionFailed:
            return _wallet_changed(request, account_id)
        label = wallet.card_label(done.card.Details)
        names = ", ".join(s.ProductName or s.SKU for s in done.moved)
        messages.success(request, _("%(card)s replaces the old card.") % {"card": label}
                         + (" " + _("It now pays for: %(names)s.") % {"names": names} if names else ""))
        _report_paid_now(request, done.paid_now)
        return redirect("wallet")
    return render(request, "portal/wallet_card.html", {"form": form, "card": card})


def _report_paid_now(request: HttpRequest, paid_now: list[wallet.PaidNow]) -> None:
    for paid in paid_now:
        name = paid.sub.ProductName or paid.sub.SKU
        if paid.outcome is None:
            messages.warning(request, _("Our payment provider could not be reached to pay the overdue amount of "
                                        "%(name)s now; we will try again on the next retry date.") % {"name": name})
        elif paid.outcome.status == PaymentStatus.PAID:
            messages.success(request, _("The overdue payment of %(amount)s for %(name)s went through.") % {
                "amount": format_with_symbol(paid.outcome.amount or 0, paid.sub.Currency), "name": name})
        else:
            messages.warning(request, _("The overdue payment for %(name)s was declined (%(reason)s).") % {
                "name": name, "reason": paid.outcome.reason})


def _on_card(request: HttpRequest, account_id: str, card_id: str,
             change: Callable[[Account, Card], str | None]) -> HttpResponse:
    """A wallet button on one card (make it the default, remove it): ``change`` of the card
    and its account returns what the customer is told, or None having said why it could
    not; then the wallet. A card gone or changed since the wallet was shown: the wallet as
    it is now, with the message (``_wallet_changed``)."""
    card = access.get_card(account_id, card_id)
    if card is None:  # removed in another tab since the wallet was shown
        return _wallet_changed(request, account_id)
    account = _account_or_404(account_id)
    try:
        done = change(account, card)
    except access.ConditionFailed:
        return _wallet_changed(request, account_id)
    if done is not None:
        messages.success(request, done)
    return redirect("wallet")


@require_POST
@customer_required
def wallet_default(request: HttpRequest, account_id: str, card_id: str) -> HttpResponse:
    def make_default(account: Account, card: Card) -> str:
        wallet.set_default_card(account, card, actor=actor(request))
        return _("%(card)s is now your default card.") % {"card": wallet.card_label(card.Details)}

    return _on_card(request, account_id, card_id, make_default)


@require_POST
@customer_required
def wallet_remove(request: HttpRequest, account_id: str, card_id: str) -> HttpResponse:
    def remove(account: Account, card: Card) -> str | None:
        label = wallet.card_label(card.Details)
        try:
            wallet.remove_card(account, card, actor=actor(request))
        except access.CardInUse as in_use:
            names = ", ".join(s.ProductName or s.SKU for s in in_use.subscriptions)
            messages.error(request, _("%(card)s cannot be removed: %(names)s pays with it. Choose another card for "
                                      "it first (Manage, then Replace the card), or replace this card.")
                           % {"card": label, "names": names})
            return None
        return _("%(card)s was removed from your wallet.") % {"card": label}

    return _on_card(request, account_id, card_id, remove)


@require_POST
@customer_required
def wallet_save(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    """The card a subscription made before the wallet pays with, saved to the wallet."""
    sub = subscription_or_404(account_id, sub_id)
    if not sub.is_live or sub.PaymentDetails is None or sub.PaymentDetails.CardId:
        messages.info(request, _("That card is in your wallet already."))
        return redirect("wallet")
    card = wallet.save_to_wallet(_account_or_404(account_id), sub, actor=actor(request))
    messages.success(request, _("%(card)s is in your wallet.") % {"card": wallet.card_label(card.Details)})
    return redirect("wallet")


def card_choice(account_id: str, sub: Subscription) -> dict[str, object]:
    """The subscription card page's choice of wallet card (one Query): every card but
    the one it pays with. Read only when the page is shown."""
    current = sub.PaymentDetails.CardId if sub.PaymentDetails else None
    choices = [(c.card_id, wallet.card_label(c.Details)) for c in access.get_cards(account_id) if c.card_id != current]
    form = ChooseCardForm(initial={"version": sub.Version}, cards=choices) if choices else None
    return {"choose_form": form}


@require_POST
@customer_required
@live_subscription(gettext_lazy("This subscription is cancelled: there is no card to change."))
def choose_card(request: HttpRequest, account_id: str, sub: Subscription) -> HttpResponse:
    """A subscription pays with another wallet card from now on (a past-due period is
    paid with it at once)."""
    cards = {c.card_id: c for c in access.get_cards(account_id)}
    form = ChooseCardForm(request.POST, cards=[(i, wallet.card_label(c.Details)) for i, c in cards.items()])
    if not form.is_valid():
        messages.error(request, _("Choose one of the cards in your wallet."))
        return redirect("replace_card", sub_id=sub.sub_id)
    card = cards[form.cleaned_data["card"]]
    version = form.cleaned_data.get("version")
    try:
        if version is not None and version != sub.Version:
            raise access.ConditionFailed(sub.SK)  # the form was read before another change
        paid = wallet.use_card(sub, card, actor=actor(request), today=today())
    except access.ConditionFailed:
        messages.warning(request, STALE_MESSAGE)
        return redirect("replace_card", sub_id=sub.sub_id)
    messages.success(request, _("Future payments will use your %(card)s.") % {"card": wallet.card_label(card.Details)})
    if paid is not None:
        _report_paid_now(request, [paid])
    return redirect("subscription", sub_id=sub.sub_id)
