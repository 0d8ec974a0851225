"""The staff Revenue page and ``revenue_report`` read the kept items (docs/ANALYTICS.md,
"Kept figures", "Who reads them"): once ``revenue_rebuild`` has kept the days a month's
report needs and the cohorts, the report made from them is the recomputed one, every
figure to the minor unit, from a bounded number of Queries whatever the number of
subscriptions; a month they do not cover is recomputed, and the page and the command say
which."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from datetime import date, timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from hypothesis import example, given, settings
from hypothesis import strategies as st

from billing import access
from billing.access import revenue_rollups
from billing.analytics import revenue_report
from billing.analytics.cohort_table import cohort_table
from billing.analytics.daily import daily_counts
from billing.analytics.figures import Money
from billing.analytics.kept_report import kept_report, report_months
from billing.analytics.mrr import steps
from billing.analytics.periods import month_first, month_of
from billing.analytics.rebuild import rebuild
from billing.analytics.report import build_report
from billing.analytics.rollups import by_month, day_rows, merge, month_rows, shard_of
from billing.management.demo import revenue_history, usage_revenue
from tests.billing.test_revenue_analytics import (  # noqa: F401 (scenario: a fixture)
    DAYS,
    FIRST_DAY,
    URL,
    histories,
    on,
    scenario,
    staff,
    subscribe,
)
from tests.builders import make_user

TODAY = date(2026, 12, 4)


def same(kept: dict, recomputed: dict) -> bool:
    return {**kept, "figures_from": None} == {**recomputed, "figures_from": None}


# --- over generated histories: the kept report is the recomputed one -----------------------

money = st.lists(st.tuples(st.integers(0, DAYS), st.sampled_from(["USD", "EUR", "KWD"]), st.integers(0, 5000),
                           st.sampled_from("abcde")), max_size=4).map(
    lambda items: [Money(FIRST_DAY + timedelta(days=n), c, a, who) for n, c, a, who in items])


@settings(max_examples=30, deadline=None)
@given(histories, money, money, money, st.integers(0, DAYS + 30), st.integers(0, 3), st.sampled_from([1, 3]))
# found by this test: a usage of nothing gave the recomputed month a currency line the kept one has not
@example([], [], [], [Money(FIRST_DAY, "USD", 0, "a")], 0, 0, 1)
def test_the_report_from_kept_days_and_cohorts_is_the_recomputed_one(subs, refunds, disputes, usage,
                                                                      today_offset: int, back: int,
                                                                      shards: int) -> None:
    today = FIRST_DAY + timedelta(days=today_offset)
    month = month_of(date(today.year, today.month, 1) - timedelta(days=31 * back) if back else today)
    moved = steps(subs, today)
    first, _ = report_months(month, today)
    daily = daily_counts(subs, refunds, disputes, lambda c: shard_of(c, shards), usage)
    # kept as the items keep them: the usage in its own attribute, read back into the money
    day_items = list(day_rows(moved, month_first(first), today, shards, daily))
    kept = by_month(month_rows(day_items))
    # the customers in any currency add up day to day: paying = yesterday's + new + back - gone
    by_day = merge(day_items)
    for day in sorted(by_day)[1:]:
        now, before = by_day[day], by_day[day - timedelta(days=1)]
        assert now.paying == before.paying + now.count("new_customers") + now.count("reactivated_customers") \
            - now.count("churned_customers")
    first_days = {s.customer for s in moved if s.after and s.day < month_first(first)}
    assert len(first_days) + sum(d.count("new_customers") for d in by_day.values()) == len(
        {s.customer for s in moved if s.after})
    rows = {row.month: row for row in cohort_table(moved, today)}
    made = kept_report(kept, rows, today=today, month=month)
    assert made is not None and made.source == "kept"
    recomputed = build_report(subs, today=today, month=month, refunds=refunds, disputes=disputes, usage=usage)
    assert same(made.as_dict(), recomputed.as_dict())
    # cohort rows kept a day earlier (a rebuild run yesterday) do not answer for the month under way
    stale = cohort_table(moved, today - timedelta(days=1))
    if today.day > 1 and month == month_of(today) and stale:
        assert kept_report(kept, {r.month: r for r in stale}, today=today, month=month) is None


# --- the demo's eighteen months: the page, the command and the API both ways ---------------

MONTHS = ("2026-12", "2026-03")


def command(month: str) -> str:
    out = io.StringIO()
    call_command("revenue_report", "--month", month, stdout=out)
    return out.getvalue()


def views(client: Client) -> dict:
    """Each month's page (its report as JSON too: the command's ``--json`` is the same
    ``as_dict``) and the command's text."""
    found = {}
    for month in MONTHS:
        response = client.get(reverse(URL), {"month": month})
        # the note says where the figures come from; every other byte must be the same
        html = re.sub(r'<p class="note" data-testid="figures-(kept|recomputed)">.*?</p>', "",
                      response.content.decode(), flags=re.S)
        html = re.sub(r'(csrfmiddlewaretoken" value|nonce)="[^"]*"', "", html)  # new each response
        html = re.sub(r"\s+", " ", html)
        found[month] = {"report": response.context["report"].as_dict(), "page": html, "text": command(month)}
    return found


def test_the_page_and_the_command_show_the_same_figures_kept_or_recomputed(client: Client, db, moto_table) -> None:
    with on(TODAY):
        revenue_history.seed(TODAY)
        usage_revenue.seed(TODAY)  # the demo's usage revenue: on the page and in the command both ways
        staff(client, "finance")
        before = views(client)
        rebuild(TODAY)
        after = views(client)
    assert {m: v["report"]["figures_from"] for m, v in before.items()} == dict.fromkeys(MONTHS, "recomputed")
    # kept from the month before the demo's first movement: March 2026's year starts before it
    assert {m: v["report"]["figures_from"] for m, v in after.items()} == {"2026-12": "kept", "2026-03": "recomputed"}
    for month in MONTHS:
        assert same(after[month]["report"], before[month]["report"]), month
        assert after[month]["page"] == before[month]["page"], month
        kept_text, recomputed_text = (v[month]["text"].splitlines() for v in (after, before))
        assert kept_text[0] == recomputed_text[0] and kept_text[2:] == recomputed_text[2:], month
    assert after["2026-12"]["text"].splitlines()[1].startswith("Figures: kept")
    assert before["2026-12"]["text"].splitlines()[1].startswith("Figures: recomputed")
    report = after["2026-12"]["report"]
    assert report["figures"]["paying_customers"] > 0 and sum(c["customers"] for c in report["cohorts"]) > 0
    assert report["figures"]["trial_conversion"]["ended"] + report["figures"]["payment_recovery"]["past_due"] >= 0
    assert report["figures"]["currencies"]["USD"]["usage_revenue"] == 2310 + 655  # the demo's, kept as recomputed
    # a day later, the rebuild has not kept that day: recomputed, and said so
    with on(TODAY + timedelta(days=1)):
        assert revenue_report(today=TODAY + timedelta(days=1)).source == "recomputed"


# --- what a view reads: bounded, whatever the number of subscriptions ----------------------

SUBSCRIBED = date(2027, 3, 2)
SEEN = date(2027, 4, 20)


def customers(first: int, count: int) -> None:
    for n in range(first, first + count):
        email = f"c{n}@example.com"
        account = access.create_account(email, user_id=make_user(email).pk)
        subscribe(account, 1000 + n, ("USD", "EUR")[n % 2], SUBSCRIBED + timedelta(days=n % 20))


@pytest.mark.parametrize("count", [10, 200])
def test_the_page_reads_the_same_queries_with_10_or_200_subscriptions(client: Client, db, moto_table, ddb_requests,
                                                                      count: int) -> None:
    # each count on a table of its own: on moto a Query walks the whole table, so accounts
    # read after the rollups are written would make the test slow, not the page
    user = make_user("finance@rpay.localhost", staff=True, roles=["finance"])
    customers(0, count)
    with on(SEEN):
        rebuild(SEEN, first=date(2026, 4, 30))  # the page's year of months and the one before
        client.force_login(user)  # on the day: a session begun earlier would have expired
        ddb_requests.reset()
        response = client.get(reverse(URL))
    html = response.content.decode()
    # the catalog (the product filter's list), one Query of the months (the twelve and the
    # one before, 16 items each) and one of the cohorts, whatever the count: no account, no
    # subscription, no receipt read
    assert response.status_code == 200 and ddb_requests.ops == ["Query", "Query", "Query"], ddb_requests.ops
    assert 'data-testid="figures-kept"' in html
    assert f">{count}<" in html.split('data-testid="cohort-2027-03"')[1].split("</tr>")[0]


def test_without_kept_items_the_page_says_recomputed(client: Client, db, moto_table) -> None:
    with on(SEEN):
        html = staff(client, "finance").get(reverse(URL)).content.decode()
    assert 'data-testid="figures-recomputed"' in html and "run revenue_rebuild to keep them" in html


def test_the_check_compares_the_kept_counts_and_cohorts(scenario) -> None:  # noqa: F811
    day = date(2027, 4, 20)
    with on(day):
        rebuild(day)
        assert check_run()[0] == 0
        row = next(r for r in revenue_rollups.month_rollups("2027-03") if r.counts)
        revenue_rollups.write_rollups([replace(row, counts={**row.counts, "lost": row.counts.get("lost", 0) + 1})],
                                      rebuilt_at="tampered")
        (cohort,) = revenue_rollups.cohort_rows("2027-01", "2027-01")
        revenue_rollups.write_cohorts([replace(cohort, retained={**cohort.retained, "*": [0] * 4})],
                                      rebuilt_at="tampered")
        code, said = check_run()
    lines = said.strip().splitlines()
    assert code == 1 and len(lines) == 2, said
    assert lines[0] == f"{row.day} *: lost kept {row.counts.get('lost', 0) + 1} recomputed {row.counts.get('lost', 0)}"
    # the worked example's January cohort (docs/ANALYTICS.md): 3, 2, 3, 2 still paying
    assert lines[1].startswith("2027-01-01 cohort: 2027-01 retained kept {'*': [0, 0, 0, 0]"), said
    assert "recomputed {'*': [3, 2, 3, 2]" in lines[1], said


def check_run() -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("revenue_rebuild", "--check", stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue()
    return 0, out.getvalue()
