"""``python manage.py reconcile_payments --from D --to D [--fix]``: the gateway's charges
against the receipts (docs/MONEY.md M2), one line per difference."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from billing.batches.reconcile import reconcile
from billing.management.batchcommand import parse_date
from core.clock import billing_today
from core.dynamo.command import BillingCommand


class Command(BillingCommand):
    help = ("Compare the payment gateway's successful charges created between two dates with the receipts; "
            "report each difference in one line. Dry by default: --fix records the missing receipts.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--from", dest="date_from", required=True, help="first day, YYYY-MM-DD")
        parser.add_argument("--to", dest="date_to", required=True, help="last day, YYYY-MM-DD")
        parser.add_argument("--fix", action="store_true", help="record each missing receipt (default: report only)")

    def handle(self, *args: Any, **options: Any) -> None:
        date_from, date_to = parse_date(options["date_from"], "--from"), parse_date(options["date_to"], "--to")
        if date_from is None or date_to is None or date_from > date_to:
            raise CommandError("--from must be on or before --to")
        checked, differences = reconcile(date_from, date_to, fix=options["fix"],
                                         today=billing_today(settings.BILLING_TIMEZONE))
        for difference in differences:
            self.stdout.write(difference.line())
        fixed = sum(d.fixed for d in differences)
        self.stdout.write(f"reconciled {date_from}..{date_to}: {checked} charge(s), {len(differences)} "
                          f"difference(s), {fixed} fixed{'' if options['fix'] else ' (dry run: --fix to write)'}")
        if len(differences) > fixed:
            raise CommandError(f"{len(differences) - fixed} difference(s) left")
