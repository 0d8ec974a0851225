"""The staff "Webhook events" page: a day's events (one Query of its ``WEBHOOKS#<day>``
partition), newest first, with how each ended; another day by ``?day=``; a bad day is a
form error. And the key itself: an event is deduplicated by its id on every delivery."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from billing import access
from billing.models import WebhookEvent
from tests.billing.test_stripe_webhooks import deliver, event, stored, webhook_secret  # noqa: F401
from tests.builders import make_user
from tests.wallclock import per_test

pytestmark = pytest.mark.django_db

URL = "/admin/staff/webhook-events/"


@pytest.fixture
def staff_client(client):
    client.force_login(make_user("clerk@rpay.localhost", staff=True, roles=["support"]))
    return client


def at(day: datetime, hour: int, minute: int = 0) -> int:
    return int(day.replace(hour=hour, minute=minute, second=0, microsecond=0).timestamp())


TODAY = per_test(__name__, "TODAY", lambda now: now)
YESTERDAY = per_test(__name__, "YESTERDAY", lambda now: now - timedelta(days=1))


def test_the_url_is_the_staff_pages(moto_table) -> None:
    assert reverse("admin:staff_webhook_events") == URL


def test_an_event_is_keyed_by_its_created_day_and_deduplicated_by_its_id(client, moto_table) -> None:
    created = at(YESTERDAY, 23, 59)
    first = deliver(client, event("customer.created", {"id": "cus_1"}, "evt_k", created=created))
    assert first.json()["status"] == "ignored"
    item = stored("evt_k", created)
    assert f"WEBHOOKS#{YESTERDAY.date().isoformat()}" == item.PK
    assert item.SK.endswith("#evt_k") and item.SK.startswith(YESTERDAY.date().isoformat() + "T23:59:00")
    assert (item.EventId, item.Type, item.Status, item.Attempts) == ("evt_k", "customer.created", "ignored", 1)
    # delivered again (a day later, say): the same created time, the same item: a replay
    assert deliver(client, event("customer.created", {"id": "cus_1"}, "evt_k", created=created)).json()[
        "status"] == "replay"
    assert len(list(WebhookEvent.query(item.PK))) == 1


def test_the_page_lists_the_days_events_newest_first_with_one_query(staff_client, moto_table, ddb_requests) -> None:
    deliver(staff_client, event("customer.created", {"id": "cus_1"}, "evt_morning", created=at(TODAY, 0, 1)))
    deliver(staff_client, event("payment_intent.succeeded", {"id": "pi_x"}, "evt_later", created=at(TODAY, 0, 2)))
    deliver(staff_client, event("customer.created", {"id": "cus_2"}, "evt_old", created=at(YESTERDAY, 12)))
    ddb_requests.reset()
    response = staff_client.get(URL)
    assert response.status_code == 200
    assert ddb_requests.ops == ["Query"]
    html = response.content.decode()
    assert 'data-testid="event-evt_morning"' in html and 'data-testid="event-evt_later"' in html
    assert "evt_old" not in html  # another day
    assert html.index("evt_later") < html.index("evt_morning")  # newest first
    row = re.search(r'data-testid="event-evt_morning".*?</tr>', html, re.S).group(0)
    assert "customer.created" in row and ">ignored<" in row and "not an event rpay acts on" in row
    # the other day, by ?day=, and its neighbours linked
    html = staff_client.get(URL, {"day": YESTERDAY.date().isoformat()}).content.decode()
    assert "evt_old" in html and "evt_morning" not in html
    assert f'?day={(YESTERDAY - timedelta(days=1)).date().isoformat()}' in html
    assert f'?day={TODAY.date().isoformat()}' in html


def test_a_failed_event_shows_failed_then_done(staff_client, moto_table, monkeypatch) -> None:
    from billing.actions import webhooks

    def broken(obj, today):
        raise RuntimeError("DynamoDB is down")

    monkeypatch.setitem(webhooks.HANDLERS, "charge.refunded", broken)
    created = at(TODAY, 0, 5)
    assert deliver(staff_client, event("charge.refunded", {"id": "ch_1"}, "evt_f", created=created)).status_code == 500
    row = re.search(r'data-testid="event-evt_f".*?</tr>', staff_client.get(URL).content.decode(), re.S).group(0)
    assert ">failed<" in row and "RuntimeError: DynamoDB is down" in row
    monkeypatch.setitem(webhooks.HANDLERS, "charge.refunded", lambda obj, today: ("done", "fine now"))
    assert deliver(staff_client, event("charge.refunded", {"id": "ch_1"}, "evt_f", created=created)).status_code == 200
    row = re.search(r'data-testid="event-evt_f".*?</tr>', staff_client.get(URL).content.decode(), re.S).group(0)
    assert ">done<" in row and "fine now" in row and '<td class="num">2</td>' in row
    assert stored("evt_f", created).Attempts == 2


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "2026-02-30", "0001-01-01", "x" * 5000, "2026-1-1#"])
def test_a_bad_day_is_a_form_error_and_reads_nothing(staff_client, moto_table, ddb_requests, bad) -> None:
    ddb_requests.reset()
    response = staff_client.get(URL, {"day": bad})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="day-error"' in html and 'data-testid="webhook-events"' not in html
    assert ddb_requests.ops == []


def test_an_empty_day_says_so(staff_client, moto_table) -> None:
    html = staff_client.get(URL, {"day": "2026-01-01"}).content.decode()
    assert "No events that day." in html


def test_a_customer_cannot_open_it(client, moto_table) -> None:
    client.force_login(make_user("ann@example.com"))
    response = client.get(URL)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_the_staff_nav_links_it(staff_client, moto_table) -> None:
    assert f'href="{URL}"' in staff_client.get(reverse("admin:staff_runs")).content.decode()


def test_the_query_reads_at_most_a_page(moto_table) -> None:
    for n in range(5):
        access.claim_webhook(f"evt_{n}", "customer.created", datetime(2026, 3, 1, 10, n, tzinfo=UTC))
    events = access.get_webhook_events(datetime(2026, 3, 1).date(), limit=3)
    assert [e.EventId for e in events] == ["evt_4", "evt_3", "evt_2"]
