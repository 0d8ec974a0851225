"""The API's request bodies and (for the OpenAPI document) the shape of its answers.

The answers themselves are built by billing/rules/api_objects.py, the one representation
shared with the webhook events; the output schemas here name their main fields and
allow the rest, so the document lists every object without a second definition of it."""

from __future__ import annotations

from datetime import date
from typing import Literal

from ninja import Schema
from pydantic import ConfigDict, Field

from billing.rules.coupons import MAX_CODE_LENGTH, MAX_REPEATING_PAYMENTS, CouponDuration
from billing.rules.lifecycle import KINDS, MAX_PAUSE_PAYMENTS


class Out(Schema):
    model_config = ConfigDict(extra="allow")

    object: str
    id: str


class CustomerOut(Out):
    email: str | None = None


class SubscriptionOut(Out):
    customer: str
    product: str
    status: str = Field(description="The state the pages show: " + ", ".join(KINDS))
    status_label: str
    amount: int
    currency: str


class ReceiptOut(Out):
    customer: str
    subscription: str
    amount: int
    currency: str


class ProductOut(Out):
    name: str
    amount: int
    currency: str


class CouponOut(Out):
    duration: str


class DisputeOut(Out):
    status: str
    amount: int
    currency: str


class WebhookEndpointOut(Out):
    url: str
    event_types: list[str] | None
    status: str
    secret: str | None = Field(None, description="Only in the answer that made the endpoint: keep it, it is not shown again")


class ListOut(Schema):
    object: Literal["list"]
    data: list[dict]
    has_more: bool
    next_cursor: str | None


class ErrorDetail(Schema):
    type: str
    message: str
    param: str | None


class ErrorOut(Schema):
    error: ErrorDetail


# --- request bodies ---------------------------------------------------------------------


class Body(Schema):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is a 400, not ignored


class CancelIn(Body):
    at: Literal["period_end", "now"] = Field("period_end", description=(
        "period_end: served to the last day paid for, and may be kept until then; now: ends today, the days "
        "paid after today refunded"))
    reason: Literal["too_expensive", "not_using", "switching", "missing_features", "other"] = "other"
    comment: str = Field("", max_length=500)


class PauseIn(Body):
    payments: int | None = Field(None, ge=1, le=MAX_PAUSE_PAYMENTS, description="skip this many payments")
    until: date | None = Field(None, description="pause until this day (resumes on the first payment day on or after it)")


class SwitchIn(Body):
    product: str = Field(max_length=40, description="the SKU to switch to")


class PaymentDayIn(Body):
    payment_day: int = Field(ge=1, le=31)


class ApplyCouponIn(Body):
    code: str = Field(max_length=MAX_CODE_LENGTH)


class RefundIn(Body):
    amount: int | None = Field(None, gt=0, description="minor units; default: all that is left refundable")
    reason: str = Field("", max_length=200)


class ProductIn(Body):
    sku: str = Field(min_length=2, max_length=40, pattern=r"^[A-Z0-9-]+$")
    name: str = Field(min_length=1, max_length=100)
    description: str = Field("", max_length=300)
    amount: int = Field(gt=0, description="monthly price in minor units")
    currency: str = Field(min_length=3, max_length=3)
    trial_days: int = Field(0, ge=0, le=365)


class CouponIn(Body):
    code: str = Field(min_length=1, max_length=MAX_CODE_LENGTH)
    percent_off: int | None = Field(None, ge=1, le=100)
    amount_off: int | None = Field(None, gt=0, description="minor units of currency")
    currency: str | None = Field(None, min_length=3, max_length=3)
    duration: CouponDuration = CouponDuration.ONCE
    duration_payments: int | None = Field(None, ge=1, le=MAX_REPEATING_PAYMENTS)
    max_uses: int | None = Field(None, ge=1)
    valid_from: date | None = None
    valid_until: date | None = None


class WebhookEndpointIn(Body):
    url: str = Field(min_length=8, max_length=2000, description="https://, at a public address")
    event_types: list[str] | None = Field(None, description="The types wanted; absent or empty: every type")
    description: str = Field("", max_length=200)
