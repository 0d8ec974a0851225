"""The card processors' published test numbers, for demo data, benchmarks and the
production walk-through only.

They are the one place outside the tests where a card number is written down: the demo
seed and the benchmarks name a card ("visa") and get a gateway token for it, so no code
of the apps holds a number (docs/TABLE.md, "No card numbers"). Both gateways accept them in test
mode only: the Stripe gateway refuses a number with a live key.
"""

from __future__ import annotations

from datetime import date

from core.payments.gateway import CardToken, PaymentGateway

# Visa and Mastercard numbers that every processor's test mode (and the simulated
# gateway, and localstripe) charges successfully; and the Visa whose bank asks the
# cardholder to confirm every off-session charge (3-D Secure: "action required").
DEMO_NUMBERS = {"visa": "4242424242424242", "mastercard": "5555555555554444", "3ds": "4000002760003184"}


def demo_card(gateway: PaymentGateway, name: str, *, exp_year: int | None = None, customer: str = "") -> CardToken:
    """A token for the named test card (``visa``, ``mastercard``, ``3ds``), expiring in December of
    ``exp_year`` (default three years on), saved to ``customer`` where the gateway has one."""
    return gateway.tokenize_card(DEMO_NUMBERS[name], 12, exp_year or date.today().year + 3, "123",
                                 customer=customer)
