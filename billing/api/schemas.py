"""The API's request bodies and (for the OpenAPI document) the shape of its answers.

The answers themselves are built by billing/rules/api_objects.py, the one representation
shared with the webhook events; the output schemas here name their main fields and
allow the rest, so the document lists every object without a second definition of it."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from billing.rules.coupons import MAX_CODE_LENGTH, MAX_REPEATING_PAYMENTS, CouponDuration
from billing.rules.lifecycle import KINDS, MAX_PAUSE_PAYMENTS
from core.dynamo.keys import MAX_ID_LENGTH, InvalidKey, check_id

# --- the types every field and path takes ---------------------------------------------------

# The largest whole number any field takes (amounts in minor units, counts, days). DynamoDB
# stores at most 38 significant digits, and an amount is multiplied and summed (proration,
# tax, reports) before it is stored: so far below that, yet above any real price.
MAX_WHOLE = 10**12 - 1


def _not_a_boolean(value: Any) -> Any:
    # pydantic takes true as 1: a caller who sent a boolean meant something else.
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


def whole_number(low: int = 0, high: int = MAX_WHOLE) -> Any:
    """The type of every whole number the API takes: from ``low`` to ``high``, never
    negative, never past ``MAX_WHOLE``, never a boolean. A field's own bounds go here, not
    in its ``Field()``: pydantic drops a ``Field`` bound of the same kind as the type's."""
    return Annotated[int, Field(ge=max(low, 0), le=min(high, MAX_WHOLE)), BeforeValidator(_not_a_boolean)]


def _key_id(value: str) -> str:
    # The key templates' own check (core/dynamo/keys.py): an id that passes fits in any key.
    try:
        return check_id("id", value)
    except InvalidKey:
        raise PydanticCustomError(
            "key_id", "not an id: at most {limit} characters, without '#' or control characters",
            {"limit": MAX_ID_LENGTH}) from None


# A path's id (customer, subscription, SKU, coupon code): one that could be in a key, so a
# read is asked only for what could exist. A receipt's reference is not one of these: an
# old receipt is named by its whole key (with its '#'s), and its reads check it.
KeyId = Annotated[str, AfterValidator(_key_id)]

# Text without control characters, for what reaches the user database: PostgreSQL refuses
# a NUL in a query (an error, not "no match").
PRINTABLE = r"^[^\x00-\x1f\x7f]*$"


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
    payments: whole_number(1, MAX_PAUSE_PAYMENTS) | None = Field(None, description="skip this many payments")
    until: date | None = Field(None, description="pause until this day (resumes on the first payment day on or after it)")


class SwitchIn(Body):
    price: str | None = Field(None, max_length=120, description=(
        "the price to switch to (any active price of this product or of another, whatever its interval): "
        "Stripe's items[].price"))
    product: str | None = Field(None, max_length=40, description="the SKU to switch to: its default (monthly) price")
    expected_amount_due: whole_number(0) | None = Field(None, description=(
        "the preview's amount_due: a different amount now is a 409 and nothing is charged"))


class PaymentDayIn(Body):
    payment_day: whole_number(1, 31)


class ApplyCouponIn(Body):
    code: str = Field(max_length=MAX_CODE_LENGTH)


class RefundIn(Body):
    amount: whole_number(1) | None = Field(None, description="minor units; default: all that is left refundable "
                                                             "(of the line, with line)")
    line: whole_number(0) | None = Field(None, description="the index of the one invoice line (tax.lines) the "
                                                           "refund credits alone; default: every line its share")
    reason: str = Field("", max_length=200)


class ProductIn(Body):
    sku: str = Field(min_length=2, max_length=40, pattern=r"^[A-Z0-9-]+$")
    name: str = Field(min_length=1, max_length=100)
    description: str = Field("", max_length=300)
    amount: whole_number(1) = Field(description="monthly price in minor units")
    currency: str = Field(min_length=3, max_length=3)
    trial_days: whole_number(0, 365) = 0
    add_on: bool = Field(False, description="offered as an add-on to other products' subscriptions")


class CouponIn(Body):
    code: str = Field(min_length=1, max_length=MAX_CODE_LENGTH)
    percent_off: whole_number(1, 100) | None = None
    amount_off: whole_number(1) | None = Field(None, description="minor units of currency")
    currency: str | None = Field(None, min_length=3, max_length=3)
    duration: CouponDuration = CouponDuration.ONCE
    duration_payments: whole_number(1, MAX_REPEATING_PAYMENTS) | None = None
    max_uses: whole_number(1) | None = None
    valid_from: date | None = None
    valid_until: date | None = None


class WebhookEndpointIn(Body):
    url: str = Field(min_length=8, max_length=2000, description="https://, at a public address")
    event_types: list[str] | None = Field(None, description="The types wanted; absent or empty: every type")
    description: str = Field("", max_length=200)
