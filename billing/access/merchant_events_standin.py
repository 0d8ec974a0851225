"""STAND-IN for the outbox branch's merchant events (replaced when it is merged): the
contract the webhook sender reads, ``new_merchant_event`` and ``events_after``."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from billing.access._common import utc_now
from billing.models import MerchantEvent

EVENT_RETENTION_DAYS = 30


def event_id_at(at: datetime) -> str:
    return f"evt_{at.astimezone(UTC).strftime('%Y%m%dT%H%M%S%f')}Z_{secrets.token_hex(4)}"


def day_of(event_id: str) -> str:
    stamp = event_id[4:12]
    return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}"


def new_merchant_event(type: str, *, account_id: str | None, object_type: str, object_id: str,
                       data: dict[str, Any], at: datetime | None = None) -> MerchantEvent:
    at = at or utc_now()
    event_id = event_id_at(at)
    return MerchantEvent(MerchantEvent.pk(day=at.astimezone(UTC).date().isoformat()), event_id,
                         EventId=event_id, Type=type, CreatedAt=at.astimezone(UTC).isoformat(timespec="microseconds"),
                         AccountId=account_id, ObjectType=object_type, ObjectId=object_id, Data=data,
                         TTL=at + timedelta(days=EVENT_RETENTION_DAYS))


def events_after(after: str | None, *, limit: int = 100,
                 until: datetime | None = None) -> tuple[list[MerchantEvent], str | None]:
    now = until or utc_now()
    first = (datetime.strptime(day_of(after), "%Y-%m-%d").replace(tzinfo=UTC) if after
             else now - timedelta(days=EVENT_RETENTION_DAYS))
    bound = event_id_at(now)[:-9] if until else None
    found: list[MerchantEvent] = []
    day = first.date()
    while day <= now.date() and len(found) < limit:
        condition = MerchantEvent.SK > after if after else None  # noqa: SIM300
        for event in MerchantEvent.query(MerchantEvent.pk(day=day.isoformat()), condition, limit=limit - len(found)):
            if bound and event.EventId >= bound:
                return found, (found[-1].EventId if found else after)
            found.append(event)
        day += timedelta(days=1)
    return found, (found[-1].EventId if found else after)
