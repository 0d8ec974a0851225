"""The objects of the merchant's events that the API has no resource for: a charge that did
not succeed (``payment.failed``, ``payment.action_required``). Every other event carries an
object of billing/rules/api_objects.py. Pure: no I/O."""

from __future__ import annotations

from datetime import date
from typing import Any

from billing.models import Subscription


def payment_attempt_object(sub: Subscription, *, status: str, amount: int | None, currency: str | None,
                           period_start: date | None, period_end: date | None = None, charge_id: str | None = None,
                           decline_code: str | None = None, attempt: int = 0, retry_on: date | None = None,
                           ) -> dict[str, Any]:
    """One attempt to charge a subscription's period: ``status`` ``failed`` (declined, or the
    bank's confirmation refused) or ``action_required`` (waits for the customer's bank)."""
    return {
        "object": "payment",
        "id": charge_id or f"{sub.sub_id}:{period_start.isoformat() if period_start else ''}:{attempt}",
        "status": status,
        "customer": sub.account_id,
        "subscription": sub.sub_id,
        "product": sub.SKU,
        "amount": None if amount is None else int(amount),
        "currency": currency or sub.Currency,
        "period_start": period_start.isoformat() if period_start else None,
        "period_end": period_end.isoformat() if period_end else None,
        "charge": charge_id or None,
        "decline_code": decline_code,
        "attempt": attempt,
        "next_retry": retry_on.isoformat() if retry_on else None,
    }
