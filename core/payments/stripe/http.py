"""The HTTP client the Stripe library sends rpay's requests through: the standard library's
``http.client``, one pool of keep-alive connections shared by every thread.

The library's default (``stripe.RequestsClient``) gives each thread its own
``requests.Session``. The payment run starts a fresh pool of worker threads every run, so
each worker opened its own connection (on api.stripe.com a TLS handshake) and dropped it
when the run ended; and per request ``requests`` re-read the process environment for
proxies (``merge_environment_settings``: every variable, twice), looked for a ``~/.netrc``
and merged cookies, hooks and adapters rpay never uses. Profiled on the payment run
against localstripe, that was about half of the Python CPU a Stripe charge costs; urllib3
alone (requests' transport) still cost twice what ``http.client`` does for the same
request (its pool keys, URL parsing, header dictionaries, and the body sent apart from the
headers), so this client speaks ``http.client`` directly.

What the library sees is what ``RequestsClient`` gives it: the body as bytes, the status,
the headers case-insensitively, and ``APIConnectionError`` with ``should_retry`` on the
same failures (timeouts and connection errors retried, a certificate error not). The
library keeps doing its own retries, with the request's Idempotency-Key. The proxy the
environment names (``HTTPS_PROXY``, ``NO_PROXY``: what requests honoured) is looked up
once per host instead of once per request.
"""

from __future__ import annotations

import base64
import http.client
import ssl
import textwrap
import threading
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import unquote, urlsplit

import stripe

# RequestsClient's default, for connecting and for each read.
TIMEOUT_SECONDS = 80.0
# Idle keep-alive connections kept per host: the payment run's workers (32 at most by
# default) each hold one while a charge is in flight.
POOL_SIZE = 64
# A keep-alive connection the server closed while it sat idle fails on its next request
# with one of these before any answer: sent again once, at once, on a new connection. Safe:
# the library puts an Idempotency-Key on every POST, and a GET changes nothing.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)

_HELP = "If this problem persists, let us know at support@stripe.com."


@dataclass(frozen=True)
class _Route:
    """How to reach one scheme and host: directly, or through the environment's proxy."""

    scheme: str
    host: str
    port: int
    proxy: tuple[str, int] | None = None
    proxy_headers: tuple[tuple[str, str], ...] = ()


class KeepAliveClient(stripe.HTTPClient):
    """``stripe.StripeClient(http_client=KeepAliveClient())``: see the module's docstring."""

    name = "http.client"

    def __init__(self, timeout: float = TIMEOUT_SECONDS, *, verify_ssl_certs: bool = True,
                 pool_size: int = POOL_SIZE) -> None:
        super().__init__(verify_ssl_certs=verify_ssl_certs)
        self._timeout = timeout
        self._pool_size = pool_size
        self._tls = (ssl.create_default_context(cafile=stripe.ca_bundle_path) if verify_ssl_certs
                     else ssl._create_unverified_context())  # noqa: S323 (only when the caller turns checks off)
        self._routes: dict[tuple[str, str], _Route] = {}
        self._idle: dict[_Route, list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()
        self.opened = 0  # connections made so far (the tests count them)

    # --- the library's interface -----------------------------------------------------------

    def request(self, method: str, url: str, headers: Mapping[str, str] | None,
                post_data: Any = None) -> tuple[bytes, int, Mapping[str, str]]:
        return self._send(method, url, headers, post_data, stream=False)

    def request_stream(self, method: str, url: str, headers: Mapping[str, str] | None,
                       post_data: Any = None) -> tuple[Any, int, Mapping[str, str]]:
        """Only the library's file downloads stream (rpay makes none): the answer unread,
        its connection not pooled."""
        return self._send(method, url, headers, post_data, stream=True)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()

    # --- connections -------------------------------------------------------------------

    def _send(self, method: str, url: str, headers: Mapping[str, str] | None, post_data: Any,
              *, stream: bool) -> tuple[Any, int, Mapping[str, str]]:
        parts = urlsplit(url)
        route = self._route(parts.scheme, parts.netloc)
        # Through a plain-HTTP proxy the request line names the whole URL; else the path.
        target = url if route.proxy and route.scheme == "http" else (parts.path or "/") + (
            f"?{parts.query}" if parts.query else "")
        sent = dict(headers or {})
        if route.proxy and route.scheme == "http":
            sent.update(route.proxy_headers)
        body = post_data.encode() if isinstance(post_data, str) else post_data
        for attempt in (1, 2):
            connection, reused = self._take(route)
            try:
                connection.request(method.upper(), target, body=body, headers=sent)
                response = connection.getresponse()
                content = response if stream else response.read()
            except Exception as error:  # noqa: BLE001 (the library expects APIConnectionError for any failure)
                connection.close()
                if reused and attempt == 1 and isinstance(error, _STALE):
                    continue
                _connection_error(error)
            if not stream:
                self._give_back(route, connection, reusable=not response.will_close)
            # HTTPMessage: case-insensitive, as the library reads it ("stripe-should-retry").
            return content, response.status, response.msg
        raise AssertionError("unreachable")  # pragma: no cover

    def _route(self, scheme: str, netloc: str) -> _Route:
        """Direct, or through the environment's proxy for the scheme unless ``NO_PROXY``
        exempts the host (urllib's rules, as requests applies them): looked up once."""
        route = self._routes.get((scheme, netloc))
        if route is not None:
            return route
        parts = urlsplit(f"{scheme}://{netloc}")
        host = parts.hostname or ""
        port = parts.port or (443 if scheme == "https" else 80)
        proxy_url = urllib.request.getproxies_environment().get(scheme)
        if proxy_url and not urllib.request.proxy_bypass_environment(host):
            proxy = urlsplit(proxy_url if "://" in proxy_url else f"http://{proxy_url}")
            auth: tuple[tuple[str, str], ...] = ()
            if proxy.username:
                user = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}"
                auth = (("Proxy-Authorization", "Basic " + base64.b64encode(user.encode()).decode()),)
            route = _Route(scheme, host, port, (proxy.hostname or "", proxy.port or 80), auth)
        else:
            route = _Route(scheme, host, port)
        self._routes[(scheme, netloc)] = route
        return route

    def _take(self, route: _Route) -> tuple[http.client.HTTPConnection, bool]:
        """An idle connection to the route (the most recently used), or a new one."""
        with self._lock:
            idle = self._idle.get(route)
            if idle:
                return idle.pop(), True
            self.opened += 1
        return self._connect(route), False

    def _give_back(self, route: _Route, connection: http.client.HTTPConnection, *, reusable: bool) -> None:
        if reusable:
            with self._lock:
                idle = self._idle.setdefault(route, [])
                if len(idle) < self._pool_size:
                    idle.append(connection)
                    return
        connection.close()

    def _connect(self, route: _Route) -> http.client.HTTPConnection:
        """Not connected yet: ``request`` connects (and, through a proxy, tunnels)."""
        host, port = route.proxy or (route.host, route.port)
        if route.scheme != "https":
            return http.client.HTTPConnection(host, port, timeout=self._timeout)
        connection = http.client.HTTPSConnection(host, port, timeout=self._timeout, context=self._tls)
        if route.proxy:
            connection.set_tunnel(route.host, route.port, headers=dict(route.proxy_headers))
        return connection


def _connection_error(error: Exception) -> NoReturn:
    """``APIConnectionError`` as ``RequestsClient`` raises it: a certificate error is not
    retried (the network is intercepting), a timeout or a connection failure is, any other
    error is not (a local configuration problem)."""
    if isinstance(error, ssl.SSLError):
        message, retry = ("Could not verify Stripe's SSL certificate. Please make sure that your network is "
                          f"not intercepting certificates. {_HELP}"), False
    elif isinstance(error, OSError | http.client.HTTPException):  # timeouts, refused, reset, DNS, bad answers
        message, retry = f"Unexpected error communicating with Stripe. {_HELP}", True
    else:
        message, retry = (f"Unexpected error communicating with Stripe. It looks like there's probably a "
                          f"configuration issue locally. {_HELP}"), False
    detail = f"{type(error).__name__}: {error}"
    raise stripe.APIConnectionError(f"{textwrap.fill(message)}\n\n(Network error: {detail})",
                                    should_retry=retry) from error
