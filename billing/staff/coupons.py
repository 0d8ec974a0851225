"""The coupons' staff pages: list (one Query), add, change the limit and dates of, end;
and give a coupon to a live subscription (the changes and their audit events:
billing/actions/coupons.py)."""

from __future__ import annotations

import hashlib
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import coupons as actions
from billing.forms import coupon_error
from billing.models import CouponStatus
from billing.staff.common import (
    CHANGED_MEANWHILE,
    add_page,
    back_to_account,
    change_page,
    changed_since,
    end_page,
)
from billing.staff.forms import ApplyCouponForm, CouponForm
from billing.templatetags.staff_pages import staff_date
from billing.views.common import subscription_or_404
from core.discountforms import DiscountCodeTerms
from core.pages import actor, bound_data, or_404, today
from core.staff import CATALOG, render_staff


def coupons(request: HttpRequest) -> HttpResponse:
    return render_staff(request, "staff/coupons.html", _("Coupons"), {
        "coupons": access.list_coupons(), "ended": CouponStatus.ENDED,
        "may_change": request.user.has_perm(CATALOG),
    })


@require_http_methods(["GET", "POST"])
def coupon_add(request: HttpRequest) -> HttpResponse:
    def add(data: dict[str, Any]) -> HttpResponse:
        coupon = actions.add_coupon(
            data["code"], percent_off=data.get("percent_off"), amount_off=data.get("amount_off"),
            currency=data.get("currency") or None, duration=data["duration"],
            duration_payments=data.get("duration_payments"), max_uses=data.get("max_uses"),
            valid_from=data.get("valid_from"), valid_until=data.get("valid_until"), actor=actor(request))
        messages.success(request, _("Coupon %(code)s added.") % {"code": coupon.Code})
        return redirect("admin:staff_coupons")

    return add_page(request, CouponForm(bound_data(request)), _("Add a coupon"), "admin:staff_coupons", add,
                    taken=("code", _("A coupon with this code already exists.")))


@require_http_methods(["GET", "POST"])
def coupon_edit(request: HttpRequest, code: str) -> HttpResponse:
    coupon = or_404(access.get_coupon(code), "No such coupon")
    initial = {"max_uses": coupon.MaxUses, "valid_from": coupon.ValidFrom, "valid_until": coupon.ValidUntil}
    form = DiscountCodeTerms(bound_data(request), initial=initial)
    version = terms_version(coupon)
    if request.method == "POST" and request.POST.get("version", version) != version:
        # Edited (or ended) in another tab since this form was drawn: nothing saved; the
        # form again, what was typed kept, drawn from the coupon as it is now.
        return changed_since(request, lambda: render_staff(
            request, "staff/object_form.html", _("Edit %(code)s") % {"code": coupon.Code},
            {"back": "admin:staff_coupons", "form": form, "coupon": coupon, "version": version,
             "now": _coupon_terms(coupon)}))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if data.get("max_uses") is not None and data["max_uses"] < coupon.Uses:
            form.add_error("max_uses", _("%(code)s has been used %(uses)s times: the limit cannot be lower.") % {
                "code": coupon.Code, "uses": coupon.Uses})
        else:
            try:
                actions.edit_coupon(coupon, max_uses=data.get("max_uses"), valid_from=data.get("valid_from"),
                                    valid_until=data.get("valid_until"), actor=actor(request))
            except access.ConditionFailed:
                messages.error(request, CHANGED_MEANWHILE)
                return redirect("admin:staff_coupon_edit", code=coupon.Code)
            messages.success(request, _("Coupon %(code)s saved.") % {"code": coupon.Code})
            return redirect("admin:staff_coupons")
    return render_staff(request, "staff/object_form.html", _("Edit %(code)s") % {"code": coupon.Code},
                        {"back": "admin:staff_coupons", "form": form, "coupon": coupon, "version": version})


def terms_version(coupon) -> str:
    """The version of what the edit form is drawn from: the terms it edits and the status
    (a timestamp to the second could not tell two edits in one second apart)."""
    terms = f"{coupon.MaxUses}|{coupon.ValidFrom}|{coupon.ValidUntil}|{coupon.Status}"
    return hashlib.sha256(terms.encode()).hexdigest()[:16]


def _coupon_terms(coupon) -> str:
    """The coupon's terms as they are now, in one line (the answer to a stale edit)."""
    return _("Now: %(status)s, used %(uses)s times, limit %(limit)s, valid %(start)s – %(end)s.") % {
        "status": coupon.Status, "uses": coupon.Uses, "limit": coupon.MaxUses or _("no limit"),
        "start": coupon.ValidFrom or "…", "end": coupon.ValidUntil or _("no end")}


@require_http_methods(["GET", "POST"])
def coupon_end(request: HttpRequest, code: str) -> HttpResponse:
    coupon = or_404(access.get_coupon(code), "No such coupon")

    def end() -> bool:
        try:
            actions.end_coupon(coupon, actor=actor(request))
        except access.ConditionFailed:  # ended meanwhile, in another tab
            return False
        return True

    return end_page(
        request, ended=coupon.Status == CouponStatus.ENDED, back="admin:staff_coupons",
        title=_("End %(code)s") % {"code": coupon.Code},
        question=_("End the coupon %(code)s? Nobody can use it from now on; the subscriptions that have it keep "
                   "their discount.") % {"code": coupon.Code},
        button=_("End coupon"), end=end, done=_("%(code)s ended.") % {"code": coupon.Code},
        already=_("%(code)s has already ended.") % {"code": coupon.Code})


@require_http_methods(["GET", "POST"])
def staff_coupon(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    """Give a coupon to a live subscription, from its next payment (replacing any it has)."""
    sub = subscription_or_404(account_id, sub_id)
    if not sub.is_live or not sub.NextPaymentDate:
        return back_to_account(request, account_id,
                               _("Only a live subscription with a next payment can be given a coupon."))
    form = ApplyCouponForm(bound_data(request))

    def give() -> str | None:
        code = form.cleaned_data["code"]
        try:
            coupon = access.check_coupon(access.get_coupon(code), code, currency=sub.Currency, day=today())
            actions.give_coupon(sub, coupon, today=today(), actor=actor(request))
        except access.CouponRefused as refused:
            form.add_error("code", coupon_error(refused.code, refused.reason))
            return None
        except access.PaymentInProgress:
            form.add_error("code", _("A payment is due today: give the coupon after the payment run."))
            return None
        return _("Coupon %(code)s given; it applies from the payment on %(date)s.") % {
            "code": coupon.Code, "date": staff_date(sub.NextPaymentDate)}

    question = _("Give a coupon to this subscription? It applies from its next payment, on %(date)s%(current)s.") % {
        "date": staff_date(sub.NextPaymentDate),
        "current": _(", and replaces its coupon %(code)s") % {"code": sub.CouponCode} if sub.CouponCode else ""}
    # Given a coupon, switched or paused elsewhere meanwhile: nothing given; the page again
    # with the code typed kept (the form as posted), drawn from the subscription as it is now.
    return change_page(request, account_id, sub, title=_("Give a coupon"), question=question,
                       button=_("Give coupon"), form=form, change=give)
