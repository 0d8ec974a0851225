"""The last charge of a metered subscription cancelled at its period's end (its usage up
to its last day, charged the day after) is reminded like any payment: the reminder lead
before, once whatever the re-runs and runs at once, with the usage as it stands, which
is what the payment run then charges when no more usage comes (one source of truth:
``final_usage.last_usage_charge`` and ``bill_final_usage`` read it through
``usage_due``). The figures are the portal's metered test's: the first 1,000 calls free,
then $0.002 a call."""

from __future__ import annotations

import io
import json
import threading
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command
from django.urls import reverse

from billing import access, batches
from billing.access.usage_billing import usage_end_entries
from billing.batches.usage_reminders import ending_entries, remind_last_usage
from billing.models import MerchantEvent, MerchantEventType
from tests.billing.test_portal_metered_ending import _cancel_page, _usage_charges, _use
from tests.billing.test_portal_subscribe_metered import _subscribe, metered, travel  # noqa: F401 (its fixtures)
from tests.builders import fresh

pytestmark = pytest.mark.django_db

BILLED_ON = date(2027, 3, 15)  # the day after the last day served, 14 March
REMINDED_ON = BILLED_ON - timedelta(days=7)  # REMINDER_DAYS_BEFORE
ANNOUNCED_ON = BILLED_ON - timedelta(days=3)  # UPCOMING_INVOICE_DAYS: the merchant's invoice.upcoming


def _at(day: date):
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


def _cancel_at_period_end(customer, sub) -> None:
    with _at(date(2027, 3, 2)):
        _cancel_page(customer, sub)
        customer.client.post(reverse("cancel", kwargs={"sub_id": sub.sub_id}),
                             {"when": "period_end", "reason": "too_expensive", "version": fresh(sub).Version})


def _reminders(sub) -> list:
    return [m for m in mail.outbox if m.subject.startswith("Last payment") and m.to == [sub.Email]]


def _remind(day: date):
    with _at(day):
        return batches.run_reminders(run_date=day, workers=1, catch_up_days=0)


def _upcoming_events(sub) -> list[MerchantEvent]:
    return [e for e in MerchantEvent.scan() if e.Type == MerchantEventType.INVOICE_UPCOMING and e.ObjectId == sub.sub_id]


def test_the_last_usage_charge_is_reminded_once_at_what_the_run_charges(travel, customer, metered) -> None:  # noqa: F811
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 20), 1200), (date(2027, 3, 5), 35)])
    _cancel_at_period_end(customer, sub)
    assert _remind(REMINDED_ON - timedelta(days=1)).counts["last_usage_reminded"] == 0  # not yet
    summary = _remind(REMINDED_ON)
    assert summary.counts["last_usage_reminded"] == 1
    [told] = _reminders(sub)
    assert told.subject == "Last payment: Developer API, your usage, on 15 March 2027"
    assert ("Your Developer API subscription ends on 14 March 2027. Its last payment, for your usage up to that "
            "day, is coming up; nothing else will be charged.") in told.body
    assert "Amount: about $0.47" in told.body and "15 March 2027" in told.body
    assert "An estimate: your usage so far (1235 api_calls)." in told.body
    assert "payment day, or to" not in told.body  # no payment day to change, nothing to cancel
    # A re-run, the next day's run: nothing more.
    _remind(REMINDED_ON)
    _remind(REMINDED_ON + timedelta(days=1))
    assert len(_reminders(sub)) == 1
    # The merchant hears of it three days before the charge, once, with the API's upcoming
    # payment as it then stands.
    assert _upcoming_events(sub) == []
    assert _remind(ANNOUNCED_ON).counts["invoice_upcoming"] == 1
    _remind(ANNOUNCED_ON)
    _remind(ANNOUNCED_ON + timedelta(days=1))
    [event] = _upcoming_events(sub)
    assert event.Data["amount_due"] == 47 and event.Data["date"] == "2027-03-15"
    assert len(_reminders(sub)) == 1
    # The run charges what the reminder said.
    with _at(BILLED_ON):
        batches.run_payments(run_date=BILLED_ON, workers=1)
    [charge] = _usage_charges(sub)
    assert charge["amount"] == 47


def test_two_runs_at_once_send_it_once(travel, customer, metered) -> None:  # noqa: F811
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 20), 1500)])
    _cancel_at_period_end(customer, sub)
    barrier = threading.Barrier(2)

    def run(day: date) -> None:
        barrier.wait()
        batches.run_reminders(run_date=day, workers=1, catch_up_days=0)

    for day in (REMINDED_ON, ANNOUNCED_ON):
        with _at(day):
            threads = [threading.Thread(target=run, args=(day,)) for _ in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    assert len(_reminders(sub)) == 1 and len(_upcoming_events(sub)) == 1


def test_a_run_that_missed_the_day_still_reminds_before_the_charge(travel, customer, metered) -> None:  # noqa: F811
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 20), 1500)])
    _cancel_at_period_end(customer, sub)
    with _at(BILLED_ON - timedelta(days=1)):  # cron's command, its JSON summary
        out = io.StringIO()
        call_command("send_reminders", "--json", stdout=out)
    summary = json.loads(out.getvalue().splitlines()[-1])
    assert summary["last_usage_reminded"] == 1 and summary["outcome"] == "completed"
    assert summary["invoice_upcoming"] == 1 and len(_upcoming_events(sub)) == 1
    [told] = _reminders(sub)
    assert "Amount: about $1.00" in told.body
    _remind(BILLED_ON)  # the day of the charge: too late for a reminder, and it was sent
    assert len(_reminders(sub)) == 1


def test_nothing_used_nothing_announced_until_usage_comes(travel, customer, metered) -> None:  # noqa: F811
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 20), 900)])  # within the free 1,000
    _cancel_at_period_end(customer, sub)
    _remind(REMINDED_ON)
    assert _reminders(sub) == []
    _use(sub, [(date(2027, 2, 20), 900), (date(2027, 3, 9), 300)])  # the first again: counted once
    _remind(REMINDED_ON + timedelta(days=2))
    [told] = _reminders(sub)
    assert "Amount: about $0.40" in told.body


def test_a_kept_subscription_gets_its_usual_reminder_not_a_last_one(travel, customer, metered) -> None:  # noqa: F811
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 20), 1500)])
    _cancel_at_period_end(customer, sub)
    with _at(date(2027, 3, 3)):
        customer.client.post(reverse("keep", kwargs={"sub_id": sub.sub_id}), {"version": fresh(sub).Version})
    assert access.get_subscription(sub.account_id, sub.sub_id, sub.key_sku).Status == "active"
    summary = _remind(REMINDED_ON)
    assert summary.counts["last_usage_reminded"] == 0 and _reminders(sub) == []
    assert [m for m in mail.outbox if m.subject.startswith("Upcoming payment") and m.to == [sub.Email]]


def test_a_run_before_the_lead_reads_no_subscription(travel, customer, metered, ddb_requests) -> None:  # noqa: F811
    """The entry keeps the day its reminder is first due (``RemindOn``: 7 days before its
    charge), so a run before it reads the entries' partition and nothing else."""
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 20), 1200)])
    _cancel_at_period_end(customer, sub)
    [entry] = usage_end_entries(BILLED_ON)
    assert (entry.due, entry.RemindOn) == (BILLED_ON, REMINDED_ON.isoformat())
    with _at(REMINDED_ON - timedelta(days=1)):
        ddb_requests.reset()
        the_day = REMINDED_ON - timedelta(days=1)
        assert remind_last_usage(the_day, ending_entries(the_day)) == []
    assert ddb_requests.by_name() == {"Query": 1}
    _remind(REMINDED_ON)
    assert len(_reminders(sub)) == 1


def test_an_entry_written_before_it_kept_its_day_is_still_reminded(travel, customer, metered) -> None:  # noqa: F811
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 20), 1200)])
    _cancel_at_period_end(customer, sub)
    [entry] = usage_end_entries(BILLED_ON)
    entry.RemindOn = None
    entry.save()
    assert _remind(REMINDED_ON - timedelta(days=1)).counts["last_usage_reminded"] == 0
    assert _remind(REMINDED_ON).counts["last_usage_reminded"] == 1
