"""The payment processor's webhook events: each is claimed once (a conditional put of its
``WEBHOOK#<event id>`` item) and marked with how it ended."""

from __future__ import annotations

from datetime import timedelta

from billing.access._common import iso_now, refused_as, utc_now
from billing.exceptions import ConditionFailed
from billing.models import WebhookEvent

WEBHOOK_RETENTION_DAYS = 30  # Stripe retries a delivery for up to three days


def claim_webhook(event_id: str, event_type: str) -> tuple[WebhookEvent, bool]:
    """The event's item, and whether this call made it (False: seen before, its ``Status``
    says how that ended). One PutItem, plus a GetItem for an event seen before."""
    item = WebhookEvent(WebhookEvent.pk(event_id=event_id), WebhookEvent.sk(event_id=event_id), Type=event_type,
                        Status="received", ReceivedAt=iso_now(),
                        TTL=utc_now() + timedelta(days=WEBHOOK_RETENTION_DAYS))
    try:
        with refused_as(ConditionFailed, item.PK):
            item.save(condition=WebhookEvent.PK.does_not_exist())
    except ConditionFailed:
        return WebhookEvent.get(item.PK, item.SK, consistent_read=True), False
    return item, True


def finish_webhook(item: WebhookEvent, status: str, outcome: str) -> None:
    item.update(actions=[WebhookEvent.Status.set(status), WebhookEvent.Outcome.set(outcome[:500])])
