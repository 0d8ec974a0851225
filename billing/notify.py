"""What billing's e-mails share: a subscription's lines every message shows."""

from __future__ import annotations

from typing import Any

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing.models import Subscription
from core.mail import money_text


def subscription_context(sub: Subscription) -> dict[str, Any]:
    """What every subscription e-mail shows: product, amount, card (brand and last four)."""
    card = sub.PaymentDetails
    return {
        "product": sub.ProductName or sub.SKU,
        "amount": money_text(sub.PaymentAmount, sub.Currency),
        "card": format_lazy(_("{brand} ending {last4}"), brand=card.Brand, last4=card.Last4) if card
        else _("your card on file"),
        "last4": card.Last4 if card else "",
        "sub_id": sub.sub_id,
        "payment_day": sub.PaymentDay,
    }
