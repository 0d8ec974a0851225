"""Staff: discount codes (percentage or amount, limit on uses, validity dates; a code's
limit and dates changed, or the code ended) and gift cards (issue, balance). A gift-card
code is a bearer secret: looked up by POST, never put in a URL."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_POST

from core.pages import actor, bound_data, or_404
from core.staff import MONEY, forbidden
from shop import access
from shop.clock import today
from shop.errors import InvalidInput
from shop.forms import DiscountCodeForm, DiscountCodeTerms, GiftCardBalanceForm, GiftCardIssueForm
from shop.models import DiscountCode
from shop.staff.common import audit, render_shop_staff


class CodeLookupForm(forms.Form):
    code = forms.CharField(label=gettext_lazy("Code"), max_length=64)


@require_http_methods(["GET", "POST"])
def codes(request: HttpRequest) -> HttpResponse:
    find = CodeLookupForm(request.GET or None)
    found, looked = None, False
    if request.GET and find.is_valid():
        looked, found = True, access.get_discount_code(find.cleaned_data["code"])
    form = DiscountCodeForm(bound_data(request))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            code = access.create_discount_code(data["code"], percent_off=data["percent_off"],
                                               amount_off=data["amount_off"], currency=data["currency"] or None,
                                               max_uses=data["max_uses"], valid_from=data["valid_from"],
                                               valid_until=data["valid_until"])
        except InvalidInput as error:
            form.add_error(None, str(error))
        else:
            audit(request, "shop.create_discount_code", code.Code, after={
                "percent_off": data["percent_off"], "amount_off": data["amount_off"], "max_uses": data["max_uses"],
                "valid_from": code.ValidFrom, "valid_until": code.ValidUntil})
            messages.success(request, gettext("Code %(code)s created.") % {"code": code.Code})
            return redirect(reverse("admin:shop_staff_codes") + f"?code={code.Code}")
    return render_shop_staff(request, "codes.html", gettext("Discount codes"), {
        "find": find, "code": found, "looked": looked, "form": form,
        "code_state": _state(found) if found is not None else ""})


def _code_or_404(code: str) -> DiscountCode:
    return or_404(access.get_discount_code(code), "No such code")


def _code_url(code: str) -> str:
    return reverse("admin:shop_staff_codes") + f"?code={code}"


def _terms(code: DiscountCode) -> dict[str, object]:
    """What an edit may change, as the audit event records it."""
    return {"max_uses": code.MaxUses, "valid_from": code.ValidFrom, "valid_until": code.ValidUntil}


@require_http_methods(["GET", "POST"])
def code_edit(request: HttpRequest, code: str) -> HttpResponse:
    """A code's limit on uses and validity days (GetItem; a save adds its UpdateItem and the
    audit event, which keeps the terms before and after)."""
    found = _code_or_404(code)
    if found.Active != "yes":
        messages.error(request, gettext("Code %(code)s has ended: it can no longer be changed.") % {"code": found.Code})
        return redirect(_code_url(found.Code))
    initial = {"max_uses": found.MaxUses, "valid_from": found.ValidFrom, "valid_until": found.ValidUntil}
    form = DiscountCodeTerms(bound_data(request), initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            changed = access.update_discount_code(found.Code, max_uses=data["max_uses"], valid_from=data["valid_from"],
                                                  valid_until=data["valid_until"])
        except InvalidInput as error:
            form.add_error(None, str(error))
        else:
            after = _terms(changed)
            before = _terms(found)
            audit(request, "shop.change_discount_code", found.Code, after=after,
                  note="before: " + ", ".join(f"{k}={v}" for k, v in before.items()))
            messages.success(request, gettext("Code %(code)s changed.") % {"code": found.Code})
            return redirect(_code_url(found.Code))
    return render_shop_staff(request, "code_edit.html", gettext("Discount code %(code)s") % {"code": found.Code}, {
        "code": found, "code_state": _state(found), "form": form})


@require_POST
def code_end(request: HttpRequest, code: str) -> HttpResponse:
    """End a code now (checkout refuses it from then on); audited."""
    found = _code_or_404(code)
    if found.Active != "yes":
        messages.info(request, gettext("Code %(code)s had already ended.") % {"code": found.Code})
        return redirect(_code_url(found.Code))
    try:
        access.end_discount_code(found.Code)
    except InvalidInput as error:  # gone meanwhile
        raise Http404("No such code") from error
    audit(request, "shop.end_discount_code", found.Code, after={"active": "no"}, note=f"used {found.Uses} times")
    messages.success(request, gettext("Code %(code)s ended: checkout no longer takes it.") % {"code": found.Code})
    return redirect(_code_url(found.Code))


def _state(code: DiscountCode) -> str:
    """A code's state today, in words for the staff."""
    day = today()
    if code.Active != "yes":
        return gettext("ended")
    if code.ValidFrom and day < code.ValidFrom:
        return gettext("not valid yet")
    if code.ValidUntil and day > code.ValidUntil:
        return gettext("expired")
    if code.MaxUses is not None and code.Uses >= code.MaxUses:
        return gettext("used up")
    return gettext("active")


@sensitive_post_parameters("code")
@require_http_methods(["GET", "POST"])
def gift_cards(request: HttpRequest) -> HttpResponse:
    """Issue (money permission) and look up a balance with the card's ledger (POST with
    ``lookup``: one Query)."""
    looking = request.method == "POST" and "lookup" in request.GET
    find = GiftCardBalanceForm(request.POST if looking else None)
    ledger, looked = None, False
    if looking and find.is_valid():
        looked, ledger = True, access.get_gift_card_with_ledger(find.cleaned_data["code"])
    form = GiftCardIssueForm(request.POST if request.method == "POST" and not looking else None)
    if request.method == "POST" and not looking:
        if not request.user.has_perm(MONEY):  # issuing a card is money; looking one up is not
            return forbidden(request, MONEY)
        if form.is_valid():
            data = form.cleaned_data
            try:
                issued = access.issue_gift_card(data["code"], data["balance"], data["currency"],
                                                actor=actor(request))
            except InvalidInput as error:
                form.add_error("code", str(error))
            else:
                audit(request, "shop.issue_gift_card", f"ending {issued.Last4}",
                      after={"balance": data["balance"], "currency": data["currency"]})
                messages.success(request, gettext("Gift card ending %(last4)s issued.") % {"last4": issued.Last4})
                return redirect("admin:shop_staff_gift_cards")
    return render_shop_staff(request, "gift_cards.html", gettext("Gift cards"), {
        "find": find, "card": ledger.card if ledger else None, "ledger": ledger, "looked": looked, "form": form,
        "rows": ledger.rows() if ledger else [],
        "lookup_url": reverse("admin:shop_staff_gift_cards") + "?lookup=1"})
