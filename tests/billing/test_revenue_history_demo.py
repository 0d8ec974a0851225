"""The demo's revenue history (billing/management/demo/revenue_history.py): eighteen months
the Revenue page reads as real shapes (new, expansion, contraction, churn, reactivation,
a trial converted, a failed payment recovered), nothing moved today, safe to run twice."""

from __future__ import annotations

from datetime import date

import pytest

from billing.analytics import revenue_report
from billing.analytics.report import months_ending
from billing.management.demo import revenue_history
from tests.billing.test_revenue_analytics import on

TODAY = date(2026, 12, 4)


@pytest.mark.django_db
def test_eighteen_months_of_shapes_and_a_second_run_adds_nothing(moto_table) -> None:
    with on(TODAY):
        first = revenue_history.seed(TODAY)
        again = revenue_history.seed(TODAY)
    assert "still paying" in first[0] and "already there" in again[0]
    totals: dict[str, int] = {}
    for month in months_ending("2026-12", 18)[::-1][:7]:  # seven reports cover the eighteen months
        report = revenue_report(month, today=TODAY)
        for row in report.months:
            for m in row.by_currency.values():
                for kind in ("new", "expansion", "contraction", "churn", "reactivation"):
                    totals[kind] = totals.get(kind, 0) + getattr(m, kind)
    assert all(totals[k] > 0 for k in ("new", "expansion", "contraction", "churn", "reactivation")), totals
    report = revenue_report(today=TODAY)
    assert set(report.mrr) == {"USD", "EUR", "GBP"}
    this_month = report.months[-1].by_currency
    assert all(m.new == m.churn == m.expansion == m.contraction == 0 for m in this_month.values())
    assert sum(c.size for c in report.cohorts) > 0
    older = [revenue_report(m, today=TODAY).figures for m in months_ending("2026-12", 18)]
    assert sum(f.trials.part for f in older) >= 1 and sum(f.recovery.part for f in older) >= 1
