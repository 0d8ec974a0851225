"""The first payment at subscribing, when the processor's webhook records the charge before
the subscribe page's own write does (Stripe sends ``payment_intent.succeeded`` at once; on a
busy machine it can win). The charge succeeded: the customer is subscribed, told so once,
and never told "declined, nothing was charged". Seen in a browser test against localstripe."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
import time_machine
from django.core import mail

from billing import access
from billing.operations.found_charges import record_found_charge
from core.payments.simulated import SimulatedGateway
from tests.builders import GOOD_CARD, PASSWORD

pytestmark = pytest.mark.django_db

MADE = datetime(2027, 3, 10, 12, 0, tzinfo=UTC)


def test_a_first_charge_the_webhook_recorded_first_is_paid_and_started(customer, monkeypatch) -> None:
    real_charge = SimulatedGateway.charge
    recorded: list[str] = []

    def charge_then_webhook(self, *args, **kwargs):
        result = real_charge(self, *args, **kwargs)
        if result.succeeded:  # the processor's webhook arrives before the charge's answer is handled
            record_found_charge(result, MADE.date(), actor="stripe-webhook", gateway=self)
            recorded.append(result.charge_id)
        return result

    monkeypatch.setattr(SimulatedGateway, "charge", charge_then_webhook)
    with time_machine.travel(MADE, tick=False):
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        customer.client.post("/subscribe/", {"product": "GYM", "payment_day": "20", **GOOD_CARD})
        confirm = customer.client.get("/subscribe/confirm/")
        quote = re.search(r'name="quote" value="([^"]+)"', confirm.content.decode()).group(1)
        mail.outbox.clear()
        done = customer.client.post("/subscribe/confirm/", {"quote": quote}, follow=True)

    html = done.content.decode()
    assert len(recorded) == 1
    assert "declined" not in html and "nothing was charged" not in html
    assert "You are subscribed to City Gym" in html
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.is_live and sub.PaidThroughDate == "2027-03-19"
    confirmed = [m for m in mail.outbox if "is confirmed" in m.subject]
    assert len(confirmed) == 1  # told once that it started
