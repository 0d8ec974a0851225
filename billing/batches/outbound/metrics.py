"""Outbound webhooks on ``/metrics`` (core/ops/metrics.py), read at scrape time from the
table, so the web process tells what the separate sender did (and a dead sender shows as a
growing age): one Query of the endpoints, and per enabled endpoint one Query of its queue
(and, when its queue is empty, one of the events after its cursor); cached for
``CACHE_SECONDS``. Nothing here reaches a merchant's endpoint, and ``/readyz`` reads none
of it: a merchant's receiver being down never makes rpay unready."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from billing import access
from billing.models import WebhookDelivery
from core.ops.metrics import CachedCollector

CACHE_SECONDS = 15.0


@dataclass
class WebhookFacts:
    attempts: dict[str, int] = field(default_factory=dict)  # outcome -> attempts, over every endpoint
    endpoints: dict[str, int] = field(default_factory=dict)  # status -> endpoints
    oldest_age: float = 0.0  # seconds: the oldest event an enabled endpoint has not had yet


def event_made_at(event_id: str) -> datetime | None:
    """The time in a stream event's id (``evt_<YYYYMMDDTHHMMSSffffff>Z_…``); None for another id."""
    try:
        return datetime.strptime(event_id[4:26], "%Y%m%dT%H%M%S%f").replace(tzinfo=UTC)
    except ValueError:
        return None


def _waiting_since(delivery: WebhookDelivery) -> datetime:
    return event_made_at(delivery.EventId) or datetime.fromisoformat(delivery.CreatedAt)


def read_facts() -> WebhookFacts:
    facts = WebhookFacts(attempts={"succeeded": 0, "failed": 0, "abandoned": 0})
    now = access.utc_now()
    oldest: datetime | None = None
    for endpoint in access.list_endpoints():
        facts.endpoints[endpoint.Status] = facts.endpoints.get(endpoint.Status, 0) + 1
        facts.attempts["succeeded"] += int(endpoint.SucceededCount or 0)
        facts.attempts["failed"] += int(endpoint.FailedCount or 0)
        facts.attempts["abandoned"] += int(endpoint.AbandonedCount or 0)
        if not endpoint.enabled:
            continue  # a disabled endpoint's events wait on purpose
        head = access.oldest_unfinished(endpoint)
        since = _waiting_since(head) if head is not None else None
        if since is None:
            events, _ = access.events_after(endpoint.Cursor, limit=1)
            since = event_made_at(events[0].EventId) if events else None
        if since is not None and (oldest is None or since < oldest):
            oldest = since
    facts.oldest_age = max(0.0, (now - oldest).total_seconds()) if oldest else 0.0
    return facts


class WebhookCollector(CachedCollector[WebhookFacts]):
    def __init__(self) -> None:
        super().__init__(read_facts, what="webhook metrics", seconds=CACHE_SECONDS,
                         up_name="rpay_webhook_metrics_up", up_help="1 when the webhook endpoints could be read")

    def collect(self) -> Iterator[Metric]:
        facts = self.facts()
        yield self.up(facts)
        if facts is None:
            return
        attempts = CounterMetricFamily("rpay_webhook_deliveries", "Webhook delivery attempts, by outcome",
                                       labels=["outcome"])
        for outcome, count in sorted(facts.attempts.items()):
            attempts.add_metric([outcome], count)
        yield attempts
        endpoints = GaugeMetricFamily("rpay_webhook_endpoints", "Webhook endpoints, by status", labels=["status"])
        for status in ("enabled", "disabled"):
            endpoints.add_metric([status], facts.endpoints.get(status, 0))
        yield endpoints
        age = GaugeMetricFamily("rpay_webhook_oldest_undelivered_age_seconds",
                                "Age of the oldest event an enabled endpoint has not had yet (0: none waiting)")
        age.add_metric([], facts.oldest_age)
        yield age


WEBHOOKS = WebhookCollector()
