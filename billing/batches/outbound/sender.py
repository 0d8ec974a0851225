"""The webhook sender: one pass over every enabled endpoint, or passes in a loop.

For each endpoint, in turn (endpoints in parallel, each on one thread):

1. **Fan out**: the merchant events after its cursor (``access.events_after``), only
   those older than ``WEBHOOKS_SETTLE_SECONDS`` (an event's id is its time, taken before
   its transaction commits: a younger one may still be followed by an older id committing
   late, and the cursor must never pass an event not yet visible), become its deliveries
   (put if absent), and the cursor moves past them (conditional on where it was read).
2. **Deliver**, oldest first: the first unfinished delivery is the head. It is claimed (one
   conditional UpdateItem: counts the attempt and takes a lease), posted, and its outcome
   recorded. A success moves on to the next; a failure schedules the head's retry
   (billing/rules/webhook_retries.py) and the endpoint waits for it: a later event is never
   delivered before an earlier one (head-of-line, per endpoint). A head leased by another
   sender means that sender has the endpoint: this one leaves it.

A sender killed mid-attempt (SIGKILL, a lost host) keeps its lease: after
``lease`` the next sender claims the delivery again and sends it again (the receiver
sees the same ``webhook-id`` twice: at least once, never lost).
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings

from billing import access
from billing.batches.outbound.alerts import tell_staff_endpoint_disabled
from billing.batches.outbound.signing import event_body, signed_headers
from billing.models import DeliveryStatus, MerchantEvent, WebhookDelivery, WebhookEndpoint
from billing.rules.webhook_retries import next_attempt_at
from core.net import Answer, UnsafeURL, post

log = logging.getLogger("billing.webhooks")

FAN_OUT_PAGE = 100
FAN_OUT_PAGES_PER_PASS = 20  # then deliver: a backlog of events is fanned out over several passes
QUEUE_PAGE = 25
RESPONSE_BYTES = 1024

# What the pass counts (the --json summary's keys).
PASS_COUNTS = ("endpoints", "queued", "succeeded", "failed", "abandoned", "busy", "lost_lease", "disabled")


@dataclass
class SenderConfig:
    timeout: float
    lease: timedelta
    settle: timedelta
    allow_private: bool
    workers: int = 4

    @classmethod
    def from_settings(cls, workers: int = 4) -> SenderConfig:
        timeout = float(settings.WEBHOOKS_TIMEOUT_SECONDS)
        return cls(timeout=timeout, lease=timedelta(seconds=timeout + settings.WEBHOOKS_LEASE_MARGIN_SECONDS),
                   settle=timedelta(seconds=settings.WEBHOOKS_SETTLE_SECONDS),
                   allow_private=settings.WEBHOOKS_ALLOW_PRIVATE_URLS, workers=workers)


@dataclass
class PassSummary:
    counts: Counter = field(default_factory=lambda: Counter({k: 0 for k in PASS_COUNTS}))
    elapsed: float = 0.0
    interrupted: bool = False

    def as_dict(self) -> dict:
        return {"kind": "webhooks", **dict(self.counts), "elapsed": round(self.elapsed, 3),
                "outcome": "interrupted" if self.interrupted else "completed"}

    def line(self) -> str:
        c = self.counts
        return (f"webhooks: {c['endpoints']} endpoint(s), {c['queued']} queued, {c['succeeded']} delivered, "
                f"{c['failed']} failed (to retry), {c['abandoned']} abandoned, {c['disabled']} endpoint(s) disabled "
                f"in {self.elapsed:.1f}s")


def sender_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{random.randrange(16**6):06x}"


class Sender:
    """One sender process (or thread): its id owns the leases it takes."""

    def __init__(self, config: SenderConfig | None = None, *, owner: str | None = None,
                 on_attempt: Callable[[WebhookDelivery, str], None] | None = None) -> None:
        self.config = config or SenderConfig.from_settings()
        self.owner = owner or sender_id()
        self.on_attempt = on_attempt
        self._lock = threading.Lock()

    # --- a pass ---------------------------------------------------------------------------

    def run_pass(self, stop: threading.Event | None = None) -> PassSummary:
        stop = stop or threading.Event()
        started = time.monotonic()
        summary = PassSummary()
        endpoints = [e for e in access.list_endpoints() if e.enabled]
        summary.counts["endpoints"] = len(endpoints)
        if self.config.workers <= 1 or len(endpoints) <= 1:
            for endpoint in endpoints:
                if stop.is_set():
                    break
                self.serve_endpoint(endpoint, summary, stop)
        else:
            with ThreadPoolExecutor(max_workers=self.config.workers, thread_name_prefix="webhooks") as pool:
                for future in [pool.submit(self.serve_endpoint, e, summary, stop) for e in endpoints]:
                    future.result()
        summary.interrupted = stop.is_set()
        summary.elapsed = time.monotonic() - started
        return summary

    def run_forever(self, stop: threading.Event, *, sleep: float = 1.0,
                    on_pass: Callable[[PassSummary], None] | None = None) -> PassSummary:
        """Passes until ``stop`` (SIGTERM): the last one finishes the attempts in hand."""
        total = PassSummary()
        started = time.monotonic()
        while not stop.is_set():
            try:
                summary = self.run_pass(stop)
            except Exception as error:  # noqa: BLE001 - an outage: log, wait, try again
                log.warning("webhook pass failed: %s: %s", type(error).__name__, error)
                stop.wait(min(30.0, sleep * 10))
                continue
            total.counts.update({k: v for k, v in summary.counts.items() if k != "endpoints"})
            total.counts["endpoints"] = summary.counts["endpoints"]
            if on_pass:
                on_pass(summary)
            busy = summary.counts["succeeded"] + summary.counts["queued"]
            if not busy:
                stop.wait(sleep)
        total.interrupted = True
        total.elapsed = time.monotonic() - started
        return total

    def _count(self, summary: PassSummary, key: str, n: int = 1) -> None:
        with self._lock:
            summary.counts[key] += n

    # --- one endpoint -------------------------------------------------------------------

    def serve_endpoint(self, endpoint: WebhookEndpoint, summary: PassSummary, stop: threading.Event) -> None:
        try:
            self._count(summary, "queued", self.fan_out(endpoint))
            self.deliver(endpoint, summary, stop)
        except Exception:
            log.exception("webhook endpoint %s: pass failed", endpoint.EndpointId)
            raise

    def fan_out(self, endpoint: WebhookEndpoint) -> int:
        """Turn the settled events after the endpoint's cursor into its deliveries."""
        until = access.utc_now() - self.config.settle
        queued = 0
        for _ in range(FAN_OUT_PAGES_PER_PASS):
            events, _ = access.events_after(endpoint.Cursor, limit=FAN_OUT_PAGE, until=until)
            if not events:
                break
            for event in events:
                if endpoint.wants(event.Type):
                    queued += access.queue_delivery(endpoint.EndpointId, event_id=event.EventId,
                                                    event_type=event.Type, payload=body_of(event))
            last = events[-1].EventId
            if not access.advance_cursor(endpoint, last):
                # Another sender moved it: our puts were the same as its (put if absent).
                fresh = access.get_endpoint(endpoint.EndpointId)
                if fresh is not None:
                    endpoint.Cursor = fresh.Cursor
                break
            if len(events) < FAN_OUT_PAGE:
                break
        return queued

    def deliver(self, endpoint: WebhookEndpoint, summary: PassSummary, stop: threading.Event) -> None:
        """The endpoint's deliveries, oldest first, until its queue is empty, its head
        must wait, or another sender has it."""
        while not stop.is_set():
            page = access.queue_page(endpoint, limit=QUEUE_PAGE)
            if not page:
                return
            done_through, go_on = None, True
            for delivery in page:
                if delivery.finished:
                    done_through = delivery.SK
                    continue
                outcome = self.try_head(endpoint, delivery, summary)
                if outcome == DeliveryStatus.SUCCEEDED:
                    done_through = delivery.SK
                    if stop.is_set():
                        go_on = False
                        break
                    continue
                go_on = False
                break
            if done_through is not None:
                access.advance_done_through(endpoint, done_through)
            if not go_on or len(page) < QUEUE_PAGE or not endpoint.enabled:
                return

    def try_head(self, endpoint: WebhookEndpoint, delivery: WebhookDelivery, summary: PassSummary) -> str:
        """Attempt the head delivery if it is due and free: its outcome, or "wait"/"busy"."""
        now = access.utc_now()
        stamp = access.iso_time(now)
        if delivery.LeaseUntil and delivery.LeaseUntil >= stamp:
            self._count(summary, "busy")
            return "busy"
        if delivery.NextAttemptAt and delivery.NextAttemptAt > stamp:
            return "wait"
        if not access.claim_delivery(delivery, owner=self.owner, now=now, lease=self.config.lease):
            self._count(summary, "busy")
            return "busy"
        return self.attempt(endpoint, delivery, summary)

    def attempt(self, endpoint: WebhookEndpoint, delivery: WebhookDelivery, summary: PassSummary) -> str:
        """Post the claimed delivery, record how it went; the outcome."""
        now = access.utc_now()
        headers = signed_headers(delivery.Payload, message_id=delivery.EventId, at=now,
                                 signing_secrets=signing_secrets(endpoint, now))
        if self.on_attempt:
            self.on_attempt(delivery, self.owner)
        try:
            answer = post(endpoint.Url, delivery.Payload.encode(), headers, timeout=self.config.timeout,
                          allow_private=self.config.allow_private, max_body=RESPONSE_BYTES)
        except UnsafeURL as refused:
            answer = Answer(None, b"", f"refused by the SSRF guard: {refused}", 0)
        response = answer.body.decode("utf-8", "replace") if answer.status is not None else (answer.error or "")
        if answer.ok:
            recorded = access.record_attempt(delivery, owner=self.owner, status=DeliveryStatus.SUCCEEDED,
                                             code=answer.status, response=response,
                                             duration_ms=answer.duration_ms, next_attempt=None)
            if endpoint.FailingSince:
                access.clear_endpoint_failing(endpoint.EndpointId)
                endpoint.FailingSince = None
            self._count(summary, "succeeded" if recorded else "lost_lease")
            return DeliveryStatus.SUCCEEDED
        failed_at = access.utc_now()
        first = datetime.fromisoformat(delivery.FirstAttemptAt) if delivery.FirstAttemptAt else now
        retry = next_attempt_at(first_attempt=first, attempts=int(delivery.Attempts), failed_at=failed_at,
                                rand=random.random())
        status = DeliveryStatus.FAILED if retry is not None else DeliveryStatus.ABANDONED
        recorded = access.record_attempt(delivery, owner=self.owner, status=status, code=answer.status,
                                         response=response, duration_ms=answer.duration_ms, next_attempt=retry)
        if not recorded:
            self._count(summary, "lost_lease")
            return "lost"
        self._count(summary, str(status))
        if not endpoint.FailingSince:
            access.mark_endpoint_failing(endpoint.EndpointId, first)
            endpoint.FailingSince = access.iso_time(first)
        if status == DeliveryStatus.ABANDONED and access.disable_failing_endpoint(endpoint.EndpointId):
            endpoint.Status = "disabled"
            self._count(summary, "disabled")
            log.warning("webhook endpoint %s disabled after %s of failures", endpoint.EndpointId, failed_at - first)
            tell_staff_endpoint_disabled(endpoint, first_failure=endpoint.FailingSince or "",
                                         last_error=f"{answer.status or ''} {response}".strip()[:300])
        return str(status)


def signing_secrets(endpoint: WebhookEndpoint, now: datetime) -> list[str]:
    """The secrets that sign now: the endpoint's, and its previous one until its time is up."""
    found = [endpoint.Secret]
    if endpoint.PreviousSecret and endpoint.PreviousSecretUntil and endpoint.PreviousSecretUntil > access.iso_time(now):
        found.append(endpoint.PreviousSecret)
    return found


def body_of(event: MerchantEvent) -> str:
    return event_body(event_id=event.EventId, event_type=event.Type, created_at=event.CreatedAt, data=event.Data)
