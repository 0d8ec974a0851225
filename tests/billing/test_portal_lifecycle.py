"""Cancel at period end (the default), keep, cancel now (refund of the days after today),
pause and resume, from the portal: the stored state, the due keys, the audit event with
its reason, the e-mail (text + HTML), and the DynamoDB requests of each page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta

import pytest
import time_machine
from django.core import mail

from billing import access
from billing.exceptions import PauseRefused
from billing.models import Subscription, SubscriptionStatus
from billing.operations import payments
from billing.rules.schedule import first_payment_date, next_payment_date
from core.pages import today
from tests.builders import PASSWORD, fresh, make_past_due, receipts_of

pytestmark = pytest.mark.django_db

ON = date(2027, 3, 10)  # subscribing on the 10th to day 15: paid 10..14 March at once


@contextmanager
def on(day: date, customer) -> Iterator[None]:
    """Travel to ``day`` and log in again there (a session from another month expired)."""
    with time_machine.travel(day, tick=False):
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        yield


def paid_subscription(customer, day: int = 15) -> Subscription:
    """Subscribed through the portal's own operation: the first period is charged."""
    from billing.actions import subscriptions as actions
    from tests.builders import card

    account = access.get_account(customer.account_id)
    started = actions.subscribe(account, sku="NEWS-DAILY", product_name="Daily News", payment_day=day, amount=999,
                                currency="USD", card=card(), today=today(), actor=customer.email)
    assert started.started
    mail.outbox.clear()
    return fresh(started.sub)


def pay_next(sub: Subscription) -> Subscription:
    """Take the next payment on its date (the batch's own path)."""
    due = date.fromisoformat(sub.NextPaymentDate)
    with time_machine.travel(due, tick=False):
        assert payments.take_payment(sub, run_date=due).status == "paid"
    mail.outbox.clear()
    return fresh(sub)


def events(sub: Subscription, action: str) -> list:
    return [e for e in access.get_events_by_account(sub.account_id) if e.Action == action]


def body(message) -> tuple[str, str]:
    return message.body, message.alternatives[0][0]


def test_cancel_at_period_end_is_the_default_and_keep_undoes_it(customer, ddb_requests) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        assert sub.PaidThroughDate == "2027-03-14"
        url = f"/subscriptions/{sub.sub_id}/cancel/"
        ddb_requests.reset()
        page = customer.client.get(url)
        # the subscription, the receipts paying after today (what "now" refunds, said before it
        # is chosen), the seller's tax profile (the amounts' tax)
        assert ddb_requests.ops == ["Query", "Query", "GetItem"]
        html = page.content.decode()
        assert 'value="period_end"' in html and "checked" in html.split('value="period_end"')[1][:40]
        assert "runs until 14 March 2027" in html and "It is too expensive" in html

        ddb_requests.reset()
        response = customer.client.post(url, {"when": "period_end", "reason": "too_expensive",
                                              "comment": "Half the price, please", "version": sub.Version}, follow=True)
        # the read, the update, its audit event; then the subscription page's two Queries (the
        # subscriptions, and the payment history: receipts and failed attempts)
        assert ddb_requests.ops == ["Query", "TransactWriteItems", "Query", "Query"]
        stored = fresh(sub)
        assert stored.Status == SubscriptionStatus.CANCELLED and stored.CancelMode == "period_end"
        assert stored.NextPaymentDate is None and stored.NextReminderDate is None  # out of both indexes
        assert stored.PaidThroughDate == "2027-03-14"
        assert (stored.CancelReason, stored.CancelComment) == ("too_expensive", "Half the price, please")
        [event] = events(sub, "subscription.cancelled")
        assert event.Note == "period_end: too_expensive: Half the price, please"
        html = response.content.decode()
        assert "Cancels on 14 Mar 2027" in html and "Keep my subscription" in html
        [message] = mail.outbox
        text, rich = body(message)
        assert message.subject == "Your Daily News subscription ends on 14 March 2027"
        assert "paid for it up to 14 March 2027" in text and "Keep my subscription" in text
        assert "Keep my subscription" in rich
        assert list(access.get_due_payments_by_date(date(2027, 3, 15))) == []

        mail.outbox.clear()
        ddb_requests.reset()
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/keep/", follow=True)
        # the seller's tax profile once in each request that shows a coming amount (the
        # e-mail's, then the page's): a subscription that cancels has none, a kept one has
        assert ddb_requests.ops == ["Query", "TransactWriteItems", "GetItem", "Query", "Query", "GetItem"]
        kept = fresh(sub)
        assert kept.Status == SubscriptionStatus.ACTIVE and kept.CancelMode is None and kept.CancelReason is None
        assert (kept.NextPaymentDate, kept.NextReminderDate) == ("2027-03-15", "2027-03-11")
        assert kept.PaidThroughDate == "2027-03-14"
        assert [s.sub_id for s in access.get_due_payments_by_date(date(2027, 3, 15))] == [sub.sub_id]
        assert "The next payment is $9.99 on 15 March 2027" in response.content.decode()
        [message] = mail.outbox
        assert message.subject == "Your Daily News subscription continues"
        assert "$9.99 on 15 March 2027" in body(message)[0] and "$9.99" in body(message)[1]
        assert len(events(sub, "subscription.kept")) == 1


def test_keep_is_refused_once_the_paid_days_are_over(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{sub.sub_id}/cancel/", {"when": "period_end", "reason": "other",
                                                                      "version": sub.Version})
    with on(date(2027, 3, 15), customer):
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        assert "Keep my subscription" not in page and "Cancels on" not in page
        customer.client.post(f"/subscriptions/{sub.sub_id}/keep/")
    assert fresh(sub).Status == SubscriptionStatus.CANCELLED
    with pytest.raises(access.ConditionFailed):  # the write's own condition, not only the page
        access.keep_subscription(fresh(sub), today=date(2027, 3, 15), reminder_days_before=7, actor="x")


def test_cancel_now_refunds_the_days_after_today(customer, ddb_requests) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
    sub = pay_next(sub)  # 15 March: paid 15 March .. 14 April, 9.99
    assert sub.PaidThroughDate == "2027-04-14"
    with on(date(2027, 3, 24), customer):
        ddb_requests.reset()
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/cancel/", {
            "when": "now", "reason": "switching", "version": sub.Version}, follow=True)
    stored = fresh(sub)
    assert stored.Status == SubscriptionStatus.CANCELLED and stored.CancelMode == "now"
    assert stored.PaidThroughDate == "2027-03-24" and stored.NextPaymentDate is None
    # 21 of the 31 days (25 March .. 14 April) unused: 999 * 21 / 31 = 676.7 -> 677
    receipt = [r for r in receipts_of(sub) if r.BillingDate == "2027-03-15"][0]
    assert receipt.RefundedAmount == 677
    assert "$6.77 for the days after today is refunded" in response.content.decode()
    subjects = sorted(m.subject for m in mail.outbox)
    assert subjects == ["Refund: Daily News", "Your Daily News subscription is cancelled"]
    cancelled_mail = next(m for m in mail.outbox if "cancelled" in m.subject)
    assert "$6.77" in body(cancelled_mail)[0] and "$6.77" in body(cancelled_mail)[1]
    assert "switching" in events(sub, "subscription.cancelled")[0].Note
    # the request count: read, the update with its events (one transaction), one receipts
    # Query, and the refund's one write (the receipt's update, its events, the credit note
    # with its number taken from its series' counter in the same transaction, and the tax
    # totals), then the cancelled page (its Query and its receipts Query)
    assert ddb_requests.ops[:4] == ["Query", "TransactWriteItems", "Query", "TransactWriteItems"]
    assert len(ddb_requests.ops) == 10 and ddb_requests.by_name()["Scan"] == 0  # as measured, with the next page


def test_cancel_now_of_a_past_due_subscription_has_one_choice_and_no_refund(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
    with on(date(2027, 3, 16), customer):  # the payment of the 15th was declined
        make_past_due(sub, "2027-03-15")
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/cancel/").content.decode()
        assert 'value="period_end"' not in page and 'value="now"' in page
        customer.client.post(f"/subscriptions/{sub.sub_id}/cancel/", {"when": "now", "reason": "other",
                                                                      "version": fresh(sub).Version})
        stored = fresh(sub)
    assert stored.Status == SubscriptionStatus.CANCELLED and stored.PaidThroughDate == "2027-03-14"
    assert [m.subject for m in mail.outbox] == ["Your Daily News subscription is cancelled"]
    with pytest.raises(PauseRefused):
        access.pause_subscription(stored, resume=None, today=ON, reminder_days_before=7, actor="x")


def test_pause_for_two_payments_keys_the_item_under_the_first_payment_after(customer, ddb_requests) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        url = f"/subscriptions/{sub.sub_id}/pause/"
        ddb_requests.reset()
        assert customer.client.get(url).status_code == 200
        assert ddb_requests.ops == ["Query"]
        ddb_requests.reset()
        response = customer.client.post(url, {"how": "skip", "payments": "2", "version": sub.Version}, follow=True)
        assert ddb_requests.ops == ["Query", "TransactWriteItems", "GetItem", "Query", "Query", "GetItem"]
        stored = fresh(sub)
        # no payment on 15 March nor 15 April: the first one after the pause is 15 May
        assert (stored.NextPaymentDate, stored.NextReminderDate) == ("2027-05-15", "2027-05-08")
        assert (stored.PausedFrom, stored.PausedUntil) == ("2027-03-15", "2027-05-15")
        assert stored.PaidThroughDate == "2027-03-14" and stored.Status == SubscriptionStatus.ACTIVE
        assert list(access.get_due_payments_by_date(date(2027, 3, 15))) == []
        assert "Paused until 15 May 2027" in response.content.decode()
        [message] = mail.outbox
        assert message.subject == "Your Daily News subscription is paused"
        assert "resumes on 15 May 2027 with a payment of $9.99" in body(message)[0]
        assert "15 May 2027" in body(message)[1]
        assert events(sub, "subscription.paused")[0].Note == "until 2027-05-15"


def test_pause_until_a_date_resumes_on_the_first_payment_day_after_it(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{sub.sub_id}/pause/", {"how": "until", "until": "2027-06-02",
                                                                     "version": sub.Version})
        assert fresh(sub).NextPaymentDate == "2027-06-15"
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/pause/", {"how": "until", "until": "2027-06-02",
                                                                                "version": fresh(sub).Version}, follow=True)
        assert "already paused" in response.content.decode()


def test_pause_until_a_date_before_the_next_payment_is_refused(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/pause/", {"how": "until", "until": "2027-03-12",
                                                                                "version": sub.Version})
        assert response.status_code == 200 and "Choose a date after the next payment" in response.content.decode()
        assert fresh(sub).NextPaymentDate == "2027-03-15"


def test_an_open_pause_leaves_both_indexes_and_resume_recomputes_from_the_anchor(customer, ddb_requests) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{sub.sub_id}/pause/", {"how": "open", "version": sub.Version})
        paused = fresh(sub)
        assert paused.NextPaymentDate is None and paused.NextReminderDate is None
        assert paused.PausedFrom == "2027-03-15" and paused.PausedUntil is None
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        assert "Paused" in page and "Resume now" in page and "Change the payment day" not in page
        assert customer.client.get(f"/subscriptions/{sub.sub_id}/payment-day/").status_code == 302
    mail.outbox.clear()
    with on(date(2027, 4, 20), customer):  # a month and more later
        ddb_requests.reset()
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/resume/", follow=True)
        assert ddb_requests.ops == ["Query", "TransactWriteItems", "GetItem", "Query", "Query", "GetItem"]
    resumed = fresh(sub)
    # the first anchor date after the day of resuming; the paused days are not charged
    assert (resumed.NextPaymentDate, resumed.PaidThroughDate) == ("2027-05-15", "2027-03-14")
    # resumed, whatever day the next payment falls on: the pause's fields go (a PausedUntil
    # left at that day made every page say "Paused until 15 May" after "Resumed")
    assert resumed.NextReminderDate == "2027-05-08" and (resumed.PausedFrom, resumed.PausedUntil) == (None, None)
    assert payments.owed_amount(resumed) == 999  # a whole month, nothing for the pause
    html = response.content.decode()
    assert "Resumed. The next payment is $9.99 on 15 May 2027" in html
    assert "Paused until" not in html and "Resume now" not in html and 'data-state="active"' in html
    assert "Switch product" in html and "Pause payments" in html
    with on(date(2027, 4, 20), customer):
        home = customer.client.get("/")
    assert home.context["paused_count"] == 0 and b"paused subscription" not in home.content
    [message] = mail.outbox
    assert message.subject == "Your Daily News subscription is resumed"
    assert "nothing is charged for the paused days" in body(message)[0]
    assert "$9.99" in body(message)[1]


def test_resume_while_the_paid_days_run_restores_the_schedule(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{sub.sub_id}/pause/", {"how": "skip", "payments": "3",
                                                                     "version": sub.Version})
        customer.client.post(f"/subscriptions/{sub.sub_id}/resume/")
    resumed = fresh(sub)
    assert (resumed.NextPaymentDate, resumed.PausedFrom, resumed.PausedUntil) == ("2027-03-15", None, None)


def test_the_pause_message_dates_are_in_the_pages_language(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/pause/", {
            "how": "skip", "payments": "2", "version": sub.Version}, follow=True, HTTP_ACCEPT_LANGUAGE="it")
    assert "Sospeso: non si addebita nulla fino al 15 maggio 2027, quando riprende." in response.content.decode()


def test_a_past_due_subscription_cannot_be_paused(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        make_past_due(sub, "2027-03-15")
        response = customer.client.get(f"/subscriptions/{sub.sub_id}/pause/", follow=True)
    assert "overdue" in response.content.decode()


def test_states_on_the_dashboard(customer) -> None:
    with on(ON, customer):
        cancelling = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{cancelling.sub_id}/cancel/", {"when": "period_end", "reason": "other",
                                                                             "version": cancelling.Version})
        paused = paid_subscription(customer, day=20)
        customer.client.post(f"/subscriptions/{paused.sub_id}/pause/", {"how": "open", "version": paused.Version})
        html = customer.client.get("/").content.decode()
    assert "Cancels on 14 Mar 2027" in html and ">Paused<" in html


def test_the_monthly_total_leaves_out_paused_subscriptions(customer) -> None:
    # Nothing is charged for a paused subscription: counting its price in "Monthly total"
    # would tell the customer they pay for it. The card says how many were left out.
    with on(ON, customer):
        paid_subscription(customer)  # $9.99 a month, paying
        paused = paid_subscription(customer, day=20)
        response = customer.client.get("/")
        assert response.context["totals"] == [("USD", 1998)] and "paused-not-counted" not in response.content.decode()
        customer.client.post(f"/subscriptions/{paused.sub_id}/pause/", {"how": "skip", "payments": "2",
                                                                       "version": paused.Version})
        response = customer.client.get("/")
    html = response.content.decode()
    assert response.context["totals"] == [("USD", 999)]
    assert re.search(r'data-testid="monthly-total">\$9\.99<', html)
    assert re.search(r'data-testid="paused-not-counted">1 paused subscription is not counted\.<', html)


def test_pause_dates_follow_the_anchor_of_day_31() -> None:
    from billing.rules.lifecycle import pause_end, resume_on

    sub = Subscription("ACC#a", "SUB#s#SKU#k", PaymentDay=31, Status="active", NextPaymentDate="2027-01-31",
                       PaidThroughDate="2027-01-30")
    assert pause_end(sub, date(2027, 1, 20), payments=1) == date(2027, 2, 28)
    assert pause_end(sub, date(2027, 1, 20), payments=2) == date(2027, 3, 31)
    assert pause_end(sub, date(2027, 1, 20), until=date(2027, 4, 2)) == date(2027, 4, 30)
    sub.NextPaymentDate = None
    sub.PausedFrom = "2027-01-31"
    assert resume_on(sub, date(2027, 2, 28)) == date(2027, 3, 31)  # today's run may be over
    assert resume_on(sub, date(2027, 1, 20)) == date(2027, 1, 31)
    assert first_payment_date(31, date(2027, 3, 1)) == next_payment_date(31, date(2027, 2, 28))
    _ = timedelta
