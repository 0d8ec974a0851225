"""rpay's payment interface on Stripe: Customers, SetupIntents, PaymentIntents, Refunds.

* **Cards** are entered in Stripe.js Elements and saved by a SetupIntent
  (``usage=off_session``) the browser confirms: the server only creates the SetupIntent
  (``start_card_entry``) and then reads back the one the browser names
  (``saved_card``), checking that it is this customer's and succeeded. The card number
  never reaches rpay (invariant 3).
* **The token** rpay stores is ``<customer id>/<payment method id>``: Stripe charges a
  saved card only with both, and the batch must not read the account for every charge.
* **Charges** are PaymentIntents confirmed at once, ``off_session`` for the batch and
  "retry now", with the invariant-5 key as the Idempotency-Key and rpay's metadata; the
  charge id rpay records is the PaymentIntent's id (refunds and reconciliation name it).
* **Errors**: a card Stripe refuses is a decline (``decline_code`` from Stripe); the
  network, a 429, a 5xx or a key Stripe does not accept is a ``GatewayError`` (the caller
  retries under the same key, or counts an error and the next run carries on).
"""

from __future__ import annotations

import logging
import os
import warnings
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, ClassVar

import stripe
from django.conf import settings

from core.payments.errors import CardError, GatewayError, KeyReused, RefundRefused
from core.payments.gateway import CardEntry, CardToken, ChargeResult, PaymentGateway, RefundResult
from core.payments.stripe.client import build_client

log = logging.getLogger(__name__)

# Stripe's answers to a charge the bank wants the cardholder to authenticate: off-session
# an error with this code, on localstripe a PaymentIntent left in ``requires_action``.
AUTHENTICATION_REQUIRED = "authentication_required"
# Errors that say nothing about the card: the call's outcome is unknown or it never ran.
_UNREACHABLE = (stripe.APIConnectionError, stripe.RateLimitError, stripe.APIError,
                stripe.AuthenticationError, stripe.PermissionError)


def _brand(name: str) -> str:
    """Stripe's brand codes as the pages name them (the simulated gateway's names)."""
    return {"visa": "Visa", "mastercard": "Mastercard", "amex": "American Express",
            "discover": "Discover", "jcb": "JCB", "diners": "Diners Club", "unionpay": "UnionPay"}.get(
        (name or "").lower(), (name or "Card").title())


def _card_country(card: Any) -> str | None:
    """The issuing bank's country Stripe gives (``card.country``), if it gave one."""
    country = card.get("country") if hasattr(card, "get") else getattr(card, "country", None)
    return str(country).upper() if country else None


def split_token(token: str) -> tuple[str, str]:
    """``cus_…/pm_…`` → (customer, payment method); a token without a customer (a
    payment method saved before) charges without one."""
    customer, _, method = token.rpartition("/")
    return customer, method


def _awaits_cardholder(status: str, error: dict[str, Any]) -> bool:
    """Whether a PaymentIntent can still be paid by the cardholder confirming it: waiting
    for their action, or (Stripe's off-session answer) for a payment method after the
    bank asked for authentication."""
    return status == "requires_action" or (
        status == "requires_payment_method" and error.get("code") == AUTHENTICATION_REQUIRED)


def iso_from_epoch(epoch: int | None) -> str:
    return datetime.fromtimestamp(epoch or 0, tz=UTC).isoformat(timespec="seconds")


def _refunded_amount(intent: dict[str, Any]) -> int:
    """How much of the PaymentIntent's charge was refunded: its ``latest_charge`` when the
    answer expanded it (the list's ``data.latest_charge``); an id otherwise."""
    latest = intent.get("latest_charge")
    if not isinstance(latest, dict):
        return 0
    return int(latest.get("amount_refunded") or 0)


def _as_dict(answer: Any) -> dict[str, Any]:
    """A PaymentIntent as plain data: the JSON of an answer read raw (a charge), or a
    StripeObject the library built (a list, a cancel, an error's ``payment_intent``)."""
    return answer.to_dict() if isinstance(answer, stripe.StripeObject) else answer


def _epoch(day: date) -> int:
    return int(datetime.combine(day, time.min, tzinfo=UTC).timestamp())


class StripeGateway(PaymentGateway):
    """``PAYMENT_GATEWAY=stripe``: configured by the STRIPE_* settings."""

    collects_card_in_browser: ClassVar[bool] = True

    def __init__(self, *, http_client: Any = None) -> None:
        self.client = build_client(http_client=http_client)
        self.publishable_key = settings.STRIPE_PUBLISHABLE_KEY
        self.js_url = settings.STRIPE_JS_URL
        # localstripe 1.15 refuses list filters ("Unexpected created"); then the range is
        # filtered here, after paging through everything (a development server is small).
        self._server_filters_lists = True

    # --- customers and cards ------------------------------------------------------

    def create_customer(self, account_id: str, email: str) -> str:
        """The account's Stripe Customer, under the key ``customer:<account id>`` so that a
        retried sign-up makes one customer, not two."""
        customer = self._call(self.client.v1.customers.create,
                              {"email": email, "metadata": {"account_id": account_id}},
                              {"idempotency_key": f"customer:{account_id}"})
        return customer.id

    def start_card_entry(self, customer: str) -> CardEntry:
        """A SetupIntent for the browser to confirm with the card typed into Elements."""
        intent = self._call(self.client.v1.setup_intents.create,
                            {"customer": customer, "usage": "off_session", "payment_method_types": ["card"]})
        return CardEntry(client_secret=intent.client_secret, publishable_key=self.publishable_key,
                         js_url=self.js_url)

    def saved_card(self, customer: str, setup_intent_id: str) -> CardToken:
        """The card the browser saved through SetupIntent ``setup_intent_id``, if it is this
        customer's and succeeded; else ``CardError`` (nothing is stored)."""
        if not setup_intent_id.startswith("seti_"):
            raise CardError("Your card could not be saved. Please enter it again.")
        try:
            intent = self.client.v1.setup_intents.retrieve(setup_intent_id, {"expand": ["payment_method"]})
        except stripe.InvalidRequestError as error:  # no such SetupIntent (made up, or another account's key)
            raise CardError("Your card could not be saved. Please enter it again.") from error
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error
        # Another customer's SetupIntent, or one the bank refused: never stored.
        if intent.customer != customer or intent.status != "succeeded" or not intent.payment_method:
            raise CardError("Your card could not be saved. Please enter it again.")
        method = intent.payment_method
        return CardToken(token=f"{customer}/{method.id}", brand=_brand(method.card.brand),
                         last4=method.card.last4, exp_month=int(method.card.exp_month),
                         exp_year=int(method.card.exp_year), country=_card_country(method.card))

    def tokenize_card(self, number: str, exp_month: int, exp_year: int, cvc: str, *, customer: str = "") -> CardToken:
        """Demo data and tests only, with test keys: a payment method made from a test
        card number on the server (what Stripe.js does in the browser), attached to
        ``customer``. A live key refuses it: real cards are entered in Elements."""
        if settings.STRIPE_SECRET_KEY.startswith(("sk_live_", "rk_live_")):
            raise CardError("Card numbers are entered in Stripe.js, never sent to the server.")
        try:
            method = self.client.v1.payment_methods.create({
                "type": "card",
                "card": {"number": number, "exp_month": int(exp_month), "exp_year": int(exp_year), "cvc": cvc},
            })
            if customer:
                self.client.v1.payment_methods.attach(method.id, {"customer": customer})
        except stripe.CardError as error:
            raise CardError(error.user_message or "Your card was declined.") from error
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error
        return CardToken(token=f"{customer}/{method.id}", brand=_brand(method.card.brand),
                         last4=method.card.last4, exp_month=int(method.card.exp_month),
                         exp_year=int(method.card.exp_year), country=_card_country(method.card))

    def forget_card(self, token: str) -> None:
        """Detach a card removed from the wallet, so Stripe keeps no card rpay cannot charge."""
        _, method = split_token(token)
        try:
            self.client.v1.payment_methods.detach(method)
        except stripe.InvalidRequestError:  # already detached, or never attached
            pass
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error

    def delete_customer(self, customer: str) -> None:
        """Delete a closed account's Stripe Customer: Stripe detaches its payment methods
        with it. A customer already deleted (a second close) is left as it is."""
        if not customer.startswith("cus_"):
            return
        try:
            self.client.v1.customers.delete(customer)
        except stripe.InvalidRequestError:  # no such customer: deleted already
            pass
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error

    def customer_account(self, customer: str) -> str:
        """The account a Stripe Customer was made for (its ``metadata.account_id``, set by
        ``create_customer``); "" for a customer Stripe does not know, a deleted one, or
        one made elsewhere. Checked by the caller against the account's own customer."""
        if not customer.startswith("cus_"):
            return ""
        try:
            found = self.client.v1.customers.retrieve(customer)
        except stripe.InvalidRequestError:  # no such customer (another account's, or made up)
            return ""
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error
        # A StripeObject: ``in`` and ``[]`` (a deleted customer has neither metadata nor email).
        if ("deleted" in found and found["deleted"]) or "metadata" not in found or not found["metadata"]:
            return ""
        account_id = found["metadata"].to_dict().get("account_id", "")
        return account_id if isinstance(account_id, str) else ""

    # --- money --------------------------------------------------------------------

    def place_charge(self, token: str, amount: int, currency: str, idempotency_key: str,
                     metadata: dict[str, str] | None, *, off_session: bool) -> ChargeResult:
        customer, method = split_token(token)
        params: dict[str, Any] = {
            "amount": amount, "currency": currency.lower(), "payment_method": method, "confirm": True,
            "metadata": dict(metadata or {}), "payment_method_types": ["card"],
        }
        if customer:
            params["customer"] = customer
        if off_session:
            params["off_session"] = True
        try:
            intent = self._create_intent(params, idempotency_key)
        except stripe.CardError as error:
            return self._declined(error, amount, currency, metadata)
        except stripe.IdempotencyError as error:
            # The key was used with other parameters (another card, amount or metadata):
            # Stripe will not say what the first request did, and never runs this one.
            log.warning("stripe refused a charge under a used key %s: %s", idempotency_key, error)
            raise KeyReused(str(error)) from error
        except stripe.InvalidRequestError as error:
            # A payment method Stripe does not know (detached, another account's): the
            # simulated gateway's "invalid_token", a decline the dunning rules handle.
            log.warning("stripe refused a charge request: %s", error)
            return ChargeResult(status="declined", charge_id="", amount=amount, currency=currency.upper(),
                                decline_code=error.code or "invalid_request", metadata=dict(metadata or {}))
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error
        return self._result(intent, confirmable=True)

    def cancel_charge(self, charge_id: str) -> ChargeResult:
        try:
            intent = self.client.v1.payment_intents.cancel(charge_id)
        except stripe.InvalidRequestError:  # no longer cancellable: paid (or failed) meanwhile
            return self.charge_status(charge_id)
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error
        return self._result(intent)

    def charge_status(self, charge_id: str) -> ChargeResult:
        try:
            intent = self.client.v1.payment_intents.retrieve(charge_id)
        except stripe.InvalidRequestError as error:
            raise GatewayError(f"no such PaymentIntent {charge_id}: {error}") from error
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error
        return self._result(intent, confirmable=True)

    def refund(self, charge_id: str, amount: int, idempotency_key: str, reason: str = "") -> RefundResult:
        try:
            refund = self.client.v1.refunds.create(
                {"payment_intent": charge_id, "amount": amount, "metadata": {"reason": reason[:500]}},
                {"idempotency_key": idempotency_key},
            )
        except stripe.IdempotencyError as error:  # the request's key, used before for another amount
            raise KeyReused(str(error)) from error
        except stripe.InvalidRequestError as error:  # more than is left, no such charge
            return RefundResult(status="failed", refund_id="", charge_id=charge_id, amount=amount,
                                reason=error.user_message or str(error))
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error
        if refund.status in ("failed", "canceled"):
            raise RefundRefused(refund.failure_reason or refund.status)
        return RefundResult(status="succeeded", refund_id=refund.id, charge_id=charge_id, amount=refund.amount,
                            reason=reason or None)

    def refunds_of(self, charge_id: str) -> list[RefundResult]:
        """The charge's succeeded refunds, whoever made them (rpay, or Stripe's dashboard)."""
        try:
            listed = self.client.v1.refunds.list({"payment_intent": charge_id, "limit": 100}).auto_paging_iter()
            return [RefundResult(status="succeeded", refund_id=r.id, charge_id=charge_id, amount=r.amount)
                    for r in listed if r.status == "succeeded"]
        except stripe.InvalidRequestError as error:
            raise GatewayError(f"no refunds of {charge_id}: {error}") from error
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error

    def list_charges(self, created_from: date, created_to: date, **metadata: str) -> list[ChargeResult]:
        """The PaymentIntents created in the range (UTC days, inclusive) whose metadata
        holds every given pair, auto-paging (Stripe has no metadata filter on lists)."""
        start, end = _epoch(created_from), _epoch(created_to + timedelta(days=1))
        charges = []
        for intent in self._intents(start, end):
            found = self._result(intent)
            if start <= intent.created < end and all(found.metadata.get(k) == v for k, v in metadata.items()):
                charges.append(found)
        return charges

    # --- helpers --------------------------------------------------------------------

    def _intents(self, start: int, end: int) -> Any:
        lists = self.client.v1.payment_intents
        try:
            if self._server_filters_lists:
                try:
                    # Each with its charge, for how much of it was refunded (reconciliation: M5).
                    return lists.list({"created": {"gte": start, "lt": end}, "limit": 100,
                                       "expand": ["data.latest_charge"]}).auto_paging_iter()
                except stripe.InvalidRequestError as error:
                    if "Unexpected" not in str(error):
                        raise
                    self._server_filters_lists = False
            return lists.list({"limit": 100}).auto_paging_iter()
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error

    def _create_intent(self, params: dict[str, Any], idempotency_key: str) -> dict[str, Any]:
        """POST /v1/payment_intents, its answer as the JSON Stripe sent. The same request as
        ``client.v1.payment_intents.create`` (the library's request building, retries and
        errors: a refused card still raises ``stripe.CardError``), without turning the
        answer into StripeObjects, one per nested object: on the payment run that was a
        third of the Python CPU a charge costs, for the ten fields ``_result`` reads."""
        answer = self.client.raw_request("post", "/v1/payment_intents", **params, idempotency_key=idempotency_key)
        # What the typed call does with every answer: Stripe's notices (deprecations), as
        # warnings; the library's helper for it is private, so its simple part is here.
        notice = answer.headers.get("Stripe-Notice")
        if notice and os.environ.get("STRIPE_SUPPRESS_NOTICES", "").lower() != "true":
            warnings.warn(notice, stacklevel=2)
        return answer.data

    def _result(self, intent: Any, *, confirmable: bool = False) -> ChargeResult:
        """The PaymentIntent as rpay sees it. ``confirmable`` (a charge just made, or read
        back for the customer): one the bank wants the cardholder to confirm is
        ``requires_action`` with the client secret Stripe.js confirms it with; in a list
        (reconciliation) it is simply not paid."""
        intent = _as_dict(intent)
        metadata = dict(intent.get("metadata") or {})
        error = intent.get("last_payment_error") or {}
        state = intent["status"]
        secret = ""
        if state == "succeeded":
            status, code = "succeeded", None
        elif confirmable and _awaits_cardholder(state, error):
            # 3-D Secure: on-session the customer is on the page; off-session (a renewal)
            # they are asked to come back and confirm this very PaymentIntent.
            status, code, secret = "requires_action", AUTHENTICATION_REQUIRED, intent.get("client_secret") or ""
        elif state == "requires_action":
            status, code = "declined", AUTHENTICATION_REQUIRED
        else:
            status, code = "declined", error.get("decline_code") or error.get("code") or state
        method = intent.get("payment_method")
        if not isinstance(method, str):  # expanded, or none
            method = (method or {}).get("id") or ""
        return ChargeResult(status=status, charge_id=intent["id"], amount=intent["amount"],
                            currency=intent["currency"].upper(), decline_code=code,
                            created=iso_from_epoch(intent.get("created")), metadata=metadata, client_secret=secret,
                            refunded=_refunded_amount(intent), payment_method=method)

    def _declined(self, error: stripe.CardError, amount: int, currency: str,
                  metadata: dict[str, str] | None) -> ChargeResult:
        detail = error.error
        intent = getattr(detail, "payment_intent", None) if detail else None
        code = (detail and (detail.decline_code or detail.code)) or error.code or "card_declined"
        if intent is not None and code == AUTHENTICATION_REQUIRED:
            # Off-session, Stripe answers an error and leaves the PaymentIntent waiting for a
            # payment method: the cardholder can still confirm it (``confirmCardPayment``).
            return self._result(intent, confirmable=True)
        return ChargeResult(status="declined", charge_id=intent.id if intent else "", amount=amount,
                            currency=currency.upper(), decline_code=code,
                            created=iso_from_epoch(intent.created) if intent else "", metadata=dict(metadata or {}))

    @staticmethod
    def _call(method: Any, params: dict[str, Any], options: dict[str, Any] | None = None) -> Any:
        try:
            return method(params, options or {})
        except stripe.InvalidRequestError as error:
            raise GatewayError(str(error)) from error
        except _UNREACHABLE as error:
            raise GatewayError(str(error)) from error
