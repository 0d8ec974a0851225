"""Take no money you cannot record (docs/MONEY.md M2), with real processes on a real engine: a
payment run whose engine stops in the middle stops taking charges (at most one unrecorded
per worker), exits 1 with one line, and the next run records every charge, cancelled
customers' included, e-mailing each customer at most once (none only where the outage took
a write's answer, which the first run reports); a third run changes nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings

from billing import access
from billing.actions import lifecycle
from billing.models import configure
from core.clock import billing_today
from core.dynamo.table import ensure_table
from devtools.localengine import free_port, start_local_engine
from tests.builders import fresh, receipts_of, seed_due
from tests.conftest import REGION

pytestmark = [pytest.mark.django_db(databases=[]), pytest.mark.local_engine]
ROOT = Path(__file__).resolve().parents[2]
WORKERS = 4


def charges_in(ledger: str) -> list[dict]:
    with sqlite3.connect(ledger) as db:
        rows = db.execute("SELECT charge_id, metadata FROM charges WHERE status = 'succeeded'").fetchall()
    return [{"charge_id": charge_id, **json.loads(meta)} for charge_id, meta in rows]


def receipt_mails(folder: Path) -> Counter:
    """Recipients of the receipt e-mails the file backend wrote (one header block each)."""
    seen: Counter = Counter()
    for path in folder.glob("*.log"):
        for message in path.read_text(errors="replace").split("\n" + "-" * 79 + "\n"):
            headers = message.split("\n\n", 1)[0].splitlines()
            subject = next((h for h in headers if h.startswith("Subject: ")), "")
            to = next((h[4:] for h in headers if h.startswith("To: ")), None)
            if subject.startswith("Subject: Invoice") and to:
                seen[to] += 1
    return seen


@pytest.fixture
def disk_engine(tmp_path, settings):
    """DynamoDB Local with its data on disk, so it can be stopped mid-run and started again."""
    port, data = free_port(), tmp_path / "ddb"
    data.mkdir()
    engine = {"server": start_local_engine(port, data), "port": port, "data": data}
    settings.DYNAMODB_TABLE = "rpay_janitor"
    settings.DYNAMODB_ENDPOINT = engine["server"].endpoint
    configure(table_name="rpay_janitor", region=REGION, host=engine["server"].endpoint, max_retry_attempts=1)
    ensure_table()
    yield engine
    engine["server"].stop()


def assert_mailed_at_most_once(mailed: Counter, subs: list, reported: set[str]) -> None:
    """E-mails are at most once (docs/OPERATIONS.md "How the batches are built"): nobody hears twice,
    and a receipt goes unmailed only where the outage took the answer to the write that
    decides who mails (the advance: done, its reply never read), i.e. for a payment the
    first run reported it could not finish, at most one per worker."""
    assert set(mailed.values()) <= {1}, mailed.most_common(3)
    unmailed = {f"{sub.account_id}/{sub.sub_id}" for sub in subs if not mailed[sub.Email]}
    assert unmailed <= reported and len(unmailed) <= WORKERS, (unmailed, reported)


def run_payments(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "process_payments", "--json", "--workers", str(WORKERS)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_an_outage_mid_run_stops_the_charges_and_the_next_runs_heal_every_receipt_once(
        disk_engine, tmp_path) -> None:
    today = billing_today(settings.BILLING_TIMEZONE)
    subs = seed_due(120, due=today)
    mails = tmp_path / "mail"
    env = {**os.environ, "DYNAMODB_ENDPOINT": disk_engine["server"].endpoint, "DYNAMODB_TABLE": "rpay_janitor",
           "PAYMENT_GATEWAY_LEDGER": settings.PAYMENT_GATEWAY_LEDGER, "PAYMENT_GATEWAY_LATENCY_MS": "100",
           "DYNAMODB_MAX_RETRY_ATTEMPTS": "1", "DYNAMODB_CONNECT_TIMEOUT": "1", "DYNAMODB_READ_TIMEOUT": "3",
           "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend", "EMAIL_FILE_PATH": str(mails)}
    # A slow processor in this run: each charge's answer takes 200 ms to come back.
    run = subprocess.Popen([sys.executable, "manage.py", "process_payments", "--json", "--workers", str(WORKERS)],
                           cwd=ROOT, env={**env, "PAYMENT_GATEWAY_LATENCY_MS": "400"},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(charges_in(settings.PAYMENT_GATEWAY_LEDGER)) < 12 and time.monotonic() < deadline:
        time.sleep(0.005)
    # The engine goes away in the middle of the run, as a charge's answer is on its way
    # back (the gateway's latency is half before the charge, half after): that charge
    # cannot be recorded.
    disk_engine["server"].stop()
    out, err = run.communicate(timeout=300)
    assert run.returncode == 1
    assert err.strip().splitlines()[-1].startswith("CommandError: DynamoDB could not record the payments")
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["halted"] and summary["outcome"] == "failed"
    reported = {failure["subject"] for failure in summary["failures"]}  # "<account>/<sub>" it could not finish

    disk_engine["server"] = start_local_engine(disk_engine["port"], disk_engine["data"])
    charged = {c["sub_id"] for c in charges_in(settings.PAYMENT_GATEWAY_LEDGER)}
    recorded = {sub.sub_id for sub in subs if receipts_of(sub)}
    unrecorded = charged - recorded
    assert len(charged) < len(subs)  # it stopped taking charges
    assert recorded <= charged and 1 <= len(unrecorded) <= WORKERS  # at most the ones in flight
    # Some of those customers cancel before the next run (the portal's cancel).
    by_id = {sub.sub_id: sub for sub in subs}
    cancelled = sorted(unrecorded)[:2]
    for sub_id in cancelled:
        lifecycle.cancel_at_period_end(fresh(by_id[sub_id]), today=today, actor="customer", reason="other")

    second = run_payments(env)
    assert second.returncode == 0, second.stderr
    healed = json.loads(second.stdout.strip().splitlines()[-1])
    assert healed["reconciled"] == len(cancelled) and healed["differences"] == 0
    for sub in subs:
        assert len(receipts_of(sub)) == 1, sub.sub_id
    for sub_id in cancelled:
        assert fresh(by_id[sub_id]).PaidThroughDate == receipts_of(by_id[sub_id])[0].PeriodEnd
    mailed = receipt_mails(mails)
    assert_mailed_at_most_once(mailed, subs, reported)
    assert all(mailed[by_id[sub_id].Email] == 1 for sub_id in unrecorded)  # the charges the next run recorded

    third = run_payments(env)
    assert third.returncode == 0, third.stderr
    again = json.loads(third.stdout.strip().splitlines()[-1])
    assert again["paid"] == 0 and again["reconciled"] == 0 and again["differences"] == 0
    assert receipt_mails(mails) == mailed  # nothing more
    assert len(charges_in(settings.PAYMENT_GATEWAY_LEDGER)) == len(subs)
    assert not list(access.get_due_payments_by_date(today))
