"""The payment-gateway interface; the gateways are beside it (``simulated``: development
and the exactly-once proofs; ``stripe``: real money, and localstripe locally).

The interface mirrors what real card processors offer (Stripe, Adyen, Braintree):
card details are exchanged for a token once (in the browser with Stripe.js, or on the
server for the simulated gateway), and every later charge
or refund names that token or charge, with an idempotency key so that a retried
request never charges twice. rpay stores only the token, brand, last four digits and
expiry (docs/TABLE.md, "No card numbers").

``get_gateway()`` returns the implementation named by the ``PAYMENT_GATEWAY`` setting
(``simulated``, ``stripe`` or a dotted path).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string


@dataclass(frozen=True)
class CardToken:
    token: str
    brand: str
    last4: str
    exp_month: int
    exp_year: int
    # The issuing bank's country (ISO alpha-2, Stripe's ``card.country``), when known: the
    # tax evidence beside the customer's declared billing country.
    country: str | None = None


@dataclass(frozen=True)
class CardEntry:
    """What a page needs to collect a card in the processor's own fields (Stripe.js
    Elements): the SetupIntent's client secret, the publishable key and the script."""

    client_secret: str
    publishable_key: str
    js_url: str


@dataclass(frozen=True)
class ChargeResult:
    # "succeeded" | "declined" | "requires_action" (the bank asks the cardholder to confirm
    # it, 3-D Secure: on-session on the page, off-session by coming back to the portal; with
    # Stripe.js and ``client_secret``, or on the simulated gateway's own bank page)
    status: str
    charge_id: str
    amount: int
    currency: str
    decline_code: str | None = None
    created: str = ""
    # What the charge was made with (account_id, sub_id, period_start, period_end...): a
    # replayed key returns the first call's, so the caller records what was charged.
    metadata: dict[str, str] = field(default_factory=dict)
    client_secret: str = ""
    refunded: int = 0  # how much of it the gateway has refunded, by whoever (list_charges says)
    payment_method: str = ""  # the card charged, at the processor (Stripe.js confirms with it)

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    @property
    def needs_authentication(self) -> bool:
        return self.status == "requires_action"


@dataclass(frozen=True)
class RefundResult:
    status: str  # "succeeded" | "failed"
    refund_id: str
    charge_id: str
    amount: int
    reason: str | None = None


class PaymentGateway(Protocol):
    """What rpay asks of a card processor. A gateway may subclass it, to share ``charge``'s
    check of the amount; else it implements every method itself."""

    # True: the card is typed into the processor's fields in the browser, and the server
    # gets a SetupIntent id (start_card_entry, saved_card); False: rpay's own card fields,
    # tokenized on the server (tokenize_card), the simulated gateway's way.
    collects_card_in_browser: bool

    def tokenize_card(
        self, number: str, exp_month: int, exp_year: int, cvc: str, *, customer: str = ""
    ) -> CardToken: ...

    def create_customer(self, account_id: str, email: str) -> str:
        """The processor's customer for an account ("" when the gateway has none)."""
        ...

    def start_card_entry(self, customer: str) -> CardEntry: ...

    def saved_card(self, customer: str, setup_intent_id: str) -> CardToken:
        """The card saved in the browser, checked to be ``customer``'s: else CardError."""
        ...

    def forget_card(self, token: str) -> None: ...

    def delete_customer(self, customer: str) -> None:
        """Delete the processor's customer of a closed account (and with it every card it
        still holds); nothing when it is already gone. ``GatewayError`` when the processor
        cannot be asked."""
        ...

    def customer_account(self, customer: str) -> str:
        """The account id the processor's customer was made for (``create_customer``'s
        ``account_id``): "" when the processor knows no such customer, or the gateway has
        no customers. ``GatewayError`` when the processor cannot be asked."""
        ...

    def charge(
        self,
        token: str,
        amount: int,
        currency: str,
        idempotency_key: str,
        metadata: dict[str, str] | None = None,
        *,
        off_session: bool = True,
    ) -> ChargeResult:
        """``off_session``: the customer is not there (the batch, "retry now"); False at
        subscribing and at the shop's checkout.

        The amount is checked here, for every gateway that subclasses this protocol (the
        simulated one and Stripe's); ``place_charge`` is each one's request."""
        if not isinstance(amount, int) or amount <= 0:
            raise ValueError("amount must be a positive integer number of minor units")
        return self.place_charge(token, amount, currency, idempotency_key, metadata, off_session=off_session)

    def place_charge(self, token: str, amount: int, currency: str, idempotency_key: str,
                     metadata: dict[str, str] | None, *, off_session: bool) -> ChargeResult:
        """``charge`` at the processor, its amount checked."""
        ...

    def refund(
        self, charge_id: str, amount: int, idempotency_key: str, reason: str = ""
    ) -> RefundResult: ...

    def refunds_of(self, charge_id: str) -> list[RefundResult]:
        """Every succeeded refund of the charge, made by rpay or at the processor."""
        ...

    def cancel_charge(self, charge_id: str) -> ChargeResult:
        """Stop a charge still waiting for the customer (3-D Secure never done): its state
        after, which is ``succeeded`` if the customer confirmed it just before."""
        ...

    def charge_status(self, charge_id: str) -> ChargeResult:
        """The charge as the gateway has it now (after the customer confirmed it in the
        browser, say); a replayed create would answer what it answered first."""
        ...

    def list_charges(
        self, created_from: date, created_to: date, **metadata: str
    ) -> list[ChargeResult]:
        """Charges created between the two dates (inclusive, UTC) whose metadata holds every
        given pair: what a processor's list API (Stripe's ``/v1/charges?created[gte]=``
        plus a metadata search) answers. Reconciliation reads it."""
        ...


# --- card-number rules (used by forms and by the simulated gateway) ---------------------


def normalize_card_number(number: str) -> str:
    return "".join(ch for ch in str(number) if not ch.isspace() and ch != "-")


def luhn_valid(number: str) -> bool:
    if not number.isdigit() or not 12 <= len(number) <= 19:
        return False
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def card_brand(number: str) -> str:
    if number.startswith("4"):
        return "Visa"
    if number[:2] in {"51", "52", "53", "54", "55"} or "2221" <= number[:4] <= "2720":
        return "Mastercard"
    if number[:2] in {"34", "37"}:
        return "American Express"
    if number.startswith("6011") or number.startswith("65"):
        return "Discover"
    return "Card"


# The short names PAYMENT_GATEWAY takes; a dotted path names any other implementation.
GATEWAYS = {
    "simulated": "core.payments.simulated.SimulatedGateway",
    "stripe": "core.payments.stripe.StripeGateway",
}


def gateway_path(name: str) -> str:
    return GATEWAYS.get(name, name)


@lru_cache(maxsize=8)
def _build_gateway(path: str, ledger: str, latency_ms: int) -> PaymentGateway:
    cls = import_string(gateway_path(path))
    # A gateway that keeps a local ledger (the simulated one) is told where, and how slow to be.
    if getattr(cls, "keeps_ledger", False):
        return cls(ledger_path=ledger, latency_ms=latency_ms)
    return cls()


def get_gateway() -> PaymentGateway:
    """The gateway named by ``settings.PAYMENT_GATEWAY`` (one instance per configuration)."""
    return _build_gateway(
        settings.PAYMENT_GATEWAY,
        settings.PAYMENT_GATEWAY_LEDGER,
        settings.PAYMENT_GATEWAY_LATENCY_MS,
    )


def cards_entered_in_browser() -> bool:
    """Whether the configured gateway takes cards in its own fields in the browser
    (Stripe.js) rather than in rpay's (the simulated gateway)."""
    return bool(getattr(get_gateway(), "collects_card_in_browser", False))
