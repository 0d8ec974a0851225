"""The production shape on one machine, for tests and the walk-through: gunicorn processes
with DJANGO_DEBUG=0 on a PostgreSQL database and a DynamoDB endpoint, and a small HTTP
client (cookies, CSRF tokens) that talks to them like a browser without JavaScript.

Plain HTTP on 127.0.0.1: the environment turns off only the HTTPS redirect and the
cookies' Secure flag (a TLS proxy does those in production); everything else is the
production settings. No Django import here: the site runs in its own processes.
"""

from __future__ import annotations

import contextlib
import email
import http.cookiejar
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from devtools.localengine import HOST, free_port, stop_process

ROOT = Path(__file__).resolve().parent.parent


def production_env(*, database_url: str, dynamodb_endpoint: str, table: str, folder: Path,
                   **extra: str) -> dict[str, str]:
    """The environment of the production walk-through (docs: deployment), over plain HTTP."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DYNAMODB_", "STRIPE_"))}
    env.update({
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "walk-through-" + "k" * 50,
        "DJANGO_ALLOWED_HOSTS": f"{HOST},localhost",
        "DATABASE_URL": database_url,
        "DYNAMODB_ENDPOINT": dynamodb_endpoint,
        "DYNAMODB_TABLE": table,
        "SHOP_DYNAMODB_TABLE": f"{table}_shop",
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_REGION": "us-east-1",
        # Plain HTTP here; in production a TLS proxy is in front and these stay on.
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SESSION_COOKIE_SECURE": "0",
        "DJANGO_CSRF_COOKIE_SECURE": "0",
        "DJANGO_SECURE_HSTS_SECONDS": "0",
        "EMAIL_FILE_PATH": str(folder / "mail"),
        "PAYMENT_GATEWAY_LEDGER": str(folder / "gateway-ledger.sqlite3"),
        "PYTHONUNBUFFERED": "1",
    })
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str, timeout: float = 300) -> str:
    """``manage.py args`` in the given environment; its output, or an error with it."""
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


@dataclass
class Gunicorn:
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def stop(self, timeout: float = 30) -> int | None:
        """SIGTERM (gunicorn's graceful stop), SIGKILL after ``timeout``; the exit code."""
        stop_process(self.process, timeout, group=False)
        return self.process.returncode


def start_gunicorn(env: dict[str, str], log: Path, *, workers: int = 1, startup_timeout: float = 60) -> Gunicorn:
    """gunicorn serving rpay on a free port, as the Dockerfile starts it; waits for /healthz."""
    port = free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "rpay_site.wsgi:application", "--bind", f"{HOST}:{port}",
             "--workers", str(workers), "--graceful-timeout", "20", "--access-logfile", "-"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Gunicorn(process, port, log)
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited at start ({process.returncode}):\n{log.read_text()[-3000:]}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{server.url}/healthz", timeout=2) as answer:
            if answer.status == 200:
                return server
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"gunicorn did not answer /healthz within {startup_timeout:.0f}s:\n{log.read_text()[-3000:]}")


@contextlib.contextmanager
def gunicorns(env: dict[str, str], folder: Path, count: int) -> Iterator[list[Gunicorn]]:
    started: list[Gunicorn] = []
    try:
        for number in range(count):
            started.append(start_gunicorn(env, folder / f"gunicorn-{number}.log"))
        yield started
    finally:
        for server in started:
            server.stop()


@dataclass
class Answer:
    status: int
    url: str
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode(errors="replace")

    @property
    def location(self) -> str:
        return self.headers.get("location", "")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003 - urllib's signature
        return None


_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class Visitor:
    """One browser: a cookie jar shared by every server on 127.0.0.1 (cookies ignore the
    port, so a session started on one gunicorn is sent to the other, as behind a load
    balancer). Redirects are not followed: the caller sees each answer."""

    def __init__(self) -> None:
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect)

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.cookies if c.name == name), None)

    def get(self, url: str) -> Answer:
        return self._open(urllib.request.Request(url))

    def post(self, url: str, data: dict[str, str], *, form_page: str | None = None) -> Answer:
        """Post ``data`` with the CSRF token of ``form_page`` (default: ``url`` itself)."""
        page = self.get(form_page or url)
        token = _CSRF.search(page.text)
        if token is None:
            raise AssertionError(f"no CSRF token on {form_page or url} ({page.status})")
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), **data}).encode()
        return self._open(urllib.request.Request(url, data=body, headers={"Referer": url}))

    def _open(self, request: urllib.request.Request) -> Answer:
        try:
            with self.opener.open(request, timeout=60) as answer:
                return Answer(answer.status, answer.url, {k.lower(): v for k, v in answer.headers.items()},
                              answer.read())
        except urllib.error.HTTPError as error:
            return Answer(error.code, request.full_url, {k.lower(): v for k, v in error.headers.items()},
                          error.read())


def mailed_link(env: dict[str, str], address: str) -> str:
    """The path of the last sign-up confirmation link mailed to ``address`` by the site's
    processes of ``env`` (the file mail backend writes each message to ``EMAIL_FILE_PATH``):
    what a visitor follows to choose a password and open the account."""
    links: list[str] = []
    for path in sorted(Path(env["EMAIL_FILE_PATH"]).glob("*.log"), key=lambda p: p.stat().st_mtime):
        for raw in path.read_text().split("\n" + "-" * 79 + "\n"):
            message = email.message_from_string(raw.strip())
            if message["To"] != address:
                continue
            for part in message.walk():
                if part.get_content_type() == "text/plain":
                    text = part.get_payload(decode=True).decode()
                    links += [urllib.parse.urlsplit(u).path for u in re.findall(r"\S+/signup/confirm/\S+/", text)]
    if not links:
        raise AssertionError(f"no sign-up link was mailed to {address}")
    return links[-1]
