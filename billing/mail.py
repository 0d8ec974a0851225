"""Every e-mail rpay sends a customer goes out here: text + HTML from
``templates/billing/email/<name>.{txt,html}``, through Django's mail framework.

A send never raises: the write the e-mail announces (a payment, a claim, a new
subscription) is already made, and a mail failure must neither undo nor repeat it.
The caller gets back "" or one line saying what went wrong, to count or log.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string

from billing.models import Subscription
from billing.money import format_with_code

log = logging.getLogger(__name__)

SUBJECT_MAX_LENGTH = 200
# Control characters (line breaks above all) in a header are an injection; Django
# refuses them with BadHeaderError, which would lose the e-mail.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def email_subject(text: str) -> str:
    """A subject line that is always a valid header: control characters become one
    space and it is cut to ``SUBJECT_MAX_LENGTH`` characters."""
    return _CONTROL.sub(" ", str(text)).strip()[:SUBJECT_MAX_LENGTH]


def send_customer_email(template: str, to: str, subject: str, context: dict[str, Any]) -> str:
    """Send one e-mail (text + HTML); returns "" or what went wrong, in one line."""
    try:
        site = settings.SITE_URL.rstrip("/")
        context = {**context, "site_url": site, "portal_url": site + "/"}
        text = render_to_string(f"billing/email/{template}.txt", context)
        html = render_to_string(f"billing/email/{template}.html", context)
        send_mail(email_subject(subject), text, None, [to], html_message=html)
    except Exception as error:  # noqa: BLE001 - reported to the caller, never raised (see above)
        log.warning("e-mail %s failed: %s", template, error)
        return f"mail: {type(error).__name__}: {error}".splitlines()[0]
    return ""


def subscription_context(sub: Subscription) -> dict[str, Any]:
    """What every subscription e-mail shows: product, amount, card (brand and last four)."""
    card = sub.PaymentDetails
    return {
        "product": sub.ProductName or sub.SKU,
        "amount": format_with_code(sub.PaymentAmount, sub.Currency),
        "card": f"{card.Brand} ending {card.Last4}" if card else "your card on file",
        "last4": card.Last4 if card else "",
        "sub_id": sub.sub_id,
        "payment_day": sub.PaymentDay,
    }
