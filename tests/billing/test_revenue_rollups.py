"""The kept revenue figures (docs/ANALYTICS.md, "Kept figures"): ``revenue_rebuild`` keeps
each day's figures as rollup items per shard; ``--check`` recomputes and compares (exit 0
and one line when they agree, one line per differing day and currency and exit 1 when not);
a killed rebuild run again ends with the same items."""

from __future__ import annotations

import dataclasses
import io
import json
from datetime import date, timedelta

import pytest
from django.core.management import call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from billing.access import revenue_rollups
from billing.analytics.mrr import movements, mrr_at, paying_customers, steps
from billing.analytics.rebuild import rebuild
from billing.analytics.rollups import day_rows, differences, kept_movements, merge
from billing.management.demo import revenue_history, usage_revenue
from billing.models import RevenueCohort, RevenueMonth, RevenueRollup
from tests.billing.test_revenue_analytics import DAYS, FIRST_DAY, histories, on, scenario  # noqa: F401 (a fixture)

TODAY = date(2026, 12, 4)


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("revenue_rebuild", *args, stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue()
    return 0, out.getvalue()


def kept_items() -> dict[tuple[str, str], dict]:
    """Every kept item of the months a test rebuilds, the month items and the cohorts, as
    stored, without the time of the run that wrote them."""
    found = {}
    partitions = [(RevenueRollup, RevenueRollup.pk(month=month)) for month in
                  ("2025-05", "2025-06", "2025-07", "2026-09", "2026-10", "2026-11", "2026-12")]
    for model, pk in [*partitions, (RevenueMonth, RevenueMonth.pk()), (RevenueCohort, RevenueCohort.pk())]:
        for item in model.query(pk):
            found[(item.PK, item.SK)] = {k: v for k, v in item.serialize().items() if k != "RebuiltAt"}
    return found


@pytest.fixture
def demo(db, moto_table) -> None:
    with on(TODAY):
        revenue_history.seed(TODAY)
        usage_revenue.seed(TODAY)


def test_rebuild_then_check_agrees_on_the_demo(demo) -> None:
    with on(TODAY):
        code, out = run("--json")
        done = json.loads(out)
        code_check, said = run("--check")
    assert code == 0 and done["items"] > 16 * 500, done
    assert code_check == 0, said
    assert said.startswith("The kept figures agree:") and said.count("\n") == 1, said


def test_a_tampered_item_is_named_and_exits_1(demo) -> None:
    # The demo's last two months: the check names a differing day whatever the range, and
    # test_rebuild_then_check_agrees_on_the_demo checks them all.
    since = ("--from", "2026-10-01")
    with on(TODAY):
        run(*since)
        rows = [r for r in revenue_rollups.month_rollups("2026-11") if r.figures]
        target = rows[0]
        figures = {c: dict(v) for c, v in target.figures.items()}
        currency = sorted(figures)[0]
        figures[currency]["mrr"] += 100
        # Only the MRR changes: the day's other counts stay as kept (a shard holding a paused
        # customer that day keeps its count).
        revenue_rollups.write_rollups([dataclasses.replace(target, figures=figures)], rebuilt_at="tampered")
        code, said = run("--check", *since)
        code_json, as_json = run("--check", "--json", *since)
        # the usage revenue kept too: the demo's of 10 November (usage_revenue.py), 0.07 more
        [paid] = [r for r in revenue_rollups.month_rollups("2026-11") if r.money.get("USD", {}).get("usage")]
        usage = {**paid.money, "USD": {**paid.money["USD"], "usage": paid.money["USD"]["usage"] + 7}}
        revenue_rollups.write_rollups([dataclasses.replace(paid, money=usage)], rebuilt_at="tampered")
        _, said_usage = run("--check", *since)
    assert code == 1
    assert said.strip().splitlines() == [f"{target.day} {currency}: mrr kept "
                                         f"{_total(target.day, currency)} recomputed "
                                         f"{_total(target.day, currency) - 100}"]
    body = json.loads(as_json)
    assert code_json == 1 and body["agree"] is False and len(body["differences"]) == 1
    was = paid.money["USD"]["usage"]
    assert f"{paid.day} USD: usage kept {was + 7} recomputed {was}" in said_usage.strip().splitlines()


def _total(day: date, currency: str) -> int:
    return sum(r.figures.get(currency, {}).get("mrr", 0)
               for r in revenue_rollups.month_rollups(day.isoformat()[:7]) if r.day == day)


class Killed(Exception):
    pass


def test_a_killed_rebuild_run_again_ends_with_the_same_items(demo) -> None:
    # The last three months of the demo's eighteen (1,520 day items, killed at the 300th):
    # what a kill and a rerun do does not depend on how many days the run covers, and
    # test_rebuild_then_check_agrees_on_the_demo rebuilds them all.
    first = date(2026, 9, 1)
    with on(TODAY):
        rebuild(TODAY, first=first, rebuilt_at="first")
        whole = kept_items()
        with RevenueRollup.batch_write() as batch:  # the test's own clean slate (moto), 25 a request
            for item in RevenueRollup.scan():
                if item.PK.startswith("REVENUE#"):
                    batch.delete(item)
        count = 0

        def stop(_row) -> None:
            nonlocal count
            count += 1
            if count == 300:
                raise Killed

        with pytest.raises(Killed):
            rebuild(TODAY, first=first, rebuilt_at="killed", written=stop)
        assert run("--check", "--from", first.isoformat())[0] == 1  # days not kept yet
        rebuild(TODAY, first=first, rebuilt_at="again")
        assert kept_items() == whole
        assert run("--check", "--from", first.isoformat())[0] == 0


def test_from_and_to_limit_the_days(demo) -> None:
    with on(TODAY):
        code, out = run("--from", "2026-11-01", "--to", "2026-11-30", "--json")
        assert json.loads(out)["items"] == 30 * 16
        assert run("--check", "--from", "2026-11-01", "--to", "2026-11-30")[0] == 0
        assert run("--check", "--from", "2026-10-01", "--to", "2026-11-30")[0] == 1
        with pytest.raises(Exception, match="not a day"):
            call_command("revenue_rebuild", "--from", "2026-13-01")


# --- over generated histories: the kept days are the recomputation's -----------------------

@settings(max_examples=60, deadline=None)
@given(histories, st.integers(0, DAYS + 30), st.sampled_from([1, 3, 16]))
def test_kept_days_added_up_are_the_recomputed_figures(subs, today_offset: int, shards: int) -> None:
    today = FIRST_DAY + timedelta(days=today_offset)
    moved = steps(subs, today)
    first = FIRST_DAY - timedelta(days=1)
    kept = merge(day_rows(moved, first, today, shards))
    assert all(d.complete for d in kept.values()) and len(kept) == (today - first).days + 1
    for day in (first, FIRST_DAY + timedelta(days=today_offset // 2), today):
        assert kept[day].mrr == mrr_at(subs, day)
        assert kept[day].paying == len(paying_customers(moved, day))
    start = FIRST_DAY + timedelta(days=today_offset // 3)
    assert kept_movements(kept, start, today) == movements(moved, start, today)
    # the same days cut into another number of shards: nothing differs
    assert differences(kept, merge(day_rows(moved, first, today, 5))) == []


def test_the_page_says_its_figures_are_recomputed(client, db, moto_table) -> None:
    from django.urls import reverse

    from tests.billing.test_revenue_analytics import URL, staff
    with on(TODAY):
        page = staff(client, "finance").get(reverse(URL))
    assert page.status_code == 200
    assert "run revenue_rebuild to keep them" in page.content.decode()


def test_rebuild_then_check_agrees_on_the_known_history_day_after_day(scenario) -> None:  # noqa: F811
    # the tests' known history (cancels now and at period end, a coupon for ever, a
    # comeback), rebuilt and checked on days from its last write (the items as they stand
    # are today's: an earlier day would meet items from its future) past Bo's last paid day
    for day in (date(2027, 3, 15), date(2027, 3, 31), date(2027, 4, 10), date(2027, 4, 11), date(2027, 4, 20)):
        with on(day):
            assert run()[0] == 0
            code, said = run("--check")
            assert code == 0 and said.startswith("The kept figures agree:"), (day, said)
