"""Create the rpay table with both indexes if it is missing; safe to run any time."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from billing import access
from core.dynamo.command import BillingCommand
from core.dynamo.table import ensure_table, registered, summarize


class Command(BillingCommand):
    help = ("Create the DynamoDB table and its two GSIs if missing, wait until active, enable TTL; "
            "and every other app's table (the shop's) with its indexes.")

    def handle(self, *args: Any, **options: Any) -> None:
        status = ensure_table(wait=True)
        endpoint = settings.DYNAMODB_ENDPOINT or f"AWS DynamoDB ({settings.AWS_REGION})"
        verb = "created" if status.created else "already exists"
        self.stdout.write(f"{settings.DYNAMODB_TABLE} {verb} at {endpoint}")
        layout = status.due_shards
        if not layout.accepts(settings.DUE_SHARDS):
            # The table keeps its count: a change is a migration, never a side effect.
            raise CommandError(access.due_shards_mismatch_message(layout))
        self.stdout.write(f"due indexes: {layout.describe()} (keys <date>#<shard>)")
        if status.ttl == "enabled":
            # AWS, DynamoDB Local and moto all take UpdateTimeToLive.
            self.stdout.write("TTL: enabled on attribute TTL (receipts expire; reads also hide expired ones)")
        else:
            self.stdout.write(
                f"TTL: this engine does not support it ({status.ttl.removeprefix('unsupported: ')}); "
                "expired receipts are still hidden by every read"
            )
        for line in summarize(status.description):
            self.stdout.write(line)
        self._setup_other_tables()

    def _setup_other_tables(self) -> None:
        """The other apps' tables (the shop's: docs/SHOP.md), on the same engine."""
        for table in registered()[1:]:
            status = ensure_table(wait=True, model=table.base)
            verb = "created" if status.created else "already exists"
            self.stdout.write(f"{table.base.Meta.table_name} {verb} ({table.description})")
            for line in summarize(status.description):
                self.stdout.write(line)
