"""The daily payment batch: ``python manage.py process_payments [--date D] [--workers N] ...``."""

from __future__ import annotations

from typing import Any

from billing import batches
from billing.management.batchcommand import BatchCommand
from billing.models import BatchKind


class Command(BatchCommand):
    help = ("Take every payment due on a date (default today) from GSI-2, and on missed earlier dates; "
            "safe to re-run and to run twice at once.")
    kind = BatchKind.PAYMENTS

    def add_arguments(self, parser: Any) -> None:
        super().add_arguments(parser)
        parser.add_argument("--no-reconcile", action="store_true",
                            help="skip the reconciliation of the run's days (and RECONCILE_DAYS before them) "
                                 "against the gateway's charges")

    def run_options(self, options: dict[str, Any]) -> dict[str, Any]:
        return {"reconcile": not options["no_reconcile"]}

    def child_arguments(self, options: dict[str, Any]) -> list[str]:
        return ["--no-reconcile"] if options["no_reconcile"] else []

    def run(self, **kwargs: Any) -> batches.RunSummary:
        return batches.run_payments(**kwargs)
