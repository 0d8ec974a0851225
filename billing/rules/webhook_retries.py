"""When an outbound webhook's delivery is tried again after a failed attempt (docs:
docs/API.md, "Retries, and disabling after 3 days"): Svix's schedule, for three days.

After the n-th failed attempt the next comes ``RETRY_DELAYS[n-1]`` later (the last delay
repeats), stretched or shrunk by up to ``JITTER`` at random so that the deliveries of an
endpoint that came back do not all arrive at once. No attempt is made more than
``RETRY_WINDOW`` after the first: the last one is made at that moment exactly, and when it
fails too the delivery is abandoned (and its endpoint disabled: it has failed for three days).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from billing.models import MerchantEventType

RETRY_DELAYS = (
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),  # and every 10 hours after, to the end of the window
)
RETRY_WINDOW = timedelta(days=3)
JITTER = 0.1


def next_attempt_at(*, first_attempt: datetime, attempts: int, failed_at: datetime, rand: float) -> datetime | None:
    """When to try again after ``attempts`` attempts, the last failed at ``failed_at``
    (``rand`` in [0, 1): the jitter's draw); None when the window is over: abandon."""
    if attempts < 1:
        raise ValueError("at least one attempt has been made")
    delay = RETRY_DELAYS[min(attempts, len(RETRY_DELAYS)) - 1]
    jittered = delay * (1 - JITTER + 2 * JITTER * min(max(rand, 0.0), 1.0))
    deadline = first_attempt + RETRY_WINDOW
    if failed_at >= deadline:
        return None
    return min(failed_at + jittered, deadline)


def schedule_offsets(attempts: int) -> list[timedelta]:
    """The nominal times of the first ``attempts`` attempts after the first (no jitter),
    as offsets from it, capped at the window: the docs' table, and a test's expectation."""
    offsets, at = [timedelta(0)], timedelta(0)
    for n in range(1, attempts):
        at = min(at + RETRY_DELAYS[min(n, len(RETRY_DELAYS)) - 1], RETRY_WINDOW)
        offsets.append(at)
        if at == RETRY_WINDOW:
            break
    return offsets


# The event types an endpoint may ask for (docs/API.md, "Outbound webhooks"); an endpoint
# that names none gets every type, those to come included.
WEBHOOK_EVENT_TYPES = tuple(str(t) for t in MerchantEventType)
TEST_EVENT_TYPE = "webhook.test"  # the staff page's "Send test event": never in the stream
