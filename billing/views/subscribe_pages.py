"""Subscribing, in two steps: choose product, day and card (tokenized), then confirm.
The confirmation e-mail is best effort: the subscription exists whatever the mail server says.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods

from billing import access
from billing.forms import ConfirmForm, SubscribeForm
from billing.gateway import CardToken
from billing.mail import send_customer_email, subscription_context
from billing.models import AuditAction, ProductStatus, Subscription
from billing.money import format_with_symbol
from billing.pages import actor, bound_data, today
from billing.schedule import start_dates

from .cards import tokenize_card_form
from .common import SESSION_PENDING, customer_required, log


# Card number and CVC never reach Django's error reports or logs (DESIGN.md invariant 3).
@sensitive_post_parameters("card_number", "cvc")
@require_http_methods(["GET", "POST"])
@customer_required
@sensitive_variables()  # the card form's frames hold the number and CVC (see cards.py)
def subscribe(request: HttpRequest, account_id: str) -> HttpResponse:
    products = access.list_products()
    initial: dict[str, Any] = {"payment_day": today().day}
    if request.GET.get("product"):
        initial["product"] = request.GET["product"]
    first_dates = {d: start_dates(d, today(), settings.REMINDER_DAYS_BEFORE)[0] for d in range(1, 32)}
    form = SubscribeForm(bound_data(request), products=products, today=today(), initial=initial,
                         first_dates=first_dates)
    if request.method == "POST" and form.is_valid() and (card := tokenize_card_form(form)):
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


@require_http_methods(["GET", "POST"])
@customer_required
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
    form = ConfirmForm(bound_data(request))
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
        access.record_event(account_id, actor=actor(request), action=AuditAction.SUBSCRIPTION_CREATED,
                            subject=sub.SK, before=None, after=access.subscription_snapshot(sub))
        request.session.pop(SESSION_PENDING, None)
        _send_confirmation(sub)
        messages.success(
            request, f"You are subscribed to {product.Name}. Your first payment is on {first_payment:%-d %B %Y}."
        )
        return redirect("subscription", sub_id=sub.sub_id)
    return render(request, "portal/subscribe_confirm.html", {
        "form": form, "product": product, "payment_day": day, "card": card,
        "first_payment": first_payment, "first_reminder": first_reminder,
        "billing_address": pending.get("billing_address"),
    })


def _send_confirmation(sub: Subscription) -> None:
    context = {
        **subscription_context(sub),
        # The amount as the customer saw it on the confirm page ("$9.99").
        "amount": format_with_symbol(sub.PaymentAmount, sub.Currency),
        "first_payment": date.fromisoformat(sub.NextPaymentDate),
        "first_reminder": date.fromisoformat(sub.NextReminderDate),
        "manage_url": settings.SITE_URL.rstrip("/") + reverse("subscription", args=[sub.sub_id]),
    }
    # The subscription exists whatever the mail server says: a failed send is logged, not shown.
    failure = send_customer_email("subscription_confirmed", sub.Email,
                                  f"Your {sub.ProductName or sub.SKU} subscription is confirmed", context)
    if failure:
        log.warning("confirmation mail for %s not sent: %s", sub.SK, failure)
