"""The payment processor's webhook events: each is claimed once (a conditional put of its
``WEBHOOKS#<day>`` / ``<created>#<event id>`` item) and marked with how it ended; the
staff page lists a day's events with one Query.

The key is made of the event's own ``created`` time, which every redelivery carries
unchanged, so the conditional put still dedupes an event by its id; and one partition
per UTC day keeps a day's events together, sorted by time.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from billing.access._common import iso_now, refused_as, utc_now
from billing.exceptions import ConditionFailed
from billing.models import WebhookEvent

WEBHOOK_RETENTION_DAYS = 30  # Stripe retries a delivery for up to three days
WEBHOOK_PAGE_SIZE = 200  # the staff page's one Query reads at most this many events


def webhook_key(event_id: str, created: datetime) -> tuple[str, str]:
    """The (PK, SK) of an event created at ``created`` (any time zone: keyed in UTC)."""
    at = created.astimezone(UTC)
    return (WebhookEvent.pk(day=at.date().isoformat()),
            WebhookEvent.sk(created=at.isoformat(timespec="seconds"), event_id=event_id))


def claim_webhook(event_id: str, event_type: str, created: datetime) -> tuple[WebhookEvent, bool]:
    """The event's item, and whether this call made it (False: seen before, its ``Status``
    says how that ended). One PutItem, plus a GetItem for an event seen before."""
    pk, sk = webhook_key(event_id, created)
    item = WebhookEvent(pk, sk, EventId=event_id, Type=event_type, Status="received",
                        CreatedAt=created.astimezone(UTC).isoformat(timespec="seconds"), ReceivedAt=iso_now(),
                        Attempts=1, TTL=utc_now() + timedelta(days=WEBHOOK_RETENTION_DAYS))
    try:
        with refused_as(ConditionFailed, item.SK):
            item.save(condition=WebhookEvent.SK.does_not_exist())
    except ConditionFailed:
        return WebhookEvent.get(pk, sk, consistent_read=True), False
    return item, True


def finish_webhook(item: WebhookEvent, status: str, outcome: str, *, again: bool = False) -> None:
    """Mark how the event ended; ``again``: it was handled once more (a redelivery of one
    that failed, or was left ``received``), counted in ``Attempts`` in the same UpdateItem."""
    actions = [WebhookEvent.Status.set(status), WebhookEvent.Outcome.set(outcome[:500])]
    if again:
        actions.append(WebhookEvent.Attempts.add(1))
    item.update(actions=actions)


def get_webhook_events(day: date, *, limit: int = WEBHOOK_PAGE_SIZE) -> list[WebhookEvent]:
    """The events created on ``day`` (UTC), newest first, at most ``limit``: one Query."""
    return list(WebhookEvent.query(WebhookEvent.pk(day=day.isoformat()), scan_index_forward=False, limit=limit))


def event_time(created: object) -> datetime:
    """An event's ``created`` (epoch seconds) as a UTC time; now for an event without one
    (Stripe's always have it; then a redelivery on another day would not be deduplicated,
    which the handlers' idempotence makes safe)."""
    if isinstance(created, int | float) and not isinstance(created, bool) and 0 < created < 2**33:
        return datetime.fromtimestamp(int(created), tz=UTC)
    return utc_now().replace(microsecond=0)
