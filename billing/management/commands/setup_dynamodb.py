"""Create the rpay table with both indexes if it is missing; safe to run any time."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from billing import access
from billing.management.base import BillingCommand
from billing.table import ensure_table, summarize


class Command(BillingCommand):
    help = ("Create the DynamoDB table and its two GSIs if missing, wait until active, enable TTL; "
            "and the shop's table with its two GSIs.")

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
        self._setup_shop()

    def _setup_shop(self) -> None:
        """The online shop's table (SHOP-DESIGN.md), on the same engine."""
        from shop.models import ShopItem

        status = ensure_table(wait=True, model=ShopItem)
        verb = "created" if status.created else "already exists"
        self.stdout.write(f"{ShopItem.Meta.table_name} {verb} (the shop's table)")
        for line in summarize(status.description):
            self.stdout.write(line)
