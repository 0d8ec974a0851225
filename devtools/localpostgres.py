"""Start and stop a throw-away PostgreSQL server, the way localengine.py runs DynamoDB Local.

Debian's ``postgresql`` package (``apt-get install postgresql``) puts ``initdb``,
``pg_ctl`` and ``postgres`` in /usr/lib/postgresql/<version>/bin, off the PATH; this
module finds them there (or on the PATH, or in ``PG_BIN``). A server is a fresh cluster
in a temporary folder, listening on 127.0.0.1 at a free port and on a Unix socket in
that folder, ``trust`` authentication for the ``postgres`` superuser, no fsync (its
data is thrown away): the tests (TEST_DATABASE=postgres), the production tests and the
walk-through use it. PostgreSQL refuses to run as root: as root the cluster belongs to
the ``postgres`` user the package creates and the commands run through ``runuser``.

``python -m devtools.localpostgres`` prints what is missing (exit 1) or the binaries' folder.
No Django import here.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from devtools.localengine import HOST, free_port

INSTALL_HINT = "apt-get install postgresql"
SUPERUSER = "postgres"


class LocalPostgresError(RuntimeError):
    """The server cannot start; the message says what to do, in one line."""


def find_bin_dir() -> Path | None:
    """The folder of initdb and pg_ctl: PG_BIN, the PATH, then Debian's newest version."""
    candidates = []
    if os.environ.get("PG_BIN"):
        candidates.append(Path(os.environ["PG_BIN"]))
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)  # a symlink's real folder has the other tools
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                    key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0)
    candidates += [Path(p) for p in reversed(debian)]
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def missing_reason() -> str | None:
    """None when a server can be started here, else one line saying what to install."""
    if find_bin_dir() is None:
        return f"PostgreSQL is not installed ({INSTALL_HINT})"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SUPERUSER)
        except KeyError:
            return f"running as root and there is no '{SUPERUSER}' user to run PostgreSQL as ({INSTALL_HINT})"
        if shutil.which("runuser") is None:
            return "running as root without runuser (util-linux) to run PostgreSQL as another user"
    return None


@dataclass
class LocalPostgres:
    """A running server; ``stop()`` ends it and removes its folder."""

    bin_dir: Path
    folder: Path
    port: int
    as_user: str | None  # the user the server runs as, when we are root

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @property
    def log_file(self) -> Path:
        return self.folder / "server.log"

    def url(self, database: str = "rpay") -> str:
        """A DATABASE_URL for ``database`` on this server (the superuser, no password)."""
        return f"postgres://{SUPERUSER}@{HOST}:{self.port}/{database}"

    def run(self, tool: str, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        """One of the server's tools (psql, createdb, pg_ctl...), as the server's user."""
        return _run([str(self.bin_dir / tool), *args], self.as_user, check=check, timeout=timeout)

    def create_database(self, name: str) -> None:
        self.run("createdb", "-h", HOST, "-p", str(self.port), "-U", SUPERUSER, name)

    def stop(self) -> None:
        # "immediate": the data is thrown away, so no checkpoint is worth waiting for.
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self.run("pg_ctl", "stop", "-D", str(self.data_dir), "-m", "immediate", "-w", check=False, timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)


def _run(args: list[str], as_user: str | None, *, check: bool, timeout: float) -> subprocess.CompletedProcess:
    if as_user:
        args = ["runuser", "-u", as_user, "--", *args]
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if check and done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()
        raise LocalPostgresError(f"{Path(args[-1] if as_user else args[0]).name}: "
                                 f"{' '.join(args)} failed: {last[-1] if last else done.returncode}")
    return done


def start_local_postgres(port: int | None = None, *, startup_timeout: float = 60) -> LocalPostgres:
    """initdb a cluster in a new temporary folder and start it on ``port`` (a free one by default)."""
    reason = missing_reason()
    if reason:
        raise LocalPostgresError(reason)
    bin_dir = find_bin_dir()
    assert bin_dir is not None
    as_user = SUPERUSER if os.geteuid() == 0 else None
    # Not under pytest's temporary folders: they are private to the user running the tests,
    # and the server's user must reach its data folder.
    folder = Path(tempfile.mkdtemp(prefix="rpay-postgres-"))
    if as_user:
        entry = pwd.getpwnam(as_user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    server = LocalPostgres(bin_dir, folder, port or free_port(), as_user)
    try:
        server.run("initdb", "-D", str(server.data_dir), "-U", SUPERUSER, "--auth=trust",
                   "--encoding=UTF8", "--locale=C", "--no-sync")
        options = " ".join([
            f"-p {server.port}", f"-c listen_addresses={HOST}", f"-k {folder}",
            # Throw-away data: no fsync. Connections: the live server's and the batches' threads each open one.
            "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
            "-c max_connections=200", "-c shared_buffers=32MB",
        ])
        server.run("pg_ctl", "start", "-D", str(server.data_dir), "-l", str(server.log_file),
                   "-o", options, "-w", "-t", str(int(startup_timeout)), timeout=startup_timeout + 10)
        _wait_ready(server, startup_timeout)
    except BaseException as error:
        tail = ""
        with contextlib.suppress(OSError):
            lines = server.log_file.read_text(errors="replace").strip().splitlines()
            tail = f" (server log: {lines[-1]})" if lines else ""
        server.stop()
        if isinstance(error, LocalPostgresError):
            raise LocalPostgresError(f"{error}{tail}") from None
        raise
    return server


def _wait_ready(server: LocalPostgres, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = server.run("pg_isready", "-h", HOST, "-p", str(server.port), check=False, timeout=10)
        if done.returncode == 0:
            return
        time.sleep(0.1)
    raise LocalPostgresError(f"PostgreSQL did not answer on port {server.port} within {timeout:.0f}s")


def main(argv: list[str]) -> int:
    reason = missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 1
    print(find_bin_dir())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
