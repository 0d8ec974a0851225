"""The customer portal: accounts, dashboard, subscribe, manage, receipts.

Every page works on the logged-in customer's own account: its id comes from the
session (put there at log-in / sign-up), never from the URL, so another customer's
subscription or receipt id simply isn't found (404). All billing data is read and
written through ``billing.access``.
"""

from __future__ import annotations

import csv
import heapq
import logging
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from functools import wraps
from itertools import islice
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.mail import send_mail
from django.db import IntegrityError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from . import access
from .forms import CancelForm, ChangeDayForm, ConfirmForm, ReplaceCardForm, SignUpForm, SubscribeForm
from .gateway import CardError, CardToken, get_gateway
from .models import ProductStatus, Receipt, Subscription, SubscriptionStatus
from .schedule import billing_today, months_before, next_payment_date, rescheduled_payment_date, start_dates
from .templatetags.money import decimal_string, format_money

log = logging.getLogger("billing")

SESSION_ACCOUNT = "account_id"
SESSION_PENDING = "pending_subscription"
RECEIPT_MONTHS = 6

STALE_MESSAGE = (
    "This subscription was changed elsewhere (another tab or device) while you were looking "
    "at it. We have shown you the latest version: please check it and try again."
)


def _posted(request: HttpRequest) -> Any:
    # An empty POST is still a submission: bind it so its errors are shown.
    return request.POST if request.method == "POST" else None


def today() -> date:
    return billing_today(settings.BILLING_TIMEZONE)


# --- the account in the session ---------------------------------------------------------


def remember_account(request: HttpRequest) -> str | None:
    """Put the user's account id in the session: one GetItem, only when missing."""
    account_id = request.session.get(SESSION_ACCOUNT)
    if not account_id and request.user.is_authenticated:
        account_id = access.get_account_id_for_user(request.user.pk)
        if account_id:
            request.session[SESSION_ACCOUNT] = account_id
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
            account = access.create_account(request.user.email or request.user.get_username(),
                                            user_id=request.user.pk)
            account_id = request.session[SESSION_ACCOUNT] = account.account_id
        return view(request, account_id, *args, **kwargs)

    return wrapper


def actor(request: HttpRequest) -> str:
    return request.user.email or request.user.get_username()


class LoginView(auth_views.LoginView):
    template_name = "portal/auth/login.html"
    redirect_authenticated_user = True

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        if remember_account(self.request) is None and self.request.user.is_staff:
            return redirect("admin:index")
        return response


@sensitive_post_parameters("password1", "password2")
@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    form = SignUpForm(_posted(request))
    if request.method == "POST" and form.is_valid():
        email = form.cleaned_data["email"]
        try:
            user = get_user_model().objects.create_user(email, email=email, password=form.cleaned_data["password1"])
        except IntegrityError:  # the same e-mail signed up a moment ago (double submit)
            form.add_error("email", "An account with this e-mail already exists. Log in instead.")
            return render(request, "portal/auth/signup.html", {"form": form})
        account = access.create_account(email, user_id=user.pk)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        request.session[SESSION_ACCOUNT] = account.account_id
        messages.success(request, "Welcome to rpay. Your account is ready: subscribe to your first product below.")
        return redirect("subscribe")
    return render(request, "portal/auth/signup.html", {"form": form})


# --- dashboard --------------------------------------------------------------------------


def upcoming_payments(subs: list[Subscription], count: int = 3) -> list[dict[str, Any]]:
    """The next ``count`` payments over all live subscriptions, soonest first.

    Each subscription's first one is its ``NextPaymentDate`` (a retry date while past
    due); later ones follow the anchor day from the period being paid.
    """

    def dates(sub: Subscription) -> Iterator[tuple[date, str, Subscription]]:
        current = date.fromisoformat(sub.NextPaymentDate)
        anchor = date.fromisoformat(sub.BillingPeriod or sub.NextPaymentDate)
        yield current, sub.SK, sub
        while True:
            anchor = next_payment_date(int(sub.PaymentDay), anchor)
            yield anchor, sub.SK, sub

    streams = [dates(s) for s in subs if s.NextPaymentDate]
    return [
        {"date": d, "sub": s, "amount": s.PaymentAmount, "currency": s.Currency}
        for d, _, s in islice(heapq.merge(*streams, key=lambda item: item[:2]), count)
    ]


def monthly_totals(subs: list[Subscription]) -> list[tuple[str, int]]:
    totals: dict[str, int] = defaultdict(int)
    for sub in subs:
        totals[sub.Currency] += int(sub.PaymentAmount)
    return sorted(totals.items())


def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return render(request, "portal/landing.html")
    return dashboard(request)


@customer_required
def dashboard(request: HttpRequest, account_id: str) -> HttpResponse:
    collection = access.get_account_collection(account_id)  # the page's one Query
    live = sorted(collection.live_subscriptions, key=lambda s: s.NextPaymentDate or "")
    cancelled = [s for s in collection.subscriptions if not s.is_live]
    return render(request, "portal/dashboard.html", {
        "account": collection.account,
        "live": live,
        "cancelled": cancelled,
        "upcoming": upcoming_payments(live),
        "totals": monthly_totals(live),
        "past_due": [s for s in live if s.Status == SubscriptionStatus.PAST_DUE],
    })


# --- subscribe (two steps) ----------------------------------------------------------------


def _tokenize(form: Any) -> CardToken | None:
    """Exchange the card for a token on the server; gateway refusals become field errors."""
    data = form.cleaned_data
    try:
        return get_gateway().tokenize_card(data["card_number"], data["exp_month"], data["exp_year"], data["cvc"])
    except CardError as error:
        form.add_error(error.field if error.field in form.fields else "card_number", str(error))
        return None


# Card number and CVC never reach Django's error reports or logs (DESIGN.md invariant 3).
@sensitive_post_parameters("card_number", "cvc")
@customer_required
@require_http_methods(["GET", "POST"])
def subscribe(request: HttpRequest, account_id: str) -> HttpResponse:
    products = access.list_products()
    initial: dict[str, Any] = {"payment_day": today().day}
    if request.GET.get("product"):
        initial["product"] = request.GET["product"]
    first_dates = {d: start_dates(d, today(), settings.REMINDER_DAYS_BEFORE)[0] for d in range(1, 32)}
    form = SubscribeForm(_posted(request), products=products, today=today(), initial=initial,
                         first_dates=first_dates)
    if request.method == "POST" and form.is_valid() and (card := _tokenize(form)):
        # The confirm step gets the token, never the card number or CVC.
        request.session[SESSION_PENDING] = {
            "sku": form.cleaned_data["product"],
            "payment_day": form.cleaned_data["payment_day"],
            "card": {"token": card.token, "brand": card.brand, "last4": card.last4,
                     "exp_month": card.exp_month, "exp_year": card.exp_year},
            "billing_address": form.billing_address_text(),
        }
        return redirect("subscribe_confirm")
    return render(request, "portal/subscribe.html", {"form": form, "products": products})


@customer_required
@require_http_methods(["GET", "POST"])
def subscribe_confirm(request: HttpRequest, account_id: str) -> HttpResponse:
    pending = request.session.get(SESSION_PENDING)
    if not pending:
        messages.info(request, "Start by choosing a product.")
        return redirect("subscribe")
    product = access.get_product(pending["sku"])
    if product is None or product.Status != ProductStatus.ACTIVE:
        request.session.pop(SESSION_PENDING, None)
        messages.error(request, "That product is no longer available. Please choose another one.")
        return redirect("subscribe")
    day = int(pending["payment_day"])
    first_payment, first_reminder = start_dates(day, today(), settings.REMINDER_DAYS_BEFORE)
    card = CardToken(**pending["card"])
    form = ConfirmForm(_posted(request))
    if request.method == "POST" and form.is_valid():
        account = access.get_account(account_id)
        if account is None:
            raise Http404("no account")
        sub = access.create_subscription(
            account, sku=product.SKU, payment_day=day, amount=int(product.PaymentAmount),
            currency=product.Currency, card=card, today=today(),
            reminder_days_before=settings.REMINDER_DAYS_BEFORE, product_name=product.Name,
            billing_address=pending.get("billing_address"),
        )
        access.record_event(account_id, actor=actor(request), action="subscription.created",
                            subject=sub.SK, before=None, after=access.subscription_snapshot(sub))
        request.session.pop(SESSION_PENDING, None)
        _send_confirmation(request, sub)
        messages.success(
            request, f"You are subscribed to {product.Name}. Your first payment is on {first_payment:%-d %B %Y}."
        )
        return redirect("subscription", sub_id=sub.sub_id)
    return render(request, "portal/subscribe_confirm.html", {
        "form": form, "product": product, "payment_day": day, "card": card,
        "first_payment": first_payment, "first_reminder": first_reminder,
        "billing_address": pending.get("billing_address"),
    })


def _send_confirmation(request: HttpRequest, sub: Subscription) -> None:
    context = {
        "sub": sub,
        "amount": format_money(sub.PaymentAmount, sub.Currency),
        "first_payment": date.fromisoformat(sub.NextPaymentDate),
        "first_reminder": date.fromisoformat(sub.NextReminderDate),
        "manage_url": settings.SITE_URL.rstrip("/") + reverse("subscription", args=[sub.sub_id]),
    }
    subject = f"Your {sub.ProductName or sub.SKU} subscription is confirmed"
    body = render_to_string("billing/portal_email/subscription_confirmed.txt", context)
    # The subscription exists whatever the mail server says: a failed send is logged, not shown as an error.
    try:
        send_mail(subject, body, None, [sub.Email])
    except OSError as error:
        log.warning("confirmation mail for %s not sent: %s", sub.SK, error)


# --- manage a subscription ------------------------------------------------------------------


def _own_subscription(account_id: str, sub_id: str) -> Subscription:
    sub = access.get_subscription(account_id, sub_id)
    if sub is None:
        raise Http404("no such subscription")
    return sub


def _is_stale(form: Any, sub: Subscription) -> bool:
    version = form.cleaned_data.get("version")
    return version is not None and version != sub.Version


@customer_required
def subscription_detail(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = _own_subscription(account_id, sub_id)
    return render(request, "portal/subscription.html", {"sub": sub})


PAYMENT_IN_PROGRESS_MESSAGE = (
    "A payment for this subscription is due today or still being taken, so its day can't move "
    "right now. You can change the payment day once that payment has gone through."
)


@customer_required
@require_http_methods(["GET", "POST"])
def change_day(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = _own_subscription(account_id, sub_id)
    if not sub.is_live:
        messages.info(request, "This subscription is cancelled: there is nothing to change.")
        return redirect("subscription", sub_id=sub_id)
    # The same rule access.change_payment_day applies, shown before the customer chooses.
    unpaid = date.fromisoformat(sub.BillingPeriod or sub.NextPaymentDate)
    next_dates = {d: rescheduled_payment_date(d, unpaid, today()) for d in range(1, 32)}
    form = ChangeDayForm(_posted(request), next_dates=next_dates,
                         initial={"payment_day": sub.PaymentDay, "version": sub.Version})
    if request.method == "POST" and form.is_valid():
        if _is_stale(form, sub):
            messages.warning(request, STALE_MESSAGE)
            return redirect("change_day", sub_id=sub_id)
        before = access.subscription_snapshot(sub)
        try:
            access.change_payment_day(sub, form.cleaned_data["payment_day"], today=today(),
                                      reminder_days_before=settings.REMINDER_DAYS_BEFORE)
        except access.PaymentInProgress:
            messages.warning(request, PAYMENT_IN_PROGRESS_MESSAGE)
            return redirect("subscription", sub_id=sub_id)
        except access.ConditionFailed:
            messages.warning(request, STALE_MESSAGE)
            return redirect("change_day", sub_id=sub_id)
        access.record_event(account_id, actor=actor(request), action="subscription.payment_day_changed",
                            subject=sub.SK, before=before, after=access.subscription_snapshot(sub))
        next_date = date.fromisoformat(sub.NextPaymentDate)
        messages.success(request, f"Your payment day is now the {sub.PaymentDay}. "
                                  f"Your next payment is on {next_date:%-d %B %Y}.")
        return redirect("subscription", sub_id=sub_id)
    return render(request, "portal/change_day.html", {"sub": sub, "form": form})


@sensitive_post_parameters("card_number", "cvc")
@customer_required
@require_http_methods(["GET", "POST"])
def replace_card(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = _own_subscription(account_id, sub_id)
    if not sub.is_live:
        messages.info(request, "This subscription is cancelled: there is no card to replace.")
        return redirect("subscription", sub_id=sub_id)
    form = ReplaceCardForm(_posted(request), today=today(), initial={"version": sub.Version})
    if request.method == "POST" and form.is_valid():
        if _is_stale(form, sub):
            messages.warning(request, STALE_MESSAGE)
            return redirect("replace_card", sub_id=sub_id)
        card = _tokenize(form)
        if card:
            before = access.subscription_snapshot(sub)
            try:
                access.replace_card(sub, card, form.billing_address_text())
            except access.ConditionFailed:
                messages.warning(request, STALE_MESSAGE)
                return redirect("replace_card", sub_id=sub_id)
            access.record_event(account_id, actor=actor(request), action="subscription.card_replaced",
                                subject=sub.SK, before=before, after=access.subscription_snapshot(sub))
            messages.success(request, f"Future payments will use your {card.brand} ending in {card.last4}.")
            return redirect("subscription", sub_id=sub_id)
    return render(request, "portal/replace_card.html", {"sub": sub, "form": form})


@customer_required
@require_http_methods(["GET", "POST"])
def cancel(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = _own_subscription(account_id, sub_id)
    if not sub.is_live:
        return redirect("cancelled", sub_id=sub_id)
    form = CancelForm(_posted(request), initial={"version": sub.Version})
    if request.method == "POST" and form.is_valid():
        if _is_stale(form, sub):
            messages.warning(request, STALE_MESSAGE)
            return redirect("cancel", sub_id=sub_id)
        before = access.subscription_snapshot(sub)
        try:
            access.cancel_subscription(sub, reason="customer")
        except access.ConditionFailed:
            messages.warning(request, STALE_MESSAGE)
            return redirect("cancel", sub_id=sub_id)
        access.record_event(account_id, actor=actor(request), action="subscription.cancelled",
                            subject=sub.SK, before=before, after=access.subscription_snapshot(sub))
        messages.success(request, f"Your {sub.ProductName or sub.SKU} subscription is cancelled.")
        return redirect("cancelled", sub_id=sub_id)
    return render(request, "portal/cancel.html", {"sub": sub, "form": form})


@customer_required
def cancelled(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    """After cancelling: which period was the last one paid, from the receipts."""
    sub = _own_subscription(account_id, sub_id)
    if sub.is_live:
        return redirect("subscription", sub_id=sub_id)
    end = today()
    receipts = [r for r in access.get_receipts_by_account(account_id, months_before(end, RECEIPT_MONTHS), end)
                if r.SubId == sub.sub_id]
    last = receipts[0] if receipts else None  # newest first
    period_end = None
    if last is not None:
        # A payment on the anchor date pays until the day before the next one.
        period_end = next_payment_date(int(sub.PaymentDay), date.fromisoformat(last.BillingDate)) - timedelta(days=1)
    return render(request, "portal/cancelled.html", {
        "sub": sub, "last": last,
        "period_start": date.fromisoformat(last.BillingDate) if last else None,
        "period_end": period_end,
    })


# --- receipts -----------------------------------------------------------------------------


def _receipt_window() -> tuple[date, date]:
    end = today()
    return months_before(end, RECEIPT_MONTHS), end


def group_by_month(receipts: list[Receipt]) -> list[dict[str, Any]]:
    """Newest month first, each with its receipts and a total per currency (net of refunds)."""
    months: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for receipt in receipts:
        key = receipt.BillingDate[:7]
        month = months.setdefault(key, {"month": date.fromisoformat(key + "-01"), "receipts": [],
                                        "totals": defaultdict(int)})
        month["receipts"].append(receipt)
        month["totals"][receipt.Currency] += int(receipt.ProcessedAmount) - int(receipt.RefundedAmount or 0)
    for month in months.values():
        month["totals"] = sorted(month["totals"].items())
    return list(months.values())


@customer_required
def receipts(request: HttpRequest, account_id: str) -> HttpResponse:
    start, end = _receipt_window()
    found = access.get_receipts_by_account(account_id, start, end)
    return render(request, "portal/receipts.html", {"months": group_by_month(found), "start": start, "end": end})


@customer_required
def receipt_detail(request: HttpRequest, account_id: str, receipt_id: str) -> HttpResponse:
    receipt = access.get_unexpired_receipt(account_id, receipt_id)
    if receipt is None:
        raise Http404("no such receipt")
    net = int(receipt.ProcessedAmount) - int(receipt.RefundedAmount or 0)
    return render(request, "portal/receipt.html", {"receipt": receipt, "net": net})


CSV_COLUMNS = ["billing_date", "processed_date", "product", "sku", "subscription", "amount", "currency",
               "status", "refunded_amount", "charge_id"]


@customer_required
def receipts_csv(request: HttpRequest, account_id: str) -> HttpResponse:
    start, end = _receipt_window()
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="rpay-receipts-{start}-to-{end}.csv"'
    writer = csv.writer(response)
    writer.writerow(CSV_COLUMNS)
    # No card details at all in the export: it is a file that gets e-mailed around.
    for r in access.get_receipts_by_account(account_id, start, end):
        writer.writerow([
            r.BillingDate, r.ProcessedDate, r.ProductName or "", r.SKU, r.SubId,
            decimal_string(r.ProcessedAmount, r.Currency), r.Currency, r.Status,
            decimal_string(r.RefundedAmount or 0, r.Currency), r.ChargeId or "",
        ])
    return response


# --- errors -------------------------------------------------------------------------------


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "404.html", status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    return render(request, "500.html", status=500)
