"""``manage.py migrate_due_shards --to N``: every live subscription keeps being
found exactly once on its dates, from 1 shard to 8 and back, killed half-way or not."""

from __future__ import annotations

import zlib
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError

from billing import access
from tests.builders import fresh, make_account, make_subscription, seed_due

pytestmark = pytest.mark.django_db(databases=[])
TODAY = date(2027, 3, 10)
DAYS = [TODAY + timedelta(days=n) for n in (-3, 2, 5, 20)]


def migrate(to: int) -> str:
    out = StringIO()
    with time_machine.travel(datetime(2027, 3, 10, 6, tzinfo=UTC), tick=False):
        call_command("migrate_due_shards", "--to", str(to), "--since", "2027-02-01", "--until", "2027-05-01",
                     "--settle-seconds", "0", stdout=out)
    return out.getvalue()


def seeded() -> tuple[list, list]:
    live = [s for n, day in enumerate(DAYS) for s in seed_due(15, due=day, prefix=f"m{n}")]
    account = make_account()
    made = [make_subscription(account, sku=f"SKU-{n}", payment_day=12 + n, today=TODAY) for n in range(4)]
    access.cancel_subscription(made[0])
    return live + made[1:], [made[0]]


def assert_found_once(live: list, shards: int) -> None:
    by_payment = Counter(s.SK for day in {s.NextPaymentDate for s in map(fresh, live)}
                         for s in access.get_due_payments_by_date(date.fromisoformat(day)))
    by_reminder = Counter(s.SK for day in {s.NextReminderDate for s in map(fresh, live)}
                          for s in access.get_due_reminders_by_date(date.fromisoformat(day)))
    assert by_payment == Counter(s.SK for s in live)
    assert by_reminder == Counter(s.SK for s in live)
    for sub in map(fresh, live):
        shard = zlib.crc32(sub.sub_id.encode()) % shards
        assert sub.DuePaymentKey == f"{sub.NextPaymentDate}#{shard}"
        assert sub.DueReminderKey == f"{sub.NextReminderDate}#{shard}"


def test_one_to_eight_shards_and_back_loses_nothing(moto_table, settings) -> None:
    live, cancelled = seeded()
    assert_found_once(live, 1)
    out = migrate(8)
    moved = sum(zlib.crc32(s.sub_id.encode()) % 8 != 0 for s in live)  # shard 0 keeps its key
    assert f"{len(live)} live subscription(s), {moved} rewritten" in out
    assert access.read_due_shard_layout() == access.DueShardLayout(8)
    settings.DUE_SHARDS = 8
    assert_found_once(live, 8)
    assert "0 rewritten" in migrate(8)  # a re-run finds everything already right
    migrate(1)
    settings.DUE_SHARDS = 1
    assert access.read_due_shard_layout() == access.DueShardLayout(1)
    assert_found_once(live, 1)
    for sub in map(fresh, cancelled):
        assert sub.DuePaymentKey is None and sub.DueReminderKey is None


def test_killed_half_way_every_item_is_still_found_once_and_a_re_run_finishes(moto_table, settings) -> None:
    live, _ = seeded()
    access.begin_due_shards_migration(8)
    access.reshard_day(DAYS[0], 8)  # ... and then the process was killed
    assert access.read_due_shard_layout() == access.DueShardLayout(1, migrating_to=8)
    # Meanwhile readers read both counts' shards, writers write the new count.
    assert_found_once([s for s in live if s.NextPaymentDate == DAYS[0].isoformat()], 8)
    by_day = Counter(s.SK for day in DAYS for s in access.get_due_payments_by_date(day))
    assert by_day == Counter(s.SK for s in live if s.NextPaymentDate in {d.isoformat() for d in DAYS})
    newcomer = make_subscription(make_account("new@example.com"), sku="NEW", payment_day=20, today=TODAY)
    assert fresh(newcomer).DuePaymentKey.endswith(f"#{zlib.crc32(newcomer.sub_id.encode()) % 8}")
    with pytest.raises(CommandError, match="another count"):
        migrate(4)
    migrate(8)
    settings.DUE_SHARDS = 8
    assert_found_once([*live, newcomer], 8)
