"""The invoice of a usage charge whose recorded usage does not add up to what was charged
(billing/access/receipts.py ``_itemise_usage``, its last fallback): the charge's metadata
edited by hand at the processor, say, so the meters' amounts sum to more or less than the
charge. rpay then cannot share the charge over the meters, and the invoice keeps one usage
line naming every meter with its quantity, over the usage's days, at the charge's rate,
for exactly the net, tax and gross charged: the invoice still adds up to the payment. When
the amounts do add up, each meter has its own line (for contrast).

And a period in which neither of two meters was used (billing/rules/usage_lines.py
``share_tax`` with nothing to share over): both meters keep their line at 0, without a
cent of tax, and the fixed fee's line holds the whole charge and its tax.

A mutation run found nothing pinning these lines' words, days or amounts."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine

from billing import access
from billing.access.receipts import build_receipt
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation, Receipt
from billing.operations.metered import priced_usage
from billing.rules.pricing import PriceTerms
from billing.rules.tax import tax_line
from billing.rules.usage_metadata import usage_metadata
from tests.billing.test_tax_documents import CUSTOMER_ADDRESS, ITALY, SELLER_ADDRESS, SELLER_NAME
from tests.billing.test_usage_invoice_lines import DAY, GRADUATED, RATE
from tests.builders import TEST_CARD

pytestmark = pytest.mark.django_db

USED_FROM = date(2027, 2, 15)
RECORDED = datetime(2027, 3, 15, 12, tzinfo=UTC)  # the charge recorded on the usage's payment day


@time_machine.travel(RECORDED, tick=False)
def _usage_receipt(customer, *, charged: int | None, calls_used: int = 1235, gb_stored: int = 3,
                   fee: int | None = None) -> tuple[Receipt, int]:
    """A cancellation's last usage charge (``kind`` "usage": the usage alone) of 1,235 API
    calls (5.47) and 3 GB stored (1.50 at 0.50 a GB), recorded as a webhook records a
    charge (its usage as its metadata says, no pricing in hand), for ``charged`` (tax
    included; None: what the meters add up to). With a ``fee``, a period's charge of that
    fixed fee and the usage instead, as the payment run charges and prices it. Returns the
    receipt and the gross charged."""
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    meter_actions.add_meter("storage", "Storage", MeterAggregation.MAX, actor="test")
    access.create_product("API", "Developer API", 999, "EUR")
    calls = price_actions.add_price("API", GRADUATED, actor="test", meter="api_calls")
    stored = price_actions.add_price("API", PriceTerms("EUR", unit_amount=Decimal(50)), actor="test",
                                     meter="storage")
    sub = access.create_subscription(
        access.get_account(customer.account_id), sku="API", payment_day=15, amount=4995, currency="EUR",
        card=TEST_CARD, today=DAY, reminder_days_before=7, product_name="Developer API",
        billing_address=CUSTOMER_ADDRESS)
    usages = (priced_usage(calls, USED_FROM, DAY, calls_used), priced_usage(stored, USED_FROM, DAY, gb_stored))
    used = sum(u.amount for u in usages)
    line = tax_line((fee or 0) + used if charged is None else charged, RATE, prices_include_tax=True)
    tax = access.InvoiceTax(line=line, prices_include_tax=True,
                            seller=access.InvoiceSeller(ITALY, SELLER_NAME, SELLER_ADDRESS),
                            buyer_country="IT", buyer_vat_number=None)
    if fee is None:
        receipt, _, _ = build_receipt(sub, number="R-2027-000001", billing_date=USED_FROM, amount=line.gross,
                                      currency="EUR", charge_id="ch_last_usage", retention_days=200,
                                      period_end=DAY - timedelta(days=1), tax=tax, kind="usage",
                                      usage=usage_metadata(usages))
    else:
        receipt, _, _ = build_receipt(sub, number="R-2027-000001", billing_date=DAY, amount=line.gross,
                                      currency="EUR", charge_id="ch_renewal", retention_days=200,
                                      period_end=DAY + timedelta(days=30), tax=tax, usage=usage_metadata(usages),
                                      priced=usages)
    return receipt, line.gross


def test_a_usage_charge_not_adding_up_to_its_meters_is_one_line_naming_them_all(customer) -> None:
    receipt, gross = _usage_receipt(customer, charged=800)  # the meters say 6.97
    [line] = receipt.TaxLines
    assert gross == 800
    assert line.Description == "api_calls × 1235, storage × 3"
    # the usage's days: its first to the day before its (exclusive) end; the charge's rate
    assert (line.PeriodStart, line.PeriodEnd, line.TaxRate) == ("2027-02-15", "2027-03-14", "22")
    # exactly what was charged: 8.00 with 22% included is 6.56 and 1.44 of VAT
    assert (int(line.Net), int(line.Tax), int(line.Gross)) == (656, 144, 800)
    assert int(line.Net) + int(line.Tax) == int(receipt.ProcessedAmount) == 800


def test_a_usage_charge_adding_up_to_its_meters_is_a_line_a_meter(customer) -> None:
    receipt, gross = _usage_receipt(customer, charged=None)
    assert gross == 697  # 5.47 of calls, 1.50 of storage
    assert [(line.Description, int(line.Gross)) for line in receipt.TaxLines] == [
        ("api_calls × 1235", 547), ("storage × 3", 150)]
    assert sum(int(line.Net) + int(line.Tax) for line in receipt.TaxLines) == 697


def test_a_period_neither_meter_was_used_in_keeps_both_at_0_without_tax(customer) -> None:
    receipt, gross = _usage_receipt(customer, charged=None, calls_used=0, gb_stored=0, fee=4995)
    assert gross == 4995
    fee, *used = receipt.TaxLines
    # the fee's line: the whole charge, 40.94 and 9.01 of VAT at 22%
    assert (fee.Description, int(fee.Net), int(fee.Tax), int(fee.Gross)) == ("Developer API", 4094, 901, 4995)
    # the graduated price entered no tier (its plain line); the price a GB, its line of 0 GB
    assert [(line.Description, int(line.Net), int(line.Tax), int(line.Gross)) for line in used] == [
        ("api_calls × 0", 0, 0, 0), ("storage", 0, 0, 0)]
