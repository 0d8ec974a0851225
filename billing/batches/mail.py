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
from billing.money import format_money

log = logging.getLogger(__package__)  # "billing.batches", as before the split


# Amounts in e-mails carry the currency code: "9.99 USD".
format_amount = format_money


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
