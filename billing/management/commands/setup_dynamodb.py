"""Create the rpay tables with their indexes if missing; on a table that exists, report
what differs from the wanted settings and change it only with ``--apply``."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from billing import access
from core.dynamo.command import BillingCommand
from core.dynamo.engine import dynamodb_client
from core.dynamo.safety import WantedTable, apply, differences, parse_tags
from core.dynamo.table import RegisteredTable, ensure_table, registered, summarize


class Command(BillingCommand):
    help = ("Create the DynamoDB table and its two GSIs if missing, wait until active, enable TTL; "
            "and every other app's table (the shop's) with its indexes. Against AWS (DYNAMODB_PROTECTION) "
            "also on-demand capacity, point-in-time recovery, deletion protection and DYNAMODB_TAGS. "
            "A table that exists is compared and only changed with --apply.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--apply", action="store_true",
                            help="change what differs on tables that already exist (default: only report it)")

    def handle(self, *args: Any, **options: Any) -> None:
        self.apply = options["apply"]
        try:
            self.tags = parse_tags(settings.DYNAMODB_TAGS)
        except ValueError as error:
            raise CommandError(f"DYNAMODB_TAGS: {error}") from None
        self.differing = 0
        main, *others = registered()
        existed = main.base.exists()
        # TTL is enabled on a new table (or with --apply); on one that exists it is reported.
        status = ensure_table(wait=True, ttl=not existed or self.apply)
        endpoint = settings.DYNAMODB_ENDPOINT or f"AWS DynamoDB ({settings.AWS_REGION})"
        verb = "created" if status.created else "already exists"
        self.stdout.write(f"{settings.DYNAMODB_TABLE} {verb} at {endpoint}")
        layout = status.due_shards
        if not layout.accepts(settings.DUE_SHARDS):
            # The table keeps its count: a change is a migration, never a side effect.
            raise CommandError(access.due_shards_mismatch_message(layout))
        self.stdout.write(f"due indexes: {layout.describe()} (keys <date>#<shard>)")
        self._compare(main, created=status.created)
        if status.ttl == "enabled":
            # AWS, DynamoDB Local and moto all take UpdateTimeToLive.
            self.stdout.write("TTL: enabled on attribute TTL (receipts expire; reads also hide expired ones)")
        elif status.ttl.startswith("unsupported"):
            self.stdout.write(
                f"TTL: this engine does not support it ({status.ttl.removeprefix('unsupported: ')}); "
                "expired receipts are still hidden by every read"
            )
        for line in summarize(status.description):
            self.stdout.write(line)
        for table in others:
            self._setup_other_table(table)
        if self.differing and not self.apply:
            self.stdout.write(f"{self.differing} setting(s) differ: nothing changed; run setup_dynamodb --apply "
                              "to change them")

    def _setup_other_table(self, table: RegisteredTable) -> None:
        """The other apps' tables (the shop's: docs/SHOP.md), on the same engine."""
        status = ensure_table(wait=True, model=table.base)
        verb = "created" if status.created else "already exists"
        self.stdout.write(f"{table.base.Meta.table_name} {verb} ({table.description})")
        self._compare(table, created=status.created)
        for line in summarize(status.description):
            self.stdout.write(line)

    def _compare(self, table: RegisteredTable, *, created: bool) -> None:
        """Say what differs from the wanted settings; fix it on a new table or with --apply."""
        wanted = WantedTable(ttl_attribute=table.ttl_attribute, protect=settings.DYNAMODB_PROTECTION,
                             tags=self.tags)
        name = table.base.Meta.table_name
        found = differences(dynamodb_client(), name, wanted)
        if created or self.apply:
            for line in apply(found):
                self.stdout.write(f"{name}: {line}")
            return
        for difference in found:
            self.stdout.write(f"{name} differs: {difference.describe()}")
        self.differing += len(found)
        if wanted.protect and not found:
            self.stdout.write(f"{name}: on-demand, point-in-time recovery and deletion protection on, tags as set")
