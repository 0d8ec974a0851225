"""What can go wrong with a payment (django-oscar's payment/exceptions.py is the model).

Every gateway call site catches ``PaymentError`` (or a subclass it can act on) and turns
it into a message, a form error or an outcome: never a 500.
"""

from __future__ import annotations


class PaymentError(Exception):
    """Base of everything that stops a card from being tokenized, charged or refunded."""


class CardError(PaymentError, ValueError):
    """The customer's card details cannot be used (bad number, expired, bad CVC): the
    message is for the customer, ``field`` the form field it belongs to."""

    def __init__(self, message: str, field: str = "card_number") -> None:
        super().__init__(message)
        self.field = field


class GatewayError(PaymentError, RuntimeError):
    """The gateway could not be reached or failed: the outcome of the call is unknown.

    Retrying with the same idempotency key is always safe.
    """


class KeyReused(GatewayError):
    """The processor refused the call: its idempotency key was used before with other
    parameters (Stripe's ``IdempotencyError``: another card, another amount). What the
    first call did is not in this answer. A ``GatewayError`` for the callers that only
    know that much (nothing recorded, the reconciliation settles it); unlike a timeout,
    repeating the same call gets the same refusal: a caller that can must try under a
    key of its own (the switch's next attempt, billing/actions/switch.py)."""


class RefundRefused(PaymentError):
    """The gateway answered and refused a refund (more than is left, no such charge)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
