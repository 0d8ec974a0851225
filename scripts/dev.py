#!/usr/bin/env python
"""`make run`: start DynamoDB Local and localstripe, prepare both databases, seed once,
serve on :8000 with PAYMENT_GATEWAY=stripe against localstripe (cards typed into its
Stripe.js stand-in).

Every child (the engine, each setup step, runserver and its autoreloader child) runs
in a process group of its own, and this runner stops each group whole: on Ctrl-C,
SIGTERM or SIGHUP it stops them all and exits 0; if the engine dies it says so in one
line on stderr, stops the web server and exits 1. The data stays under var/.

Environment knobs (the defaults are what `make run` wants):
  RUN_ADDR            where runserver listens (127.0.0.1:8000); the links in e-mails
                      (SITE_URL) point there too, unless SITE_URL is set
  DYNAMODB_PORT       the engine's port (8123)
  DYNAMODB_DATA_DIR   the engine's data folder (var/dynamodb; its log is var/dynamodb.log)
  RUN_SEED            0 skips seed_demo and revenue_rebuild (default 1: seed once, keep the revenue figures)
  RUN_GATEWAY         stripe (default: localstripe) or simulated (rpay's own card form, an
                      SQLite ledger; no localstripe)
  STRIPE_PORT         localstripe's port (8124); its state is kept in var/localstripe.pickle
                      beside DynamoDB Local's data (both kept, or both removed with var/)
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.localengine import LocalEngine, LocalEngineError, port_in_use, start_local_engine  # noqa: E402
from devtools.localstripe import LocalStripe, LocalStripeError, start_localstripe  # noqa: E402

POLL_SECONDS = 0.5


class Stop(Exception):
    """A signal asked the runner to stop everything."""


class EngineDied(Exception):
    """DynamoDB Local (or localstripe: ``what``) exited while the runner still needed it."""

    def __init__(self, what: str = "DynamoDB Local") -> None:
        super().__init__(what)
        self.what = what


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _stop_on_signal(signum: int, frame: object) -> None:
    # Once is enough: a second Ctrl-C must not interrupt the stopping of the children.
    for other in STOP_SIGNALS:
        signal.signal(other, signal.SIG_IGN)
    raise Stop(signal.Signals(signum).name)


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    # A session of its own: a terminal's Ctrl-C reaches only this runner, which then
    # stops the whole group (runserver's autoreloader forks a child that serves).
    return subprocess.Popen(args, cwd=ROOT, env=env, start_new_session=True)


def stop(process: subprocess.Popen | None, timeout: float = 10) -> None:
    """SIGTERM to the child's process group, then SIGKILL to whatever is left of it."""
    if process is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=timeout)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def site_url(addr: str) -> str:
    """The base URL of e-mail links for a server listening on ``addr`` (RUN_ADDR's forms:
    ``host:port`` or a bare ``port``). A wildcard address is reached on this machine's
    loopback: a link to http://0.0.0.0:8300/ does not open in every browser."""
    host, _, port = addr.rpartition(":")
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "0": "127.0.0.1", "[::]": "[::1]"}.get(host, host)
    return f"http://{host}:{port}"


def wait_watching(process: subprocess.Popen, engine: LocalEngine, stripe: LocalStripe | None = None) -> int:
    """Wait for ``process`` to end; raise EngineDied as soon as the engine (or localstripe) is gone."""
    while True:
        try:
            return process.wait(timeout=POLL_SECONDS)
        except subprocess.TimeoutExpired:
            if not engine.alive():
                raise EngineDied from None
            if stripe is not None and not stripe.alive():
                raise EngineDied("localstripe") from None


def how_it_ended(returncode: int) -> str:
    if returncode < 0:
        return f"was killed ({signal.Signals(-returncode).name})"
    return f"exited (code {returncode})"


def main() -> int:
    for signum in STOP_SIGNALS:
        signal.signal(signum, _stop_on_signal)
    port = int(os.environ.get("DYNAMODB_PORT", "8123"))
    addr = os.environ.get("RUN_ADDR", "127.0.0.1:8000")
    host, _, web_port = addr.rpartition(":")
    data_dir = Path(os.environ.get("DYNAMODB_DATA_DIR") or ROOT / "var" / "dynamodb")
    log_file = data_dir.with_name(data_dir.name + ".log")
    if port_in_use(int(web_port), host or "127.0.0.1"):
        print(f"make run: port {web_port} is already in use: stop what runs there or set RUN_ADDR",
              file=sys.stderr)
        return 1
    gateway = os.environ.get("RUN_GATEWAY", "stripe")
    if gateway not in ("stripe", "simulated"):
        print(f"make run: RUN_GATEWAY must be stripe or simulated, not {gateway!r}", file=sys.stderr)
        return 1
    engine = None
    stripe = None
    child = None
    try:
        engine = start_local_engine(port, data_dir, log_file=log_file)
        print(f"DynamoDB Local running at {engine.endpoint} (data in {data_dir}, log in {log_file})", flush=True)
        # E-mails sent by the site (and the seed) link to where it answers, not to the
        # default :8000 (a deployment behind a proxy sets SITE_URL itself: kept).
        env = {**os.environ, "DYNAMODB_ENDPOINT": engine.endpoint,
               "SITE_URL": os.environ.get("SITE_URL") or site_url(addr)}
        if gateway == "stripe":
            # Its state beside DynamoDB Local's data: the demo's cards (Stripe payment
            # methods) stay valid as long as the subscriptions that name them.
            state = data_dir.with_name("localstripe.pickle")
            stripe_log = data_dir.with_name("localstripe.log")
            stripe = start_localstripe(int(os.environ.get("STRIPE_PORT", "8124")), state, log_file=stripe_log)
            env.update(stripe.settings())
            stripe.register_webhook(f"http://{addr}/webhooks/stripe/")  # its events reach the site
            print(f"localstripe running at {stripe.url} (Stripe's API and a stand-in Stripe.js; state in {state}); "
                  "test cards: 4242 4242 4242 4242 pays, 4000 0000 0000 0341 is declined", flush=True)
            print("the batches and manage.py in another terminal charge through it with: export "
                  + " ".join(f"{k}={v}" for k, v in {**stripe.settings(), "DYNAMODB_ENDPOINT": engine.endpoint}.items()),
                  flush=True)
        python = sys.executable
        steps = [["setup_dynamodb"], ["migrate", "--noinput", "-v", "0"]]
        if os.environ.get("RUN_SEED", "1") != "0":
            # the demo's revenue figures kept too, so the Revenue page reads them as a
            # business's nightly run would have kept them (safe to run again: the same items)
            steps += [["seed_demo"], ["revenue_rebuild"]]
        for step in steps:
            child = start([python, "manage.py", *step], env)
            code = wait_watching(child, engine, stripe)
            if code != 0:
                print(f"make run: step {step[0]} failed (exit {code})", file=sys.stderr)
                return 1
        print(f"serving http://{addr}/  (Ctrl-C stops the server, DynamoDB Local and localstripe)", flush=True)
        print(f"health: http://{addr}/healthz  readiness: http://{addr}/readyz  "
              f"metrics (Prometheus, from this machine): http://{addr}/metrics", flush=True)
        child = start([python, "manage.py", "runserver", addr], env)
        code = wait_watching(child, engine, stripe)  # its group may outlive it: stop() below ends it
        print(f"make run: the web server exited (code {code}); stopping DynamoDB Local", file=sys.stderr)
        return code or 1
    except (LocalEngineError, LocalStripeError) as error:
        print(f"make run: {error}", file=sys.stderr)
        return 1
    except EngineDied as died:
        server, log = (engine, log_file) if died.what == "DynamoDB Local" else (stripe, data_dir.with_name("localstripe.log"))
        print(f"make run: {died.what} {how_it_ended(server.process.returncode)}: "
              f"the site cannot work without it; its log is {log}", file=sys.stderr)
        return 1
    except Stop:
        print("stopping the web server, DynamoDB Local and localstripe", flush=True)
        return 0
    finally:
        # The runner stops its children even if a signal arrives meanwhile.
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        stop(child)
        if stripe is not None:
            stripe.stop()
        if engine is not None:
            engine.stop()


if __name__ == "__main__":
    sys.exit(main())
