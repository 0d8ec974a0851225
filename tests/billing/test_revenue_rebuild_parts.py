"""A rebuild split over processes (docs/ANALYTICS.md, "A rebuild split over processes"):
with ``REVENUE_REBUILD_PARTS`` = N, ``revenue_rebuild --part K`` reads the accounts of one
part and writes that part's shards only, so N processes (on one host or several) keep the
figures side by side. What the readers see is the whole business's, equal to the
recomputation; a part not run, or killed, leaves the figures recomputed, never wrong; and a
change of N leaves no stale item in what is read."""

from __future__ import annotations

import io
import json
import threading
from contextlib import nullcontext
from dataclasses import replace
from datetime import date

import pytest
from django.core.checks import run_checks
from django.core.management import CommandError, call_command

from billing.access import revenue_rollups
from billing.access.revenue_rollups import CohortRow, Scope
from billing.analytics import ReportFilter, revenue_metrics, revenue_report
from billing.analytics.cohort_table import merged
from billing.analytics.filters import kept_scopes
from billing.analytics.reading import read_histories
from billing.analytics.rebuild import check, default_first, rebuild, recompute
from billing.analytics.rollups import SHARDS, Part, own, shard_of
from billing.management.demo import revenue_history
from billing.models import RevenueCohort, RevenueMonth
from tests.billing.test_revenue_analytics import on

TODAY = date(2026, 12, 4)
# The months a report reads from the kept items (the history began mid-2025): from June,
# so the rebuilds keep the days from May's last (its close is June's opening).
SINCE, MONTH = "2026-06", "2026-12"
KEPT_FROM = date(2026, 5, 31)
# Where a check need not read every kept day (a Query a month): the last two months.
LATELY = date(2026, 11, 1)


@pytest.fixture
def history(transactional_db, moto_table) -> date:
    """The demo's eighteen months (twelve customers in three currencies, two products: new,
    upgrades, a pause, a past due recovered and one lost, churn, customers back), committed
    (the parts' threads read the users with connections of their own, as processes would).
    Returns the day a rebuild of every part keeps from (as ``--from``)."""
    with on(TODAY):
        revenue_history.seed(TODAY)
        assert default_first(recompute(TODAY).steps, TODAY) < KEPT_FROM
    return KEPT_FROM


def _views() -> list[ReportFilter]:
    return [ReportFilter()] + [ReportFilter.of(scope) for scope in kept_scopes(read_histories())]


def _reports(views: list[ReportFilter]) -> dict[ReportFilter, dict]:
    with on(TODAY):
        return {view: revenue_report(MONTH, today=TODAY, within=view, since=SINCE).as_dict() for view in views}


def _cohort_keys() -> set[tuple[int, int]]:
    """The (part, parts) of every whole-business cohort item kept (a part whose customers
    never paid keeps none: the accounts' ids, and so their parts, are random)."""
    return {(int(item.SK.partition("#")[2] or 0), int(item.Shards or 1))
            for item in RevenueCohort.query(RevenueCohort.pk())}


def _same(a: dict, b: dict) -> bool:
    return {**a, "figures_from": None} == {**b, "figures_from": None}


def test_a_part_is_the_customers_of_whole_shards() -> None:
    customers = [f"acct-{n}" for n in range(400)]
    for count in (2, 4, 8, 16):
        parts = [Part(index, count) for index in range(count)]
        # every customer in exactly one part, and every day shard in exactly one part
        assert all(sum(p.holds(c) for p in parts) == 1 for c in customers)
        for customer in customers:
            [mine] = [p for p in parts if p.holds(customer)]
            assert mine.has(shard_of(customer, SHARDS))
        assert all(sum(p.has(s) for p in parts) == 1 for s in range(SHARDS))
    assert str(Part(1, 4)) == "2 of 4"


def test_a_part_s_own_rows_are_numbered_within_it() -> None:
    rows = [CohortRow("2027-01", TODAY, {"*": 1}, {"*": [1]}, {}, shard, 4) for shard in range(4)]
    mine = own(rows + [CohortRow("2027-01", TODAY, {"*": 9}, {"*": [9]}, {}, 0, 1)], Part(2, 4), 4)
    assert [(row.shard, row.shards) for row in mine] == [(0, 1)]  # the stale one-shard row is not read
    # added up, parts that kept a month through different days close it on no day
    late = CohortRow("2027-01", date(2026, 12, 5), {"*": 1, "USD": 1}, {"*": [1], "USD": [1]}, {"USD": [500]}, 1, 2)
    whole = merged([CohortRow("2027-01", TODAY, {"*": 2}, {"*": [2]}, {}, 0, 2), late])
    assert whole["2027-01"].through == date.min and whole["2027-01"].members == {"*": 3, "USD": 1}
    assert merged(rows)["2027-01"].retained == {"*": [4]}


def _side_by_side(first: date, parts: int) -> None:
    """Every part's rebuild at once, each in a thread of its own (as processes on several
    hosts would run them), against the same table."""
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            rebuild(TODAY, first=first, part=Part(index, parts))
        except BaseException as error:  # noqa: BLE001 (reported below)
            failures.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(parts)]
    with on(TODAY):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []


def _nights(first: date, parts: int, nights: int = 1) -> None:
    """Every part's rebuild, one after the other, ``nights`` times."""
    with on(TODAY):
        for _ in range(nights):
            for index in range(parts):
                rebuild(TODAY, first=first, part=Part(index, parts))


def test_four_parts_side_by_side_keep_what_one_rebuild_keeps(history: date, settings, ddb_requests) -> None:
    views = _views()
    assert len(views) >= 7  # the whole business, two products, the monthly interval, three currencies
    recomputed = _reports(views)
    assert all(r["figures_from"] != "kept" for r in recomputed.values())
    settings.REVENUE_REBUILD_PARTS = 4
    _side_by_side(history, 4)
    # The first night, a view only some parts' customers are in (the history's products and
    # currencies are not the catalog's) may miss the months of a part that ran before the
    # view was added: such a view is recomputed; every figure is the recomputation's.
    first_night = _reports(views)
    assert first_night[ReportFilter()]["figures_from"] == "kept"
    assert all(_same(first_night[view], recomputed[view]) for view in views)
    _side_by_side(history, 4)  # the next night: every view is every part's
    kept = _reports(views)
    for view in views:
        assert kept[view]["figures_from"] == "kept", view
        assert _same(kept[view], recomputed[view]), view
    # the page's reads stay two Queries for a view, whatever the parts (each month and
    # cohort a part's item)
    ddb_requests.reset()
    with on(TODAY):
        revenue_report(MONTH, today=TODAY, within=ReportFilter(currency="EUR"), since=SINCE)
    assert ddb_requests.ops == ["Query", "Query"]
    # the API's months and cohorts are the kept ones too
    for kind in ("mrr", "movements", "cohorts"):
        answer = revenue_metrics(kind, from_month=SINCE, to_month=MONTH, currency="EUR", today=TODAY)
        assert answer["figures"] == "kept", kind
    # the items: a cohort per month and part, a view's month per part
    assert _cohort_keys() <= {(n, 4) for n in range(4)} and len(_cohort_keys()) > 1
    assert {item.SK for item in RevenueMonth.query("REVENUE#MONTHS#CURRENCY#EUR", RevenueMonth.SK.startswith(MONTH))} \
        == {f"{MONTH}#{n:02d}" for n in range(4)}
    # and each part (its last months: the nightly check), and the whole, check as agreeing
    for part in range(1, 5):
        out = io.StringIO()
        with on(TODAY):
            call_command("revenue_rebuild", "--check", "--part", str(part), "--from", LATELY.isoformat(), "--json",
                         stdout=out)
        answer = json.loads(out.getvalue())
        assert answer["agree"] and (answer["part"], answer["parts"]) == (part, 4)
    with on(TODAY):
        assert check(TODAY, first=history).agree


def test_a_part_reads_its_own_accounts_only(history: date, settings, ddb_requests) -> None:
    # one Query an account's item collection: the two parts together read each account once,
    # as one rebuild does; each run, split or not, also reads the coupons, the disputes, the
    # catalog and the first kept month (a Query each) and adds its views (an UpdateItem),
    # and lists the users' links
    settings.REVENUE_REBUILD_PARTS = 2
    with on(TODAY):
        counts = []
        for part in (None, Part(0, 2), Part(1, 2)):
            ddb_requests.reset()
            rebuild(TODAY, first=history, part=part)
            counts.append(ddb_requests.by_name())
    whole, first, second = counts
    accounts = len(revenue_history.STORIES)
    assert accounts < whole["Query"] and first["Query"] < whole["Query"] and second["Query"] < whole["Query"]
    assert whole["Query"] == accounts + 4
    assert first["Query"] + second["Query"] == accounts + 2 * 4
    assert (whole["UpdateItem"], first["UpdateItem"], second["UpdateItem"]) == (1, 1, 1)
    assert first["BatchGetItem"] == second["BatchGetItem"] == whole["BatchGetItem"]


def test_a_part_not_run_leaves_the_figures_recomputed_never_wrong(history: date, settings) -> None:
    views = _views()
    recomputed = _reports(views)
    settings.REVENUE_REBUILD_PARTS = 2
    with on(TODAY):
        rebuild(TODAY, first=history, part=Part(0, 2))
    half = _reports(views)
    for view in views:
        assert half[view]["figures_from"] != "kept", view
        assert _same(half[view], recomputed[view]), view
    with on(TODAY):
        missing = check(TODAY, first=LATELY, part=Part(1, 2))
        assert check(TODAY, first=LATELY, part=Part(0, 2)).agree
    assert not missing.agree and any(what == "not kept" for _, _, what in missing.differences)
    with on(TODAY):
        rebuild(TODAY, first=history, part=Part(1, 2))
    # the whole business is kept; a view the first part did not know of (its customers were
    # never in it) lacks its months until that part runs again (the next night)
    whole = _reports(views)
    assert whole[ReportFilter()]["figures_from"] == "kept"
    assert all(_same(whole[view], recomputed[view]) for view in views)
    _nights(history, 2)
    assert all(report["figures_from"] == "kept" for report in _reports(views).values())


def test_a_part_a_day_behind_leaves_the_month_recomputed(history: date, settings) -> None:
    # both parts kept the figures yesterday; today only the first has run: the month under
    # way closes on two days, so it is recomputed, and its cohorts are not taken either
    settings.REVENUE_REBUILD_PARTS = 2
    yesterday = date(2026, 12, 3)
    with on(yesterday):
        for index in range(2):
            rebuild(yesterday, first=history, part=Part(index, 2))
    with on(TODAY):
        rebuild(TODAY, first=date(2026, 12, 1), part=Part(0, 2))
        report = revenue_report(MONTH, today=TODAY, since=SINCE)
        cohorts = revenue_metrics("cohorts", from_month=SINCE, to_month=MONTH, today=TODAY)
    assert report.source != "kept" and cohorts["figures"] == "recomputed"
    assert revenue_rollups.cohort_rows(MONTH, MONTH)  # the rows are there: the days differ
    with on(TODAY):
        rebuild(TODAY, first=date(2026, 12, 1), part=Part(1, 2))
        assert revenue_report(MONTH, today=TODAY, since=SINCE).source == "kept"


def test_a_change_of_the_number_of_parts_leaves_no_stale_figure(history: date, settings) -> None:
    views = _views()
    recomputed = _reports(views)
    settings.REVENUE_REBUILD_PARTS = 4
    with on(TODAY):
        rebuild(TODAY, first=history)  # one process may still keep every part's items
    assert _cohort_keys() <= {(n, 4) for n in range(4)} and len(_cohort_keys()) > 1
    for parts in (1, 2):
        settings.REVENUE_REBUILD_PARTS = parts
        # until the rebuild, a view's months and the cohorts of the old cut are not read
        assert revenue_report(MONTH, today=TODAY, within=ReportFilter(currency="EUR"), since=SINCE).source != "kept"
        if parts == 1:
            with on(TODAY):
                rebuild(TODAY, first=history)
        else:
            _nights(history, parts, nights=2)
        with on(TODAY):
            assert check(TODAY, first=LATELY).agree
        kept = _reports(views)
        for view in views:
            assert kept[view]["figures_from"] == "kept", (parts, view)
            assert _same(kept[view], recomputed[view]), (parts, view)


def test_a_tampered_item_is_named_by_its_part_s_check_only(history: date, settings) -> None:
    settings.REVENUE_REBUILD_PARTS = 2
    _nights(history, 2, nights=2)
    scope = Scope("CURRENCY", "USD")
    [row] = [r for r in revenue_rollups.month_rows("2026-06", "2026-06", scope) if r.shard == 1]
    revenue_rollups.write_months([replace(row, paying=row.paying + 7)], rebuilt_at="2026-12-04T00:00:00", scope=scope)
    outputs = {}
    for part in (1, 2):
        out = io.StringIO()
        with on(TODAY), pytest.raises(SystemExit) if part == 2 else nullcontext():
            call_command("revenue_rebuild", "--check", "--part", str(part), "--from", "2026-06-01", stdout=out)
        outputs[part] = out.getvalue()
    assert "The kept figures agree (part 1 of 2)" in outputs[1]
    assert "2026-06-30 month currency=USD *: paying customers kept" in outputs[2]


@pytest.mark.parametrize(("parts", "args", "error"), [
    (1, ["--part", "1", "--from", "2025-06-30"], "--part: the rebuild is not split (REVENUE_REBUILD_PARTS is 1)"),
    (4, ["--part", "5", "--from", "2025-06-30"], "--part 5: the parts are 1 to 4 (REVENUE_REBUILD_PARTS)"),
    (4, ["--part", "0", "--check"], "--part 0: the parts are 1 to 4 (REVENUE_REBUILD_PARTS)"),
    (4, ["--part", "2"], "--part needs --from: every part must keep the same days"),
])
def test_a_part_that_is_not_one_is_a_clear_error(settings, moto_table, parts: int, args: list[str], error: str) -> None:
    settings.REVENUE_REBUILD_PARTS = parts
    with pytest.raises(CommandError, match="^" + error.replace("(", r"\(").replace(")", r"\)") + "$"):
        call_command("revenue_rebuild", *args)


def test_the_number_of_parts_must_divide_the_shards(settings) -> None:
    settings.REVENUE_REBUILD_PARTS = 3
    [found] = [m for m in run_checks() if m.id == "billing.E009"]
    assert "can be split into 1, 2, 4, 8, 16 parts" in found.msg
    settings.REVENUE_REBUILD_PARTS = 8
    assert not [m for m in run_checks() if m.id == "billing.E009"]


def test_the_nightly_line_keeps_a_part_from_yesterday(db, moto_table, settings) -> None:
    # deploy/k8s/revenue-cronjob.yaml's line: the part from the Indexed Job, yesterday in the
    # billing time zone (no date arithmetic in the shell)
    settings.REVENUE_REBUILD_PARTS = 2
    out = io.StringIO()
    with on(TODAY):
        call_command("revenue_rebuild", "--part", "2", "--from", "yesterday", "--json", stdout=out)
    done = json.loads(out.getvalue())
    assert (done["from"], done["to"], done["part"], done["parts"]) == ("2026-12-03", "2026-12-04", 2, 2)
    with pytest.raises(CommandError, match=r"^--from tomorrow: not a day \(YYYY-MM-DD, today or yesterday\)$"):
        call_command("revenue_rebuild", "--from", "tomorrow")
