"""Two changes of one subscription on one day: the revenue history takes the day's state
from the last one made, whether they were hours apart or within the same second (an API
client's cancel then "keep"); the account's events are read newest first, and ``At`` is to
the second, so both orders are checked here through the table."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine

from billing import access
from billing.analytics.mrr import mrr_at
from billing.analytics.rebuild import recompute
from billing.rules.lifecycle import CancelMode
from tests.billing.test_revenue_analytics import subscribe
from tests.builders import make_user

DAY = date(2027, 1, 20)


def customer(email: str):
    """An account with its user: the figures find accounts through the users' links."""
    return access.create_account(email, user_id=make_user(email).pk)


def at(hour: int, minute: int = 0, second: int = 0):
    return time_machine.travel(datetime(DAY.year, DAY.month, DAY.day, hour, minute, second, tzinfo=UTC), tick=False)


def cancel_then_keep(sub, cancel_at: tuple[int, ...], keep_at: tuple[int, ...]):
    with at(*cancel_at):
        sub = access.end_subscription(sub, mode=CancelMode.PERIOD_END, today=DAY, actor="api", reason="other")
    with at(*keep_at):
        return access.keep_subscription(sub, today=DAY, reminder_days_before=7, actor="api")


@pytest.mark.parametrize(("cancel_at", "keep_at"), [((9,), (17,)), ((12, 0, 0), (12, 0, 0))],
                         ids=["hours apart", "the same second"])
def test_the_last_change_of_a_day_is_its_state(db, moto_table, cancel_at, keep_at) -> None:
    account = customer("ada@example.com")
    sub = subscribe(account, 1000, "USD", date(2027, 1, 10))
    kept = cancel_then_keep(access.get_subscription(sub.account_id, sub.sub_id), cancel_at, keep_at)
    assert kept.CancelMode is None
    with at(18):
        found = recompute(DAY)
    (history,) = [h for h in found.histories if h.key == sub.SK]
    assert history.states[-1].status == "active"
    assert mrr_at(found.histories, DAY) == found.mrr_now == {"USD": 1000}


def test_the_other_order_too(db, moto_table) -> None:
    """Kept, then cancelled again the same second: cancelling at period end it is."""
    account = customer("bo@example.com")
    sub = subscribe(account, 1000, "USD", date(2027, 1, 10))
    with at(12):
        sub = access.end_subscription(access.get_subscription(sub.account_id, sub.sub_id), mode=CancelMode.PERIOD_END,
                                      today=DAY, actor="api", reason="other")
        sub = access.keep_subscription(sub, today=DAY, reminder_days_before=7, actor="api")
        access.end_subscription(sub, mode=CancelMode.PERIOD_END, today=DAY, actor="api", reason="other")
        found = recompute(DAY)
    (history,) = [h for h in found.histories if h.key == sub.SK]
    assert history.states[-1].status == "cancelled"
