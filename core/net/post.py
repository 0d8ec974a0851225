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
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float, allow_private: bool,
         max_body: int = 1024) -> Answer:
    """POST ``body``; ``UnsafeURL`` (raised) when the guard refuses the URL or its address."""
    target = check_url(url, allow_private=allow_private)
    address = resolve_target(target, allow_private=allow_private)
    started = time.monotonic()
    kind = _PinnedHTTPS if target.scheme == "https" else _PinnedHTTP
    connection = kind(target, address, timeout)
    try:
        connection.request("POST", target.path, body=body, headers={
            "Content-Type": "application/json", "User-Agent": "rpay-webhooks/1", "Connection": "close", **headers})
        response = connection.getresponse()
        start = response.read(max_body)
        return Answer(response.status, start, None, _ms(started))
    except (OSError, http.client.HTTPException) as error:
        return Answer(None, b"", f"{type(error).__name__}: {error}"[:300], _ms(started))
    finally:
        connection.close()


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


__all__ = ["Answer", "UnsafeURL", "post"]
