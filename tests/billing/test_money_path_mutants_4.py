"""Behaviour of the money path that its mutants showed untested (docs/MUTATION.md), fourth
part: the tax ledger (billing/access/tax_ledger.py) and the batches' writes
(billing/access/batch_writes.py), measured again on 4 Dec 2026 (evening). The ledger's
pieces are called directly here, item by item, so that each figure, key and name a total
gets is pinned without a whole payment run. Pure or moto-backed, each test about a second.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from types import SimpleNamespace

import pytest

from billing.access import tax_ledger
from billing.access.tax_ledger import (
    InvoiceSeller,
    add_receipt_totals,
    add_totals,
    tax_totals,
    write_invoice_tax,
)
from billing.models import Receipt, SellerMap, TaxTotal
from billing.rules.invoice_tax import total_shard
from billing.rules.tax import Rate, Seller, TaxLine, Treatment
from core.dynamo.engine import transact_write
from tests.billing.test_tax_ledger import IT_VAT, use_seller

pytestmark = pytest.mark.django_db(databases=[])

QUARTER = "2027Q1"
ITALY = Seller(country="IT", vat_number=IT_VAT, oss_registered=True, under_threshold=False,
               prices_include_tax=True, registrations={})


def document(n: int, *, net: int | None = 1000, tax: int = 220, country: str | None = "IT", rate: str = "22",
             treatment: str = "domestic", buyer_vat: str | None = None, seller: SellerMap | None = None,
             currency: str = "EUR", processed: str = "2027-02-15T12:00:00+00:00") -> SimpleNamespace:
    """What ``add_totals`` reads of an invoice (a receipt) or a credit note."""
    return SimpleNamespace(PK=f"ACCOUNT#a{n}", SK=f"RECEIPT#r{n}", Net=net, Tax=tax, TaxCountry=country,
                           TaxRate=rate, TaxTreatment=treatment, Currency=currency, BuyerVatNumber=buyer_vat,
                           Seller=seller, ProcessedDate=processed)


def italian_seller(name: str | None = "Rpay S.r.l.", country: str | None = "IT") -> SellerMap:
    return SellerMap(Name=name, Address="Via Roma 1", Country=country, VatNumber=IT_VAT)


def totals_by_key(quarter: str = QUARTER) -> dict[str, TaxTotal]:
    return {item.SK: item for item in tax_totals(quarter)}


def shard_of(item: SimpleNamespace) -> str:
    return f"{total_shard(item.PK + item.SK):02d}"


# --- the quarter's totals ----------------------------------------------------------------


def test_an_invoice_adds_its_figures_to_its_own_total_and_shard_named_by_its_seller(moto_table) -> None:
    first, second = document(1, seller=italian_seller()), document(2, net=500, tax=110, seller=italian_seller())
    with transact_write() as tx:
        add_receipt_totals(tx, first)
    with transact_write() as tx:
        add_totals(tx, second, quarter=QUARTER, invoices=0)  # a credit note's figures count no invoice
    found = totals_by_key()
    keys = {f"SELLER#{IT_VAT}#IT#22#EUR#domestic#{shard_of(first)}",
            f"SELLER#{IT_VAT}#IT#22#EUR#domestic#{shard_of(second)}"}
    assert set(found) == keys and shard_of(first) != shard_of(second)
    one = found[f"SELLER#{IT_VAT}#IT#22#EUR#domestic#{shard_of(first)}"]
    assert (one.PK, one.Net, one.Tax, one.Gross, one.Invoices) == (f"TAXQ#{QUARTER}", 1000, 220, 1220, 1)
    assert (one.SellerName, one.SellerCountry) == ("Rpay S.r.l.", "IT")
    two = found[f"SELLER#{IT_VAT}#IT#22#EUR#domestic#{shard_of(second)}"]
    assert (two.Net, two.Tax, two.Gross, two.Invoices) == (500, 110, 610, 0)
    raw = TaxTotal.get(f"TAXQ#{QUARTER}", one.SK, attributes_to_get=["EntityType"])
    assert raw.EntityType is TaxTotal  # the item is a TaxTotal of the table


def test_each_part_of_a_total_s_key_is_the_document_s(moto_table) -> None:
    item = document(3, country="DE", rate="19", treatment="oss", currency="USD", seller=italian_seller())
    with transact_write() as tx:
        add_receipt_totals(tx, item)
    [key] = totals_by_key()
    assert key == f"SELLER#{IT_VAT}#DE#19#USD#oss#{shard_of(item)}"


def test_a_reverse_charge_sale_adds_its_net_to_the_buyer_s_sales_too(moto_table) -> None:
    item = document(4, tax=0, country="DE", rate="0", treatment="reverse_charge", buyer_vat="DE136695976",
                    seller=italian_seller())
    with transact_write() as tx:
        add_receipt_totals(tx, item)
    found = totals_by_key()
    sales = found.pop(f"SELLER#{IT_VAT}#RC#DE136695976#EUR")
    assert (sales.PK, sales.Net, sales.SellerName, sales.SellerCountry) == (f"TAXQ#{QUARTER}", 1000, "Rpay S.r.l.", "IT")
    assert sales.is_reverse_charge_sales
    [total] = found.values()
    assert (total.Net, total.Tax, total.Gross, total.Invoices) == (1000, 0, 1000, 1)


def test_only_a_reverse_charge_with_the_buyer_s_number_is_a_reverse_charge_sale(moto_table) -> None:
    """A domestic business (a VAT number, no reverse charge) and a reverse charge without a
    number kept add to their rate's total only."""
    domestic = document(5, buyer_vat="IT12345670017", seller=italian_seller())
    unnamed = document(6, tax=0, country="DE", rate="0", treatment="reverse_charge", seller=italian_seller())
    for item in (domestic, unnamed):
        with transact_write() as tx:
            add_receipt_totals(tx, item)
    assert not any(item.is_reverse_charge_sales for item in tax_totals(QUARTER))
    assert len(tax_totals(QUARTER)) == 2


def test_a_document_without_tax_figures_adds_to_no_total(moto_table) -> None:
    for item in (document(7, net=None, seller=italian_seller()), document(8, country=None, seller=italian_seller())):
        with transact_write() as tx:
            add_receipt_totals(tx, item)
            tx.update(TaxTotal(TaxTotal.pk(quarter="2000Q1"), "SELLER#X"), actions=[TaxTotal.Net.add(1)])
    assert tax_totals(QUARTER) == []


def test_a_document_counts_for_the_seller_it_names_not_today_s(moto_table, monkeypatch) -> None:
    use_seller(monkeypatch)  # today's seller: Italian, "Rpay S.r.l."
    old = SellerMap(Name="Old Seller GmbH", Address=None, Country="DE", VatNumber="DE136695976")
    named, unnamed = document(9, seller=old), document(10, seller=None)
    for item in (named, unnamed):
        with transact_write() as tx:
            add_receipt_totals(tx, item)
    found = totals_by_key()
    mine = found[f"SELLER#DE136695976#IT#22#EUR#domestic#{shard_of(named)}"]
    assert (mine.SellerName, mine.SellerCountry) == ("Old Seller GmbH", "DE")
    today = found[f"SELLER#{IT_VAT}#IT#22#EUR#domestic#{shard_of(unnamed)}"]  # none kept: today's
    assert (today.SellerName, today.SellerCountry) == ("Rpay S.r.l.", "IT")


def test_a_seller_without_a_name_or_a_country_leaves_them_unset(moto_table) -> None:
    bare = SellerMap(Name=None, Address=None, Country=None, VatNumber="GB123456789")
    item = document(11, seller=bare)
    with transact_write() as tx:
        add_receipt_totals(tx, item)
    [total] = tax_totals(QUARTER)
    assert total.SK.startswith("SELLER#GB123456789#IT#")
    assert (total.SellerName, total.SellerCountry, total.Net) == (None, None, 1000)
    # A later document of the same seller's total that names no seller keeps the name it has.
    item = document(14, seller=italian_seller())
    with transact_write() as tx:
        add_receipt_totals(tx, item)
    again = document(14, seller=SellerMap(Name=None, Address=None, Country=None, VatNumber=IT_VAT))
    with transact_write() as tx:
        add_receipt_totals(tx, again)
    [kept] = [t for t in tax_totals(QUARTER) if t.SK.startswith(f"SELLER#{IT_VAT}#")]
    assert (kept.SellerName, kept.SellerCountry, kept.Net, kept.Invoices) == ("Rpay S.r.l.", "IT", 2000, 2)
    no_number = document(12, seller=SellerMap(Name="Shop", Address=None, Country="us", VatNumber=None))
    with transact_write() as tx:
        add_receipt_totals(tx, no_number)
    assert any(t.SK.startswith("SELLER#US-NOVAT#IT#") and t.SellerCountry == "us" for t in tax_totals(QUARTER))


def test_an_invoice_counts_in_the_quarter_of_its_day_in_the_billing_zone(moto_table, settings) -> None:
    settings.BILLING_TIMEZONE = "Europe/Rome"
    late = document(13, seller=italian_seller(), processed="2027-03-31T22:30:00+00:00")  # 1 April in Rome
    with transact_write() as tx:
        add_receipt_totals(tx, late)
    assert tax_totals(QUARTER) == [] and len(tax_totals("2027Q2")) == 1
    assert tax_ledger.quarter_of_moment(datetime(2027, 3, 31, 22, 30, tzinfo=UTC)) == "2027Q2"
    assert tax_ledger.quarter_of_moment("2027-03-31T21:30:00+00:00") == "2027Q1"


# --- an invoice's tax on its receipt -----------------------------------------------------


def italian_tax(*, include: bool = True, vat: str | None = None) -> tax_ledger.InvoiceTax:
    seller = InvoiceSeller(ITALY, "Rpay S.r.l.", "Via Roma 1")
    line = TaxLine(net=819, tax=180, gross=999, rate=Rate(Decimal("22.0"), "IT", Treatment.DOMESTIC))
    return tax_ledger.InvoiceTax(line=line, prices_include_tax=include, seller=seller, buyer_country="IT",
                                 buyer_vat_number=vat)


def test_a_receipt_gets_every_tax_attribute_and_one_line_for_its_charge() -> None:
    receipt = Receipt(ProductName=None, SKU="pro-monthly", PeriodStart="2027-02-15", PeriodEnd="2027-03-14",
                      BillingAddress="Ann Rossi\n Via Po 2 \n")
    write_invoice_tax(receipt, italian_tax(include=False, vat="IT12345670017"))
    assert (receipt.Net, receipt.Tax, receipt.TaxRate, receipt.TaxCountry) == (819, 180, "22", "IT")
    assert (receipt.TaxTreatment, receipt.PricesIncludeTax) == ("domestic", False)
    [line] = receipt.TaxLines
    assert line.as_dict() == {"Description": "pro-monthly", "PeriodStart": "2027-02-15", "PeriodEnd": "2027-03-14",
                              "Net": 819, "TaxRate": "22", "Tax": 180, "Gross": 999}
    assert receipt.Seller.as_dict() == {"Name": "Rpay S.r.l.", "Address": "Via Roma 1", "Country": "IT",
                                        "VatNumber": IT_VAT}
    assert (receipt.BuyerCountry, receipt.BuyerVatNumber, receipt.BuyerName) == ("IT", "IT12345670017", "Ann Rossi")
    named = Receipt(ProductName="Pro", SKU="pro-monthly", BillingAddress="Via Po 2")
    write_invoice_tax(named, italian_tax())
    assert named.TaxLines[0].Description == "Pro" and named.BuyerName is None and named.PricesIncludeTax is True


def test_a_buyer_s_name_is_the_first_of_several_lines() -> None:
    assert tax_ledger.buyer_name("Ann Rossi\nVia Po 2\nTorino") == "Ann Rossi"
    assert tax_ledger.buyer_name(" \nAnn Rossi \n\nVia Po 2") == "Ann Rossi"
    for single in ("Via Po 2", "", None, "\n \n"):
        assert tax_ledger.buyer_name(single) is None


def test_the_seller_on_an_invoice_and_its_terms_come_from_its_profile(moto_table, monkeypatch) -> None:
    use_seller(monkeypatch)
    seller = tax_ledger.invoice_seller()
    assert (seller.name, seller.address, seller.tax.country, seller.tax.vat_number) == (
        "Rpay S.r.l.", "Via Roma 1\n00184 Roma", "IT", IT_VAT)
    buyer = SimpleNamespace(BillingCountry="de", VatNumber=None)
    terms = tax_ledger.tax_terms(buyer)
    assert (terms.seller, terms.buyer.country, terms.buyer.vat_number) == (seller.tax, "DE", None)
    us = Seller(country="US", vat_number=None, oss_registered=False, under_threshold=False,
                prices_include_tax=False, registrations={})
    nowhere = tax_ledger.tax_terms(SimpleNamespace(BillingCountry=None, VatNumber="X1"), us)
    assert (nowhere.seller, nowhere.buyer.country, nowhere.buyer.vat_number) == (us, "US", "X1")


def test_a_charge_s_tax_is_its_metadata_s_else_the_rate_of_its_day(moto_table, monkeypatch) -> None:
    use_seller(monkeypatch, include=True)
    sub = SimpleNamespace(BillingCountry="DE", VatNumber=None)
    computed = tax_ledger.invoice_tax(sub, amount=1190, on=date(2027, 2, 15))
    assert (computed.line.net, computed.line.tax, computed.line.rate.country) == (1000, 190, "DE")
    assert (computed.prices_include_tax, computed.buyer_country, computed.buyer_vat_number) == (True, "DE", None)
    assert computed.seller.name == "Rpay S.r.l."
    business = tax_ledger.invoice_tax(SimpleNamespace(BillingCountry="DE", VatNumber="DE136695976"), amount=1000,
                                      on=date(2027, 2, 15))
    assert (business.buyer_country, business.buyer_vat_number, business.line.tax) == ("DE", "DE136695976", 0)
    # at the rate of the invoice's day: Finland's 24% until 31 August 2024 (25.5% since)
    finnish = tax_ledger.invoice_tax(SimpleNamespace(BillingCountry="FI", VatNumber=None), amount=1240,
                                     on=date(2024, 8, 1))
    assert (finnish.line.net, finnish.line.tax, finnish.line.rate.percent) == (1000, 240, 24)
    # What the charge carried (a rate of its day, not today's) is what is invoiced.
    carried = {"tax_rate": "16", "tax_country": "DE", "tax_treatment": "oss", "net": "1026", "tax": "164",
               "prices_include_tax": "0"}
    charged = tax_ledger.invoice_tax(sub, amount=1190, on=date(2027, 2, 15), metadata=carried)
    assert (charged.line.net, charged.line.tax, charged.line.gross, charged.line.rate.percent) == (1026, 164, 1190, 16)
    assert charged.prices_include_tax is False
    assert tax_ledger.invoice_tax(sub, amount=1190, on=date(2027, 2, 15),
                                  metadata={**carried, "prices_include_tax": "1"}).prices_include_tax is True
    # A buyer without a country is the seller's own: the seller the charge is invoiced by,
    # not the profile read again (here another seller's).
    us = InvoiceSeller(Seller(country="US", vat_number=None, oss_registered=False, under_threshold=False,
                              prices_include_tax=True, registrations={}), "Shop Inc.", None)
    home = tax_ledger.invoice_tax(SimpleNamespace(BillingCountry=None, VatNumber=None), amount=500,
                                  on=date(2027, 2, 15), seller=us)
    assert (home.buyer_country, home.seller, home.line.gross) == ("US", us, 500)


# --- the batches' conditional writes -----------------------------------------------------


def test_an_upcoming_invoice_is_announced_once_while_its_payment_is_due(moto_table) -> None:
    """The claim (``UpcomingNoticeFor``) and the merchant's ``invoice.upcoming`` are one
    transaction on the payment's day: a second run holding a copy read before writes
    neither again; the next period's payment is announced again; a payment no longer due
    that day is not, nor one of a subscription no longer live."""
    from billing import access
    from billing.models import MerchantEventType, Subscription
    from tests.billing.test_money_path_mutants import DUE, due_sub, merchant_events
    from tests.builders import fresh

    sub = due_sub(41)

    def notice():
        return access.new_merchant_event(MerchantEventType.INVOICE_UPCOMING, account_id=sub.account_id,
                                         object_type="upcoming_payment", object_id=sub.sub_id, data={"amount": 999})

    def announced() -> list:
        return [e for e in merchant_events(sub) if e.Type == "invoice.upcoming"]

    stale = fresh(sub)
    access.update_subscription(fresh(sub), [Subscription.RetryCount.set(0)])  # the version moves on
    assert access.record_upcoming_invoice(stale, DUE, notice()) is True  # the day, not the version
    assert fresh(sub).UpcomingNoticeFor == DUE.isoformat()
    assert access.record_upcoming_invoice(stale, DUE, notice()) is False
    assert [(e.ObjectType, e.ObjectId) for e in announced()] == [("upcoming_payment", sub.sub_id)]
    assert access.record_upcoming_invoice(fresh(sub), date(2027, 3, 16), notice()) is False  # not due then
    following = date(2027, 4, 15)
    access.set_schedule(fresh(sub), next_payment=following, last_payment=DUE, next_reminder=date(2027, 4, 8),
                        last_reminder=date(2027, 3, 8))
    assert access.record_upcoming_invoice(fresh(sub), following, notice()) is True
    assert fresh(sub).UpcomingNoticeFor == following.isoformat() and len(announced()) == 2
    access.cancel_subscription(fresh(sub), actor="customer")
    assert access.record_upcoming_invoice(fresh(sub), following, notice()) is False  # no longer live
    assert len(announced()) == 2


def test_a_payment_after_cancel_extends_a_copy_read_before_another_write(moto_table) -> None:
    """The extension's condition is the cancelled status and the paid-through day, not the
    version: a copy read before another write of the subscription still extends it."""
    from billing import access
    from billing.models import AuditAction, Subscription
    from tests.billing.test_money_path_mutants import DUE, due_sub, events
    from tests.builders import fresh

    sub = due_sub(42)
    access.cancel_subscription(sub, actor="customer")
    stale = fresh(sub)
    access.update_subscription(fresh(sub), [Subscription.RetryCount.set(0)])  # the version moves on
    assert fresh(sub).Version != stale.Version
    access.extend_after_cancel(stale, paid_period=DUE, paid_through=date(2027, 4, 14))
    after = fresh(sub)
    assert (after.PaidThroughDate, after.LastPaymentDate, after.Status) == ("2027-04-14", "2027-03-15", "cancelled")
    assert len(events(sub, AuditAction.PAID_AFTER_CANCEL)) == 1


def test_a_payment_writes_active_no_retries_and_its_next_reminder_as_stored_values(moto_table) -> None:
    """What the table holds after a past-due subscription is paid (the raw item: a NULL
    would be read back as the attribute's default)."""
    from billing import access
    from billing.models import Subscription
    from tests.billing.test_money_path_mutants import DUE, due_sub
    from tests.builders import fresh

    sub = due_sub(43)
    access.mark_past_due(sub, slot=DUE, period=DUE, failed_retries=1, retry_on=date(2027, 3, 18),
                         next_reminder=None)
    assert fresh(sub).NextReminderDate is None
    access.advance_after_payment(fresh(sub), slot=date(2027, 3, 18), paid_period=DUE, next_payment=date(2027, 4, 15),
                                 next_reminder=date(2027, 4, 8))
    raw = Subscription._get_connection().get_item(sub.PK, range_key=sub.SK, consistent_read=True)["Item"]
    assert raw["Status"] == {"S": "active"} and raw["RetryCount"] == {"N": "0"}
    assert raw["NextReminderDate"] == {"S": "2027-04-08"} and "BillingPeriod" not in raw


@pytest.mark.parametrize("status", ["incomplete_expired", "cancelled"])
def test_a_charge_never_starts_a_subscription_that_is_neither_live_nor_incomplete(moto_table, status) -> None:
    """Its charge is refunded instead; the subscription stays as it was, still due on the slot."""
    from billing import access
    from billing.models import Subscription
    from tests.billing.test_money_path_mutants import DUE, due_sub
    from tests.builders import fresh

    sub = due_sub(44)
    access.update_subscription(sub, [Subscription.Status.set(status)])
    with pytest.raises(access.ConditionFailed):
        access.advance_after_payment(fresh(sub), slot=DUE, paid_period=DUE, next_payment=date(2027, 4, 15),
                                     next_reminder=date(2027, 4, 8))
    after = fresh(sub)
    assert (after.Status, after.NextPaymentDate, after.PaidThroughDate) == (status, "2027-03-15", sub.PaidThroughDate)
    access.update_subscription(after, [Subscription.Status.set("incomplete")])
    access.advance_after_payment(fresh(sub), slot=DUE, paid_period=DUE, next_payment=date(2027, 4, 15),
                                 next_reminder=date(2027, 4, 8))
    assert fresh(sub).Status == "active"  # an incomplete one's first charge starts it


@pytest.mark.parametrize("first", [False, True], ids=["renewal", "first payment"])
def test_a_payment_advances_a_copy_read_before_another_write(moto_table, first) -> None:
    """The advance's condition is the slot (and, for a first payment, still unpaid), not
    the version: a run's copy read before another write still advances it, once."""
    from billing import access
    from billing.models import Subscription
    from tests.billing.test_money_path_mutants import DUE, due_sub
    from tests.builders import fresh

    sub = due_sub(45)
    if first:  # nothing paid yet: its LastPaymentDate is the period being paid
        access.update_subscription(sub, [Subscription.LastPaymentDate.set(DUE.isoformat())])
    stale = fresh(sub)
    access.update_subscription(fresh(sub), [Subscription.RetryCount.set(0)])  # the version moves on
    access.advance_after_payment(stale, slot=DUE, paid_period=DUE, next_payment=date(2027, 4, 15),
                                 next_reminder=date(2027, 4, 8))
    after = fresh(sub)
    assert (after.NextPaymentDate, after.PaidThroughDate, after.Status) == ("2027-04-15", "2027-04-14", "active")


def test_a_decline_marks_a_copy_read_before_another_write_past_due(moto_table) -> None:
    """As the advance: the slot's condition, not the version."""
    from billing import access
    from billing.models import Subscription
    from tests.billing.test_money_path_mutants import DUE, due_sub
    from tests.builders import fresh

    sub = due_sub(46)
    stale = fresh(sub)
    access.update_subscription(fresh(sub), [Subscription.RetryCount.set(0)])  # the version moves on
    access.mark_past_due(stale, slot=DUE, period=DUE, failed_retries=1, retry_on=date(2027, 3, 18),
                         next_reminder=date(2027, 4, 8), amount=999)
    after = fresh(sub)
    assert (after.Status, after.RetryCount, after.NextPaymentDate) == ("past_due", 1, "2027-03-18")


def test_a_reminder_is_claimed_from_a_copy_read_before_another_write(moto_table) -> None:
    """The claim's condition is the reminder day, not the version."""
    from billing import access
    from billing.models import Subscription
    from tests.billing.test_money_path_mutants import due_sub
    from tests.builders import fresh

    sub = due_sub(47)
    stale = fresh(sub)
    access.update_subscription(fresh(sub), [Subscription.RetryCount.set(0)])  # the version moves on
    access.claim_reminder(stale, day=date(2027, 3, 8), next_reminder=date(2027, 4, 8))
    assert (fresh(sub).LastReminderDate, fresh(sub).NextReminderDate) == ("2027-03-08", "2027-04-08")
    # a second run holding the same reminder day (its copy read before the claim) claims nothing
    with pytest.raises(access.ConditionFailed):
        access.claim_reminder(stale, day=date(2027, 3, 8), next_reminder=date(2027, 4, 8))
    assert fresh(sub).NextReminderDate == "2027-04-08"
