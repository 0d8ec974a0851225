"""The default e-mail backend writes files under EMAIL_FILE_PATH, so a batch's stdout is its own.

The cron example of docs/OPERATIONS.md appends ``process_payments --json`` to a .jsonl file: with the
console backend (the old default) whole MIME e-mails landed in it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from tests.builders import seed_due

ROOT = Path(__file__).resolve().parents[2]
D = date(2026, 3, 15)  # not after today: a batch refuses a --date ahead of the clock (M3)


@pytest.mark.local_engine
@pytest.mark.django_db(databases=[])
def test_process_payments_json_prints_json_lines_alone_and_mails_go_to_files(local_table, settings,
                                                                              tmp_path) -> None:
    seed_due(2, due=D)
    env = {key: value for key, value in os.environ.items() if not key.startswith("EMAIL_")}
    env.update({
        "DYNAMODB_ENDPOINT": settings.DYNAMODB_ENDPOINT,
        "DYNAMODB_TABLE": settings.DYNAMODB_TABLE,
        "PAYMENT_GATEWAY_LEDGER": settings.PAYMENT_GATEWAY_LEDGER,
        "DATABASE_URL": f"sqlite:///{tmp_path}/django.sqlite3",
        "EMAIL_FILE_PATH": str(tmp_path / "mail"),
        "DJANGO_SETTINGS_MODULE": "rpay_site.settings",
    })
    done = subprocess.run([sys.executable, "manage.py", "process_payments", "--date", D.isoformat(), "--json",
                           "--catch-up-days", "0"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    assert json.loads(line)["paid"] == 2
    mails = "".join(path.read_text() for path in (tmp_path / "mail").iterdir())
    assert mails.count("Subject: Invoice") == 2
    assert "s000000@example.com" in mails and "s000001@example.com" in mails
