"""Stripe, through its official library: PAYMENT_GATEWAY=stripe (docs/STRIPE.md).

One package per processor behind one interface (Saleor's ``payment/gateways/<name>/`` is
the model): ``client`` builds the library's client (the API version pinned here, network
retries, the endpoint), ``gateway`` maps rpay's interface onto Customers, SetupIntents,
PaymentIntents and Refunds, ``checks`` refuses a configuration that cannot work.
"""

from typing import Any

__all__ = ["StripeGateway"]


def __getattr__(name: str) -> Any:
    # Lazy: the settings module imports ``origins`` from this package, before Django and
    # without the Stripe library's import cost.
    if name == "StripeGateway":
        from core.payments.stripe.gateway import StripeGateway

        return StripeGateway
    raise AttributeError(name)
