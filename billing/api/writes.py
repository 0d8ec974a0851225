"""The API's writes, through the same actions the pages call (billing/actions/: the one
writer, each change with its audit event and e-mail), with the key's name as the actor
(``api:<name>``). A ``write`` key only; each honours ``Idempotency-Key``
(billing/api/idempotency.py). A refusal the pages would show as a message is a 4xx here
with the same reason in ``message``."""


import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.utils import translation

from billing import access
from billing.actions import catalog as catalog_actions
from billing.actions import coupons as coupon_actions
from billing.actions import lifecycle as lifecycle_actions
from billing.actions import subscriptions as subscription_actions
from billing.actions import switch as switch_actions
from billing.actions import webhook_endpoints as endpoint_actions
from billing.api.auth import actor_of, key_of, write_key
from billing.api.errors import ApiError
from billing.api.idempotency import HEADER, fingerprint, idempotent
from billing.api.reads import ERRORS, receipt_or_404, router, subscription_or_404
from billing.api.schemas import (
    ApplyCouponIn,
    CancelIn,
    CouponIn,
    CouponOut,
    ErrorOut,
    KeyId,
    ListOut,
    PauseIn,
    PaymentDayIn,
    ProductIn,
    ProductOut,
    ReceiptOut,
    RefundIn,
    SubscriptionOut,
    SwitchIn,
    WebhookEndpointIn,
    WebhookEndpointOut,
)
from billing.exceptions import PauseRefused
from billing.forms import coupon_error
from billing.models import Receipt, Subscription
from billing.operations.refunds import refund_receipt
from billing.rules import api_objects
from billing.rules.cadence_words import NO_PAYMENT_DAY
from billing.rules.coupons import normalize_code
from billing.rules.lifecycle import CancelMode, can_keep, pause_end, state_of
from billing.rules.schedule import cadence_of
from billing.rules.switch import SwitchRefused
from core.money import is_payable_currency
from core.net import UnsafeURL
from core.pages import today
from core.payments.errors import GatewayError, RefundRefused

WRITE_ERRORS = {**ERRORS, 409: ErrorOut}
IDEMPOTENCY_DOC = {"parameters": [{
    "in": "header", "name": HEADER, "required": False, "schema": {"type": "string", "maxLength": 255},
    "description": "The same key and body within 24 hours replays the first answer; another body is a 409.",
}]}
CHANGED = "The subscription changed meanwhile; nothing was done. Read it again."


def write_route(path: str, out: Any, summary: str, status: int = 200) -> Callable:
    """A POST route: documented with its Idempotency-Key, run at most once per key."""

    def decorate(view: Callable[..., JsonResponse]) -> Callable[..., JsonResponse]:
        # On the reads' router (one URL pattern per path: a GET and a POST of one path
        # must share it), with the write key's check.
        return router.post(path, response={status: out, **WRITE_ERRORS}, summary=summary, auth=write_key,
                           tags=["writes"], openapi_extra=IDEMPOTENCY_DOC)(idempotent(view))

    return decorate


@contextmanager
def refusals() -> Iterator[None]:
    """The actions' refusals as the API's errors, worded in English (the pages' words)."""
    with translation.override("en"):
        try:
            yield
        except access.CouponRefused as refused:
            raise ApiError(400, coupon_error(refused.code, refused.reason), param="code") from None
        except access.PaymentInProgress:
            raise ApiError(409, "Today's payment is being taken: try again after the payment run.") from None
        except access.ConditionFailed:
            raise ApiError(409, CHANGED) from None
        except (PauseRefused, SwitchRefused) as refused:
            raise ApiError(409, str(refused), type="invalid_state") from None
        except switch_actions.SwitchDeclined as declined:
            raise ApiError(409, f"The card was declined ({declined}): nothing was switched.", type="card_error") from None
        except RefundRefused as refused:
            raise ApiError(409, f"The payment processor refused the refund: {refused.reason}.",
                           type="refund_refused") from None
        except GatewayError:
            raise ApiError(503, "The payment processor could not be reached: nothing was done. Try again with the "
                                "same Idempotency-Key.", headers={"Retry-After": "5"}) from None


def shown(sub: Subscription, status: int = 200) -> JsonResponse:
    return JsonResponse(api_objects.subscription_object(sub, today()), status=status)


# --- a subscription -------------------------------------------------------------------------


@write_route("/subscriptions/{subscription_id}/cancel", SubscriptionOut, "Cancel a subscription")
def cancel(request: HttpRequest, subscription_id: KeyId, body: CancelIn) -> JsonResponse:
    """At period end (the default: served to the last day paid for, then it ends; "keep"
    undoes it until then) or now (ends today; the days paid after today are refunded)."""
    sub = subscription_or_404(subscription_id)
    day = today()
    kind = state_of(sub, day).kind
    if not sub.is_live and kind != "cancelling":
        raise ApiError(409, "This subscription has ended (or never started): there is nothing to cancel.",
                       type="invalid_state")
    if kind == "cancelling" and body.at == CancelMode.PERIOD_END:
        raise ApiError(409, "This subscription is already cancelled at the end of its period.", type="invalid_state")
    with refusals():
        if body.at == CancelMode.PERIOD_END:
            lifecycle_actions.cancel_at_period_end(sub, today=day, actor=actor_of(request), reason=body.reason,
                                                   comment=body.comment)
        else:
            sub = lifecycle_actions.cancel_now(sub, today=day, actor=actor_of(request), reason=body.reason,
                                               comment=body.comment).sub
    return shown(sub)


@write_route("/subscriptions/{subscription_id}/keep", SubscriptionOut, "Keep a subscription cancelled at period end")
def keep(request: HttpRequest, subscription_id: KeyId) -> JsonResponse:
    sub = subscription_or_404(subscription_id)
    day = today()
    if not can_keep(sub, day):
        raise ApiError(409, "Only a subscription cancelled at period end, before that end, can be kept.",
                       type="invalid_state")
    with refusals():
        lifecycle_actions.keep(sub, today=day, actor=actor_of(request))
    return shown(sub)


@write_route("/subscriptions/{subscription_id}/pause", SubscriptionOut, "Pause a subscription's payments")
def pause(request: HttpRequest, subscription_id: KeyId, body: PauseIn) -> JsonResponse:
    """For ``payments`` payments, until ``until``, or (neither) until resumed."""
    if body.payments is not None and body.until is not None:
        raise ApiError(400, "Give payments or until, not both.", param="until")
    sub = subscription_or_404(subscription_id)
    day = today()
    with refusals():
        resume = pause_end(sub, day, payments=body.payments, until=body.until)
        lifecycle_actions.pause(sub, resume=resume, today=day, actor=actor_of(request))
    return shown(sub)


@write_route("/subscriptions/{subscription_id}/resume", SubscriptionOut, "Resume a paused subscription")
def resume(request: HttpRequest, subscription_id: KeyId) -> JsonResponse:
    sub = subscription_or_404(subscription_id)
    if state_of(sub, today()).kind != "paused":
        raise ApiError(409, "This subscription is not paused.", type="invalid_state")
    with refusals():
        lifecycle_actions.resume(sub, today=today(), actor=actor_of(request))
    return shown(sub)


@write_route("/subscriptions/{subscription_id}/switch", SubscriptionOut, "Switch a subscription to another price")
def switch(request: HttpRequest, subscription_id: KeyId, body: SwitchIn) -> JsonResponse:
    """To ``price`` (any active price of this product or another, whatever its interval) or
    to ``product`` (its default monthly price). When it applies is docs/MONEY.md's
    "Switching price or cadence": a higher price of the same interval, or a longer
    interval, now (charged off-session now: a bank that asks the customer to confirm
    refuses it here; the customer can switch from the portal); a lower price or a shorter
    interval from the next payment. ``GET .../switch_preview`` shows the amounts first."""
    choice = switch_choice(body.price, body.product)
    sub = subscription_or_404(subscription_id)
    day = today()
    with refusals():
        expected = None
        if body.expected_amount_due is not None:
            expected = switch_actions.quote(sub, choice, today=day)
            if switch_actions.charged_now(sub, expected) != body.expected_amount_due:
                raise switch_actions.QuoteChanged("The amount due changed since the preview: nothing was charged. "
                                                  "Read the preview again.")
        done = switch_actions.switch(sub, choice, today=day, actor=actor_of(request), expected=expected,
                                     on_session=False)
    if done.client_secret:
        switch_actions.abandon(done, today=day)
        raise ApiError(409, "The customer's bank asks them to confirm this payment: nothing was switched. The "
                            "customer can switch from their portal.", type="card_error")
    return shown(done.sub)


def switch_choice(price: str | None, product: str | None) -> str:
    """The switch's target as the actions name it: a price's id, or a product's SKU."""
    if bool(price) == bool(product):
        raise ApiError(400, "Give price (a price's id) or product (a SKU), one of them.", param="price")
    return price.strip() if price else (product or "").strip().upper()


@write_route("/subscriptions/{subscription_id}/payment_day", SubscriptionOut, "Change the payment day")
def change_payment_day(request: HttpRequest, subscription_id: KeyId, body: PaymentDayIn) -> JsonResponse:
    """The days paid stay paid: the next payment keeps its date and covers the days to the
    new day, prorated, plus the month after."""
    sub = subscription_or_404(subscription_id)
    if not sub.is_live:
        raise ApiError(409, "A cancelled subscription has no payment day to change.", type="invalid_state")
    if not sub.NextPaymentDate:
        raise ApiError(409, "This subscription is paused: resume it first.", type="invalid_state")
    if not cadence_of(sub).has_payment_day:
        with translation.override("en"):
            raise ApiError(409, str(NO_PAYMENT_DAY), type="invalid_state")
    with refusals():
        subscription_actions.change_payment_day(sub, body.payment_day, actor=actor_of(request))
    return shown(sub)


@write_route("/subscriptions/{subscription_id}/coupon", SubscriptionOut, "Apply a coupon from the next payment")
def apply_coupon(request: HttpRequest, subscription_id: KeyId, body: ApplyCouponIn) -> JsonResponse:
    code = normalize_code(body.code)
    if code is None:
        raise ApiError(400, "A coupon code is letters, digits and '-', at most 32.", param="code")
    sub = subscription_or_404(subscription_id)
    if not sub.is_live:
        raise ApiError(409, "A cancelled subscription cannot take a coupon.", type="invalid_state")
    with refusals():
        coupon = access.check_coupon(access.get_coupon(code), code, currency=sub.Currency, day=today())
        sub = coupon_actions.give_coupon(sub, coupon, today=today(), actor=actor_of(request))
    return shown(sub)


# --- a receipt ------------------------------------------------------------------------------


@write_route("/customers/{customer_id}/receipts/{receipt_id}/refund", ReceiptOut, "Refund a receipt")
def refund(request: HttpRequest, customer_id: KeyId, receipt_id: str, body: RefundIn) -> JsonResponse:
    """Refund ``amount`` (default: all that is left) to the card that paid. The receipt
    is claimed for this request first, so two refunds at once make one."""
    receipt = receipt_or_404(customer_id, receipt_id)
    left = int(receipt.ProcessedAmount) - int(receipt.RefundedAmount or 0)
    if left <= 0 or not receipt.ChargeId:
        raise ApiError(409, "This receipt has been refunded in full (or has no charge to refund).",
                       type="invalid_state")
    if body.line is not None:
        left = _line_left(receipt, body.line)
    amount = body.amount or left
    if amount > left:
        raise ApiError(400, f"At most {left} (minor units) is left to refund"
                            f"{'' if body.line is None else f' of line {body.line}'}.", param="amount")
    # The processor's refund key: one per Idempotency-Key and body, so a repeat whose first
    # answer was lost (a 5xx is not kept) refunds once; without the header, a new one.
    idem = request.headers.get(HEADER)
    request_id = hashlib.sha256(f"{key_of(request).KeyId}\n{idem}\n{fingerprint(request)}".encode()).hexdigest()[:32] \
        if idem else access.new_id()
    with refusals():
        try:
            done = refund_receipt(receipt, amount, request_id=request_id, actor=actor_of(request),
                                  reason=body.reason, expected_refunded=int(receipt.RefundedAmount or 0),
                                  line=body.line)
        except access.RefundedMeanwhile:
            raise ApiError(409, "This receipt was refunded meanwhile (or a refund of it is under way); nothing "
                                "more was refunded.") from None
    return JsonResponse(api_objects.receipt_object(done.receipt))


def _line_left(receipt: Receipt, line: int) -> int:
    """What invoice line ``line`` of ``receipt`` still holds, or the 400 saying why it
    cannot be refunded alone."""
    lines = access.refundable_lines(receipt)
    if lines is None:
        raise ApiError(400, "This receipt has no lines to refund one by one: leave out line.", param="line")
    if line >= len(lines):
        raise ApiError(400, f"This receipt has lines 0 to {len(lines) - 1}.", param="line")
    if lines[line][1] <= 0:
        raise ApiError(409, f"Line {line} has been refunded in full.", type="invalid_state")
    return lines[line][1]


# --- the catalog and coupons ----------------------------------------------------------------


@write_route("/products", ProductOut, "Create a product", status=201)
def create_product(request: HttpRequest, body: ProductIn) -> JsonResponse:
    currency = body.currency.upper()
    if not is_payable_currency(currency):
        raise ApiError(400, f"{currency} is not an ISO 4217 currency that can be paid in.", param="currency")
    try:
        product = catalog_actions.add_product(body.sku, body.name, body.amount, currency, body.description,
                                              actor=actor_of(request), trial_days=body.trial_days,
                                              add_on=body.add_on)
    except access.AlreadyExists:
        raise ApiError(409, f"A product {body.sku} exists already.", param="sku") from None
    return JsonResponse(api_objects.product_object(product), status=201)


@write_route("/coupons", CouponOut, "Create a coupon", status=201)
def create_coupon(request: HttpRequest, body: CouponIn) -> JsonResponse:
    code = normalize_code(body.code)
    if code is None:
        raise ApiError(400, "A coupon code is letters, digits and '-', at most 32.", param="code")
    if (body.percent_off is None) == (body.amount_off is None):
        raise ApiError(400, "Give percent_off or amount_off (with currency), one of them.", param="percent_off")
    currency = body.currency.upper() if body.currency else None
    if body.amount_off is not None and (currency is None or not is_payable_currency(currency)):
        raise ApiError(400, "An amount off needs the ISO 4217 currency it is in.", param="currency")
    if (body.duration == "repeating") != (body.duration_payments is not None):
        raise ApiError(400, "duration_payments is given with a repeating duration, and only then.",
                       param="duration_payments")
    if body.valid_from and body.valid_until and body.valid_until < body.valid_from:
        raise ApiError(400, "valid_until is before valid_from.", param="valid_until")
    try:
        coupon = coupon_actions.add_coupon(
            code, percent_off=body.percent_off, amount_off=body.amount_off,
            currency=currency if body.amount_off is not None else None, duration=body.duration.value,
            duration_payments=body.duration_payments, max_uses=body.max_uses, valid_from=body.valid_from,
            valid_until=body.valid_until, actor=actor_of(request))
    except access.AlreadyExists:
        raise ApiError(409, f"A coupon {code} exists already.", param="code") from None
    except ValueError as refused:
        raise ApiError(400, str(refused)) from None
    return JsonResponse(api_objects.coupon_object(coupon, today()), status=201)


@router.get("/webhook_endpoints", response={200: ListOut, **ERRORS}, summary="The webhook endpoints")
def list_webhook_endpoints(request: HttpRequest) -> JsonResponse:
    # A site has tens of endpoints, in one partition: one Query, one page.
    endpoints = access.list_endpoints()
    return JsonResponse({"object": "list", "data": [api_objects.webhook_endpoint_object(e) for e in endpoints],
                         "has_more": False, "next_cursor": None})


@write_route("/webhook_endpoints", WebhookEndpointOut, "Register a webhook endpoint", status=201)
def create_webhook_endpoint(request: HttpRequest, body: WebhookEndpointIn) -> JsonResponse:
    try:
        endpoint, secret = endpoint_actions.create_endpoint(body.url, body.event_types or None, actor=actor_of(request),
                                                            description=body.description)
    except UnsafeURL as refused:
        raise ApiError(400, str(refused), param="url") from None
    except ValueError as refused:
        raise ApiError(400, str(refused), param="event_types") from None
    return JsonResponse({**api_objects.webhook_endpoint_object(endpoint), "secret": secret}, status=201)
