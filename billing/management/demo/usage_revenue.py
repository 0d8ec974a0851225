"""The demo's usage revenue (docs/ANALYTICS.md, "More figures"): two of the revenue
history's customers still paying in US dollars had metered usage billed with their last
three monthly payments, so the Revenue page shows usage revenue beside MRR. Written as the
figures read it: each paid charge's ``payment.succeeded`` event with its usage line's net
(``UsageNet``), at the time it was paid, as billing/access/receipts.py records it (the
history's subscriptions have no receipts: their past is events only). Runs after the
revenue history part (its name sorts after it). Safe to run twice: every event's key is
fixed by its subscription and day, so a second run puts the same items."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from django.contrib.auth import get_user_model

from billing import access
from billing.management.commands.seed_demo import SEED_ACTOR
from billing.management.demo.revenue_history import EMAIL, months_before
from billing.models import AuditAction, AuditEvent

# the history customers (``EMAIL``'s numbers) and each one's usage, net, of the last three
# months' payments (oldest first), in cents
USAGE = {1: (1240, 1785, 2310), 7: (420, 0, 655)}
PAID_AT = 13  # o'clock UTC: never the time of a history event (noon), so no key is shared


def _paid_days(today: date) -> list[date]:
    """The 10th of each of the last three months (the month under way's if it has come)."""
    return [min(months_before(today, n, 10), today - timedelta(days=1)) for n in (2, 1, 0)]


def seed(today: date) -> list[str]:
    users = get_user_model().objects
    written, total = 0, 0
    for number, amounts in USAGE.items():
        user = users.filter(email__iexact=EMAIL.format(number)).order_by("pk").first()
        account_id = access.get_account_id_for_user(user.pk) if user is not None else None
        subs = [s for s in access.get_subscriptions_by_account(account_id) if s.is_live and s.Currency == "USD"] \
            if account_id else []
        if not subs:
            continue
        sub = subs[0]
        for day, net in zip(_paid_days(today), amounts, strict=True):
            if not net:
                continue
            at = datetime(day.year, day.month, day.day, PAID_AT, tzinfo=UTC).isoformat()
            AuditEvent(AuditEvent.pk(account_id=sub.account_id),
                       AuditEvent.sk(at=at, event_id=f"usage-{sub.sub_id}-{day.isoformat()}"),
                       At=at, Actor=SEED_ACTOR, Action=str(AuditAction.PAYMENT_SUCCEEDED), Subject=sub.SK,
                       After={"Amount": sub.PaymentAmount + net, "Currency": "USD", "UsageNet": net}).save()
            written += 1
            total += net
    if not written:
        return ["usage revenue: no revenue history customer paying in USD: run the revenue history part first"]
    return [f"usage revenue: {written} paid charges with usage, {total / 100:.2f} USD net over three months"]
