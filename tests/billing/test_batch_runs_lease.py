"""A run record carries a lease that its heartbeat renews: a run killed (SIGKILL) or cut off
by an outage shows as "abandoned" once the lease passes, and the next run says so first.
And --json prints one JSON line on failure too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError

from billing import access
from billing.models import BatchKind, RunOutcome
from devtools.localengine import free_port
from tests.builders import seed_due

pytestmark = pytest.mark.django_db(databases=[])
ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2027, 3, 15, 6, 0, tzinfo=UTC)


def test_a_run_without_heartbeat_becomes_abandoned_and_the_next_run_says_so_first(table) -> None:
    with time_machine.travel(T0, tick=False):
        killed = access.start_batch_run(BatchKind.PAYMENTS, first_date=date(2027, 3, 15), last_date=date(2027, 3, 15),
                                        host="batch-1")
        assert access.abandoned_batch_runs(BatchKind.PAYMENTS) == []
        access.renew_batch_run(killed)  # the heartbeat pushes the lease on
    later = T0 + access.RUN_LEASE + timedelta(seconds=1)
    with time_machine.travel(later, tick=False):
        # the lease was renewed at T0, so it only just ran out now
        [abandoned] = access.abandoned_batch_runs(BatchKind.PAYMENTS)
        assert abandoned.RunId == killed.RunId
        assert abandoned.status_at(later.isoformat()) == RunOutcome.ABANDONED
        out, err = StringIO(), StringIO()
        call_command("process_payments", "--date", "2027-03-15", "--json", stdout=out, stderr=err)
    first = err.getvalue().splitlines()[0]
    assert first.startswith(f"previous payments run {killed.RunId}") and "abandoned" in first and "batch-1" in first
    json.loads(out.getvalue())  # stdout stays one JSON line
    runs = {r.RunId: r for r in access.list_batch_runs(BatchKind.PAYMENTS)}
    assert runs[killed.RunId].Outcome == RunOutcome.ABANDONED  # recorded, so it is reported once
    with time_machine.travel(later + timedelta(minutes=5), tick=False):
        err = StringIO()
        call_command("process_payments", "--date", "2027-03-15", "--json", stdout=StringIO(), stderr=err)
    assert "abandoned" not in err.getvalue()


def test_the_heartbeat_stops_once_the_run_has_ended(table) -> None:
    run = access.start_batch_run(BatchKind.REMINDERS, first_date=date(2027, 3, 1), last_date=date(2027, 3, 1))
    access.finish_batch_run(run, outcome=RunOutcome.COMPLETED, counts={}, failures=[])
    with pytest.raises(access.ConditionFailed):
        access.renew_batch_run(run)


def test_a_finished_run_is_never_abandoned(moto_table) -> None:
    seed_due(2, due=date(2027, 3, 15))
    with time_machine.travel(T0, tick=False):
        call_command("process_payments", "--date", "2027-03-15", stdout=StringIO())
    with time_machine.travel(T0 + timedelta(days=1), tick=False):
        assert access.abandoned_batch_runs(BatchKind.PAYMENTS) == []
        [run] = access.list_batch_runs(BatchKind.PAYMENTS)
        assert run.status_at(datetime.now(tz=UTC).isoformat()) == RunOutcome.COMPLETED


def test_json_failure_is_one_json_line_and_exit_1(moto_table) -> None:
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("process_payments", "--date", "2027-02-30", "--json", "--dry-run", stdout=out)
    [line] = out.getvalue().splitlines()
    summary = json.loads(line)
    assert summary["outcome"] == "error" and "--date" in summary["error"] and summary["dry_run"] is True


def test_json_success_has_a_boolean_dry_run(moto_table) -> None:
    seed_due(1, due=date(2027, 3, 15))
    for args, expected in (((), False), (("--dry-run",), True)):
        out = StringIO()
        with time_machine.travel(datetime(2027, 3, 15, 6, tzinfo=UTC), tick=False):  # M3: never a future --date
            call_command("process_payments", "--date", "2027-03-15", "--json", *args, stdout=out)
        assert json.loads(out.getvalue())["dry_run"] is expected


def test_unreachable_dynamodb_with_json_is_one_json_line(tmp_path) -> None:
    env = {**os.environ, "DYNAMODB_ENDPOINT": f"http://127.0.0.1:{free_port()}", "DYNAMODB_MAX_RETRY_ATTEMPTS": "0",
           "DYNAMODB_CONNECT_TIMEOUT": "1", "PAYMENT_GATEWAY_LEDGER": str(tmp_path / "ledger.sqlite3")}
    proc = subprocess.run([sys.executable, "manage.py", "send_reminders", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    [line] = proc.stdout.splitlines()
    assert json.loads(line)["outcome"] == "error" and "cannot reach DynamoDB" in json.loads(line)["error"]


class Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_knows_the_total_and_prints_item_lines_above_it(moto_table, capsys) -> None:
    seed_due(3, due=date(2027, 3, 15))
    with time_machine.travel(datetime(2027, 3, 15, 6, tzinfo=UTC), tick=False):  # M3: never a future --date
        call_command("process_payments", "--date", "2027-03-15", "--catch-up-days", "0", "-v", "2", stdout=Terminal())
    screen = capsys.readouterr().out
    assert "3/3" in screen  # the total was known (a COUNT query) before the items ran
    item_lines = [line for line in screen.splitlines() if line.startswith("paid sub ")]
    assert len(item_lines) == 3  # each on a line of its own, not inside the bar


def test_every_json_summary_has_the_same_keys_and_a_boolean_dry_run(moto_table) -> None:
    """A run that paid, a dry run that went through items (its count once replaced the
    boolean), a refused --date and a host with no shard: one schema for cron's parsers."""
    seed_due(2, due=date(2027, 3, 15))

    def summary(*args: str, fails: bool = False) -> dict:
        out = StringIO()
        with time_machine.travel(datetime(2027, 3, 15, 6, tzinfo=UTC), tick=False):
            if fails:
                with pytest.raises(CommandError):
                    call_command("process_payments", "--json", *args, stdout=out)
            else:
                call_command("process_payments", "--json", *args, stdout=out)
        [line] = out.getvalue().splitlines()
        return json.loads(line)

    dry = summary("--date", "2027-03-15", "--dry-run")
    paid = summary("--date", "2027-03-15")
    refused = summary("--date", "2027-02-30", fails=True)
    idle = summary("--shard", "7/9", "--date", "2027-03-15")
    assert (dry["dry_run"], dry["dry_run_items"]) == (True, 2)
    assert (paid["dry_run"], paid["paid"], paid["charged"]) == (False, 2, {"USD": paid["charged"]["USD"]})
    assert refused["outcome"] == "error" and "is not a date" in refused["error"] and refused["dry_run"] is False
    assert idle["note"] == "no shard for this host" and idle["processed"] == 0
    assert set(dry) == set(paid) == set(refused) == set(idle)
