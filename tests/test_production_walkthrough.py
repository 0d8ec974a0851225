"""The production walk-through (scripts/prod_walkthrough.py) runs from start to end:
check --deploy clean, gunicorn with DJANGO_DEBUG=0 on PostgreSQL, DynamoDB Local and
localstripe; staff log-in, sign-up, subscription and the receipt's PDF."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from devtools.localpostgres import missing_reason
from tests.conftest import postgres_unavailable

ROOT = Path(__file__).resolve().parent.parent


def test_the_walk_through_runs_on_the_production_settings() -> None:
    reason = missing_reason()
    if reason:
        postgres_unavailable(reason)
    done = subprocess.run([sys.executable, "scripts/prod_walkthrough.py"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    for line in ("check --deploy: no issues", "staff logged in", "signed up", "subscribed to NEWS-DAILY",
                 "receipt PDF downloaded", "gunicorn stopped on SIGTERM (exit 0)", "walk-through done"):
        assert line in done.stdout, line
