"""process_payments and send_reminders as commands: schedule, options, signals, exit status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, date, datetime
from io import StringIO
from pathlib import Path

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError

from billing import access
from core.payments.gateway import get_gateway
from core.payments.simulated import SimulatedGateway
from devtools.localengine import free_port
from tests.builders import card, fresh, make_account, make_subscription, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])
ROOT = Path(__file__).resolve().parents[2]


def command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def at(day: date, hour: int = 6):
    return time_machine.travel(datetime(day.year, day.month, day.day, hour, tzinfo=UTC), tick=False)


@pytest.mark.parametrize(("year", "february"), [(2027, "2027-02-28"), (2028, "2028-02-29")])
def test_anchor_day_31_through_the_command(moto_table, year, february) -> None:
    with at(date(year - 1, 12, 20)):
        sub = make_subscription(make_account(), payment_day=31, today=date(year - 1, 12, 20), card=card())
    # Rule changed (M1): the first period (20-30 Dec, prorated) is owed at once.
    assert sub.NextPaymentDate == f"{year - 1}-12-20"
    with at(date(year - 1, 12, 20)):
        command("process_payments")
    assert fresh(sub).NextPaymentDate == f"{year - 1}-12-31"
    paid = []
    for day in (date(year - 1, 12, 31), date(year, 1, 30), date(year, 1, 31), date.fromisoformat(february),
                date(year, 3, 30), date(year, 3, 31), date(year, 4, 30)):
        with at(day):
            command("process_payments")
        paid.append(fresh(sub).LastPaymentDate)
    assert paid == [f"{year - 1}-12-31", f"{year - 1}-12-31", f"{year}-01-31", february, february,
                    f"{year}-03-31", f"{year}-04-30"]
    assert fresh(sub).NextPaymentDate == f"{year}-05-31"
    assert sorted(r.BillingDate for r in receipts_of(sub)) == [
        f"{year - 1}-12-20", f"{year - 1}-12-31", f"{year}-01-31", february, f"{year}-03-31", f"{year}-04-30"]
    assert len(get_gateway().charges_made(sub_id=sub.sub_id)) == 6


def test_the_day_is_the_billing_time_zones(moto_table, settings) -> None:
    settings.BILLING_TIMEZONE = "Asia/Tokyo"
    [sub] = seed_due(1, due=date(2027, 3, 15))
    with time_machine.travel(datetime(2027, 3, 14, 23, 30, tzinfo=UTC), tick=False):  # 08:30 on the 15th in Tokyo
        out = command("process_payments", "--json")
    assert json.loads(out.splitlines()[-1])["paid"] == 1
    assert fresh(sub).NextPaymentDate == "2027-04-15"


def test_json_summary_parses_and_item_lines_otherwise(moto_table) -> None:
    seed_due(3, due=date(2027, 3, 15))
    with at(date(2027, 3, 15)):  # a --date after today is refused
        out = command("process_payments", "--date", "2027-03-15", "--json", "--workers", "2")
    [line] = out.splitlines()
    summary = json.loads(line)
    assert (summary["processed"], summary["paid"], summary["errors"]) == (3, 3, 0)
    # the table's first run: the whole catch-up window (31 days) before the date
    assert summary["outcome"] == "completed" and summary["first_date"] == "2027-02-12"
    assert {"declined", "retried", "cancelled", "skipped", "elapsed", "rate"} <= set(summary)
    seed_due(2, due=date(2027, 3, 16), prefix="x")
    with at(date(2027, 3, 15)):
        lines = command("send_reminders", "--date", "2027-03-09").splitlines()
    assert len(lines) == 3 and lines[0].startswith("sent reminder sub x")
    assert lines[-1].startswith("reminders 2027-02-06..2027-03-09: processed 2, sent 2, skipped 0, errors 0, elapsed")
    with at(date(2027, 3, 15)):
        json.loads(command("send_reminders", "--date", "2027-03-09", "--json", "--dry-run"))


def test_dry_run_command_changes_nothing(moto_table) -> None:
    [sub] = seed_due(1, due=date(2027, 3, 15))
    with at(date(2027, 3, 15)):  # a --date after today is refused
        out = command("process_payments", "--date", "2027-03-15", "--dry-run")
    assert "dry-run 1" in out
    assert fresh(sub).NextPaymentDate == "2027-03-15" and mail.outbox == []
    assert access.list_batch_runs("payments") == []


@pytest.mark.parametrize("name", ["process_payments", "send_reminders"])
def test_bad_date_is_one_line_and_non_zero(name) -> None:
    env = {**os.environ, "DYNAMODB_ENDPOINT": f"http://127.0.0.1:{free_port()}"}
    proc = subprocess.run([sys.executable, "manage.py", name, "--date", "2027-02-30"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [
        "CommandError: --date '2027-02-30' is not a date: give a day of the calendar as YYYY-MM-DD"]
    assert proc.stdout == ""


def test_unreachable_dynamodb_is_one_line_and_non_zero(tmp_path) -> None:
    env = {**os.environ, "DYNAMODB_ENDPOINT": f"http://127.0.0.1:{free_port()}", "DYNAMODB_MAX_RETRY_ATTEMPTS": "0",
           "DYNAMODB_CONNECT_TIMEOUT": "1", "PAYMENT_GATEWAY_LEDGER": str(tmp_path / "ledger.sqlite3")}
    proc = subprocess.run([sys.executable, "manage.py", "process_payments", "--date", "2026-03-15"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    [line] = proc.stderr.strip().splitlines()
    assert "cannot reach DynamoDB" in line


def test_an_infrastructure_error_exits_non_zero_after_the_summary(moto_table, monkeypatch) -> None:
    seed_due(2, due=date(2027, 3, 15))

    def unavailable(*a, **k):
        raise RuntimeError("gateway exploded")
    monkeypatch.setattr(access, "create_receipt", unavailable)
    out = StringIO()
    with pytest.raises(CommandError, match="2 item"), at(date(2027, 3, 15)):  # M3: never a future --date
        call_command("process_payments", "--date", "2027-03-15", "--json", stdout=out)
    assert json.loads(out.getvalue())["errors"] == 2
    [run] = access.list_batch_runs("payments")
    assert run.Outcome == "failed" and len(run.Failures) == 2
    assert {"subject", "reason"} == set(run.Failures[0])


def test_sigterm_finishes_the_item_in_hand_and_stops(moto_table, monkeypatch) -> None:
    subs = seed_due(10, due=date(2027, 3, 15))
    real_charge = SimulatedGateway.charge
    calls = []

    def charge_then_sigterm(self, *args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGTERM)  # delivered to the main thread's handler
        return real_charge(self, *args, **kwargs)

    monkeypatch.setattr(SimulatedGateway, "charge", charge_then_sigterm)
    out = StringIO()
    with pytest.raises(CommandError, match="stopped by a signal"), at(date(2027, 3, 15)):  # M3
        call_command("process_payments", "--date", "2027-03-15", "--workers", "1", stdout=out)
    assert len(calls) == 1
    paid = [s for s in subs if fresh(s).NextPaymentDate == "2027-04-15"]
    assert len(paid) == 1 and len(receipts_of(paid[0])) == 1  # the item in hand was finished
    assert "processed 1, paid 1" in out.getvalue() and "(interrupted)" in out.getvalue()
    [run] = access.list_batch_runs("payments")
    assert run.Outcome == "interrupted"
    monkeypatch.setattr(SimulatedGateway, "charge", real_charge)
    with at(date(2027, 3, 15)):
        assert "paid 9" in command("process_payments", "--date", "2027-03-15")  # the next run continues
