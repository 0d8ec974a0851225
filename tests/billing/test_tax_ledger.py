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
from datetime import UTC, date, datetime
from decimal import Decimal
from types import SimpleNamespace

import pytest
import time_machine
from hypothesis import given
from hypothesis import strategies as st

from billing import access, batches
from billing.access import seller as seller_access
from billing.actions import refunds
from billing.models import TaxTotal
from billing.rules.invoice_tax import TOTAL_SHARDS, rate_text, refund_share, total_shard
from core.payments.gateway import get_gateway
from tests.builders import at_once, card, due_subscription, fresh, receipts_of

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


def totals() -> dict[tuple, dict[str, int]]:
    """The quarter's totals, shards summed: (country, rate, currency, treatment) -> figures."""
    summed: dict[tuple, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for item in access.tax_totals(QUARTER):
        if item.is_reverse_charge_sales:
            summed[("RC", item.SK)]["Net"] += int(item.Net)
            continue
        country, rate, currency, treatment, shard = item.SK.split("#")
        assert 0 <= int(shard) < TOTAL_SHARDS
        for name in ("Net", "Tax", "Gross", "Invoices"):
            summed[(country, rate, currency, treatment)][name] += int(getattr(item, name) or 0)
    return {key: dict(value) for key, value in summed.items()}


# (billing country, VAT number, price, currency) -> (net, tax, charged, rate, country, treatment)
CASES = {
    "IT consumer, 22% included": (("IT", None, 999, "EUR"), (819, 180, 999, "22", "IT", "domestic")),
    "DE consumer, 19% through the OSS": (("DE", None, 999, "EUR"), (839, 160, 999, "19", "DE", "oss")),
    "DE business, reverse charge": (("DE", "DE136695976", 999, "EUR"), (999, 0, 999, "0", "DE", "reverse_charge")),
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
    [line] = receipt.TaxLines
    assert (line.Net, line.Tax, line.Gross, line.TaxRate) == (net, tax, charged, rate)
    assert (line.PeriodStart, line.PeriodEnd) == ("2027-02-15", "2027-03-14")
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
    assert batches.owed_amount(fresh(consumer)) == 1220 and batches.owed_amount(fresh(business)) == 1000
    with at(D):
        batches.run_payments(run_date=D, workers=2, catch_up_days=0)
    [it], [fr] = receipts_of(consumer), receipts_of(business)
    assert (it.Net, it.Tax, it.ProcessedAmount, it.PricesIncludeTax) == (1000, 220, 1220, False)
    assert (fr.Net, fr.Tax, fr.ProcessedAmount, fr.TaxTreatment) == (1000, 0, 1000, "reverse_charge")
    charged = {c["metadata"]["sub_id"]: c["amount"] for c in get_gateway().charges_made(billing_date=D.isoformat())}
    assert charged == {consumer.sub_id: 1220, business.sub_id: 1000}


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
    # one block of receipt numbers (+1 UpdateItem), two index Queries; per payment one
    # TransactWriteItems (receipt, event, number look-up and the tax totals) and one advance.
    assert ddb_requests.by_name() == Counter({"PutItem": 1, "TransactWriteItems": 20, "UpdateItem": 22, "Query": 2})


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
    assert [(n.Gross, n.Tax, n.Net) for n in notes] == [(-333, -53, -280), (-333, -53, -280), (-334, -54, -280)]
    assert sum(n.Tax for n in notes) == -160 and sum(n.Net for n in notes) == -840
    assert len({n.Number for n in notes}) == 3 and all(n.Number.startswith("CN-2027-") for n in notes)
    assert all(n.InvoiceNumber == receipt.Number and n.Reason == "goodwill" for n in notes)
    assert access.get_credit_note(receipt.account_id, notes[0].Number).RefundId == receipt.Refunds[0].RefundId
    assert [n.Number for n in access.get_credit_notes_by_account(receipt.account_id)] == \
        [n.Number for n in reversed(notes)]
    # The invoice itself is unchanged: its tax, its net.
    assert (receipt.Net, receipt.Tax, receipt.ProcessedAmount) == (840, 160, 1000)
    second = access.tax_totals("2027Q2")
    assert {i.SK.rsplit("#", 1)[0] for i in second} == {"DE#19#EUR#oss"}
    assert (sum(i.Net for i in second), sum(i.Tax for i in second), sum(i.Invoices for i in second)) == (-840, -160, 0)
    assert totals() == {("DE", "19", "EUR", "oss"): {"Net": 840, "Tax": 160, "Gross": 1000, "Invoices": 1}}


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
    shares = [refund_share(net=net, tax=tax, gross=gross, earlier=amounts[:i], refund=a)
              for i, a in enumerate(amounts)]
    assert sum(s.tax for s in shares) == tax and sum(s.net for s in shares) == net
    assert all(s.net + s.tax == s.gross and s.tax >= 0 for s in shares)
    for share, amount in zip(shares[:-1], amounts[:-1], strict=True):  # each its share, rounded half up
        assert abs(share.tax - Decimal(tax) * amount / gross) <= Decimal("0.5")


def test_rates_are_written_as_the_report_keys_them() -> None:
    assert [rate_text(Decimal(x)) for x in ("22", "25.5", "0", "25.50", "10.0")] == ["22", "25.5", "0", "25.5", "10"]
    assert total_shard("ACC#a" + "REC#x") == total_shard("ACC#a" + "REC#x") < TOTAL_SHARDS
    assert len({total_shard(f"k{n}") for n in range(500)}) == TOTAL_SHARDS


def test_a_tax_total_is_an_entity_of_the_table() -> None:
    assert TaxTotal.sk(country="DE", rate="19", currency="EUR", treatment="oss", shard="03") == "DE#19#EUR#oss#03"
