"""Managing a subscription: payment day, card, cancel; audit events; stale writes."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
from django.conf import settings

from billing import access
from billing.operations import payments
from core.pages import today
from tests.builders import GOOD_CARD, subscribe

pytestmark = pytest.mark.django_db


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def changes_of(account_id: str) -> list:
    """The account's audit events but the subscription.created and payment ones that
    creating the test data records (M6: every access function records its own)."""
    return [e for e in access.get_events_by_account(account_id)
            if e.Action not in ("subscription.created", "payment.succeeded")]


def test_subscription_page(customer, ddb_requests) -> None:
    sub = subscribe(customer)
    ddb_requests.reset()
    response = customer.client.get(f"/subscriptions/{sub.sub_id}/")
    # the subscription (by id: a Query), then its payment history (receipts and failed
    # attempts of the account: one Query)
    assert ddb_requests.ops == ["Query", "Query", "GetItem"]  # + the seller's tax profile (the amounts' tax)
    html = response.content.decode()
    assert "Change the payment day" in html and "Replace the card" in html and "Cancel the subscription" in html


def test_change_payment_day(customer, ddb_requests) -> None:
    sub = subscribe(customer, day=15)
    url = f"/subscriptions/{sub.sub_id}/payment-day/"
    ddb_requests.reset()
    page = customer.client.get(url)
    assert ddb_requests.ops == ["Query", "GetItem"]  # + the seller's tax profile (the amounts' tax)
    assert 'name="version" value="1"' in page.content.decode()
    # Rule changed (M1): the next payment keeps its date and pays up to the new
    # day's anchor a month or more on; the choice shows that payment (its amount, the
    # payment run's) and the first one on the new day after it.
    start = date.fromisoformat(sub.NextPaymentDate)
    # each choice shows the payment it leads to, before the customer picks it (checked
    # against what the payment run charges once the day is changed, below)
    label = re.search(r'<option value="31">([^<]*)</option>', page.content.decode()).group(1)
    shown = re.fullmatch(rf"The 31st: next payment \$(\d+\.\d\d) on {start.day} {start:%b %Y}, "
                         r"then on (.*)", label)
    assert shown, label
    assert 'value="15"' not in page.content.decode()  # the current day is not offered
    ddb_requests.reset()
    response = customer.client.post(url, {"payment_day": "31", "version": "1"}, follow=True)
    # the update, its audit event and its merchant event: one transaction
    assert ddb_requests.by_name()["TransactWriteItems"] == 1 and ddb_requests.ops[:3] == ["Query", "GetItem", "TransactWriteItems"]
    stored = access.get_subscription(customer.account_id, sub.sub_id)
    assert stored.PaymentDay == 31 and stored.NextPaymentDate == sub.NextPaymentDate
    assert payments.owed_amount(stored) == int(shown.group(1).replace(".", ""))  # what the run will charge
    first_on_new_day = payments.owed_period(stored)[1] + timedelta(days=1)
    assert shown.group(2) == f"{first_on_new_day.day} {first_on_new_day:%b %Y}" and first_on_new_day.day >= 28
    assert "Your payment day is now the 31st." in " ".join(messages_of(response))
    assert stored.PaidThroughDate == sub.PaidThroughDate
    assert f"covers {start.day} {start:%B} to" in " ".join(messages_of(response))
    [event] = changes_of(customer.account_id)
    assert event.Action == "subscription.payment_day_changed" and event.Actor == customer.email
    assert event.Before["PaymentDay"] == 15 and event.After["PaymentDay"] == 31 and event.Subject == sub.SK


@pytest.mark.parametrize("value", ["0", "32", "-1", "x", ""])
def test_change_payment_day_refuses_bad_days(customer, value) -> None:
    sub = subscribe(customer, day=15)
    response = customer.client.post(f"/subscriptions/{sub.sub_id}/payment-day/", {"payment_day": value, "version": "1"})
    assert response.status_code == 200 and response.context["form"].errors["payment_day"]
    assert "is-invalid" in response.content.decode()
    assert access.get_subscription(customer.account_id, sub.sub_id).PaymentDay == 15


def test_a_stale_form_is_refused_kindly(customer) -> None:
    # The page again (409), drawn from the subscription as it is now, the day chosen kept:
    # no redirect that drops the choice.
    sub = subscribe(customer, day=15)
    url = f"/subscriptions/{sub.sub_id}/payment-day/"
    customer.client.post(url, {"payment_day": "20", "version": "1"})  # another tab
    response = customer.client.post(url, {"payment_day": "25", "version": "1"})
    assert response.status_code == 409
    assert "This changed since you opened the page" in " ".join(messages_of(response))
    form = response.context["form"]
    assert form["payment_day"].value() == "25" and form["version"].value() == "2"
    assert 'value="20"' not in response.content.decode()  # the day as it is now is not offered
    assert access.get_subscription(customer.account_id, sub.sub_id).PaymentDay == 20


@pytest.mark.parametrize(("path", "function", "data"), [
    ("payment-day", "change_payment_day", {"payment_day": "20"}),
    ("card", "replace_card", {**GOOD_CARD, "card_number": "5555 5555 5555 4444"}),
    ("cancel", "end_subscription", {"when": "now", "reason": "other"}),  # a reason is asked
])
def test_condition_failed_is_a_friendly_message(customer, monkeypatch, path, function, data) -> None:
    sub = subscribe(customer, day=15)

    def concurrent_change(*args, **kwargs):
        raise access.ConditionFailed(sub.SK)

    monkeypatch.setattr(access, function, concurrent_change)
    response = customer.client.post(f"/subscriptions/{sub.sub_id}/{path}/", data, follow=True)
    # the payment day's page is drawn again at once (409, the choice kept); the others
    # redirect to their page drawn again
    assert response.status_code == (409 if path == "payment-day" else 200)
    assert "changed elsewhere" in " ".join(messages_of(response))
    assert changes_of(customer.account_id) == []


def test_replace_card(customer, ddb_requests) -> None:
    sub = subscribe(customer)
    url = f"/subscriptions/{sub.sub_id}/card/"
    ddb_requests.reset()
    response = customer.client.post(url, {**GOOD_CARD, "card_number": "5555 5555 5555 4444", "exp_month": "3",
                                          "exp_year": "2031", "version": "1"}, follow=True)
    assert ddb_requests.ops[:2] == ["Query", "TransactWriteItems"]  # the update with its events
    stored = access.get_subscription(customer.account_id, sub.sub_id).PaymentDetails
    assert (stored.Brand, stored.Last4, stored.ExpMonth, stored.ExpYear) == ("Mastercard", "4444", 3, 2031)
    assert stored.Token != sub.PaymentDetails.Token
    assert "Mastercard ending in 4444" in " ".join(messages_of(response))
    [event] = changes_of(customer.account_id)
    assert event.Action == "subscription.card_replaced"
    assert event.Before["Card"] == "Visa ****4242" and event.After["Card"] == "Mastercard ****4444"


def test_replace_card_errors(customer) -> None:
    sub = subscribe(customer)
    response = customer.client.post(f"/subscriptions/{sub.sub_id}/card/",
                                    {**GOOD_CARD, "card_number": "5555 5555 5555 4440", "version": "1"})
    assert "not valid" in " ".join(response.context["form"].errors["card_number"])
    assert "5555 5555 5555 4440" not in response.content.decode()
    assert access.get_subscription(customer.account_id, sub.sub_id).PaymentDetails.Last4 == "4242"


def test_cancel_shows_the_last_period_paid(customer, ddb_requests) -> None:
    sub = subscribe(customer, day=10, on=today() - timedelta(days=70))
    paid = [today() - timedelta(days=60), today() - timedelta(days=30)]
    for billed in paid:
        access.create_receipt(sub, billing_date=billed, amount=999, currency="USD", charge_id="ch",
                              retention_days=settings.RECEIPT_RETENTION_DAYS)
    url = f"/subscriptions/{sub.sub_id}/cancel/"
    page = customer.client.get(url)
    assert 'value="now"' in page.content.decode()  # nothing paid ahead, so "now" only
    assert access.get_subscription(customer.account_id, sub.sub_id).is_live  # GET changes nothing
    ddb_requests.reset()
    response = customer.client.post(url, {"when": "now", "reason": "not_using", "version": "1"})
    assert ddb_requests.ops == ["Query", "TransactWriteItems"]  # the update with its events
    assert response["Location"] == f"/subscriptions/{sub.sub_id}/cancelled/"
    stored = access.get_subscription(customer.account_id, sub.sub_id)
    assert stored.Status == "cancelled" and stored.NextPaymentDate is None
    ddb_requests.reset()
    done = customer.client.get(response["Location"])
    assert ddb_requests.ops == ["Query", "Query"]
    assert done.context["period_start"] == paid[-1]
    html = done.content.decode()
    assert f"{paid[-1].day} {paid[-1]:%B %Y}" in html and "The last period paid was" in html
    [event] = changes_of(customer.account_id)
    assert event.Action == "subscription.cancelled" and event.After["Status"] == "cancelled"
    # the cancelled subscription can no longer be changed
    again = customer.client.get(url)
    assert again["Location"] == f"/subscriptions/{sub.sub_id}/cancelled/"
    day = customer.client.post(f"/subscriptions/{sub.sub_id}/payment-day/", {"payment_day": "3"})
    assert day.status_code == 302 and access.get_subscription(customer.account_id, sub.sub_id).PaymentDay == 10


def test_cancel_before_any_payment(customer) -> None:
    sub = subscribe(customer)
    response = customer.client.post(f"/subscriptions/{sub.sub_id}/cancel/",
                                    {"when": "now", "reason": "other", "version": "1"}, follow=True)
    assert "No payment was taken for this subscription" in response.content.decode()


def test_payment_day_can_change_on_the_payment_day(customer) -> None:
    """Rule changed (M1): the old rule locked the day while a payment was due,
    because the change moved the due date. Now it moves no date: the due payment stays
    due today and pays up to the new day's anchor."""
    sub = subscribe(customer, day=today().day)  # its first period is due today
    assert sub.NextPaymentDate == today().isoformat()
    response = customer.client.post(f"/subscriptions/{sub.sub_id}/payment-day/",
                                    {"payment_day": "3", "version": "1"}, follow=True)
    assert response.status_code == 200
    stored = access.get_subscription(customer.account_id, sub.sub_id)
    assert stored.PaymentDay == 3 and stored.NextPaymentDate == today().isoformat()
