"""The API's reads: customers, their subscriptions and receipts (and a receipt's PDF),
products, coupons, disputes. Any live key may call them. Each is a fixed number of
requests: one GetItem or Query per object or page (docs/API.md lists them)."""


from collections.abc import Callable
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from ninja import Query, Router, Schema
from pydantic import Field

from billing import access
from billing.api.auth import read_key
from billing.api.errors import ApiError, found
from billing.api.paging import DEFAULT_LIMIT, MAX_LIMIT, page_body, start_key
from billing.api.schemas import (
    PRINTABLE,
    CouponOut,
    CustomerOut,
    ErrorOut,
    KeyId,
    ListOut,
    ProductOut,
    ReceiptOut,
    SubscriptionOut,
    whole_number,
)
from billing.models import Account, Receipt, Subscription
from billing.rules import api_objects
from billing.views.receipt_pdf import pdf_filename, render_receipt_pdf
from core.pages import today

router = Router(auth=read_key, tags=["reads"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 429: ErrorOut}


class Paging(Schema):
    limit: whole_number(1, MAX_LIMIT) = DEFAULT_LIMIT
    cursor: str | None = Field(None, max_length=2000)


def ok(body: dict) -> JsonResponse:
    return JsonResponse(body)


def listed(paging: Paging, scope: str, read: Callable[..., access.Page], show: Callable[[Any], dict]) -> JsonResponse:
    """A page of a list: ``read`` (one Query) from where the cursor left off, each item as
    ``show`` gives it, and the next page's cursor, good for this list (``scope``) only."""
    page = read(limit=paging.limit, start=start_key(paging.cursor, scope))
    return ok(page_body(page, scope, [show(item) for item in page.items]))


# --- customers ----------------------------------------------------------------------------


def account_or_404(customer_id: str) -> Account:
    return found(access.get_account(customer_id), "customer", "customer_id")


@router.get("/customers", response={200: ListOut, **ERRORS}, summary="Find a customer by e-mail")
def find_customer(request: HttpRequest, email: str = Query(..., max_length=254, pattern=PRINTABLE)) -> JsonResponse:
    """The customer whose log-in e-mail is ``email`` (case-insensitive): a list of zero or
    one. One look-up in the user database, then two GetItems."""
    user = get_user_model().objects.filter(email__iexact=email.strip()).order_by("pk").first()
    account_id = access.get_account_id_for_user(user.pk) if user is not None else None
    account = access.get_account(account_id) if account_id else None
    shown = [api_objects.customer_object(account)] if account is not None else []
    return ok({"object": "list", "data": shown, "has_more": False, "next_cursor": None})


@router.get("/customers/{customer_id}", response={200: CustomerOut, **ERRORS}, summary="A customer")
def get_customer(request: HttpRequest, customer_id: KeyId) -> JsonResponse:
    return ok(api_objects.customer_object(account_or_404(customer_id)))


# --- subscriptions ------------------------------------------------------------------------


def subscription_or_404(sub_id: str) -> Subscription:
    """By its id alone: the id's look-up item (GetItem), then the subscription (Query)."""
    account_id = access.get_account_id_for_subscription(sub_id)
    return found(access.get_subscription(account_id, sub_id) if account_id else None, "subscription",
                 "subscription_id")


@router.get("/customers/{customer_id}/subscriptions", response={200: ListOut, **ERRORS},
            summary="A customer's subscriptions")
def list_subscriptions(request: HttpRequest, customer_id: KeyId, paging: Query[Paging]) -> JsonResponse:
    """One Query per page (an unknown customer has none)."""
    return listed(paging, f"subscriptions:{customer_id}", partial(access.subscriptions_page, customer_id),
                  partial(api_objects.subscription_object, today=today()))


@router.get("/subscriptions/{subscription_id}", response={200: SubscriptionOut, **ERRORS}, summary="A subscription")
def get_subscription(request: HttpRequest, subscription_id: KeyId) -> JsonResponse:
    return ok(api_objects.subscription_object(subscription_or_404(subscription_id), today()))


# --- receipts -----------------------------------------------------------------------------


def receipt_or_404(customer_id: str, receipt_id: str) -> Receipt:
    """By number (R-2026-000123: two GetItems), or by key for a receipt without one."""
    return found(access.get_receipt_for_url(customer_id, receipt_id), "receipt", "receipt_id")


@router.get("/customers/{customer_id}/receipts", response={200: ListOut, **ERRORS},
            summary="A customer's receipts, newest first")
def list_receipts(request: HttpRequest, customer_id: KeyId, paging: Query[Paging]) -> JsonResponse:
    return listed(paging, f"receipts:{customer_id}", partial(access.receipts_page, customer_id),
                  api_objects.receipt_object)


@router.get("/customers/{customer_id}/receipts/{receipt_id}", response={200: ReceiptOut, **ERRORS},
            summary="A receipt")
def get_receipt(request: HttpRequest, customer_id: KeyId, receipt_id: str) -> JsonResponse:
    return ok(api_objects.receipt_object(receipt_or_404(customer_id, receipt_id)))


@router.get("/customers/{customer_id}/receipts/{receipt_id}/pdf", response={200: None, **ERRORS},
            summary="A receipt as PDF", openapi_extra={
                "responses": {200: {"description": "the receipt", "content": {"application/pdf": {}}}}})
def get_receipt_pdf(request: HttpRequest, customer_id: KeyId, receipt_id: str) -> HttpResponse:
    """The same PDF the customer downloads, in the language the receipt was paid in."""
    receipt = receipt_or_404(customer_id, receipt_id)
    with translation.override(receipt.Language or settings.LANGUAGE_CODE):
        pdf = render_receipt_pdf(receipt, settings.RPAY_SELLER)
    response = HttpResponse(pdf, content_type="application/pdf")
    # the name the portal's download has (docs/PORTAL.md): one promise, one function
    response["Content-Disposition"] = f'attachment; filename="{pdf_filename(receipt)}"'
    return response


# --- the catalog, coupons, disputes -----------------------------------------------------


@router.get("/products", response={200: ListOut, **ERRORS}, summary="The products, retired ones too")
def list_products(request: HttpRequest, paging: Query[Paging]) -> JsonResponse:
    return listed(paging, "products", access.products_page, api_objects.product_object)


@router.get("/products/{product_id}", response={200: ProductOut, **ERRORS}, summary="A product")
def get_product(request: HttpRequest, product_id: KeyId) -> JsonResponse:
    return ok(api_objects.product_object(found(access.get_product(product_id), "product", "product_id")))


@router.get("/coupons", response={200: ListOut, **ERRORS}, summary="The coupons")
def list_coupons(request: HttpRequest, paging: Query[Paging]) -> JsonResponse:
    return listed(paging, "coupons", access.coupons_page, partial(api_objects.coupon_object, today=today()))


@router.get("/coupons/{code}", response={200: CouponOut, **ERRORS}, summary="A coupon")
def get_coupon(request: HttpRequest, code: KeyId) -> JsonResponse:
    return ok(api_objects.coupon_object(found(access.get_coupon(code.strip().upper()), "coupon", "code"), today()))


@router.get("/disputes", response={200: ListOut, **ERRORS}, summary="The disputes, newest opened first")
def list_disputes(request: HttpRequest, paging: Query[Paging]) -> JsonResponse:
    return listed(paging, "disputes", access.disputes_page, api_objects.dispute_object)


# --- events ---------------------------------------------------------------------------------


class EventsPage(Schema):
    after: str | None = Field(None, max_length=64, description="the id of the last event you have")
    limit: whole_number(1, MAX_LIMIT) = DEFAULT_LIMIT


@router.get("/events", response={200: ListOut, **ERRORS}, summary="The events after one, oldest first")
def list_events(request: HttpRequest, paging: Query[EventsPage]) -> JsonResponse:
    """The merchant's events (the ones the webhooks post), in order, after ``after`` (from
    the oldest kept when absent). Only events at least a few seconds old are listed, so a
    change still committing is never stepped over: continue with ``after`` = the last id
    you have (``next_after``). One Query per UTC day from ``after``'s day to today (read on
    past the expired events a day still holds, so a page is never short of live ones)."""
    try:
        events, _ = access.events_after(paging.after, limit=paging.limit, until=access.settled_before())
    except ValueError:
        raise ApiError(400, "after is not an event id.", param="after") from None
    shown = [api_objects.event_object(e) for e in events]
    return ok({"object": "list", "data": shown, "has_more": len(shown) == paging.limit,
               "next_after": shown[-1]["id"] if shown else paging.after})
