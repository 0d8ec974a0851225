"""A known answer (docs/ANALYTICS.md, "Twelve customers, by hand"): twelve customers over the
first six months of 2027, in dollars and euros, written as their subscriptions' audit
events (the snapshots ``history.build_history`` reads), and every figure of the report
computed by hand beforehand: each month's movements, June's MRR, churn, retention, ARR,
ARPA, paying customers, the trials, the payment recovery and the cohort grid.

The customers (amounts in minor units, a month unless said):

==  ====  ===========================================================================
A   USD   5000 from 5 Jan; switched up to 8000 on 10 Mar (expansion 3000)
B   USD   2 seats at 1000 from 12 Jan; 5 seats on 3 Apr (expansion 3000)
C   USD   a yearly price of 120000 from 1 Feb: 10000 a month
D   USD   3000 from 20 Jan; 10 % off for ever from 10 Feb (contraction 300); the coupon
          ends on 10 May (expansion 300)
E   EUR   4000 from 8 Jan with 20 % off its first 3 payments (a temporary cut: never
          a movement), the coupon gone on 8 Apr
F   EUR   2500 from 15 Feb; paused from 15 Apr until 15 Jun: churn at the close of 14 Apr,
          reactivation at the close of 14 Jun (the pause's last day)
G   USD   1000 from 3 Jan; cancelled now on 3 Mar (churn); back on 20 May (reactivation)
H   EUR   6000 from 1 Mar; cancelled at period end on 10 Apr, paid through 31 May: churn
          on 31 May, its last paid day
I   USD   1500 with a free trial to 14 Apr, from 1 Apr: new at the close of 14 Apr
J   USD   4000 from 5 Feb; past due on 5 May, paid again on 8 May (recovered)
K   EUR   3000 from 25 Jan; past due on 1 Jun, cancelled by dunning on 10 Jun (churn)
L   EUR   2000 with a free trial to 2 Jun, from 20 May; cancelled on 30 May: never paid
==  ====  ===========================================================================
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from billing.analytics.history import Change, CouponTerms, SubHistory, build_history
from billing.analytics.mrr import Excluded
from billing.analytics.report import build_report
from billing.models import AuditAction

COUPONS = {"LOYAL10": CouponTerms(percent_off=10), "WELCOME": CouponTerms(percent_off=20)}
TODAY = date(2027, 7, 5)


def snap(amount: int, currency: str, status: str = "active", **more: object) -> dict:
    return {"Status": status, "PaymentAmount": amount, "Currency": currency, "PaidThroughDate": None, **more}


def d(month: int, day: int) -> date:
    return date(2027, month, day)


def history(customer: str, n: int, created: date, first: dict, *later: tuple[date, str, dict]) -> SubHistory:
    changes = [Change(created, AuditAction.SUBSCRIPTION_CREATED, None, first)]
    changes += [Change(day, action, None, after) for day, action, after in later]
    return build_history(customer, f"SUB#{customer}{n}", created=created, changes=changes, current={},
                         coupons=COUPONS)


def scenario() -> list[SubHistory]:
    switched, cancelled, declined = AuditAction.SUBSCRIPTION_SWITCHED, AuditAction.SUBSCRIPTION_CANCELLED, \
        AuditAction.PAYMENT_DECLINED
    return [
        history("A", 1, d(1, 5), snap(5000, "usd"), (d(3, 10), switched, snap(8000, "usd"))),
        history("B", 1, d(1, 12), snap(2000, "usd"), (d(4, 3), AuditAction.QUANTITY_CHANGED, snap(5000, "usd"))),
        history("C", 1, d(2, 1), snap(120000, "usd", Interval="year", IntervalCount=1)),
        history("D", 1, d(1, 20), snap(3000, "usd"),
                (d(2, 10), AuditAction.COUPON_APPLIED, snap(3000, "usd", Coupon="LOYAL10", CouponPaymentsLeft=None)),
                (d(5, 10), AuditAction.PAYMENT_SUCCEEDED, snap(3000, "usd"))),
        history("E", 1, d(1, 8), snap(4000, "eur", Coupon="WELCOME", CouponPaymentsLeft=3),
                (d(2, 8), AuditAction.PAYMENT_SUCCEEDED, snap(4000, "eur", Coupon="WELCOME", CouponPaymentsLeft=2)),
                (d(4, 8), AuditAction.PAYMENT_SUCCEEDED, snap(4000, "eur"))),
        history("F", 1, d(2, 15), snap(2500, "eur"),
                (d(4, 1), AuditAction.SUBSCRIPTION_PAUSED, snap(2500, "eur", PausedFrom="2027-04-15",
                                                                 PausedUntil="2027-06-15")),
                (d(6, 15), AuditAction.PAYMENT_SUCCEEDED, snap(2500, "eur"))),
        history("G", 1, d(1, 3), snap(1000, "usd"),
                (d(3, 3), cancelled, snap(1000, "usd", "cancelled", PaidThroughDate="2027-03-03"))),
        history("G", 2, d(5, 20), snap(1000, "usd")),
        history("H", 1, d(3, 1), snap(6000, "eur"),
                (d(4, 10), cancelled, snap(6000, "eur", "cancelled", PaidThroughDate="2027-05-31",
                                           CancelMode="period_end"))),
        history("I", 1, d(4, 1), snap(1500, "usd", TrialEnd="2027-04-14")),
        history("J", 1, d(2, 5), snap(4000, "usd"),
                (d(5, 5), declined, snap(4000, "usd", "past_due")),
                (d(5, 8), AuditAction.PAYMENT_SUCCEEDED, snap(4000, "usd"))),
        history("K", 1, d(1, 25), snap(3000, "eur"),
                (d(6, 1), declined, snap(3000, "eur", "past_due")),
                (d(6, 10), cancelled, snap(3000, "eur", "cancelled", PaidThroughDate="2027-05-24"))),
        history("L", 1, d(5, 20), snap(2000, "eur", TrialEnd="2027-06-02"),
                (d(5, 30), cancelled, snap(2000, "eur", "cancelled", TrialEnd="2027-06-02"))),
    ]


# (opening, new, expansion, contraction, churn, reactivation, closing), by hand
MOVEMENTS = {
    "USD": {
        "2027-01": (0, 11000, 0, 0, 0, 0, 11000),  # G 1000, A 5000, B 2000, D 3000
        "2027-02": (11000, 14000, 0, 300, 0, 0, 24700),  # C 10000, J 4000; D's coupon
        "2027-03": (24700, 0, 3000, 0, 1000, 0, 26700),  # A up; G cancelled now
        "2027-04": (26700, 1500, 3000, 0, 0, 0, 31200),  # I's trial ends; B's seats
        "2027-05": (31200, 0, 300, 0, 0, 1000, 32500),  # D's coupon ends; G back
        "2027-06": (32500, 0, 0, 0, 0, 0, 32500),
    },
    "EUR": {
        "2027-01": (0, 7000, 0, 0, 0, 0, 7000),  # E 4000 (a temporary coupon: its full price), K 3000
        "2027-02": (7000, 2500, 0, 0, 0, 0, 9500),  # F
        "2027-03": (9500, 6000, 0, 0, 0, 0, 15500),  # H
        "2027-04": (15500, 0, 0, 0, 2500, 0, 13000),  # F paused
        "2027-05": (13000, 0, 0, 0, 6000, 0, 7000),  # H's last paid day
        "2027-06": (7000, 0, 0, 0, 3000, 2500, 6500),  # K lost to dunning; F's pause over
    },
}


def test_every_month_s_movements() -> None:
    report = build_report(scenario(), today=TODAY, month="2027-06")
    rows = {row.month: row.by_currency for row in report.months}
    assert [row.month for row in report.months][-6:] == list(MOVEMENTS["USD"])
    for currency, months in MOVEMENTS.items():
        for month, expected in months.items():
            m = rows[month][currency]
            assert (m.opening, m.new, m.expansion, m.contraction, m.churn, m.reactivation, m.closing) == expected, \
                (currency, month)
    assert all(not rows[row.month] for row in report.months[:6])  # July to December 2026: nothing yet


def test_june_s_figures() -> None:
    report = build_report(scenario(), today=TODAY, month="2027-06")
    assert report.close == d(6, 30)
    assert report.mrr == {"EUR": 6500, "USD": 32500}  # E 4000 + F 2500; A B C D G I J
    assert report.excluded == {Excluded.TRIAL: 0, Excluded.PAUSED: 0}
    # paying at the opening (the close of 31 May): A B C D E G I J K (F paused, H gone); K lost
    assert (report.customer_churn.at_start, report.customer_churn.lost, report.customer_churn.rate) == \
        (9, 1, Decimal("11.1"))
    churn = {r.currency: (r.opening, r.lost, r.regained, r.gross_rate, r.net_rate) for r in report.revenue_churn}
    assert churn == {"EUR": (7000, 3000, 2500, Decimal("42.9"), Decimal("7.1")),  # 3000 / 7000; 500 / 7000
                     "USD": (32500, 0, 0, Decimal("0.0"), Decimal("0.0"))}
    figures = report.figures
    assert figures is not None
    assert figures.paying_customers == 9  # A B C D G I J in dollars, E F in euros
    by = {f.currency: f for f in figures.by_currency}
    assert (by["USD"].mrr, by["USD"].arr, by["USD"].paying, by["USD"].arpa) == (32500, 390000, 7, 4643)  # 4642.86
    assert (by["EUR"].mrr, by["EUR"].arr, by["EUR"].paying, by["EUR"].arpa) == (6500, 78000, 2, 3250)
    assert (by["USD"].net_retention, by["USD"].gross_retention) == (Decimal("100.0"), Decimal("100.0"))
    # (7000 - 3000 + 2500) / 7000 and (7000 - 3000) / 7000
    assert (by["EUR"].net_retention, by["EUR"].gross_retention) == (Decimal("92.9"), Decimal("57.1"))
    # L's trial ended on 2 June, cancelled before: 0 of 1; K's episode (1 June) lost: 0 of 1
    assert (figures.trials.whole, figures.trials.part, figures.trials.rate) == (1, 0, Decimal("0.0"))
    assert figures.trials_started == 0
    assert (figures.recovery.whole, figures.recovery.part, figures.recovery.rate) == (1, 0, Decimal("0.0"))


def test_april_s_and_may_s_trials_and_recovery() -> None:
    april = build_report(scenario(), today=TODAY, month="2027-04").figures
    may = build_report(scenario(), today=TODAY, month="2027-05").figures
    assert april is not None and may is not None
    # I's trial: started 1 April, its last free day 14 April, paying at its close
    assert (april.trials.whole, april.trials.part, april.trials_started) == (1, 1, 1)
    assert (april.recovery.whole, april.recovery.part) == (0, 0)
    # L's trial started 20 May; J's episode of 5 May paid again on the 8th
    assert (may.trials.whole, may.trials_started) == (0, 1)
    assert (may.recovery.whole, may.recovery.part, may.recovery.rate) == (1, 1, Decimal("100.0"))


def test_the_cohorts() -> None:
    report = build_report(scenario(), today=TODAY, month="2027-06")
    grid = {c.month: (c.size, c.retained) for c in report.cohorts}
    assert grid["2027-01"] == (6, (6, 6, 5, 5, 6, 5))  # A B D E G K: G away March-April, K lost in June
    assert grid["2027-02"] == (3, (3, 3, 2, 2, 3))  # C J F: F paused at the close of April and May
    assert grid["2027-03"] == (1, (1, 1, 0, 0))  # H: cancelling in April, gone on 31 May
    assert grid["2027-04"] == (1, (1, 1, 1))  # I
    assert grid["2027-05"] == (0, (0, 0))  # G came back (a January customer), L never paid
    assert grid["2027-06"] == (0, (0,))
    assert all(size == 0 for month, (size, _) in grid.items() if month < "2027-01")
    assert [str(s) for s in next(c for c in report.cohorts if c.month == "2027-01").shares] == \
        ["100.0", "100.0", "83.3", "83.3", "100.0", "83.3"]


def test_the_mrr_cohorts() -> None:
    # a currency's cohort is of its first payments in it; its MRR at each close, and that as
    # a share of its own month's close (its net MRR retention)
    report = build_report(scenario(), today=TODAY, month="2027-06")
    usd = {c.month: (c.size, c.mrr) for c in report.mrr_cohorts["USD"]}
    # January, A B D G: 5000 + 2000 + 3000 + 1000; D's coupon (Feb); A up, G gone (Mar); B's
    # seats (Apr); D's coupon ended and G back (May)
    assert usd["2027-01"] == (4, (11000, 10700, 12700, 15700, 17000, 17000))
    assert [str(s) for s in next(c for c in report.mrr_cohorts["USD"] if c.month == "2027-01").mrr_shares] == \
        ["100.0", "97.3", "115.5", "142.7", "154.5", "154.5"]
    assert usd["2027-02"] == (2, (14000, 14000, 14000, 14000, 14000))  # C's 10000 a month, J's 4000
    assert usd["2027-04"] == (1, (1500, 1500, 1500))  # I: its trial ended on 14 April, paying at the close
    eur = {c.month: (c.size, c.mrr) for c in report.mrr_cohorts["EUR"]}
    assert eur["2027-01"] == (2, (7000, 7000, 7000, 7000, 7000, 4000))  # E and K; K lost in June
    assert eur["2027-02"] == (1, (2500, 2500, 0, 0, 2500))  # F, paused at the close of April and May
    assert report.as_dict()["mrr_cohorts"]["EUR"][0]["mrr"] == list(report.mrr_cohorts["EUR"][0].mrr)
