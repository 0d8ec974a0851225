"""Revenue analytics in ``make bench`` (scripts/bench.py): ``revenue_rebuild`` over
``REVENUE_SUBSCRIPTIONS`` accounts (100,000; one subscription each, made over the last 16
months, a day of movements yesterday: 5 % switched up, 3 % cancelled now, 2 % new), on
DynamoDB Local: the staff Revenue page with nothing kept (every account's history read), the
whole history kept, then the nightly run (from yesterday), and ``--check`` of those days,
each timed with its DynamoDB requests counted; the nightly run split in two parts
(``REVENUE_REBUILD_PARTS=2``), two processes side by side; then the page
again, read from the kept items (its requests do not grow with the accounts).
``BENCH_ONLY=revenue`` runs it alone.

The accounts are found as the figures find them, through Django's users (a user per
account, in an SQLite file of the run's own folder) and their ``USER#`` links."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from benchkit import SCALE, Requests, seed

ACCOUNTS = max(1000, int(100_000 * SCALE))
HISTORY_DAYS = 480


def _use_own_database(tmp: Path) -> None:
    """Django's tables in a file of the run's own, migrated (the users, the staff roles)."""
    from django.core.management import call_command
    from django.db import connections

    connections["default"].close()
    connections["default"].settings_dict["NAME"] = str(tmp / "revenue.sqlite3")
    call_command("migrate", verbosity=0, interactive=False)


def _items(n: int, user_id: int, today: date, card) -> list:
    """Account ``n``: its account item, user link, subscription and audit events, the item
    as its last event leaves it (the check's second source reads the items)."""
    from billing import access
    from billing.models import Account, AuditAction, AuditEvent, SubscriptionStatus, UserLink

    account_id, sub_id = f"rev{n:07d}", f"revsub{n:07d}"
    yesterday = today - timedelta(days=1)
    made = yesterday if n % 50 == 2 else today - timedelta(days=30 + n % HISTORY_DAYS)
    sub = access.due_subscription(account_id, sub_id, due=today + timedelta(days=1 + n % 28), card=card,
                                  amount=999 + (n % 5) * 1000, currency="EUR" if n % 4 == 0 else "USD")
    sub.CreatedDate = _stamp(made)
    email = f"{account_id}@example.com"
    items = [Account(Account.pk(account_id=account_id), Account.sk(account_id=account_id), Email=email,
                     UserId=user_id, CreatedDate=sub.CreatedDate),
             UserLink(UserLink.pk(user_id=user_id), UserLink.sk(user_id=user_id), AccountId=account_id, Email=email)]
    events = [(made, AuditAction.SUBSCRIPTION_CREATED, access.subscription_snapshot(sub))]
    if n % 20 == 0 and n % 50 != 2:
        sub.PaymentAmount = int(sub.PaymentAmount) + 1000
        events.append((yesterday, AuditAction.SUBSCRIPTION_SWITCHED, access.subscription_snapshot(sub)))
    elif n % 33 == 1 and n % 50 != 2:
        sub.Status, sub.PaidThroughDate, sub.CancelMode = SubscriptionStatus.CANCELLED, yesterday.isoformat(), "now"
        events.append((yesterday, AuditAction.SUBSCRIPTION_CANCELLED, access.subscription_snapshot(sub)))
    for k, (day, action, snapshot) in enumerate(events):
        at = _stamp(day)
        items.append(AuditEvent(AuditEvent.pk(account_id=account_id), AuditEvent.sk(at=at, event_id=f"bench{k}"),
                                At=at, Actor="bench", Action=str(action), Subject=sub.SK, After=snapshot))
    return [*items, sub]


def _stamp(day: date) -> str:
    return datetime(day.year, day.month, day.day, 10, tzinfo=UTC).isoformat(timespec="seconds")


def _seed(today: date) -> float:
    from django.contrib.auth import get_user_model

    from billing.models import PaymentDetails

    started = time.monotonic()
    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"rev{n:07d}@example.com", password="!") for n in range(ACCOUNTS)], batch_size=5000)
    card = PaymentDetails(Token="tok_bench", Brand="Visa", Last4="4242", ExpMonth=12, ExpYear=2030)
    items = [item for n, user in enumerate(users) for item in _items(n, user.pk, today, card)]
    seed(items, threads=8)
    return time.monotonic() - started


def _timed(work: Callable[[], object]) -> tuple[object, dict]:
    with Requests() as counted:
        started = time.monotonic()
        result = work()
        seconds = time.monotonic() - started
    return result, {"seconds": seconds, "requests": dict(sorted(counted.ops.items()))}


def _clerk():
    """A finance clerk's logged-in client (the page's role)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client

    clerk = get_user_model().objects.create_user("finance@bench.localhost", password="!", is_staff=True)
    clerk.groups.set(Group.objects.filter(name="finance"))
    client = Client()
    client.force_login(clerk)
    return client


def _page(client) -> dict:
    """The staff Revenue page's time and requests, and where its figures came from."""
    from django.urls import reverse

    page, figures = _timed(lambda: client.get(reverse("admin:staff_revenue"), SERVER_NAME="localhost"))
    figures["status"] = page.status_code  # type: ignore[attr-defined]
    figures["kept"] = "Figures read from" in page.content.decode()  # type: ignore[attr-defined]
    return figures


def run(say: Callable[[str], None] = print, tmp: Path | None = None) -> dict:
    import tempfile

    from billing.analytics.rebuild import check, rebuild

    folder = tmp or Path(tempfile.mkdtemp(prefix="rpay-bench-revenue-"))
    _use_own_database(folder)
    today = date.today()
    yesterday = today - timedelta(days=1)
    results: dict = {"accounts": ACCOUNTS}
    results["seed_seconds"] = _seed(today)
    say(f"revenue seeded {ACCOUNTS} accounts: {results['seed_seconds']:.0f}s")
    client = _clerk()
    results["page_recomputed"] = _page(client)  # nothing kept yet: every account's history read
    say(f"revenue page, recomputed: {results['page_recomputed']['seconds']:.0f}s")
    done, results["full"] = _timed(lambda: rebuild(today))
    results["full"]["items"] = done.items + done.months + done.cohorts  # type: ignore[attr-defined]
    say(f"revenue rebuild, the whole history: {results['full']['seconds']:.0f}s, {results['full']['items']} items")
    # the nightly run: from yesterday (closed) to today (its month's close, which the page reads)
    done, results["day"] = _timed(lambda: rebuild(today, first=yesterday))
    results["day"]["items"] = done.items + done.months + done.cohorts  # type: ignore[attr-defined]
    say(f"revenue rebuild, yesterday and today: {results['day']['seconds']:.0f}s")
    from django.conf import settings

    readers = settings.REVENUE_READ_WORKERS
    settings.REVENUE_READ_WORKERS = 1  # the same run, its collections read one after another
    try:
        _, results["day_one_reader"] = _timed(lambda: rebuild(today, first=yesterday))
    finally:
        settings.REVENUE_READ_WORKERS = readers
    results["day"]["readers"], results["day_one_reader"]["readers"] = readers, 1
    say(f"revenue rebuild, yesterday and today, one reader: {results['day_one_reader']['seconds']:.0f}s")
    found, results["check"] = _timed(lambda: check(today, first=yesterday))
    results["check"]["agree"] = found.agree  # type: ignore[attr-defined]
    say(f"revenue check, yesterday and today: {results['check']['seconds']:.0f}s, agree {results['check']['agree']}")
    results["parts"] = _in_parts(today, yesterday, 2, folder)
    say(f"revenue rebuild, yesterday and today, two parts side by side: {results['parts']['seconds']:.0f}s "
        f"(each: {', '.join(f'{t:.0f}s' for t in results['parts']['part_seconds'])})")
    results["page"] = _page(client)  # read as the two parts kept it
    say(f"revenue page, kept: {results['page']['seconds'] * 1000:.0f} ms")
    return results


def _in_parts(today: date, first: date, parts: int, folder: Path) -> dict:
    """The nightly run split into ``parts`` (``REVENUE_REBUILD_PARTS``): ``manage.py
    revenue_rebuild --part K --from <yesterday>`` in as many processes at once, on the same
    table and Django database (in production, on hosts of their own; here they share the
    machine's two cores with DynamoDB Local). Each part's time and what it kept, from its
    ``--json`` line."""
    import json
    import os
    import subprocess
    import sys

    from django.conf import settings

    from billing.models import BillingItem

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "REVENUE_REBUILD_PARTS": str(parts), "DYNAMODB_ENDPOINT": BillingItem.Meta.host or "",
           "DYNAMODB_TABLE": settings.DYNAMODB_TABLE, "DATABASE_URL": f"sqlite:///{folder / 'revenue.sqlite3'}"}
    started = time.monotonic()
    running = [(time.monotonic(), subprocess.Popen(
        [sys.executable, str(root / "manage.py"), "revenue_rebuild", "--part", str(k), "--from", first.isoformat(),
         "--json"], cwd=root, env=env, stdout=subprocess.PIPE, text=True)) for k in range(1, parts + 1)]
    answers, took = [], []
    for began, process in running:
        out, _ = process.communicate()
        took.append(time.monotonic() - began)
        if process.returncode:
            raise RuntimeError(f"revenue_rebuild --part failed: exit {process.returncode}")
        answers.append(json.loads(out.strip().splitlines()[-1]))
    settings.REVENUE_REBUILD_PARTS = parts  # the page below reads the items as the parts cut them
    return {"seconds": time.monotonic() - started, "parts": parts, "part_seconds": took,
            "items": sum(a["items"] + a["months"] + a["cohorts"] for a in answers),
            "scoped_items": sum(a["scoped_items"] for a in answers),
            "requests": {}}


def render(r: dict) -> str:
    def requests(x: dict) -> str:
        return ", ".join(f"{op} {n:,}" for op, n in x["requests"].items())

    lines = [f"Revenue analytics over {r['accounts']:,} accounts, one subscription each (made over "
             f"{HISTORY_DAYS} days; yesterday 5 % switched up, 3 % cancelled, 2 % new), on DynamoDB Local "
             f"(seeded in {r['seed_seconds']:.0f} s):", "",
             "| run | time | DynamoDB requests | items written |", "|---|---:|---|---:|"]
    for name, key in (("the staff Revenue page, nothing kept (recomputed)", "page_recomputed"),
                      ("`revenue_rebuild`, the whole history", "full"),
                      ("`revenue_rebuild --from <yesterday>` (the nightly run: yesterday and today)", "day"),
                      ("the same, its collections read one after another", "day_one_reader"),
                      ("`revenue_rebuild --check --from <yesterday>`", "check"),
                      ("the nightly run in two processes side by side (`--part 1`, `--part 2`: each reads "
                       "half the accounts)", "parts"),
                      ("the staff Revenue page, kept (as the two parts kept it)", "page")):
        x = r[key]
        said = f" (HTTP {x['status']}, figures {'kept' if x['kept'] else 'recomputed'})" if "status" in x else ""
        said += f" (agree: {x['agree']})" if "agree" in x else ""
        said += f" ({x['readers']} readers)" if x.get("readers", 1) > 1 else ""
        said += f" (each part: {', '.join(f'{t:.1f} s' for t in x['part_seconds'])})" if "part_seconds" in x else ""
        lines.append(f"| {name}{said} | {x['seconds']:.1f} s | {requests(x)} | {x.get('items', '')} |")
    return "\n".join(lines)
