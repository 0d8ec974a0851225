"""The HTTP client the Stripe library sends rpay's requests through: urllib3, one pool
shared by every thread.

The library's default (``stripe.RequestsClient``) gives each thread its own
``requests.Session``. The payment run starts a fresh pool of worker threads every run, so
each worker opened its own connection (on api.stripe.com a TLS handshake) and dropped it
when the run ended; and per request ``requests`` re-read the process environment for
proxies (``merge_environment_settings``: every variable, twice), looked for a ``~/.netrc``
and merged cookies and hooks rpay never uses. Profiled on the payment run against
localstripe, that was about half of the Python CPU a Stripe charge costs.

Here one ``urllib3.PoolManager`` per client holds the keep-alive connections, handed from
thread to thread, and the proxy the environment names (``HTTPS_PROXY``, ``NO_PROXY``:
what ``requests`` honoured) is looked up once per host instead of once per request. What
the library sees is what ``RequestsClient`` gives it: the body as bytes, the status, the
headers case-insensitively, and ``APIConnectionError`` with ``should_retry`` on the same
failures (timeouts and connection errors retried, a certificate error not).
"""

from __future__ import annotations

import textwrap
import threading
import urllib.request
from collections.abc import Mapping
from typing import Any, NoReturn
from urllib.parse import urlsplit

import stripe
import urllib3

# RequestsClient's default: connect and read, each.
TIMEOUT_SECONDS = 80.0
# Keep-alive connections kept per host: the payment run's workers (32 at most by default)
# each hold one while a charge is in flight; more wait for one instead of opening extras.
POOL_SIZE = 64

_HELP = "If this problem persists, let us know at support@stripe.com."


class Urllib3Client(stripe.HTTPClient):
    """``stripe.StripeClient(http_client=Urllib3Client())``: see the module's docstring."""

    name = "urllib3"

    def __init__(self, timeout: float = TIMEOUT_SECONDS, *, verify_ssl_certs: bool = True,
                 pool_size: int = POOL_SIZE) -> None:
        super().__init__(verify_ssl_certs=verify_ssl_certs)
        self._timeout = urllib3.Timeout(connect=timeout, read=timeout)
        tls: dict[str, Any] = ({"cert_reqs": "CERT_REQUIRED", "ca_certs": stripe.ca_bundle_path}
                               if verify_ssl_certs else {"cert_reqs": "CERT_NONE"})
        # ``retries=False``: the library retries (with the request's Idempotency-Key and
        # its own backoff); urllib3 must neither retry nor follow redirects on its own.
        self._pool_options: dict[str, Any] = {"maxsize": pool_size, "block": False, "retries": False, **tls}
        self._direct = urllib3.PoolManager(**self._pool_options)
        self._proxied: dict[str, urllib3.ProxyManager] = {}
        self._routes: dict[tuple[str, str], urllib3.PoolManager] = {}
        self._lock = threading.Lock()

    def _manager(self, url: str) -> urllib3.PoolManager:
        """The pool for ``url``'s scheme and host: through the environment's proxy for that
        scheme unless ``NO_PROXY`` exempts the host (urllib's rules, as requests applies
        them), else direct. Looked up once per host: the environment is read at start."""
        parts = urlsplit(url)
        key = (parts.scheme, parts.netloc)
        manager = self._routes.get(key)
        if manager is not None:
            return manager
        with self._lock:
            proxy = urllib.request.getproxies_environment().get(parts.scheme)
            if proxy and not urllib.request.proxy_bypass_environment(parts.hostname or ""):
                manager = self._proxied.get(proxy)
                if manager is None:
                    manager = self._proxied[proxy] = urllib3.ProxyManager(proxy, **self._pool_options)
            else:
                manager = self._direct
            self._routes[key] = manager
        return manager

    def request(self, method: str, url: str, headers: Mapping[str, str] | None,
                post_data: Any = None) -> tuple[bytes, int, Mapping[str, str]]:
        body = post_data.encode() if isinstance(post_data, str) else post_data
        try:
            response = self._manager(url).request(method.upper(), url, body=body, headers=dict(headers or {}),
                                                  timeout=self._timeout, redirect=False, preload_content=True)
        except Exception as error:  # noqa: BLE001 (the library expects APIConnectionError for any failure)
            _connection_error(error)
        # HTTPHeaderDict: case-insensitive, as the library reads it ("stripe-should-retry").
        return response.data, response.status, response.headers

    def request_stream(self, method: str, url: str, headers: Mapping[str, str] | None,
                       post_data: Any = None) -> tuple[Any, int, Mapping[str, str]]:
        """Only the library's file downloads stream; rpay makes none. The body unread."""
        body = post_data.encode() if isinstance(post_data, str) else post_data
        try:
            response = self._manager(url).request(method.upper(), url, body=body, headers=dict(headers or {}),
                                                  timeout=self._timeout, redirect=False, preload_content=False)
        except Exception as error:  # noqa: BLE001
            _connection_error(error)
        return response, response.status, response.headers

    def close(self) -> None:
        self._direct.clear()
        for manager in self._proxied.values():
            manager.clear()


def _connection_error(error: Exception) -> NoReturn:
    """``APIConnectionError`` as ``RequestsClient`` raises it: a certificate error is not
    retried (the network is intercepting), a timeout or a connection failure is, any other
    error is not (a local configuration problem)."""
    exceptions = urllib3.exceptions
    if isinstance(error, exceptions.SSLError):
        message, retry = ("Could not verify Stripe's SSL certificate. Please make sure that your network is "
                          f"not intercepting certificates. {_HELP}"), False
    elif isinstance(error, exceptions.TimeoutError | exceptions.NewConnectionError | exceptions.ProtocolError
                    | exceptions.MaxRetryError | exceptions.ProxyError):
        message, retry = f"Unexpected error communicating with Stripe. {_HELP}", True
    else:
        message, retry = (f"Unexpected error communicating with Stripe. It looks like there's probably a "
                          f"configuration issue locally. {_HELP}"), False
    detail = f"{type(error).__name__}: {error}"
    raise stripe.APIConnectionError(f"{textwrap.fill(message)}\n\n(Network error: {detail})",
                                    should_retry=retry) from error
