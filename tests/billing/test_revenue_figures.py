"""The month's other figures (docs/ANALYTICS.md, "More figures"): ARR, paying customers,
ARPA, net and gross revenue retention, trial-to-paid conversion, failed-payment recovery,
refunds and disputes; their rules over generated histories, and the page on a known one."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import time_machine
from django.test import Client
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from billing import access
from billing.actions import subscriptions as subscribing
from billing.analytics import revenue_report
from billing.analytics.figures import Money, arpa, payment_recovery, trial_conversion, trials_started
from billing.analytics.report import build_report
from billing.analytics.retention import revenue_churn
from billing.operations import refunds
from tests.billing.test_revenue_analytics import (  # noqa: F401 (scenario: a fixture)
    DAYS,
    FIRST_DAY,
    URL,
    histories,
    history,
    on,
    scenario,
    staff,
    state,
)
from tests.builders import card, make_user, receipts_of

MAR = date(2027, 3, 1)
END = date(2027, 3, 31)


def test_arpa_is_mrr_over_paying_accounts_half_up() -> None:
    assert (arpa(1000, 3), arpa(1001, 2), arpa(1000, 0)) == (333, 501, None)


def test_a_trial_converts_when_it_is_paying_at_the_close_of_its_last_free_day() -> None:
    subs = [
        history("paid", state(MAR, trial_end=MAR + timedelta(days=13))),
        history("left", state(MAR, trial_end=MAR + timedelta(days=13)),
                state(MAR + timedelta(days=5), status="cancelled", paid_through=MAR + timedelta(days=5),
                      trial_end=MAR + timedelta(days=13))),
        # extended from the 10th to April: it has not ended in March
        history("longer", state(MAR, trial_end=MAR + timedelta(days=9)),
                state(MAR + timedelta(days=2), trial_end=date(2027, 4, 9))),
        history("later", state(MAR, trial_end=date(2027, 4, 2))),
        # started in February (ends in April): not March's; one without a trial is none
        history("february", state(date(2027, 2, 20), trial_end=date(2027, 4, 5))),
        history("no trial", state(MAR + timedelta(days=4))),
    ]
    ratio = trial_conversion(subs, MAR, END)
    assert (ratio.part, ratio.whole, ratio.rate) == (1, 2, Decimal("50.0"))
    # the trials started in March: four, the extended one once
    assert (trials_started(subs, MAR, END), trials_started(subs, date(2027, 2, 1), date(2027, 2, 28))) == (4, 1)


def test_a_past_due_subscription_that_pays_again_is_recovered() -> None:
    subs = [
        history("back", state(date(2027, 2, 1)), state(MAR + timedelta(days=3), status="past_due"),
                state(MAR + timedelta(days=6))),
        history("lost", state(date(2027, 2, 1)), state(MAR + timedelta(days=3), status="past_due"),
                state(MAR + timedelta(days=20), status="cancelled", paid_through=MAR + timedelta(days=20))),
        history("open", state(date(2027, 2, 1)), state(END, status="past_due")),
        history("before", state(date(2027, 2, 1)), state(date(2027, 2, 20), status="past_due"), state(MAR)),
    ]
    ratio = payment_recovery(subs, MAR, END)
    assert (ratio.part, ratio.whole, str(ratio.rate)) == (1, 3, "33.3")


@settings(max_examples=100, deadline=None)
@given(histories, st.integers(0, DAYS + 30),
       st.lists(st.tuples(st.integers(0, DAYS + 30), st.sampled_from(["USD", "EUR"]), st.integers(1, 10**6)),
                max_size=6))
def test_the_figures_agree_with_the_month_s_mrr_and_movements(subs, today_offset, refunds) -> None:
    today = FIRST_DAY + timedelta(days=today_offset)
    money = [Money(FIRST_DAY + timedelta(days=n), c, a) for n, c, a in refunds]
    report = build_report(subs, today=today, refunds=money, disputes=money)
    figures = report.figures
    last = report.months[-1]
    churn = {r.currency: r for r in revenue_churn(last.by_currency)}
    assert figures.paying_customers <= sum(f.paying for f in figures.by_currency)
    for f in figures.by_currency:
        assert f.mrr == report.mrr.get(f.currency, 0) and f.arr == 12 * f.mrr
        assert (f.paying == 0) == (f.arpa is None) and (f.paying == 0) == (f.mrr == 0)
        if f.arpa is not None:
            assert abs(f.arpa * f.paying - f.mrr) * 2 <= f.paying  # half up: within half a unit each
        if f.currency in churn and churn[f.currency].opening:
            # retention is churn's complement: both kept to one decimal, half up
            assert abs(f.net_retention + churn[f.currency].net_rate - 100) <= Decimal("0.1")
            assert abs(f.gross_retention + churn[f.currency].gross_rate - 100) <= Decimal("0.1")
        in_month = [m for m in money if m.currency == f.currency and last.first <= m.day <= last.close]
        assert (f.refunds, f.refunded) == (len(in_month), sum(m.amount for m in in_month)) == (f.disputes, f.disputed)
    assert figures.trials.part <= figures.trials.whole and figures.recovery.part <= figures.recovery.whole


def test_the_page_shows_them_for_the_known_history(client: Client, scenario) -> None:  # noqa: F811
    with on(date(2027, 4, 20)):
        staff(client, "finance")
        response = client.get(reverse(URL), {"month": "2027-03"})
    f = response.context["report"].figures
    usd = next(r for r in f.by_currency if r.currency == "USD")
    # March, USD: opening 9.00 (Ada less her coupon), Cy back for 5.00: 14.00 from Ada and Cy
    assert (usd.mrr, usd.arr, usd.paying, usd.arpa) == (1400, 16800, 2, 700)
    assert (str(usd.net_retention), str(usd.gross_retention)) == ("155.6", "100.0")
    assert f.paying_customers == 3
    row = response.content.decode().split('data-testid="figures-USD"')[1].split("</tr>")[0]
    assert "168.00 USD" in row and "7.00 USD" in row and "155.6%" in row


def test_refunds_and_disputes_are_read_from_the_table(db, moto_table) -> None:
    """A paid subscription, a partial refund and a dispute opened in March: the month's
    figures count them in the receipt's currency (the refund from the account's own item
    collection, the dispute from the disputes' partition)."""
    made = date(2027, 3, 10)
    moment = time_machine.travel(date(2027, 3, 10).isoformat() + "T12:00:00+00:00", tick=False)
    with moment:
        account = access.create_account("ann@example.com", user_id=make_user("ann@example.com").pk)
        sub = subscribing.subscribe(account, sku="NEWS", product_name="News", payment_day=10, amount=1000,
                                    currency="USD", card=card(), today=made, actor="customer").sub
        [paid] = receipts_of(sub)
        refunds.refund_receipt(paid, 300, request_id="req-1", actor="staff@example.com")
        access.record_dispute(access.get_receipt(sub.account_id, paid.SK), access.Dispute(
            "dp_1", paid.ChargeId, 700, "USD", "fraudulent", "needs_response", "2027-03-10T12:00:00+00:00"),
            actor="stripe")
    report = revenue_report("2027-03", today=date(2027, 3, 20))
    usd = next(r for r in report.figures.by_currency if r.currency == "USD")
    assert (usd.refunds, usd.refunded, usd.disputes, usd.disputed) == (1, 300, 1, 700)
    assert report.figures.paying_customers == 1 and usd.arpa == 1000
