"""Capacity model of the payment batch on its peak day.

Pure arithmetic, no Django and no DynamoDB: for a number of subscriptions, a payment-day
distribution, a shard count (GSI hash key ``<date>#<shard>``; 1 = today's design), a
target rate, item sizes and a gateway latency, it gives the write and read rates on the
hottest partition of the base table and of both GSIs, checked against DynamoDB's limit
per partition (1,000 WCU/s, 3,000 RCU/s), and the workers, processes and wall time the
peak day needs. It says which limit binds and the smallest shard count that keeps every
partition under its limit at the target rate.

    python scripts/capacity.py --subscriptions 10000000 --shards 1 10 100 --latency-ms 300
    python scripts/capacity.py --json ...

What one payment writes (billing/batches/payments.py, billing/access/receipts.py,
billing/access/receipt_numbers.py and billing/access/batch_writes.py, as of 23 Nov 2026):

* ``create_receipt``: one TransactWriteItems with the receipt (conditional put), its
  ``payment.succeeded`` audit event and its number's look-up item ``RCPTNO#<number>``
  (conditional put; its own partition key, one per receipt, so never a hot key). A
  transactional write costs two write units per 1 KB of each item: 2 + 2 + 2.
* The receipt number: a batch's ``ReceiptNumbers`` reserves ``RECEIPT_NUMBER_BLOCK``
  (100) numbers with one UpdateItem ADD on the year's counter item ``RCPTSEQ#<year>``
  (1 write unit), so 1/100 of a unit per payment, but all of it on one key: the fleet's
  counter updates per second are its payments per second divided by the block size (and
  a receipt made one at a time, block 1, costs the counter one write each).
* ``advance_after_payment``: one conditional UpdateItem of the subscription (write units
  for the larger of the item before and after, per 1 KB). It changes ``NextPaymentDate``
  and ``LastPaymentDate``, GSI-2's keys: the index deletes the entry under the paid date
  and puts one under the next date (two index writes, one on each key). It also changes
  attributes GSI-1 projects (``NextPaymentDate``, ``Status``...): one write under the
  ``NextReminderDate`` key, two (a delete under the old key too) when the reminder had not
  moved it on before the payment day. The model counts the worse case, two.
* Requests per payment: 2 (the transaction, the UpdateItem), plus 1/block for the counter.
* Reads: the GSI-2 Query of the day (eventually consistent: half a unit per 4 KB of the
  projected items it returns); no GetItem per item, and UpdateItem's ReturnValues costs
  no read units.
* Metered usage (``--metered``: metered items billed per payment, docs/USAGE.md): each
  closes its period with ``mark_billed`` (one UpdateItem per write shard, ``USAGE_SHARDS``
  = 16: 16 write units) and reads it with one strongly consistent Query of the month's
  aggregates (about 16 shards x 31 days of ~120-byte items: 15 read units), on the
  customer's own ``USAGE#`` partition: never a hot key, but on the table's total.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass, field

RECEIPT_NUMBER_BLOCK = 100  # settings.RECEIPT_NUMBER_BLOCK: numbers a batch reserves at once
USAGE_SHARDS = 16  # billing/access/usage.py: the watermark copies mark_billed moves
USAGE_AGGREGATE_BYTES = 120  # a day's aggregate item of one shard
PARTITION_WCU = 1_000  # write units per second one partition serves
PARTITION_RCU = 3_000  # read units per second (strongly consistent) one partition serves
WRITE_UNIT_BYTES = 1_024
READ_UNIT_BYTES = 4_096
TABLE_QUOTA = 40_000  # default on-demand per-table (and per-GSI) maximum, units per second

# --- item sizes -------------------------------------------------------------------------
# DynamoDB's item size: the UTF-8 length of every attribute name plus its value; a number
# is about one byte per two significant digits plus one; a map or list adds 3 bytes plus
# one per element. The examples below follow billing/models.py with realistic values:
# ids are 16 hex characters (access.new_id), dates ISO-8601, e-mails and product names
# of a typical length. PynamoDB's discriminator is stored as ``EntityType``.

ACC = "ACC#" + "0" * 16
SUB_ID = "1" * 16
SKU = "SKU-STANDARD-MONTHLY"

SUBSCRIPTION_EXAMPLE: dict[str, object] = {
    "PK": ACC, "SK": f"SUB#{SUB_ID}#SKU#{SKU}", "EntityType": "Subscription",
    "Email": "firstname.lastname@example.com", "SKU": SKU, "ProductName": "Standard plan, monthly",
    "PaymentDay": 1, "PaymentAmount": 1999, "Currency": "EUR",
    "NextPaymentDate": "2026-12-01", "LastPaymentDate": "2026-11-01",
    "NextReminderDate": "2026-11-24", "LastReminderDate": "2026-10-25",
    "PaymentDetails": {"Token": "tok_" + "x" * 24, "Brand": "visa", "Last4": "4242", "ExpMonth": 12,
                       "ExpYear": 2029, "BillingAddress": "12 Example Street, 10115 Berlin, DE"},
    "CreatedDate": "2025-03-01T10:15:00+00:00", "Status": "active", "BillingPeriod": "2026-11-01",
    "RetryCount": 0, "PaidThroughDate": "2026-11-30", "CancelledDate": None, "CancelReason": None,
    "Version": 27,
}
RECEIPT_EXAMPLE: dict[str, object] = {
    "PK": ACC, "SK": f"REC#2026-12-01#SKU#{SKU}#SUB#{SUB_ID}", "EntityType": "Receipt",
    "SubId": SUB_ID, "SKU": SKU, "ProductName": "Standard plan, monthly",
    "Email": "firstname.lastname@example.com", "BillingDate": "2026-12-01", "PeriodStart": "2026-12-01",
    "PeriodEnd": "2026-12-31", "ProcessedDate": "2026-12-01T00:03:12+00:00", "ProcessedAmount": 1999,
    "Currency": "EUR", "ChargeId": "ch_" + "x" * 24, "CardBrand": "visa", "CardLast4": "4242",
    "Status": "paid", "RefundedAmount": 0, "TTL": 1_830_000_000, "Language": "en", "Number": "R-2026-000123",
}
RECEIPT_NUMBER = "R-2026-001234567"  # nine digits: the longest number the counter issues
RECEIPT_NUMBER_LOOKUP_EXAMPLE: dict[str, object] = {
    "PK": f"RCPTNO#{RECEIPT_NUMBER}", "SK": f"RCPTNO#{RECEIPT_NUMBER}", "EntityType": "ReceiptNumberLookup",
    "AccountId": ACC[len("ACC#"):], "ReceiptSK": RECEIPT_EXAMPLE["SK"], "TTL": 1_830_000_000,
}
RECEIPT_COUNTER_EXAMPLE: dict[str, object] = {
    "PK": "RCPTSEQ#2026", "SK": "RCPTSEQ#2026", "EntityType": "ReceiptCounter", "LastNumber": 1_234_567,
}
AUDIT_EVENT_EXAMPLE: dict[str, object] = {
    "PK": ACC, "SK": "EVT#2026-12-01T00:03:12.123456+00:00#" + "2" * 16, "EntityType": "Event",
    "At": "2026-12-01T00:03:12.123456+00:00", "Actor": "batch", "Action": "payment.succeeded",
    "Subject": f"SUB#{SUB_ID}#SKU#{SKU}",
    # JSONAttribute: stored as one string
    "After": json.dumps({"Receipt": f"REC#2026-12-01#SKU#{SKU}#SUB#{SUB_ID}", "Number": RECEIPT_NUMBER, "Amount": 1999,
                         "Currency": "EUR", "ChargeId": "ch_" + "x" * 24, "PeriodStart": "2026-12-01",
                         "PeriodEnd": "2026-12-31"}),
}
# GSI-2 projects nearly the whole subscription (docs/TABLE.md): the index entry is the
# projected attributes plus the table's and the index's keys.
GSI2_ATTRIBUTES = ("PK", "SK", "EntityType", "Email", "PaymentDay", "PaymentAmount", "Currency", "SKU",
                   "PaymentDetails", "Status", "ProductName", "BillingPeriod", "RetryCount",
                   "NextReminderDate", "LastReminderDate", "Version", "NextPaymentDate", "LastPaymentDate")
GSI1_ATTRIBUTES = ("PK", "SK", "EntityType", "SKU", "Email", "NextPaymentDate", "PaymentAmount", "Currency",
                   "PaymentDetails", "Status", "ProductName", "PaymentDay", "NextReminderDate",
                   "LastReminderDate")


def attribute_value_size(value: object) -> int:
    """Bytes DynamoDB counts for one value (approximation of its published rules)."""
    if value is None:
        return 1
    if isinstance(value, bool):
        return 1
    if isinstance(value, int | float):
        digits = len(str(abs(value)).replace(".", "").strip("0")) or 1
        return math.ceil(digits / 2) + 1
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, dict):
        return 3 + sum(1 + len(k.encode()) + attribute_value_size(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return 3 + sum(1 + attribute_value_size(v) for v in value)
    raise TypeError(f"no DynamoDB size for {type(value).__name__}")


def item_size(item: dict[str, object]) -> int:
    """Bytes of an item: names plus values; absent (None) attributes are not stored."""
    return sum(len(name.encode()) + attribute_value_size(v) for name, v in item.items() if v is not None)


def estimated_sizes() -> dict[str, int]:
    """Estimated bytes of the items one payment touches (with a shard suffix on GSI keys)."""
    shard_suffix = len("#99")
    sub = item_size(SUBSCRIPTION_EXAMPLE)
    return {
        "subscription": sub + 2 * shard_suffix,
        "receipt": item_size(RECEIPT_EXAMPLE),
        "audit_event": item_size(AUDIT_EVENT_EXAMPLE),
        "receipt_number_lookup": item_size(RECEIPT_NUMBER_LOOKUP_EXAMPLE),
        "receipt_counter": item_size(RECEIPT_COUNTER_EXAMPLE),
        "gsi1_entry": item_size({k: SUBSCRIPTION_EXAMPLE[k] for k in GSI1_ATTRIBUTES}) + shard_suffix,
        "gsi2_entry": item_size({k: SUBSCRIPTION_EXAMPLE[k] for k in GSI2_ATTRIBUTES}) + shard_suffix,
    }


def write_units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT_BYTES))


def read_units(size_bytes: float, *, consistent: bool = False) -> float:
    """Read units for ``size_bytes`` returned by a Query (summed, then rounded per 4 KB)."""
    units = size_bytes / READ_UNIT_BYTES
    return units if consistent else units / 2


# --- the payment-day distribution -------------------------------------------------------

def payment_day_weights(first_share: float = 1 / 3, overrides: dict[int, float] | None = None) -> dict[int, float]:
    """Share of subscriptions per ``PaymentDay`` (1..31), summing to 1.

    Default: ``first_share`` on the 1st, the rest spread evenly over days 2..31.
    ``overrides`` fixes the share of some days; the remainder is spread evenly over the
    days it does not name (the 1st included only if named or ``first_share`` is 0)."""
    fixed = dict(overrides) if overrides else {1: first_share}
    rest_days = [d for d in range(1, 32) if d not in fixed]
    rest = 1 - sum(fixed.values())
    if rest < -1e-9 or any(not 1 <= d <= 31 for d in fixed):
        raise ValueError("day shares must be on days 1..31 and sum to at most 1")
    weights = {d: 0.0 for d in range(1, 32)}
    weights.update(fixed)
    for d in rest_days:
        weights[d] = max(rest, 0.0) / len(rest_days)
    return weights


def payments_per_calendar_day(subscriptions: int, weights: dict[int, float], month_days: int) -> dict[int, float]:
    """Due payments on each day of a month of ``month_days`` days: a payment day past the
    month's end is clamped to its last day (docs/TABLE.md, "The schedule keeps its anchor")."""
    days = {d: 0.0 for d in range(1, month_days + 1)}
    for payment_day, share in weights.items():
        days[min(payment_day, month_days)] += subscriptions * share
    return days


def peak_day(subscriptions: int, weights: dict[int, float]) -> tuple[int, int, float]:
    """(month length, day, payments) of the busiest day over months of 28 to 31 days."""
    best = (31, 1, -1.0)
    for month_days in (28, 29, 30, 31):
        for day, count in payments_per_calendar_day(subscriptions, weights, month_days).items():
            if count > best[2]:
                best = (month_days, day, count)
    return best


def hottest_shard_factor(items: float, shards: int) -> float:
    """How much more than the mean the busiest of ``shards`` hashed shards holds: the
    mean plus three standard deviations of a binomial count (a hash is not a round robin)."""
    if shards <= 1 or items <= 0:
        return 1.0
    mean = items / shards
    # one shard never holds more than all of them (matters only for a handful of items)
    return min(float(shards), 1 + 3 * math.sqrt(mean * (1 - 1 / shards)) / mean)


# --- the model --------------------------------------------------------------------------

@dataclass
class Partition:
    """One hot key: its write and read units per second at the modelled rate."""

    name: str
    wcu: float
    rcu: float

    @property
    def share_of_limit(self) -> float:
        # eventually consistent reads are already halved in ``rcu``
        return max(self.wcu / PARTITION_WCU, self.rcu / PARTITION_RCU)


@dataclass
class Result:
    subscriptions: int
    shards: int
    peak_month_days: int
    peak_day: int
    peak_payments: int
    target_rate: float
    latency_ms: float
    cpu_ms: float
    ddb_ms: float
    item_sizes: dict[str, int]
    units_per_payment: dict[str, float]
    partitions: list[Partition] = field(default_factory=list)
    table_wcu: float = 0.0
    partition_cap_rate: float = 0.0
    workers_per_process: int = 0
    process_rate: float = 0.0
    process_limit: str = ""
    processes: int = 0
    workers: int = 0
    rate: float = 0.0
    binding: str = ""
    wall_hours: float = 0.0
    min_shards: int = 1
    over_limit: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["partitions"] = [dict(asdict(p), share_of_limit=round(p.share_of_limit, 4)) for p in self.partitions]
        return data


def units_per_payment(sizes: dict[str, int], *, reminder_moved: bool = False,
                      receipt_block: int = RECEIPT_NUMBER_BLOCK, metered: float = 0.0) -> dict[str, float]:
    """Write and read units one payment costs, per table/index and key (see module doc)."""
    if receipt_block < 1 or metered < 0:
        raise ValueError("receipt_block >= 1, metered >= 0")
    counter = write_units(sizes["receipt_counter"]) / receipt_block
    usage_wcu = metered * USAGE_SHARDS * write_units(64)
    return {
        # TransactWriteItems: two units per KB of each item (receipt, event, number look-up);
        # then the UpdateItem; and the counter's share of its one update per block; and the
        # metered items' mark_billed
        "table_wcu": 2 * write_units(sizes["receipt"]) + 2 * write_units(sizes["audit_event"])
        + 2 * write_units(sizes["receipt_number_lookup"]) + write_units(sizes["subscription"]) + counter
        + usage_wcu,
        "usage_wcu": usage_wcu,
        "usage_query_rcu": metered * read_units(USAGE_SHARDS * 31 * USAGE_AGGREGATE_BYTES, consistent=True),
        # all of it on the year's counter item: one key for the whole fleet
        "receipt_counter_wcu": counter,
        # the hot key of the day: the entry leaves it; the next date's key gets it
        "gsi2_paid_key_wcu": write_units(sizes["gsi2_entry"]),
        "gsi2_next_key_wcu": write_units(sizes["gsi2_entry"]),
        # one write under the new NextReminderDate key; a delete under the old one too
        # when the reminder run had not moved it
        "gsi1_next_key_wcu": write_units(sizes["gsi1_entry"]),
        "gsi1_old_key_wcu": 0.0 if reminder_moved else write_units(sizes["gsi1_entry"]),
        "gsi2_query_rcu": read_units(sizes["gsi2_entry"]),
    }


def partitions_at(rate: float, shards: int, units: dict[str, float], skew: float,
                  subs_per_account: int) -> list[Partition]:
    """Hot-key rates when the fleet pays ``rate`` payments/s spread over ``shards``."""
    per_shard = rate / shards * skew
    return [
        Partition("GSI-2 <paid date>#<shard> (delete + Query)", per_shard * units["gsi2_paid_key_wcu"],
                  per_shard * units["gsi2_query_rcu"]),
        Partition("GSI-2 <next date>#<shard> (put)", per_shard * units["gsi2_next_key_wcu"], 0.0),
        Partition("GSI-1 <next reminder>#<shard> (put)", per_shard * units["gsi1_next_key_wcu"], 0.0),
        Partition("GSI-1 <old reminder>#<shard> (delete)", per_shard * units["gsi1_old_key_wcu"], 0.0),
        # the base table's key is the account: at most its few subscriptions in one second
        Partition("table ACC#<account> (worst: all its subs in one second)",
                  subs_per_account * (units["table_wcu"] - units["receipt_counter_wcu"]), 0.0),
        # whatever the shards: every process reserves its blocks on the one counter item
        Partition("table RCPTSEQ#<year> (receipt counter, one update per block)",
                  rate * units["receipt_counter_wcu"], 0.0),
    ]


def model(
    subscriptions: int,
    shards: int = 1,
    *,
    rate: float = 2_000.0,
    first_share: float = 1 / 3,
    day_overrides: dict[int, float] | None = None,
    latency_ms: float = 300.0,
    cpu_ms: float = 3.8,
    ddb_ms: float = 10.0,
    workers_per_process: int | None = None,
    processes: int | None = None,
    sizes: dict[str, int] | None = None,
    reminder_moved: bool = False,
    subs_per_account: int = 1,
    headroom: float = 1.0,
    receipt_block: int = RECEIPT_NUMBER_BLOCK,
    metered: float = 0.0,
) -> Result:
    """The peak day at ``rate`` payments/s with ``shards`` shards.

    ``latency_ms`` is the gateway's time per charge, ``ddb_ms`` the two DynamoDB requests'
    round trips, ``cpu_ms`` the Python CPU per payment (one process uses one core: the
    GIL). Without ``workers_per_process`` each process gets enough threads to reach its
    CPU limit; without ``processes`` the fleet is sized for ``rate``. ``headroom`` is the
    share of a partition's limit the recommendation may use (1.0: all of it);
    ``receipt_block`` the receipt numbers reserved per counter update."""
    if shards < 1 or rate <= 0 or subscriptions < 0:
        raise ValueError("shards >= 1, rate > 0, subscriptions >= 0")
    weights = payment_day_weights(first_share, day_overrides)
    month_days, day, payments = peak_day(subscriptions, weights)
    sizes = sizes or estimated_sizes()
    units = units_per_payment(sizes, reminder_moved=reminder_moved, receipt_block=receipt_block, metered=metered)
    skew = hottest_shard_factor(payments, shards)
    parts = partitions_at(rate, shards, units, skew, subs_per_account)

    # the fleet: per process, threads waiting on the gateway vs one core of Python
    cpu_rate = 1000.0 / cpu_ms
    per_payment_s = (latency_ms + ddb_ms + cpu_ms) / 1000.0
    wpp = workers_per_process or math.ceil(cpu_rate * per_payment_s)
    gateway_rate = wpp / per_payment_s
    process_rate = min(cpu_rate, gateway_rate)
    process_limit = "CPU" if cpu_rate <= gateway_rate else "gateway latency"
    procs = processes or math.ceil(rate / process_rate)
    fleet_rate = procs * process_rate

    # the rate at which the hottest key reaches its limit (GSI keys scale with shards;
    # the receipt counter with the block size)
    gsi_parts = [p for p in parts if p.name.startswith("GSI")]
    worst = max(p.share_of_limit for p in gsi_parts)
    counter_share = parts[-1].share_of_limit
    hot = max(worst, counter_share)
    partition_cap = rate / hot if hot > 0 else math.inf
    achieved = min(rate, fleet_rate, partition_cap)
    if partition_cap <= rate and partition_cap <= fleet_rate:
        binding = "hot GSI partition" if worst >= counter_share else "hot receipt counter"
    elif achieved == fleet_rate and fleet_rate < rate:
        binding = process_limit
    else:
        binding = f"target rate (each process limited by {process_limit})"
    table_wcu = rate * units["table_wcu"]
    over = [p.name for p in parts if p.share_of_limit >= 1.0]
    if table_wcu > TABLE_QUOTA:
        over.append(f"table total {table_wcu:,.0f} WCU/s > default quota {TABLE_QUOTA:,}")

    return Result(
        subscriptions=subscriptions, shards=shards, peak_month_days=month_days, peak_day=day,
        peak_payments=round(payments), target_rate=rate, latency_ms=latency_ms, cpu_ms=cpu_ms, ddb_ms=ddb_ms,
        item_sizes=sizes, units_per_payment=units, partitions=parts, table_wcu=table_wcu,
        partition_cap_rate=partition_cap, workers_per_process=wpp, process_rate=process_rate,
        process_limit=process_limit, processes=procs, workers=procs * wpp, rate=achieved, binding=binding,
        wall_hours=payments / achieved / 3600 if achieved else math.inf,
        min_shards=min_shards(subscriptions, rate=rate, first_share=first_share, day_overrides=day_overrides,
                              sizes=sizes, reminder_moved=reminder_moved, headroom=headroom),
        over_limit=over,
    )


def max_gsi_share(subscriptions: int, shards: int, *, rate: float, first_share: float = 1 / 3,
                  day_overrides: dict[int, float] | None = None, sizes: dict[str, int] | None = None,
                  reminder_moved: bool = False) -> float:
    """The busiest GSI key's share of its partition limit (1.0 = at the limit); the
    receipt counter does not depend on the shards (``model`` checks it)."""
    weights = payment_day_weights(first_share, day_overrides)
    _, _, payments = peak_day(subscriptions, weights)
    units = units_per_payment(sizes or estimated_sizes(), reminder_moved=reminder_moved)
    parts = partitions_at(rate, shards, units, hottest_shard_factor(payments, shards), 1)
    return max(p.share_of_limit for p in parts if p.name.startswith("GSI"))


def min_shards(subscriptions: int, *, rate: float, first_share: float = 1 / 3,
               day_overrides: dict[int, float] | None = None, sizes: dict[str, int] | None = None,
               reminder_moved: bool = False, headroom: float = 1.0, limit: int = 100_000) -> int:
    """The smallest shard count whose busiest GSI key stays under ``headroom`` times its
    limit at ``rate`` payments/s (strictly: a key at 100% is throttled at any burst).

    More shards never raise a key's share (tests/test_capacity.py holds it as a property), so
    the smallest fitting count is found by doubling and then halving the gap: about 2 log2 n
    models instead of n (a small table at a high rate needs thousands of shards)."""
    def fits(shards: int) -> bool:
        return max_gsi_share(subscriptions, shards, rate=rate, first_share=first_share, day_overrides=day_overrides,
                             sizes=sizes, reminder_moved=reminder_moved) < headroom

    if not fits(limit):
        raise ValueError(f"no shard count up to {limit} keeps {rate}/s under the partition limits")
    low, high = 0, 1  # no count up to low fits; high is the next to try
    while not fits(high):
        low, high = high, min(high * 2, limit)
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            high = middle
        else:
            low = middle
    return high


# --- output -----------------------------------------------------------------------------

def render(results: list[Result]) -> str:
    first = results[0]
    lines = [
        f"Peak day: {first.peak_payments:,} payments (day {first.peak_day} of a {first.peak_month_days}-day month), "
        f"of {first.subscriptions:,} subscriptions.",
        "Item sizes (bytes, estimated): " + ", ".join(f"{k} {v}" for k, v in first.item_sizes.items()),
        "Units per payment: " + ", ".join(f"{k} {v:g}" for k, v in first.units_per_payment.items()),
        f"Target {first.target_rate:,.0f} payments/s; gateway {first.latency_ms:g} ms, DynamoDB {first.ddb_ms:g} ms, "
        f"CPU {first.cpu_ms:g} ms per payment per process.",
        "",
    ]
    for r in results:
        lines.append(f"== {r.shards} shard(s) ==")
        lines.append(f"  {'hot key':<58} {'WCU/s':>9} {'RCU/s':>8} {'of limit':>9}")
        for p in r.partitions:
            flag = "  AT/OVER LIMIT" if p.share_of_limit >= 1 else ""
            lines.append(f"  {p.name:<58} {p.wcu:>9,.0f} {p.rcu:>8,.1f} {p.share_of_limit:>8.0%}{flag}")
        lines.append(f"  table total: {r.table_wcu:,.0f} WCU/s over many account partitions "
                     f"(default on-demand quota {TABLE_QUOTA:,})")
        lines.append(f"  hot GSI keys reach their limit at {r.partition_cap_rate:,.0f} payments/s")
        lines.append(f"  per process: {r.workers_per_process} workers -> {r.process_rate:,.0f} payments/s "
                     f"(limited by {r.process_limit})")
        lines.append(f"  fleet: {r.processes} process(es), {r.workers} workers -> {r.rate:,.0f} payments/s; "
                     f"peak day takes {r.wall_hours:.2f} h")
        lines.append(f"  binding limit: {r.binding}")
        if r.over_limit:
            lines.append("  at or over a limit: " + "; ".join(r.over_limit))
        lines.append(f"  smallest shard count under every partition limit at {r.target_rate:,.0f}/s: {r.min_shards}")
        lines.append("")
    return "\n".join(lines)


def parse_overrides(text: str | None) -> dict[int, float] | None:
    """``"1=0.3,15=0.2"`` -> {1: 0.3, 15: 0.2}."""
    if not text:
        return None
    pairs = (item.split("=", 1) for item in text.split(","))
    return {int(day): float(share) for day, share in pairs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscriptions", type=int, default=10_000_000)
    parser.add_argument("--shards", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--rate", type=float, default=2_000.0, help="target payments/s for the fleet")
    parser.add_argument("--first-share", type=float, default=1 / 3, help="share of subscriptions paying on the 1st")
    parser.add_argument("--day-shares", help='explicit shares per payment day, e.g. "1=0.3,15=0.2"; '
                        "the rest is spread over the other days (replaces --first-share)")
    parser.add_argument("--latency-ms", type=float, default=300.0, help="gateway time per charge")
    parser.add_argument("--cpu-ms", type=float, default=3.8, help="Python CPU per payment (docs/PERFORMANCE.md)")
    parser.add_argument("--ddb-ms", type=float, default=10.0, help="round trips of a payment's two requests")
    parser.add_argument("--workers", type=int, help="threads per process (default: enough for its CPU limit)")
    parser.add_argument("--processes", type=int, help="processes in the fleet (default: enough for --rate)")
    parser.add_argument("--receipt-bytes", type=int)
    parser.add_argument("--event-bytes", type=int)
    parser.add_argument("--subscription-bytes", type=int)
    parser.add_argument("--reminder-moved", action="store_true",
                        help="the reminder run already moved NextReminderDate (one GSI-1 write, not two)")
    parser.add_argument("--receipt-block", type=int, default=RECEIPT_NUMBER_BLOCK,
                        help="receipt numbers reserved per counter update (settings.RECEIPT_NUMBER_BLOCK)")
    parser.add_argument("--metered", type=float, default=0.0,
                        help="metered items billed per payment (usage: mark_billed and one Query each)")
    parser.add_argument("--headroom", type=float, default=1.0, help="share of a partition's limit to plan for")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    sizes = estimated_sizes()
    for key, value in (("receipt", args.receipt_bytes), ("audit_event", args.event_bytes),
                       ("subscription", args.subscription_bytes)):
        if value:
            sizes[key] = value
    results = [
        model(args.subscriptions, shards, rate=args.rate, first_share=args.first_share,
              day_overrides=parse_overrides(args.day_shares), latency_ms=args.latency_ms, cpu_ms=args.cpu_ms,
              ddb_ms=args.ddb_ms, workers_per_process=args.workers, processes=args.processes, sizes=sizes,
              reminder_moved=args.reminder_moved, headroom=args.headroom, receipt_block=args.receipt_block,
              metered=args.metered)
        for shards in args.shards
    ]
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2, default=str))
    else:
        print(render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
