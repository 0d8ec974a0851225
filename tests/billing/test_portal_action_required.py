"""The portal's and staff's side of a renewal waiting for the customer's bank ("action
required"): who sees what, and the confirm page on the simulated gateway."""

from __future__ import annotations

from datetime import date

import time_machine

from billing import access, batches
from billing.models import SubscriptionStatus
from billing.operations.outcomes import PaymentStatus
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.builders import (
    PASSWORD,
    card,
    first_payment_confirmed,
    fresh,
    make_subscription,
    make_user,
    receipts_of,
)

PERIOD = date(2027, 1, 15)


def portal_renewal(customer):
    """A customer's subscription whose renewal on PERIOD waits for their bank."""
    with time_machine.travel("2027-01-10 12:00Z", tick=False):  # made then: its first charge is on-session
        account = access.get_account(customer.account_id)
        sub = make_subscription(account, card=card(AUTHENTICATING_TEST_CARD), today=date(2027, 1, 10))
        assert first_payment_confirmed(sub, date(2027, 1, 10)).status == PaymentStatus.PAID
    assert batches.run_payments(run_date=PERIOD, workers=1).counts["action_required"] == 1
    return sub


def log_in(customer) -> None:
    """Log in at the travelled-to date (a session from today's clock has expired by then)."""
    assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302


def test_the_customer_sees_action_required_and_confirms_on_the_page(customer) -> None:
    sub = portal_renewal(customer)
    with time_machine.travel("2027-01-15 12:00Z", tick=False):
        log_in(customer)
        home = customer.client.get("/")
        assert b'data-testid="action-required"' in home.content
        assert f"/subscriptions/{sub.sub_id}/confirm-payment/".encode() in home.content
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/")
        assert b"Action required." in page.content
        confirm = customer.client.get(f"/subscriptions/{sub.sub_id}/confirm-payment/")
        assert confirm.status_code == 200 and b'data-testid="simulated-bank"' in confirm.content
        assert b"$9.99" in confirm.content or b"9.99" in confirm.content
        done = customer.client.post(f"/subscriptions/{sub.sub_id}/confirm-payment/", {"bank": "approve"})
        assert done.status_code == 302 and done["Location"].endswith(f"/subscriptions/{sub.sub_id}/")
        assert len(receipts_of(sub)) == 2  # the first period's and this one
        assert fresh(sub).Status == SubscriptionStatus.ACTIVE
        again = customer.client.get(f"/subscriptions/{sub.sub_id}/confirm-payment/")
        assert again.status_code == 302  # nothing waits any more


def test_another_customer_cannot_see_the_page(customer, other_customer) -> None:
    sub = portal_renewal(customer)
    with time_machine.travel("2027-01-15 12:00Z", tick=False):
        log_in(other_customer)
        assert other_customer.client.get(f"/subscriptions/{sub.sub_id}/confirm-payment/").status_code == 404
        assert other_customer.client.post(f"/subscriptions/{sub.sub_id}/confirm-payment/",
                                          {"bank": "approve"}).status_code == 404
        assert fresh(sub).Status == SubscriptionStatus.PAST_DUE


def test_the_staff_account_page_shows_action_required(customer, client) -> None:
    sub = portal_renewal(customer)
    with time_machine.travel("2027-01-15 12:00Z", tick=False):
        client.force_login(make_user("clerk", staff=True))
        page = client.get(f"/admin/staff/accounts/{customer.account_id}/")
        # the one status label, as on the customer's pages
        assert b'data-testid="sub-status" data-state="action_required">Action required<' in page.content
        assert fresh(sub).PaymentDetails.AwaitingCharge.encode() in page.content
