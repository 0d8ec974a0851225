"""``python manage.py revenue_rebuild [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--part K] [--check] [--json]``:
recompute every day's revenue figures from the audit history and keep them as rollups
(docs/ANALYTICS.md, "Kept figures"; each product's, price interval's and currency's months and
cohorts too), or, with ``--check``, compare the kept rollups with a
fresh recomputation: one line per differing day and currency, exit 1; a one-line summary
and exit 0 when they agree. Safe to re-run and to kill (a rerun puts the same items).
``--part K`` (1 to ``REVENUE_REBUILD_PARTS``) reads and writes, or checks, one part's
customers only: the parts run side by side, on one host or several ("A rebuild split over
processes")."""

from __future__ import annotations

import json
import sys
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from billing.access.revenue_rollups import RollupDay
from billing.analytics.rebuild import check, rebuild, rebuild_parts
from billing.analytics.rollups import Part
from core.clock import billing_today
from core.dynamo.command import BillingCommand


def _day(text: str | None, name: str, today: date) -> date | None:
    """A day, ``YYYY-MM-DD``, or ``today`` / ``yesterday`` in the billing time zone (a cron
    line needs no date arithmetic of its own)."""
    if not text:
        return None
    if text in ("today", "yesterday"):
        return today if text == "today" else today - timedelta(days=1)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"{name} {text}: not a day (YYYY-MM-DD, today or yesterday)") from None


def _part(number: int | None) -> Part | None:
    """``--part K`` as the part it names; a clear error for a part there is not."""
    if number is None:
        return None
    parts = rebuild_parts()
    if parts == 1:
        raise CommandError("--part: the rebuild is not split (REVENUE_REBUILD_PARTS is 1)")
    if not 1 <= number <= parts:
        raise CommandError(f"--part {number}: the parts are 1 to {parts} (REVENUE_REBUILD_PARTS)")
    return Part(number - 1, parts)


def _named(part: Part | None) -> dict[str, Any]:
    return {} if part is None else {"part": part.index + 1, "parts": part.count}


class Command(BillingCommand):
    help = ("Recompute the daily revenue rollups (MRR at each day's close, its movements, paying, new and "
            "churned customers, per currency and shard; the day's other counts, refunds and disputes, "
            "usage revenue), each "
            "month's and the cohorts (the whole business's, and each product's, price interval's and "
            "currency's) from the audit history and write them; --check compares the kept items with "
            "a recomputation instead and exits 1 on any difference.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--from", dest="first", help="the first day, YYYY-MM-DD or yesterday (default: the "
                                                          "month before the first movement)")
        parser.add_argument("--to", dest="last", help="the last day, YYYY-MM-DD (default: today)")
        parser.add_argument("--part", type=int, metavar="K",
                            help="only the customers of part K of REVENUE_REBUILD_PARTS (from 1): run every part, "
                                 "side by side, each with the same --from")
        parser.add_argument("--check", action="store_true", help="compare, write nothing; exit 1 on a difference")
        parser.add_argument("--json", action="store_true", help="one JSON object (for cron)")

    def handle(self, *args: Any, **options: Any) -> None:
        today = billing_today(settings.BILLING_TIMEZONE)
        first, last = _day(options["first"], "--from", today), _day(options["last"], "--to", today)
        if first and last and first > last:
            raise CommandError("--from is after --to")
        part = _part(options["part"])
        if part is not None and first is None and not options["check"]:
            raise CommandError("--part needs --from: every part must keep the same days")
        if options["check"]:
            self._check(today, first, last, part, as_json=options["json"])
        else:
            self._rebuild(today, first, last, part, as_json=options["json"])

    def _rebuild(self, today: date, first: date | None, last: date | None, part: Part | None, *,
                 as_json: bool) -> None:
        progress = self.stdout.isatty() and not as_json
        shown: list[date] = []

        def written(row: RollupDay) -> None:
            if progress and (not shown or shown[-1] != row.day):
                shown.append(row.day)
                self.stdout.write(f"\r{row.day.isoformat()}", ending="")
                self.stdout.flush()

        done = rebuild(today, first=first, last=last, written=written, part=part)
        if progress:
            self.stdout.write("\r", ending="")
        if as_json:
            self.stdout.write(json.dumps({"rebuilt": True, "from": done.first.isoformat(), "to": done.last.isoformat(),
                                          "items": done.items, "shards": done.shards, "months": done.months,
                                          "cohorts": done.cohorts, "scopes": done.scopes,
                                          "scoped_items": done.scoped_items, "scoped_days": done.scoped_days,
                                          **_named(part)}))
        else:
            of_part = f" (part {part})" if part is not None else ""
            self.stdout.write(f"Kept {done.items} rollup items{of_part}: {done.first} to {done.last}, "
                              f"{done.shards} shards a day; "
                              f"{done.months} month items, {done.cohorts} cohort months; "
                              f"{done.scoped_items} items for {done.scopes} products, price intervals and currencies"
                              f" and {done.scoped_days} items of their days")

    def _check(self, today: date, first: date | None, last: date | None, part: Part | None, *,
               as_json: bool) -> None:
        found = check(today, first=first, last=last, part=part)
        today_differs = found.mrr_today_kept is not None and found.mrr_today_kept != found.mrr_today_items
        if as_json:
            self.stdout.write(json.dumps({
                "agree": found.agree, "from": found.first.isoformat(), "to": found.last.isoformat(),
                "days": found.days, "currencies": found.currencies,
                "differences": [{"day": d.isoformat(), "currency": c, "what": w} for d, c, w in found.differences],
                "mrr_today": {"kept": found.mrr_today_kept, "subscriptions": found.mrr_today_items},
                **_named(part)}))
        else:
            for day, currency, what in found.differences:
                self.stdout.write(f"{day} {currency}: {what}")
            if today_differs:
                self.stdout.write(f"{today} MRR: kept {found.mrr_today_kept}, "
                                  f"from the subscriptions as they stand {found.mrr_today_items}")
            if found.agree:
                of_part = f" (part {part})" if part is not None else ""
                self.stdout.write(f"The kept figures agree{of_part}: {found.days} days, {found.first} to {found.last}, "
                                  f"{', '.join(found.currencies) or 'no currency'}")
        if not found.agree:
            sys.exit(1)
