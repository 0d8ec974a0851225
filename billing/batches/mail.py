"""The batches' e-mails to customers (receipt, decline, cancellation, reminder) and the
amount formatting they use. A mail failure is reported, never raised: the write it
announces is already made.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string

from billing.models import Subscription

log = logging.getLogger(__package__)  # "billing.batches", as before the split


# ISO 4217 minor-unit exponents that are not 2.
_EXPONENTS = {"JPY": 0, "KRW": 0, "ISK": 0, "CLP": 0, "VND": 0, "HUF": 2, "BHD": 3, "KWD": 3, "OMR": 3,
              "JOD": 3, "TND": 3}


def format_amount(amount: int, currency: str) -> str:
    """``999, "USD"`` -> ``"9.99 USD"``: integer arithmetic only (no floats on money)."""
    exponent = _EXPONENTS.get(currency.upper(), 2)
    sign = "-" if amount < 0 else ""
    whole, minor = divmod(abs(int(amount)), 10**exponent)
    text = f"{whole:,}" + (f".{minor:0{exponent}d}" if exponent else "")
    return f"{sign}{text} {currency.upper()}"


def _email(template: str, to: str, subject: str, context: dict[str, Any]) -> str:
    """Send one e-mail (text + HTML); returns "" or what went wrong. The payment or
    claim it reports is already written, so a mail failure must not undo or repeat it."""
    try:
        _send(template, to, subject, context)
    except Exception as error:
        log.warning("e-mail %s to account failed: %s", template, error)
        return f"mail: {type(error).__name__}: {error}".splitlines()[0]
    return ""


def _send(template: str, to: str, subject: str, context: dict[str, Any]) -> None:
    context = {**context, "site_url": settings.SITE_URL.rstrip("/"), "portal_url": settings.SITE_URL.rstrip("/") + "/"}
    text = render_to_string(f"billing/email/{template}.txt", context)
    html = render_to_string(f"billing/email/{template}.html", context)
    send_mail(subject, text, None, [to], html_message=html)


def _sub_context(sub: Subscription) -> dict[str, Any]:
    card = sub.PaymentDetails
    return {
        "product": sub.ProductName or sub.SKU,
        "amount": format_amount(sub.PaymentAmount, sub.Currency),
        "card": f"{card.Brand} ending {card.Last4}" if card else "your card on file",
        "last4": card.Last4 if card else "",
        "sub_id": sub.sub_id,
    }
