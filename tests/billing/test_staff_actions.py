"""Staff actions on a subscription or receipt: confirm on GET, act on POST, leave an
audit event with before/after snapshots."""

from __future__ import annotations

import re
from datetime import date

import pytest
from django.urls import reverse

from billing import access
from billing.models import ReceiptStatus
from core.payments.gateway import get_gateway
from tests.builders import make_customer_with_history, make_user

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


def staff_events(account_id: str) -> list:
    """Events staff made (the test data's own, M6, are recorded too)."""
    return [e for e in access.get_events_by_account(account_id) if e.Actor.endswith("@rpay.localhost")]


def test_cancel_confirms_first_then_cancels_and_records(clerk_client, customer) -> None:
    url = reverse("admin:staff_cancel", args=[customer.account_id, customer.sub.sub_id])
    page = clerk_client.get(url)
    assert page.status_code == 200
    assert "Cancel this subscription?" in page.content.decode()
    # the GET changed nothing
    assert access.get_subscription(customer.account_id, customer.sub.sub_id).Status == "active"
    assert not staff_events(customer.account_id)

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
    assert not staff_events(customer.account_id)


def test_change_payment_day(clerk_client, customer) -> None:
    url = reverse("admin:staff_payment_day", args=[customer.account_id, customer.sub.sub_id])
    assert 'name="payment_day"' in clerk_client.get(url).content.decode()
    bad = clerk_client.post(url, {"payment_day": "32"})
    assert bad.status_code == 200 and access.get_subscription(customer.account_id, customer.sub.sub_id).PaymentDay == 15

    assert clerk_client.post(url, {"payment_day": "28"}).status_code == 302
    sub = access.get_subscription(customer.account_id, customer.sub.sub_id)
    # Rule changed (M1): the next payment keeps its date (it pays up to the new day).
    assert sub.PaymentDay == 28 and sub.NextPaymentDate == customer.sub.NextPaymentDate
    event = only_event(customer.account_id, "staff.change_payment_day")
    assert event.Before["PaymentDay"] == 15 and event.After["PaymentDay"] == 28
    assert event.After["NextPaymentDate"] == sub.NextPaymentDate


def refund_form(page: str) -> dict:
    """The refund form's hidden fields, as the page proposes them: its request id and the
    refunded amount it was drawn from (its version)."""
    match = re.search(r'name="request_id" value="([0-9a-f]{16})"', page)
    assert match, "the refund form carries its request id"
    refunded = re.search(r'name="refunded" value="(\d+)"', page)
    assert refunded, "the refund form carries the refunded amount it showed"
    return {"request_id": match.group(1), "refunded": refunded.group(1)}


def test_several_partial_refunds_up_to_the_charge(money_client, customer, mailoutbox) -> None:
    """Money rule M5 (it replaced "one refund per receipt"): 4.99, then 3.00, then the
    rest; each its own gateway refund, recorded on the receipt, audited and e-mailed."""
    url = reverse("admin:staff_refund", args=[customer.account_id, customer.receipt.SK])
    page = money_client.get(url).content.decode()
    assert 'value="9.99"' in page  # the full amount is proposed
    first = refund_form(page)
    # more than was charged is refused by the form, before the gateway is called
    assert money_client.post(url, {"amount": "10.00", **first}).status_code == 200
    assert money_client.post(url, {"amount": "1.001", **first}).status_code == 200

    assert money_client.post(url, {"amount": "4.99", "reason": "late delivery", **first}).status_code == 302
    receipt = access.get_receipt(customer.account_id, customer.receipt.SK)
    assert receipt.Status == ReceiptStatus.PARTIALLY_REFUNDED and receipt.RefundedAmount == 499
    [refund] = receipt.Refunds
    assert refund.RefundId.startswith("re_sim_") and refund.Amount == 499 and refund.Reason == "late delivery"
    event = only_event(customer.account_id, "staff.refund")
    assert event.Before["RefundedAmount"] == 0 and event.Before["Status"] == "paid"
    assert event.After["RefundedAmount"] == 499 and event.After["Refunds"] == [refund.RefundId]
    assert event.Actor == "money@rpay.localhost" and event.Note == "late delivery"
    [message] = mailoutbox
    assert message.to == [receipt.Email] and "$4.99" in message.body and refund.RefundId in message.body
    assert "$4.99 of $9.99" in message.body

    # The same form submitted twice (a double click) refunds once.
    assert money_client.post(url, {"amount": "4.99", **first}).status_code == 302
    assert access.get_receipt(customer.account_id, customer.receipt.SK).RefundedAmount == 499

    # A second refund of the same charge: a new form, a new request id, a refund of its own.
    second = refund_form(money_client.get(url).content.decode())
    assert second != first
    assert 'value="5.00"' in money_client.get(url).content.decode()  # what is left is proposed
    assert money_client.post(url, {"amount": "3.00", **second}).status_code == 302
    third = refund_form(money_client.get(url).content.decode())
    assert money_client.post(url, {"amount": "2.01", **third}).status_code == 200  # more than is left
    assert money_client.post(url, {"amount": "2.00", **third}).status_code == 302
    receipt = access.get_receipt(customer.account_id, customer.receipt.SK)
    assert receipt.Status == ReceiptStatus.REFUNDED and receipt.RefundedAmount == 999
    assert [r.Amount for r in receipt.Refunds] == [499, 300, 200]
    assert len(mailoutbox) == 3
    # nothing is left: the page says so instead of offering a form
    assert money_client.get(url).status_code == 302
    # the gateway agrees: its refunds of the charge add up to the charge, and no more is possible
    beyond = get_gateway().refund(receipt.ChargeId, 1, idempotency_key="one-more")
    assert beyond.status == "failed" and "exceeds" in beyond.reason
    # the customer's receipt page lists each refund
    html = customer_receipt_page(customer, receipt)
    assert all(r.RefundId in html for r in receipt.Refunds)


def customer_receipt_page(customer, receipt) -> str:
    from django.test import Client

    client = Client()
    client.force_login(customer.user)
    return client.get(reverse("receipt", args=[receipt.url_id])).content.decode()  # by its number


def test_full_refund_marks_the_receipt_refunded(money_client, customer) -> None:
    url = reverse("admin:staff_refund", args=[customer.account_id, customer.receipt.SK])
    form = refund_form(money_client.get(url).content.decode())
    assert money_client.post(url, {"amount": "9.99", **form}).status_code == 302
    receipt = access.get_receipt(customer.account_id, customer.receipt.SK)
    assert receipt.Status == ReceiptStatus.REFUNDED and receipt.RefundedAmount == 999


def test_refund_the_gateway_refuses_is_recorded_and_leaves_the_receipt(money_client, customer) -> None:
    sub = customer.sub
    bogus, _ = access.create_receipt(sub, billing_date=date.fromisoformat(customer.receipt.BillingDate).replace(day=1),
                                     amount=999, currency="USD", charge_id="ch_unknown", retention_days=200)
    url = reverse("admin:staff_refund", args=[customer.account_id, bogus.SK])
    form = refund_form(money_client.get(url).content.decode())
    assert money_client.post(url, {"amount": "9.99", **form}).status_code == 302
    assert access.get_receipt(customer.account_id, bogus.SK).Status == ReceiptStatus.PAID
    event = only_event(customer.account_id, "staff.refund_failed")
    assert "no such successful charge" in event.Note


def test_a_refund_the_gateway_cannot_make_is_a_message_and_an_event(money_client, customer, monkeypatch) -> None:
    """Defect 7: an unreachable gateway on refund was a 500 with no audit event."""
    from core.payments.errors import GatewayError

    def unreachable(*args, **kwargs):
        raise GatewayError("connection reset")

    url = reverse("admin:staff_refund", args=[customer.account_id, customer.receipt.SK])
    form = refund_form(money_client.get(url).content.decode())
    monkeypatch.setattr(type(get_gateway()), "refund", unreachable)
    response = money_client.post(url, {"amount": "1.00", **form}, follow=True)
    assert response.status_code == 200
    assert "could not be reached" in response.content.decode()
    assert access.get_receipt(customer.account_id, customer.receipt.SK).RefundedAmount == 0
    event = only_event(customer.account_id, "staff.refund_failed")
    assert "connection reset" in event.Note


def test_refunds_recorded_from_stale_reads_both_land(moto_table, customer) -> None:
    """Two staff members refunding at once: the second write re-reads and adds its refund
    (it replaced a rule that refused the stale read and lost the record)."""
    first = access.get_receipt(customer.account_id, customer.receipt.SK)
    stale = access.get_receipt(customer.account_id, customer.receipt.SK)
    access.record_refund(first, refund_id="re_1", amount=100, actor="a@x")
    both, added = access.record_refund(stale, refund_id="re_2", amount=100, actor="b@x")
    assert added and both.RefundedAmount == 200 and [r.RefundId for r in both.Refunds] == ["re_1", "re_2"]
    # the same refund recorded again (a retried request) is not added twice
    again, added = access.record_refund(stale, refund_id="re_2", amount=100, actor="b@x")
    assert not added and again.RefundedAmount == 200
    with pytest.raises(ValueError):
        access.record_refund(again, refund_id="re_3", amount=900, actor="a@x")
    assert len([e for e in access.get_events_by_account(customer.account_id) if e.Action == "staff.refund"]) == 2


def test_retry_confirm_page_needs_a_past_due_subscription(money_client, customer) -> None:
    ok = money_client.get(reverse("admin:staff_retry", args=[customer.account_id, customer.past_due.sub_id]))
    assert ok.status_code == 200 and "Retry payment now" in ok.content.decode()
    active = money_client.get(reverse("admin:staff_retry", args=[customer.account_id, customer.sub.sub_id]))
    assert active.status_code == 302


def test_retry_now_takes_the_payment_and_records(money_client, customer) -> None:
    """A past-due subscription whose card now works: retry now pays the period it owes."""
    from core.payments.gateway import get_gateway

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


def test_a_stale_refund_form_is_answered_with_the_receipt_as_it_is_now(money_client, customer) -> None:
    """Two tabs opened on one receipt: the first refunds; the second, drawn from
    "Already refunded 0.00", refunds nothing, says it changed and shows it as it is now."""
    url = reverse("admin:staff_refund", args=[customer.account_id, customer.receipt.SK])
    first = refund_form(money_client.get(url).content.decode())
    second = refund_form(money_client.get(url).content.decode())
    assert money_client.post(url, {"amount": "4.00", **first}).status_code == 302
    response = money_client.post(url, {"amount": "9.99", **second})
    html = response.content.decode()
    assert response.status_code == 409
    assert "This changed since you opened the page." in html and "It was refunded meanwhile" in html
    assert "4.00 USD" in html and 'name="refunded" value="400"' in html  # a new form, for what is left
    receipt = access.get_receipt(customer.account_id, customer.receipt.SK)
    assert receipt.RefundedAmount == 400 and len(receipt.Refunds) == 1


@pytest.fixture
def local_customer(local_table):
    return make_customer_with_history()


@pytest.mark.django_db(transaction=True)
def test_two_tabs_refunding_at_once_give_one_refund_and_one_refunded_meanwhile(local_customer) -> None:
    """Real threads on DynamoDB Local, each a staff tab posting the form it was shown
    (the same "Already refunded 0.00", each its own request id): one refund at the
    gateway and on the receipt, and one 409 "refunded meanwhile" answer."""
    from django.test import Client

    from tests.builders import at_once

    customer = local_customer
    user = make_user("money@rpay.localhost", staff=True, money=True)
    url = reverse("admin:staff_refund", args=[customer.account_id, customer.receipt.SK])
    tabs = []
    for _ in range(2):
        tab = Client()
        tab.force_login(user)
        tabs.append((tab, refund_form(tab.get(url).content.decode())))
    posted = iter(tabs)

    def submit() -> int:
        tab, form = next(posted)
        return tab.post(url, {"amount": "9.99", **form}).status_code

    assert sorted(at_once(submit)) == [302, 409]
    receipt = access.get_receipt(customer.account_id, customer.receipt.SK)
    assert receipt.RefundedAmount == 999 and len(receipt.Refunds) == 1 and receipt.RefundClaim is None
    refunded_at_gateway = get_gateway().refund(receipt.ChargeId, 1, idempotency_key="one-more")
    assert refunded_at_gateway.status == "failed" and "exceeds" in refunded_at_gateway.reason


def test_staff_forms_show_no_labels_of_hidden_fields(client, customer) -> None:
    client.force_login(make_user("root@rpay.localhost", staff=True, money=True))
    pages = [reverse(f"admin:staff_{name}", args=[customer.account_id, customer.sub.sub_id])
             for name in ("pause", "switch")]
    pages.append(reverse("admin:staff_refund", args=[customer.account_id, customer.receipt.SK]))
    for url in pages:
        html = client.get(url).content.decode()
        labels = re.findall(r"<label[^>]*>([^<]*)</label>", html)
        assert not {"Version", "Step", "Charge", "Credit", "Upgrade", "Request id", "Refunded"} & set(labels), url
