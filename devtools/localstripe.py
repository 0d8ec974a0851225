"""Start and stop localstripe: a real HTTP server speaking Stripe's API (PyPI ``localstripe``,
a development dependency), with a stand-in Stripe.js at ``/js.stripe.com/v3/``.

Used by ``make run`` (scripts/dev.py), the tests (one server per test run) and the
benchmark, the way DynamoDB Local is (devtools/localengine.py). No Django import here.

localstripe keeps its whole state in one fixed file, ``/tmp/localstripe.pickle``, written
after every change and read at start. Two servers on one machine (``make run`` and a test
run) would then share, and overwrite, each other's state, and the rewrite of the whole
state on every change makes a long benchmark quadratic. So the server runs through
``python -m devtools.localstripe serve``, which points that file where the caller says:
``make run`` keeps it in var/ beside DynamoDB Local's data (the demo's cards stay valid
from one run to the next, as its subscriptions do), the tests and the benchmark keep no
file at all (each starts from nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from devtools.localengine import HOST, port_in_use, stop_process

ROOT = Path(__file__).resolve().parent.parent
# Any key localstripe accepts; the publishable one is what the pages give Stripe.js.
TEST_SECRET_KEY = "sk_test_rpay_localstripe"
TEST_PUBLISHABLE_KEY = "pk_test_rpay_localstripe"
# What localstripe signs its webhook deliveries with (make run registers rpay's endpoint).
TEST_WEBHOOK_SECRET = "whsec_rpay_localstripe"


class LocalStripeError(RuntimeError):
    """localstripe cannot start; the message says why, in one line."""


@dataclass
class LocalStripe:
    """A running localstripe; ``stop()`` ends it."""

    process: subprocess.Popen
    port: int
    state_file: Path | None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def js_url(self) -> str:
        return f"{self.url}/js.stripe.com/v3/"

    def settings(self) -> dict[str, str]:
        """The environment (or Django settings) that points rpay at this server."""
        return {"PAYMENT_GATEWAY": "stripe", "STRIPE_SECRET_KEY": TEST_SECRET_KEY,
                "STRIPE_PUBLISHABLE_KEY": TEST_PUBLISHABLE_KEY, "STRIPE_API_BASE": self.url,
                "STRIPE_JS_URL": self.js_url, "STRIPE_WEBHOOK_SECRET": TEST_WEBHOOK_SECRET}

    def register_webhook(self, url: str, secret: str = TEST_WEBHOOK_SECRET) -> None:
        """Have localstripe deliver its events to ``url``, signed with ``secret`` (it keeps
        the registration in memory: once per start)."""
        body = json.dumps({"url": url, "secret": secret}).encode()
        request = urllib.request.Request(f"{self.url}/_config/webhooks/rpay", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=5):
            pass

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 10) -> None:
        stop_process(self.process, timeout)


def _answers(url: str) -> bool:
    request = urllib.request.Request(f"{url}/v1/customers?limit=1",
                                     headers={"Authorization": f"Bearer {TEST_SECRET_KEY}"})
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _tail(out: IO[bytes], log_file: Path | None) -> str:
    if log_file is not None:
        return f"; see {log_file}"
    out.seek(0)
    lines = out.read().decode(errors="replace").strip().splitlines()
    return f": {lines[-1]}" if lines else ""


def start_localstripe(port: int, state_file: Path | None = None, *, log_file: Path | None = None,
                      startup_timeout: float = 30) -> LocalStripe:
    """Start localstripe on 127.0.0.1:``port`` and wait until it answers.

    ``state_file``: where it keeps its state across restarts; None: nowhere (a fresh,
    empty Stripe, gone when it stops)."""
    if port_in_use(port):
        raise LocalStripeError(f"port {port} is already in use: stop what runs there or set STRIPE_PORT")
    args = [sys.executable, "-m", "devtools.localstripe", "serve", "--port", str(port)]
    if state_file is not None:
        state_file.parent.mkdir(parents=True, exist_ok=True)
        args += ["--state", str(state_file)]
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        out: IO[bytes] = open(log_file, "ab")  # noqa: SIM115 (the child keeps it)
    else:
        out = tempfile.TemporaryFile()  # noqa: SIM115 (read on failure, closed below)
    process = subprocess.Popen(args, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                               start_new_session=True)
    server = LocalStripe(process, port, state_file)
    deadline = time.monotonic() + startup_timeout
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise LocalStripeError(f"localstripe exited at start (code {process.returncode}){_tail(out, log_file)}")
            if _answers(server.url):
                return server
            time.sleep(0.1)
        raise LocalStripeError(f"localstripe did not answer on port {port} within {startup_timeout:.0f}s")
    except BaseException:
        server.stop()
        raise
    finally:
        out.close()  # the child has its own copy


def serve(port: int, state: str | None) -> None:
    """Run localstripe in this process, its state file at ``state`` (or none)."""
    import logging

    from aiohttp import web
    from localstripe import resources, server

    def load(store: resources.Store) -> None:
        with contextlib.suppress(FileNotFoundError), open(state, "rb") as f:  # type: ignore[arg-type]
            import pickle

            store.clear()
            store.update(pickle.load(f))  # noqa: S301 (our own file, written by this server)

    def dump(store: resources.Store) -> None:
        if state is None:
            return
        import pickle

        partial = f"{state}.partial"
        with open(partial, "wb") as f:
            pickle.dump(dict(store), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, state)  # a kill mid-write leaves the last whole state

    resources.Store.try_load_from_disk = load
    resources.Store.dump_to_disk = dump
    if state is not None:
        server.store.try_load_from_disk()
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    web.run_app(server.app, host=HOST, port=port, print=None, access_log=None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.localstripe")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("serve", help="run localstripe in the foreground")
    run.add_argument("--port", type=int, default=8420)
    run.add_argument("--state", help="the file it keeps its state in (default: none)")
    args = parser.parse_args(argv)
    serve(args.port, args.state)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
