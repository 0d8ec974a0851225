"""What the benchmark scripts share (scripts/bench.py and the sections it runs, each of
which can also run alone): a table on the local engine, due subscriptions written in bulk,
and the benchmark's calendar. A script imports this module, never another script."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta


def use_table(name: str, endpoint: str) -> None:
    from django.conf import settings

    from billing.models import configure
    from core.dynamo.table import ensure_table

    settings.DYNAMODB_TABLE = name
    configure(table_name=name, region="us-east-1", host=endpoint, max_pool_connections=64)
    ensure_table()


def subscription(n: int, prefix: str, due: date, token: str):
    from billing import access
    from billing.models import PaymentDetails

    sub_id = f"{prefix}{n:07d}"
    card = PaymentDetails(Token=token, Brand="Visa", Last4="4242", ExpMonth=12, ExpYear=2030)
    return access.due_subscription(f"acc{sub_id}", sub_id, due=due, card=card)


def seed(items: list, threads: int = 4) -> float:
    """BatchWriteItem (25 items a request), from a few threads."""
    from billing import access

    started = time.monotonic()
    chunks = [items[i:i + 500] for i in range(0, len(items), 500)]
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(access.batch_items, chunks))
    return time.monotonic() - started


def seed_day(prefix: str, day: date, token: str, count: int) -> None:
    """``count`` subscriptions due on ``day``, ids starting ``prefix``."""
    seed([subscription(n, prefix, day, token) for n in range(count)])


_day = [date(2027, 1, 1)]


def next_day() -> date:
    _day[0] += timedelta(days=1)
    return _day[0]
