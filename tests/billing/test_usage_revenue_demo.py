"""The demo's usage revenue part (billing/management/demo/usage_revenue.py): a history
customer's last three payments carry usage, which the Revenue figures report beside MRR
(never in it); safe to run twice; without the history it says so and writes nothing."""

from __future__ import annotations

from datetime import date

import pytest
from django.urls import reverse

from billing import access
from billing.analytics import revenue_report
from billing.management.demo import usage_revenue
from billing.management.demo.revenue_history import EMAIL
from tests.billing.test_revenue_analytics import URL, on, staff
from tests.builders import make_subscription, make_user

TODAY = date(2026, 12, 4)


@pytest.mark.django_db
def test_the_history_s_usage_is_reported_beside_mrr_and_a_second_run_adds_nothing(client, moto_table) -> None:
    assert "run the revenue history part first" in usage_revenue.seed(TODAY)[0]
    with on(TODAY):
        # made on the day the figures are read (its CreatedDate is the clock's): made on a
        # later real day, it would not have existed yet on TODAY, and counted no MRR
        account = access.create_account(EMAIL.format(1), user_id=make_user(EMAIL.format(1)).pk)
        make_subscription(account, amount=4900, today=date(2026, 8, 15))
        first = usage_revenue.seed(TODAY)
        again = usage_revenue.seed(TODAY)
        assert first == again == ["usage revenue: 3 paid charges with usage, 53.35 USD net over three months"]
        by_month = {m: revenue_report(m, today=TODAY).figures.usage for m in ("2026-10", "2026-11", "2026-12")}
        december = revenue_report(today=TODAY)
        staff(client, "finance")
        page = client.get(reverse(URL)).content.decode()
    assert by_month == {"2026-10": {"USD": 1240}, "2026-11": {"USD": 1785}, "2026-12": {"USD": 2310}}
    assert december.mrr == {"USD": 4900}  # usage is never MRR
    assert december.usage_reporting is not None and december.usage_reporting.lines[0].amount == 2310
    # each month of the page's twelve: its own usage, and its total in the reporting currency
    assert [row.usage for row in december.months[-4:]] == [{}, {"USD": 1240}, {"USD": 1785}, {"USD": 2310}]
    assert [c.lines[0].amount for c in december.usage_months_reporting[-3:]] == [1240, 1785, 2310]
    row = page.split('data-testid="usage-month-2026-11"')[1].split("</tr>")[0]
    assert "17.85 USD" in row and 'data-testid="csv-usage-months"' in page
