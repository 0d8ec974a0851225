"""``python manage.py migrate_due_shards --to N``: move the due indexes to N write shards."""

from __future__ import annotations

import time
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from billing import access
from core.clock import billing_today
from core.dynamo.command import BillingCommand

# Every live subscription's NextPaymentDate lies in this window around today: at most a
# period and the longest retry ahead, and behind only as far as batches have not run.
HORIZON_DAYS = 400


class Command(BillingCommand):
    help = ("Rewrite every live subscription's due-index keys (<date>#<shard>) for N shards and record N "
            "with the table. No Scan: reads the due index per date over a horizon around today. Safe to "
            "re-run and to kill (run it again with the same --to); batches and the portal may run meanwhile.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--to", type=int, required=True, help="the new shard count")
        parser.add_argument("--since", help=f"first date to read (default today - {HORIZON_DAYS} days)")
        parser.add_argument("--until", help=f"last date to read (default today + {HORIZON_DAYS} days)")
        parser.add_argument("--settle-seconds", type=float, default=2 * access.DUE_SHARDS_REFRESH,
                            help="wait after recording the migration, so every running process has read "
                                 "it and writes the new keys (default: twice the processes' re-read interval)")

    def handle(self, *args: Any, **options: Any) -> None:
        to = options["to"]
        if to < 1:
            raise CommandError("--to must be at least 1")
        today = billing_today(settings.BILLING_TIMEZONE)
        since = _date(options["since"], "--since") or today - timedelta(days=HORIZON_DAYS)
        until = _date(options["until"], "--until") or today + timedelta(days=HORIZON_DAYS)
        try:
            before = access.read_due_shard_layout()
            layout = access.begin_due_shards_migration(to)
        except access.DueShardsMismatch as error:
            raise CommandError(str(error)) from None
        except access.MigrationConflict:
            raise CommandError(f"a migration to another count is recorded ({before.describe()}): "
                               f"finish it first (migrate_due_shards --to {before.migrating_to})") from None
        self.stdout.write(f"due indexes: {before.describe()} -> {to}; recorded ({layout.describe()})")
        if options["settle_seconds"] > 0:
            self.stdout.write(f"waiting {options['settle_seconds']:.0f}s for running processes to read it")
            time.sleep(options["settle_seconds"])
        total = access.ReshardCount()
        day = since
        while day <= until:
            count = access.reshard_day(day, to)
            total.found += count.found
            total.rewritten += count.rewritten
            total.changed_meanwhile += count.changed_meanwhile
            day += timedelta(days=1)
        layout = access.finish_due_shards_migration(to)
        self.stdout.write(f"{since}..{until}: {total.found} live subscription(s), {total.rewritten} rewritten, "
                          f"{total.changed_meanwhile} changed meanwhile (their new keys written by that change)")
        self.stdout.write(f"due indexes: {layout.describe()}; set DUE_SHARDS={to} in every process's environment")


def _date(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"{option} must be a date as YYYY-MM-DD, not {value!r}") from None
