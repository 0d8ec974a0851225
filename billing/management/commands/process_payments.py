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

    def run(self, **kwargs: Any) -> batches.RunSummary:
        return batches.run_payments(**kwargs)
