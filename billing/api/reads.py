"""The API's reads: customers, their subscriptions and receipts (and a receipt's PDF),
products, coupons, disputes. Any live key may call them. Each is a fixed number of
requests: one GetItem or Query per object or page (docs/API.md lists them)."""


from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from ninja import Query, Router, Schema
from pydantic import Field

from billing import access
from billing.api.auth import read_key
from billing.api.errors import not_found
from billing.api.paging import DEFAULT_LIMIT, MAX_LIMIT, page_body, start_key
from billing.api.schemas import (
    CouponOut,
    CustomerOut,
    ErrorOut,
    ListOut,
    ProductOut,
    ReceiptOut,
    SubscriptionOut,
)
from billing.models import Account, Receipt, Subscription
from billing.rules import api_objects
from billing.views.receipt_pdf import render_receipt_pdf
from core.pages import today

router = Router(auth=read_key, tags=["reads"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 429: ErrorOut}


class Paging(Schema):
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    cursor: str | None = Field(None, max_length=2000)


def ok(body: dict) -> JsonResponse:
    return JsonResponse(body)


# --- customers ----------------------------------------------------------------------------


def account_or_404(customer_id: str) -> Account:
    account = access.get_account(customer_id)
    if account is None:
        raise not_found("customer", "customer_id")
    return account


@router.get("/customers", response={200: ListOut, **ERRORS}, summary="Find a customer by e-mail")
def find_customer(request: HttpRequest, email: str = Query(..., max_length=254)) -> JsonResponse:
    """The customer whose log-in e-mail is ``email`` (case-insensitive): a list of zero or
    one. One look-up in the user database, then two GetItems."""
    user = get_user_model().objects.filter(email__iexact=email.strip()).order_by("pk").first()
    account_id = access.get_account_id_for_user(user.pk) if user is not None else None
    account = access.get_account(account_id) if account_id else None
    shown = [api_objects.customer_object(account)] if account is not None else []
    return ok({"object": "list", "data": shown, "has_more": False, "next_cursor": None})


@router.get("/customers/{customer_id}", response={200: CustomerOut, **ERRORS}, summary="A customer")
def get_customer(request: HttpRequest, customer_id: str) -> JsonResponse:
    return ok(api_objects.customer_object(account_or_404(customer_id)))


# --- subscriptions ------------------------------------------------------------------------


def subscription_or_404(sub_id: str) -> Subscription:
    """By its id alone: the id's look-up item (GetItem), then the subscription (Query)."""
    account_id = access.get_account_id_for_subscription(sub_id)
    sub = access.get_subscription(account_id, sub_id) if account_id else None
    if sub is None:
        raise not_found("subscription", "subscription_id")
    return sub


@router.get("/customers/{customer_id}/subscriptions", response={200: ListOut, **ERRORS},
            summary="A customer's subscriptions")
def list_subscriptions(request: HttpRequest, customer_id: str, paging: Query[Paging]) -> JsonResponse:
    """One Query per page (an unknown customer has none)."""
    scope = f"subscriptions:{customer_id}"
    page = access.subscriptions_page(customer_id, limit=paging.limit, start=start_key(paging.cursor, scope))
    day = today()
    return ok(page_body(page, scope, [api_objects.subscription_object(s, day) for s in page.items]))


@router.get("/subscriptions/{subscription_id}", response={200: SubscriptionOut, **ERRORS}, summary="A subscription")
def get_subscription(request: HttpRequest, subscription_id: str) -> JsonResponse:
    return ok(api_objects.subscription_object(subscription_or_404(subscription_id), today()))


# --- receipts -----------------------------------------------------------------------------


def receipt_or_404(customer_id: str, receipt_id: str) -> Receipt:
    """By number (R-2026-000123: two GetItems), or by key for a receipt without one."""
    receipt = access.get_receipt_for_url(customer_id, receipt_id)
    if receipt is None:
        raise not_found("receipt", "receipt_id")
    return receipt


@router.get("/customers/{customer_id}/receipts", response={200: ListOut, **ERRORS},
            summary="A customer's receipts, newest first")
def list_receipts(request: HttpRequest, customer_id: str, paging: Query[Paging]) -> JsonResponse:
    scope = f"receipts:{customer_id}"
    page = access.receipts_page(customer_id, limit=paging.limit, start=start_key(paging.cursor, scope))
    return ok(page_body(page, scope, [api_objects.receipt_object(r) for r in page.items]))


@router.get("/customers/{customer_id}/receipts/{receipt_id}", response={200: ReceiptOut, **ERRORS},
            summary="A receipt")
def get_receipt(request: HttpRequest, customer_id: str, receipt_id: str) -> JsonResponse:
    return ok(api_objects.receipt_object(receipt_or_404(customer_id, receipt_id)))


@router.get("/customers/{customer_id}/receipts/{receipt_id}/pdf", response={200: None, **ERRORS},
            summary="A receipt as PDF", openapi_extra={
                "responses": {200: {"description": "the receipt", "content": {"application/pdf": {}}}}})
def get_receipt_pdf(request: HttpRequest, customer_id: str, receipt_id: str) -> HttpResponse:
    """The same PDF the customer downloads, in the language the receipt was paid in."""
    receipt = receipt_or_404(customer_id, receipt_id)
    with translation.override(receipt.Language or settings.LANGUAGE_CODE):
        pdf = render_receipt_pdf(receipt, settings.RPAY_SELLER)
    response = HttpResponse(pdf, content_type="application/pdf")
    name = receipt.Number or f"receipt-{receipt.BillingDate}"
    response["Content-Disposition"] = f'attachment; filename="rpay-{name}.pdf"'
    return response


# --- the catalog, coupons, disputes -----------------------------------------------------


@router.get("/products", response={200: ListOut, **ERRORS}, summary="The products, retired ones too")
def list_products(request: HttpRequest, paging: Query[Paging]) -> JsonResponse:
    page = access.products_page(limit=paging.limit, start=start_key(paging.cursor, "products"))
    return ok(page_body(page, "products", [api_objects.product_object(p) for p in page.items]))


@router.get("/products/{product_id}", response={200: ProductOut, **ERRORS}, summary="A product")
def get_product(request: HttpRequest, product_id: str) -> JsonResponse:
    product = access.get_product(product_id)
    if product is None:
        raise not_found("product", "product_id")
    return ok(api_objects.product_object(product))


@router.get("/coupons", response={200: ListOut, **ERRORS}, summary="The coupons")
def list_coupons(request: HttpRequest, paging: Query[Paging]) -> JsonResponse:
    page = access.coupons_page(limit=paging.limit, start=start_key(paging.cursor, "coupons"))
    return ok(page_body(page, "coupons", [api_objects.coupon_object(c) for c in page.items]))


@router.get("/coupons/{code}", response={200: CouponOut, **ERRORS}, summary="A coupon")
def get_coupon(request: HttpRequest, code: str) -> JsonResponse:
    coupon = access.get_coupon(code.strip().upper())
    if coupon is None:
        raise not_found("coupon", "code")
    return ok(api_objects.coupon_object(coupon))


@router.get("/disputes", response={200: ListOut, **ERRORS}, summary="The disputes, newest opened first")
def list_disputes(request: HttpRequest, paging: Query[Paging]) -> JsonResponse:
    page = access.disputes_page(limit=paging.limit, start=start_key(paging.cursor, "disputes"))
    return ok(page_body(page, "disputes", [api_objects.dispute_object(d) for d in page.items]))
