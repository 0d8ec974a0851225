"""Staff pause and resume: the customer's rules, an audit event naming the
staff member, the customer's e-mail, and the page's DynamoDB requests."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.core import mail
from django.urls import reverse

from billing import access
from billing.rules.schedule import next_payment_date
from core.pages import today
from tests.builders import fresh, make_customer_with_history, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def clerk_client(client):
    client.force_login(make_user("clerk@rpay.localhost", staff=True))
    return client


@pytest.fixture
def scheduled(moto_table):
    """An active subscription paid through the day before its next payment (a week on)."""
    history = make_customer_with_history()
    day = today()
    nxt = day + timedelta(days=7)
    sub = access.set_schedule(history.sub, next_payment=nxt, last_payment=day - timedelta(days=20),
                              next_reminder=day + timedelta(days=1), last_reminder=day - timedelta(days=20))
    mail.outbox.clear()
    return history, fresh(sub)


def test_staff_pause_then_resume(clerk_client, scheduled, ddb_requests) -> None:
    history, sub = scheduled
    url = reverse("admin:staff_pause", args=[history.account_id, sub.sub_id])
    ddb_requests.reset()
    page = clerk_client.get(url)
    assert page.status_code == 200 and ddb_requests.ops == ["Query"]
    assert "until I resume it" in page.content.decode()
    ddb_requests.reset()
    response = clerk_client.post(url, {"how": "skip", "payments": "1"})
    # the update, its audit event and its merchant event: one transaction
    assert response.status_code == 302 and ddb_requests.ops == ["Query", "TransactWriteItems", "GetItem"]
    paused = fresh(sub)
    resume = next_payment_date(15, date_of(sub.NextPaymentDate))
    assert paused.NextPaymentDate == resume.isoformat() and paused.PausedUntil == resume.isoformat()
    assert paused.PaidThroughDate == sub.PaidThroughDate
    [event] = [e for e in access.get_events_by_account(history.account_id) if e.Action == "staff.pause_subscription"]
    assert event.Actor == "clerk@rpay.localhost" and event.After["PausedUntil"] == resume.isoformat()
    [message] = mail.outbox
    assert message.to == [sub.Email] and "paused" in message.subject
    account_page = clerk_client.get(reverse("admin:staff_account", args=[history.account_id])).content.decode()
    assert f"Paused until {resume.isoformat()}" in account_page and ">Resume<" in account_page

    mail.outbox.clear()
    response = clerk_client.post(reverse("admin:staff_resume", args=[history.account_id, sub.sub_id]))
    assert response.status_code == 302
    resumed = fresh(sub)
    assert resumed.NextPaymentDate == sub.NextPaymentDate and resumed.PausedFrom is None  # as if never paused
    [event] = [e for e in access.get_events_by_account(history.account_id) if e.Action == "staff.resume_subscription"]
    assert event.Actor == "clerk@rpay.localhost"
    assert [m.subject for m in mail.outbox] == [f"Your {sub.ProductName} subscription is resumed"]


def test_staff_cannot_pause_a_past_due_subscription(clerk_client, scheduled) -> None:
    history, _ = scheduled
    response = clerk_client.get(reverse("admin:staff_pause", args=[history.account_id, history.past_due.sub_id]))
    assert response.status_code == 302
    assert fresh(history.past_due).PausedFrom is None


def test_pause_needs_the_change_day_permission(client, scheduled) -> None:
    history, sub = scheduled
    client.force_login(make_user("finance@rpay.localhost", staff=True, roles=["finance"]))
    assert client.post(reverse("admin:staff_pause", args=[history.account_id, sub.sub_id]),
                       {"how": "open"}).status_code == 403
    assert fresh(sub).PausedFrom is None


def date_of(value: str) -> date:
    return date.fromisoformat(value)


def test_a_staff_pause_drawn_from_an_older_subscription_keeps_the_choice_and_does_nothing(clerk_client,
                                                                                          scheduled) -> None:
    history, sub = scheduled
    url = reverse("admin:staff_pause", args=[history.account_id, sub.sub_id])
    clerk_client.get(url)
    access.change_payment_day(sub, 20, actor="customer")  # another tab, meanwhile
    response = clerk_client.post(url, {"how": "skip", "payments": 2, "version": sub.Version - 1})
    html = response.content.decode()
    assert response.status_code == 409 and "This changed since you opened the page." in html
    assert response.context["form"]["payments"].value() == "2"  # the choice kept
    assert response.context["form"]["version"].value() == str(fresh(sub).Version)
    assert fresh(sub).PausedFrom is None
