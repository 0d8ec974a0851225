"""The Stripe gateway's own HTTP client (core/payments/stripe/http.py: http.client, one pool
of keep-alive connections for every thread) and its charge answers read as plain JSON: the
same results as the library's default client and StripeObjects, connections reused by
new worker threads, the library's retries and errors kept, the environment's proxy
honoured."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import stripe

from core.payments.errors import GatewayError
from core.payments.stripe import StripeGateway
from core.payments.stripe.http import KeepAliveClient, _connection_error

pytestmark = pytest.mark.django_db


def _comparable(result) -> tuple:
    """A ChargeResult without what differs between two charges (ids, time, secret)."""
    return (result.status, result.amount, result.currency, result.decline_code, result.metadata,
            result.refunded, bool(result.client_secret), bool(result.charge_id), result.created[:10])


@pytest.mark.parametrize("number", ["4242424242424242", "4000000000000341", "4000002760003184"])
@pytest.mark.parametrize("off_session", [True, False])
def test_charges_read_as_json_are_what_the_librarys_objects_gave(stripe_gateway, number, off_session) -> None:
    # ``stripe_gateway`` sends through the library's RequestsClient; ``ours`` through
    # KeepAliveClient. Paid, declined and authentication-required charges alike.
    ours = StripeGateway()
    assert isinstance(ours.client._requestor._client, KeepAliveClient)
    customer = ours.create_customer("acct-http", "http@example.com")
    card = ours.tokenize_card(number, 12, 2034, "123", customer=customer)
    mine = ours.charge(card.token, 1250, "eur", f"http:{number}:{off_session}", {"sub_id": "s1"},
                       off_session=off_session)
    theirs = stripe_gateway.charge(card.token, 1250, "eur", f"lib:{number}:{off_session}", {"sub_id": "s1"},
                                   off_session=off_session)
    assert _comparable(mine) == _comparable(theirs)
    assert mine.payment_method == theirs.payment_method
    assert not mine.succeeded or mine.payment_method == card.token.split("/")[1]
    if mine.charge_id:  # the same PaymentIntent read back as a StripeObject: the same result
        assert _comparable(ours.charge_status(mine.charge_id)) == _comparable(mine)


def test_an_unknown_payment_method_is_the_same_decline(stripe_gateway) -> None:
    ours = StripeGateway()
    customer = ours.create_customer("acct-gone", "gone@example.com")
    mine = ours.charge(f"{customer}/pm_gone", 700, "EUR", "http:gone")
    theirs = stripe_gateway.charge(f"{customer}/pm_gone", 700, "EUR", "lib:gone")
    assert (mine.status, mine.decline_code) == (theirs.status, theirs.decline_code) == ("declined", mine.decline_code)


def test_new_worker_threads_reuse_the_pools_connections(stripe_gateway) -> None:
    ours = StripeGateway()
    client = ours.client._requestor._client
    customer = ours.create_customer("acct-pool", "pool@example.com")
    card = ours.tokenize_card("4242424242424242", 12, 2034, "123", customer=customer)

    def run(name: str) -> None:  # a payment run: a fresh pool of 8 worker threads
        with ThreadPoolExecutor(8) as pool:
            paid = list(pool.map(lambda n: ours.charge(card.token, 100, "EUR", f"{name}:{n}").succeeded, range(24)))
        assert all(paid)

    run("first")
    assert 1 <= client.opened <= 8  # at most one per thread sending at once
    run("second")
    run("third")
    # The later runs' threads took the pool's connections: never more than the most threads
    # sending at once (8). A run may open one its predecessor did not need (7 sent at once
    # in one run, 8 in the next), so the count is bounded, not frozen. A connection per
    # thread would have opened one per thread and run: 24 or so.
    assert client.opened <= 8


def test_a_connection_the_server_closed_is_replaced_at_once(stripe_gateway) -> None:
    ours = StripeGateway()
    client = ours.client._requestor._client
    customer = ours.create_customer("acct-stale", "stale@example.com")
    for connections in client._idle.values():  # the server closes them while they sit idle
        for connection in connections:
            connection.sock.shutdown(2)
    assert ours.customer_account(customer) == "acct-stale"  # no retry wait: sent again on a new one
    assert client.opened == 2


class _Flaky(BaseHTTPRequestHandler):
    """409 (an idempotency conflict Stripe asks to retry) first, then the PaymentIntent."""

    seen: list[tuple[str, str]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.path, self.headers["Idempotency-Key"]))
        first = len(self.seen) == 1
        body = (b'{"error": {"type": "idempotency_error", "message": "in flight"}}' if first else
                b'{"id": "pi_1", "object": "payment_intent", "amount": 500, "currency": "eur", '
                b'"status": "succeeded", "metadata": {}, "created": 1795000000, "payment_method": "pm_1"}')
        self.send_response(409 if first else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def flaky_stripe(settings) -> Iterator[str]:
    _Flaky.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.STRIPE_API_BASE = f"http://127.0.0.1:{server.server_port}"
    settings.STRIPE_SECRET_KEY = "sk_test_flaky"
    yield settings.STRIPE_API_BASE
    server.shutdown()
    server.server_close()


def test_the_library_retries_through_it_under_the_same_key(flaky_stripe, monkeypatch) -> None:
    monkeypatch.setattr(stripe.HTTPClient, "_sleep_time_seconds", lambda self, n: 0)
    result = StripeGateway().charge("cus_1/pm_1", 500, "EUR", "sub-9:2026-12-01")
    assert result.succeeded and result.charge_id == "pi_1"
    assert _Flaky.seen == [("/v1/payment_intents", "sub-9:2026-12-01")] * 2


def test_nothing_listening_is_a_retried_connection_error_then_a_gateway_error(settings, monkeypatch) -> None:
    from devtools.localengine import free_port

    settings.STRIPE_API_BASE = f"http://127.0.0.1:{free_port()}"
    settings.STRIPE_SECRET_KEY = "sk_test_down"
    monkeypatch.setattr(stripe.HTTPClient, "_sleep_time_seconds", lambda self, n: 0)
    client = KeepAliveClient()
    with pytest.raises(stripe.APIConnectionError) as raised:
        client.request("get", f"{settings.STRIPE_API_BASE}/v1/charges", {})
    assert raised.value.should_retry
    with pytest.raises(GatewayError):
        StripeGateway().charge("cus_1/pm_1", 500, "EUR", "k")


def test_a_certificate_error_is_not_retried() -> None:
    with pytest.raises(stripe.APIConnectionError) as raised:
        _connection_error(ssl.SSLCertVerificationError("certificate verify failed"))
    assert not raised.value.should_retry and "SSL certificate" in str(raised.value)


def test_the_environments_proxy_is_honoured_unless_no_proxy_names_the_host(monkeypatch) -> None:
    for name in ("NO_PROXY", "no_proxy", "https_proxy", "http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://rpay:s%40cret@proxy.internal:3128")
    client = KeepAliveClient()
    route = client._route("https", "api.stripe.com")
    assert (route.host, route.port, route.proxy) == ("api.stripe.com", 443, ("proxy.internal", 3128))
    assert dict(route.proxy_headers)["Proxy-Authorization"] == "Basic cnBheTpzQGNyZXQ="  # rpay:s@cret
    tunnel = client._connect(route)
    assert (tunnel.host, tunnel.port, tunnel._tunnel_host, tunnel._tunnel_port) == (
        "proxy.internal", 3128, "api.stripe.com", 443)
    assert client._route("https", "api.stripe.com") is route  # looked up once per host
    monkeypatch.setenv("NO_PROXY", "api.stripe.com")
    assert KeepAliveClient()._route("https", "api.stripe.com").proxy is None
