"""The batches' dead-man's switch: healthchecks.io's ping protocol. With ``BATCH_PING_URL``
(``{kind}`` in it is replaced by the batch's kind), a run pings ``<url>/start`` when it
starts, ``<url>`` when it succeeds and ``<url>/fail`` when it fails, with its exit status
and last line in the body; the monitoring service raises the alarm when a success does
not arrive in time (the run did not start, hung or failed). A ping that cannot be
delivered never changes what the batch does: one warning line on stderr.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable

PING_TIMEOUT_SECONDS = 10


def ping_url(template: str, kind: str, event: str = "") -> str:
    base = template.replace("{kind}", kind).rstrip("/")
    return f"{base}/{event}" if event else base


def ping(template: str, kind: str, event: str = "", body: str = "", *,
         warn: Callable[[str], None] = lambda line: None) -> bool:
    """POST one ping (``event``: "start", "fail" or "" for success); False, and one
    warning line, when it could not be delivered."""
    if not template:
        return True
    url = ping_url(template, kind, event)
    request = urllib.request.Request(url, data=body.encode()[:10_000], method="POST",
                                     headers={"User-Agent": "rpay-batch"})
    try:
        with urllib.request.urlopen(request, timeout=PING_TIMEOUT_SECONDS) as response:  # noqa: S310 - the operator's URL
            response.read(1024)
        return True
    except (urllib.error.URLError, OSError, ValueError) as error:
        warn(f"ping {event or 'success'} to the batch monitor failed: {error}")
        return False
