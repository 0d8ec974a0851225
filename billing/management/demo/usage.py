"""The demo's metered usage (docs/USAGE.md): a meter ``api_calls`` (sum) and a month of the
demo customer's API calls, three events a day. Safe to run twice: the meter is made once and
each event's identifier is fixed, so a second run finds them all duplicates."""

from __future__ import annotations

import contextlib
import random
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.contrib.auth import get_user_model

from billing import access
from billing.access import usage as metered
from billing.actions import meters as meter_actions
from billing.exceptions import AlreadyExists
from billing.management.commands.seed_demo import CUSTOMER_EMAIL, SEED_ACTOR
from billing.management.demo._customers import usage_moment
from billing.models import MeterAggregation

METER = "api_calls"
DAYS = 30
HOURS = (3, 11, 19)  # an event every eight hours: the calls counted since the last


def seed(today: date) -> list[str]:
    with contextlib.suppress(AlreadyExists):  # made by an earlier run
        meter_actions.add_meter(METER, "API calls", MeterAggregation.SUM, actor=SEED_ACTOR)
    meter = metered.get_meter(METER)
    user = get_user_model().objects.filter(email__iexact=CUSTOMER_EMAIL).order_by("pk").first()
    account_id = access.get_account_id_for_user(user.pk) if user is not None else None
    if meter is None or account_id is None:
        return [f"usage: no demo customer {CUSTOMER_EMAIL}: no usage seeded"]
    now = datetime.combine(today, time(23, 59), tzinfo=UTC)
    rng = random.Random(today.toordinal())  # the same calls on a second run of the same day
    accepted = 0
    for back in range(DAYS - 1, -1, -1):
        day = today - timedelta(days=back)
        for hour in HOURS:
            seconds, key = usage_moment(day, hour)
            event = metered.UsageEvent(account_id=account_id, identifier=f"demo-{day.isoformat()}-{hour:02d}",
                                       value=Decimal(rng.randint(40, 400)), timestamp=seconds, day=key)
            accepted += metered.record_event(meter, event, now=now) == metered.ACCEPTED
    start = today.replace(day=1)
    so_far = metered.usage_of(meter, account_id, start, today + timedelta(days=1))
    return [f"usage: meter {METER} (sum); {accepted} events of {DAYS} days for {CUSTOMER_EMAIL}, "
            f"{so_far} calls since {start.isoformat()}"]
