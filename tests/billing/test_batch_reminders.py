"""The reminder batch: claimed before sending, so each reminder goes out once."""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta

import pytest
from django.core import mail

from billing import access, batches
from tests.builders import DECLINED_NUMBER, at_once, fresh, seed_due

pytestmark = pytest.mark.django_db(databases=[])

R = date(2027, 3, 8)  # reminders for payments on 2027-03-15
PAY = date(2027, 3, 15)


def test_a_due_reminder_is_claimed_and_mailed_once(table, settings) -> None:
    settings.SITE_URL = "https://rpay.example.com"
    [sub] = seed_due(1, due=PAY, amount=123456, currency="EUR")
    summary = batches.run_reminders(run_date=R)
    assert summary.counts["sent"] == 1 and summary.ok
    [message] = mail.outbox
    assert message.to == [sub.Email]
    assert "Daily News" in message.subject and "15 March 2027" in message.subject
    for text in (message.body, message.alternatives[0][0]):
        assert "€1,234.56" in text and "15 March 2027" in text and "4242" in text
        assert "https://rpay.example.com/" in text and "Daily News" in text
    assert "4242424242424242" not in message.body  # never a card number
    after = fresh(sub)
    assert after.LastReminderDate == R.isoformat()
    assert after.NextReminderDate == "2027-04-08"  # the reminder of the following payment
    assert batches.run_reminders(run_date=R).counts["processed"] == 0
    assert len(mail.outbox) == 1


def test_dry_run_sends_and_writes_nothing(table, ddb_requests) -> None:
    [sub] = seed_due(1, due=PAY)
    ddb_requests.reset()
    summary = batches.run_reminders(run_date=R, dry_run=True)
    assert summary.counts["dry_run"] == 1
    # reads only: the index pages, and the seller's tax profile once per run (the amounts)
    assert ddb_requests.by_name() == Counter({"Query": ddb_requests.by_name()["Query"], "GetItem": 1})
    assert mail.outbox == [] and fresh(sub).NextReminderDate == R.isoformat()


def test_a_reminder_costs_one_update(table, ddb_requests) -> None:
    seed_due(30, due=PAY)
    ddb_requests.reset()
    batches.run_reminders(run_date=R, catch_up_days=0)
    # +1 Query per date: GSI-2 on the day after the trials that end in three days (the
    # merchant's subscription.trial_will_end; none of these has a trial). +1 Query per
    # date: GSI-2 three days later (the merchant's invoice.upcoming of the payments with
    # usage; none here: nothing read per item). +1 GetItem per run: the seller's tax
    # profile, which the amounts announced are taxed by. +1 Query per run: the last usage
    # charges due within the longest lead (USAGE#ENDING; none here).
    assert ddb_requests.by_name() == Counter({"UpdateItem": 31, "PutItem": 1, "Query": 4, "GetItem": 1})


def test_a_past_due_subscription_is_reminded_of_its_next_anchor_date(table) -> None:
    [sub] = seed_due(1, due=date(2027, 2, 15), number=DECLINED_NUMBER)
    batches.run_payments(run_date=date(2027, 2, 15))  # declined: retried on the 16th
    mail.outbox.clear()
    assert fresh(sub).NextReminderDate == R.isoformat()
    batches.run_reminders(run_date=R)
    [message] = mail.outbox
    assert "15 March 2027" in message.body


def test_catch_up_sends_missed_reminders_unless_their_payment_has_passed(table) -> None:
    batches.run_reminders(run_date=date(2027, 3, 1))
    [stale] = seed_due(1, due=date(2027, 3, 9), prefix="stale")  # reminded 2 Mar, paid 9 Mar
    [late] = seed_due(1, due=date(2027, 3, 12), prefix="late")  # reminded 5 Mar
    summary = batches.run_reminders(run_date=date(2027, 3, 10))
    assert summary.dates[0] == date(2027, 3, 2)
    assert [m.to[0] for m in mail.outbox] == [late.Email]
    assert fresh(stale).NextReminderDate == "2027-04-02"  # claimed all the same


@pytest.mark.local_engine
def test_two_reminder_runs_at_once_over_1000_subscriptions_send_each_once(local_table) -> None:
    subs = seed_due(1000, due=PAY)
    results = at_once(lambda: batches.run_reminders(run_date=R, workers=8))
    assert sum(r.counts["sent"] for r in results) == 1000
    per_sub = Counter(m.to[0] for m in mail.outbox)
    assert len(per_sub) == 1000 and set(per_sub.values()) == {1}
    assert {s.Email for s in subs} == set(per_sub)
    assert not list(access.get_due_reminders_by_date(R))
    assert len(list(access.get_due_reminders_by_date(R + timedelta(days=31)))) == 1000


def test_the_next_reminder_keeps_the_anchor_day_after_a_clamped_month(table) -> None:
    """Day 31 pays Feb 28; its next reminder is 7 days before Mar 31 (Mar 24), not
    before Mar 28: GSI-1 projects PaymentDay, so no guess from the clamped date."""
    [sub] = seed_due(1, due=date(2027, 2, 28), payment_day=31)
    batches.run_reminders(run_date=date(2027, 2, 21), catch_up_days=0)
    assert fresh(sub).NextReminderDate == "2027-03-24"
