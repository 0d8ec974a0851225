"""scripts/dev.py (behind `make run`) as a real subprocess: it stops every child, and says when the engine dies.

Each test starts the runner on free ports with its data in a temporary folder (never the
developer's var/), waits until the first page answers, then stops it one way or another.
RUN_SEED=0 skips seed_demo, which these tests do not need (make run still seeds).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools.localengine import free_port, port_in_use

ROOT = Path(__file__).resolve().parent.parent
STARTUP_LIMIT = 180  # seconds: a JVM and three Django processes on a busy 2-core machine
STOP_LIMIT = 30


def descendants(pid: int) -> dict[int, str]:
    """Every live process below ``pid``: {pid: start time}, read from /proc."""
    children: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        starts[int(entry.name)] = fields[19]
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found[child] = starts[child]
            todo.append(child)
    return found


def still_running(processes: dict[int, str]) -> list[int]:
    alive = []
    for pid, start in processes.items():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and fields[19] == start:  # same process, not a reused pid
            alive.append(pid)
    return alive


def environment(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    return dict(item.decode().partition("=")[::2] for item in raw.split(b"\0") if item)


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@dataclass
class Runner:
    process: subprocess.Popen
    web_port: int
    engine_port: int
    out: Path
    err: Path
    children: dict[int, str] | None = None  # as they were when the first page answered
    stripe_port: int = 0

    def wait_for_first_page(self) -> None:
        deadline = time.monotonic() + STARTUP_LIMIT
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"runner exited early: {self.err.read_text()}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/", timeout=5) as response:
                    assert response.status == 200
                    self.children = descendants(self.process.pid)
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        pytest.fail(f"no page within {STARTUP_LIMIT}s: {self.err.read_text()}")

    def wait_for_exit(self) -> int:
        try:
            return self.process.wait(timeout=STOP_LIMIT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the runner did not exit within {STOP_LIMIT}s")


@pytest.fixture
def runner(tmp_path) -> Iterator[Runner]:
    web_port, engine_port, stripe_port = free_port(), free_port(), free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k != "SITE_URL"},
        "STRIPE_PORT": str(stripe_port),
        "RUN_ADDR": f"127.0.0.1:{web_port}",
        "DYNAMODB_PORT": str(engine_port),
        "DYNAMODB_DATA_DIR": str(tmp_path / "dynamodb"),
        "DATABASE_URL": f"sqlite:///{tmp_path}/django.sqlite3",
        "PAYMENT_GATEWAY_LEDGER": str(tmp_path / "ledger.sqlite3"),
        "EMAIL_FILE_PATH": str(tmp_path / "mail"),
        "RUN_SEED": "0",
        "PYTHONUNBUFFERED": "1",
    }
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        process = subprocess.Popen([sys.executable, "scripts/dev.py"], cwd=ROOT, env=env,
                                   stdout=stdout, stderr=stderr, start_new_session=True)
    run = Runner(process, web_port, engine_port, out, err, stripe_port=stripe_port)
    try:
        yield run
    finally:
        # If the test failed half-way, leave nothing behind (orphans included).
        leftovers = still_running({**(run.children or {}), **descendants(process.pid)})
        if process.poll() is None:
            leftovers.append(process.pid)
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()


def runner_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("make run:")]


def test_sigterm_stops_the_web_server_and_the_engine_and_every_child(runner: Runner) -> None:
    runner.wait_for_first_page()
    children = runner.children
    commands = [cmdline(pid) for pid in children]
    assert any("DynamoDBLocal.jar" in c for c in commands)
    assert any("devtools.localstripe" in c for c in commands)
    # runserver's autoreloader runs the server in a child of its own: both must go
    assert sum("runserver" in c for c in commands) == 2, commands
    # links in e-mails point where the site answers (RUN_ADDR), not at the default :8000
    servers = [pid for pid in children if "runserver" in cmdline(pid)]
    assert {environment(pid).get("SITE_URL") for pid in servers} == {f"http://127.0.0.1:{runner.web_port}"}
    # the site takes cards through Stripe.js, served by localstripe
    with urllib.request.urlopen(f"http://127.0.0.1:{runner.web_port}/signup/", timeout=5) as response:
        assert response.status == 200
    assert f"localstripe running at http://127.0.0.1:{runner.stripe_port}" in runner.out.read_text()

    runner.process.send_signal(signal.SIGTERM)
    assert runner.wait_for_exit() == 0
    assert not port_in_use(runner.web_port)
    assert not port_in_use(runner.engine_port)
    assert not port_in_use(runner.stripe_port)
    assert still_running(children) == []
    assert "stopping the web server, DynamoDB Local and localstripe" in runner.out.read_text()
    assert runner_lines(runner.err) == []


@pytest.mark.parametrize(("server", "process", "log"), [
    ("DynamoDB Local", "DynamoDBLocal.jar", "dynamodb.log"),
    ("localstripe", "devtools.localstripe", "localstripe.log"),
])
def test_when_a_server_dies_the_runner_says_so_in_one_line_and_exits_non_zero(runner: Runner, server: str,
                                                                              process: str, log: str) -> None:
    runner.wait_for_first_page()
    children = runner.children
    [dying] = [pid for pid in children if process in cmdline(pid)]

    os.kill(dying, signal.SIGKILL)
    assert runner.wait_for_exit() == 1
    [line] = runner_lines(runner.err)
    assert f"{server} was killed (SIGKILL)" in line and log in line
    assert not port_in_use(runner.web_port)
    assert still_running(children) == []


def test_a_busy_web_port_is_one_line_before_anything_starts(tmp_path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        engine_port = free_port()
        env = {**os.environ, "RUN_ADDR": f"127.0.0.1:{port}", "DYNAMODB_PORT": str(engine_port),
               "DYNAMODB_DATA_DIR": str(tmp_path / "dynamodb")}
        done = subprocess.run([sys.executable, "scripts/dev.py"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"make run: port {port} is already in use: stop what runs there or set RUN_ADDR"]
    assert not (tmp_path / "dynamodb").exists() and not port_in_use(engine_port)  # the engine never started



def load_runner_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("dev_runner", ROOT / "scripts" / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("addr", "url"), [
    ("127.0.0.1:8300", "http://127.0.0.1:8300"),
    ("8300", "http://127.0.0.1:8300"),
    ("0.0.0.0:8300", "http://127.0.0.1:8300"),
    ("localhost:9000", "http://localhost:9000"),
    ("[::]:8300", "http://[::1]:8300"),
])
def test_the_e_mail_base_url_follows_run_addr(addr: str, url: str) -> None:
    assert load_runner_module().site_url(addr) == url
