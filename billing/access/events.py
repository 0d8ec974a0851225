"""The audit trail: who changed what on an account, with before/after snapshots."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from billing.models import AuditEvent, Subscription

from ._common import absent_if_invalid, iso_now, new_id
from .subscriptions import subscription_snapshot


def record_event(
    account_id: str,
    *,
    actor: str,
    action: str,
    subject: str | None = None,
    before: dict | None = None,
    after: dict | None = None,
    note: str | None = None,
) -> AuditEvent:
    at = iso_now()
    event = AuditEvent(
        AuditEvent.pk(account_id=account_id),
        AuditEvent.sk(at=at, event_id=new_id()),
        At=at, Actor=actor, Action=action, Subject=subject, Before=before, After=after, Note=note,
    )
    event.save()
    return event


@contextmanager
def audited_change(sub: Subscription, *, actor: str, action: str) -> Iterator[None]:
    """Record the change the block makes to ``sub`` as an event with before/after
    snapshots. Nothing is recorded when the block raises: the change did not happen."""
    before = subscription_snapshot(sub)
    yield
    record_event(sub.account_id, actor=actor, action=action, subject=sub.SK,
                 before=before, after=subscription_snapshot(sub))


@absent_if_invalid(list)
def get_events_by_account(account_id: str, *, limit: int = 100) -> list[AuditEvent]:
    return list(
        AuditEvent.query(
            AuditEvent.pk(account_id=account_id),
            AuditEvent.SK.startswith(AuditEvent.sk_template.prefix),
            scan_index_forward=False,
            limit=limit,
        )
    )
