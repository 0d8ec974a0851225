"""Subscribing, in two steps: choose product, day and card (tokenized), then confirm the
quote: the price, the first charge (today, for the days up to the first payment day,
prorated by day) and the next payment date.

The confirm page carries the quote the customer saw, signed (``django.core.signing``),
and the click subscribes at that quote only if it is still the quote: a price changed
by staff meanwhile (or a new day) shows the new quote to confirm again (docs/MONEY.md M4).
"""

from __future__ import annotations

from datetime import date, timedelta
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing import access
from billing.actions import subscriptions as actions
from billing.actions import tax_identity, wallet
from billing.customers import card_customer, card_entry_page, customer_required
from billing.forms import NEW_CARD, ConfirmForm, SubscribeForm, coupon_error, vies_refused_error
from billing.models import Coupon, Price, Product, ProductStatus, Subscription
from billing.rules.cadence_words import amount_every
from billing.rules.coupons import CouponRefusal, payments_left
from billing.rules.lifecycle import is_expired_incomplete
from billing.rules.price_choice import (
    PriceChoice,
    PriceRefused,
    choose_metered_price,
    choose_offer,
    is_per_seat,
    metered_prices_of,
    offered,
)
from billing.rules.price_objects import price_words_of
from billing.rules.price_words import interval_words
from billing.rules.projection import Terms, new_subscription_charges
from billing.rules.schedule import Schedule, first_period, new_cadence
from billing.rules.switch import usage_only
from billing.rules.tax import stored_tax_behavior
from billing.templatetags.portal import decline_reason
from billing.views.common import SESSION_AUTHENTICATE, SESSION_PENDING
from core.cardforms import tokenize_card_form
from core.countries import country_name
from core.localformat import local_date
from core.money import format_with_symbol
from core.pages import actor, bound_data, today
from core.payments.errors import GatewayError
from core.payments.gateway import CardEntry, CardToken, cards_entered_in_browser

QUOTE_SALT = "billing.subscribe.quote"
QUOTE_MAX_AGE = 60 * 60  # seconds: an hour-old confirm page is quoted again


def quote_for(product: Product, payment_day: int, day: date, coupon: Coupon | None = None,
              trial_days: int = 0, buyer: object | None = None, choice: PriceChoice | None = None,
              metered: list[Price] | None = None) -> dict[str, Any]:
    """What subscribing on ``day`` costs: the monthly price and the first charge (the days
    up to the first payment date, prorated by day; a full month on the payment day); with
    a coupon, the first period's price, the discount and the first charge after it. With
    ``trial_days``: free through ``trial_end``, and the first charge is the day after, for
    the days from then to the first payment date (docs/MONEY.md "Free trials"). The
    amounts charged carry the tax when prices exclude it (``buyer``: whose billing country
    and VAT number; default the seller's country). ``choice``: a chosen price of the
    product (``rules.price_choice``): its amount a period, currency and cadence, the
    first period by the cadence as ``create_subscription`` makes it. ``metered``: the
    product's metered prices, named by the new subscription after its first charge, which
    bills no usage (so the first charge is the fixed price's alone)."""
    trial_end = day + timedelta(days=trial_days - 1) if trial_days else None
    first_day = trial_end + timedelta(days=1) if trial_end else day
    schedule: Schedule = new_cadence(payment_day, first_day, choice.interval, choice.interval_count) if choice \
        else payment_day
    start, end = first_period(schedule, first_day)
    price = choice.amount if choice else int(product.PaymentAmount)
    tax = access.tax_terms(buyer, tax_behavior=choice.tax_behavior if choice else None)
    first = new_subscription_charges(Terms(price, schedule), start, 1, tax=tax)[0]
    quote = {
        "sku": product.SKU, "price": price, "currency": choice.currency if choice else product.Currency,
        "payment_day": payment_day,
        "first_amount": first.amount,
        "first_date": start.isoformat(), "period_end": end.isoformat(),
        "next_payment": (end + timedelta(days=1)).isoformat(),
        # The page says "prorated by day" for a first period shorter than the cadence's,
        # and names the VAT a price that excludes it adds: not for any first charge that
        # differs from the price (a charge of €24.40 for a whole month of €20.00 + VAT is
        # not prorated).
        "prorated": not first.full_month,
    }
    if coupon is not None:
        # The payments as the run will take them (``rules.projection``): the coupon's
        # discount on the first one, and on the ones after it while it lasts (an amount
        # off is not the same on a prorated first period as on a whole month).
        terms = Terms(price, schedule, coupon.Code, coupon.PercentOff, coupon.AmountOff,
                      payments_left(coupon.Duration, coupon.DurationPayments))
        first, following = new_subscription_charges(terms, start, 2, tax=tax)
        quote.update(coupon=coupon.Code, first_price=first.list_price, discount=first.discount,
                     first_amount=first.amount, next_discount=following.discount,
                     coupon_duration=coupon.Duration, coupon_payments=coupon.DurationPayments)
    if first.tax_line is not None and first.tax_line.tax and not tax.prices_include_tax:
        quote["first_tax_added"] = first.tax_line.tax
    if trial_end:
        quote.update(trial_days=trial_days, trial_end=trial_end.isoformat())
    if choice is not None and choice.stored_price_id:
        quote.update(price_id=choice.stored_price_id, interval=choice.interval, interval_count=choice.interval_count,
                     **choice.attributes())
    if choice is not None and choice.usage_only:  # no fixed fee: the metered price is its one price
        quote.update(usage_only=True, metered_price_id=choice.metered_price_id, interval=choice.interval,
                     interval_count=choice.interval_count)
    if metered:
        quote["metered_price_ids"] = [price.PriceId for price in metered]
    if choice is not None and choice.tax_behavior:  # the subscription's charges follow it
        quote["tax_behavior"] = choice.tax_behavior
    return quote


def _checked_coupon(code: str, currency: str) -> Coupon:
    """The coupon a customer typed, if it can be used now for ``currency`` (one GetItem);
    ``access.CouponRefused`` otherwise."""
    return access.check_coupon(access.get_coupon(code), code, currency=currency, day=today())


def _cadence_of_quote(quote: dict[str, Any]) -> tuple[str, int]:
    """The quoted price's interval and count (a product's own price: every month)."""
    return str(quote.get("interval") or "month"), int(quote.get("interval_count") or 1)


def _renews(quote: dict[str, Any]) -> dict[str, str]:
    """How often it renews, in words of the language the page is drawn in, when not every
    month ("a year", "every 3 months"): never in the signed quote itself, whose words
    would be the language it was first shown in (and a quote confirmed after a change of
    language would not match the one drawn again)."""
    interval, count = _cadence_of_quote(quote)
    return {} if (interval, count) == ("month", 1) else {"renews": str(interval_words(interval, count))}


def _quote_context(quote: dict[str, Any]) -> dict[str, Any]:
    return {**quote, **_renews(quote), "first_date": date.fromisoformat(quote["first_date"]),
            "period_end": date.fromisoformat(quote["period_end"]),
            "next_payment": date.fromisoformat(quote["next_payment"]),
            **({"trial_end": date.fromisoformat(quote["trial_end"])} if "trial_end" in quote else {})}


def _trial_days(account_id: str, product: Product, choice: PriceChoice | None = None) -> tuple[int, bool]:
    """The free trial this account gets on ``product`` (at the chosen price: the price's
    trial, else the product's), and whether it had it already (one GetItem of its
    ``TrialUse`` marker, made only for a product with a trial)."""
    days = choice.trial_days if choice is not None else product.trial_days
    if not days:
        return 0, False
    if access.trial_used(account_id, product.SKU):
        return 0, True
    return days, False


def _price_offers(products: list[Product], sku: str | None) -> dict[str, Price]:
    """The chosen product's prices a customer may subscribe to (one Query of its prices;
    its default price first), by id."""
    product = next((p for p in products if sku == p.SKU), None)
    if product is None:
        return {}
    return {p.PriceId: p for p in access.list_prices(product.SKU, product=product) if offered(p)}


def usage_words(prices: list[Price]) -> str:
    """The metered prices beside the fixed one: "plus usage, billed in arrears: first 1,000
    calls free, then $0.002 a call, a month; $0.10 a GB a month" (``price_words``)."""
    return _("plus usage, billed in arrears: %(words)s") % {"words": metered_words(prices)}


def metered_words(prices: list[Price]) -> str:
    """Each metered price in words, in order: "first 1,000 calls free, then $0.002 a call,
    a month; $0.10 a GB a month"."""
    return "; ".join(price_words_of(price) for price in prices)


# What the metered prices billed beside a fixed price share with it: its interval, interval
# count and tax behaviour (``rules.price_choice.metered_prices_of``).
Cadence = tuple[str, int, str | None]
MONTHLY: Cadence = ("month", 1, None)  # a product's default price


def _cadence(price: Price | PriceChoice | None) -> Cadence:
    if isinstance(price, Price):
        return price.Interval, int(price.IntervalCount or 1), stored_tax_behavior(price.TaxBehavior)
    return (price.interval or "month", int(price.interval_count or 1), stored_tax_behavior(price.tax_behavior)) \
        if price is not None else MONTHLY


def _metered_prices(products: list[Product],
                    prices: dict[str, list[Price]]) -> dict[tuple[str, str, Cadence], list[Price]]:
    """Each product's metered prices by (SKU, currency, cadence), for its fixed prices'
    currencies and cadences (``rules.price_choice.metered_prices_of``: their usage is
    billed only with payments of their own cadence): no read, the catalog's Query has them."""
    found: dict[tuple[str, str, Cadence], list[Price]] = {}
    for product in products:
        own = prices.get(product.SKU, [])
        fixed = {(product.Currency.upper(), MONTHLY), *((p.Currency.upper(), _cadence(p)) for p in own if not p.Meter)}
        for currency, cadence in fixed:
            metered = metered_prices_of(own, currency, *cadence)
            if metered:
                found[product.SKU, currency, cadence] = metered
    return found


def _chosen_metered(pending: dict[str, Any], product: Product, currency: str) -> list[Price]:
    """The metered prices chosen with the product on step 1, as they are now (a GetItem
    each); ``PriceRefused`` when one can no longer be (archived meanwhile). []: the product
    had none. (A page of step 1 shown before several were offered named one.)"""
    ids = pending.get("metered_price_ids") or ([pending["metered_price_id"]] if pending.get("metered_price_id") else [])
    return [choose_metered_price(access.get_price(price_id), product, currency) for price_id in ids]


def _chosen_price(pending: dict[str, Any], product: Product) -> tuple[PriceChoice | None, str]:
    """The price chosen on step 1, as it is now (one GetItem), and its words for the page
    ("$120.00 a year", "$10.00 a seat a month × 5"); ``PriceRefused`` when it can no
    longer be subscribed to (archived meanwhile). None and "": the monthly default."""
    if not pending.get("price_id"):
        return None, ""
    price = access.get_price(pending["price_id"])
    choice = choose_offer(price, product, pending.get("quantity"))
    assert price is not None  # choose_price refuses a missing one
    words = price_words_of(price)
    if choice.per_seat:
        words = _("%(price)s × %(quantity)s") % {"price": words, "quantity": choice.quantity}
    return choice, words


@card_entry_page()
def subscribe(request: HttpRequest, account_id: str) -> HttpResponse:
    # The products and their stored prices: one Query (a metered price is shown beside its product).
    products, catalog_prices = access.list_products_with_prices()
    metered = _metered_prices(products, catalog_prices)
    wallet_now = access.get_wallet(account_id)  # the account and its cards: one Query
    cards = {c.card_id: c for c in wallet_now.cards}
    # "Change details" on the confirm step comes back here with the product, day and card.
    initial: dict[str, Any] = {"payment_day": _day_from(request.GET.get("day")) or today().day,
                               **tax_identity_initial(wallet_now.account)}
    if request.GET.get("coupon"):  # back from a declined first payment: the coupon chosen
        initial["coupon"] = request.GET["coupon"][:40]
    # The prices of the product named (back from step 2, or its link), or of the one posted
    # with a price: only then is their Query made.
    offer_sku = request.POST.get("product") if request.method == "POST" and "price" in request.POST \
        else request.GET.get("product")
    offers = _price_offers(products, offer_sku) if offer_sku else {}
    if request.GET.get("price") or request.GET.get("quantity"):
        initial.update(price=request.GET.get("price", ""), quantity=_day_from(request.GET.get("quantity"), 10**9))
    if request.GET.get("product"):
        initial["product"] = request.GET["product"]
        # ...and the billing name and address typed before (the card number is never kept).
        initial["billing_address"] = (request.session.get(SESSION_PENDING) or {}).get("billing_address") or ""
    if cards:
        chosen = request.GET.get("card")
        # A card named but not in the wallet: a new card that did not pay (typed again).
        initial["saved_card"] = chosen if chosen in cards or chosen == NEW_CARD else \
            NEW_CARD if chosen else wallet_now.default.card_id
    first_dates = {d: first_period(d, today())[1] + timedelta(days=1) for d in range(1, 32)}
    form = SubscribeForm(bound_data(request), products=products, today=today(), initial=initial,
                         first_dates=first_dates, cards=[(i, wallet.card_label(c.Details)) for i, c in cards.items()],
                         customer=card_customer(account_id, wallet_now.account),
                         prices=[(i, _offer_words(p, metered.get((p.SKU, p.Currency.upper(), _cadence(p)), [])),
                                  is_per_seat(p)) for i, p in offers.items()],
                         usage={p.SKU: usage_words(metered[p.SKU, p.Currency.upper(), MONTHLY]) for p in products
                                if (p.SKU, p.Currency.upper(), MONTHLY) in metered})
    chosen_price: PriceChoice | None = None
    if request.method == "POST" and form.is_valid() and form.cleaned_data.get("price"):
        product_now = next(p for p in products if form.cleaned_data["product"] == p.SKU)
        try:
            chosen_price = choose_offer(offers.get(form.cleaned_data["price"]), product_now,
                                        form.cleaned_data.get("quantity"))
        except PriceRefused as refused:
            form.add_error(refused.field if refused.field in form.fields else "price", str(refused))
    if request.method == "POST" and form.is_valid() and form.cleaned_data.get("coupon") and chosen_price \
            and chosen_price.usage_only:  # no fixed fee to discount (usage never is)
        form.add_error("coupon", coupon_error(form.cleaned_data["coupon"], CouponRefusal.NO_FIXED_FEE))
    if request.method == "POST" and form.is_valid() and form.cleaned_data.get("coupon"):
        chosen_product = next(p for p in products if form.cleaned_data["product"] == p.SKU)
        try:
            form.cleaned_data["coupon"] = _checked_coupon(
                form.cleaned_data["coupon"], chosen_price.currency if chosen_price else chosen_product.Currency).Code
        except access.CouponRefused as refused:
            form.add_error("coupon", coupon_error(refused.code, refused.reason))
    verdict = checked_vat_number(request, form, wallet_now.account) if request.method == "POST" else None
    if request.method == "POST" and form.is_valid():
        saved = cards.get(form.saved_card_id or "")
        if saved is not None:
            d = saved.Details
            card: CardToken | None = CardToken(token=d.Token, brand=d.Brand, last4=d.Last4, exp_month=d.ExpMonth,
                                               exp_year=d.ExpYear, country=d.Country)
            address, card_id = d.BillingAddress, saved.card_id
        else:
            card, address, card_id = tokenize_card_form(form), form.billing_address_text(), access.new_id()
        if card is not None:
            # The confirm step gets the token, never the card number or CVC.
            request.session[SESSION_PENDING] = {
                "sku": form.cleaned_data["product"],
                "payment_day": form.cleaned_data["payment_day"],
                "card": {"token": card.token, "brand": card.brand, "last4": card.last4,
                         "exp_month": card.exp_month, "exp_year": card.exp_year, "country": card.country},
                "billing_address": address,
                # The tax identity, stored on the account when the customer confirms.
                "billing_country": form.cleaned_data["billing_country"],
                "vat": pending_vat(verdict),
                # The wallet card: a new one joins the wallet once subscribed,
                # as the default when the wallet is empty.
                "card_id": card_id, "new_card": saved is None, "make_default": not cards,
                "coupon": form.cleaned_data.get("coupon") or None,
                # The chosen price (none: the product's monthly default) and its seats.
                **({"price_id": chosen_price.stored_price_id, "quantity": chosen_price.quantity}
                   if chosen_price and chosen_price.stored_price_id else {}),
                # A metered price alone is the price chosen; else the product's metered prices
                # in that currency and cadence, their usage billed in arrears beside it.
                **({"price_id": chosen_price.price_id} if chosen_price and chosen_price.usage_only else
                   _pending_metered(metered, form.cleaned_data["product"],
                                    chosen_price.currency if chosen_price else
                                    next(p.Currency for p in products if form.cleaned_data["product"] == p.SKU),
                                    _cadence(chosen_price))),
            }
            return redirect("subscribe_confirm")
    return render(request, "portal/subscribe.html", {"form": form, "products": products})


def _offer_words(price: Price, metered: list[Price]) -> str:
    """A price offered on step 1, in words, with the metered prices billed beside it; a
    metered price offered for its usage alone says it has no fixed fee."""
    words = price_words_of(price)
    if price.Meter:
        return _("Usage alone, no fixed fee: %(words)s") % {"words": words}
    return f"{words} · {usage_words(metered)}" if metered else words


def _pending_metered(metered: dict[tuple[str, str, Cadence], list[Price]], sku: str, currency: str,
                     cadence: Cadence) -> dict[str, list[str]]:
    prices = metered.get((sku, currency.upper(), cadence))
    return {"metered_price_ids": [price.PriceId for price in prices]} if prices else {}


def _price_refused(request: HttpRequest, refused: PriceRefused, back: str) -> HttpResponse:
    """The price chosen on step 1 cannot be subscribed to any more: nothing charged."""
    pending = request.session.get(SESSION_PENDING) or {}
    pending.pop("price_id", None)
    pending.pop("quantity", None)
    pending.pop("metered_price_id", None)
    pending.pop("metered_price_ids", None)
    request.session[SESSION_PENDING] = pending
    messages.error(request, _("%(reason)s You have not been subscribed and nothing was charged.") % {
        "reason": str(refused)})
    return redirect(back)


def tax_identity_initial(account: Any) -> dict[str, str]:
    """The account's billing country and VAT number, to prefill a form with. An account
    without a country yet is offered its default card's country, else the seller's (from
    the settings: no read), preselected but shown, to be changed where it is wrong."""
    if account is None:
        return {}
    country = account.BillingCountry or account.CardCountry or access.default_seller_profile().Country
    return {"billing_country": country or "", "vat_number": account.VatNumber or ""}


def checked_vat_number(request: HttpRequest, form: Any, account: Any) -> tax_identity.VatVerdict | None:
    """The VAT number of a valid posted form (tax identity fields) checked with VIES when
    that is on: a number VIES says is not registered is a field error; VIES unreachable
    keeps it "format valid", and the page says so. None: no number (or an invalid form)."""
    if not form.is_valid() or not form.cleaned_data.get("vat_number"):
        return None
    verdict = tax_identity.verify_vat_number(form.cleaned_data["vat_number"], account)
    if verdict.vies_refused:
        form.add_error("vat_number", vies_refused_error())
    elif verdict.vies_unreachable:
        messages.warning(request, _("The EU's VIES service could not be reached to confirm your VAT number: it "
                                    "is kept as checked by its format, and confirmed when you save it again."))
    return verdict


def pending_vat(verdict: tax_identity.VatVerdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    return {"number": verdict.number, "check": verdict.check.value,
            "checked_on": verdict.checked_on.isoformat() if verdict.checked_on else None}


def verdict_from(pending: dict[str, Any] | None) -> tax_identity.VatVerdict | None:
    if not pending:
        return None
    checked_on = pending.get("checked_on")
    return tax_identity.VatVerdict(pending["number"], tax_identity.VatCheck(pending["check"]),
                                   date.fromisoformat(checked_on) if checked_on else None)


def _day_from(value: str | None, high: int = 31) -> int | None:
    """A payment day (or a number up to ``high``) from the query string, or None when it
    is not one."""
    try:
        day = int(value or "")
    except ValueError:
        return None
    return day if 1 <= day <= high else None


def _confirmed_quote(form: ConfirmForm) -> dict[str, Any] | None:
    """The quote the customer saw, if its signature holds and it is not too old."""
    try:
        return signing.loads(form.cleaned_data["quote"], salt=QUOTE_SALT, max_age=QUOTE_MAX_AGE)
    except signing.BadSignature:  # includes SignatureExpired
        return None


def pending_buyer(pending: dict[str, Any]) -> SimpleNamespace | None:
    """The buyer step 1 named (its billing country, and a VAT number that passed the
    checks), as the subscription will carry them: the quote is taxed as the charge will
    be. None before a country was chosen (the seller's then, as the charge's)."""
    if not pending.get("billing_country"):
        return None
    return SimpleNamespace(BillingCountry=pending["billing_country"], VatNumber=(pending.get("vat") or {}).get("number"))


@require_http_methods(["GET", "POST"])
@customer_required
def subscribe_confirm(request: HttpRequest, account_id: str) -> HttpResponse:
    pending = request.session.get(SESSION_PENDING)
    if not pending:
        messages.info(request, _("Start by choosing a product."))
        return redirect("subscribe")
    product = access.get_product(pending["sku"])
    if product is None or product.Status != ProductStatus.ACTIVE:
        request.session.pop(SESSION_PENDING, None)
        messages.error(request, _("That product is no longer available. Please choose another one."))
        return redirect("subscribe")
    day = int(pending["payment_day"])
    change = urlencode({"product": product.SKU, "day": day,
                        "card": NEW_CARD if pending.get("new_card", True) else pending.get("card_id"),
                        **({"price": pending["price_id"], "quantity": pending.get("quantity") or 1}
                           if pending.get("price_id") else {})})
    try:
        choice, chosen_words = _chosen_price(pending, product)
        metered = _chosen_metered(pending, product, choice.currency if choice else product.Currency)
    except PriceRefused as refused:
        return _price_refused(request, refused, f"{reverse('subscribe')}?{change}")
    coupon = None
    if pending.get("coupon"):
        try:
            coupon = _checked_coupon(pending["coupon"], choice.currency if choice else product.Currency)
        except access.CouponRefused as refused:
            return _coupon_refused(request, refused, f"{reverse('subscribe')}?{change}")
    trial_days, trial_used = _trial_days(account_id, product, choice)
    quote = quote_for(product, day, today(), coupon, trial_days, buyer=pending_buyer(pending), choice=choice,
                      metered=metered)
    card = CardToken(**pending["card"])
    # A second subscription to a product the customer has is asked about, not refused.
    subscriptions = access.get_subscriptions_by_account(account_id)
    already = [s for s in subscriptions if s.is_live and s.SKU == product.SKU]
    form = ConfirmForm(bound_data(request), already=bool(already))
    requote = False
    if request.method == "POST" and form.is_valid():
        seen = _confirmed_quote(form)
        if seen == quote:
            try:
                return _subscribe_at(request, account_id, product, quote, card, pending, coupon,
                                     subscriptions=subscriptions)
            except access.CouponRefused as refused:  # used up (or ended) since the page was shown
                return _coupon_refused(request, refused, f"{reverse('subscribe')}?{change}")
        requote = True
        if seen and (seen.get("price"), seen.get("currency")) != (quote["price"], quote["currency"]):
            messages.warning(request, _price_changed(product, seen, quote))
        else:
            messages.warning(request, _("The details of this subscription have changed since the page was shown. "
                                        "Nothing was charged: please check them and confirm again."))
    if not (request.method == "POST" and form.errors):  # a missing "subscribe again" tick keeps its error
        form = ConfirmForm(initial={"quote": signing.dumps(quote, salt=QUOTE_SALT)}, already=bool(already))
    return render(request, "portal/subscribe_confirm.html", {
        "form": form, "product": product, "payment_day": day, "card": card, "requote": requote,
        "quote": _quote_context(quote), "billing_address": pending.get("billing_address"),
        "billing_country": country_name(pending.get("billing_country")),
        "vat_number": (pending.get("vat") or {}).get("number"),
        "already": already, "change_url": f"{reverse('subscribe')}?{change}", "trial_used": trial_used,
        # usage alone: no fixed price's words, the metered price's as its usage
        "price_words": "" if choice is not None and choice.usage_only else chosen_words,
        "usage_words": chosen_words if choice is not None and choice.usage_only else
        metered_words(metered),
    }, status=409 if requote else 200)


def _price_changed(product: Product, seen: dict[str, Any], quote: dict[str, Any]) -> str:
    """The price shown and the price now, each per its own period ("$99.00 a year")."""
    if _cadence_of_quote(seen) == _cadence_of_quote(quote) == ("month", 1):
        return _("The price of %(product)s has changed from %(old)s to %(new)s a month. "
                 "Nothing was charged: please check the new price and confirm again.") % {
            "product": product.Name, "old": format_with_symbol(seen["price"], seen["currency"]),
            "new": format_with_symbol(quote["price"], quote["currency"])}
    return _("The price of %(product)s has changed from %(old)s to %(new)s. "
             "Nothing was charged: please check the new price and confirm again.") % {
        "product": product.Name,
        "old": amount_every(format_with_symbol(seen["price"], seen["currency"]), *_cadence_of_quote(seen)),
        "new": amount_every(format_with_symbol(quote["price"], quote["currency"]), *_cadence_of_quote(quote))}


def _coupon_refused(request: HttpRequest, refused: access.CouponRefused, back: str) -> HttpResponse:
    """The coupon chosen on step 1 cannot be used any more: nothing charged, back to step 1."""
    pending = request.session.get(SESSION_PENDING) or {}
    pending.pop("coupon", None)
    request.session[SESSION_PENDING] = pending
    messages.error(request, _("%(reason)s You have not been subscribed and nothing was charged.") % {
        "reason": coupon_error(refused.code, refused.reason)})
    return redirect(back)


def _subscribe_at(request: HttpRequest, account_id: str, product: Product, quote: dict[str, Any],
                  card: CardToken, pending: dict[str, Any], coupon: Coupon | None = None,
                  subscriptions: list[Subscription] | None = None) -> HttpResponse:
    account = access.get_account(account_id)
    if account is None:
        raise Http404("no account")
    if not pending.get("new_card") and pending.get("card_id") and access.get_card(account_id, pending["card_id"]) is None:
        # The wallet card chosen on step 1 was removed meanwhile (another tab): not charged.
        request.session.pop(SESSION_PENDING, None)
        messages.error(request, _("The card you chose was removed from your wallet meanwhile, so you have not been "
                                  "subscribed and nothing was charged. Please choose a card again."))
        return redirect("subscribe")
    if pending.get("billing_country"):
        # The country (and VAT number) confirmed with the subscription: the account's from
        # now on, copied onto its live subscriptions and the new one (``create_subscription``).
        tax_identity.change_tax_identity(account, pending["billing_country"], verdict_from(pending.get("vat")),
                                         actor=actor(request), subscriptions=subscriptions)
    try:
        started = actions.subscribe(
            account, sku=product.SKU, product_name=product.Name, payment_day=quote["payment_day"],
            amount=quote["price"], currency=quote["currency"], card=card, today=today(),
            actor=actor(request), billing_address=pending.get("billing_address"), card_id=pending.get("card_id"),
            keep_card=bool(pending.get("new_card")), make_default=bool(pending.get("make_default")),
            coupon=coupon, trial_days=quote.get("trial_days", 0), interval=quote.get("interval"),
            interval_count=quote.get("interval_count"), price_id=quote.get("price_id"),
            quantity=quote.get("quantity"), unit_amount=quote.get("unit_amount"),
            # usage alone: its price; else the product's metered prices, billed beside the fee
            metered_price_id=quote.get("metered_price_id") or next(iter(quote.get("metered_price_ids") or []), None),
            more_metered_price_ids=tuple((quote.get("metered_price_ids") or [])[1:]),
            tax_behavior=quote.get("tax_behavior"),
        )
    except access.TrialAlreadyUsed:
        # Another tab (or click) took this product's trial just now: the new quote, without it.
        messages.warning(request, _("You have already had the free trial of %(product)s, so this subscription "
                                    "would be charged today. Nothing was charged: please check and confirm "
                                    "again.") % {"product": product.Name})
        return redirect("subscribe_confirm")
    except GatewayError:
        messages.error(request, _("Our payment provider could not be reached, so you have not been subscribed "
                                  "and nothing was charged. Please try again in a few minutes."))
        return redirect("subscribe_confirm")
    request.session.pop(SESSION_PENDING, None)
    if started.awaits_authentication:
        request.session[SESSION_AUTHENTICATE] = {
            "sub_id": started.sub.sub_id, "sku": product.SKU, "charge_id": started.outcome.charge_id,
            "client_secret": started.outcome.client_secret, "product_name": product.Name,
            "amount": quote["price"], "currency": quote["currency"], "first_amount": started.outcome.amount,
            "card": pending["card"], "billing_address": pending.get("billing_address"),
            "card_id": pending.get("card_id"), "new_card": bool(pending.get("new_card")),
            "make_default": bool(pending.get("make_default")),
        }
        return redirect("subscribe_authenticate")
    return started_page(request, started, product.Name, quote["currency"], card)


def choices_again(sub: Subscription, *, coupon: str | None = None) -> str:
    """The subscribe form with what the customer chose for ``sub`` (product, day, saved
    card, coupon), for another try after its first payment failed."""
    card_id = sub.PaymentDetails.CardId if sub.PaymentDetails else None
    query = {"product": sub.SKU, "day": sub.PaymentDay, "card": card_id or NEW_CARD}
    if coupon or sub.CouponCode:
        query["coupon"] = coupon or sub.CouponCode
    return f"{reverse('subscribe')}?{urlencode(query)}"


def declined_message(started: actions.Started, card: CardToken) -> str:
    """What happened to a first payment that did not go through, in words."""
    reason = started.outcome.reason or ""
    if started.expired:
        return _("Your bank's confirmation came too late: the subscription expired 23 hours after it was made, so "
                 "it never started and nothing was charged. Please subscribe again.")
    if reason in ("authentication_failed", "authentication_required", "canceled"):
        return _("The payment was not confirmed with your bank (card ending in %(last4)s), so you have not been "
                 "subscribed and nothing was charged. You can try again, or use another card.") % {
            "last4": card.last4}
    return _("Your card ending in %(last4)s was declined (%(reason)s), so you have not been subscribed and nothing "
             "was charged. Your choices are kept below: please use another card.") % {
        "last4": card.last4, "reason": decline_reason(reason)}


def started_page(request: HttpRequest, started: actions.Started, product_name: str, currency: str,
                  card: CardToken) -> HttpResponse:
    if not started.started:
        messages.error(request, declined_message(started, card))
        return redirect(choices_again(started.sub))
    sub, out = started.sub, started.outcome
    if started.in_trial:
        messages.success(request, _(
            "You are subscribed to %(product)s. Your free trial runs until %(trial_end)s: nothing was charged. "
            "Your first payment, %(amount)s, is on %(next)s.") % {
            "product": product_name, "trial_end": local_date(sub.TrialEnd, "j F Y"),
            "amount": format_with_symbol(out.amount or 0, currency), "next": local_date(sub.NextPaymentDate, "j F Y")})
        return redirect("subscription", sub_id=sub.sub_id)
    if usage_only(sub):
        messages.success(request, _(
            "You are subscribed to %(product)s. Nothing was charged today: you pay for your usage, from your next "
            "payment on %(next)s.") % {"product": product_name, "next": local_date(sub.NextPaymentDate, "j F Y")})
        return redirect("subscription", sub_id=sub.sub_id)
    messages.success(request, _(
        "You are subscribed to %(product)s. We charged %(amount)s for %(start)s to %(end)s; "
        "your next payment is on %(next)s.") % {
        "product": product_name, "amount": format_with_symbol(out.amount or 0, currency),
        "start": local_date(out.period, "j F"), "end": local_date(out.period_end, "j F Y"),
        "next": local_date(sub.NextPaymentDate, "j F Y")})
    return redirect("subscription", sub_id=sub.sub_id)


@require_http_methods(["GET", "POST"])
@customer_required
def subscribe_authenticate(request: HttpRequest, account_id: str) -> HttpResponse:
    """The bank asks the customer to confirm the first charge (3-D Secure): the page confirms
    the PaymentIntent with Stripe.js (static/js/card-authenticate.js), then posts here and the
    server asks Stripe how it ended. Leaving the page leaves the subscription waiting: a later
    payment run tries the same charge again (the same key), and the reconciliation records
    it should the customer have confirmed it without coming back."""
    waiting = request.session.get(SESSION_AUTHENTICATE)
    if not waiting:
        return redirect("subscribe")
    sub = access.get_subscription(account_id, waiting["sub_id"], sku=waiting["sku"])
    if sub is None:
        request.session.pop(SESSION_AUTHENTICATE, None)
        raise Http404("no such subscription")
    card = CardToken(**waiting["card"])
    if request.method != "POST" and is_expired_incomplete(sub):
        # Come back after its 23 hours: it expired, nothing is asked of the bank any more.
        request.session.pop(SESSION_AUTHENTICATE, None)
        messages.error(request, _("Your bank's confirmation came too late: the subscription expired 23 hours after "
                                  "it was made, so it never started and nothing was charged. Please subscribe "
                                  "again."))
        return redirect(choices_again(sub))
    if request.method == "POST":
        new = actions.NewSubscription(
            waiting["product_name"], waiting["amount"], waiting["currency"], card, waiting.get("billing_address"),
            waiting.get("card_id"), waiting.get("new_card", False), waiting.get("make_default", False))
        answer = request.POST.get("bank")  # the simulated gateway's own bank page
        try:
            started = actions.confirm_first_payment(sub, waiting["charge_id"], new, today=today(), actor=actor(request),
                                                    bank_answer=None if answer is None else answer == "approve")
        except GatewayError:
            messages.error(request, _("Our payment provider could not be reached to say how the confirmation "
                                      "ended. Please try again in a minute."))
            return redirect("subscribe_authenticate")
        if not started.awaits_authentication:
            request.session.pop(SESSION_AUTHENTICATE, None)
            return started_page(request, started, waiting["product_name"], waiting["currency"], card)
        waiting["client_secret"] = started.outcome.client_secret or waiting["client_secret"]
        messages.warning(request, _("Your bank has not confirmed the payment yet. Please confirm it below."))
    entry = CardEntry(client_secret=waiting["client_secret"], publishable_key=settings.STRIPE_PUBLISHABLE_KEY,
                      js_url=settings.STRIPE_JS_URL)
    return render(request, "portal/subscribe_authenticate.html", {
        "entry": entry, "product_name": waiting["product_name"], "card": card, "sub": sub,
        "simulated_bank": not cards_entered_in_browser(), "back_url": choices_again(sub),
        "amount": format_with_symbol(waiting.get("first_amount") or waiting["amount"], waiting["currency"]),
    })
