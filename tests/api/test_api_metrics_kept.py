"""The API's MRR and movements read from the kept rollups (docs/ANALYTICS.md, "Kept
figures"): once ``revenue_rebuild`` has kept every day a request needs, the answer is the
recomputation's, to the minor unit, from one Query of the kept months (one a month of the
kept days for days) and no account read; a range the rollups do not cover is recomputed,
and says so."""

from __future__ import annotations

from datetime import date

from billing.analytics.rebuild import rebuild
from tests.api.conftest import ApiClient
from tests.api.test_api_metrics import with_usage
from tests.billing.test_revenue_analytics import on, scenario  # noqa: F401 (scenario: a fixture)

TODAY = date(2027, 4, 20)
REQUESTS = [
    ("/metrics/movements", {"from": "2026-04", "to": "2027-03"}),
    ("/metrics/movements", {}),
    ("/metrics/mrr", {"from": "2026-04", "to": "2027-04"}),
    ("/metrics/movements", {"from": "2027-01", "interval": "quarter"}),
    ("/metrics/mrr", {"from": "2027-01", "interval": "year", "currency": "usd"}),
    ("/metrics/mrr", {"from": "2027-02", "to": "2027-02", "interval": "day"}),
    ("/metrics/movements", {"from": "2027-01", "to": "2027-04", "interval": "day", "currency": "EUR"}),
    ("/metrics/cohorts", {}),
    ("/metrics/cohorts", {"from": "2027-01", "to": "2027-03"}),
    ("/metrics/cohorts", {"from": "2026-11", "currency": "usd"}),
]


def answers(api: ApiClient) -> list[dict]:
    return [api.get(path, **params).json() for path, params in REQUESTS]


def test_kept_figures_are_the_recomputed_ones(read_api: ApiClient, scenario) -> None:  # noqa: F811
    with_usage(scenario)  # the MRR's usage revenue beside it, by month, year and day
    with on(TODAY):
        recomputed = answers(read_api)
        rebuild(TODAY, first=date(2026, 3, 1))
        kept = answers(read_api)
    assert {a["figures"] for a in recomputed} == {"recomputed"} and {a["figures"] for a in kept} == {"kept"}
    for before, after in zip(recomputed, kept, strict=True):
        assert {**before, "figures": None} == {**after, "figures": None}


def test_a_year_of_months_is_one_query(read_api: ApiClient, scenario, ddb_requests) -> None:  # noqa: F811
    with on(TODAY):
        rebuild(TODAY, first=date(2026, 3, 1))
        ddb_requests.reset()
        body = read_api.get("/metrics/movements", **{"from": "2026-05", "to": "2027-04"}).json()
    assert body["figures"] == "kept"
    # the kept months (the twelve and the month before, for the first one's opening) are
    # one partition: one Query, and no account read
    assert ddb_requests.by_name()["Query"] == 1 and "BatchGetItem" not in ddb_requests.ops, ddb_requests.ops


QUARTERS_AND_YEARS = [
    {"from": "2026-04", "interval": "quarter"}, {"from": "2026-07", "interval": "quarter", "currency": "EUR"},
    {"from": "2027-01", "interval": "year"}, {"from": "2026-10", "to": "2027-03", "interval": "quarter"},
]


def test_cohorts_by_quarter_and_year_add_up_the_kept_months(
        read_api: ApiClient, scenario, ddb_requests) -> None:  # noqa: F811
    # a quarter's or a year's cohort is its months' kept cohorts added up: the recomputed
    # grid, from the kept months and the cohort rows (two Queries), no account read
    with on(TODAY):
        before = [read_api.get("/metrics/cohorts", **params).json() for params in QUARTERS_AND_YEARS]
        rebuild(TODAY, first=date(2026, 3, 1))
        ddb_requests.reset()
        after = [read_api.get("/metrics/cohorts", **params).json() for params in QUARTERS_AND_YEARS]
        queries, ops = ddb_requests.by_name()["Query"], list(ddb_requests.ops)
        by_day = read_api.get("/metrics/cohorts", **{"from": "2027-02", "to": "2027-02", "interval": "day"}).json()
    assert [a["figures"] for a in after] == ["kept"] * len(QUARTERS_AND_YEARS)
    assert queries == 2 * len(QUARTERS_AND_YEARS) and "BatchGetItem" not in ops
    for recomputed, kept in zip(before, after, strict=True):
        assert recomputed["figures"] == "recomputed"
        assert {**recomputed, "figures": None} == {**kept, "figures": None}
    assert any(c["customers"] for a in after for c in a["data"])  # the scenario's customers are in them
    assert by_day["figures"] == "recomputed"  # the cohorts are kept by month: a day's are not


def test_a_range_the_rollups_do_not_cover_is_recomputed(read_api: ApiClient, scenario) -> None:  # noqa: F811
    with on(TODAY):
        rebuild(TODAY)  # from the month before the first movement: December 2026
        older = read_api.get("/metrics/mrr", **{"from": "2026-06", "to": "2027-04"}).json()
        newer = read_api.get("/metrics/mrr", **{"from": "2027-01", "to": "2027-04"}).json()
    assert (older["figures"], newer["figures"]) == ("recomputed", "kept")
    assert older["data"][-4:] == newer["data"]


def test_a_month_under_way_kept_on_an_earlier_day_is_recomputed(read_api: ApiClient, scenario) -> None:  # noqa: F811
    # the month under way closes today: its item of two days ago does not answer it
    with on(date(2027, 4, 18)):
        rebuild(date(2027, 4, 18), first=date(2026, 3, 1))
    with on(TODAY):
        stale = read_api.get("/metrics/mrr", **{"from": "2027-01", "to": "2027-04"}).json()
        past = read_api.get("/metrics/mrr", **{"from": "2027-01", "to": "2027-03"}).json()
        rebuild(TODAY, first=date(2026, 3, 1))
        fresh = read_api.get("/metrics/mrr", **{"from": "2027-01", "to": "2027-04"}).json()
    assert (stale["figures"], past["figures"], fresh["figures"]) == ("recomputed", "kept", "kept")
    assert stale["data"] == fresh["data"] and past["data"] == fresh["data"][:3]
