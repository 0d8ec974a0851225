"""Receipt and credit note numbers without gaps (billing/access/receipt_numbers.py): each
series runs 1..n, and a number exists exactly when its document does, whatever happened
between the draw and the write: a payment retried after its receipt was written, a write
that died after its number was drawn, several writers on one series, a worker SIGKILLed
mid-run (docs/TAX.md, "Numbers without gaps")."""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
import time_machine
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from billing import access
from billing.access import receipts as receipts_module
from billing.models import (
    BillingItem,
    CreditNote,
    CreditNoteCounter,
    Receipt,
    ReceiptCounter,
    ReceiptNumberLookup,
)
from tests.builders import make_account, make_subscription
from tests.machines import own_table

pytestmark = pytest.mark.django_db(databases=[])

ROOT = Path(__file__).resolve().parents[2]
NOON = datetime(2027, 3, 15, 12, tzinfo=UTC)
# ``R-2027-S01-000004`` (a series) or ``R-2027-000004`` (one counter): the series is "".
NUMBER = re.compile(r"(?P<kind>R|CN)-(?P<year>[0-9]{4})-(?:(?P<series>S[0-9]{2})-)?(?P<seq>[0-9]{6,9})")


def series_of_all(numbers: list[str]) -> dict[tuple[str, str, str], list[int]]:
    """(kind, year, series) -> the sequence numbers issued in it, sorted."""
    found: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for number in numbers:
        match = NUMBER.fullmatch(number)
        assert match, number
        found[match["kind"], match["year"], match["series"] or ""].append(int(match["seq"]))
    return {key: sorted(seqs) for key, seqs in found.items()}


def assert_unbroken(numbers: list[str]) -> None:
    """Every series holds 1..n: no gap, no repeat."""
    for key, seqs in series_of_all(numbers).items():
        assert seqs == list(range(1, len(seqs) + 1)), (key, seqs)


def stored_documents() -> tuple[list[Receipt], list[CreditNote]]:
    """Every receipt and credit note in the table (a Scan: the test's own check)."""
    items = list(BillingItem.scan(consistent_read=True))
    return [i for i in items if isinstance(i, Receipt)], [i for i in items if isinstance(i, CreditNote)]


def assert_numbers_exist_exactly_with_their_documents() -> None:
    receipts, notes = stored_documents()
    numbers = [r.Number for r in receipts] + [n.Number for n in notes]
    assert all(numbers) and len(set(numbers)) == len(numbers)
    assert_unbroken(numbers)
    # each series' counter stands at its last document: no number taken without one
    for (kind, year, series), seqs in series_of_all(numbers).items():
        model = ReceiptCounter if kind == "R" else CreditNoteCounter
        key = model.pk(year=int(year), series=series.removeprefix("S"))
        assert int(model.get(key, key, consistent_read=True).LastNumber) == len(seqs), (kind, year, series)
    for receipt in receipts:  # the look-up item of each number names its receipt
        lookup = ReceiptNumberLookup.get(ReceiptNumberLookup.pk(number=receipt.Number),
                                         ReceiptNumberLookup.sk(number=receipt.Number))
        assert lookup.ReceiptSK == receipt.SK


class Boom(RuntimeError):
    """A write that dies after its number was drawn (the process stopped, an outage)."""


STEPS = st.lists(st.tuples(
    st.sampled_from(["pay", "retry", "die", "refund", "refund_again"]),
    st.integers(min_value=0, max_value=2),  # which writer (a run's numbers, or the process's)
    st.integers(min_value=0, max_value=3),  # which subscription
), min_size=1, max_size=30)


@given(steps=STEPS, series=st.integers(min_value=1, max_value=3))
@hypothesis_settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_over_any_interleaving_each_series_runs_one_to_n(moto_table, tmp_path, settings, steps, series) -> None:
    """Successful payments, retried ones (their receipt is there), ones that die after the
    number was drawn, refunds (a credit note each) and refunds retried, from three writers
    (two runs' numbers and the process's) whose memories of the counters go stale."""
    own_table("rpay_gapless", str(tmp_path))
    settings.RECEIPT_NUMBER_SERIES = series
    with time_machine.travel(NOON, tick=False):
        subs = [make_subscription(make_account(f"p{n}@example.com")) for n in range(4)]
        writers = [access.ReceiptNumbers(), access.ReceiptNumbers(), None]
        months = [0] * len(subs)  # the next period each subscription pays
        paid: list[list[Receipt]] = [[] for _ in subs]
        for n, (step, writer, which) in enumerate(steps):
            sub, numbers = subs[which], writers[writer]
            if step in ("pay", "retry", "die"):
                if step == "retry" and months[which]:
                    months[which] -= 1  # the same period again: its receipt is there
                billed = date(2027, 1 + months[which] % 12, 1) + timedelta(days=months[which] // 12)
                if step == "die":
                    real = receipts_module.receipt_events

                    def dying(receipt):
                        raise Boom(receipt.Number)

                    receipts_module.receipt_events = dying
                try:
                    receipt, created = access.create_receipt(
                        sub, billing_date=billed, amount=1000, currency="USD", charge_id=f"ch{n}",
                        retention_days=400, numbers=numbers)
                except Boom:
                    continue
                finally:
                    if step == "die":
                        receipts_module.receipt_events = real
                months[which] += 1
                if created:
                    paid[which].append(receipt)
            elif paid[which]:
                receipt = access.get_receipt(sub.account_id, paid[which][-1].SK)
                refund_id = f"re{n}" if step == "refund" else f"re{n - 1}"
                if (receipt.RefundedAmount or 0) < receipt.ProcessedAmount:
                    access.record_refund(receipt, refund_id=refund_id, amount=1, actor="staff:ann")
    assert_numbers_exist_exactly_with_their_documents()


def write_receipts(numbers: access.ReceiptNumbers | None, sub, days: list[date], out: list[str]) -> None:
    for day in days:
        receipt, created = access.create_receipt(sub, billing_date=day, amount=999, currency="USD",
                                                 charge_id=f"ch-{sub.sub_id}-{day}", retention_days=400,
                                                 numbers=numbers)
        if created:
            out.append(receipt.Number)


@pytest.mark.local_engine
def test_writers_at_once_on_few_series_leave_every_series_unbroken(local_table, settings) -> None:
    """Eight threads on DynamoDB Local, on three series: two runs' numbers shared by three
    threads each, and two threads on the process's; each thread writes the same periods
    twice over (a retry finds its receipt and takes no number)."""
    settings.RECEIPT_NUMBER_SERIES = 3
    runs = [access.ReceiptNumbers(), access.ReceiptNumbers()]
    writers = [runs[0]] * 3 + [runs[1]] * 3 + [None, None]
    subs = [make_subscription(make_account(f"t{n}@example.com")) for n in range(len(writers))]
    days = [date(2027, 1, 1) + timedelta(days=d) for d in range(12)]
    written: list[list[str]] = [[] for _ in writers]
    barrier = threading.Barrier(len(writers))
    errors: list[BaseException] = []

    def work(n: int) -> None:
        barrier.wait()
        try:
            write_receipts(writers[n], subs[n], days + days, written[n])
        except BaseException as error:  # noqa: BLE001 - failed in the test's thread below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(writers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    numbers = [number for mine in written for number in mine]
    assert len(numbers) == len(writers) * len(days) == len(set(numbers))
    assert_numbers_exist_exactly_with_their_documents()


CHILD = """
import os, sys, threading
from datetime import date, timedelta
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rpay_site.settings")
django.setup()
from billing import access
from tests.builders import make_account, make_subscription

numbers = access.ReceiptNumbers()
subs = [make_subscription(make_account(f"k{n}@example.com")) for n in range(4)]
print("ready", flush=True)

def work(sub, numbers):
    for d in range(100000):
        access.create_receipt(sub, billing_date=date(2030, 1, 1) + timedelta(days=d), amount=999,
                              currency="USD", charge_id=f"k-{sub.sub_id}-{d}", retention_days=400,
                              numbers=numbers)

threads = [threading.Thread(target=work, args=(sub, numbers if n % 2 else None)) for n, sub in enumerate(subs)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
"""


def numbers_taken(year: int, series: int) -> int:
    total = 0
    for s in range(series):
        key = ReceiptCounter.pk(year=year, series=f"{s:02d}")
        with contextlib.suppress(ReceiptCounter.DoesNotExist):
            total += int(ReceiptCounter.get(key, key, consistent_read=True).LastNumber)
    return total


@pytest.mark.local_engine
def test_a_worker_killed_mid_run_leaves_no_gap(local_table, settings) -> None:
    """A process writing receipts from four threads is SIGKILLed while it writes (its
    transactions in flight die with it, and so do the numbers they drew); writers here go
    on, on the same series; every series is unbroken."""
    settings.RECEIPT_NUMBER_SERIES = 2
    env = {**os.environ, "DYNAMODB_TABLE": settings.DYNAMODB_TABLE, "DYNAMODB_ENDPOINT": settings.DYNAMODB_ENDPOINT,
           "DYNAMODB_MAX_RETRY_ATTEMPTS": "1", "RECEIPT_NUMBER_SERIES": "2",
           "PAYMENT_GATEWAY_LEDGER": os.path.join(tempfile.gettempdir(), f"gapless-{os.getpid()}.sqlite3")}
    child = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    year = datetime.now(UTC).year
    try:
        deadline = time.monotonic() + 120
        while numbers_taken(year, 2) < 30:
            assert child.poll() is None, child.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the child wrote nothing"
            time.sleep(0.05)
        time.sleep(random.uniform(0.0, 0.2))  # anywhere in its stream of writes
        child.send_signal(signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(30)
    assert child.returncode == -signal.SIGKILL
    # writers here carry on, on the series the dead process was writing
    subs = [make_subscription(make_account(f"a{n}@example.com")) for n in range(3)]
    days = [date(2031, 1, 1) + timedelta(days=d) for d in range(5)]
    written: list[str] = []
    threads = [threading.Thread(target=write_receipts, args=(access.ReceiptNumbers(), sub, days, written))
               for sub in subs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(written) == 15
    assert_numbers_exist_exactly_with_their_documents()


class OutrunSeries(access.ReceiptNumbers):
    """Numbers whose first series drawn is always taken by a faster writer just before
    this one's write: the other run of two at once, on the same series."""

    def __init__(self) -> None:
        super().__init__()
        self.busy: int | None = None
        self.draws = 0

    def draw(self, year: int):
        drawn = super().draw(year)
        self.draws += 1
        if self.busy is None:
            self.busy = drawn.series
        if drawn.series == self.busy:
            key = ReceiptCounter.pk(year=year, series=f"{drawn.series:02d}")
            ReceiptCounter(key, key).update(actions=[ReceiptCounter.LastNumber.add(1),
                                                     ReceiptCounter.EntityType.set(ReceiptCounter)])
        return drawn


def test_a_receipt_another_run_wrote_is_found_even_when_its_series_is_outrun(table, settings) -> None:
    """Two runs at once pay one subscription: the second finds the first's receipt (its
    own condition refused) while the other run keeps taking numbers on its series (the
    counter refused too). It moves to another series and comes back with the receipt in
    a few attempts, not forty refusals and SeriesBusy."""
    settings.RECEIPT_NUMBER_SERIES = 16
    with time_machine.travel(NOON, tick=False):
        sub = make_subscription(make_account("outrun@example.com"))
        numbers = OutrunSeries()
        charge = {"billing_date": date(2027, 3, 15), "amount": 1000, "currency": "USD",
                  "charge_id": "ch-outrun", "retention_days": 400}
        first, created = access.create_receipt(sub, numbers=numbers, **charge)
        assert created
        numbers.busy, numbers.draws = None, 0  # the series this thread is on now is outrun
        again, created = access.create_receipt(sub, numbers=numbers, **charge)
    assert not created and again.SK == first.SK
    assert numbers.draws <= 6
