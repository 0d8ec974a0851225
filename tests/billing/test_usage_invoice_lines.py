"""The usage line of an invoice is one line a tier of its price (docs/USAGE.md "Billing a
period", docs/MONEY.md "Usage lines by tier"): graduated, volume, package and per-unit
prices, with the fixed fee and alone (a cancellation's charge), tax included or added;
the lines sum exactly to the one usage line they replace (the receipt's totals and the
event's ``UsageNet`` unchanged), and are worded in the reader's language on the page, the
PDF and the API; a receipt of the old shape (one usage line, no tier) still shows as before."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.utils import translation
from hypothesis import given, settings
from hypothesis import strategies as st

from billing import access
from billing.access.receipts import build_receipt
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation, Receipt
from billing.operations.metered import priced_usage
from billing.operations.payments import receipt_subject
from billing.rules.api_objects import receipt_object
from billing.rules.invoice import invoice_of
from billing.rules.pricing import (
    BillingScheme,
    PriceTerms,
    Tier,
    TiersMode,
    UsagePart,
    amount_for,
    amount_parts,
)
from billing.rules.tax import Rate, Treatment, tax_line
from billing.rules.usage_lines import share_tax, split_usage
from billing.rules.usage_metadata import usage_metadata
from core.mail import send_customer_email
from tests.billing.test_tax_documents import CUSTOMER_ADDRESS, ITALY, SELLER_ADDRESS, SELLER_NAME, pdf_lines
from tests.builders import TEST_CARD

pytestmark = pytest.mark.django_db

DAY = date(2027, 3, 15)
RATE = Rate(Decimal(22), "IT", Treatment.DOMESTIC)
GRADUATED = PriceTerms("EUR", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                       tiers=(Tier(1000, Decimal(0)), Tier(None, Decimal("0.2"), 500)))
MODELS = {
    # 1,000 free, then 235 at 0.2 cents (47) plus the tier's flat 5.00
    "graduated": (GRADUATED, ["api_calls: 1,000 calls free", "api_calls: 235 calls × €0.002 plus €5.00"]),
    # a tier that is not free: each tier's line has its own net
    "graduated, first tier paid": (PriceTerms("EUR", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                                              tiers=(Tier(1000, Decimal("0.1")), Tier(None, Decimal("0.2")))),
                                   ["api_calls: 1,000 calls × €0.001", "api_calls: 235 calls × €0.002"]),
    "volume": (PriceTerms("EUR", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                          tiers=(Tier(1000, Decimal(1)), Tier(None, Decimal("0.5")))),
               ["api_calls: 1,235 calls × €0.005"]),
    "package": (PriceTerms("EUR", unit_amount=Decimal(500), package_size=1000),
                ["api_calls: 2 packages of 1,000 calls × €5.00"]),
    "per_unit": (PriceTerms("EUR", unit_amount=Decimal("0.5")), ["api_calls: 1,235 calls × €0.005"]),
}


@pytest.fixture(autouse=True)
def _day():
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        yield


def _usage_receipt(customer, terms: PriceTerms, *, alone: bool = False, include: bool = True,
                   tiers: bool = True, write: bool = False) -> tuple[Receipt, dict]:
    """A receipt of 1,235 calls at ``terms`` (with a fixed fee of 9.99 unless ``alone``),
    taxed at 22% as the charge was; ``tiers`` False: as written before the tiers (one line)."""
    if access.get_product("API") is None:
        meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
        access.create_product("API", "Developer API", 999, "EUR")
    price = price_actions.add_price("API", terms, actor="test", meter="api_calls", unit_label="call")
    account = access.get_account(customer.account_id)
    sub = access.create_subscription(
        account, sku="API", payment_day=15, amount=999, currency="EUR", card=TEST_CARD, today=DAY,
        reminder_days_before=7, product_name="Developer API", billing_address=CUSTOMER_ADDRESS)
    usage = priced_usage(price, date(2027, 2, 15), DAY, 1235)
    price_side = (0 if alone else 999) + usage.amount
    line = tax_line(price_side, RATE, prices_include_tax=include)
    tax = access.InvoiceTax(line=line, prices_include_tax=include,
                            seller=access.InvoiceSeller(ITALY, SELLER_NAME, SELLER_ADDRESS),
                            buyer_country="IT", buyer_vat_number=None)
    charge = {"billing_date": DAY, "amount": line.gross, "currency": "EUR", "charge_id": "ch_usage",
              "retention_days": 200, "period_end": DAY + timedelta(days=30), "tax": tax,
              "kind": "usage" if alone else None, "usage": usage_metadata((usage,)),
              "priced": (usage,) if tiers else ()}
    if write:
        receipt, _ = access.create_receipt(sub, **charge)
        return receipt, {}
    receipt, _, event = build_receipt(sub, number="R-2027-000001", **charge)
    return receipt, event.After


@pytest.mark.parametrize("alone", [False, True], ids=["with the fixed fee", "alone"])
@pytest.mark.parametrize("model", sorted(MODELS))
def test_the_usage_is_a_line_a_tier_summing_to_the_one_usage_line(customer, model: str, alone: bool) -> None:
    terms, words = MODELS[model]
    for include in (True, False):
        receipt, event = _usage_receipt(customer, terms, alone=alone, include=include)
        old, old_event = _usage_receipt(customer, terms, alone=alone, include=include, tiers=False)
        fixed_lines = 0 if alone else 1
        usage_lines = receipt.TaxLines[fixed_lines:]
        [one] = old.TaxLines[fixed_lines:]
        assert [int(u.UsageUnits) for u in usage_lines] == [p.units for p in amount_parts(terms, 1235)
                                                            if p.units or p.amount]
        for figure in ("Net", "Tax", "Gross"):  # exactly the one usage line they replace
            assert sum(int(getattr(u, figure)) for u in usage_lines) == int(getattr(one, figure)), figure
        price_side = "Gross" if include else "Net"
        assert [int(getattr(u, price_side)) for u in usage_lines] == [p.amount for p in amount_parts(terms, 1235)
                                                                      if p.units or p.amount]
        assert (receipt.Net, receipt.Tax, receipt.ProcessedAmount) == (old.Net, old.Tax, old.ProcessedAmount)
        assert sum(int(line.Gross) for line in receipt.TaxLines) == receipt.ProcessedAmount
        assert event["UsageNet"] == old_event["UsageNet"] == sum(int(u.Net) for u in usage_lines)
        document = invoice_of(receipt)
        assert document is not None
        assert [line.description for line in document.lines[fixed_lines:]] == words
        assert (document.net, document.tax, document.gross) == (receipt.Net, receipt.Tax, receipt.ProcessedAmount)


def test_the_page_pdf_and_api_word_the_tiers_and_an_old_receipt_shows_as_before(customer, tmp_path) -> None:
    receipt, _ = _usage_receipt(customer, GRADUATED, write=True)
    html = customer.client.get(f"/receipts/{receipt.Number}/").content.decode()
    assert "api_calls: 1,000 calls free" in html and "api_calls: 235 calls × €0.002 plus €5.00" in html
    italian = customer.client.get(f"/receipts/{receipt.Number}/", HTTP_ACCEPT_LANGUAGE="it").content.decode()
    assert "api_calls: 1.000 calls gratis" in italian
    text = pdf_lines(customer.client.get(f"/receipts/{receipt.Number}/pdf/").content, tmp_path)
    assert "api_calls: 1,000 calls free" in text and "235 calls × €0.002" in text
    # the receipt e-mail: the document made before the e-mail's language is, worded in it
    mail.outbox.clear()
    send_customer_email("receipt", customer.email, receipt_subject(receipt), language="it", context={
        "product": receipt.ProductName, "amount": "10,46 €", "billing_date": receipt.BillingDate,
        "period_start": receipt.PeriodStart, "period_end": receipt.PeriodEnd, "charge_id": "ch_usage",
        "next_payment": receipt.PeriodEnd, "receipt_number": receipt.Number, "receipt_path": "/receipts/x/",
        "doc": invoice_of(receipt)})
    [message] = mail.outbox
    assert "api_calls: 1.000 calls gratis" in message.body and "api_calls: 1.000 calls gratis" in \
        message.alternatives[0][0]
    with translation.override("it"):
        lines = receipt_object(receipt)["tax"]["lines"]
    assert [line["description"] for line in lines[1:]] == MODELS["graduated"][1]  # the API: English
    assert lines[2]["usage"] == {"quantity": 235, "unit_amount_decimal": "0.2", "flat_amount": 500,
                                 "package_size": None, "unit_label": "call"}
    assert lines[0]["usage"] is None

    old, _ = _usage_receipt(customer, GRADUATED, tiers=False, write=True)
    [_, usage] = old.TaxLines
    assert usage.Description == "api_calls × 1235" and usage.UsageUnits is None
    html = customer.client.get(f"/receipts/{old.Number}/").content.decode()
    assert "api_calls × 1235" in html
    assert [line["description"] for line in receipt_object(old)["tax"]["lines"]] == ["Developer API",
                                                                                    "api_calls × 1235"]


parts = st.lists(st.builds(lambda units, amount: UsagePart(units, Decimal(0), 0, amount),
                           st.integers(0, 10**6), st.integers(0, 10**7)), min_size=1, max_size=6)


@settings(max_examples=30, deadline=None)
@given(parts, st.sampled_from(["0", "4", "10", "19", "22", "25.5"]), st.booleans())
def test_the_tax_is_shared_by_largest_remainder_and_the_lines_sum_exactly(shown, percent, include) -> None:
    total = sum(p.amount for p in shown)
    whole = tax_line(total, Rate(Decimal(percent), "IT", Treatment.DOMESTIC), prices_include_tax=include)
    split = split_usage(shown, net=whole.net, tax=whole.tax, gross=whole.gross, prices_include_tax=include)
    assert split is not None
    assert (sum(s.net for s in split), sum(s.tax for s in split), sum(s.gross for s in split)) == \
        (whole.net, whole.tax, whole.gross)
    kept = [p for p in shown if p.units or p.amount] or shown[:1]
    assert [s.part for s in split] == kept
    for line in split:
        assert line.net + line.tax == line.gross and min(line.net, line.tax) >= 0
        assert (line.gross if include else line.net) == line.part.amount
        if total:  # within one minor unit of the line's exact share of the tax
            assert abs(line.tax * total - whole.tax * line.part.amount) < total
    # parts that are not the line's: no split (the caller keeps the one line)
    assert split_usage(shown, net=whole.net + 1, tax=whole.tax, gross=whole.gross + 1,
                       prices_include_tax=include) is None


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.lists(st.integers(0, 10**6), min_size=1, max_size=8))
def test_share_tax_sums_to_the_tax(tax, amounts) -> None:
    shares = share_tax(tax, amounts)
    assert sum(shares) == tax and len(shares) == len(amounts)
    # a graduated price at 0 enters no tier: no parts, so the one usage line ("api_calls × 0")
    assert amount_for(GRADUATED, 0) == 0 and split_usage(amount_parts(GRADUATED, 0), net=0, tax=0, gross=0,
                                                         prices_include_tax=True) is None


def test_a_refund_s_credit_note_credits_each_line_its_part(customer) -> None:
    # Half of the receipt back, then the rest: each credit note names the lines it takes
    # part of (the fee and the paid tier; the free tier holds nothing), their figures add
    # up to the note's, and the two notes give each line back exactly. A line credited in
    # full keeps its tier's words; a part of one is named by its description alone.
    receipt, _ = _usage_receipt(customer, GRADUATED, write=True)
    gross = int(receipt.ProcessedAmount)
    for n, amount in enumerate((gross // 2, gross - gross // 2)):
        receipt, _ = access.record_refund(access.get_receipt(receipt.account_id, receipt.SK), refund_id=f"re_{n}",
                                          amount=amount, actor="staff:ann")
    notes = sorted(access.credit_notes_of_receipt(receipt), key=lambda note: note.Number)
    assert len(notes) == 2
    for note in notes:
        assert sum(int(line.Gross) for line in note.TaxLines) == int(note.Gross)
        assert sum(int(line.Tax) for line in note.TaxLines) == int(note.Tax)
        assert [line.Description for line in note.TaxLines] == ["Developer API", "api_calls"]
        assert all(line.UsageUnits is None for line in note.TaxLines)  # parts: no tier words
    fee, free, paid = receipt.TaxLines
    for i, line in ((0, fee), (1, paid)):
        for figure in ("Net", "Tax", "Gross"):
            assert sum(int(getattr(note.TaxLines[i], figure)) for note in notes) == -int(getattr(line, figure))

    # One refund of everything: the invoice's lines negated, words and all (the free tier too
    # holds nothing: no line).
    whole, _ = _usage_receipt(customer, GRADUATED, write=True)
    access.record_refund(whole, refund_id="re_all", amount=int(whole.ProcessedAmount), actor="staff:ann")
    [note] = access.credit_notes_of_receipt(access.get_receipt(whole.account_id, whole.SK))
    assert [(line.Description, -int(line.Gross), -int(line.Tax), line.UsageUnits) for line in note.TaxLines] == [
        (line.Description, int(line.Gross), int(line.Tax), line.UsageUnits) for line in whole.TaxLines if int(line.Gross)]
    html = customer.client.get(f"/credit-notes/{note.Number}/").content.decode()
    assert "api_calls: 235 calls × €0.002 plus €5.00" in html
