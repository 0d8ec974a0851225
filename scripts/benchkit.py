"""What the benchmark scripts share (scripts/bench.py and the sections it runs, each of
which can also run alone, and scripts/profile_payments.py): a table on the local engine,
due subscriptions written in bulk, the benchmark's calendar, a counter of DynamoDB
requests, and the measured runs (the payment batch, and the bare request pairs it is
compared with). A script imports this module, never another script's own."""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta

# ``BENCH_SCALE=0.1`` shrinks every count of every section, for a quick try.
SCALE = float(os.environ.get("BENCH_SCALE", "1"))


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


PREFIX_DUE = "d"


def seed_due(day: date, token: str, due: int, *, prefix: str = PREFIX_DUE,
             dress: Callable[[object, date], list] | None = None) -> None:
    """``due`` subscriptions due on ``day`` (ids ``d0000000``...): what one payment run of the
    benchmark pays. ``dress(sub, day)`` may change each subscription before it is written and
    returns more items to write with it (a metered price's usage)."""
    items: list = []
    for n in range(due):
        sub = subscription(n, prefix, day, token)
        items += [sub, *(dress(sub, day) if dress else [])]
    seed(items)


class Requests:
    def __init__(self) -> None:
        self.ops: Counter = Counter()
        self.lock = threading.Lock()

    def __call__(self, model, **kwargs) -> None:
        with self.lock:
            self.ops[model.name] += 1

    def __enter__(self):
        from core.dynamo.engine import dynamodb_client

        dynamodb_client().meta.events.register("before-call.dynamodb", self, unique_id="bench-counter")
        return self

    def __exit__(self, *exc) -> None:
        from core.dynamo.engine import dynamodb_client

        dynamodb_client().meta.events.unregister("before-call.dynamodb", unique_id="bench-counter")


def batch_run(token: str, workers: int, latency_ms: int, ledger: str, due: int, *, prefix: str = PREFIX_DUE,
              dress: Callable[[object, date], list] | None = None) -> dict:
    from django.core import mail

    from billing import batches
    from core.payments.simulated import SimulatedGateway

    day = next_day()
    seed_due(day, token, due, prefix=prefix, dress=dress)
    gateway = SimulatedGateway(ledger_path=ledger, latency_ms=latency_ms)
    mail.outbox = []
    cpu = time.process_time()
    with Requests() as requests:
        summary = batches.run_payments(run_date=day, workers=workers, catch_up_days=0, gateway=gateway)
    cpu = time.process_time() - cpu
    assert summary.counts["paid"] == due, summary.as_dict()
    return {"paid": summary.counts["paid"], "elapsed": summary.elapsed, "rate": due / summary.elapsed,
            "cpu_ms": cpu / due * 1000, "requests": dict(requests.ops)}


def _bare_advance(client, table: str, pk: dict, sub_id: str, iso: str) -> None:
    """The batch's advance as one raw UpdateItem (what bare_loop and bare_tx_loop share)."""
    from billing.models import Subscription

    client.update_item(
        TableName=table, Key={"PK": pk, "SK": {"S": Subscription.sk(sub_id=sub_id, sku="NEWS-DAILY")}},
        # The index keys move with the dates (<date>#<shard>), as in the batch.
        UpdateExpression="SET NextPaymentDate = :next, LastPaymentDate = :last, NextReminderDate = :rem, "
                         "DuePaymentKey = :nextkey, DueReminderKey = :remkey, "
                         "#s = :active, RetryCount = :zero ADD Version :one REMOVE BillingPeriod",
        ConditionExpression="NextPaymentDate = :due AND #s IN (:active, :past)",
        ExpressionAttributeNames={"#s": "Status"},
        ExpressionAttributeValues={":next": {"S": "2099-01-01"}, ":last": {"S": iso}, ":rem": {"S": "2098-12-25"},
                                   ":nextkey": {"S": "2099-01-01#0"}, ":remkey": {"S": "2098-12-25#0"},
                                   ":active": {"S": "active"}, ":past": {"S": "past_due"}, ":zero": {"N": "0"},
                                   ":one": {"N": "1"}, ":due": {"S": iso}},
        # What access.update_subscription asks for: the updated attributes, not the item.
        ReturnValues="UPDATED_NEW",
    )


def timed_pairs(pair: Callable[[int], None], workers: int, due: int) -> dict:
    """Run ``pair`` for each due item (its index, 0 to ``due`` - 1) on ``workers`` threads:
    wall time, rate, CPU per pair."""
    started, cpu = time.monotonic(), time.process_time()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(pair, range(due)))
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    return {"elapsed": elapsed, "rate": due / elapsed, "cpu_ms": cpu / due * 1000}


def bare_loop(token: str, workers: int, due: int) -> dict:
    """The same conditional PutItem (receipt) + UpdateItem (subscription) pairs, raw."""
    from django.conf import settings

    from billing.access import receipt_ttl
    from billing.models import Receipt
    from core.dynamo.engine import dynamodb_client

    day = next_day()
    seed_due(day, token, due)
    client = dynamodb_client()
    table = settings.DYNAMODB_TABLE
    iso = day.isoformat()
    ttl = str(int(receipt_ttl(day, 200).timestamp()))

    def pair(n: int) -> None:
        sub_id = f"{PREFIX_DUE}{n:07d}"
        pk = {"S": f"ACC#acc{sub_id}"}
        client.put_item(
            TableName=table,
            # Every attribute access.create_receipt writes, so that both pairs weigh the same.
            Item={"PK": pk, "SK": {"S": Receipt.sk(billing_date=iso, sku="NEWS-DAILY", sub_id=sub_id)},
                  "EntityType": {"S": "Receipt"}, "SubId": {"S": sub_id}, "SKU": {"S": "NEWS-DAILY"},
                  "ProductName": {"S": "Daily News"}, "Email": {"S": f"{sub_id}@example.com"},
                  "BillingDate": {"S": iso}, "ProcessedDate": {"S": f"{iso}T06:00:00+00:00"},
                  "ProcessedAmount": {"N": "999"}, "Currency": {"S": "USD"}, "ChargeId": {"S": "ch_bench"},
                  "CardBrand": {"S": "Visa"}, "CardLast4": {"S": "4242"}, "TTL": {"N": ttl},
                  "Status": {"S": "paid"}, "RefundedAmount": {"N": "0"}},
            ConditionExpression="attribute_not_exists(SK)",
        )
        _bare_advance(client, table, pk, sub_id, iso)

    return timed_pairs(pair, workers, due)


_tx_numbers = [0]  # receipt numbers of bare_tx_loop's look-up items, unique across its runs


def bare_tx_loop(token: str, workers: int, due: int) -> dict:
    """The requests a batch payment sends today, raw: the receipt, its audit event and its
    number's look-up item in one TransactWriteItems (``access.create_receipt``, with its
    two conditions), then ``bare_loop``'s UpdateItem. The items are the access layer's own
    (PynamoDB ``serialize()`` of one payment's receipt, event and look-up), serialised
    once and re-keyed per pair, so that no PynamoDB work is in the loop."""
    from django.conf import settings

    from billing.access import new_event, receipt_ttl
    from billing.access.receipt_numbers import format_receipt_number
    from billing.models import AuditAction, Receipt, ReceiptNumberLookup
    from core.dynamo.engine import dynamodb_client

    day = next_day()
    seed_due(day, token, due)
    client = dynamodb_client()
    table = settings.DYNAMODB_TABLE
    iso = day.isoformat()
    ttl = receipt_ttl(day, 200)
    receipt = Receipt("ACC#x", Receipt.sk(billing_date=iso, sku="NEWS-DAILY", sub_id="x"), sub_id="x",
                      SKU="NEWS-DAILY", ProductName="Daily News", Email="x@example.com", BillingDate=iso,
                      PeriodStart=iso, PeriodEnd=(day + timedelta(days=30)).isoformat(),
                      ProcessedDate=f"{iso}T06:00:00+00:00", ProcessedAmount=999, Currency="USD",
                      ChargeId="ch_bench", CardBrand="Visa", CardLast4="4242", Language="en", TTL=ttl,
                      Number="R-2099-000000").serialize()
    event = new_event("x", actor="batch", action=AuditAction.PAYMENT_SUCCEEDED, subject="SUB#x",
                      after={"Receipt": receipt["SK"]["S"], "Number": "R-2099-000000", "Amount": 999,
                             "Currency": "USD", "ChargeId": "ch_bench", "PeriodStart": iso,
                             "PeriodEnd": receipt["PeriodEnd"]["S"]}).serialize()
    lookup = ReceiptNumberLookup("RCPTNO#x", "RCPTNO#x", AccountId="x", ReceiptSK=receipt["SK"]["S"],
                                 TTL=ttl).serialize()
    first = _tx_numbers[0]
    _tx_numbers[0] += due

    def pair(n: int) -> None:
        sub_id = f"{PREFIX_DUE}{n:07d}"
        pk = {"S": f"ACC#acc{sub_id}"}
        number = format_receipt_number(2099, first + n + 1)
        sk = {"S": Receipt.sk(billing_date=iso, sku="NEWS-DAILY", sub_id=sub_id)}
        client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": {**receipt, "PK": pk, "SK": sk, "SubId": {"S": sub_id},
                                                   "Number": {"S": number}},
                     "ConditionExpression": "attribute_not_exists (#0)", "ExpressionAttributeNames": {"#0": "SK"}}},
            {"Put": {"TableName": table, "Item": {**event, "PK": pk, "SK": {"S": f"{event['SK']['S']}{n}"}}}},
            {"Put": {"TableName": table, "Item": {**lookup, "PK": {"S": f"RCPTNO#{number}"},
                                                   "SK": {"S": f"RCPTNO#{number}"}, "AccountId": pk, "ReceiptSK": sk},
                     "ConditionExpression": "attribute_not_exists (#0)", "ExpressionAttributeNames": {"#0": "SK"}}},
        ])
        _bare_advance(client, table, pk, sub_id, iso)

    return timed_pairs(pair, workers, due)
