"""The tax ledger: the payment run writes each invoice's tax (an Italian seller selling to an
Italian consumer, a German consumer through the OSS, a German business reverse charged, a
US consumer not subject, tax-exclusive prices, a 0- and a 3-decimal currency) and adds it
to the quarter's totals in the payment's own transaction (still two requests a payment);
every refund path issues a credit note, whose figures sum exactly to the invoice when it
is refunded in full; and concurrent payments and refunds leave the totals exact.
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from types import SimpleNamespace

import pytest
import time_machine
from hypothesis import given
from hypothesis import strategies as st

from billing import access, batches
from billing.access import seller as seller_access
from billing.access.tax_ledger import buyer_name, quarter_of_moment
from billing.models import Account, TaxTotal
from billing.operations import payments, refunds
from billing.rules.invoice_tax import TOTAL_SHARDS, rate_text, refund_share, total_shard
from billing.rules.oss_euro import oss_return
from core.payments.gateway import get_gateway
from tests.billing.test_data_rights import tables as tables  # the billing and shop tables (a fixture)
from tests.builders import at_once, card, due_subscription, fresh, lose_receipts, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 2, 15)  # 2027Q1
QUARTER = "2027Q1"
IT_VAT = "IT00743110157"


def use_seller(monkeypatch, *, include: bool = True, registrations: dict | None = None) -> None:
    """An Italian seller, OSS registered (the seller's profile as the tax rules read it)."""
    profile = SimpleNamespace(LegalName="Rpay S.r.l.", Address="Via Roma 1\n00184 Roma", Country="IT",
                              VatNumber=IT_VAT, OssRegistered=True, UnderThreshold=False,
                              PricesIncludeTax=include, Registrations=registrations, Version=None)
    monkeypatch.setattr(seller_access, "get_seller_profile", lambda: profile)


def at(day: date):
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


def due(n: int, *, country: str | None, vat: str | None = None, amount: int = 999, currency: str = "EUR",
        prefix: str = "t"):
    sub = due_subscription(n, due=D, card=card(), prefix=prefix, amount=amount, currency=currency)
    sub.BillingCountry, sub.VatNumber = country, vat
    return sub


def pay(*subs):
    access.batch_items(list(subs))
    with at(D):
        summary = batches.run_payments(run_date=D, workers=2, catch_up_days=0)
    assert summary.counts["paid"] == len(subs), summary.counts
    return [receipts_of(sub)[0] for sub in subs]


def totals(seller: str = IT_VAT) -> dict[tuple, dict[str, int]]:
    """The quarter's totals of ``seller``, shards summed: (country, rate, currency,
    treatment) -> figures; ``("RC", "RC#<vat>#<currency>")`` -> the reverse-charge sales."""
    summed: dict[tuple, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for item in access.tax_totals(QUARTER):
        prefix = f"SELLER#{seller}#"
        if not item.SK.startswith(prefix):
            continue
        key = item.SK.removeprefix(prefix)
        if item.is_reverse_charge_sales:
            summed[("RC", key)]["Net"] += int(item.Net)
            continue
        country, rate, currency, treatment, shard = key.split("#")
        assert 0 <= int(shard) < TOTAL_SHARDS
        for name in ("Net", "Tax", "Gross", "Invoices"):
            summed[(country, rate, currency, treatment)][name] += int(getattr(item, name) or 0)
    return {key: dict(value) for key, value in summed.items()}


# (billing country, VAT number, price, currency) -> (net, tax, charged, rate, country, treatment)
CASES = {
    "IT consumer, 22% included": (("IT", None, 999, "EUR"), (819, 180, 999, "22", "IT", "domestic")),
    "DE consumer, 19% through the OSS": (("DE", None, 999, "EUR"), (839, 160, 999, "19", "DE", "oss")),
    "DE business, reverse charge": (("DE", "DE136695976", 999, "EUR"), (999, 0, 999, "0", "DE", "reverse_charge")),
    # A business in the seller's own country is taxed as a consumer is, and is no reverse-charge sale.
    "IT business, 22% included": (("IT", "IT12345670017", 999, "EUR"), (819, 180, 999, "22", "IT", "domestic")),
    "US consumer, not subject": (("US", None, 999, "USD"), (999, 0, 999, "0", "US", "not_subject")),
    "IT consumer in yen (0 decimals)": (("IT", None, 1500, "JPY"), (1230, 270, 1500, "22", "IT", "domestic")),
    "BH consumer in dinars (3 decimals), registered at 10%": (("BH", None, 4500, "BHD"),
                                                             (4091, 409, 4500, "10", "BH", "registered")),
}


@pytest.mark.parametrize("case", CASES)
def test_the_payment_run_writes_each_invoice_s_tax_and_adds_it_to_the_quarter(case, moto_table, monkeypatch) -> None:
    (country, vat, price, currency), (net, tax, charged, rate, tax_country, treatment) = CASES[case]
    use_seller(monkeypatch, registrations={"BH": "10"})
    sub = due(0, country=country, vat=vat, amount=price, currency=currency)
    [receipt] = pay(sub)
    assert (receipt.Net, receipt.Tax, receipt.ProcessedAmount) == (net, tax, charged)
    assert (receipt.TaxRate, receipt.TaxCountry, receipt.TaxTreatment) == (rate, tax_country, treatment)
    assert receipt.PricesIncludeTax is True
    assert (receipt.BuyerCountry, receipt.BuyerVatNumber) == (country, vat)
    assert (receipt.Seller.Name, receipt.Seller.Country, receipt.Seller.VatNumber) == ("Rpay S.r.l.", "IT", IT_VAT)
    assert receipt.Seller.Address == "Via Roma 1\n00184 Roma"
    [line] = receipt.TaxLines
    assert (line.Net, line.Tax, line.Gross, line.TaxRate) == (net, tax, charged, rate)
    assert (line.PeriodStart, line.PeriodEnd) == ("2027-02-15", "2027-03-14")
    assert line.Description == receipt.ProductName and receipt.ProductName  # the invoice line names the product
    [charge] = get_gateway().charges_made(billing_date=D.isoformat())
    meta = charge["metadata"]
    assert (meta["net"], meta["tax"], meta["tax_rate"], meta["tax_country"]) == (str(net), str(tax), rate, tax_country)
    expected = {(tax_country, rate, currency, treatment): {"Net": net, "Tax": tax, "Gross": charged, "Invoices": 1}}
    if treatment == "reverse_charge":
        expected[("RC", f"RC#{vat}#{currency}")] = {"Net": net}
    assert totals() == expected


def test_tax_exclusive_prices_charge_net_plus_tax_and_every_amount_says_so(moto_table, monkeypatch) -> None:
    use_seller(monkeypatch, include=False)
    consumer, business = due(0, country="IT", amount=1000), due(1, country="FR", vat="FR40303265045", amount=1000)
    access.batch_items([consumer, business])
    # What the pages and the reminder show before the charge: the projection's amount.
    assert payments.owed_amount(fresh(consumer)) == 1220 and payments.owed_amount(fresh(business)) == 1000
    with at(D):
        batches.run_payments(run_date=D, workers=2, catch_up_days=0)
    [it], [fr] = receipts_of(consumer), receipts_of(business)
    assert (it.Net, it.Tax, it.ProcessedAmount, it.PricesIncludeTax) == (1000, 220, 1220, False)
    assert (fr.Net, fr.Tax, fr.ProcessedAmount, fr.TaxTreatment) == (1000, 0, 1000, "reverse_charge")
    charged = {c["metadata"]["sub_id"]: c["amount"] for c in get_gateway().charges_made(billing_date=D.isoformat())}
    assert charged == {consumer.sub_id: 1220, business.sub_id: 1000}


@pytest.mark.parametrize("charged_inclusive", [False, True], ids=["charged exclusive", "charged inclusive"])
def test_a_receipt_written_late_keeps_the_price_terms_its_charge_was_made_under(charged_inclusive, moto_table,
                                                                                monkeypatch) -> None:
    # The run dies between the charge and its receipt; the seller then changes whether its
    # prices include tax; the next run finds the charge (same key) and writes its receipt.
    # The invoice says what was charged: the charge's terms, not the seller's new ones.
    use_seller(monkeypatch, include=charged_inclusive)
    sub = due(0, country="IT", amount=1000)
    access.batch_items([sub])

    with monkeypatch.context() as mp, at(D):
        lose_receipts(mp)
        first = batches.run_payments(run_date=D, workers=1, catch_up_days=0, reconcile=False)
    assert first.counts["errors"] == 1 and not receipts_of(sub)
    use_seller(monkeypatch, include=not charged_inclusive)
    with at(D):
        batches.run_payments(run_date=D, workers=1, catch_up_days=0)
    [receipt] = receipts_of(sub)
    expected = (820, 180, 1000) if charged_inclusive else (1000, 220, 1220)
    assert (receipt.Net, receipt.Tax, receipt.ProcessedAmount) == expected
    assert receipt.PricesIncludeTax is charged_inclusive
    assert len(get_gateway().charges_made(billing_date=D.isoformat())) == 1


@pytest.mark.parametrize("include", [True, False])
def test_a_charge_without_tax_terms_is_invoiced_on_the_seller_s(include, moto_table, monkeypatch) -> None:
    # A charge made before taxes were kept carries no terms: the seller's setting is the
    # invoice's, and the tax is the one included in what was charged.
    use_seller(monkeypatch, include=include)
    tax = access.invoice_tax(due(0, country="IT"), amount=999, on=D)
    assert tax.prices_include_tax is include
    assert (tax.line.net, tax.line.tax) == (819, 180)


def test_a_receipt_recorded_for_an_earlier_day_is_taxed_and_totalled_as_of_that_day(moto_table, monkeypatch) -> None:
    # Recorded today (2027) without the charge's tax terms, for a payment made on 31 August
    # 2024 (as the demo data records its history): Finland's rate of that day (24%, 25.5%
    # from 1 September 2024), counted in that day's quarter.
    use_seller(monkeypatch)
    sub = due(0, country="FI")
    access.batch_items([sub])
    with at(D):
        receipt, created = access.create_receipt(
            sub, billing_date=date(2024, 8, 31), amount=999, currency="EUR", charge_id="ch_2024", retention_days=4000,
            processed_at=datetime(2024, 8, 31, 12, tzinfo=UTC), period_end=date(2024, 9, 30), actor="test")
    assert created and (receipt.TaxRate, receipt.TaxCountry, receipt.Net, receipt.Tax) == ("24", "FI", 806, 193)
    assert [(t.Net, t.Tax, t.Invoices) for t in access.tax_totals("2024Q3")] == [(806, 193, 1)]
    assert access.tax_totals("2027Q1") == []


def test_a_payment_with_its_tax_still_costs_two_requests(moto_table, monkeypatch, ddb_requests) -> None:
    use_seller(monkeypatch)
    subs = [due(n, country=("DE", "IT", "FR")[n % 3], vat="DE136695976" if n % 5 == 0 else None)
            for n in range(20)]
    access.batch_items(subs)
    ddb_requests.reset()
    with at(D):
        summary = batches.run_payments(run_date=D, workers=2, catch_up_days=0)
    assert summary.counts["paid"] == 20
    # As without taxes (test_batch_payments): the run's record (+1 PutItem, +1 UpdateItem),
    # three Queries (the index, the incomplete to expire, the usage due of cancels); per
    # payment one TransactWriteItems (its number's counter, receipt, event, number look-up
    # and the tax totals) and one advance.
    assert ddb_requests.by_name() == Counter({"PutItem": 1, "TransactWriteItems": 20, "UpdateItem": 21, "Query": 3})


def test_an_old_receipt_without_tax_is_refunded_without_a_credit_note(moto_table, monkeypatch) -> None:
    use_seller(monkeypatch)
    [receipt] = pay(due(0, country="IT"))
    receipt.Net = receipt.Tax = None  # as written before taxes were kept
    done = refunds.refund_receipt(receipt, 100, request_id="r1", actor="staff:ann")
    assert done.receipt.RefundedAmount == 100 and access.credit_notes_of_receipt(receipt) == []


def test_staff_refunds_issue_credit_notes_that_sum_to_the_invoice(moto_table, monkeypatch) -> None:
    use_seller(monkeypatch)
    [receipt] = pay(due(0, country="DE", amount=1000))  # 1000 gross: 160 tax (19%), 840 net
    assert (receipt.Net, receipt.Tax) == (840, 160)
    with at(date(2027, 4, 2)):  # the second quarter: the credit notes count there
        for n, amount in enumerate((333, 333, 334)):
            receipt = refunds.refund_receipt(access.get_receipt(receipt.account_id, receipt.SK), amount,
                                             request_id=f"r{n}", actor="staff:ann", reason="goodwill").receipt
    notes = access.credit_notes_of_receipt(receipt)
    # 160 × 333/1000 = 53.28 -> 53; on 666: 106.56 -> 107, so 54; the rest: 53
    assert [(n.Gross, n.Tax, n.Net) for n in notes] == [(-333, -53, -280), (-333, -54, -279), (-334, -53, -281)]
    assert sum(n.Tax for n in notes) == -160 and sum(n.Net for n in notes) == -840
    assert len({n.Number for n in notes}) == 3 and all(n.Number.startswith("CN-2027-") for n in notes)
    assert all(n.InvoiceNumber == receipt.Number and n.Reason == "goodwill" for n in notes)
    assert access.get_credit_note(receipt.account_id, notes[0].Number).RefundId == receipt.Refunds[0].RefundId
    assert [n.Number for n in access.get_credit_notes_by_account(receipt.account_id)] == \
        [n.Number for n in reversed(notes)]
    # The invoice itself is unchanged: its tax, its net.
    assert (receipt.Net, receipt.Tax, receipt.ProcessedAmount) == (840, 160, 1000)
    second = access.tax_totals("2027Q2")
    assert {i.SK.rsplit("#", 1)[0] for i in second} == {"SELLER#IT00743110157#DE#19#EUR#oss"}
    assert (sum(i.Net for i in second), sum(i.Tax for i in second), sum(i.Invoices for i in second)) == (-840, -160, 0)
    assert totals() == {("DE", "19", "EUR", "oss"): {"Net": 840, "Tax": 160, "Gross": 1000, "Invoices": 1}}


def test_a_credit_note_says_what_its_invoice_says_with_the_refund_s_share_negated(moto_table, monkeypatch) -> None:
    """The seller, the buyer (country, VAT number, name, address), the language, the line's
    product and period, and the retention (TTL) are the invoice's; the figures are the
    refund's share, negated; numbers run one by one in the year's series; the key is the
    day it is issued."""
    use_seller(monkeypatch)
    sub = due(0, country="DE", vat="DE136695976", amount=1000)
    sub.ProductName, sub.Language = "Daily News", "it"
    sub.PaymentDetails.BillingAddress = "Pat Doe\nHauptstr. 1\n10115 Berlin"
    [receipt] = pay(sub)
    assert receipt.Seller and receipt.BuyerName == "Pat Doe" and receipt.TTL and receipt.TaxRate == "0"
    with at(date(2027, 4, 2)):
        for n, amount in enumerate((300, 200)):
            receipt = refunds.refund_receipt(access.get_receipt(receipt.account_id, receipt.SK), amount,
                                             request_id=f"r{n}", actor="staff:ann", reason=None).receipt
    first, second = access.credit_notes_of_receipt(receipt)
    series = first.Number.split("-")[2]  # one thread's series, numbered one by one
    assert [first.Number, second.Number] == [f"CN-2027-{series}-000001", f"CN-2027-{series}-000002"]
    assert first.SK.split("#", 2) == ["CRN", "2027-04-02", first.Number] and first.IssuedAt.startswith("2027-04-02T12:00:00")
    for note in (first, second):
        assert note.Seller.as_dict() == receipt.Seller.as_dict()
        assert (note.BuyerCountry, note.BuyerVatNumber, note.BuyerName, note.BillingAddress, note.Language) == (
            "DE", "DE136695976", "Pat Doe", "Pat Doe\nHauptstr. 1\n10115 Berlin", "it")
        assert note.TTL == receipt.TTL and note.Reason is None
        assert (note.TaxRate, note.TaxCountry, note.TaxTreatment) == ("0", "DE", "reverse_charge")
    [line] = first.TaxLines
    assert (line.Description, line.PeriodStart, line.PeriodEnd) == ("Daily News", receipt.PeriodStart, receipt.PeriodEnd)
    assert (line.Net, line.Tax, line.Gross, line.TaxRate) == (-300, 0, -300, "0")
    assert (first.Net, first.Tax, first.Gross) == (-300, 0, -300)
    # a note of a receipt without a product name (and written before its lines) says the SKU
    from billing.access.credit_notes import new_credit_note

    unnamed = access.get_receipt(receipt.account_id, receipt.SK)
    unnamed.ProductName, unnamed.TaxLines = None, None
    note = new_credit_note(unnamed, number="CN-2027-000009", refund_id="re_x", amount=100, earlier=[], reason="x")
    assert note.TaxLines[0].Description == receipt.SKU == "NEWS-DAILY" and note.Reason == "x"
    [line] = note.TaxLines  # one line of the receipt's totals, its days and rate
    assert (line.PeriodStart, line.PeriodEnd, line.TaxRate) == (receipt.PeriodStart, receipt.PeriodEnd, "0")
    assert (line.Net, line.Tax, line.Gross) == (-100, 0, -100)
    # stored lines that do not add up to the receipt (none is written so): its totals instead
    odd = access.get_receipt(receipt.account_id, receipt.SK)
    odd.TaxLines[0].Gross, odd.TaxLines[0].Description = 1, "odd"
    [line] = new_credit_note(odd, number="CN-2027-000010", refund_id="re_y", amount=100, earlier=[],
                             reason=None).TaxLines
    assert (line.Description, line.Gross) == ("Daily News", -100)


def test_a_credit_note_of_a_taxed_line_negates_net_tax_and_gross(moto_table, monkeypatch) -> None:
    use_seller(monkeypatch)
    [receipt] = pay(due(0, country="DE", amount=1000))  # 840 net + 160 tax
    with at(date(2027, 4, 2)):
        receipt = refunds.refund_receipt(receipt, 500, request_id="r0", actor="staff:ann").receipt
    [note] = access.credit_notes_of_receipt(receipt)
    [line] = note.TaxLines
    assert (line.Net, line.Tax, line.Gross, line.TaxRate) == (-420, -80, -500, "19")
    assert (note.Net, note.Tax, note.Gross) == (-420, -80, -500)
    # the ledger: the note counts once, in the quarter it is issued in
    second = access.tax_totals("2027Q2")
    assert (sum(i.Net for i in second), sum(i.Tax for i in second)) == (-420, -80)


def test_each_year_has_its_own_series_of_credit_note_numbers(moto_table) -> None:
    from billing.access.credit_notes import CreditNoteNumbers
    from billing.access.receipt_numbers import write_numbered

    numbers = CreditNoteNumbers()  # one thread: one series; a transaction of the counter alone
    got = [write_numbered(numbers, year, lambda tx, number: None) for year in (2027, 2027, 2028)]
    series = got[0].split("-")[2]
    assert got == [f"CN-2027-{series}-000001", f"CN-2027-{series}-000002", f"CN-2028-{series}-000001"]


def test_a_receipt_s_credit_notes_are_its_own_and_a_one_unit_invoice_gets_one(moto_table, monkeypatch) -> None:
    use_seller(monkeypatch)
    sub = due(0, country="DE", amount=1)  # 0.01 EUR a month
    [february] = pay(sub)
    with at(date(2027, 3, 15)):
        assert batches.run_payments(run_date=date(2027, 3, 15), workers=1, catch_up_days=0).counts["paid"] == 1
    march = next(r for r in receipts_of(sub) if r.SK != february.SK)
    with at(date(2027, 4, 2)):
        for n, receipt in enumerate((february, march)):
            refunds.refund_receipt(receipt, 1, request_id=f"r{n}", actor="staff:ann")
    for receipt in (february, march):
        [note] = access.credit_notes_of_receipt(receipt)
        assert (note.InvoiceNumber, note.Gross, note.Tax) == (receipt.Number, -1, 0)


def test_a_credit_note_counts_in_the_quarter_it_was_issued_in(moto_table, monkeypatch) -> None:
    """Written later (a retried transaction), a note issued on 31 March still counts in Q1."""
    from pynamodb.connection import Connection
    from pynamodb.exceptions import TransactWriteError
    from pynamodb.transactions import TransactWrite

    from billing.access.credit_notes import add_credit_note, new_credit_note

    use_seller(monkeypatch)
    [receipt] = pay(due(0, country="DE", amount=1000))
    note = new_credit_note(receipt, number="CN-2027-000001", refund_id="re_1", amount=1000, earlier=[], reason=None,
                           issued_at=datetime(2027, 3, 31, 12, tzinfo=UTC))
    connection = Connection(region=receipt.Meta.region, host=receipt.Meta.host)
    with at(date(2027, 4, 2)), TransactWrite(connection=connection) as tx:
        add_credit_note(tx, note)
    assert totals()[("DE", "19", "EUR", "oss")] == {"Net": 0, "Tax": 0, "Gross": 0, "Invoices": 1}
    assert not access.tax_totals("2027Q2")
    # the same note twice: refused, the totals unchanged
    with pytest.raises(TransactWriteError), at(date(2027, 4, 2)), TransactWrite(connection=connection) as tx:
        add_credit_note(tx, note)
    assert totals()[("DE", "19", "EUR", "oss")]["Net"] == 0


def test_keeping_a_credit_note_never_shortens_it_and_never_brings_one_back(moto_table, monkeypatch) -> None:
    from pynamodb.exceptions import UpdateError

    from billing.access.credit_notes import keep_credit_note_until

    use_seller(monkeypatch)
    [receipt] = pay(due(0, country="DE", amount=1000))
    with at(date(2027, 4, 2)):
        receipt = refunds.refund_receipt(receipt, 100, request_id="r0", actor="staff:ann").receipt
    [note] = access.credit_notes_of_receipt(receipt)
    kept = note.TTL
    later, sooner = kept + timedelta(days=3650), kept - timedelta(days=30)
    keep_credit_note_until(note, sooner)
    assert kept == access.credit_notes_of_receipt(receipt)[0].TTL
    keep_credit_note_until(note, later)
    assert later == access.credit_notes_of_receipt(receipt)[0].TTL
    note.TTL = None  # a note written without one (none is): kept to the day given
    keep_credit_note_until(note, later + timedelta(days=1))
    assert later + timedelta(days=1) == access.credit_notes_of_receipt(receipt)[0].TTL
    note.delete()
    with pytest.raises(UpdateError):
        keep_credit_note_until(note, later)
    assert access.credit_notes_of_receipt(receipt) == []


def test_a_refund_made_at_the_processor_issues_a_credit_note(moto_table, monkeypatch) -> None:
    use_seller(monkeypatch)
    [receipt] = pay(due(0, country="DE", vat="DE136695976"))
    with at(D):
        assert refunds.record_processor_refund(receipt, "re_dash_1", 999, actor="stripe")
        assert not refunds.record_processor_refund(receipt, "re_dash_1", 999, actor="stripe")  # redelivered
    [note] = access.credit_notes_of_receipt(receipt)
    assert (note.Gross, note.Tax, note.Net, note.RefundId) == (-999, 0, -999, "re_dash_1")
    assert note.TaxTreatment == "reverse_charge" and note.BuyerVatNumber == "DE136695976"
    assert totals()[("RC", "RC#DE136695976#EUR")] == {"Net": 0}


def test_cancelling_now_refunds_the_unused_days_with_a_credit_note(moto_table, monkeypatch) -> None:
    from billing.actions import lifecycle

    use_seller(monkeypatch)
    sub = due(0, country="IT")
    [receipt] = pay(sub)
    with at(date(2027, 3, 1)):
        done = lifecycle.cancel_now(fresh(sub), today=date(2027, 3, 1), actor="staff:ann", reason="customer")
    assert done.refunded > 0
    [note] = access.credit_notes_of_receipt(receipt)
    assert note.Gross == -done.refunded and note.Net + note.Tax == note.Gross and note.TaxRate == "22"


@pytest.mark.local_engine
def test_two_runs_at_once_and_two_refunds_at_once_leave_the_totals_exact(local_table, monkeypatch) -> None:
    use_seller(monkeypatch)
    subs = [due(n, country=("DE", "IT")[n % 2], amount=900 + n) for n in range(40)]
    access.batch_items(subs)
    with at(D):
        at_once(lambda: batches.run_payments(run_date=D, workers=4, catch_up_days=0))
    receipts = [receipts_of(sub)[0] for sub in subs]
    expected: dict[tuple, dict[str, int]] = defaultdict(lambda: Counter())
    for r in receipts:
        expected[(r.TaxCountry, r.TaxRate, r.Currency, r.TaxTreatment)].update(
            {"Net": r.Net, "Tax": r.Tax, "Gross": r.ProcessedAmount, "Invoices": 1})
    assert totals() == {k: dict(v) for k, v in expected.items()}
    # Two staff members refund the same receipt at once: both refunds recorded, one credit
    # note each, the totals moved by exactly their sum.
    target = receipts[0]
    with at(D):
        at_once(lambda: access.record_refund(access.get_receipt(target.account_id, target.SK),
                                             refund_id=f"re_{uuid.uuid4().hex}", amount=300, actor="staff"))
    notes = access.credit_notes_of_receipt(target)
    assert len(notes) == 2 and sum(n.Gross for n in notes) == -600
    key = (target.TaxCountry, target.TaxRate, target.Currency, target.TaxTreatment)
    assert totals()[key]["Tax"] == expected[key]["Tax"] + sum(n.Tax for n in notes)


@given(gross=st.integers(1, 10**9), percent=st.sampled_from(["0", "4", "19", "22", "25.5", "27"]),
       cuts=st.lists(st.integers(1, 10**6), min_size=1, max_size=8))
def test_the_credit_notes_of_a_fully_refunded_invoice_sum_exactly_to_it(gross, percent, cuts) -> None:
    rate = Decimal(percent)
    tax = int((Decimal(gross) * rate / (100 + rate)).to_integral_value())
    net = gross - tax
    # Refunds in the proportions ``cuts``, the last taking what is left.
    scale = sum(cuts)
    amounts = [max(1, gross * c // scale) for c in cuts[:-1]]
    while amounts and sum(amounts) >= gross:
        amounts.pop()
    amounts.append(gross - sum(amounts))
    shares = [refund_share(tax=tax, gross=gross, earlier=amounts[:i], refund=a)
              for i, a in enumerate(amounts)]
    assert sum(s.tax for s in shares) == tax and sum(s.net for s in shares) == net
    assert all(s.net + s.tax == s.gross and s.tax >= 0 and s.net >= 0 for s in shares)
    # Each: the tax on the refunded total rounded half up, less the same before it; so the
    # first is its own share rounded half up, and each is within one minor unit of its part.
    def half_up(value: Decimal) -> int:
        return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))

    assert shares[0].tax == half_up(Decimal(tax) * amounts[0] / gross)
    for i, (share, amount) in enumerate(zip(shares, amounts, strict=True)):
        before = sum(amounts[:i])
        assert share.tax == half_up(Decimal(tax) * (before + amount) / gross) - half_up(Decimal(tax) * before / gross)
        assert abs(share.tax - Decimal(tax) * amount / gross) < 1


def test_many_small_refunds_never_leave_the_last_one_a_negative_net() -> None:
    # 100 at 27% (21 tax) refunded 2 at a time: rounded one by one, each 0.42 would give 0
    # and leave the last refund of 2 the whole 21 (a net of -19).
    shares = [refund_share(tax=21, gross=100, earlier=[2] * n, refund=2) for n in range(50)]
    assert sum(s.tax for s in shares) == 21 and all(0 <= s.tax <= 1 and s.net >= 1 for s in shares)


def test_rates_are_written_as_the_report_keys_them() -> None:
    assert [rate_text(Decimal(x)) for x in ("22", "25.5", "0", "25.50", "10.0", "100", "0.00", "7.70")] == [
        "22", "25.5", "0", "25.5", "10", "100", "0", "7.7"]
    assert total_shard("ACC#a" + "REC#x") == total_shard("ACC#a" + "REC#x") < TOTAL_SHARDS
    assert len({total_shard(f"k{n}") for n in range(500)}) == TOTAL_SHARDS
    # FNV-1a, as its docstring says: the published 32-bit values of "a" and "foobar".
    assert [total_shard(key) for key in ("a", "foobar")] == [0xE40C292C % TOTAL_SHARDS, 0xBF9CF968 % TOTAL_SHARDS]


def test_an_invoice_s_buyer_name_is_the_first_line_of_an_address_of_several() -> None:
    # One line is an address without a name (a card's postcode): the invoice names no one.
    assert buyer_name(None) is None and buyer_name("") is None and buyer_name("00184 Roma") is None
    assert buyer_name("Ada Lovelace\nVia Roma 1") == "Ada Lovelace"
    assert buyer_name(" Ada Lovelace \n\nVia Roma 1\n00184 Roma") == "Ada Lovelace"


def test_a_document_counts_in_the_quarter_of_its_day_in_the_billing_time_zone(settings) -> None:
    settings.BILLING_TIMEZONE = "Europe/Rome"
    assert quarter_of_moment("2027-03-31T21:59:00+00:00") == "2027Q1"
    assert quarter_of_moment("2027-03-31T22:30:00+00:00") == "2027Q2"  # 1 April, 00:30 in Rome
    assert quarter_of_moment(datetime(2027, 3, 31, 22, 30, tzinfo=UTC)) == "2027Q2"


def test_a_tax_total_is_an_entity_of_the_table() -> None:
    assert TaxTotal.sk(seller=IT_VAT, country="DE", rate="19", currency="EUR", treatment="oss",
                       shard="03") == "SELLER#IT00743110157#DE#19#EUR#oss#03"


def test_a_dispute_lost_issues_one_credit_note_for_what_it_took(moto_table, monkeypatch) -> None:
    from billing.access.disputes import Dispute

    use_seller(monkeypatch)
    [receipt] = pay(due(0, country="IT", amount=1220))  # 1000 net, 220 tax
    with at(D):
        refunds.refund_receipt(receipt, 220, request_id="r1", actor="staff:ann")
    receipt = access.get_receipt(receipt.account_id, receipt.SK)
    lost = Dispute(dispute_id="dp_1", charge_id=receipt.ChargeId, amount=1220, currency="EUR", reason="fraudulent",
                   status="lost", opened_at="2027-02-20T10:00:00+00:00")
    with at(date(2027, 3, 1)):
        assert access.record_dispute(receipt, lost, actor="stripe")
        assert not access.record_dispute(access.get_receipt(receipt.account_id, receipt.SK), lost, actor="stripe")
    notes = access.credit_notes_of_receipt(receipt)
    assert [(n.RefundId, n.Gross) for n in notes] == [(notes[0].RefundId, -220), ("dp_1", -1000)]
    assert sum(n.Tax for n in notes) == -220 and sum(n.Net for n in notes) == -1000
    assert totals()[("IT", "22", "EUR", "domestic")] == {"Net": 0, "Tax": 0, "Gross": 0, "Invoices": 1}


def test_a_switch_s_charge_is_taxed_and_its_credit_refund_issues_a_credit_note(moto_table, monkeypatch) -> None:
    from billing.actions import subscriptions as subscribing
    from billing.actions import switch

    use_seller(monkeypatch, include=False)  # the charge now is the difference plus its 22%
    made, mid = date(2027, 3, 10), date(2027, 3, 25)
    for sku, name, price in (("NEWS", "News", 1000), ("NEWS-PLUS", "News Plus", 2000),
                             ("NEWS-LITE", "News Lite", 500), ("NEWS-MID", "News Mid", 800)):
        access.create_product(sku, name, price, "EUR")
    with at(made):
        sub = subscribing.subscribe(access.create_account("sw@example.com"), sku="NEWS", product_name="News",
                                    payment_day=10, amount=1000, currency="EUR", card=card(), today=made,
                                    actor="customer").sub
    [first] = receipts_of(sub)
    assert (first.Net, first.Tax, first.ProcessedAmount) == (1000, 220, 1220)
    with at(mid):
        q = switch.quote(fresh(sub), "NEWS-PLUS", today=mid)
        shown = switch.charged_now(fresh(sub), q)  # what the confirm pages say is charged now
        done = switch.switch(fresh(sub), "NEWS-PLUS", today=mid, actor="customer", expected=q)
    assert shown == done.charged
    assert done.charged == q.due_now + round(q.due_now * 0.22)
    [up] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert (up.Net, up.Tax, up.ProcessedAmount) == (q.due_now, done.charged - q.due_now, done.charged)
    # Down to Lite, then up to Mid: the paid days cost less at Mid's price, refunded with a credit note.
    with at(mid + timedelta(days=1)):
        sub2 = subscribing.subscribe(access.create_account("sw2@example.com"), sku="NEWS", product_name="News",
                                     payment_day=10, amount=1000, currency="EUR", card=card(),
                                     today=mid + timedelta(days=1), actor="customer").sub
        switch.switch(fresh(sub2), "NEWS-LITE", today=mid + timedelta(days=1), actor="customer")
    day = mid + timedelta(days=2)
    with at(day):
        done = switch.switch(fresh(sub2), "NEWS-MID", today=day, actor="customer")
    assert done.refunded > 0
    [paid] = [r for r in receipts_of(sub2) if r.Kind != "switch"]
    [note] = access.credit_notes_of_receipt(paid)
    assert note.Gross == -done.refunded and note.Net + note.Tax == note.Gross and note.TaxRate == "22"


def test_on_stripe_the_paymentintent_carries_the_tax_and_the_reconciliation_checks_it(
        moto_table, stripe_gateway, localstripe, monkeypatch) -> None:
    from billing.batches.reconcile import reconcile
    from billing.models import Receipt
    from tests.stripe_server import saved_card_token

    use_seller(monkeypatch)
    today = datetime.now(tz=UTC).date()  # localstripe stamps its objects with the machine's clock
    customer = stripe_gateway.create_customer("acct-tax", "tax@example.com")
    token = saved_card_token(stripe_gateway, localstripe, customer, "4242424242424242")
    sub = access.due_subscription("acct-tax", "sub-tax", due=today, card=access.payment_details_from(token),
                                  email="tax@example.com", amount=1000, currency="EUR")
    sub.BillingCountry = "DE"
    access.batch_items([sub])
    summary = batches.run_payments(run_date=today, workers=1)
    assert summary.counts["paid"] == 1 and summary.counts.get("differences", 0) == 0
    [intent] = stripe_gateway.recorded.creates("/v1/payment_intents")
    sent = {k: v for k, v in intent.params.items() if k.startswith("metadata[")}
    assert (sent["metadata[net]"], sent["metadata[tax]"], sent["metadata[tax_rate]"], sent["metadata[tax_country]"]) \
        == (["840"], ["160"], ["19"], ["DE"])
    [receipt] = receipts_of(sub)
    receipt.update(actions=[Receipt.Tax.set(150), Receipt.Net.set(850)])  # a receipt that says otherwise
    _, differences = reconcile(today, today, reverse=False)
    [difference] = differences
    assert difference.kind == "receipt tax differs" and "charged net 840 tax 160 at 19% (DE)" in difference.detail


@pytest.mark.django_db
def test_closing_the_account_keeps_its_credit_notes_as_its_invoices(tables, monkeypatch, settings) -> None:
    from billing.actions import data_rights

    settings.RPAY_SELLER_COUNTRY = "IT"  # ten years
    use_seller(monkeypatch)
    [receipt] = pay(due(0, country="IT"))
    with at(D):
        refunds.refund_receipt(receipt, 100, request_id="r1", actor="staff:ann")
    [note] = access.credit_notes_of_receipt(receipt)
    key = Account.pk(account_id=receipt.account_id)
    Account(key, key, Email=receipt.Email, CreatedDate="2027-01-01T00:00:00+00:00").save()
    with at(D):
        assert data_rights.close_account(receipt.account_id, today=D).closed_now
    # Closing cancels the subscription now: its unused days are refunded, with a credit note.
    notes = access.credit_notes_of_receipt(receipt)
    [kept] = [n for n in notes if n.Number == note.Number]
    assert (kept.Net, kept.Tax) == (note.Net, note.Tax) and len(notes) == 2
    assert {n.TTL.date() for n in notes} == {date(2037, 2, 15)}  # ten years, as its invoice


def test_a_quarter_with_two_sellers_gives_each_its_own_report(moto_table, monkeypatch) -> None:
    # The seller changes in the quarter (Italy, then an Irish company); an Italian invoice
    # is refunded after the change. Each seller's report is the sum of its own invoices less
    # its own credit notes, its OSS return included; neither holds the other's sales.
    use_seller(monkeypatch)
    italian = pay(due(0, country="FR"), due(1, country="DE", vat="DE136695976"), due(2, country="IT"))
    irish = SimpleNamespace(LegalName="Rpay Ltd", Address="1 Dame St\nDublin 2", Country="IE",
                            VatNumber="IE6388047V", OssRegistered=True, UnderThreshold=False,
                            PricesIncludeTax=True, Registrations=None, Version=None)
    monkeypatch.setattr(seller_access, "get_seller_profile", lambda: irish)
    irish_receipts = pay(due(3, country="FR", prefix="u"), due(4, country="IE", prefix="u"),
                         due(5, country="DE", vat="DE136695976", prefix="u"))
    assert {r.Seller.VatNumber for r in irish_receipts} == {"IE6388047V"}
    with at(D):
        refunds.refund_receipt(italian[0], 500, request_id="late", actor="staff:ann")
    [note] = access.credit_notes_of_receipt(italian[0])

    reports = {report.seller: report for report in access.quarter_tax_reports(QUARTER)}
    assert set(reports) == {IT_VAT, "IE6388047V"}
    assert (reports[IT_VAT].seller_name, reports["IE6388047V"].seller_name) == ("Rpay S.r.l.", "Rpay Ltd")
    for seller, documents in ((IT_VAT, [*italian, note]), ("IE6388047V", irish_receipts)):
        report = reports[seller]
        expected: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
        for doc in documents:
            figures = expected[(doc.TaxCountry, doc.TaxRate, doc.Currency, doc.TaxTreatment)]
            figures[0] += int(doc.Net)
            figures[1] += int(doc.Tax)
            figures[2] += 0 if doc is note else 1
        assert {(line.country, line.rate, line.currency, line.treatment): [line.net, line.tax, line.invoices]
                for line in report.lines} == dict(expected)
        assert [(line.vat_number, line.net) for line in report.customers] == [
            ("DE136695976", sum(int(d.Net) for d in documents if d.TaxTreatment == "reverse_charge"))]
    # The French sale is the OSS line of each seller's own return, each in its own report.
    assert [e.line.net for e in oss_return(reports[IT_VAT]).lines] == [int(italian[0].Net) + int(note.Net)]
    assert [(e.line.country, e.line.net) for e in oss_return(reports["IE6388047V"]).lines] == [
        ("FR", int(irish_receipts[0].Net))]


def test_totals_written_before_the_seller_was_keyed_are_read_as_a_report_of_their_own(moto_table) -> None:
    # An item of the old key (no seller) stays readable: its report's seller is not recorded.
    TaxTotal(TaxTotal.pk(quarter=QUARTER), "FR#20#EUR#oss#03", Net=833, Tax=166, Gross=999, Invoices=1).save()
    TaxTotal(TaxTotal.pk(quarter=QUARTER), "RC#DE136695976#EUR", Net=999).save()
    [report] = access.quarter_tax_reports(QUARTER)
    assert report.seller is None and report.seller_name is None
    assert [(line.country, line.net, line.tax) for line in report.lines] == [("FR", 833, 166)]
    assert [(line.vat_number, line.net) for line in report.customers] == [("DE136695976", 999)]
