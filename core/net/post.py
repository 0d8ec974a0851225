"""One POST to a URL a user chose: to the address the SSRF guard checked (never a second
DNS look-up), with a timeout on every socket operation, no redirects followed (a 3xx is
an answer like any other), no proxy, and at most ``max_body`` bytes of the answer read.
The standard library's ``http.client``: a connection whose ``connect`` goes to the pinned
address while the ``Host`` header and TLS's server name and certificate check stay the
URL's host."""

from __future__ import annotations

import http.client
import socket
import ssl
import time
from dataclasses import dataclass

from core.net.guard import Target, UnsafeURL, check_url, resolve_target


@dataclass(frozen=True)
class Answer:
    """What came back: the status (None: no answer), the start of the body, or why none."""

    status: int | None
    body: bytes
    error: str | None
    duration_ms: int

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, target: Target, address: str, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, target: Target, address: str, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float, allow_private: bool,
         max_body: int = 1024) -> Answer:
    """POST ``body`` on a connection of its own; ``UnsafeURL`` (raised) when the guard
    refuses the URL or its address."""
    with Session(timeout=timeout, allow_private=allow_private, max_body=max_body) as session:
        return session.post(url, body, headers)


class Session:
    """POSTs that keep their connection open between requests to the same URL's host (HTTP
    keep-alive: an endpoint's deliveries in a row pay one TCP and TLS handshake). A
    connection is opened to the address the guard checked when it was opened; it is dropped
    after any error, an answer that closes it, or one whose body is longer than what we read.
    One session per thread (connections are not shared)."""

    def __init__(self, *, timeout: float, allow_private: bool, max_body: int = 1024) -> None:
        self.timeout, self.allow_private, self.max_body = timeout, allow_private, max_body
        self._open: dict[tuple[str, str, int], http.client.HTTPConnection] = {}

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for connection in self._open.values():
            connection.close()
        self._open.clear()

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        target = check_url(url, allow_private=self.allow_private)
        key = (target.scheme, target.host, target.port)
        reused = key in self._open
        if not reused:
            address = resolve_target(target, allow_private=self.allow_private)
            kind = _PinnedHTTPS if target.scheme == "https" else _PinnedHTTP
            self._open[key] = kind(target, address, self.timeout)
        started = time.monotonic()
        try:
            return self._send(key, target, body, headers, started)
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as error:
            self._drop(key)
            if not reused:
                return Answer(None, b"", f"{type(error).__name__}: {error}"[:300], _ms(started))
            # A kept connection the server had closed meanwhile: once more on a new one.
            return self.post(url, body, headers)
        except (OSError, http.client.HTTPException) as error:
            self._drop(key)
            return Answer(None, b"", f"{type(error).__name__}: {error}"[:300], _ms(started))

    def _send(self, key: tuple[str, str, int], target: Target, body: bytes, headers: dict[str, str],
              started: float) -> Answer:
        connection = self._open[key]
        connection.request("POST", target.path, body=body, headers={
            "Content-Type": "application/json", "User-Agent": "rpay-webhooks/1", **headers})
        response = connection.getresponse()
        whole = response.length is not None and response.length <= self.max_body
        start = response.read() if whole else response.read(self.max_body)
        if not whole or response.will_close:
            self._drop(key)  # the rest of a long body is never read: the connection goes
        return Answer(response.status, start[:self.max_body], None, _ms(started))

    def _drop(self, key: tuple[str, str, int]) -> None:
        connection = self._open.pop(key, None)
        if connection is not None:
            connection.close()


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


__all__ = ["Answer", "Session", "UnsafeURL", "post"]
