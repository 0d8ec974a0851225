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
from billing.models import DeliveryStatus, MerchantEvent, WebhookDelivery, WebhookEndpoint
from billing.operations.webhook_signing import event_body, signed_headers
from billing.rules.webhook_retries import next_attempt_at
from core.net import Answer, Session, UnsafeURL

log = logging.getLogger("billing.webhooks")

FAN_OUT_PAGE = 100
FAN_OUT_PAGES_PER_PASS = 20  # then deliver: a backlog of events is fanned out over several passes
QUEUE_PAGE = 50
RUN_SIZE = 50  # deliveries claimed together (the head and the due ones right after it)
RESPONSE_BYTES = 1024

# What the pass counts (the --json summary's keys).
PASS_COUNTS = ("endpoints", "queued", "succeeded", "failed", "abandoned", "busy", "lost_lease", "disabled", "errors")


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
        errors = f", {c['errors']} endpoint(s) not served (DynamoDB errors)" if c["errors"] else ""
        return (f"webhooks: {c['endpoints']} endpoint(s), {c['queued']} queued, {c['succeeded']} delivered, "
                f"{c['failed']} failed (to retry), {c['abandoned']} abandoned, {c['disabled']} endpoint(s) disabled"
                f"{errors} in {self.elapsed:.1f}s")


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
        mine = PassSummary()  # this endpoint's share, added to its counts for /metrics
        try:
            self._count(summary, "queued", self.fan_out(endpoint))
            self.deliver(endpoint, mine, stop)
        except Exception:  # noqa: BLE001 - DynamoDB's trouble with one endpoint: the others go on
            log.exception("webhook endpoint %s: pass failed", endpoint.EndpointId)
            self._count(summary, "errors")
        finally:
            with self._lock:
                summary.counts.update({k: v for k, v in mine.counts.items() if k != "endpoints"})
            if mine.counts["succeeded"] or mine.counts["failed"] or mine.counts["abandoned"]:
                access.count_attempts(endpoint.EndpointId, succeeded=mine.counts["succeeded"],
                                      failed=mine.counts["failed"], abandoned=mine.counts["abandoned"])

    def fan_out(self, endpoint: WebhookEndpoint) -> int:
        """Turn the settled events after the endpoint's cursor into its deliveries."""
        until = access.utc_now() - self.config.settle
        queued = 0
        for _ in range(FAN_OUT_PAGES_PER_PASS):
            events, _ = access.events_after(endpoint.Cursor, limit=FAN_OUT_PAGE, until=until)
            if not events:
                break
            queued += access.queue_deliveries(endpoint.EndpointId, [
                (event.EventId, event.Type, body_of(event)) for event in events if endpoint.wants(event.Type)])
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
        with Session(timeout=self.config.timeout, allow_private=self.config.allow_private,
                     max_body=RESPONSE_BYTES) as session:
            self._deliver(endpoint, summary, stop, session)

    def _deliver(self, endpoint: WebhookEndpoint, summary: PassSummary, stop: threading.Event,
                 session: Session) -> None:
        while not stop.is_set():
            page = access.queue_page(endpoint, limit=QUEUE_PAGE)
            if not page:
                return
            first = next((n for n, d in enumerate(page) if not d.finished), len(page))
            done_through = page[first - 1].SK if first else None
            go_on = True
            if first < len(page):
                go_on, sent_through = self.send_run(endpoint, page[first:], summary, stop, session)
                done_through = sent_through or done_through
            if done_through is not None and not access.advance_done_through(endpoint, done_through):
                return  # another sender moved it, or something was queued meanwhile: the next pass reads again
            # A short page handled to its end was the whole queue; a run cut short (its
            # lease's time ran out) goes on with a fresh read.
            if not go_on or not endpoint.enabled or (len(page) < QUEUE_PAGE and done_through == page[-1].SK):
                return

    def send_run(self, endpoint: WebhookEndpoint, queue: list[WebhookDelivery], summary: PassSummary,
                 stop: threading.Event, session: Session) -> tuple[bool, str | None]:
        """Send the head and the due deliveries right after it, in order, each only after the
        one before succeeded. They are claimed together (one transaction: a quiet endpoint's
        deliveries cost two requests per run, not per delivery) and none is posted unless
        its POST ends well inside the lease. (go on with the next page, the key up to which
        every delivery succeeded and was recorded)."""
        now = access.utc_now()
        stamp = access.iso_time(now)

        def free(d: WebhookDelivery) -> bool:
            return not (d.LeaseUntil and d.LeaseUntil >= stamp)

        def due(d: WebhookDelivery) -> bool:
            return not (d.NextAttemptAt and d.NextAttemptAt > stamp)

        head = queue[0]
        if not free(head):
            self._count(summary, "busy")
            return False, None
        if not due(head):
            return False, None
        run = [head]
        for delivery in queue[1:RUN_SIZE]:
            if delivery.finished or not free(delivery) or not due(delivery):
                break
            run.append(delivery)
        if not access.claim_deliveries(run, owner=self.owner, now=now, lease=self.config.lease):
            run = [head]
            if not access.claim_delivery(head, owner=self.owner, now=now, lease=self.config.lease):
                self._count(summary, "busy")
                return False, None
        # A POST may take the whole timeout: none starts unless it ends a second before the lease.
        last_start = now + self.config.lease - timedelta(seconds=self.config.timeout + 1)
        successes: list[tuple[WebhookDelivery, int, str, int]] = []
        go_on = True
        for n, delivery in enumerate(run):
            if n and (stop.is_set() or access.utc_now() >= last_start):
                # Given back unsent (uncounted): this loop claims them again with a fresh lease.
                access.release_claims(run[n:], owner=self.owner)
                go_on = not stop.is_set()
                break
            answer, response = self.post(endpoint, delivery, session)
            if answer.ok:
                successes.append((delivery, int(answer.status), response, answer.duration_ms))
                continue
            self.record_failure(endpoint, delivery, answer, response, summary)
            access.release_claims(run[n + 1:], owner=self.owner)
            go_on = False
            break
        if not successes:
            return go_on, None
        recorded = access.record_successes(successes, owner=self.owner)
        self._count(summary, "succeeded", recorded)
        self._count(summary, "lost_lease", len(successes) - recorded)
        if endpoint.FailingSince:
            access.clear_endpoint_failing(endpoint.EndpointId)
            endpoint.FailingSince = None
        # Only a run recorded whole moves DoneThrough (a lost lease: another sender has it).
        return go_on, (successes[-1][0].SK if recorded == len(successes) else None)

    def post(self, endpoint: WebhookEndpoint, delivery: WebhookDelivery, session: Session) -> tuple[Answer, str]:
        """POST one claimed delivery, signed now: the answer, and what to log of it."""
        now = access.utc_now()
        headers = signed_headers(delivery.Payload, message_id=delivery.EventId, at=now,
                                 signing_secrets=signing_secrets(endpoint, now))
        if self.on_attempt:
            self.on_attempt(delivery, self.owner)
        try:
            answer = session.post(endpoint.Url, delivery.Payload.encode(), headers)
        except UnsafeURL as refused:
            answer = Answer(None, b"", f"refused by the SSRF guard: {refused}", 0)
        response = answer.body.decode("utf-8", "replace") if answer.status is not None else (answer.error or "")
        return answer, response

    def record_failure(self, endpoint: WebhookEndpoint, delivery: WebhookDelivery, answer: Answer, response: str,
                       summary: PassSummary) -> str:
        """Schedule the failed delivery's retry, or abandon it (and disable its endpoint)."""
        failed_at = access.utc_now()
        first = datetime.fromisoformat(delivery.FirstAttemptAt) if delivery.FirstAttemptAt else failed_at
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
