"""Usage revenue (docs/ANALYTICS.md, "More figures"): the usage billed by the charges that
were paid, net of tax, in the month each was paid; a declined usage charge never paid is
none; never MRR. Known answers on metered subscriptions billed by the real payment paths,
recomputed from the audit history and read back from the kept items alike."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine

from billing import access
from billing.access import revenue_rollups
from billing.access.usage import UsageEvent, get_meter, record_event
from billing.access.usage_billing import attach_metered_price
from billing.actions import lifecycle
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.analytics import RevenueReport, with_reporting_currency
from billing.analytics.cohort_table import cohort_table
from billing.analytics.daily import daily_counts
from billing.analytics.filters import ReportFilter, filtered_usage
from billing.analytics.kept_report import kept_report
from billing.analytics.mrr import steps
from billing.analytics.reading import account_histories, coupon_terms, usage_of
from billing.analytics.report import build_report
from billing.analytics.rollups import by_month, day_rows, differences, merge, month_rows, shard_of
from billing.management.commands.revenue_report import text
from billing.models import AuditEvent, MeterAggregation, RevenueMonth, RevenueRollup, Subscription
from billing.operations import payments
from billing.rules.pricing import PriceTerms
from billing.staff.revenue_csv import usage_months_rows
from billing.staff.revenue_pages import usage_month_rows
from tests.builders import DECLINED_NUMBER, card, fresh, make_account, make_subscription, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

START = date(2027, 2, 15)
CANCEL = date(2027, 4, 20)
TODAY = date(2027, 4, 30)
SHARDS = 2
MONTHS = 3  # the report's months: February to April, opening at the close of January


def _metered(price_id: str, email: str) -> Subscription:
    sub = make_subscription(make_account(email), sku="API", payment_day=15, amount=999, today=START)
    sub = access.set_schedule(sub, next_payment=date(2027, 3, 15), last_payment=START,
                              next_reminder=date(2027, 3, 8), last_reminder=date(2027, 2, 8))
    sub = access.replace_card(fresh(sub), card(), actor="test")
    return attach_metered_price(fresh(sub), price_id, actor="test")


def _calls(sub: Subscription, day: date, calls: int) -> None:
    at = datetime(day.year, day.month, day.day, 10, tzinfo=UTC)
    event = UsageEvent(sub.account_id, f"calls-{sub.sub_id}-{day.isoformat()}", Decimal(calls),
                       int(at.timestamp()), day.isoformat())
    record_event(get_meter("api_calls"), event, now=at)


# the days something happens (nothing does between them): the calls sent that day
CALLS = {date(2027, 2, 20): 7, date(2027, 3, 15): 0, date(2027, 3, 20): 10, date(2027, 4, 15): 0,
         date(2027, 4, 16): 3, CANCEL: 0}


@pytest.fixture
def billed(moto_table) -> list[Subscription]:
    """Two metered subscriptions (9.99 USD a month and a cent a call) from 15 February, 7
    calls each on 20 February, 10 on 20 March and 3 on 16 April, renewed (with the usage in
    arrears) on 15 March and 15 April, both cancelled now on 20 April: ``paid``'s usage
    charge at the cancel is paid, ``declined``'s card declines it (never paid)."""
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    price = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(1)), actor="test",
                                    nickname="a cent a call", meter="api_calls")
    subs = [_metered(price.PriceId, "paid@example.com"), _metered(price.PriceId, "declined@example.com")]
    for day, calls in CALLS.items():
        with time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False):
            for sub in subs:
                current = fresh(sub)
                if current.NextPaymentDate == day.isoformat():
                    assert payments.take_payment(current, run_date=day).status == "paid"
                if calls:
                    _calls(sub, day, calls)
            if day == CANCEL:
                fresh(subs[1]).update(actions=[Subscription.PaymentDetails.Token.set(card(DECLINED_NUMBER).token)])
                for sub in subs:
                    lifecycle.cancel_now(fresh(sub), today=day, actor="customer", reason="too_expensive")
    return subs


def _read(subs: list[Subscription]):
    coupons, histories, usage = coupon_terms(), [], []
    for sub in subs:
        collection = access.get_account_collection(sub.account_id)
        histories += account_histories(sub.account_id, coupons, "UTC", collection)
        usage += usage_of(collection, "UTC", sub.account_id)
    return histories, usage


def test_usage_revenue_is_the_paid_charges_usage_in_the_month_paid_never_mrr(billed) -> None:
    paid, declined = billed
    # the receipts' usage: 7 calls (15 Feb - 14 Mar) paid on 15 March, 10 (15 Mar - 14 Apr)
    # on 15 April, each; ``paid``'s 3 (15-20 Apr) at its cancel; ``declined``'s 3 never paid
    # (the prices include the tax: a usage line's net is its amount less the tax in it)
    assert sorted((r.ProcessedDate[:10], r.UsageQuantity, r.TaxLines[-1].Gross, r.TaxLines[-1].Net)
                  for r in receipts_of(paid) if r.UsageStart) == [
        ("2027-03-15", 7, 7, 6), ("2027-04-15", 10, 10, 8), ("2027-04-20", 3, 3, 2)]
    assert [r.Kind for r in receipts_of(declined) if r.Kind == "usage"] == []
    histories, usage = _read(billed)
    march = build_report(histories, today=TODAY, month="2027-03", usage=usage)
    april = build_report(histories, today=TODAY, month="2027-04", usage=usage)
    assert march.figures.usage == {"USD": 2 * 6}
    assert april.figures.usage == {"USD": 2 * 8 + 2}
    assert march.as_dict()["figures"]["currencies"]["USD"]["usage_revenue"] == 12
    # the usage is not MRR: March closes on the two fixed fees alone
    assert march.mrr == {"USD": 2 * 999}
    # each month of a range has its own usage, as each month's figures do
    assert [row.usage for row in build_report(histories, today=TODAY, month="2027-04", usage=usage,
                                               months=MONTHS).months] == [{}, {"USD": 12}, {"USD": 18}]
    _usage_by_month_shown(build_report(histories, today=TODAY, month="2027-04", usage=usage, months=MONTHS))
    # an event written before the events carried the usage: none (no receipt is read)
    assert build_report(histories, today=TODAY, month="2027-03").figures.usage == {}
    # the page's filters: the usage names its subscription, so a product keeps its own
    assert filtered_usage(usage, histories, ReportFilter(product="API")) == usage
    assert filtered_usage(usage, histories, ReportFilter(product="NEWS-DAILY")) == []
    assert filtered_usage(usage, histories, ReportFilter(currency="EUR")) == []
    # the same from the kept items (one test: the billing above is its setup's cost)
    _kept_is_recomputed(billed, histories, usage)
    _older_events_take_their_receipts(billed, usage)


def _usage_by_month_shown(made: RevenueReport) -> None:
    """The page's table of usage per month, its CSV and the command's lines: each month's usage
    in its currency, and all of them in the reporting currency at the month close's rates."""
    report = with_reporting_currency(made)
    assert report.usage_currencies == ["USD"]
    converted = [conv.lines[0].converted if conv.lines else 0 for conv in report.usage_months_reporting]
    assert [conv.total for conv in report.usage_months_reporting] == converted and converted[0] == 0
    assert 0 < converted[1] < converted[2]  # 12 and 18 cents, in euros
    assert usage_month_rows(report)["rows"][2][1] == [(18, "USD")]
    rows = list(usage_months_rows(report))
    assert rows[0] == ["month", "USD", "total_EUR", "left_out"]
    assert rows[1:] == [["2027-02", "0.00", "0.00", ""], ["2027-03", "0.12", f"{converted[1] / 100:.2f}", ""],
                        ["2027-04", "0.18", f"{converted[2] / 100:.2f}", ""]]
    printed = text(report)
    assert "Usage revenue per month (charges paid in it, excluding tax):" in printed
    assert any(line.split() == ["2027-04", "0.18", f"{converted[2] / 100:.2f}"] for line in printed.splitlines())
    assert report.as_dict()["usage_by_month"][2]["usage_revenue"] == {"USD": 18}


def _older_events_take_their_receipts(billed: list[Subscription], usage) -> None:
    """Events written before they carried ``UsageNet`` (data of an earlier release): the
    usage comes from their receipts, read in the same item collections, while kept; a
    receipt expired, its usage is 0 (written down in docs/ANALYTICS.md)."""
    for sub in billed:
        for event in access.get_account_collection(sub.account_id).events:
            if event.After and "UsageNet" in event.After:
                event.update(actions=[AuditEvent.After.set({k: v for k, v in event.After.items()
                                                            if k != "UsageNet"})])
    assert sorted(_read(billed)[1], key=repr) == sorted(usage, key=repr)
    # the cancel's usage receipt expires (TTL): its usage is no longer seen
    [gone] = [r for r in receipts_of(billed[0]) if r.Kind == "usage"]
    gone.delete()
    assert sorted(_read(billed)[1], key=repr) == sorted((m for m in usage if m.day != CANCEL), key=repr)


def _kept_is_recomputed(billed: list[Subscription], histories, usage) -> None:
    """The items ``revenue_rebuild`` writes keep the usage and read it back as it was
    recomputed; an item written before they kept it is no answer (recomputed), and
    ``--check`` says so."""
    moved = steps(histories, TODAY)
    daily = daily_counts(histories, [], [], lambda c: shard_of(c, SHARDS), usage)
    days = list(day_rows(moved, date(2027, 1, 31), TODAY, SHARDS, daily))
    revenue_rollups.write_rollups(days, rebuilt_at="2027-04-30T00:00:00")
    revenue_rollups.write_months(month_rows(days), rebuilt_at="2027-04-30T00:00:00")
    kept_days = merge(revenue_rollups.rollup_rows(["2027-01", "2027-02", "2027-03", "2027-04"]))
    assert differences(kept_days, merge(days)) == []
    assert kept_days[date(2027, 4, 20)].usage == {"USD": 2}  # the cancel's charge, on its day
    kept = by_month(revenue_rollups.month_rows("2027-01", "2027-04"))
    cohorts = {row.month: row for row in cohort_table(moved, TODAY)}
    made = kept_report(kept, cohorts, today=TODAY, month="2027-04", count=MONTHS)
    assert made is not None and made.figures.usage == {"USD": 18}
    recomputed = build_report(histories, today=TODAY, month="2027-04", usage=usage, months=MONTHS)
    assert made.as_dict() == {**recomputed.as_dict(), "figures_from": "kept"}
    # a month item written before the usage was kept (no ``Usage``): not an answer, recomputed
    old = RevenueMonth.get(RevenueMonth.pk(), RevenueMonth.sk(month="2027-03", shard="00"))
    old.update(actions=[RevenueMonth.Usage.remove()])
    kept = by_month(revenue_rollups.month_rows("2027-01", "2027-04"))
    assert kept_report(kept, cohorts, today=TODAY, month="2027-04", count=MONTHS) is None
    # and a day's: ``--check`` says so, and its usage differs
    shard = f"{shard_of(billed[0].account_id, SHARDS):02d}"
    day = RevenueRollup.get(RevenueRollup.pk(month="2027-04"), RevenueRollup.sk(day="2027-04-20", shard=shard))
    day.update(actions=[RevenueRollup.Usage.remove()])
    found = differences(merge(revenue_rollups.rollup_rows(["2027-04"])), merge(d for d in days if d.day.month == 4))
    assert [(d.isoformat(), c, w) for d, c, w in found] == [
        ("2027-04-20", "*", "usage not kept (an item of an earlier rebuild)"),
        ("2027-04-20", "USD", "usage kept 0 recomputed 2")]
