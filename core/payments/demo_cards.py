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
# The issuing country of each is Stripe's (``card.country``): the US for the first two,
# Germany for the 3-D Secure one; "visa-it", "visa-de" and "visa-fr" are Stripe's Italian,
# German and French test Visas (the tax evidence of customers in those countries).
DEMO_NUMBERS = {"visa": "4242424242424242", "mastercard": "5555555555554444", "3ds": "4000002760003184",
                "visa-it": "4000003800000008", "visa-de": "4000002760000016", "visa-fr": "4000002500000003"}


def demo_card(gateway: PaymentGateway, name: str, *, exp_year: int | None = None, customer: str = "") -> CardToken:
    """A token for the named test card (``visa``, ``mastercard``, ``3ds``, ``visa-it``...), expiring in December of
    ``exp_year`` (default three years on), saved to ``customer`` where the gateway has one."""
    return gateway.tokenize_card(DEMO_NUMBERS[name], 12, exp_year or date.today().year + 3, "123",
                                 customer=customer)
