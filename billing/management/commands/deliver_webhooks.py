"""``python manage.py deliver_webhooks [--once] [--json]``: the outbound webhook sender
(billing/batches/outbound/sender.py). Without ``--once`` a long-running worker (a service,
a Kubernetes Deployment): passes with a short sleep between idle ones, until SIGTERM or
SIGINT, which finish the attempts in hand. ``--once``: one pass (cron, tests). Several
senders at once are safe (each attempt is claimed by one conditional write)."""

from __future__ import annotations

import json
import threading
from typing import Any

from django.core.management.base import CommandError

from billing import batches
from billing.management.batchcommand import stop_on_signals
from core.dynamo.command import BillingCommand


class Command(BillingCommand):
    help = ("Deliver the merchant events to the webhook endpoints, signed (Standard Webhooks), oldest first per "
            "endpoint, retried for 3 days. Runs until SIGTERM; --once for one pass.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="one pass over every endpoint, then exit")
        parser.add_argument("--workers", type=int, default=4, help="endpoints served at once (default 4)")
        parser.add_argument("--sleep", type=float, default=1.0,
                            help="seconds between passes that found nothing to send (default 1)")
        parser.add_argument("--json", action="store_true", help="print each pass's summary as one JSON line")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1")
        if options["sleep"] < 0:
            raise CommandError("--sleep must be 0 or more")
        sender = batches.Sender(batches.SenderConfig.from_settings(workers=options["workers"]))
        stop = threading.Event()

        def report(summary: batches.PassSummary) -> None:
            self.stdout.write(json.dumps(summary.as_dict(), sort_keys=True) if options["json"] else summary.line())

        with stop_on_signals(stop):
            if options["once"]:
                report(sender.run_pass(stop))
                return
            total = sender.run_forever(stop, sleep=options["sleep"],
                                       on_pass=lambda s: report(s) if s.counts["queued"] or s.counts["succeeded"]
                                       or s.counts["failed"] or s.counts["abandoned"] else None)
        if options["verbosity"] >= 1 and not options["json"]:
            self.stdout.write(f"stopped by a signal; in all: {total.line()}")
