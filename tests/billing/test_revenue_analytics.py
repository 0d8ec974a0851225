"""Revenue analytics (docs/ANALYTICS.md): MRR per currency at a day, its monthly movements
(opening + movements = closing, exactly, over any history), churn and cohorts; the staff
Revenue page (finance only), the command that prints the same figures, and what the page
reads."""

from __future__ import annotations

import io
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
import time_machine
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from billing import access
from billing.analytics import revenue_report
from billing.analytics.history import Change, CouponTerms, SubHistory, SubState, build_history
from billing.analytics.mrr import Kind, movements, mrr_at, steps
from billing.analytics.report import build_report, month_days, months_ending
from billing.analytics.retention import cohorts, customer_churn
from billing.models import AuditAction, SubscriptionStatus
from billing.rules.lifecycle import CancelMode
from tests.builders import TEST_CARD, make_user

URL = "admin:staff_revenue"
ROOT = Path(__file__).resolve().parents[2]


# --- the rules: states, MRR at a day, movements -------------------------------------------


def state(start: date, amount: int = 1000, currency: str = "USD", status: str = "active", **more) -> SubState:
    return SubState(start=start, status=status, amount=amount, currency=currency, **more)


def history(customer: str, *states: SubState, key: str = "SUB#1") -> SubHistory:
    return SubHistory(customer, f"{key}#{customer}", tuple(states))


D = date(2027, 1, 10)


def test_what_counts_at_the_close_of_a_day() -> None:
    subs = [
        history("a", state(D)),  # active: counts
        history("b", state(D, 2000, "EUR")),  # another currency: never added
        history("c", state(D, trial_end=D + timedelta(days=13))),  # in its trial until the 23rd
        history("d", state(D, paused_from=D + timedelta(days=5), paused_until=D + timedelta(days=30))),
        history("e", state(D, status="cancelled", paid_through=D + timedelta(days=20))),  # at period end
        history("f", state(D, status="incomplete")),  # never started
        history("g", state(D, 1000, recurring_discount=250)),  # a coupon for ever
        history("h", state(D, status="past_due")),  # past due: still counted until it is cancelled
    ]
    assert mrr_at(subs, D) == {"EUR": 2000, "USD": 1000 + 1000 + 1000 + 750 + 1000}
    # the pause starts on the 15th: from the close of the 14th, the next day is paused
    assert mrr_at(subs, D + timedelta(days=3))["USD"] == 4750
    assert mrr_at(subs, D + timedelta(days=4))["USD"] == 3750
    # the trial's last free day closes: counted from then
    assert mrr_at(subs, D + timedelta(days=12))["USD"] == 3750
    assert mrr_at(subs, D + timedelta(days=13))["USD"] == 4750
    # the cancelled one's last paid day closes: no longer counted
    assert mrr_at(subs, D + timedelta(days=20))["USD"] == 3750
    # the pause's last day closes: counted again
    assert mrr_at(subs, D + timedelta(days=29))["USD"] == 4750
    assert mrr_at(subs, D - timedelta(days=1)) == {}


def test_each_movement_is_named() -> None:
    jan, feb, mar, apr = (date(2027, m, 1) for m in (1, 2, 3, 4))
    subs = [
        history("up", state(jan), state(feb, 1500)),  # expansion in February
        history("down", state(jan), state(feb + timedelta(days=9), 400)),  # contraction
        history("gone", state(jan), state(feb + timedelta(days=3), status="cancelled", paid_through=mar)),
        history("back", state(jan), state(jan + timedelta(days=5), status="cancelled", paid_through=jan),
                key="SUB#1"),
        history("back", state(mar + timedelta(days=2), 700), key="SUB#2"),  # reactivation in March
        history("later", state(apr, 900, "EUR")),
    ]
    moved = steps(subs, date(2027, 4, 30))
    assert [(s.customer, s.day, s.kind) for s in moved if s.customer == "back"] == [
        ("back", jan, Kind.NEW), ("back", jan + timedelta(days=5), Kind.CHURN),
        ("back", mar + timedelta(days=2), Kind.REACTIVATION)]
    feb_moves = movements(moved, *month_days("2027-02"))["USD"]
    assert (feb_moves.opening, feb_moves.expansion, feb_moves.contraction, feb_moves.churn) == (3000, 500, 600, 0)
    mar_moves = movements(moved, *month_days("2027-03"))["USD"]
    # "gone" was paid through March 1st: its churn closes that day
    assert (mar_moves.opening, mar_moves.churn, mar_moves.reactivation, mar_moves.closing) == (2900, 1000, 700, 2600)
    assert movements(moved, *month_days("2027-04"))["EUR"].new == 900


def test_churn_and_cohorts() -> None:
    jan, feb = date(2027, 1, 5), date(2027, 2, 5)
    subs = [history("a", state(jan)), history("b", state(jan), state(feb, status="cancelled", paid_through=feb)),
            history("c", state(feb))]
    moved = steps(subs, date(2027, 3, 31))
    churn = customer_churn(moved, date(2027, 1, 31), date(2027, 2, 28))
    assert (churn.at_start, churn.lost, churn.rate) == (2, 1, 50)
    closes = [(m, month_days(m)[1]) for m in months_ending("2027-03", 3)]
    grid = cohorts(moved, closes)
    assert [(c.month, c.size, c.retained) for c in grid] == [
        ("2027-01", 2, (2, 1, 1)), ("2027-02", 1, (1, 1)), ("2027-03", 0, (0,))]
    assert [str(s) for s in grid[0].shares] == ["100.0", "50.0", "50.0"]


def test_a_history_from_the_audit_snapshots() -> None:
    snapshot = {"Status": "active", "PaymentAmount": 1000, "Currency": "usd", "PaidThroughDate": None}
    changes = [
        Change(D, AuditAction.SUBSCRIPTION_CREATED, None, snapshot),
        Change(D + timedelta(days=3), AuditAction.COUPON_APPLIED, snapshot,
               {**snapshot, "Coupon": "LOYAL", "CouponPaymentsLeft": None}),
        Change(D + timedelta(days=4), AuditAction.COUPON_APPLIED, snapshot,
               {**snapshot, "Coupon": "ONCE", "CouponPaymentsLeft": 1}),
        Change(D + timedelta(days=5), AuditAction.PAYMENT_SUCCEEDED, None, {"Amount": 1000}),  # no snapshot
        Change(D + timedelta(days=9), AuditAction.SUBSCRIPTION_CANCELLED, snapshot,
               {**snapshot, "Status": "cancelled", "PaidThroughDate": "2027-02-14"}),
    ]
    coupons = {"LOYAL": CouponTerms(percent_off=10), "ONCE": CouponTerms(amount_off=500)}
    built = build_history("acc", "SUB#x", created=D, changes=changes, current={}, coupons=coupons)
    assert [(s.start, s.status, s.recurring_discount) for s in built.states] == [
        (D, "active", 0), (D + timedelta(days=3), "active", 100), (D + timedelta(days=4), "active", 0),
        (D + timedelta(days=9), "cancelled", 0)]
    assert built.states[0].currency == "USD"
    assert mrr_at([built], D + timedelta(days=3)) == {"USD": 900}  # for ever: off MRR
    assert mrr_at([built], D + timedelta(days=4)) == {"USD": 1000}  # once: not
    assert mrr_at([built], date(2027, 2, 13)) == {"USD": 1000}
    assert mrr_at([built], date(2027, 2, 14)) == {}


# --- the identity, over any history --------------------------------------------------------

FIRST_DAY = date(2026, 11, 1)
DAYS = 200


@st.composite
def sub_states(draw: st.DrawFn) -> tuple[SubState, ...]:
    offsets = sorted(set(draw(st.lists(st.integers(0, DAYS), min_size=1, max_size=5))))
    states = []
    for offset in offsets:
        start = FIRST_DAY + timedelta(days=offset)
        amount = draw(st.integers(0, 5000))

        near = st.integers(-10, 60).map(lambda n, start=start: start + timedelta(days=n))
        states.append(SubState(
            start=start,
            status=draw(st.sampled_from([s.value for s in SubscriptionStatus])),
            amount=amount,
            currency=draw(st.sampled_from(["USD", "EUR", "JPY"])),
            paid_through=draw(st.none() | near),
            trial_end=draw(st.none() | near),
            paused_from=draw(st.none() | near),
            paused_until=draw(st.none() | near),
            recurring_discount=draw(st.integers(0, amount)),
        ))
    return tuple(states)


histories = st.lists(st.tuples(st.sampled_from("abcde"), sub_states()), max_size=8).map(
    lambda subs: [SubHistory(c, f"SUB#{n}", s) for n, (c, s) in enumerate(subs)])


@settings(max_examples=150, deadline=None)
@given(histories, st.integers(0, DAYS + 30))
def test_opening_plus_movements_is_closing_and_the_recomputed_mrr(subs: list[SubHistory], today_offset: int) -> None:
    today = FIRST_DAY + timedelta(days=today_offset)
    report = build_report(subs, today=today)
    for row in report.months:
        before = mrr_at(subs, row.first - timedelta(days=1))
        after = mrr_at(subs, row.close)
        for currency in set(before) | set(after) | set(row.by_currency):
            m = row.by_currency[currency]
            assert m.opening + m.new + m.expansion + m.reactivation - m.contraction - m.churn == m.closing
            assert (m.opening, m.closing) == (before.get(currency, 0), after.get(currency, 0))
            assert min(m.new, m.expansion, m.contraction, m.churn, m.reactivation) >= 0
    assert report.mrr == mrr_at(subs, today)
    news = [(s.customer, s.currency) for s in steps(subs, today) if s.kind == Kind.NEW]
    assert len(news) == len(set(news))  # a customer is new once per currency


snapshots = st.fixed_dictionaries({
    "Status": st.sampled_from(["active", "past_due", "cancelled", "incomplete"]),
    "PaymentAmount": st.integers(0, 5000), "Currency": st.sampled_from(["usd", "EUR"]),
    "PaidThroughDate": st.none() | st.dates(date(2027, 1, 1), date(2027, 6, 30)).map(date.isoformat),
})
changes = st.lists(st.tuples(st.integers(0, 90), st.sampled_from(
    [AuditAction.SUBSCRIPTION_SWITCHED, AuditAction.SUBSCRIPTION_CANCELLED, AuditAction.PAYMENT_SUCCEEDED]),
    snapshots), max_size=8)


@settings(max_examples=100, deadline=None)
@given(snapshots, changes)
def test_a_history_takes_each_days_last_snapshot(created: dict, later: list) -> None:
    events = [Change(D, AuditAction.SUBSCRIPTION_CREATED, None, created)] + [
        Change(D + timedelta(days=n), action, None, after if action != AuditAction.PAYMENT_SUCCEEDED else {"Amount": 1})
        for n, action, after in later]
    built = build_history("acc", "SUB#x", created=D, changes=events, current={}, coupons={})
    starts = [s.start for s in built.states]
    assert starts == sorted(set(starts)) and starts[0] == D  # one state a day, none before the creation
    # The oracle replays the events in the order they were made: a snapshot sets the state; a
    # payment that succeeds on an incomplete subscription starts it (its event holds no snapshot).
    expected: dict[date, tuple[str, int, str]] = {}
    now: tuple[str, int, str] | None = None
    for e in sorted(events, key=lambda e: e.day):
        if e.action == AuditAction.PAYMENT_SUCCEEDED:
            if now is None or now[0] != "incomplete":
                continue
            now = ("active", now[1], now[2])
        else:
            now = (e.after["Status"], e.after["PaymentAmount"], e.after["Currency"].upper())
        expected[max(D, e.day)] = now
    for day, want in expected.items():
        state = next(s for s in built.states if s.start == day)
        assert (state.status, state.amount, state.currency) == want


# --- from the table: a known history ----------------------------------------------------------


def on(day: date):
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


def subscribe(account, amount: int, currency: str, day: date, sku: str = "NEWS-DAILY"):
    with on(day):
        sub = access.create_subscription(account, sku=sku, payment_day=day.day, amount=amount, currency=currency,
                                         card=TEST_CARD, today=day, reminder_days_before=7, product_name=sku.title())
        # as after its first payment: due again next month
        return access.set_schedule(sub, next_payment=day + timedelta(days=31), last_payment=day,
                                   next_reminder=day + timedelta(days=24), last_reminder=day)


def cancel(sub, day: date, mode: CancelMode = CancelMode.NOW):
    with on(day):
        return access.end_subscription(access.get_subscription(sub.account_id, sub.sub_id), mode=mode, today=day,
                                       actor="test", reason="too_expensive")


@pytest.fixture
def scenario(db, moto_table):
    """January 2027: Ada (USD 10.00) and Bo (EUR 20.00) subscribe; Cy (USD 5.00) too.
    February: Cy cancels now (churn); Ada gets a coupon for ever of 10% (contraction).
    March: Cy subscribes again (reactivation); Bo cancels at the end of the period (still
    counted until its last paid day, April 11, closes)."""
    ada, bo, cy = (access.create_account(f"{n}@example.com", user_id=make_user(f"{n}@example.com").pk)
                   for n in ("ada", "bo", "cy"))
    with on(date(2027, 1, 1)):
        loyal = access.create_coupon("LOYAL10", percent_off=10, duration="forever", actor="test")
    a = subscribe(ada, 1000, "USD", date(2027, 1, 10))
    b = subscribe(bo, 2000, "EUR", date(2027, 1, 12))
    c = subscribe(cy, 500, "USD", date(2027, 1, 20))
    cancel(c, date(2027, 2, 5))
    with on(date(2027, 2, 8)):
        access.apply_coupon(access.get_subscription(ada.account_id, a.sub_id), loyal, today=date(2027, 2, 8),
                            actor="test")
    subscribe(cy, 500, "USD", date(2027, 3, 3), sku="NEWS-LITE")
    with on(date(2027, 3, 12)):  # as the payment run leaves it: paid to April 11
        access.set_schedule(access.get_subscription(bo.account_id, b.sub_id), next_payment=date(2027, 4, 12),
                            last_payment=date(2027, 3, 12), next_reminder=date(2027, 4, 5),
                            last_reminder=date(2027, 3, 5))
    cancel(b, date(2027, 3, 15), CancelMode.PERIOD_END)
    return ada, bo, cy


def test_the_known_history_month_by_month(scenario) -> None:
    report = revenue_report("2027-03", today=date(2027, 4, 20))
    assert report.close == date(2027, 3, 31)
    assert report.mrr == {"EUR": 2000, "USD": 1400}
    rows = {row.month: row.by_currency for row in report.months}
    jan, feb, mar = rows["2027-01"], rows["2027-02"], rows["2027-03"]
    assert (jan["USD"].new, jan["USD"].closing, jan["EUR"].new) == (1500, 1500, 2000)
    assert (feb["USD"].opening, feb["USD"].churn, feb["USD"].contraction, feb["USD"].closing) == (1500, 500, 100, 900)
    assert (mar["USD"].reactivation, mar["USD"].closing, mar["EUR"].churn) == (500, 1400, 0)
    assert (report.customer_churn.at_start, report.customer_churn.lost) == (2, 0)  # Cy came back in March
    april = revenue_report(today=date(2027, 4, 20))
    assert april.mrr == {"USD": 1400}  # Bo's paid period ended on April 11
    assert {row.month: row.by_currency for row in april.months}["2027-04"]["EUR"].churn == 2000
    assert (april.customer_churn.at_start, april.customer_churn.lost, str(april.customer_churn.rate)) == (3, 1, "33.3")
    jan_cohort = next(c for c in april.cohorts if c.month == "2027-01")
    assert (jan_cohort.size, jan_cohort.retained) == (3, (3, 2, 3, 2))


# --- the page and the command -----------------------------------------------------------------


def staff(client: Client, role: str | None, superuser: bool = False) -> Client:
    user = make_user(f"{role or 'super'}@rpay.localhost", staff=True, roles=[role] if role else [])
    if superuser:
        user.is_superuser = True
        user.save()
    client.force_login(user)
    return client


def test_the_page_shows_the_figures_and_the_command_prints_the_same(client: Client, scenario, ddb_requests) -> None:
    with on(date(2027, 4, 20)):
        staff(client, "finance")
        ddb_requests.reset()
        response = client.get(reverse(URL), {"month": "2027-03"})
    assert response.status_code == 200
    # the catalog (the product filter's list: one Query); nothing kept (no revenue_rebuild):
    # the close's month of rollups (one Query), then the coupons (one Query), the users'
    # account links (one BatchGetItem per 100 users), then one Query per account, then the
    # disputes' partition (one Query a page): never a Scan
    assert ddb_requests.ops == ["Query", "Query", "Query", "BatchGetItem", "Query", "Query", "Query", "Query"]
    html = response.content.decode()
    assert "14.00 USD" in html.split('data-testid="mrr-USD"')[1].split("</tr>")[0]
    feb = html.split('data-testid="move-USD-2027-02"')[1].split("</tr>")[0]
    assert "15.00 USD" in feb and "5.00 USD" in feb and "1.00 USD" in feb and "9.00 USD" in feb
    assert '<svg viewBox="0 0 312 120"' in html and "<title" in html
    assert 'data-testid="cohort-2027-01"' in html
    assert reverse(URL) in html.split('class="staff-nav"')[1].split("</ul>")[0]  # the header links it
    out = io.StringIO()
    with on(date(2027, 4, 20)):
        call_command("revenue_report", "--month", "2027-03", "--json", stdout=out)
    assert json.loads(out.getvalue()) == json.loads(json.dumps(response.context["report"].as_dict()))
    text = io.StringIO()
    with on(date(2027, 4, 20)):
        call_command("revenue_report", "--month", "2027-03", stdout=text)
    assert "Movements, USD:" in text.getvalue() and "14.00 USD" in text.getvalue()
    assert "USD: ARR 168.00, ARPA 7.00, net revenue retention 155.6%" in text.getvalue()
    assert "MRR in EUR at the ECB's reference rates:" in text.getvalue()


def test_a_bad_month_reads_only_the_catalog(client: Client, db, moto_table, ddb_requests) -> None:
    with on(date(2027, 4, 20)):
        staff(client, "finance")
        ddb_requests.reset()
        for month in ("2027-13", "2027-05", "x"):
            response = client.get(reverse(URL), {"month": month})
            assert response.status_code == 400
            assert 'data-testid="month-error"' in response.content.decode()
    # the catalog, for the product filter's list (one Query a page): no figure read
    assert ddb_requests.ops == ["Query"] * 3
    with on(date(2027, 4, 20)), pytest.raises(Exception, match="not a month"):
        call_command("revenue_report", "--month", "2027-05")


@pytest.mark.parametrize(("role", "superuser", "allowed"), [
    ("finance", False, True), (None, True, True), ("support", False, False), ("catalog", False, False),
    ("admin", False, True),  # the business's figures: finance and admin, never support
])
def test_who_sees_the_page(client: Client, db, moto_table, role, superuser, allowed) -> None:
    staff(client, role, superuser)
    response = client.get(reverse(URL))
    assert response.status_code == (200 if allowed else 403)
    if not allowed:
        nav = client.get(reverse("admin:index")).content.decode()
        assert reverse(URL) not in nav


def test_the_package_sits_below_the_pages() -> None:
    refused = ("billing.actions", "billing.batches", "billing.views", "billing.staff", "billing.api",
               "billing.operations")
    for path in (ROOT / "billing" / "analytics").glob("*.py"):
        source = path.read_text()
        for name in refused:
            assert f"from {name}" not in source and f"import {name}" not in source, (path, name)


def test_the_demo_shows_movements(client: Client, db, moto_table) -> None:
    """``make run``'s demo: subscriptions in force from their first kept receipt (new MRR
    months ago), then today a switch down (contraction) and a cancel now (churn)."""
    with on(date(2026, 12, 4)):  # a day when both are possible (neither payment is due)
        call_command("seed_demo", stdout=io.StringIO())
        staff(client, "finance")
        response = client.get(reverse(URL))
    assert response.status_code == 200
    report = response.context["report"]
    assert sum(m.new for row in report.months for m in row.by_currency.values()) > 0
    this_month = report.months[-1].by_currency
    assert this_month["USD"].contraction == 999 - 499  # Daily News switched down to Lite
    assert this_month["GBP"].churn == 4500  # the gym cancelled now
    assert report.excluded  # a trial and a pause to come: in force, not counted (said on the page)
    assert 'data-testid="movements-USD"' in response.content.decode()
    # make run then keeps the figures (scripts/dev.py): the page reads them, the same figures
    with on(date(2026, 12, 4)):
        call_command("revenue_rebuild", stdout=io.StringIO())
        kept = client.get(reverse(URL))
    assert kept.context["report"].source == "kept" and 'data-testid="figures-kept"' in kept.content.decode()
    assert {**kept.context["report"].as_dict(), "figures_from": None} == {**report.as_dict(), "figures_from": None}


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_page_fits_390_px(browser, moto_table, live_server) -> None:
    """In a real Chromium, on the demo: at 390 px the page never scrolls sideways (its wide
    tables scroll in their own box, the charts shrink); in Korean too."""
    from tests.browser import demo_staff_page, screenshot

    call_command("seed_demo", stdout=io.StringIO())
    for language, heading in (("en", "MRR movements"), ("ko", "MRR 변동")):
        page = demo_staff_page(browser, live_server, {"width": 390, "height": 844}, language)
        page.goto("/admin/staff/revenue/")
        page.wait_for_load_state()
        assert heading in page.content()
        screenshot(page, f"revenue-{language}-390")
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
        page.context.close()
