"""The figures kept for each product, price interval and currency, alone or together
(docs/ANALYTICS.md, "Kept for each product, interval and currency, alone or together"):
``revenue_rebuild`` keeps each view's months and cohorts beside the whole business's, so the
filtered Revenue page and the API's filtered figures read a bounded number of items, equal to
the recomputation of the same filter; ``--check`` compares them too."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import date

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from billing import access
from billing.access import revenue_rollups
from billing.access.revenue_rollups import Scope
from billing.analytics import ReportFilter, revenue_metrics, revenue_report
from billing.analytics.cohort_table import cohort_table
from billing.analytics.filters import filtered, kept_scopes, scopes_of
from billing.analytics.kept_report import kept_report
from billing.analytics.mrr import steps
from billing.analytics.rebuild import Recomputed, default_first, rebuild, rebuild_parts, recomputed_months
from billing.analytics.report import build_report
from billing.analytics.rollups import by_month
from billing.models import RevenueMonth, RevenueViewDays, RevenueViews
from tests.billing import test_revenue_known_answer as known
from tests.billing.test_revenue_analytics import URL, on, scenario, staff  # noqa: F401 (scenario: a fixture)

SEEN = date(2027, 4, 20)


def _as_kept(histories, scope: Scope, today: date, month: str, count: int):
    """The report on ``month`` made from the months and cohorts a rebuild keeps for ``scope``
    (pure: the rows it would write, read back as the page reads them)."""
    whole = Recomputed(histories, steps(histories, today), {}, [], [])
    view = whole.within(scope, today)
    first = default_first(whole.steps, today)
    months = by_month(recomputed_months(view, first, today, rebuild_parts()))
    cohorts = {row.month: row for row in cohort_table(view.steps, today)}
    return kept_report(months, cohorts, today=today, month=month, count=count)


# The months from January 2027 (its opening, December, is the first month a rebuild keeps).
@pytest.mark.parametrize(("month", "count"), [("2027-03", 3), ("2027-06", 6)])
def test_each_product_interval_and_currency_kept_is_the_filtered_recomputation_of_the_known_answer(month: str, count: int) -> None:
    histories = known.scenario()
    scopes = kept_scopes(histories)
    assert {Scope("INTERVAL", "year"), Scope("INTERVAL", "month"), Scope("CURRENCY", "EUR"),
            Scope("CURRENCY", "USD")} <= set(scopes)
    for scope in scopes:
        kept = _as_kept(histories, scope, known.TODAY, month, count)
        assert kept is not None and kept.source == "kept", scope
        recomputed = build_report(filtered(histories, ReportFilter.of(scope)), today=known.TODAY, month=month,
                                  months=count)
        assert {**kept.as_dict(), "figures_from": None} == {**recomputed.as_dict(), "figures_from": None}, scope
    # the yearly price alone: C's 120,000 a year is 10,000 a month, new in February
    yearly = _as_kept(histories, Scope("INTERVAL", "year"), known.TODAY, "2027-06", 6)
    assert yearly.mrr == {"USD": 10000}
    assert {row.month: row.by_currency["USD"].new for row in yearly.months if "USD" in row.by_currency}["2027-02"] \
        == 10000


def test_which_views_are_kept() -> None:
    # every view is kept: the whole business, and any product, interval and currency, alone
    # or together (a partition each, named by the filters it holds)
    views = [ReportFilter(), ReportFilter(product="X"), ReportFilter(interval="year"), ReportFilter(currency="EUR"),
             ReportFilter(product="X", interval="year"), ReportFilter(currency="EUR", interval="year"),
             ReportFilter(product="X", interval="month", currency="EUR")]
    assert all(view.kept for view in views)
    assert [view.scope for view in views] == [
        None, Scope("PRODUCT", "X"), Scope("INTERVAL", "year"), Scope("CURRENCY", "EUR"),
        Scope("PRODUCT+INTERVAL", "X+year"), Scope("INTERVAL+CURRENCY", "year+EUR"),
        Scope("PRODUCT+INTERVAL+CURRENCY", "X+month+EUR")]
    assert all(ReportFilter.of(view.scope) == view for view in views[1:])
    assert ReportFilter.of(Scope("INTERVAL", "week")) == ReportFilter(interval="week")
    assert str(Scope("PRODUCT", "NEWS-LITE")) == "product=NEWS-LITE"
    # a subscription is within seven views: each of its three, each two, all three
    assert scopes_of("X", "year", "EUR") == [
        Scope("PRODUCT", "X"), Scope("INTERVAL", "year"), Scope("CURRENCY", "EUR"), Scope("PRODUCT+INTERVAL", "X+year"),
        Scope("PRODUCT+CURRENCY", "X+EUR"), Scope("INTERVAL+CURRENCY", "year+EUR"),
        Scope("PRODUCT+INTERVAL+CURRENCY", "X+year+EUR")]


def test_a_rebuild_keeps_every_product_and_interval_and_the_page_reads_them(
        client: Client, scenario, ddb_requests) -> None:  # noqa: F811
    # the months from January: their opening (December) is the first month kept
    recomputed = {view: revenue_report("2027-03", today=SEEN, within=view, since="2027-01") for view in
                  (ReportFilter(product="NEWS-LITE"), ReportFilter(product="NEWS-DAILY"), ReportFilter(interval="month"),
                   ReportFilter(currency="EUR"), ReportFilter(currency="USD"),
                   ReportFilter(product="NEWS-LITE", interval="month"), ReportFilter(product="NEWS-DAILY", currency="EUR"),
                   ReportFilter(product="NEWS-DAILY", interval="month", currency="USD"))}
    assert all(report.source != "kept" for report in recomputed.values())
    before_never = revenue_report("2027-03", today=SEEN, within=ReportFilter(product="NEWS-LITE", currency="EUR"),
                                  since="2027-01")
    assert before_never.source != "kept"  # no rebuild yet: recomputed
    with on(SEEN):
        out = io.StringIO()
        call_command("revenue_rebuild", "--from", "2026-12-01", "--json", stdout=out)
    done = json.loads(out.getvalue())
    # NEWS-DAILY, NEWS-LITE, the monthly interval, EUR and USD; each product with the
    # interval (2) and with its currencies (NEWS-DAILY in both, NEWS-LITE in USD: 3), the
    # interval with each currency (2); the three together (3): each its months (2026-12 to
    # 2027-04, one shard) and its cohort months (from its first payment's, 2027-01, or
    # NEWS-LITE's 2027-03, to 2027-04)
    daily, lite = 5 + 4, 5 + 2
    singles = daily + lite + daily + daily + daily
    pairs = (daily + lite) + (daily + daily + lite) + (daily + daily)
    assert (done["scopes"], done["scoped_items"]) == (5 + 7 + 3, singles + pairs + (daily + daily + lite))
    for view, before in recomputed.items():
        ddb_requests.reset()
        kept = revenue_report("2027-03", today=SEEN, within=view, since="2027-01")
        assert kept.source == "kept", view
        assert ddb_requests.ops == ["Query", "Query"], view  # its months, its cohorts
        assert {**kept.as_dict(), "figures_from": None} == {**before.as_dict(), "figures_from": None}, view
    # a view no subscription was ever in has no partition: the rebuild's list of its views
    # says so, and its figures are the empty history's, read from nothing but that list and
    # the whole business's kept months
    never = ReportFilter(product="NEWS-LITE", currency="EUR")
    ddb_requests.reset()
    empty = revenue_report("2027-03", today=SEEN, within=never, since="2027-01")
    assert (empty.source, ddb_requests.ops) == ("kept", ["Query", "GetItem", "Query"])
    assert {**empty.as_dict(), "figures_from": None} == {**before_never.as_dict(), "figures_from": None}
    assert empty.mrr == {} and all(not row.by_currency for row in empty.months)
    access.create_product("NEWS-LITE", "News Lite", 500, "USD")
    with on(SEEN):
        staff(client, "finance")
        asked = {"month": "2027-03", "from": "2027-01", "product": "NEWS-LITE"}
        page = client.get(reverse(URL), asked).content.decode()
        both = client.get(reverse(URL), {**asked, "interval": "month"}).content.decode()
    assert 'data-testid="filtered"' in page and 'data-testid="figures-kept"' in page
    assert 'data-testid="filtered"' in both and 'data-testid="figures-kept"' in both
    # months kept by a rebuild of an earlier release, which kept no list of its views (nor
    # any view of two filters): a view with no partition is not known to be empty, so it
    # is recomputed, never shown as nothing
    RevenueViews(RevenueViews.pk(), RevenueViews.sk()).delete()
    lived = ReportFilter(product="NEWS-LITE", interval="month")
    [item.delete() for item in RevenueMonth.query("REVENUE#MONTHS#PRODUCT+INTERVAL#NEWS-LITE+month")]
    upgraded = revenue_report("2027-03", today=SEEN, within=lived, since="2027-01")
    assert upgraded.source != "kept" and upgraded.mrr == recomputed[lived].mrr != {}
    assert revenue_report("2027-03", today=SEEN, within=never, since="2027-01").source != "kept"


def test_the_api_s_filtered_months_and_days_are_kept(scenario, ddb_requests) -> None:  # noqa: F811
    access.create_product("NEWS-LITE", "News Lite", 500, "USD")
    asked = dict(from_month="2027-01", to_month="2027-03", product="NEWS-LITE", today=SEEN)
    before = {kind: revenue_metrics(kind, **asked) for kind in ("mrr", "movements", "cohorts")}
    yearly = {kind: revenue_metrics(kind, **asked, price_interval="year") for kind in ("mrr", "movements", "cohorts")}
    # by day: a product, a price interval, and both with one currency's figures (one Query
    # of the view's days, an item a month: December, for January's opening, to March)
    access.create_product("NEWS-DAILY", "News Daily", 999, "USD")
    daily = [dict(asked), dict(asked, product=None, price_interval="month"),
             dict(asked, product="NEWS-DAILY", price_interval="month", currency="USD")]
    by_day = [{kind: revenue_metrics(kind, **view, interval="day") for kind in ("mrr", "movements")}
              for view in daily]
    with on(SEEN):
        rebuild(SEEN, first=date(2026, 12, 1))
    for kind, recomputed in before.items():
        ddb_requests.reset()
        kept = revenue_metrics(kind, **asked)
        assert (recomputed["figures"], kept["figures"]) == ("recomputed", "kept"), kind
        assert {**kept, "figures": None} == {**recomputed, "figures": None}, kind
        assert set(ddb_requests.ops) == {"Query"} and len(ddb_requests.ops) <= 3, kind  # the catalog, the months (and the cohorts)
    for view, answers in zip(daily, by_day, strict=True):
        for kind, recomputed in answers.items():
            ddb_requests.reset()
            kept = revenue_metrics(kind, **view, interval="day")
            assert (recomputed["figures"], kept["figures"]) == ("recomputed", "kept"), (view, kind)
            assert {**kept, "figures": None} == {**recomputed, "figures": None}, (view, kind)
            assert any(period["mrr" if kind == "mrr" else "currencies"] for period in kept["data"]), (view, kind)
            assert ddb_requests.ops == ["Query"] * (2 if view["product"] else 1), (view, kind)  # (the catalog) and the days
    # a day the rebuild did not keep (before its --from) is recomputed, never read as nothing
    earlier = revenue_metrics("mrr", **dict(asked, from_month="2026-11"), interval="day")
    assert earlier["figures"] == "recomputed"
    # a view never lived in: the empty history's, from the list of views and the kept months
    for kind, recomputed in yearly.items():
        ddb_requests.reset()
        never = revenue_metrics(kind, **asked, price_interval="year")
        assert (recomputed["figures"], never["figures"]) == ("recomputed", "kept"), kind
        assert {**never, "figures": None} == {**recomputed, "figures": None}, kind
        assert ddb_requests.ops == ["Query", "Query", "GetItem", "Query"], kind  # the catalog, the view's months, the views, the months
    assert all(not period["mrr"] for period in yearly["mrr"]["data"])  # no yearly NEWS-LITE: nothing
    both = revenue_metrics("mrr", **{**asked, "price_interval": "month"})
    assert both["figures"] == "kept" and both["price_interval"] == "month"
    assert {**both, "figures": None, "price_interval": None} == {**before["mrr"], "figures": None, "product": "NEWS-LITE",
                                                                  "price_interval": None}


def test_the_check_names_a_product_s_month_that_differs(scenario) -> None:  # noqa: F811
    with on(SEEN):
        rebuild(SEEN, first=date(2026, 12, 1))
        scope = Scope("PRODUCT", "NEWS-LITE")
        [march] = [row for row in revenue_rollups.month_rows("2027-03", "2027-03", scope)]
        tampered = replace(march, figures={"USD": {**march.figures["USD"], "mrr": 999}})
        revenue_rollups.write_months([tampered], rebuilt_at="2027-04-20T00:00:00", scope=scope)
        out = io.StringIO()
        with pytest.raises(SystemExit) as exit_:
            call_command("revenue_rebuild", "--check", "--from", "2026-12-01",
                         stdout=out)
    assert exit_.value.code == 1
    assert "2027-03-31 month product=NEWS-LITE USD: mrr kept 999 recomputed 500" in out.getvalue()
    # the item is where the docs say: its own partition
    assert RevenueMonth.get("REVENUE#MONTHS#PRODUCT#NEWS-LITE", "2027-03#00").Shards == 1


def test_the_check_names_a_view_s_day_that_differs_and_passes_over_its_days_not_kept(scenario) -> None:  # noqa: F811
    with on(SEEN):
        rebuild(SEEN, first=date(2026, 12, 1))
        scope = Scope("PRODUCT+CURRENCY", "NEWS-LITE+USD")
        march = revenue_rollups.view_day_rows("2027-03", "2027-03", scope)
        [day] = [row for row in march if row.day == date(2027, 3, 20)]
        assert day.figures["USD"]["mrr"] == 500 and len(march) == 31
        # a view's month not kept (a view first kept by a nightly run has no days before it)
        RevenueViewDays.get("REVENUE#DAYS#PRODUCT+CURRENCY#NEWS-LITE+USD", "2027-02#00").delete()
        out = io.StringIO()
        call_command("revenue_rebuild", "--check", stdout=out)  # not kept is not a difference: agree
        assert out.getvalue().startswith("The kept figures agree")
        tampered = [replace(row, figures={"USD": {**row.figures["USD"], "mrr": 999}}) if row == day else row
                    for row in march]
        revenue_rollups.write_view_days(tampered, rebuilt_at="2027-04-20T00:00:00", scope=scope)
        out = io.StringIO()
        with pytest.raises(SystemExit) as exit_:
            call_command("revenue_rebuild", "--check", stdout=out)
    assert exit_.value.code == 1
    assert "2027-03-20 day product+currency=NEWS-LITE+USD USD: mrr kept 999 recomputed 500" in out.getvalue()
    # the item is where the docs say: the view's partition, one item a month (one shard)
    item = RevenueViewDays.get("REVENUE#DAYS#PRODUCT+CURRENCY#NEWS-LITE+USD", "2027-03#00")
    assert (item.Shards, item.Close) == (1, "2027-03-31")


def test_the_page_its_csv_and_the_command_show_each_currency_s_mrr_retention(client: Client, scenario) -> None:  # noqa: F811
    # January's dollars: Ada 10.00 and Cy 5.00; February: Ada's coupon (9.00), Cy gone;
    # March: Cy back (a January customer still)
    with on(SEEN):
        staff(client, "finance")
        asked = {"month": "2027-03", "from": "2027-01"}
        page = client.get(reverse(URL), asked).content.decode()
        csv = client.get(reverse(URL), {**asked, "format": "csv", "table": "mrr-cohorts-USD"}).content.decode()
        out = io.StringIO()
        call_command("revenue_report", "--month", "2027-03", "--from", "2027-01", stdout=out)
    row = page.split('data-testid="mrr-cohort-USD-2027-01"')[1].split("</tr>")[0]
    shares = [cell.split(">")[-1] for cell in row.split("</td>") if cell.rstrip().endswith("%")]
    assert "15.00 USD" in row and shares == ["100.0%", "60.0%", "93.3%"]
    assert 'data-testid="mrr-cohorts-EUR"' in page and 'data-testid="csv-mrr-cohorts-USD"' in page
    assert csv.splitlines()[:2] == ["cohort,customers,mrr_USD,+0,+1,+2", "2027-01,2,15.00,100.0,60.0,93.3"]
    printed = out.getvalue().splitlines()
    assert any(line.split() == ["2027-01", "2", "15.00", "100.0%", "60.0%", "93.3%"] for line in printed)
