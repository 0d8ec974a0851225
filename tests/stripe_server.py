"""Stripe fixtures: one localstripe server per test run (a real HTTP server speaking
Stripe's API, started like DynamoDB Local), and the Stripe gateway pointed at it with
every request it sends recorded.

localstripe ignores ``Idempotency-Key``, so exactly-once under crashes is proven on the
simulated gateway; here the tests check that each create request carries the key
invariant 5 / M5 gives it (``StripeRequests.keys``).
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from csp.constants import SELF

from core.payments import gateway as gateway_module
from core.payments.stripe import StripeGateway
from core.payments.stripe.http import KeepAliveClient
from core.payments.stripe.origins import stripe_origins
from devtools.localengine import free_port
from devtools.localstripe import LocalStripe, start_localstripe


@dataclass(frozen=True)
class StripeRequest:
    method: str
    path: str
    idempotency_key: str | None
    params: dict[str, list[str]]


class RecordingHTTPClient(KeepAliveClient):
    """rpay's HTTP client for Stripe (the one production uses), noting each request before sending it."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[StripeRequest] = []
        self._lock = threading.Lock()

    def request(self, method: str, url: str, headers: Any, post_data: Any = None) -> Any:
        parts = urlsplit(url)
        body = post_data.decode() if isinstance(post_data, bytes) else (post_data or parts.query)
        with self._lock:
            self.sent.append(StripeRequest(method.upper(), parts.path, (headers or {}).get("Idempotency-Key"),
                                           parse_qs(body)))
        return super().request(method, url, headers, post_data)

    def creates(self, path: str) -> list[StripeRequest]:
        """The POSTs to ``path`` (e.g. /v1/payment_intents), in order."""
        return [r for r in self.sent if r.method == "POST" and r.path == path]


@pytest.fixture(scope="session")
def localstripe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStripe]:
    """One localstripe per test run, on a free port, keeping no state file."""
    server = start_localstripe(free_port(), log_file=tmp_path_factory.mktemp("localstripe") / "localstripe.log")
    yield server
    server.stop()


@pytest.fixture
def stripe_gateway(localstripe: LocalStripe, settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[StripeGateway]:
    """PAYMENT_GATEWAY=stripe against localstripe; ``stripe_gateway.client`` is the
    library's client, ``stripe_gateway.recorded`` the requests it sent."""
    # Each test starts on an empty Stripe account (localstripe's own flush route): the
    # reconciliation lists every PaymentIntent of the account, and must see only this test's.
    urllib.request.urlopen(urllib.request.Request(f"{localstripe.url}/_config/data", method="DELETE"), timeout=10)
    for name, value in localstripe.settings().items():
        setattr(settings, name, value)
    origins = stripe_origins("stripe", localstripe.js_url, localstripe.url)
    policy = json.loads(json.dumps(settings.CONTENT_SECURITY_POLICY))
    policy["DIRECTIVES"]["script-src"] = [SELF, *origins["script"]]
    policy["DIRECTIVES"]["connect-src"] = [SELF, *origins["connect"]]
    settings.CONTENT_SECURITY_POLICY = policy
    recorder = RecordingHTTPClient()
    gateway = StripeGateway(http_client=recorder)
    gateway.recorded = recorder  # type: ignore[attr-defined]
    monkeypatch.setattr(gateway_module, "_build_gateway", lambda *args: gateway)
    yield gateway


def confirm_setup_in_browser(localstripe: LocalStripe, client_secret: str, number: str = "4242424242424242",
                             exp_year: int = 2034) -> dict[str, Any]:
    """What Stripe.js's ``confirmCardSetup`` sends (localstripe's Stripe.js, read from the
    package): the card goes from the browser to Stripe, never to rpay. For tests that
    drive rpay's pages with Django's client; the Chromium tests type into the real page."""
    setup_intent = client_secret.split("_secret_")[0]
    body = json.dumps({
        "key": "pk_test_rpay_localstripe", "use_stripe_sdk": True, "client_secret": client_secret,
        "payment_method_data": {"type": "card", "card": {
            "number": number, "exp_month": "12", "exp_year": str(exp_year), "cvc": "123"}},
    }).encode()
    request = urllib.request.Request(f"{localstripe.url}/v1/setup_intents/{setup_intent}/confirm", data=body,
                                     method="POST")
    answer = _post(request)
    if answer.get("status") == "requires_action":  # 3-D Secure: the customer completes it
        body = json.dumps({"key": "pk_test_rpay_localstripe", "use_stripe_sdk": True,
                           "client_secret": client_secret}).encode()
        answer = _post(urllib.request.Request(f"{localstripe.url}/v1/setup_intents/{setup_intent}/confirm",
                                              data=body, method="POST"))
    return answer


def authenticate_payment_in_browser(localstripe: LocalStripe, client_secret: str, *, success: bool = True) -> dict:
    """What Stripe.js's ``confirmCardPayment`` sends once the customer completed (or failed)
    the bank's 3-D Secure page (localstripe's Stripe.js)."""
    intent = client_secret.split("_secret_")[0]
    body = json.dumps({"key": "pk_test_rpay_localstripe", "client_secret": client_secret}).encode()
    return _post(urllib.request.Request(
        f"{localstripe.url}/v1/payment_intents/{intent}/_authenticate?success={str(success).lower()}",
        data=body, method="POST"))


def _post(request: urllib.request.Request) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        return json.load(error)


def saved_card_token(gateway: StripeGateway, localstripe: LocalStripe, customer: str,
                     number: str = "4242424242424242") -> Any:
    """A card saved for ``customer`` the browser's way (SetupIntent, confirmed as Stripe.js
    does), read back by the gateway: a CardToken."""
    entry = gateway.start_card_entry(customer)
    confirm_setup_in_browser(localstripe, entry.client_secret, number)
    return gateway.saved_card(customer, entry.client_secret.split("_secret_")[0])
