"""The demo's half-refunded invoice of a fee and usage: ``metered@example.com`` paid today
the month's fee and last month's 2,500 calls on one invoice (the fee's line and a line a
tier), staff refunded half, and its credit note has the invoice's lines, each its part; a
second run changes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model

from billing import access
from billing.management.demo import usage_refund
from billing.management.demo.usage_refund import EMAIL
from tests.billing.demo_parts import seed_after_prices_and_usage

pytestmark = pytest.mark.django_db


def test_the_demo_shows_a_credit_note_line_by_line(moto_table, client) -> None:
    today = date(2027, 3, 10)
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        seed_after_prices_and_usage(usage_refund, "usage refund", today)
        [said] = usage_refund.seed(today)
        assert "2500 calls" in said and "refunded half" in said and "calls' line alone" in said, said
        assert usage_refund.seed(today) == [f"usage refund: {EMAIL} is subscribed already"]
        account_id = access.get_account_id_for_user(get_user_model().objects.get(email=EMAIL).pk)
        [paid] = [r for r in access.get_receipts_by_account(account_id, today - timedelta(days=40), today)
                  if r.UsageQuantity]
        note, calls = access.credit_notes_of_receipt(paid)
        client.force_login(get_user_model().objects.get(email=EMAIL))
        page = client.get(f"/credit-notes/{note.Number}/").content.decode()
    # $5.00 and 1,500 calls at $0.002 ($3.00) on the invoice; half of $8.00 back
    # half of $8.00 back, then the calls' line's $1.50 left, alone
    assert (int(paid.ProcessedAmount), int(paid.RefundedAmount)) == (800, 550)
    assert [int(line.Gross) for line in paid.TaxLines] == [500, 0, 300]
    assert [-int(line.Gross) for line in note.TaxLines] == [250, 150]
    assert [(line.Description, -int(line.Gross)) for line in calls.TaxLines] == [("api_calls", 150)]
    assert [line.Description for line in note.TaxLines] == [paid.TaxLines[0].Description, "api_calls"]
    assert "Developer API access" in page and "api_calls" in page
