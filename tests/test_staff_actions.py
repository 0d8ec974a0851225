"""Staff actions on a subscription or receipt: confirm on GET, act on POST, leave an
audit event with before/after snapshots."""

from __future__ import annotations

from datetime import date

import pytest
from django.urls import reverse

from billing import access
from billing.gateway import get_gateway
from billing.models import ReceiptStatus

from .builders import make_customer_with_history, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def customer(moto_table):
    return make_customer_with_history()


@pytest.fixture
def money_client(client):
    client.force_login(make_user("money@rpay.localhost", staff=True, money=True))
    return client


@pytest.fixture
def clerk_client(client):
    client.force_login(make_user("clerk@rpay.localhost", staff=True))
    return client


def only_event(account_id: str, action: str):
    events = [e for e in access.get_events_by_account(account_id) if e.Action == action]
    assert len(events) == 1, [e.Action for e in access.get_events_by_account(account_id)]
    return events[0]


def test_cancel_confirms_first_then_cancels_and_records(clerk_client, customer) -> None:
    url = reverse("admin:staff_cancel", args=[customer.account_id, customer.sub.sub_id])
    page = clerk_client.get(url)
    assert page.status_code == 200
    assert "Cancel this subscription?" in page.content.decode()
    # the GET changed nothing
    assert access.get_subscription(customer.account_id, customer.sub.sub_id).Status == "active"
    assert not access.get_events_by_account(customer.account_id)

    response = clerk_client.post(url)
    assert response.status_code == 302
    sub = access.get_subscription(customer.account_id, customer.sub.sub_id)
    assert sub.Status == "cancelled" and sub.NextPaymentDate is None and sub.CancelReason == "staff"
    event = only_event(customer.account_id, "staff.cancel_subscription")
    assert event.Actor == "clerk@rpay.localhost"
    assert event.Subject == sub.SK
    assert event.Before["Status"] == "active" and event.Before["NextPaymentDate"]
    assert event.After["Status"] == "cancelled" and event.After["NextPaymentDate"] is None
    # the billing page shows it
    html = clerk_client.get(reverse("admin:staff_account", args=[customer.account_id])).content.decode()
    assert "staff.cancel_subscription" in html


def test_cancel_of_a_cancelled_subscription_does_nothing(clerk_client, customer) -> None:
    url = reverse("admin:staff_cancel", args=[customer.account_id, customer.cancelled.sub_id])
    assert clerk_client.post(url).status_code == 302
    assert not access.get_events_by_account(customer.account_id)


def test_change_payment_day(clerk_client, customer) -> None:
    url = reverse("admin:staff_payment_day", args=[customer.account_id, customer.sub.sub_id])
    assert 'name="payment_day"' in clerk_client.get(url).content.decode()
    bad = clerk_client.post(url, {"payment_day": "32"})
    assert bad.status_code == 200 and access.get_subscription(customer.account_id, customer.sub.sub_id).PaymentDay == 15

    assert clerk_client.post(url, {"payment_day": "28"}).status_code == 302
    sub = access.get_subscription(customer.account_id, customer.sub.sub_id)
    assert sub.PaymentDay == 28 and sub.NextPaymentDate.endswith("-28")
    event = only_event(customer.account_id, "staff.change_payment_day")
    assert event.Before["PaymentDay"] == 15 and event.After["PaymentDay"] == 28
    assert event.After["NextPaymentDate"] == sub.NextPaymentDate


def test_refund_part_then_the_receipt_shows_it(money_client, customer) -> None:
    url = reverse("admin:staff_refund", args=[customer.account_id, customer.receipt.SK])
    page = money_client.get(url).content.decode()
    assert 'value="9.99"' in page  # the full amount is proposed
    # more than was charged is refused by the form, before the gateway is called
    assert money_client.post(url, {"amount": "10.00"}).status_code == 200
    assert money_client.post(url, {"amount": "1.001"}).status_code == 200

    response = money_client.post(url, {"amount": "4.99", "reason": "late delivery"})
    assert response.status_code == 302
    receipt = access.get_receipt(customer.account_id, customer.receipt.SK)
    assert receipt.Status == ReceiptStatus.PARTIALLY_REFUNDED
    assert receipt.RefundedAmount == 499 and receipt.RefundId.startswith("re_sim_")
    event = only_event(customer.account_id, "staff.refund")
    assert event.Before["RefundedAmount"] == 0 and event.Before["Status"] == "paid"
    assert event.After["RefundedAmount"] == 499 and event.After["RefundId"] == receipt.RefundId
    assert event.Actor == "money@rpay.localhost" and event.Note == "late delivery"

    # One refund per receipt (its key is the idempotency key): a second is refused here...
    again = money_client.post(url, {"amount": "1.00"})
    assert again.status_code == 302
    assert access.get_receipt(customer.account_id, customer.receipt.SK).RefundedAmount == 499
    # ...and the gateway itself refuses refunding beyond what was charged.
    gateway = get_gateway()
    beyond = gateway.refund(receipt.ChargeId, 501, idempotency_key="another-key")
    assert beyond.status == "failed" and "exceeds" in beyond.reason
    assert gateway.refund(receipt.ChargeId, 500, idempotency_key="k2").status == "succeeded"
    # the same idempotency key only ever returns the first refund
    same = gateway.refund(receipt.ChargeId, 100, idempotency_key=f"refund:{receipt.SK}")
    assert same.refund_id == receipt.RefundId and same.amount == 499


def test_full_refund_marks_the_receipt_refunded(money_client, customer) -> None:
    url = reverse("admin:staff_refund", args=[customer.account_id, customer.receipt.SK])
    assert money_client.post(url, {"amount": "9.99"}).status_code == 302
    receipt = access.get_receipt(customer.account_id, customer.receipt.SK)
    assert receipt.Status == ReceiptStatus.REFUNDED and receipt.RefundedAmount == 999


def test_refund_the_gateway_refuses_is_recorded_and_leaves_the_receipt(money_client, customer) -> None:
    sub = customer.sub
    from datetime import date

    bogus, _ = access.create_receipt(sub, billing_date=date.fromisoformat(customer.receipt.BillingDate).replace(day=1),
                                     amount=999, currency="USD", charge_id="ch_unknown", retention_days=200)
    url = reverse("admin:staff_refund", args=[customer.account_id, bogus.SK])
    assert money_client.post(url, {"amount": "9.99"}).status_code == 302
    assert access.get_receipt(customer.account_id, bogus.SK).Status == ReceiptStatus.PAID
    event = only_event(customer.account_id, "staff.refund_failed")
    assert "no such successful charge" in event.Note


def test_record_refund_refuses_a_stale_read(moto_table, customer) -> None:
    first = access.get_receipt(customer.account_id, customer.receipt.SK)
    stale = access.get_receipt(customer.account_id, customer.receipt.SK)
    access.record_refund(first, refund_id="re_1", amount=100)
    with pytest.raises(access.ConditionFailed):
        access.record_refund(stale, refund_id="re_2", amount=100)
    with pytest.raises(ValueError):
        access.record_refund(first, refund_id="re_3", amount=900)


def test_retry_confirm_page_needs_a_past_due_subscription(money_client, customer) -> None:
    ok = money_client.get(reverse("admin:staff_retry", args=[customer.account_id, customer.past_due.sub_id]))
    assert ok.status_code == 200 and "Retry payment now" in ok.content.decode()
    active = money_client.get(reverse("admin:staff_retry", args=[customer.account_id, customer.sub.sub_id]))
    assert active.status_code == 302


def test_retry_now_takes_the_payment_and_records(money_client, customer) -> None:
    """A past-due subscription whose card now works: retry now pays the period it owes."""
    from billing.gateway import get_gateway

    card = get_gateway().tokenize_card("4242424242424242", 12, 2031, "123")
    past_due = access.replace_card(customer.past_due, card)
    period = past_due.BillingPeriod
    url = reverse("admin:staff_retry", args=[customer.account_id, past_due.sub_id])
    response = money_client.post(url, follow=True)
    assert "The payment went through" in response.content.decode()
    stored = access.get_subscription(customer.account_id, past_due.sub_id)
    assert stored.Status == "active" and stored.BillingPeriod is None
    receipts = access.get_receipts_by_account(customer.account_id, date.fromisoformat(period), date.today())
    assert [r.BillingDate for r in receipts if r.sub_id == past_due.sub_id] == [period]
    assert len(get_gateway().charges_made(sub_id=past_due.sub_id)) == 1
    event = only_event(customer.account_id, "staff.retry_payment")
    assert event.Before["Status"] == "past_due" and event.After["Status"] == "active"
    # a second press finds nothing owed and charges nothing
    money_client.post(url)
    assert len(get_gateway().charges_made(sub_id=past_due.sub_id)) == 1


def test_retry_now_declined_again_stays_past_due(money_client, customer) -> None:
    url = reverse("admin:staff_retry", args=[customer.account_id, customer.past_due.sub_id])
    response = money_client.post(url, follow=True)
    assert "declined again" in response.content.decode()
    stored = access.get_subscription(customer.account_id, customer.past_due.sub_id)
    assert stored.Status == "past_due" and stored.RetryCount == 2
    event = only_event(customer.account_id, "staff.retry_payment")
    assert event.Note.startswith("declined")


def test_unknown_ids_are_404(money_client, customer) -> None:
    a = customer.account_id
    assert money_client.get(reverse("admin:staff_account", args=["nope"])).status_code == 404
    assert money_client.get(reverse("admin:staff_cancel", args=[a, "nope"])).status_code == 404
    assert money_client.get(reverse("admin:staff_refund", args=[a, "REC#2020-01-01#SKU#X#SUB#y"])).status_code == 404
    assert money_client.get(reverse("admin:staff_refund", args=[a, "SUB#x"])).status_code == 404


def test_gateway_refund_result_has_its_fields_in_place(moto_table, customer) -> None:
    result = get_gateway().refund(customer.receipt.ChargeId, 100, idempotency_key="direct")
    assert result.status == "succeeded" and result.refund_id.startswith("re_") and result.amount == 100
    assert result.charge_id == customer.receipt.ChargeId
    replay = get_gateway().refund(customer.receipt.ChargeId, 100, idempotency_key="direct")
    assert replay == result
