"""An account closed while a subscription staff cancelled still runs to its paid day: the
close ends it today, as it ends a customer's cancel at period end (its unused days
refunded, its usage so far charged once), so nothing of a closed account is served,
charged or reminded afterwards (docs/PORTAL.md "Closing an account"). Before, a staff cancel (which
stores no cancel mode) was left running: served, its last usage charged and reminded
after the customer's data was erased."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.core import mail

from billing import access, batches
from billing.actions import data_rights
from billing.actions import subscriptions as subscription_actions
from billing.models import AuditAction, SubscriptionStatus, UsageEndEntry
from billing.rules.lifecycle import CancelMode
from tests.billing.test_portal_metered_ending import _usage_charges, _use
from tests.billing.test_portal_subscribe_metered import _subscribe, metered, travel  # noqa: F401 (its fixtures)
from tests.builders import fresh, receipts_of

# the portal's metered product (its price: the first 1,000 calls free, then $0.002 a call),
# on 15 February 2027; a close forgets the account's shop customer too.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("travel", "metered", "shop_table_too")]

CLOSED_ON = date(2027, 3, 2)


def _at(day: date):
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


def test_a_close_ends_a_staff_cancelled_subscription_today_and_nothing_comes_after(customer) -> None:
    _html, sub = _subscribe(customer)
    _use(sub, [(date(2027, 2, 20), 1200)])  # 200 calls above the free 1,000: $0.40
    with _at(date(2027, 3, 1)):
        subscription_actions.cancel(fresh(sub), actor="support@rpay.localhost", reason="staff",
                                    action=AuditAction.STAFF_CANCEL)
    assert fresh(sub).CancelMode is None and fresh(sub).PaidThroughDate == "2027-03-14"  # still served
    with _at(CLOSED_ON):
        data_rights.close_account(sub.account_id, today=CLOSED_ON)
    ended = fresh(sub)
    assert (ended.Status, ended.CancelMode, ended.PaidThroughDate) == (
        SubscriptionStatus.CANCELLED, CancelMode.NOW, CLOSED_ON.isoformat())
    [usage] = _usage_charges(sub)
    assert usage["amount"] == 40  # its usage so far, charged by the close, once
    # the fee's days after the close are refunded, as for a customer's cancel at period end
    [fee] = [r for r in receipts_of(sub) if not r.Kind]
    assert int(fee.RefundedAmount or 0) > 0
    mail.outbox.clear()
    for day in (date(2027, 3, 8), date(2027, 3, 15)):  # the reminder's day, the day after the paid days
        with _at(day):
            batches.run_reminders(run_date=day, workers=1, catch_up_days=0)
            batches.run_payments(run_date=day, workers=1, catch_up_days=0)
    assert len(_usage_charges(sub)) == 1 and mail.outbox == []
    assert list(UsageEndEntry.query(UsageEndEntry.pk())) == []  # the staff cancel's, voided by the run
    assert access.get_account(sub.account_id).ClosedDate


def test_a_staff_cancel_whose_period_ended_unpaid_is_not_ended_again(customer) -> None:
    _html, sub = _subscribe(customer)
    with _at(date(2027, 3, 1)):
        subscription_actions.cancel(fresh(sub), actor="support@rpay.localhost", reason="staff",
                                    action=AuditAction.STAFF_CANCEL)
    after_period = date(2027, 3, 14) + timedelta(days=3)
    with _at(after_period):
        data_rights.close_account(sub.account_id, today=after_period)
    assert fresh(sub).CancelMode is None  # its paid days were over: nothing to end
