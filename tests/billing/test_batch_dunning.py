"""Declines: past due, retried on PAYMENT_RETRY_DAYS, cancelled after the last retry."""

from __future__ import annotations

from datetime import date

import pytest
from django.core import mail

from billing import access, batches
from billing.models import SubscriptionStatus
from billing.operations import payments
from core.payments.gateway import get_gateway
from tests.builders import DECLINED_NUMBER, card, fresh, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

PERIOD = date(2027, 1, 15)


def run(day: date):
    return batches.run_payments(run_date=day, workers=2)


def test_declines_are_retried_on_the_configured_days_then_cancelled(table, settings) -> None:
    settings.PAYMENT_RETRY_DAYS = [1, 3, 5]
    [sub] = seed_due(1, due=PERIOD, number=DECLINED_NUMBER)

    first = run(PERIOD)
    assert first.counts["declined"] == 1 and first.counts["retried"] == 0 and first.ok
    after = fresh(sub)
    assert after.Status == SubscriptionStatus.PAST_DUE
    assert (after.NextPaymentDate, after.BillingPeriod, after.RetryCount) == ("2027-01-16", "2027-01-15", 0)
    assert after.NextReminderDate == "2027-02-08"  # the next period's reminder: the anchor holds

    for day, next_try, failed in ((date(2027, 1, 16), "2027-01-18", 1), (date(2027, 1, 18), "2027-01-20", 2)):
        assert run(day).counts["retried"] == 1
        after = fresh(sub)
        assert (after.NextPaymentDate, after.BillingPeriod, after.RetryCount) == (next_try, "2027-01-15", failed)

    assert run(date(2027, 1, 17)).counts["processed"] == 0  # not a retry day
    last = run(date(2027, 1, 20))
    assert last.counts["cancelled"] == 1 and last.counts["retried"] == 1
    after = fresh(sub)
    assert after.Status == SubscriptionStatus.CANCELLED and after.CancelReason == "payment_failed"
    assert after.NextPaymentDate is None and after.NextReminderDate is None  # out of both indexes
    assert receipts_of(sub) == []
    keys = [c["idempotency_key"] for c in get_gateway().charges_made(sub_id=sub.sub_id)]
    assert sorted(keys) == sorted([f"{sub.sub_id}:2027-01-15"] + [f"{sub.sub_id}:2027-01-15:retry{n}" for n in (1, 2, 3)])
    subjects = [m.subject.split(":")[0] for m in mail.outbox]
    assert subjects == ["Payment declined"] * 3 + ["Subscription cancelled"]
    assert "16 January 2027" in mail.outbox[0].body
    assert run(date(2027, 1, 22)).counts["processed"] == 0


def test_a_card_replaced_before_a_retry_pays_on_that_retry(table) -> None:
    [sub] = seed_due(1, due=PERIOD, number=DECLINED_NUMBER)
    run(PERIOD)
    access.replace_card(fresh(sub), card())  # the customer updates the card in the portal
    summary = run(date(2027, 1, 16))
    assert summary.counts["paid"] == 1 and summary.counts["retried"] == 1
    after = fresh(sub)
    assert after.Status == SubscriptionStatus.ACTIVE
    assert (after.NextPaymentDate, after.BillingPeriod, after.RetryCount) == ("2027-02-15", None, 0)
    assert after.LastPaymentDate == "2027-01-15"
    [receipt] = receipts_of(sub)
    assert receipt.BillingDate == "2027-01-15"  # pays the period, not the retry day
    made = get_gateway().charges_made(sub_id=sub.sub_id)
    assert sorted(c["status"] for c in made) == ["declined", "succeeded"]
    assert mail.outbox[-1].subject.startswith("Invoice")  # a charge's receipt is its tax invoice


def test_staff_retry_now_takes_a_past_due_payment_early(table) -> None:
    [sub] = seed_due(1, due=PERIOD, number=DECLINED_NUMBER)
    run(PERIOD)
    access.replace_card(fresh(sub), card())
    outcome = payments.take_payment(fresh(sub), run_date=PERIOD)  # before the retry day
    assert outcome.status == "paid" and outcome.period == PERIOD and outcome.attempt == 1
    assert fresh(sub).NextPaymentDate == "2027-02-15"
    assert run(date(2027, 1, 16)).counts["processed"] == 0


def test_a_catch_up_run_makes_one_attempt_and_the_retry_counts_from_the_run_date(table) -> None:
    # Rule changed (defect 6 / docs/MONEY.md M3): the old rule retried the decline
    # of the missed 15th again within the same catch-up run; now the retry counts from
    # the real run date, at least a day later.
    run(date(2027, 1, 14))
    [sub] = seed_due(1, due=PERIOD, number=DECLINED_NUMBER)
    summary = run(date(2027, 1, 16))  # the 15th was missed
    assert summary.counts["declined"] == 1 and summary.counts["retried"] == 0
    assert fresh(sub).NextPaymentDate == "2027-01-17"
    assert len(get_gateway().charges_made(sub_id=sub.sub_id)) == 1
