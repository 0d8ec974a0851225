"""The Revenue page's chart and heat map: MRR per month as bars of stacked movements
(server-drawn SVG: above the axis what the month closed with, below it what it lost), and
the cohort grid shaded by share in tenths (classes: the CSP allows no inline style)."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from django.test import Client
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.analytics.report import build_report
from billing.staff.revenue_pages import CHART_HEIGHT, charts, heat
from tests.billing.test_revenue_analytics import (  # noqa: F401 (scenario: a fixture)
    DAYS,
    FIRST_DAY,
    URL,
    histories,
    on,
    scenario,
    staff,
)


def test_a_share_s_shade_is_its_tenth() -> None:
    assert [heat(Decimal(v)) for v in ("0", "9.9", "10", "66.7", "99.9", "100")] == [
        "heat-0", "heat-0", "heat-1", "heat-6", "heat-9", "heat-10"]
    assert heat(None) == ""


@settings(max_examples=60, deadline=None)
@given(histories, st.integers(0, DAYS + 30))
def test_the_bars_stack_to_the_closing_mrr_and_the_losses(subs, today_offset) -> None:
    report = build_report(subs, today=FIRST_DAY + timedelta(days=today_offset))
    for chart in charts(report):
        assert 0 <= chart.axis <= CHART_HEIGHT
        for bar in chart.bars:
            above = [s for s in bar.segments if s.kind not in ("contraction", "churn")]
            below = [s for s in bar.segments if s.kind in ("contraction", "churn")]
            # each side is stacked without gaps from the axis, and stays inside the drawing
            edge = chart.axis
            for s in above:
                assert s.y + s.height == edge and s.y >= -len(above)  # rounding: a unit a segment at most
                edge = s.y
            edge = chart.axis
            for s in below:
                assert s.y == edge and s.y + s.height <= CHART_HEIGHT + len(below)
                edge += s.height


def test_the_page_draws_the_movements_and_shades_the_cohorts(client: Client, scenario) -> None:  # noqa: F811
    with on(date(2027, 4, 20)):
        staff(client, "finance")
        response = client.get(reverse(URL), {"month": "2027-03"})
    html = response.content.decode()
    usd = html.split('data-testid="chart-USD"')[1].split("</figure>")[0]
    feb = usd.split('data-month="2027-02"')[1].split("</g>")[0]
    assert "2027-02, Kept from the opening: 9.00 USD" in feb and "2027-02, Churn: 5.00 USD" in feb
    assert "2027-02, Contraction: 1.00 USD" in feb and 'role="img"' in usd
    jan = html.split('data-testid="cohort-2027-01"')[1].split("</tr>")[0]
    assert 'class="num heat heat-10">100.0%' in jan
    assert 'style="' not in html.split('data-testid="cohorts"')[1].split("</table>")[0]
