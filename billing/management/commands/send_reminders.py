"""The daily reminder batch: ``python manage.py send_reminders [--date D] [--workers N] ...``."""

from __future__ import annotations

from typing import Any

from billing import batches
from billing.management.batchcommand import BatchCommand
from billing.models import BatchKind


class Command(BatchCommand):
    help = ("Send every payment reminder due on a date (default today) from GSI-1, and on missed "
            "earlier dates; each is claimed before it is sent, so it goes out once.")
    kind = BatchKind.REMINDERS

    def run(self, **kwargs: Any) -> batches.RunSummary:
        return batches.run_reminders(**kwargs)
