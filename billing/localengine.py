"""Start and stop the local DynamoDB engine (dynalite, from package.json).

Used by ``make run`` (scripts/dev.py), the test suite (a server per test run) and the
benchmark. No Django import here: it runs before Django is configured.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DYNALITE_BIN = ROOT / "node_modules" / ".bin" / "dynalite"


class LocalEngineError(RuntimeError):
    """The engine cannot start; the message says what to do."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


@dataclass
class Dynalite:
    """A running dynalite server; ``stop()`` ends it and everything it started."""

    process: subprocess.Popen
    port: int
    data_dir: Path | None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self, timeout: float = 5) -> None:
        if self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=timeout)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=timeout)


def start_dynalite(
    port: int, data_dir: Path | None, *, log_file: Path | None = None, startup_timeout: float = 20
) -> Dynalite:
    """Start dynalite on 127.0.0.1:``port`` with LevelDB data in ``data_dir`` (None: in memory)."""
    if shutil.which("node") is None:
        raise LocalEngineError("Node.js is not installed: install it (apt-get install nodejs npm) and retry")
    if not DYNALITE_BIN.exists():
        raise LocalEngineError("dynalite is not installed: run 'npm ci' in the project folder")
    if port_in_use(port):
        raise LocalEngineError(
            f"port {port} is already in use: stop what runs there or set DYNAMODB_PORT to another port"
        )
    args = [str(DYNALITE_BIN), "--host", "127.0.0.1", "--port", str(port), "--createTableMs", "0",
            "--deleteTableMs", "0", "--updateTableMs", "0"]
    if data_dir is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
        args += ["--path", str(data_dir)]
    out = open(log_file, "ab") if log_file else subprocess.DEVNULL  # noqa: SIM115 (the child keeps it)
    # A process group of its own: stop() ends it whole, and Ctrl-C in a terminal
    # reaches only the parent, which then stops it in order.
    process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalEngineError(f"dynalite exited at start (code {process.returncode}); see {log_file}")
        if port_in_use(port):
            return Dynalite(process, port, data_dir)
        time.sleep(0.05)
    Dynalite(process, port, data_dir).stop()
    raise LocalEngineError(f"dynalite did not open port {port} within {startup_timeout:.0f}s")
