"""Disputes (chargebacks) from Stripe's ``charge.dispute.created`` / ``charge.dispute.closed``
events, signed and delivered as Stripe does: recorded on the receipt with one audit event
and one entry in the staff list, once; the outcome when closed; a closed dispute never
reopened by a late "created"; a dispute before its receipt answered 500 until the
receipt exists; a shop charge ignored. Shown on the staff disputes page, the staff
account page and the customer's receipt page."""

from __future__ import annotations

import time

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from billing import access, batches
from billing.models import Account, DisputeEntry
from tests.billing.test_stripe_webhooks import (
    deliver,
    event,
    paid_subscription,
    stored,
    webhook_secret,  # noqa: F401 (autouse)
)
from tests.builders import make_customer, make_user, receipts_of
from tests.stripe_server import saved_card_token
from tests.wallclock import per_test

pytestmark = pytest.mark.django_db

TODAY = per_test(__name__, "TODAY", lambda now: now.date())
OPENED = per_test(__name__, "OPENED", lambda now: int(now.timestamp()) - 3600)


def dispute(intent_id: str, status: str = "needs_response", *, dispute_id: str = "dp_1", amount: int = 999,
            reason: str = "fraudulent") -> dict:
    return {"id": dispute_id, "object": "dispute", "charge": "ch_1", "payment_intent": intent_id, "amount": amount,
            "currency": "usd", "reason": reason, "status": status, "created": OPENED}


def dispute_events(account_id: str) -> list:
    return [e for e in access.get_events_by_account(account_id) if e.Action.startswith("payment.dispute")]


def receipts_of_receipt(receipt) -> list:
    """The receipt as stored now (one item, in a list to unpack)."""
    return [access.get_receipt(receipt.account_id, receipt.SK)]


def entries() -> list[DisputeEntry]:
    return list(DisputeEntry.query(DisputeEntry.pk()))


@pytest.fixture
def paid(moto_table, stripe_gateway, localstripe):
    sub = paid_subscription(stripe_gateway, localstripe, 11)
    Account(Account.pk(account_id=sub.account_id), Account.sk(account_id=sub.account_id), Email=sub.Email,
            CreatedDate=TODAY.isoformat()).save()  # for the staff account page
    batches.run_payments(run_date=TODAY, workers=1)
    [receipt] = receipts_of(sub)
    return receipt


def test_a_dispute_opened_marks_the_receipt_once(client, paid) -> None:
    response = deliver(client, event("charge.dispute.created", dispute(paid.ChargeId), "evt_d1"))
    assert response.status_code == 200 and response.json()["status"] == "done", response.json()
    assert "dp_1" in response.json()["outcome"] and "opened" in response.json()["outcome"]
    [after] = receipts_of_receipt(paid)
    assert (after.DisputeId, after.DisputeStatus, after.DisputeReason, after.DisputeAmount) == (
        "dp_1", "needs_response", "fraudulent", 999)
    assert after.DisputeOpenedAt and after.DisputeOpenedAt.startswith(time.strftime("%Y-%m-%d", time.gmtime(OPENED)))
    assert after.DisputeClosedAt is None and after.Status == "paid"  # a dispute is no refund
    [audit] = dispute_events(paid.account_id)
    assert (audit.Action, audit.Actor, audit.Subject) == ("payment.dispute_opened", "stripe", paid.SK)
    assert audit.After["DisputeStatus"] == "needs_response" and audit.Before["DisputeStatus"] is None
    [entry] = entries()
    assert (entry.DisputeId, entry.AccountId, entry.ReceiptSK, entry.ReceiptNumber) == (
        "dp_1", paid.account_id, paid.SK, paid.Number)
    assert (entry.Amount, entry.Currency, entry.Reason, entry.Status) == (999, "USD", "fraudulent", "needs_response")
    # the same event again: a replay; the same dispute under another event id: nothing more
    again = deliver(client, event("charge.dispute.created", dispute(paid.ChargeId), "evt_d1"))
    assert again.status_code == 200 and again.json()["status"] == "replay"
    other = deliver(client, event("charge.dispute.created", dispute(paid.ChargeId), "evt_d1b"))
    assert other.status_code == 200 and "already" in other.json()["outcome"]
    assert len(dispute_events(paid.account_id)) == 1 and len(entries()) == 1


@pytest.mark.parametrize("outcome", ["won", "lost"])
def test_a_closed_dispute_records_its_outcome(client, paid, outcome) -> None:
    deliver(client, event("charge.dispute.created", dispute(paid.ChargeId), "evt_o"))
    response = deliver(client, event("charge.dispute.closed", dispute(paid.ChargeId, outcome), "evt_c"))
    assert response.status_code == 200 and response.json()["status"] == "done"
    [after] = receipts_of_receipt(paid)
    assert after.DisputeStatus == outcome and after.DisputeClosedAt and after.dispute_closed
    # (both in the same second: their order in the partition is their random ids')
    assert sorted(e.Action for e in dispute_events(paid.account_id)) == [
        "payment.dispute_closed", "payment.dispute_opened"]
    [closed_event] = [e for e in dispute_events(paid.account_id) if e.Action == "payment.dispute_closed"]
    assert (closed_event.Before["DisputeStatus"], closed_event.After["DisputeStatus"]) == ("needs_response", outcome)
    [entry] = entries()
    assert entry.Status == outcome and entry.ClosedAt and entry.closed
    # a lost dispute took the money back: the invoice's credit note, e-mailed as a refund's
    notes = access.credit_notes_of_receipt(after)
    sent = [m for m in mail.outbox if m.subject.startswith("Credit note")]
    if outcome == "lost":
        [note] = notes
        assert note.RefundId == "dp_1" and note.Gross == -999
        [message] = sent
        assert message.to == [paid.Email] and note.Number in message.subject
    else:
        assert notes == [] and sent == []
    # closed delivered again under another id: nothing more
    assert deliver(client, event("charge.dispute.closed", dispute(paid.ChargeId, outcome), "evt_c2")).status_code == 200
    assert len(dispute_events(paid.account_id)) == 2 and receipts_of_receipt(paid)[0].DisputeClosedAt == after.DisputeClosedAt
    assert len([m for m in mail.outbox if m.subject.startswith("Credit note")]) == len(sent)


def test_closed_before_created_stays_closed(client, paid) -> None:
    assert deliver(client, event("charge.dispute.closed", dispute(paid.ChargeId, "lost"), "evt_late")).status_code == 200
    created = deliver(client, event("charge.dispute.created", dispute(paid.ChargeId), "evt_early"))
    assert created.status_code == 200 and created.json()["status"] == "done"
    [after] = receipts_of_receipt(paid)
    assert (after.DisputeStatus, after.DisputeReason, after.DisputeAmount) == ("lost", "fraudulent", 999)
    assert after.DisputeOpenedAt and after.DisputeClosedAt
    assert [e.Action for e in dispute_events(paid.account_id)] == ["payment.dispute_closed"]
    [entry] = entries()
    assert entry.Status == "lost"
    # and a "created" redelivered after the close, under its first id, too
    assert deliver(client, event("charge.dispute.created", dispute(paid.ChargeId), "evt_early")).json()[
        "status"] == "replay"
    assert receipts_of_receipt(paid)[0].DisputeStatus == "lost" and entries()[0].Status == "lost"


def test_a_dispute_before_its_receipt_is_500_then_recorded(client, moto_table, stripe_gateway, localstripe) -> None:
    sub = paid_subscription(stripe_gateway, localstripe, 12)
    charge = stripe_gateway.charge(sub.PaymentDetails.Token, 999, "USD", f"{sub.sub_id}:{TODAY}", {
        "account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU, "period_start": TODAY.isoformat(),
        "period_end": TODAY.isoformat(), "billing_date": TODAY.isoformat(), "attempt": "0"})
    early = event("charge.dispute.created", dispute(charge.charge_id), "evt_before")
    response = deliver(client, early)
    assert response.status_code == 500 and stored("evt_before").Status == "failed"
    assert dispute_events(sub.account_id) == [] and entries() == [] and receipts_of(sub) == []
    batches.run_payments(run_date=TODAY, workers=1)  # records the charge (the gateway replays its key)
    assert deliver(client, early).status_code == 200 and stored("evt_before").Status == "done"
    [receipt] = receipts_of(sub)
    assert receipt.DisputeStatus == "needs_response" and len(dispute_events(sub.account_id)) == 1
    assert len(entries()) == 1


def test_a_shop_charge_and_a_dispute_without_payment_intent_are_ignored(client, moto_table, stripe_gateway,
                                                                         localstripe) -> None:
    sub = paid_subscription(stripe_gateway, localstripe, 13)
    charge = stripe_gateway.charge(sub.PaymentDetails.Token, 2500, "USD", "order-1",
                                   {"source": "shop", "order_id": "o1"})
    response = deliver(client, event("charge.dispute.created", dispute(charge.charge_id), "evt_shop"))
    assert response.status_code == 200 and response.json()["status"] == "ignored"
    assert "not a subscription's charge" in response.json()["outcome"]
    no_intent = dispute("")
    del no_intent["payment_intent"]
    response = deliver(client, event("charge.dispute.created", no_intent, "evt_old_api"))
    assert response.json()["status"] == "ignored" and "payment_intent" in response.json()["outcome"]
    response = deliver(client, event("charge.dispute.created", dispute(charge.charge_id, dispute_id="dp#1"), "evt_k"))
    assert response.status_code == 200 and response.json()["status"] == "ignored"
    assert entries() == [] and dispute_events(sub.account_id) == []


# --- the pages ------------------------------------------------------------------------------


def test_the_staff_disputes_page_lists_them_and_links_the_account(client, paid, ddb_requests) -> None:
    deliver(client, event("charge.dispute.created", dispute(paid.ChargeId), "evt_p"))
    staff = Client()
    staff.force_login(make_user("clerk@rpay.localhost", staff=True, roles=["support"]))
    ddb_requests.reset()
    response = staff.get(reverse("admin:staff_disputes"))
    assert response.status_code == 200 and ddb_requests.ops == ["Query"]
    html = response.content.decode()
    assert 'data-testid="dispute-dp_1"' in html and "fraudulent" in html and "needs_response" in html
    assert reverse("admin:staff_account", args=[paid.account_id]) in html and paid.Number in html
    deliver(client, event("charge.dispute.closed", dispute(paid.ChargeId, "won"), "evt_q"))
    assert ">won<" in staff.get(reverse("admin:staff_disputes")).content.decode()
    # the nav links it; the account page marks the disputed receipt
    account_page = staff.get(reverse("admin:staff_account", args=[paid.account_id])).content.decode()
    assert f'href="{reverse("admin:staff_disputes")}"' in account_page
    assert 'data-testid="receipt-dispute"' in account_page and "dp_1" in account_page


def test_a_finance_clerk_sees_the_disputes_a_customer_does_not(client, moto_table) -> None:
    finance = Client()
    finance.force_login(make_user("money@rpay.localhost", staff=True, roles=["finance"]))
    assert finance.get(reverse("admin:staff_disputes")).status_code == 200
    customer = make_user("ann@example.com")
    client.force_login(customer)
    response = client.get(reverse("admin:staff_disputes"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_the_customers_receipt_page_shows_the_dispute(client, moto_table, stripe_gateway, localstripe) -> None:
    ann = make_customer("w14@example.com")
    token = saved_card_token(stripe_gateway, localstripe, stripe_gateway.create_customer(ann.account_id, ann.email))
    sub = access.due_subscription(ann.account_id, "sub-w14", due=TODAY, card=access.payment_details_from(token),
                                  email=ann.email)
    access.batch_items([sub])
    batches.run_payments(run_date=TODAY, workers=1)
    [receipt] = receipts_of(sub)
    url = reverse("receipt", args=[receipt.url_id])
    assert 'data-testid="dispute"' not in ann.client.get(url).content.decode()
    deliver(client, event("charge.dispute.created", dispute(receipt.ChargeId), "evt_r1"))
    page = ann.client.get(url).content.decode()
    assert 'data-testid="dispute"' in page and "fraud" in page.lower() and 'data-testid="dispute-outcome"' not in page
    deliver(client, event("charge.dispute.closed", dispute(receipt.ChargeId, "lost"), "evt_r2"))
    page = ann.client.get(url).content.decode()
    assert 'data-testid="dispute-outcome"' in page and "returned to you" in page
