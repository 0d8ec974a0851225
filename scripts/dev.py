#!/usr/bin/env python
"""`make run`: start dynalite, prepare both databases, seed once, serve on :8000.

Ctrl-C stops the web server and the engine it started; data stays under var/.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from billing.localengine import LocalEngineError, start_local_engine  # noqa: E402


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    # `kill` or a closing terminal stops everything too, not just this process.
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    signal.signal(signal.SIGHUP, _stop_on_sigterm)
    port = int(os.environ.get("DYNAMODB_PORT", "8123"))
    var = ROOT / "var"
    var.mkdir(exist_ok=True)
    try:
        engine = start_local_engine(port, var / "dynamodb", log_file=var / "dynamodb.log")
    except LocalEngineError as error:
        print(f"make run: {error}", file=sys.stderr)
        return 1
    env = {**os.environ, "DYNAMODB_ENDPOINT": engine.endpoint}
    python = sys.executable
    print(f"dynalite running at {engine.endpoint} (data in var/dynalite, log in var/dynalite.log)")
    server = None
    try:
        for step in (["setup_dynamodb"], ["migrate", "--noinput", "-v", "0"], ["seed_demo"]):
            subprocess.run([python, "manage.py", *step], cwd=ROOT, env=env, check=True)
        addr = os.environ.get("RUN_ADDR", "127.0.0.1:8000")
        print(f"serving http://{addr}/  (Ctrl-C stops the server and dynalite)")
        server = subprocess.Popen([python, "manage.py", "runserver", addr], cwd=ROOT, env=env)
        return server.wait()
    except subprocess.CalledProcessError as error:
        print(f"make run: step {' '.join(error.cmd[2:])} failed (exit {error.returncode})", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        if server and server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
        engine.stop()
        print("stopped the web server and dynalite")


if __name__ == "__main__":
    sys.exit(main())
