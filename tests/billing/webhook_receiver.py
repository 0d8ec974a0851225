"""A merchant's webhook receiver for the tests: a real threaded HTTP server on the loopback
that verifies each request's signature with the ``standardwebhooks`` library, as a
merchant's code would, and records what it got."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError


@dataclass
class Received:
    webhook_id: str
    body: dict[str, Any]
    headers: dict[str, str]
    verified_by: list[str]  # the names of the secrets that verify it
    answered: int


@dataclass
class Receiver:
    """``secrets``: name -> secret; a request none of them verifies is answered 400.
    ``status``: what to answer; ``hold``: when set, each request waits for ``release``."""

    secrets: dict[str, str] = field(default_factory=dict)
    status: int = 200
    hold: bool = False
    received: list[Received] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                receiver.arrived.set()
                if receiver.hold:
                    receiver.release.wait(30)
                verified = []
                for name, secret in receiver.secrets.items():
                    try:
                        Webhook(secret).verify(body, headers)
                    except WebhookVerificationError:
                        continue
                    verified.append(name)
                status = receiver.status if verified else 400
                with receiver._lock:
                    if verified:
                        receiver.received.append(Received(headers.get("webhook-id", ""), json.loads(body), headers,
                                                          verified, status))
                    else:
                        receiver.refused.append(headers.get("webhook-id", ""))
                answer = b"ok" if status < 300 else b"no thanks " * 300
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:
                    pass  # the sender is gone (killed mid-request)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        """Down: nothing listens on the port (connections are refused)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def delivered(self, status: int = 200) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.answered == status]

    def ids(self) -> list[str]:
        return [r.webhook_id for r in self.delivered()]
