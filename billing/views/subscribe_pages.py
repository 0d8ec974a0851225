"""Subscribing, in two steps: choose product, day and card (tokenized), then confirm.
The confirmation e-mail is best effort: the subscription exists whatever the mail server says.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.mail import send_mail
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods

from billing import access
from billing.forms import ConfirmForm, SubscribeForm
from billing.gateway import CardToken
from billing.models import ProductStatus, Subscription
from billing.schedule import start_dates
from billing.templatetags.money import format_money

from ._common import SESSION_PENDING, _posted, actor, customer_required, log, today
from .cards import _tokenize


# Card number and CVC never reach Django's error reports or logs (DESIGN.md invariant 3).
@sensitive_post_parameters("card_number", "cvc")
@customer_required
@require_http_methods(["GET", "POST"])
@sensitive_variables()  # the card form's frames hold the number and CVC (see cards.py)
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
