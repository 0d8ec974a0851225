"""The invoice lines of a receipt with usage, field by field (billing/access/receipts.py
``_itemise_usage``): what a mutation run found no test pinning. The fixed fee's line keeps
its days and its seats beside the usage's lines; the usage's lines run from the usage's
first day to the day before its end (exclusive); a charge recorded without its pricing
(a webhook's) has one usage line with no unit; a period with no usage keeps the whole
amount on the fixed fee's line. And a refund of a receipt written before the tax invoices
makes no credit note (``_write_refund``), and a refund recorded from a copy read before
another refund reads the receipt again and adds to it (``record_refund``); a renewal of several
seats names them in its charge and its receipt's fee line (``take_payment``, ``_paid``); a
charge recorded without a discount in its metadata is a receipt of none, and one without its
tax is taxed for its buyer (``_paid``)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from billing import access, batches
from billing.access.receipts import build_receipt
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import CreditNote, MeterAggregation, Receipt
from billing.operations import payments
from billing.operations.metered import priced_usage
from billing.rules.seat_lines import LineSeats
from billing.rules.tax import tax_line
from billing.rules.usage_metadata import usage_metadata
from core.payments.gateway import get_gateway
from tests.billing.test_payment_paths import charge_for
from tests.billing.test_seats import at, team
from tests.billing.test_tax_documents import CUSTOMER_ADDRESS, ITALY, SELLER_ADDRESS, SELLER_NAME
from tests.billing.test_usage_invoice_lines import DAY, GRADUATED, RATE
from tests.builders import TEST_CARD, fresh, paid_receipt, receipts_of, seed_due

pytestmark = pytest.mark.django_db

USED_FROM = date(2027, 2, 15)


def _receipt(customer, calls: int, *, seats: LineSeats | None = None, priced: bool = True):
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "EUR")
    price = price_actions.add_price("API", GRADUATED, actor="test", meter="api_calls", unit_label="call")
    sub = access.create_subscription(
        access.get_account(customer.account_id), sku="API", payment_day=15, amount=4995, currency="EUR",
        card=TEST_CARD, today=DAY, reminder_days_before=7, product_name="Developer API",
        billing_address=CUSTOMER_ADDRESS)
    usage = priced_usage(price, USED_FROM, DAY, calls)
    line = tax_line(4995 + usage.amount, RATE, prices_include_tax=True)
    tax = access.InvoiceTax(line=line, prices_include_tax=True,
                            seller=access.InvoiceSeller(ITALY, SELLER_NAME, SELLER_ADDRESS),
                            buyer_country="IT", buyer_vat_number=None)
    receipt, _, _ = build_receipt(sub, number="R-2027-000001", billing_date=DAY, amount=line.gross, currency="EUR",
                                  charge_id="ch_usage", retention_days=200, period_end=DAY + timedelta(days=30),
                                  tax=tax, usage=usage_metadata((usage,)), priced=(usage,) if priced else (), seats=seats)
    return receipt


def test_the_fixed_fee_s_line_keeps_its_days_and_seats_beside_the_usage(customer) -> None:
    receipt = _receipt(customer, 1235, seats=LineSeats(5, 999))
    fixed, *used = receipt.TaxLines
    assert (fixed.Description, fixed.PeriodStart, fixed.PeriodEnd) == ("Developer API", "2027-03-15", "2027-04-14")
    assert (fixed.Quantity, fixed.SeatPrice, fixed.Gross) == (5, 999, 4995)
    assert [(u.PeriodStart, u.PeriodEnd, u.UnitLabel, u.UsageUnits) for u in used] == [
        ("2027-02-15", "2027-03-14", "call", 1000), ("2027-02-15", "2027-03-14", "call", 235)]
    assert sum(int(u.Gross) for u in used) == 547  # 235 calls at 0.2 cents (47) plus the tier's 5.00


def test_a_charge_recorded_without_its_pricing_has_one_usage_line_without_a_unit(customer) -> None:
    receipt = _receipt(customer, 1235, priced=False)
    fixed, used = receipt.TaxLines
    assert (fixed.PeriodStart, fixed.PeriodEnd, fixed.Quantity) == ("2027-03-15", "2027-04-14", None)
    assert (used.Description, used.PeriodStart, used.PeriodEnd) == ("api_calls × 1235", "2027-02-15", "2027-03-14")
    assert (used.UnitLabel, used.UsageUnits, int(used.Gross)) == (None, None, 547)


def test_a_period_without_usage_keeps_the_whole_amount_on_the_fixed_fee(customer) -> None:
    receipt = _receipt(customer, 0)
    assert receipt.UsageAmount == 0
    fixed, *used = receipt.TaxLines
    assert int(fixed.Gross) == 4995 and int(receipt.TaxLines[0].Gross) == int(receipt.ProcessedAmount)
    assert all(int(u.Gross) == 0 and int(u.Net) == 0 for u in used)


def test_a_refund_of_a_receipt_written_before_its_tax_makes_no_credit_note(table) -> None:
    """A receipt of before the tax invoices (no ``Net``) is corrected by its refund alone:
    recorded, with no credit note."""
    receipt = paid_receipt()
    Receipt.get(receipt.PK, receipt.SK).update(actions=[Receipt.Net.remove()])
    old = access.get_receipt(receipt.account_id, receipt.SK)
    assert old is not None and old.Net is None
    done, added = access.record_refund(old, refund_id="re_old", amount=100, actor="staff")
    assert added and done.RefundedAmount == 100
    stored = access.get_receipt(receipt.account_id, receipt.SK)
    assert [(r.RefundId, r.CreditNoteNumber) for r in stored.Refunds] == [("re_old", None)]
    assert list(CreditNote.scan()) == []


# --- a receipt recorded on its own (create_receipt) ---------------------------------------


def test_a_receipt_recorded_without_its_tax_is_taxed_for_its_buyer_on_its_processing_day(moto_table,
                                                                                      monkeypatch) -> None:
    """Without the charge's tax, the receipt's is the one included in its amount at the
    buyer's rate (Finland's, by the OSS) on the day it was processed: 24 % on 31 August 2024,
    25.5 % since 1 September 2024, whatever the day it is recorded."""
    from datetime import UTC, datetime

    import time_machine

    from tests.billing.test_tax_ledger import due, use_seller

    use_seller(monkeypatch)
    sub = due(0, country="FI", amount=1255)
    access.batch_items([sub])
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        then, _ = access.create_receipt(sub, billing_date=date(2024, 8, 31), amount=1255, currency="EUR",
                                        charge_id="ch_then", retention_days=2000,
                                        processed_at=datetime(2024, 8, 31, 12, tzinfo=UTC))
        now, _ = access.create_receipt(sub, billing_date=date(2027, 3, 15), amount=1255, currency="EUR",
                                       charge_id="ch_now", retention_days=2000)
    assert (then.TaxCountry, then.TaxRate, then.Tax) == ("FI", "24", 243)
    assert (now.TaxCountry, now.TaxRate, now.Tax) == ("FI", "25.5", 255)


def test_a_number_whose_look_up_is_there_while_its_counter_is_not_is_drawn_again_then_refused(
        moto_table, settings, ddb_requests) -> None:
    """Another writer's look-up item of the number drawn, its counter's move not seen yet (a
    store whose transactions are not isolated from reads): the write is tried again, four
    times in all, before the number is said taken."""
    from datetime import UTC, datetime

    from billing.exceptions import ReceiptNumberTaken
    from billing.models import ReceiptNumberLookup
    from tests.builders import make_account, make_subscription

    settings.RECEIPT_NUMBER_SERIES = 1
    sub = make_subscription(make_account("taken@example.com"))
    number = "R-2027-S00-000001"  # the first number of the one series, as a first draw takes it
    ReceiptNumberLookup(ReceiptNumberLookup.pk(number=number), ReceiptNumberLookup.sk(number=number),
                        AccountId="other", ReceiptSK="REC#other").save()
    ddb_requests.reset()
    with pytest.raises(ReceiptNumberTaken):
        access.create_receipt(sub, billing_date=date(2027, 3, 15), amount=999, currency="USD", charge_id="ch_x",
                              retention_days=200, processed_at=datetime(2027, 3, 15, 12, tzinfo=UTC),
                              numbers=access.ReceiptNumbers())
    assert ddb_requests.by_name()["TransactWriteItems"] == 4


def test_a_write_refused_without_its_reasons_is_raised_as_it_came(moto_table, monkeypatch) -> None:
    """A transaction error that names no item (a validation error, an outage after its
    retries) is neither "the receipt is there" nor "the number is taken": it goes up as it
    came."""
    from pynamodb.exceptions import TransactWriteError

    from billing.access import receipts
    from tests.builders import make_account, make_subscription

    sub = make_subscription(make_account("noreasons@example.com"))

    def refused(*args, **kwargs):
        raise TransactWriteError("Failed to write transaction items")

    monkeypatch.setattr(receipts, "write_numbered", refused)
    with pytest.raises(TransactWriteError):
        access.create_receipt(sub, billing_date=date(2027, 3, 15), amount=999, currency="USD", charge_id="ch_y",
                              retention_days=200)


def test_a_refund_recorded_from_a_copy_read_before_another_refund_adds_to_it(moto_table) -> None:
    # Two staff members refund one receipt at once: the second write, refused on the
    # refunded amount its copy holds, reads the receipt again and adds its refund to the
    # first (``record_refund``'s re-read: of that account's receipt).
    receipt = paid_receipt()
    stale = access.get_receipt(receipt.account_id, receipt.SK)
    access.record_refund(receipt, refund_id="re_first", amount=100, actor="staff:ann")
    after, added = access.record_refund(stale, refund_id="re_second", amount=200, actor="staff:bob")
    assert added and after.RefundedAmount == 300
    assert [r.RefundId for r in after.Refunds] == ["re_first", "re_second"]
    stored = access.get_receipt(receipt.account_id, receipt.SK)
    assert (stored.RefundedAmount, [r.RefundId for r in stored.Refunds]) == (300, ["re_first", "re_second"])


def test_a_renewal_of_several_seats_names_them_in_its_charge(table) -> None:
    # The period's charge carries its seats (``take_payment``'s metadata), so a receipt
    # recorded from the charge alone (the reconciliation's) names them as the run's does.
    sub = team(5, email="renewal-seats@example.com")
    with at(date(2027, 4, 10)):
        assert batches.run_payments(run_date=date(2027, 4, 10), workers=1).counts["paid"] == 1
    [renewal] = [c for c in get_gateway().charges_made(sub_id=sub.sub_id)
                 if c["metadata"].get("period_start") == "2027-04-10" and not c["metadata"].get("kind")]
    assert (renewal["amount"], renewal["metadata"]["quantity"], renewal["metadata"]["unit_amount"]) == (5000, "5", "1000")
    # and its receipt's fee line names them (``_paid`` reads them from the charge)
    [receipt] = [r for r in receipts_of(sub) if r.ChargeId == renewal["charge_id"]]
    assert (int(receipt.TaxLines[0].Quantity), int(receipt.TaxLines[0].SeatPrice)) == (5, 1000)


def test_a_charge_recorded_without_a_discount_in_its_metadata_has_none(moto_table) -> None:
    # A charge found by the reconciliation that names no discount (made before discounts
    # were carried, or by another path) is a receipt of no discount, not of one minor unit.
    [sub] = seed_due(1, due=DAY)
    result = charge_for(sub, start=DAY, end=DAY + timedelta(days=30))
    assert "discount" not in result.metadata
    payments.record_paid_charge(fresh(sub), result, run_date=DAY)
    [receipt] = receipts_of(sub)
    assert (int(receipt.DiscountAmount or 0), receipt.CouponCode, int(receipt.ProcessedAmount)) == (0, None, 999)


def test_a_charge_recorded_without_its_tax_is_taxed_for_its_buyer(moto_table, monkeypatch) -> None:
    # A charge the reconciliation finds without tax figures (made by another path) is
    # taxed as included in its amount at its buyer's rate: the subscription's buyer, in
    # Finland, not the seller's country.
    from tests.billing.test_tax_ledger import D as ledger_day
    from tests.billing.test_tax_ledger import due, use_seller

    use_seller(monkeypatch)
    sub = due(0, country="FI", amount=1255)
    access.batch_items([sub])
    metadata = {"account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU,
                "period_start": ledger_day.isoformat(), "period_end": (ledger_day + timedelta(days=30)).isoformat()}
    result = get_gateway().charge(sub.PaymentDetails.Token, 1255, "EUR", f"{sub.sub_id}:found", metadata)
    with at(ledger_day):
        payments.record_paid_charge(fresh(sub), result, run_date=ledger_day)
    [receipt] = receipts_of(sub)
    assert (receipt.TaxCountry, receipt.BuyerCountry) == ("FI", "FI")
