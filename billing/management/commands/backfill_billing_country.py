"""``python manage.py backfill_billing_country [--dry-run] [--json]``: give every existing
account a billing country (the VAT of its invoices follows it)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from django.contrib.auth import get_user_model

from billing import access
from billing.actions.tax_identity import Backfilled, Decision, backfill_country
from core.dynamo.command import BillingCommand


class Command(BillingCommand):
    help = ("Give each account without a billing country the one its cards' billing address names, else the "
            "seller's country, and copy it onto its live subscriptions. Reports, one line per account, those "
            "given the seller's country by default: nothing said where the customer is, so check them. No "
            "Scan: the accounts are found through Django's users (one GetItem each for the link, one Query "
            "for the account, its cards and subscriptions). Safe to re-run: each write is conditional on "
            "the country being absent, so a customer's own choice is never overwritten.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--dry-run", action="store_true", help="decide and report, write nothing")
        parser.add_argument("--json", action="store_true", help="the report as JSON: one object per account")

    def handle(self, *args: Any, **options: Any) -> None:
        seller_country = access.get_seller_profile().Country
        results: list[Backfilled] = []
        user_ids = get_user_model().objects.order_by("pk").values_list("pk", flat=True).iterator()
        for user_id in user_ids:
            account_id = access.get_account_id_for_user(user_id)
            if account_id and (done := backfill_country(account_id, seller_country, dry_run=options["dry_run"])):
                results.append(done)
        if options["json"]:
            self.stdout.write(json.dumps([{**asdict(r), "decision": r.decision.value} for r in results], indent=2))
            return
        verb = "would get" if options["dry_run"] else "got"
        for result in results:
            if result.decision == Decision.DEFAULTED:
                self.stdout.write(f"undecided {result.account_id} {result.email}: no country in its billing "
                                  f"addresses; {verb} the seller's, {result.country}")
        counts = {decision: sum(r.decision == decision for r in results) for decision in Decision}
        self.stdout.write(
            f"{len(results)} account(s): {counts[Decision.FROM_ADDRESS]} {verb} the country of their billing "
            f"address, {counts[Decision.DEFAULTED]} the seller's ({seller_country}) by default, "
            f"{counts[Decision.ALREADY]} had one, {counts[Decision.CLOSED]} closed"
            + (" (dry run: nothing written)" if options["dry_run"] else ""))
