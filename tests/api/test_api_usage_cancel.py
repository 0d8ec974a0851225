"""The usage a cancellation bills (docs/USAGE.md "Billed at a cancellation"): once,
however often the billing is re-run, with one usage line a tier of its price on its invoice."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine

from billing import batches
from billing.actions import lifecycle
from billing.operations.final_usage import bill_final_usage, record_usage_charge
from billing.rules.invoice import invoice_of
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient
from tests.api.test_api_usage_billing import _metered as metered_by
from tests.api.test_api_usage_reminders import AT, REMIND, _event, _metered
from tests.builders import fresh, receipts_of

pytestmark = pytest.mark.django_db


def test_a_cancel_bills_the_usage_once_when_re_run(write_api: ApiClient) -> None:
    sub = _metered()
    with time_machine.travel(AT, tick=False):
        write_api.post("/meter_events", _event(sub, 1, date(2027, 3, 1), 1035))
        lifecycle.cancel_now(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
        # a re-run (a process killed after the charge, say): the same key, the same receipt
        bill_final_usage(fresh(sub), last_day=REMIND, actor="customer")
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert charge["amount"] == 518
    [receipt] = receipts_of(sub)
    assert receipt.Kind == "usage" and receipt.PeriodEnd == REMIND.isoformat()
    doc = invoice_of(receipt)
    assert doc is not None
    [line] = doc.lines
    assert "api_calls" in str(line.description) and line.gross == 518


def test_a_cancel_bills_graduated_usage_a_line_a_tier_and_a_found_charge_records_the_same_lines(
        write_api: ApiClient) -> None:
    """1,235 calls at 'first 1,000 free, then $0.002': the usage-only charge's invoice has
    the free tier's line (0) and the next tier's (47), summing to the charge; the
    reconciliation, recording the same charge from its metadata alone (the price read
    again), writes the same lines."""
    sub, _price = metered_by("graduated")
    with time_machine.travel(AT, tick=False):
        write_api.post("/meter_events", _event(sub, 1, date(2027, 3, 1), 1235))
        lifecycle.cancel_now(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert charge["amount"] == 47
    [receipt] = receipts_of(sub)
    doc = invoice_of(receipt)
    assert doc is not None
    assert [(line.description, line.gross) for line in doc.lines] == [("api_calls: 1,000 units free", 0),
                                                                      ("api_calls: 235 units × $0.002", 47)]
    assert sum(line.net for line in doc.lines) == receipt.Net and sum(line.tax for line in doc.lines) == receipt.Tax
    result = get_gateway().charge_status(receipt.ChargeId)
    found = record_usage_charge(fresh(sub), result, actor="reconcile")
    assert [(t.Net, t.Tax, t.Gross, t.UsageUnits) for t in found.TaxLines] == \
        [(t.Net, t.Tax, t.Gross, t.UsageUnits) for t in receipt.TaxLines]


def test_a_cancel_at_period_end_s_last_usage_charge_is_its_upcoming_payment(
        read_api: ApiClient, write_api: ApiClient) -> None:
    """Cancelled at its period's end, a metered subscription has no renewal, but its last
    period's usage is charged the day after its last day: the upcoming payment is that
    charge, usage lines only, as the run then makes it; after it, nothing is to come."""
    sub = _metered()
    with time_machine.travel(AT, tick=False):
        write_api.post("/meter_events", _event(sub, 1, date(2027, 3, 1), 1035))
        lifecycle.cancel_at_period_end(fresh(sub), today=REMIND, actor="customer", reason="too_expensive")
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    assert (shown["date"], shown["period_start"], shown["period_end"]) == ("2027-03-15", "2027-02-15", "2027-03-14")
    assert [line["meter"] for line in shown["lines"]] == ["api_calls"]  # no fee: its usage alone
    assert shown["amount_due"] == sum(line["amount"] + line["tax"] for line in shown["lines"]) == 518
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        batches.run_payments(run_date=date(2027, 3, 15), workers=1)
        after = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming")
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert charge["amount"] == shown["amount_due"]  # the estimate is the charge
    assert after.status_code == 404
