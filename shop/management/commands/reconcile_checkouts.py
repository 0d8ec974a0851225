"""Finish or roll back checkouts (and refunds) a crash left half-way; run it from cron."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.core.management.base import CommandParser

from core.dynamo.command import BillingCommand
from shop.reconcile import reconcile


class Command(BillingCommand):
    help = "Settle checkouts whose card was not charged, and refunds not made, after a crash."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", type=int, default=300, metavar="SECONDS",
                            help="only entries at least this old (default 300: leave checkouts in progress alone)")
        parser.add_argument("--json", action="store_true", help="print the summary as one JSON line")

    def handle(self, *args: Any, **options: Any) -> None:
        summary = reconcile(timedelta(seconds=options["older_than"]))
        if options["json"]:
            self.stdout.write(json.dumps({k: getattr(summary, k) for k in
                                          ("finished", "rolled_back", "still_pending", "failed")}))
            return
        for line in summary.lines:
            self.stdout.write(line)
        self.stdout.write(f"{len(summary.finished)} finished, {len(summary.rolled_back)} rolled back, "
                          f"{len(summary.still_pending)} still pending, {len(summary.failed)} failed")
