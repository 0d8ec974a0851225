"""Staff pages, mounted inside the Django admin site (DESIGN.md §5).

``staff_urls(site)`` returns URL patterns that ``billing.admin`` prepends to the admin
site's own; each view is wrapped in ``site.admin_view`` so only active staff reach it
(everyone else is sent to the admin log-in). Refunds and retry-now also need the
``billing.manage_money`` permission. Every change goes through ``billing.access`` and
leaves an audit event with before/after snapshots.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.admin import AdminSite
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_http_methods

from . import access, batches
from .gateway import GatewayError, get_gateway
from .models import ProductStatus, Receipt, ReceiptStatus, Subscription, SubscriptionStatus
from .money import exponent, format_money, to_decimal
from .schedule import billing_today, months_before
from .staff_forms import LookupForm, PaymentDayForm, ProductForm, RefundForm

MONEY_PERMISSION = "billing.manage_money"
UPCOMING_DAYS = 30


def _today() -> date:
    return billing_today(settings.BILLING_TIMEZONE)


def _actor(request: HttpRequest) -> str:
    return request.user.email or request.user.get_username()


def _require_money(request: HttpRequest) -> None:
    if not request.user.has_perm(MONEY_PERMISSION):
        raise PermissionDenied("Refunds and payment retries need the 'Can refund and retry payments' permission.")


def _render(request: HttpRequest, template: str, title: str, context: dict[str, Any] | None = None,
            status: int = 200) -> HttpResponse:
    # The admin's own context (site header, user links, sidebar) so the pages look native.
    from django.contrib import admin

    ctx = {**admin.site.each_context(request), "title": title, "can_manage_money":
           request.user.has_perm(MONEY_PERMISSION), **(context or {})}
    return render(request, template, ctx, status=status)


def _account_url(account_id: str) -> str:
    return reverse("admin:staff_account", args=[account_id])


def _subscription_or_404(account_id: str, sub_id: str) -> Subscription:
    sub = access.get_subscription(account_id, sub_id)
    if sub is None:
        raise Http404("No such subscription")
    return sub


# --- look-up -----------------------------------------------------------------------------


def index(request: HttpRequest) -> HttpResponse:
    """The look-up form; with a query, go straight to the account it names."""
    form = LookupForm(request.GET or None)
    matches: list[dict] = []
    if form.is_valid():
        data = form.cleaned_data
        if data["account_id"]:
            if access.get_account(data["account_id"]) is None:
                form.add_error("account_id", "No account with that id.")
            elif data["sub_id"]:
                if access.get_subscription(data["account_id"], data["sub_id"]) is None:
                    form.add_error("sub_id", "That account has no subscription with that id.")
                else:
                    return redirect(_account_url(data["account_id"]) + f"#sub-{data['sub_id']}")
            else:
                return redirect(_account_url(data["account_id"]))
        else:
            # E-mails live in Django's users; the billing account is one GetItem per user.
            email = data["email"]
            users = get_user_model().objects.filter(Q(email__iexact=email) | Q(username__iexact=email))
            for user in users[:10]:
                account_id = access.get_account_id_for_user(user.pk)
                if account_id:
                    matches.append({"user": user, "account_id": account_id})
            if len(matches) == 1:
                return redirect(_account_url(matches[0]["account_id"]))
            if not matches:
                form.add_error("email", "No customer with a billing account has that e-mail.")
    return _render(request, "staff/index.html", "Billing", {"form": form, "matches": matches})


def user_billing(request: HttpRequest, user_id: int) -> HttpResponse:
    """From the user admin: that user's billing page."""
    account_id = access.get_account_id_for_user(user_id)
    if account_id is None:
        user = get_user_model().objects.filter(pk=user_id).first()
        return _render(request, "staff/no_account.html", "No billing account", {"user_obj": user}, status=404)
    return redirect(_account_url(account_id))


# --- the billing page --------------------------------------------------------------------


def _failures_for(account_id: str, sub_ids: set[str], runs: list) -> list[dict]:
    """Failures recorded by recent payment runs that name this account or its subscriptions.

    The batch decides the shape of ``Failures``; anything that mentions one of the ids
    is shown as it was recorded.
    """
    needles = {account_id, *sub_ids}
    found = []
    for run in runs:
        failures = run.Failures or []
        if isinstance(failures, dict):
            failures = [{"key": k, "reason": v} for k, v in failures.items()]
        for failure in failures:
            text = json.dumps(failure, default=str)
            if any(n and n in text for n in needles):
                found.append({"run": run, "failure": failure, "text": text})
    return found


def event_changes(before: dict | None, after: dict | None) -> list[tuple[str, Any, Any]]:
    """The fields an event changed, as (field, before, after); every field when only one
    side was recorded. Unchanged fields stay in the stored event but off the page."""
    before, after = before or {}, after or {}
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [("", before, after)]
    names = list(dict.fromkeys([*before, *after]))
    if before and after:
        names = [n for n in names if before.get(n) != after.get(n)]
    return [(n, before.get(n), after.get(n)) for n in names]


def account_detail(request: HttpRequest, account_id: str) -> HttpResponse:
    account = access.get_account(account_id) if "#" not in account_id else None
    if account is None:
        raise Http404("No such account")
    today = _today()
    subscriptions = access.get_subscriptions_by_account(account_id)
    receipts = access.get_receipts_by_account(account_id, months_before(today, 6), today)
    events = access.get_events_by_account(account_id)
    past_due = [s for s in subscriptions if s.Status == SubscriptionStatus.PAST_DUE]
    runs = access.list_batch_runs("payments", limit=30)
    failures = _failures_for(account_id, {s.sub_id for s in subscriptions}, runs)
    return _render(request, "staff/account.html", f"Billing: {account.Email}", {
        "account": account,
        "account_id": account_id,
        "subscriptions": subscriptions,
        "receipts": receipts,
        "events": [{"event": e, "changes": event_changes(e.Before, e.After)} for e in events],
        "past_due": past_due,
        "failures": failures,
        "receipts_from": months_before(today, 6),
        "live_statuses": SubscriptionStatus.LIVE,
        "paid": ReceiptStatus.PAID,
    })


# --- subscription actions ----------------------------------------------------------------


def _confirm(request: HttpRequest, account_id: str, title: str, question: str, *,
             sub: Subscription | None = None, receipt: Receipt | None = None, form=None,
             button: str = "Confirm", danger: bool = False) -> HttpResponse:
    return _render(request, "staff/confirm.html", title, {
        "account_id": account_id, "question": question, "sub": sub, "receipt": receipt,
        "form": form, "button": button, "danger": danger, "back": _account_url(account_id),
    })


@require_http_methods(["GET", "POST"])
def cancel(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = _subscription_or_404(account_id, sub_id)
    if not sub.is_live:
        messages.error(request, "This subscription is already cancelled.")
        return redirect(_account_url(account_id))
    if request.method == "GET":
        return _confirm(request, account_id, "Cancel subscription",
                        "Cancel this subscription? No further payments or reminders will be made.",
                        sub=sub, button="Cancel subscription", danger=True)
    before = access.subscription_snapshot(sub)
    try:
        access.cancel_subscription(sub, reason="staff")
    except access.ConditionFailed:
        messages.error(request, "The subscription changed meanwhile; nothing was done. Look again.")
        return redirect(_account_url(account_id))
    access.record_event(account_id, actor=_actor(request), action="staff.cancel_subscription",
                        subject=sub.SK, before=before, after=access.subscription_snapshot(sub))
    messages.success(request, f"Subscription {sub.ProductName or sub.SKU} cancelled.")
    return redirect(_account_url(account_id))


@require_http_methods(["GET", "POST"])
def payment_day(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = _subscription_or_404(account_id, sub_id)
    if not sub.is_live:
        messages.error(request, "A cancelled subscription has no payment day to change.")
        return redirect(_account_url(account_id))
    form = PaymentDayForm(request.POST or None, initial={"payment_day": sub.PaymentDay})
    if request.method == "POST" and form.is_valid():
        before = access.subscription_snapshot(sub)
        try:
            access.change_payment_day(sub, form.cleaned_data["payment_day"], today=_today(),
                                      reminder_days_before=settings.REMINDER_DAYS_BEFORE)
        except access.PaymentInProgress:
            messages.error(request, "A payment is due today or still pending on this subscription; "
                                    "change the day once it has been taken.")
            return redirect(_account_url(account_id))
        except access.ConditionFailed:
            messages.error(request, "The subscription changed meanwhile; nothing was done. Look again.")
            return redirect(_account_url(account_id))
        access.record_event(account_id, actor=_actor(request), action="staff.change_payment_day",
                            subject=sub.SK, before=before, after=access.subscription_snapshot(sub))
        messages.success(request, f"Payment day changed to {sub.PaymentDay}; next payment {sub.NextPaymentDate}.")
        return redirect(_account_url(account_id))
    return _confirm(request, account_id, "Change the payment day",
                    "Move this subscription to a new day of the month? No month is charged twice; "
                    "the next payment moves to the new day.", sub=sub, form=form, button="Change payment day")


@require_http_methods(["GET", "POST"])
def retry_payment(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    _require_money(request)
    sub = _subscription_or_404(account_id, sub_id)
    if sub.Status != SubscriptionStatus.PAST_DUE:
        messages.error(request, "Only a past-due subscription can be retried now.")
        return redirect(_account_url(account_id))
    if request.method == "GET":
        return _confirm(request, account_id, "Retry the payment now",
                        f"Charge {format_money(sub.PaymentAmount, sub.Currency)} for the period "
                        f"{sub.BillingPeriod or sub.NextPaymentDate} now, instead of waiting for the next retry?",
                        sub=sub, button="Retry payment now", danger=True)
    before = access.subscription_snapshot(sub)
    try:
        # The same code path as the nightly run, so the same exactly-once guarantees hold:
        # a distinct idempotency key per retry attempt, receipt only if absent, advance
        # only if the subscription is still due.
        result = batches.take_payment(sub, run_date=_today())
    except GatewayError as error:
        access.record_event(account_id, actor=_actor(request), action="staff.retry_payment_failed",
                            subject=sub.SK, before=before, after=before, note=str(error)[:500])
        messages.error(request, "The payment provider could not be reached; nothing changed. Try again shortly.")
        return redirect(_account_url(account_id))
    after_sub = access.get_subscription(account_id, sub_id, sku=sub.SKU) or sub
    access.record_event(account_id, actor=_actor(request), action="staff.retry_payment", subject=sub.SK,
                        before=before, after=access.subscription_snapshot(after_sub),
                        note=f"{result.status}: {result.reason}"[:500] if result.reason else result.status)
    outcome = {
        "paid": (messages.SUCCESS, "The payment went through"),
        "declined": (messages.WARNING, "The card was declined again; the next retry is scheduled"),
        "cancelled": (messages.WARNING, "The card was declined on the last retry; the subscription is cancelled"),
    }.get(result.status, (messages.INFO, f"Nothing was charged ({result.reason or result.status})"))
    messages.add_message(request, outcome[0], f"{outcome[1]}. Status is now {after_sub.Status}.")
    return redirect(_account_url(account_id))


@require_http_methods(["GET", "POST"])
def refund(request: HttpRequest, account_id: str, receipt_sk: str) -> HttpResponse:
    _require_money(request)
    receipt = access.get_receipt(account_id, receipt_sk)
    if receipt is None:
        raise Http404("No such receipt")
    # One refund per receipt: the idempotency key is the receipt's key, so a second
    # call would only return the first refund's result.
    if receipt.Status != ReceiptStatus.PAID or not receipt.ChargeId:
        messages.error(request, "This receipt has already been refunded (or has no charge to refund).")
        return redirect(_account_url(account_id))
    refundable = receipt.ProcessedAmount - (receipt.RefundedAmount or 0)
    form = RefundForm(request.POST or None, currency=receipt.Currency, refundable=refundable,
                      initial={"amount": to_decimal(refundable, receipt.Currency)})
    if request.method == "POST" and form.is_valid():
        amount = form.cleaned_data["amount"]
        before = access.receipt_snapshot(receipt)
        result = get_gateway().refund(
            receipt.ChargeId, amount, idempotency_key=f"refund:{receipt.SK}",
            reason=form.cleaned_data["reason"] or "staff refund")
        if result.status != "succeeded":
            access.record_event(account_id, actor=_actor(request), action="staff.refund_failed",
                                subject=receipt.SK, before=before, after=before,
                                note=result.reason or result.status)
            messages.error(request, f"The gateway refused the refund: {result.reason or result.status}.")
            return redirect(_account_url(account_id))
        try:
            access.record_refund(receipt, refund_id=result.refund_id, amount=result.amount)
        except (access.ConditionFailed, ValueError):
            # The money went back but our record moved meanwhile: keep the trail honest.
            access.record_event(account_id, actor=_actor(request), action="staff.refund_unrecorded",
                                subject=receipt.SK, before=before, note=result.refund_id)
            messages.error(request, f"Refunded ({result.refund_id}) but the receipt changed meanwhile; check it.")
            return redirect(_account_url(account_id))
        access.record_event(account_id, actor=_actor(request), action="staff.refund", subject=receipt.SK,
                            before=before, after=access.receipt_snapshot(receipt),
                            note=form.cleaned_data["reason"] or None)
        messages.success(request, f"Refunded {format_money(result.amount, receipt.Currency)} ({result.refund_id}).")
        return redirect(_account_url(account_id))
    return _confirm(request, account_id, "Refund a payment",
                    f"Refund up to {format_money(refundable, receipt.Currency)} of the payment of "
                    f"{receipt.BillingDate} to the customer's card?", receipt=receipt, form=form,
                    button="Refund", danger=True)


# --- upcoming, batch runs ----------------------------------------------------------------


def upcoming(request: HttpRequest) -> HttpResponse:
    today = _today()
    days = access.get_upcoming(today, UPCOMING_DAYS)
    currencies = sorted({c for d in days for c in d.totals})
    totals = {c: sum(d.totals.get(c, 0) for d in days) for c in currencies}
    rows = [{
        "day": d.day, "payments": d.payments, "reminders": d.reminders,
        "totals": [format_money(d.totals[c], c) if c in d.totals else "" for c in currencies],
    } for d in days]
    chart = {
        "labels": [d.day.isoformat() for d in days],
        "payments": [d.payments for d in days],
        "reminders": [d.reminders for d in days],
        # Minor units plus the exponent: the page scales them for display only.
        "amounts": {c: {"exponent": exponent(c), "values": [d.totals.get(c, 0) for d in days]}
                    for c in currencies},
    }
    return _render(request, "staff/upcoming.html", f"Upcoming: the next {UPCOMING_DAYS} days", {
        "rows": rows, "currencies": currencies, "chart": chart, "today": today,
        "sum_payments": sum(d.payments for d in days), "sum_reminders": sum(d.reminders for d in days),
        "sum_totals": [format_money(totals[c], c) for c in currencies],
    })


def batch_runs(request: HttpRequest) -> HttpResponse:
    kinds = []
    for kind in ("payments", "reminders"):
        runs = access.list_batch_runs(kind)
        kinds.append({"kind": kind, "runs": [{
            "run": run,
            "counts": sorted((run.Counts or {}).items()) if isinstance(run.Counts, dict) else run.Counts,
            "failures": run.Failures or [],
        } for run in runs]})
    return _render(request, "staff/runs.html", "Batch runs", {"kinds": kinds})


# --- product catalogue -------------------------------------------------------------------


def products(request: HttpRequest) -> HttpResponse:
    return _render(request, "staff/products.html", "Product catalogue", {
        "products": access.list_products(include_retired=True), "retired": ProductStatus.RETIRED,
    })


@require_http_methods(["GET", "POST"])
def product_add(request: HttpRequest) -> HttpResponse:
    form = ProductForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            product = access.create_product(data["sku"], data["name"], data["amount"], data["currency"],
                                            data["description"])
        except access.AlreadyExists:
            form.add_error("sku", "A product with this SKU already exists.")
        else:
            after = {"SKU": product.SKU, "Name": product.Name, "PaymentAmount": product.PaymentAmount,
                     "Currency": product.Currency, "Status": product.Status}
            _record_catalogue_event(request, "staff.create_product", product.SKU, None, after)
            messages.success(request, f"Product {product.SKU} added.")
            return redirect("admin:staff_products")
    return _render(request, "staff/product_form.html", "Add a product", {"form": form})


def _product_or_404(sku: str):
    product = access.get_product(sku)
    if product is None:
        raise Http404("No such product")
    return product


def _product_snapshot(product) -> dict:
    return {"SKU": product.SKU, "Name": product.Name, "PaymentAmount": product.PaymentAmount,
            "Currency": product.Currency, "Status": product.Status, "Description": product.Description}


CATALOGUE_ACCOUNT = "CATALOG"


def _record_catalogue_event(request: HttpRequest, action: str, sku: str, before: dict | None,
                            after: dict | None) -> None:
    # Audit events live in an account's partition; catalogue changes belong to no account,
    # so they are filed under a fixed pseudo-account id.
    access.record_event(CATALOGUE_ACCOUNT, actor=_actor(request), action=action, subject=f"SKU#{sku}",
                        before=before, after=after)


@require_http_methods(["GET", "POST"])
def product_edit(request: HttpRequest, sku: str) -> HttpResponse:
    product = _product_or_404(sku)
    initial = {"sku": product.SKU, "name": product.Name, "description": product.Description or "",
               "price": to_decimal(product.PaymentAmount, product.Currency), "currency": product.Currency}
    form = ProductForm(request.POST or None, initial=initial, editing=True)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        before = _product_snapshot(product)
        updated = access.update_product(product.SKU, name=data["name"], amount=data["amount"],
                                        currency=data["currency"], description=data["description"])
        _record_catalogue_event(request, "staff.update_product", product.SKU, before, _product_snapshot(updated))
        messages.success(request, f"Product {product.SKU} saved. Existing subscriptions keep their price.")
        return redirect("admin:staff_products")
    return _render(request, "staff/product_form.html", f"Edit {product.SKU}", {"form": form, "product": product})


@require_http_methods(["GET", "POST"])
def product_retire(request: HttpRequest, sku: str) -> HttpResponse:
    product = _product_or_404(sku)
    if product.Status == ProductStatus.RETIRED:
        messages.info(request, f"{product.SKU} is already retired.")
        return redirect("admin:staff_products")
    if request.method == "GET":
        return _render(request, "staff/confirm.html", f"Retire {product.SKU}", {
            "question": f"Retire {product.Name} ({product.SKU})? It takes no new subscriptions; "
                        "existing subscriptions go on being billed.",
            "button": "Retire product", "danger": True, "back": reverse("admin:staff_products"),
        })
    before = _product_snapshot(product)
    retired = access.retire_product(product.SKU)
    _record_catalogue_event(request, "staff.retire_product", product.SKU, before, _product_snapshot(retired))
    messages.success(request, f"{product.SKU} retired.")
    return redirect("admin:staff_products")


# --- wiring ------------------------------------------------------------------------------


def staff_urls(site: AdminSite) -> list[URLPattern]:
    """The staff pages as admin URLs: ``admin_view`` sends anyone but active staff to the
    admin log-in and adds the admin's CSRF and cache protections."""

    def staff(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        return site.admin_view(view)

    sub = "staff/accounts/<str:account_id>/subscriptions/<str:sub_id>"
    return [
        path("staff/", staff(index), name="staff_index"),
        path("staff/users/<int:user_id>/", staff(user_billing), name="staff_user_billing"),
        path("staff/accounts/<str:account_id>/", staff(account_detail), name="staff_account"),
        path(f"{sub}/cancel/", staff(cancel), name="staff_cancel"),
        path(f"{sub}/payment-day/", staff(payment_day), name="staff_payment_day"),
        path(f"{sub}/retry/", staff(retry_payment), name="staff_retry"),
        path("staff/accounts/<str:account_id>/receipts/<str:receipt_sk>/refund/", staff(refund),
             name="staff_refund"),
        path("staff/upcoming/", staff(upcoming), name="staff_upcoming"),
        path("staff/runs/", staff(batch_runs), name="staff_runs"),
        path("staff/products/", staff(products), name="staff_products"),
        path("staff/products/add/", staff(product_add), name="staff_product_add"),
        path("staff/products/<str:sku>/edit/", staff(product_edit), name="staff_product_edit"),
        path("staff/products/<str:sku>/retire/", staff(product_retire), name="staff_product_retire"),
    ]
