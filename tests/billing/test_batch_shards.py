"""Batches across shards, processes and hosts: --shards, --shard K/N, --hosts with
JOB_COMPLETION_INDEX, --processes P; one run record per process; catch-up per shard; and
exactly one charge per subscription when two real processes get overlapping shards."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import given
from hypothesis import strategies as st

from billing import access, batches
from billing.management.batchprocesses import child_environment
from core.payments.gateway import get_gateway
from tests.builders import fresh, receipts_of, seed_due, use_due_shards

pytestmark = pytest.mark.django_db(databases=[])
ROOT = Path(__file__).resolve().parents[2]
D = date(2027, 3, 15)


def command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def at(day: date):
    return time_machine.travel(datetime(day.year, day.month, day.day, 6, tzinfo=UTC), tick=False)


@given(shards=st.integers(1, 64), hosts=st.integers(1, 70))
def test_hosts_shares_cover_every_shard_exactly_once(shards, hosts) -> None:
    taken = [s for k in range(hosts) for share in [batches.host_share(k, hosts, shards)] if share
             for s in share.members]
    assert sorted(taken) == list(range(shards))


@given(shards=st.integers(1, 64), parts=st.integers(1, 16))
def test_a_split_over_processes_covers_the_set_exactly_once(shards, parts) -> None:
    whole = batches.ShardSet.every(shards)
    slices = whole.split(parts)
    assert [s for part in slices for s in part.members] == list(range(shards))
    assert len(slices) == min(parts, shards)


def test_shard_options_are_checked_in_one_line() -> None:
    assert batches.parse_range("2-5", 8) == batches.ShardSet(2, 5, 8)
    assert batches.parse_range("3", 8) == batches.ShardSet(3, 3, 8)
    assert batches.parse_host_share("1/4", 8) == batches.ShardSet(2, 3, 8)
    for bad in ("5-2", "0-8", "x"):
        with pytest.raises(batches.ShardChoiceError):
            batches.parse_range(bad, 8)
    with pytest.raises(batches.ShardChoiceError, match="0-based"):
        batches.parse_host_share("4/4", 8)


def _paid_shards(out: str) -> int:
    return json.loads(out.splitlines()[-1])["paid"]


def test_hosts_split_a_day_and_each_records_its_shards(moto_table) -> None:
    use_due_shards(8)
    subs = seed_due(40, due=D)
    with at(D):
        first = json.loads(command("process_payments", "--shard", "0/2", "--json", "--catch-up-days", "0"))
        assert first["shards"] == "0-3/8"
        mine = [s for s in subs if access.shard_of(s.sub_id, 8) < 4]
        assert first["paid"] == len(mine) and 0 < len(mine) < 40
        assert all(fresh(s).NextPaymentDate == "2027-04-15" for s in mine)
        assert all(fresh(s).NextPaymentDate == "2027-03-15" for s in subs if s not in mine)
        second = json.loads(command("process_payments", "--shard", "1/2", "--json", "--catch-up-days", "0"))
    assert first["paid"] + second["paid"] == 40
    runs = {(r.ShardFirst, r.ShardLast, r.ShardCount) for r in access.list_batch_runs("payments")}
    assert runs == {(0, 3, 8), (4, 7, 8)}


def test_an_indexed_job_takes_its_share_from_job_completion_index(moto_table, monkeypatch) -> None:
    use_due_shards(4)
    seed_due(12, due=D)
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "2")
    with at(D):
        out = json.loads(command("send_reminders", "--hosts", "4", "--date", str(D - timedelta(days=7)), "--json"))
    assert out["shards"] == "2-2/4"
    monkeypatch.delenv("JOB_COMPLETION_INDEX")
    with pytest.raises(CommandError, match="JOB_COMPLETION_INDEX"), at(D):
        command("send_reminders", "--hosts", "4")


def test_more_hosts_than_shards_leaves_a_host_with_nothing_and_says_so(moto_table) -> None:
    use_due_shards(2)
    seed_due(3, due=D)
    with at(D):
        assert "no shard for this host" in command("process_payments", "--shard", "0/3")
    assert access.list_batch_runs("payments") == []


def test_a_setting_that_disagrees_with_the_table_stops_the_batch_in_one_line(moto_table, settings) -> None:
    settings.DUE_SHARDS = 4  # the table records 1
    with pytest.raises(CommandError) as error, at(D):
        command("process_payments")
    [line] = str(error.value).splitlines()
    assert "DUE_SHARDS=4" in line and "migrate_due_shards" in line
    assert access.list_batch_runs("payments") == []


def test_catch_up_is_per_shard_a_failed_host_takes_back_its_own_dates(moto_table) -> None:
    use_due_shards(4)
    subs = seed_due(30, due=D)
    with at(D - timedelta(days=1)):
        for k in (0, 1):  # both hosts complete the day before
            command("process_payments", "--shard", f"{k}/2", "--catch-up-days", "0")
    with at(D):
        command("process_payments", "--shard", "0/2")  # host 1 misses D (down)
    with at(D + timedelta(days=1)):
        out = json.loads(command("process_payments", "--shard", "1/2", "--json"))
        again = json.loads(command("process_payments", "--shard", "0/2", "--json"))
    assert (out["first_date"], out["last_date"]) == ("2027-03-15", "2027-03-16")
    assert out["paid"] == sum(access.shard_of(s.sub_id, 4) >= 2 for s in subs)
    assert again["first_date"] == "2027-03-16" and again["paid"] == 0  # host 0 did D already
    assert all(fresh(s).NextPaymentDate == "2027-04-15" for s in subs)


@pytest.mark.django_db(databases=[])
def test_processes_split_the_shards_one_summary_one_run_record_each(local_table, monkeypatch) -> None:
    monkeypatch.setenv("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
    use_due_shards(8)
    day = datetime.now(tz=UTC).date() - timedelta(days=1)
    subs = seed_due(30, due=day)
    out = command("process_payments", "--processes", "2", "--date", day.isoformat(), "--catch-up-days", "0",
                  "--json", "--workers", "4")
    [line] = out.splitlines()
    summary = json.loads(line)
    assert (summary["paid"], summary["errors"], summary["processes"]) == (30, 0, 2)
    assert summary["outcome"] == "completed" and len(summary["run_ids"]) == 2
    runs = access.list_batch_runs("payments")
    assert {(r.ShardFirst, r.ShardLast, r.ShardCount, r.Outcome) for r in runs} == {
        (0, 3, 8, "completed"), (4, 7, 8, "completed")}
    assert {r.RunId for r in runs} == set(summary["run_ids"])
    assert all(len(receipts_of(s)) == 1 for s in subs)


@pytest.mark.django_db(databases=[])
def test_two_hosts_with_overlapping_shards_charge_every_payment_once(local_table, monkeypatch) -> None:
    monkeypatch.setenv("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
    use_due_shards(8)
    day = datetime.now(tz=UTC).date() - timedelta(days=1)
    subs = seed_due(60, due=day)
    env = child_environment()
    args = [sys.executable, "manage.py", "process_payments", "--date", day.isoformat(), "--catch-up-days", "0",
            "--json", "--workers", "8"]
    # Shards 2-5 go to both "hosts" at the same time.
    procs = [subprocess.Popen([*args, "--shards", shards], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
             for shards in ("0-5", "2-7")]
    results = [json.loads(p.communicate(timeout=300)[0].splitlines()[-1]) for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    overlap = [s for s in subs if 2 <= access.shard_of(s.sub_id, 8) <= 5]
    assert overlap, "the overlap must hold items for the test to mean anything"
    # The conditions let one of the two record each payment: the other skips it, or no
    # longer finds it in the index.
    assert sum(r["paid"] for r in results) == 60
    ledger = get_gateway()
    for sub in subs:
        charges = ledger.charges_made(sub_id=sub.sub_id)
        assert len(charges) == 1, sub.sub_id
        assert len(receipts_of(sub)) == 1
        assert fresh(sub).LastPaymentDate == day.isoformat() and fresh(sub).NextPaymentDate > day.isoformat()
