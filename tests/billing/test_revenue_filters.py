"""The Revenue report's filters (docs/ANALYTICS.md, "Filters"): by product, price interval
and currency, each subscription counted while it is within the filter (a switch in is a
gain, a switch out a loss), recomputed here (no rebuild has run: the kept ones are
tests/billing/test_revenue_kept_scopes.py's); a range of months, kept or recomputed alike;
the page's lists, its CSV links and its refusals of what is not in them."""

from __future__ import annotations

import io
import json
from datetime import date

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from billing import access
from billing.analytics import BadMonth, ReportFilter, revenue_report
from billing.analytics.filters import filtered
from billing.analytics.history import Change, SubHistory, SubState, build_history
from billing.analytics.mrr import Kind, mrr_at, steps
from billing.analytics.rebuild import rebuild
from billing.models import AuditAction
from tests.billing.test_revenue_analytics import URL, on, scenario, staff  # noqa: F401 (scenario: a fixture)

SEEN = date(2027, 4, 20)


def test_a_product_counts_only_its_subscriptions_and_a_first_payment_in_it_is_new(scenario) -> None:  # noqa: F811
    # Cy's second subscription (March) is the only NEWS-LITE one: new there, though Cy had
    # paid before for another product (a reactivation in the whole business's figures)
    report = revenue_report("2027-03", today=SEEN, within=ReportFilter(product="NEWS-LITE"))
    assert report.mrr == {"USD": 500} and report.source != "kept"
    march = {row.month: row.by_currency for row in report.months}["2027-03"]["USD"]
    assert (march.opening, march.new, march.reactivation, march.closing) == (0, 500, 0, 500)
    whole = revenue_report("2027-03", today=SEEN)
    assert {row.month: row.by_currency for row in whole.months}["2027-03"]["USD"].reactivation == 500
    others = revenue_report("2027-03", today=SEEN, within=ReportFilter(product="NEWS-DAILY"))
    assert others.mrr == {"EUR": 2000, "USD": 900}  # the whole's less NEWS-LITE's


def test_a_currency_keeps_its_own_and_the_filters_add_up_to_the_whole(scenario) -> None:  # noqa: F811
    eur = revenue_report("2027-03", today=SEEN, within=ReportFilter(currency="EUR"))
    usd = revenue_report("2027-03", today=SEEN, within=ReportFilter(currency="USD"))
    whole = revenue_report("2027-03", today=SEEN)
    assert eur.mrr == {"EUR": 2000} and usd.mrr == {"USD": 1400} and {**eur.mrr, **usd.mrr} == whole.mrr
    for row_e, row_u, row in zip(eur.months, usd.months, whole.months, strict=True):
        assert {**row_e.by_currency, **row_u.by_currency} == row.by_currency
    # nothing is yearly in the scenario
    assert revenue_report("2027-03", today=SEEN, within=ReportFilter(interval="year")).mrr == {}
    assert revenue_report("2027-03", today=SEEN, within=ReportFilter(interval="month")).mrr == whole.mrr


def _state(start: date, sku: str, interval: str = "month", amount: int = 1000) -> SubState:
    return SubState(start=start, status="active", amount=amount, currency="USD", sku=sku, interval=interval)


def test_a_switch_out_of_the_filter_is_churn_and_into_it_new() -> None:
    # one customer, monthly X until 10 March, then yearly Y at the same monthly amount
    history = SubHistory("c1", "SUB#s1#SKU#X", (_state(date(2027, 1, 5), "X"),
                                                 _state(date(2027, 3, 10), "Y", "year")))
    assert [s.kind for s in steps([history], date(2027, 4, 30))] == [Kind.NEW]  # unfiltered: no movement
    out = steps(filtered([history], ReportFilter(product="X")), date(2027, 4, 30))
    into = steps(filtered([history], ReportFilter(interval="year")), date(2027, 4, 30))
    assert [(s.day, s.kind, s.delta) for s in out] == [(date(2027, 1, 5), Kind.NEW, 1000),
                                                        (date(2027, 3, 10), Kind.CHURN, -1000)]
    assert [(s.day, s.kind, s.delta) for s in into] == [(date(2027, 3, 10), Kind.NEW, 1000)]
    assert mrr_at(filtered([history], ReportFilter(product="Z")), date(2027, 4, 30)) == {}


def test_a_snapshot_without_its_product_takes_the_key_s_then_the_last_one_s() -> None:
    # events written before snapshots named the product: the subscription's key names the
    # first; a later snapshot that names one switches it
    old = {"Status": "active", "PaymentAmount": 1000, "Currency": "USD"}
    history = build_history("c1", "SUB#s1#SKU#NEWS-DAILY", created=date(2027, 1, 1), current=old, coupons={},
                            changes=[Change(date(2027, 2, 1), AuditAction.PAYMENT_DAY_CHANGED, old, old),
                                     Change(date(2027, 3, 1), AuditAction.SUBSCRIPTION_SWITCHED, old, {**old, "SKU": "PRO"}),
                                     Change(date(2027, 4, 1), AuditAction.PAYMENT_DAY_CHANGED, old, old)])
    assert [s.sku for s in history.states] == ["NEWS-DAILY", "NEWS-DAILY", "PRO", "PRO"]


def test_the_page_filters_says_so_and_its_downloads_keep_the_filter(client: Client, scenario) -> None:  # noqa: F811
    access.create_product("NEWS-LITE", "News Lite", 500, "USD")
    access.create_product("NEWS-DAILY", "Daily News", 1000, "USD")
    with on(SEEN):
        staff(client, "finance")
        page = client.get(reverse(URL), {"month": "2027-03", "product": "NEWS-LITE"})
        csv = client.get(reverse(URL), {"month": "2027-03", "product": "NEWS-LITE", "format": "csv",
                                        "table": "mrr"})
        bad = [client.get(reverse(URL), {"month": "2027-03", **query}) for query in
               ({"product": "NOPE"}, {"interval": "fortnight"}, {"currency": "euro"})]
    html = page.content.decode()
    assert page.status_code == 200 and 'data-testid="filtered"' in html
    assert '<option value="NEWS-LITE" selected>News Lite (NEWS-LITE)</option>' in html
    assert "?month=2027-03&amp;product=NEWS-LITE&amp;format=csv&amp;table=mrr" in html
    assert "5.00 USD" in html.split('data-testid="mrr-USD"')[1].split("</tr>")[0]
    assert "Refunds and disputes are not split by product or interval" in html
    assert csv.status_code == 200 and "USD,5.00" in csv.content.decode().replace(" ", "")
    said = [b.content.decode().split('data-testid="month-error">')[1].split("</div>")[0] for b in bad]
    assert [b.status_code for b in bad] == [400, 400, 400]
    assert "That product is not in the catalog" in said[0] and "not a price interval" in said[1]
    assert "not a currency code" in said[2]


# --- a range of months ------------------------------------------------------------------------


def test_a_range_shows_its_months_kept_or_recomputed_alike(scenario) -> None:  # noqa: F811
    recomputed = revenue_report("2027-03", today=SEEN, since="2027-01")
    whole = revenue_report("2027-03", today=SEEN)
    assert [row.month for row in recomputed.months] == ["2027-01", "2027-02", "2027-03"]
    assert recomputed.months == whole.months[-3:] and recomputed.mrr == whole.mrr
    assert [c.month for c in recomputed.cohorts] == ["2027-01", "2027-02", "2027-03"]
    with on(SEEN):
        rebuild(SEEN, first=date(2026, 12, 1))
    kept = revenue_report("2027-03", today=SEEN, since="2027-01")
    assert kept.source == "kept"
    assert {**kept.as_dict(), "figures_from": None} == {**recomputed.as_dict(), "figures_from": None}
    for since in ("2027-04", "2024-03", "2027-13"):  # after the month, over 36 months, not a month
        with pytest.raises(BadMonth):
            revenue_report("2027-03", today=SEEN, since=since)


def test_the_page_and_the_command_take_a_range(client: Client, scenario) -> None:  # noqa: F811
    with on(SEEN):
        staff(client, "finance")
        page = client.get(reverse(URL), {"month": "2027-03", "from": "2027-02"})
        backwards = client.get(reverse(URL), {"month": "2027-03", "from": "2027-04"})
        out = io.StringIO()
        call_command("revenue_report", "--month", "2027-03", "--from", "2027-02", "--json", stdout=out)
        with pytest.raises(CommandError, match="--from 2027-04 to --month"):
            call_command("revenue_report", "--month", "2027-03", "--from", "2027-04")
    html = page.content.decode()
    assert page.status_code == 200 and 'data-testid="move-USD-2027-02"' in html
    assert 'data-testid="move-USD-2027-01"' not in html and '<option value="2027-02" selected>' in html
    assert "?month=2027-03&amp;from=2027-02&amp;format=csv" in html
    assert [m["month"] for m in json.loads(out.getvalue())["movements"]] == ["2027-02", "2027-03"]
    assert backwards.status_code == 400
    assert "Choose a first month before the last, at most 36 months in all." in backwards.content.decode()
