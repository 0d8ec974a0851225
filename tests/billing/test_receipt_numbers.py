"""Receipt numbers: sequential per seller and year, reserved in blocks by one
counter update, never reused; a receipt found by its number with two GetItems; the
payment batch's receipt e-mail carries the number."""

from __future__ import annotations

import threading
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


def counter_value(year: int) -> int:
    key = ReceiptCounter.pk(year=year)
    return int(ReceiptCounter.get(key, key).LastNumber)


def test_numbers_have_the_shape_and_the_pattern_checks_it() -> None:
    assert access.format_receipt_number(2026, 123) == "R-2026-000123"
    assert access.format_receipt_number(2026, 12_345_678) == "R-2026-12345678"
    assert access.is_receipt_number("R-2026-000123") and access.is_receipt_number("R-2026-999999999")
    for bad in ("R-2026-00012", "R-26-000123", "r-2026-000123", "R-2026-000123#", "R-2026-0001234567",
                "REC#2026-01-01", " R-2026-000123", "R-2026-000123\n", ""):
        assert not access.is_receipt_number(bad), bad


@given(st.integers(min_value=1, max_value=999_999_999), st.integers(min_value=1000, max_value=9999))
@hypothesis_settings(max_examples=200)
def test_every_number_the_counter_can_give_matches_the_pattern(seq: int, year: int) -> None:
    assert access.is_receipt_number(access.format_receipt_number(year, seq))


def test_a_block_is_one_update_and_numbers_follow_each_other(table, ddb_requests) -> None:
    numbers = access.ReceiptNumbers(block_size=5)
    ddb_requests.reset()
    got = [numbers.next_number(2027) for _ in range(5)]
    assert ddb_requests.ops == ["UpdateItem"]  # one reservation for five numbers
    assert got == [f"R-2027-{n:06d}" for n in range(1, 6)]
    ddb_requests.reset()
    assert numbers.next_number(2027) == "R-2027-000006"  # the next block
    assert ddb_requests.ops == ["UpdateItem"]
    assert counter_value(2027) == 10
    # another process's block starts after this one's: the rest of ours (7..10) is never
    # handed out by anyone else
    assert access.ReceiptNumbers(block_size=3).next_number(2027) == "R-2027-000011"
    assert numbers.next_number(2027) == "R-2027-000007"
    # each year has its own counter
    assert numbers.next_number(2028) == "R-2028-000001"


def test_threads_and_allocators_never_share_a_number(local_table) -> None:
    """Four allocators (four processes' worth) with four threads each, all at once, on
    DynamoDB Local (moto serializes an UpdateItem's answer after releasing the item, so
    under threads it can return another request's value: a moto race, not DynamoDB's)."""
    allocators = [access.ReceiptNumbers(block_size=7) for _ in range(4)]
    got: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(16)

    def draw(numbers: access.ReceiptNumbers) -> None:
        barrier.wait()
        mine = [numbers.next_number(2027) for _ in range(10)]
        with lock:
            got.extend(mine)

    threads = [threading.Thread(target=draw, args=(allocators[n % 4],)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 160 and len(set(got)) == 160
    # reserved in whole blocks of 7: at most one part-used block per allocator
    assert 160 <= counter_value(2027) <= 160 + 4 * 7 and counter_value(2027) % 7 == 0


def test_the_counter_refuses_to_pass_the_largest_number(table) -> None:
    key = ReceiptCounter.pk(year=2027)
    ReceiptCounter(key, key, LastNumber=999_999_998).save()
    with pytest.raises(access.ConditionFailed):
        access.reserve_receipt_numbers(2027, 2)
    assert access.ReceiptNumbers().next_number(2027) == "R-2027-999999999"
    assert counter_value(2027) == 999_999_999


def test_a_retried_receipt_keeps_its_number_and_the_drawn_one_is_a_gap(table) -> None:
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
    assert sequence(later.Number) == sequence(first.Number) + 2  # the retry's number is skipped, not reused


def test_a_number_already_taken_is_refused_and_nothing_is_written(table) -> None:
    """A counter behind its look-up items (a restored table) never gives a number twice."""
    account = make_account()
    sub = make_subscription(account)
    first, _ = access.create_receipt(sub, billing_date=D, amount=999, currency="USD", charge_id="ch",
                                     retention_days=200)
    year = int(first.Number.split("-")[1])
    key = ReceiptCounter.pk(year=year)
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


def test_a_payment_run_reserves_blocks_and_mails_each_number(table, settings, ddb_requests) -> None:
    settings.RECEIPT_NUMBER_BLOCK = 4
    subs = seed_due(10, due=D)
    ddb_requests.reset()
    summary = batches.run_payments(run_date=D, workers=3, catch_up_days=0)
    assert summary.counts["paid"] == 10
    ops = ddb_requests.by_name()
    # per payment: one transaction (receipt, event, number look-up) and one advance; the
    # run: its record (PutItem + UpdateItem) and ceil(10 / 4) = 3 number reservations
    assert ops["TransactWriteItems"] == 10 and ops["UpdateItem"] == 10 + 1 + 3
    numbers = sorted(r.Number for sub in subs for r in receipts_of(sub))
    year = numbers[0].split("-")[1]
    assert numbers == [f"R-{year}-{n:06d}" for n in range(1, 11)]  # one process: no gap inside
    assert counter_value(int(year)) == 12  # the last block's unused two are a gap
    by_recipient = {m.to[0]: m for m in mail.outbox}
    for sub in subs:
        [receipt] = receipts_of(sub)
        message = by_recipient[sub.Email]
        assert receipt.Number in message.subject and receipt.Number in message.body
        assert f"/receipts/{receipt.Number}/" in message.body
        assert receipt.Number in message.alternatives[0][0]
