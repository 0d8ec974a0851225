"""Stripe's webhook deliveries: the signature checked, the event read (docs/STRIPE.md).

``Stripe-Signature`` is ``t=<unix time>,v1=<HMAC-SHA256 of "<t>.<body>" with the
endpoint's secret>``; the library's ``WebhookSignature.verify_header`` checks it and
refuses a timestamp more than ``TOLERANCE`` seconds old (a replayed capture)."""

from __future__ import annotations

import json
from typing import Any

import stripe

from core.payments.gateway import CardToken, ChargeResult
from core.payments.stripe import gateway as stripe_gateway
from core.payments.stripe.gateway import iso_from_epoch

TOLERANCE = 300  # seconds


class WebhookRefused(Exception):
    """Not a delivery from Stripe (bad, missing or stale signature) or not an event."""


def verified_event(payload: bytes, signature: str | None, secret: str) -> dict[str, Any]:
    """The event a delivery carries, once its signature holds; else ``WebhookRefused``."""
    if not secret:
        raise WebhookRefused("STRIPE_WEBHOOK_SECRET is not set: no delivery can be checked")
    if not signature:
        raise WebhookRefused("no Stripe-Signature header")
    try:
        text = payload.decode("utf-8")
        stripe.WebhookSignature.verify_header(text, signature, secret, TOLERANCE)
        event = json.loads(text)
    except (UnicodeDecodeError, stripe.SignatureVerificationError, ValueError) as error:
        raise WebhookRefused(str(error)) from error
    if not isinstance(event, dict) or not isinstance(event.get("id"), str) or not isinstance(event.get("type"), str) \
            or not isinstance((event.get("data") or {}).get("object"), dict):
        raise WebhookRefused("not a Stripe event")
    return event


def charge_from_intent(intent: dict[str, Any]) -> ChargeResult:
    """A PaymentIntent as the event carries it, as rpay's ``ChargeResult``."""
    metadata = {str(k): str(v) for k, v in (intent.get("metadata") or {}).items()}
    succeeded = intent.get("status") == "succeeded"
    error = intent.get("last_payment_error") or {}
    return ChargeResult(status="succeeded" if succeeded else "declined", charge_id=str(intent.get("id")),
                        amount=int(intent.get("amount") or 0), currency=str(intent.get("currency") or "").upper(),
                        decline_code=None if succeeded else (error.get("decline_code") or error.get("code")),
                        created=iso_from_epoch(intent.get("created")), metadata=metadata)


def card_from_payment_method(method: dict[str, Any]) -> CardToken | None:
    """A card PaymentMethod as an event carries it (``payment_method.*``), as rpay's
    ``CardToken`` with the token the gateway stores (``<customer>/<payment method>``, the
    customer "" once detached); None when it is not a card's, or its card is malformed."""
    method_id, card = method.get("id"), method.get("card")
    if not isinstance(method_id, str) or not method_id or "/" in method_id or not isinstance(card, dict):
        return None
    customer = method.get("customer")
    try:
        last4, month, year = str(card["last4"]), int(card["exp_month"]), int(card["exp_year"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (len(last4) == 4 and last4.isdigit() and 1 <= month <= 12 and 2000 <= year <= 2200):
        return None
    # The gateway's own names for Stripe's brand codes ("visa" is "Visa"), so the copy
    # matches what ``saved_card`` stored.
    return CardToken(token=f"{customer if isinstance(customer, str) else ''}/{method_id}",
                     brand=stripe_gateway._brand(str(card.get("brand") or "")),
                     last4=last4, exp_month=month, exp_year=year)
