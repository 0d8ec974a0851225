"""Receipt numbers: sequential per seller, year and series, taken by the receipt's own
transaction (no gaps: tests/billing/test_gapless_numbers.py), never reused; a receipt
found by its number with two GetItems; the payment batch's receipt e-mail carries the
number."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest
import time_machine
from django.core import mail
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from billing import access, batches
from billing.models import ReceiptCounter, ReceiptNumberLookup
from core.pages import today
from tests.builders import make_account, make_subscription, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)


@pytest.fixture(autouse=True)
def on_the_billing_day() -> Iterator[None]:
    """The tests bill on D and read the receipts back: on D, not on whatever day the suite
    runs (200 days after D the receipts would have expired and read as gone)."""
    with time_machine.travel(datetime(D.year, D.month, D.day, 12, tzinfo=UTC), tick=True):
        yield


def sequence(number: str) -> int:
    return int(number.rsplit("-", 1)[1])


def series_of(number: str) -> str:
    return number.split("-")[2]


def counter_value(year: int, series: str) -> int:
    key = ReceiptCounter.pk(year=year, series=series.removeprefix("S"))
    return int(ReceiptCounter.get(key, key).LastNumber)


def test_numbers_have_the_shape_and_the_pattern_checks_it() -> None:
    assert access.format_receipt_number(2026, 123, series=7) == "R-2026-S07-000123"
    assert access.format_receipt_number(2026, 12_345_678, series=15) == "R-2026-S15-12345678"
    assert access.is_receipt_number("R-2026-S07-000123") and access.is_receipt_number("R-2026-S99-999999999")
    # the numbers issued before the series stay valid
    assert access.format_receipt_number(2026, 123) == "R-2026-000123"
    assert access.is_receipt_number("R-2026-000123") and access.is_receipt_number("R-2026-999999999")
    for bad in ("R-2026-00012", "R-26-000123", "r-2026-000123", "R-2026-000123#", "R-2026-0001234567",
                "REC#2026-01-01", " R-2026-000123", "R-2026-000123\n", "", "R-2026-S7-000123",
                "R-2026-S007-000123", "R-2026-s07-000123", "R-2026-S07-00012", "R-2026-S07000123",
                "R-2026-S07-000123\n", "R-2026-SXX-000123"):
        assert not access.is_receipt_number(bad), bad


@given(st.integers(min_value=1, max_value=999_999_999), st.integers(min_value=1000, max_value=9999),
       st.one_of(st.none(), st.integers(min_value=0, max_value=99)))
@hypothesis_settings(max_examples=200)
def test_every_number_a_series_can_give_matches_the_pattern(seq: int, year: int, series: int | None) -> None:
    assert access.is_receipt_number(access.format_receipt_number(year, seq, series=series))


def receipt_of(sub, day: date, charge: str, numbers: access.ReceiptNumbers | None = None, **more):
    return access.create_receipt(sub, billing_date=day, amount=999, currency="USD", charge_id=charge,
                                 retention_days=200, numbers=numbers, **more)


def test_a_thread_numbers_its_receipts_with_no_request_of_their_own(table, ddb_requests) -> None:
    numbers = access.ReceiptNumbers()
    sub = make_subscription(make_account())
    ddb_requests.reset()
    got = [receipt_of(sub, date(2027, month, 15), f"ch{month}", numbers)[0].Number for month in range(1, 6)]
    # the counter moves inside each receipt's transaction: no UpdateItem, no read of it
    assert Counter(ddb_requests.ops)["TransactWriteItems"] == 5 and "UpdateItem" not in ddb_requests.ops
    [series] = {series_of(n) for n in got}  # one thread keeps its series
    assert got == [f"R-2027-{series}-{n:06d}" for n in range(1, 6)]
    assert counter_value(2027, series) == 5
    # each year has its own counters
    later = receipt_of(sub, date(2028, 1, 15), "ch2028", processed_at=datetime(2028, 1, 15, 12, tzinfo=UTC))[0]
    assert later.Number.startswith("R-2028-") and later.Number.endswith("-000001")


def test_the_counter_refuses_to_pass_the_largest_number(table, settings) -> None:
    settings.RECEIPT_NUMBER_SERIES = 1
    key = ReceiptCounter.pk(year=2027, series="00")
    ReceiptCounter(key, key, LastNumber=999_999_998).save()
    sub = make_subscription(make_account())
    numbers = access.ReceiptNumbers()
    assert receipt_of(sub, date(2027, 1, 15), "ch1", numbers)[0].Number == "R-2027-S00-999999999"
    assert counter_value(2027, "S00") == 999_999_999
    with pytest.raises(access.ConditionFailed):
        receipt_of(sub, date(2027, 2, 15), "ch2", numbers)
    assert counter_value(2027, "S00") == 999_999_999


def test_a_retried_receipt_keeps_its_number_and_takes_none(table) -> None:
    sub = make_subscription(make_account())
    first, created = access.create_receipt(sub, billing_date=D, amount=999, currency="USD", charge_id="ch",
                                           retention_days=200)
    assert created and access.is_receipt_number(first.Number)
    again, created = access.create_receipt(sub, billing_date=D, amount=999, currency="USD", charge_id="ch",
                                           retention_days=200)
    assert not created and again.Number is None
    [stored] = receipts_of(sub)
    assert stored.Number == first.Number
    later, _ = access.create_receipt(sub, billing_date=date(2027, 4, 15), amount=999, currency="USD",
                                     charge_id="ch2", retention_days=200)
    # the retry's transaction was refused whole, its number with it: the next one follows
    assert series_of(later.Number) == series_of(first.Number)
    assert sequence(later.Number) == sequence(first.Number) + 1


def test_a_number_already_taken_is_refused_and_nothing_is_written(table, settings) -> None:
    """A counter behind its look-up items (a restored table) never gives a number twice."""
    settings.RECEIPT_NUMBER_SERIES = 1  # the series the counter goes back in is the one drawn from
    account = make_account()
    sub = make_subscription(account)
    first, _ = access.create_receipt(sub, billing_date=D, amount=999, currency="USD", charge_id="ch",
                                     retention_days=200)
    year = int(first.Number.split("-")[1])
    key = ReceiptCounter.pk(year=year, series="00")
    ReceiptCounter(key, key, LastNumber=0).save()  # the counter goes back
    with pytest.raises(access.ReceiptNumberTaken, match=f"^{first.Number}$"):  # the number it refused
        access.create_receipt(sub, billing_date=date(2027, 4, 15), amount=999, currency="USD", charge_id="ch2",
                              retention_days=200)
    assert [r.Number for r in receipts_of(sub)] == [first.Number]
    lookup = ReceiptNumberLookup.get(ReceiptNumberLookup.pk(number=first.Number),
                                     ReceiptNumberLookup.sk(number=first.Number))
    assert lookup.ReceiptSK == first.SK
    assert lookup.TTL == first.TTL and lookup.TTL is not None  # the look-up expires with its receipt


def test_a_receipt_is_found_by_its_number_in_two_getitems_and_only_by_its_account(table, ddb_requests) -> None:
    account, other = make_account(), make_account("bob@example.com")
    sub = make_subscription(account)
    receipt, _ = access.create_receipt(sub, billing_date=today(), amount=999, currency="USD", charge_id="ch",
                                       retention_days=200)
    ddb_requests.reset()
    found = access.get_receipt_by_number(account.account_id, receipt.Number)
    assert ddb_requests.ops == ["GetItem", "GetItem"]
    assert found is not None and found.SK == receipt.SK
    assert access.get_receipt_by_number(other.account_id, receipt.Number) is None
    ddb_requests.reset()
    for bad in ("R-2026-1", "REC#x", "R-2026-000001#SKU", "x" * 5000, "R-2026-000001\x00"):
        assert access.get_receipt_by_number(account.account_id, bad) is None
    assert ddb_requests.ops == []  # checked by the pattern before any key is built


def test_a_payment_run_numbers_without_gaps_and_mails_each_number(table, ddb_requests) -> None:
    subs = seed_due(10, due=D)
    ddb_requests.reset()
    summary = batches.run_payments(run_date=D, workers=3, catch_up_days=0)
    assert summary.counts["paid"] == 10
    ops = ddb_requests.by_name()
    # per payment: one transaction (number, receipt, event, number look-up) and one
    # advance; the run: its record (PutItem + UpdateItem), and no counter update of its own
    assert ops["TransactWriteItems"] == 10 and ops["UpdateItem"] == 10 + 1
    numbers = [r.Number for sub in subs for r in receipts_of(sub)]
    year = numbers[0].split("-")[1]
    per_series = Counter(series_of(n) for n in numbers)
    for series, count in per_series.items():  # each worker's series: 1..n, no gap
        assert sorted(sequence(n) for n in numbers if series_of(n) == series) == list(range(1, count + 1))
        assert counter_value(int(year), series) == count
    by_recipient = {m.to[0]: m for m in mail.outbox}
    for sub in subs:
        [receipt] = receipts_of(sub)
        message = by_recipient[sub.Email]
        assert receipt.Number in message.subject and receipt.Number in message.body
        assert f"/receipts/{receipt.Number}/" in message.body
        assert receipt.Number in message.alternatives[0][0]
