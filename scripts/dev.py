#!/usr/bin/env python
"""`make run`: start DynamoDB Local, prepare both databases, seed once, serve on :8000.

Every child (the engine, each setup step, runserver and its autoreloader child) runs
in a process group of its own, and this runner stops each group whole: on Ctrl-C,
SIGTERM or SIGHUP it stops them all and exits 0; if the engine dies it says so in one
line on stderr, stops the web server and exits 1. The data stays under var/.

Environment knobs (the defaults are what `make run` wants):
  RUN_ADDR            where runserver listens (127.0.0.1:8000)
  DYNAMODB_PORT       the engine's port (8123)
  DYNAMODB_DATA_DIR   the engine's data folder (var/dynamodb; its log is var/dynamodb.log)
  RUN_SEED            0 skips seed_demo (default 1: seed once, as make run always has)
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

POLL_SECONDS = 0.5


class Stop(Exception):
    """A signal asked the runner to stop everything."""


class EngineDied(Exception):
    """DynamoDB Local exited while the runner still needed it."""


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


def wait_watching(process: subprocess.Popen, engine: LocalEngine) -> int:
    """Wait for ``process`` to end; raise EngineDied as soon as the engine is gone."""
    while True:
        try:
            return process.wait(timeout=POLL_SECONDS)
        except subprocess.TimeoutExpired:
            if not engine.alive():
                raise EngineDied from None


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
    engine = None
    child = None
    try:
        engine = start_local_engine(port, data_dir, log_file=log_file)
        print(f"DynamoDB Local running at {engine.endpoint} (data in {data_dir}, log in {log_file})", flush=True)
        env = {**os.environ, "DYNAMODB_ENDPOINT": engine.endpoint}
        python = sys.executable
        steps = [["setup_dynamodb"], ["migrate", "--noinput", "-v", "0"]]
        if os.environ.get("RUN_SEED", "1") != "0":
            steps.append(["seed_demo"])
        for step in steps:
            child = start([python, "manage.py", *step], env)
            code = wait_watching(child, engine)
            if code != 0:
                print(f"make run: step {step[0]} failed (exit {code})", file=sys.stderr)
                return 1
        print(f"serving http://{addr}/  (Ctrl-C stops the server and DynamoDB Local)", flush=True)
        print(f"health: http://{addr}/healthz  readiness: http://{addr}/readyz  "
              f"metrics (Prometheus, from this machine): http://{addr}/metrics", flush=True)
        child = start([python, "manage.py", "runserver", addr], env)
        code = wait_watching(child, engine)  # its group may outlive it: stop() below ends it
        print(f"make run: the web server exited (code {code}); stopping DynamoDB Local", file=sys.stderr)
        return code or 1
    except LocalEngineError as error:
        print(f"make run: {error}", file=sys.stderr)
        return 1
    except EngineDied:
        print(f"make run: DynamoDB Local {how_it_ended(engine.process.returncode)}: "
              f"the site cannot work without it; its log is {log_file}", file=sys.stderr)
        return 1
    except Stop:
        print("stopping the web server and DynamoDB Local", flush=True)
        return 0
    finally:
        # The runner stops its children even if a signal arrives meanwhile.
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        stop(child)
        if engine is not None:
            engine.stop()


if __name__ == "__main__":
    sys.exit(main())
