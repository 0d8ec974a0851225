"""A first payment the bank wants confirmed (3-D Secure) is ``incomplete``, then expires
after 23 hours (Stripe Billing's ``incomplete`` -> ``incomplete_expired``), on the
simulated gateway, whose 3-D Secure card asks on-session too, as Stripe's test card does.

Seen before: such a subscription showed Active, was counted in the monthly total, said
"Paid through", got a reminder, and the payment run charged it off-session; replacing the
card then took the money. Each of these is checked not to happen."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import translation
from django.utils.dateformat import format as django_date_format

from billing import access, batches
from billing.actions import subscriptions as actions
from billing.batches.reconcile import reconcile
from billing.models import IncompleteEntry, SubscriptionStatus
from billing.operations import payments
from billing.operations.expiry import expire_due
from billing.operations.outcomes import PaymentStatus
from billing.rules.lifecycle import incomplete_expires, state_of
from core.localformat import local_date
from core.payments.gateway import get_gateway
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.builders import GOOD_CARD, PASSWORD, card, fresh, make_account, receipts_of

pytestmark = pytest.mark.django_db

MADE = datetime(2027, 3, 10, 12, 0, tzinfo=UTC)  # subscribed on the 10th to day 20
DAY = MADE.date()
SCA_CARD = {**GOOD_CARD, "card_number": "4000 0027 6000 3184"}


def log_in(customer) -> None:
    assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302


def subscribe_on_the_page(customer, **changes):
    """Steps one and two of the portal's subscribe flow (GYM, day 20, the 3-D Secure card)."""
    customer.client.post("/subscribe/", {"product": "GYM", "payment_day": "20", **SCA_CARD, **changes})
    confirm = customer.client.get("/subscribe/confirm/")
    quote = re.search(r'name="quote" value="([^"]+)"', confirm.content.decode()).group(1)
    return customer.client.post("/subscribe/confirm/", {"quote": quote})


def incomplete_sub(customer):
    with time_machine.travel(MADE, tick=False):
        log_in(customer)
        clicked = subscribe_on_the_page(customer)
    assert clicked.status_code == 302 and clicked["Location"] == "/subscribe/authenticate/"
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    return sub


def charges(sub) -> list[dict]:
    return get_gateway().charges_made(sub_id=sub.sub_id)


# --- incomplete: not live anywhere ------------------------------------------------------


def test_an_unconfirmed_first_payment_is_incomplete_and_nowhere_live(customer) -> None:
    sub = incomplete_sub(customer)
    assert sub.Status == SubscriptionStatus.INCOMPLETE and not sub.is_live
    assert sub.DuePaymentKey is None and sub.DueReminderKey is None  # in neither GSI
    assert sub.PaymentDetails.AwaitingCharge == charges(sub)[0]["charge_id"]
    assert not receipts_of(sub)
    with time_machine.travel(MADE + timedelta(hours=1), tick=False):
        log_in(customer)
        home = customer.client.get("/")
        html = home.content.decode()
        assert 'data-state="incomplete"' in html and 'data-state="active"' not in html and ">Active<" not in html
        assert f'href="/subscriptions/{sub.sub_id}/confirm-payment/" data-testid="finish-payment"' in html
        assert home.context["totals"] == [] and home.context["upcoming"] == []  # counted in no total
        assert 'data-testid="paid-through"' not in html and "Paid through" not in html
        assert "Cancelled subscriptions" not in html
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        assert 'data-testid="finish-payment"' in page and "Paid through" not in page and "Last period paid" not in page
        # replacing the card takes nothing (not live: nothing is owed)
        customer.client.post(f"/subscriptions/{sub.sub_id}/card/", {**GOOD_CARD, "card_number": "4242424242424242"})
    # no reminder, and the payment run (the same day, before the deadline) charges nothing
    mail.outbox.clear()
    assert batches.run_reminders(run_date=date(2027, 3, 13), workers=1).counts["sent"] == 0
    with time_machine.travel(MADE + timedelta(hours=2), tick=False):
        summary = batches.run_payments(run_date=DAY, workers=1)
    assert summary.counts["paid"] == summary.counts["processed"] == 0 and summary.counts["expired"] == 0
    assert not [m for m in mail.outbox if "confirm your payment" in m.subject.lower()]
    assert len(charges(sub)) == 1 and fresh(sub).Status == SubscriptionStatus.INCOMPLETE
    assert fresh(sub).PaymentDetails.Last4 == "3184"


def test_finish_payment_confirms_it_and_it_starts(customer) -> None:
    sub = incomplete_sub(customer)
    with time_machine.travel(MADE + timedelta(hours=5), tick=False):
        log_in(customer)
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/confirm-payment/")
        assert page.status_code == 200 and b'data-testid="simulated-bank"' in page.content
        assert b'data-testid="first-payment"' in page.content
        done = customer.client.post(f"/subscriptions/{sub.sub_id}/confirm-payment/", {"bank": "approve"})
        assert done.status_code == 302 and done["Location"] == f"/subscriptions/{sub.sub_id}/"
        home = customer.client.get("/")
    started = fresh(sub)
    assert started.Status == SubscriptionStatus.ACTIVE and started.is_live
    assert started.DuePaymentKey and started.DueReminderKey and started.PaymentDetails.AwaitingCharge is None
    [receipt] = receipts_of(sub)  # recorded once, through the run's path
    assert receipt.ChargeId == charges(sub)[0]["charge_id"] and len(charges(sub)) == 1
    assert home.context["totals"] == [("GBP", 4500)] and b'data-state="active"' in home.content
    assert [c.Details.Last4 for c in access.get_cards(customer.account_id)] == ["3184"]  # it paid: kept
    # the run finds the entry settled and deletes it; nothing expires
    with time_machine.travel(MADE + timedelta(days=1), tick=False):
        assert expire_due() == 0
    assert list(access.incomplete_entries()) == []


def test_the_subscribe_pages_own_confirmation_on_the_simulated_gateway(customer) -> None:
    sub = incomplete_sub(customer)
    with time_machine.travel(MADE + timedelta(minutes=2), tick=False):
        log_in(customer)
        page = customer.client.get("/subscribe/authenticate/")
        assert b'data-testid="simulated-bank"' in page.content
        refused = customer.client.post("/subscribe/authenticate/", {"bank": "refuse"}, follow=True)
    html = refused.content.decode()
    assert "not confirmed with your bank" in html and "nothing was charged" in html
    # the form keeps what was chosen
    assert refused.context["form"]["product"].value() == "GYM" and refused.context["form"]["payment_day"].value() == 20
    ended = fresh(sub)
    assert ended.Status == SubscriptionStatus.CANCELLED and ended.CancelReason == "first_payment_not_confirmed"
    assert state_of(ended, DAY).kind == "not_started" and not receipts_of(sub)


# --- expired ----------------------------------------------------------------------------


def test_the_payment_run_expires_it_after_23_hours(customer) -> None:
    coupon = access.create_coupon("WELCOME", percent_off=10, duration="once", max_uses=5, actor="staff")
    with time_machine.travel(MADE, tick=False):
        log_in(customer)
        subscribe_on_the_page(customer, coupon="WELCOME")
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.Status == SubscriptionStatus.INCOMPLETE and access.get_coupon(coupon.Code).Uses == 1
    with time_machine.travel(MADE + timedelta(hours=22, minutes=59), tick=False):
        assert batches.run_payments(run_date=DAY, workers=1).counts["expired"] == 0
    with time_machine.travel(MADE + timedelta(hours=23, minutes=1), tick=False):
        summary = batches.run_payments(run_date=DAY + timedelta(days=1), workers=1)
    assert summary.counts["expired"] == 1 and summary.ok
    expired = fresh(sub)
    assert expired.Status == SubscriptionStatus.INCOMPLETE_EXPIRED and expired.DuePaymentKey is None
    assert access.get_coupon(coupon.Code).Uses == 0  # its use given back
    [charge] = charges(sub)
    assert charge["status"] == "declined"  # cancelled at the processor
    assert get_gateway().charge_status(charge["charge_id"]).decline_code == "canceled"
    assert list(access.incomplete_entries()) == []
    with time_machine.travel(MADE + timedelta(days=1, hours=1), tick=False):
        log_in(customer)
        home = customer.client.get("/").content.decode()
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        receipts = customer.client.get("/receipts/").content.decode()
    assert "Cancelled subscriptions" not in home and "never started" in home and "Finish payment" not in home
    assert "Paid through" not in page and "Last period paid" not in page and "never started" in page
    attempt = re.search(r'data-testid="failed-attempt">(.*?)</li>', receipts, re.S).group(1)
    assert "City Gym" in attempt and "not confirmed with your bank in time" in attempt and "GYM" not in attempt


def test_a_page_shows_it_expired_before_any_run_wrote_it(customer) -> None:
    sub = incomplete_sub(customer)
    with time_machine.travel(MADE + timedelta(hours=23, seconds=1), tick=False):
        log_in(customer)
        home = customer.client.get("/").content.decode()
        late = customer.client.get(f"/subscriptions/{sub.sub_id}/confirm-payment/", follow=True).content.decode()
    assert fresh(sub).Status == SubscriptionStatus.INCOMPLETE  # not written yet: the run will
    assert 'data-state="not_started"' in home and "Finish payment" not in home
    assert "expired" in late and "nothing was charged" in late
    with time_machine.travel(MADE + timedelta(hours=23, seconds=1), tick=False):
        back = customer.client.get("/subscribe/authenticate/", follow=True)
    assert "came too late" in back.content.decode() and back.context["form"]["product"].value() == "GYM"


def test_confirming_after_expiry_charges_nothing(customer) -> None:
    sub = incomplete_sub(customer)
    with time_machine.travel(MADE + timedelta(hours=24), tick=False):
        log_in(customer)
        answer = customer.client.post(f"/subscriptions/{sub.sub_id}/confirm-payment/", {"bank": "approve"},
                                      follow=True)
    assert "came too late" in answer.content.decode()
    assert answer.context["form"]["product"].value() == "GYM"  # the form, with what was chosen
    assert fresh(sub).Status == SubscriptionStatus.INCOMPLETE_EXPIRED and not receipts_of(sub)
    [charge] = charges(sub)
    assert charge["status"] == "declined"  # cancelled, never approved


def test_a_charge_taken_after_expiry_is_refunded_by_the_reconciliation(customer) -> None:
    sub = incomplete_sub(customer)
    charge_id = sub.PaymentDetails.AwaitingCharge
    # The customer confirmed with the bank (Stripe.js) at the last second; the page's post
    # comes after the deadline, and the run expired it first without reaching the processor.
    assert get_gateway().authenticate(charge_id, approve=True).succeeded
    with time_machine.travel(MADE + timedelta(hours=25), tick=False):
        late = actions.confirm_first_payment(fresh(sub), charge_id, actions.finishing(fresh(sub)),
                                             today=DAY + timedelta(days=1), actor="customer")
        assert late.expired and not late.started
        assert not receipts_of(sub)  # not recorded as paid: it never started
        checked, differences = reconcile(DAY, DAY + timedelta(days=1), fix=True, today=DAY + timedelta(days=1))
    assert [d.kind for d in differences] == ["charge of a subscription that did not start"]
    assert differences[0].fixed
    [receipt] = receipts_of(sub)
    assert receipt.RefundedAmount == receipt.ProcessedAmount == charges(sub)[0]["amount"]
    assert fresh(sub).Status == SubscriptionStatus.INCOMPLETE_EXPIRED


# --- the access pattern, on both engines ---------------------------------------------------


def test_incomplete_entries_are_found_by_day_and_deadline_without_scan(table, ddb_requests) -> None:
    account = make_account("pat@example.com")
    with time_machine.travel(MADE, tick=False):
        made = []
        for n in range(3):
            sub = access.create_subscription(account, sku=f"SKU{n}", payment_day=20, amount=999, currency="USD",
                                             card=card(AUTHENTICATING_TEST_CARD), today=DAY, reminder_days_before=7)
            out = payments.take_first_payment(sub, today=DAY)
            assert out.status == PaymentStatus.ACTION_REQUIRED and out.client_secret
            made.append(fresh(sub))
    assert all(s.Status == SubscriptionStatus.INCOMPLETE and not s.DuePaymentKey for s in made)
    assert len(list(access.incomplete_entries())) == 3
    assert list(access.incomplete_entries(created_before=MADE)) == []
    # nothing in either index on any day
    for day in (DAY, DAY + timedelta(days=10)):
        assert list(access.get_due_payments_by_date(day)) == []
    # one paid meanwhile: its entry goes, the other two expire
    assert get_gateway().authenticate(made[0].PaymentDetails.AwaitingCharge, approve=True).succeeded
    actions.confirm_first_payment(made[0], made[0].PaymentDetails.AwaitingCharge, actions.finishing(made[0]),
                                  today=DAY, actor="customer")
    ddb_requests.reset()
    with time_machine.travel(MADE + timedelta(hours=23), tick=False):
        assert expire_due() == 2
    assert "Scan" not in ddb_requests.ops and ddb_requests.ops.count("Query") == 1
    assert [fresh(s).Status for s in made] == ["active", "incomplete_expired", "incomplete_expired"]
    assert IncompleteEntry.count(IncompleteEntry.pk()) == 0
    with time_machine.travel(MADE + timedelta(hours=30), tick=False):
        assert expire_due() == 0  # again: nothing left



def test_closing_the_account_expires_an_incomplete_first_payment(customer, shop_table_too) -> None:
    """Closing an account ends a subscription still waiting for the bank as the expiry
    would: the charge cancelled at the processor, nothing recorded, nothing charged later."""
    from billing.actions import data_rights

    sub = incomplete_sub(customer)
    with time_machine.travel(MADE + timedelta(hours=2), tick=False):
        done = data_rights.close_account(customer.account_id, today=DAY)
        assert sub.sub_id in done.cancelled
        assert batches.run_payments(run_date=DAY, workers=1).counts["paid"] == 0
    assert fresh(sub).Status == SubscriptionStatus.INCOMPLETE_EXPIRED
    [charge] = charges(sub)
    assert charge["status"] == "declined"
    assert get_gateway().charge_status(charge["charge_id"]).decline_code == "canceled"
    assert not receipts_of(sub)


@pytest.mark.parametrize("language", ["it", "ko", "zh-hans"])
def test_the_deadline_of_the_3ds_banner_is_in_the_customers_language(customer, language) -> None:
    """The dashboard's, the subscription's and the confirmation page's deadline: the
    project's local date (CLDR's "11 mar 2027, 11:00", "2027. 3. 11. 오전 11:00"...), never
    Django's English-ordered "11 marzo 2027, 11:00" / "11 3월 2027, 11:00"."""
    sub = incomplete_sub(customer)
    with time_machine.travel(MADE + timedelta(hours=1), tick=False):
        log_in(customer)
        customer.client.cookies["django_language"] = language
        with translation.override(language):
            deadline = local_date(incomplete_expires(fresh(sub)), "j F Y, H:i")
            english_order = django_date_format(incomplete_expires(fresh(sub)), "j F Y, H:i")
        assert deadline != english_order
        for path in ("/", f"/subscriptions/{sub.sub_id}/", f"/subscriptions/{sub.sub_id}/confirm-payment/"):
            html = customer.client.get(path, HTTP_ACCEPT_LANGUAGE=language).content.decode()
            assert deadline in html and english_order not in html, path
