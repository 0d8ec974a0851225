"""Checkout: shipping address, discount code, gift card, then the rest by card.

The page carries a checkout token (kept in the session until the order is placed): it
becomes the order id, so a double click places one order (``shop.checkout``). Prices are
re-read when the page is shown and when it is submitted; a price that changed meanwhile
stops the submit with a message, so nobody pays a price they did not see.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing.customers import card_entry_page, customer_required, paying_account, remember_billing_country
from core.cardforms import tokenize_card_form
from core.money import format_with_symbol
from core.pages import bound_data, today
from core.payments.gateway import CardEntry, cards_entered_in_browser, get_gateway
from shop import access
from shop.checkout import CheckoutRequest, checkout, new_checkout_token, settle
from shop.errors import (
    AuthenticationRequired,
    Busy,
    CardDeclined,
    DiscountCodeUsedUp,
    GiftCardBalanceTooLow,
    InvalidInput,
    OutOfStock,
    PaymentPending,
    ShopError,
)
from shop.forms import CheckoutForm
from shop.ids import is_valid_id
from shop.models import OrderStatus
from shop.views.cart_pages import priced_lines
from shop.views.common import SESSION_TOKEN, get_cart, save_cart
from shop.views.emails import send_order_confirmation

# checkout's error fields -> the form's fields
_FIELDS = {"discount code": "discount_code", "gift card": "gift_card", "card": "card_number", "address": "street"}


def _token(request: HttpRequest) -> str:
    token = request.session.get(SESSION_TOKEN)
    if not is_valid_id(token):
        token = request.session[SESSION_TOKEN] = new_checkout_token()
    return token


def _saved_address(account_id: str) -> dict[str, str]:
    """The address kept on the customer item (one GetItem), to fill the form again."""
    customer = access.get_customer_by_customer_id(account_id)
    address = customer.ShippingAddress if customer is not None else None
    if address is None:
        return {}
    return {"street": address.Street, "number": address.Number or "", "zip_code": address.ZipCode,
            "city": address.City, "county": address.County or "", "country": address.Country}


def _price_changes(request: HttpRequest, cart: dict, lines: list[dict]) -> list[str]:
    """Lines whose price differs from the one the customer saw; the cart takes the new
    price, so the next submit goes through."""
    changed = []
    for line in lines:
        if line["was"] is not None and not line["gone"]:
            changed.append(_("%(product)s now costs %(price)s (was %(was)s)") % {
                "product": line["name"], "price": format_with_symbol(line["price"], line["currency"]),
                "was": format_with_symbol(line["was"], line["currency"])})
            cart[line["product_id"]]["price"] = line["price"]
    if changed:
        save_cart(request, cart)
    return changed


def _placed_already(account_id: str, token: str) -> str | None:
    """A resubmitted page whose order was placed: its order id (one Query)."""
    details = access.get_order_details_by_order_id(token) if is_valid_id(token) else None
    if details is None or details.order.customer_id != account_id or details.order.Status == OrderStatus.DECLINED:
        return None
    return token


@card_entry_page("gift_card")
def checkout_page(request: HttpRequest, account_id: str) -> HttpResponse:
    cart = get_cart(request)
    posted_token = request.POST.get("token", "") if request.method == "POST" else ""
    if not cart:
        if posted_token and (order_id := _placed_already(account_id, posted_token)):
            return redirect("shop:order", order_id)  # the second click of a double click
        messages.info(request, _("Your cart is empty: add something first."))
        return redirect("shop:cart")
    token = _token(request)
    lines, totals = priced_lines(cart)
    gone = [line["name"] for line in lines if line["gone"]]
    context: dict[str, Any] = {"lines": lines, "totals": sorted(totals.items())}
    if gone:
        messages.error(request, _("No longer sold: %(products)s. Remove it from your cart to check out.") % {
            "products": ", ".join(gone)})
        return redirect("shop:cart")
    initial = {"token": token, **(_saved_address(account_id) if request.method == "GET" else {})}
    paying = paying_account(account_id)  # the wallet's cards and the Stripe customer: one Query
    cards = [(c.card_id, c.label) for c in paying.cards]
    if paying.default is not None:
        initial["saved_card"] = paying.default.card_id
    initial.setdefault("billing_country", paying.billing_country)
    form = CheckoutForm(bound_data(request), today=today(), initial=initial, customer=paying.customer, cards=cards)
    changed = _price_changes(request, cart, lines)
    if changed:
        messages.warning(request, _("Prices changed since you added them: %(changes)s. Check the new total and "
                                    "place the order again.") % {"changes": "; ".join(changed)})
        if request.method == "POST":
            form = CheckoutForm(None, today=today(), initial={**initial, **_form_values(request.POST)},
                                customer=paying.customer, cards=cards)
            return render(request, "shop/checkout.html", {**context, "form": form})
    if request.method == "POST" and form.is_valid():
        if form.cleaned_data["token"] != token:
            if order_id := _placed_already(account_id, form.cleaned_data["token"]):
                return redirect("shop:order", order_id)
            messages.warning(request, _("This checkout page was out of date; please check it and place the order."))
            return render(request, "shop/checkout.html", {**context, "form": CheckoutForm(
                None, today=today(), initial={**_form_values(request.POST), "token": token}, customer=paying.customer,
                cards=cards)})
        card = None
        if form.saved_card_id:
            card = next(c.token for c in paying.cards if c.card_id == form.saved_card_id)
        elif form.has_card():
            card = tokenize_card_form(form)
            if card is None:
                return render(request, "shop/checkout.html", {**context, "form": form})
        if form.cleaned_data["billing_country"] != paying.stored_billing_country:
            # The country given here is the account's from now on (its subscriptions' too).
            remember_billing_country(account_id, form.cleaned_data["billing_country"],
                                     actor=request.user.email or request.user.get_username())
        response = _place(request, account_id, form, token, cart, card)
        if response is not None:
            return response
    return render(request, "shop/checkout.html", {**context, "form": form})


def _form_values(post: Any) -> dict[str, str]:
    """What the customer typed, minus the card (never shown again)."""
    keep = ("street", "number", "zip_code", "city", "county", "country", "billing_country", "discount_code",
            "gift_card")
    return {**{k: post.get(k, "") for k in keep}, "save_address": bool(post.get("save_address"))}


def _place(request: HttpRequest, account_id: str, form: CheckoutForm, token: str, cart: dict,
           card: Any) -> HttpResponse | None:
    """Run the checkout; a redirect when the order is placed (or waits for the gateway),
    None when the form shows what to do."""
    data = form.cleaned_data
    checkout_request = CheckoutRequest(
        token=token, customer_id=account_id,
        lines=tuple((pid, line["quantity"]) for pid, line in cart.items()),
        address=form.address(), discount_code=data["discount_code"].strip() or None,
        gift_card_code=data["gift_card"].strip() or None, card=card,
        save_address=data["save_address"], email=request.user.email or None,
    )
    try:
        order = checkout(checkout_request)
    except OutOfStock as error:
        left = _("only %(count)s left") % {"count": error.available} if error.available else _("none left")
        form.add_error(None, _("%(product)s is out of stock (%(left)s). Lower its quantity in your cart or remove "
                               "it, then place the order again. Nothing was charged.") % {
            "product": error.name, "left": left})
    except CardDeclined as error:
        # The declined order keeps this token; the next try (this form again) is a new order.
        fresh = request.session[SESSION_TOKEN] = new_checkout_token()
        form.data = form.data.copy()
        form.data["token"] = fresh
        form.add_error(_card_field(form), _("Your card was declined (%(reason)s). Nothing was charged and no order "
                                        "was placed: try another card, or ask your bank why.") % {
            "reason": error.decline_code or _("no reason given")})
    except AuthenticationRequired as error:  # before PaymentPending: it is one
        _placed(request, cart)
        request.session[SESSION_AUTHENTICATE] = {"order_id": error.order_id, "client_secret": error.client_secret}
        return redirect("shop:order_authenticate", error.order_id)
    except PaymentPending as error:
        _placed(request, cart)
        messages.warning(request, _("We could not confirm the payment with the card company yet. The order will be "
                                    "completed or cancelled within minutes; this page shows which. "
                                    "Please do not order again."))
        return redirect("shop:order", error.order_id)
    except DiscountCodeUsedUp as error:
        form.add_error("discount_code", _("The code %(code)s has been used up: remove it to order without it.") % {
            "code": error.code})
    except GiftCardBalanceTooLow as error:
        form.add_error("gift_card", str(error) + " " + _("Try again: the order now takes what is left on it."))
    except Busy as error:
        form.add_error(None, str(error))
    except InvalidInput as error:
        field = _FIELDS.get(error.field)
        form.add_error(_card_field(form) if field == "card_number" else field, _what_to_do(error))
    except ShopError as error:
        form.add_error(None, str(error))
    else:
        if order.customer_id != account_id:  # a token that is another customer's order id
            request.session[SESSION_TOKEN] = new_checkout_token()
            form.add_error(None, _("This checkout page was out of date; please place the order again."))
            return None
        _placed(request, cart)
        if cache.add(f"shop:confirmation:{order.order_id}", 1, timeout=3600):  # one e-mail for a double click
            send_order_confirmation(request.user.email, order, access.get_order_details_by_order_id(
                order.order_id, consistent=True))
        messages.success(request, _("Thank you! Order %(order)s is placed and paid.") % {"order": order.order_id})
        return redirect(reverse("shop:order", args=[order.order_id]))
    return None


SESSION_AUTHENTICATE = "shop_authenticate"  # the order whose card payment the bank asks to confirm


@require_http_methods(["GET", "POST"])
@customer_required
def order_authenticate(request: HttpRequest, account_id: str, order_id: str) -> HttpResponse:
    """The bank asks the customer to confirm the card payment (3-D Secure); the customer
    whose checkout it is, only. The page confirms the PaymentIntent with Stripe.js
    (static/js/card-authenticate.js), then posts here and the order is settled from what
    Stripe says: paid, refused (rolled back: stock, gift card and code given back), or
    still waiting (this page again). Left alone, ``reconcile_checkouts`` cancels the
    payment and rolls the order back after its grace period."""
    waiting = request.session.get(SESSION_AUTHENTICATE) or {}
    details = access.get_order_details_by_order_id(order_id) if is_valid_id(order_id) else None
    if details is None or details.order.customer_id != account_id:
        raise Http404("no such order")
    if details.order.Status != OrderStatus.PENDING_PAYMENT or waiting.get("order_id") != order_id:
        return redirect("shop:order", order_id)
    if request.method == "POST":
        bank = getattr(get_gateway(), "authenticate", None)
        if request.POST.get("bank") and bank is not None and details.order.ChargeId:
            # The simulated gateway's own bank page (it has no Stripe.js): its 3-D Secure
            # card asks on-session too, as Stripe's test card does.
            bank(details.order.ChargeId, approve=request.POST["bank"] == "approve")
        try:
            order = settle(order_id, customer_present=True)
        except AuthenticationRequired as still:
            waiting["client_secret"] = still.client_secret or waiting["client_secret"]
            messages.warning(request, _("Your bank has not confirmed the payment yet. Please confirm it below."))
        except CardDeclined as error:
            request.session.pop(SESSION_AUTHENTICATE, None)
            messages.error(request, _("The payment was not confirmed (%(reason)s): nothing was charged and order "
                                      "%(order)s is cancelled.") % {"reason": error.decline_code or _("no reason given"),
                                                                     "order": order_id})
            return redirect("shop:order", order_id)
        except PaymentPending:
            messages.warning(request, _("We could not confirm the payment with the card company yet. The order will "
                                        "be completed or cancelled within minutes; this page shows which. "
                                        "Please do not order again."))
            return redirect("shop:order", order_id)
        else:
            request.session.pop(SESSION_AUTHENTICATE, None)
            if cache.add(f"shop:confirmation:{order.order_id}", 1, timeout=3600):
                send_order_confirmation(request.user.email, order, access.get_order_details_by_order_id(
                    order.order_id, consistent=True))
            messages.success(request, _("Thank you! Order %(order)s is placed and paid.") % {"order": order_id})
            return redirect("shop:order", order_id)
    entry = CardEntry(client_secret=waiting["client_secret"], publishable_key=settings.STRIPE_PUBLISHABLE_KEY,
                      js_url=settings.STRIPE_JS_URL)
    return render(request, "shop/authenticate.html", {
        "entry": entry, "order_id": order_id, "simulated_bank": not cards_entered_in_browser(),
        "amount": format_with_symbol(details.order.CardAmount, details.order.Currency)})


def _card_field(form: CheckoutForm) -> str | None:
    """Where a card error goes: the card number field, or the form's top when the card is
    typed into Stripe.js (no field of ours) or a wallet card was chosen."""
    return "card_number" if "card_number" in form.fields and not form.saved_card_id else None


def _what_to_do(error: InvalidInput) -> str:
    if error.field == "card":
        return _("The gift card and code do not cover the whole order: enter a card for the rest.")
    return str(error)


def _placed(request: HttpRequest, cart: dict) -> None:
    cart.clear()
    save_cart(request, cart)
    request.session.pop(SESSION_TOKEN, None)

