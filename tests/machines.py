"""What the hypothesis state machines over the billing (test_money_model.py,
test_lifecycle_model.py) share: each example's own table and gateway ledger, a clock,
and the model's record of one subscription.

The clock is frozen at noon UTC of one day and moved a day at a time by the machine's
rules (time-machine, ``tick=False``, so every ``today()`` in a step reads the same day).
Noon, not midnight: no time zone within twelve hours of UTC turns it into another date.
"""

from __future__ import annotations

import itertools
import os
from datetime import UTC, date, datetime

import time_machine
from django.conf import settings

from billing import access
from billing.models import Subscription, configure
from core.dynamo.table import ensure_table

_tables = itertools.count()


def own_table(prefix: str, ledger_dir: str) -> str:
    """Point the models at a new table (on moto) and the gateway at a new ledger in
    ``ledger_dir``: hypothesis runs many examples in one test, each must start empty."""
    name = f"{prefix}_{os.getpid()}_{next(_tables)}"
    configure(table_name=name, region="us-east-1", host=None, max_retry_attempts=1)
    ensure_table()
    settings.PAYMENT_GATEWAY_LEDGER = os.path.join(ledger_dir, f"{name}.sqlite3")
    return name


class TrackedSubscription:
    """What a model knows of one subscription, independently of the table: its keys, the
    day it was made; ``read`` gets the stored item as it is now."""

    def __init__(self, sub: Subscription, made: date) -> None:
        self.account_id, self.sub_id, self.sku, self.made = sub.account_id, sub.sub_id, sub.SKU, made

    def read(self) -> Subscription:
        sub = access.get_subscription(self.account_id, self.sub_id, self.sku)
        assert sub is not None
        return sub


def noon(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 12, tzinfo=UTC)


class DayClock:
    """Started on ``day`` when made; ``move_to`` another day; ``stop`` in teardown."""

    def __init__(self, day: date) -> None:
        self.day = day
        self._travel = time_machine.travel(noon(day), tick=False)
        self._travel.start()

    def move_to(self, day: date) -> None:
        self._travel.stop()
        self.day = day
        self._travel = time_machine.travel(noon(day), tick=False)
        self._travel.start()

    def stop(self) -> None:
        self._travel.stop()


def machine_profile(name: str, *, examples: int, steps: int, long_examples: int, long_steps: int) -> str:
    """Register a machine's two hypothesis profiles and return the one to run: ``<name>-long``
    (shrinking, many examples) under ``HYPOTHESIS_PROFILE=long``, else ``<name>-bounded``
    (``make test``: a few examples, no shrinking: a failure is reported as found)."""
    from hypothesis import HealthCheck, Phase, settings

    settings.register_profile(f"{name}-bounded", max_examples=examples, stateful_step_count=steps, deadline=None,
                              suppress_health_check=list(HealthCheck),
                              phases=(Phase.explicit, Phase.reuse, Phase.generate))
    settings.register_profile(f"{name}-long", max_examples=long_examples, stateful_step_count=long_steps,
                              deadline=None, suppress_health_check=list(HealthCheck))
    return f"{name}-long" if os.environ.get("HYPOTHESIS_PROFILE") == "long" else f"{name}-bounded"
