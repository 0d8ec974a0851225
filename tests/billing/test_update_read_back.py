"""A subscription update reads back only what it changed (``ReturnValues=UPDATED_NEW``)
and still leaves the object in memory as the table holds it: every write path
the batches and the portal take, on both engines."""

from __future__ import annotations

from datetime import date

import pytest

from billing import access
from billing.models import Subscription, SubscriptionStatus
from tests.builders import fresh, seed_due

D = date(2027, 3, 15)


def stored(sub: Subscription) -> dict:
    return fresh(sub).serialize()


@pytest.fixture
def sent(table) -> list:
    """The parameters of every UpdateItem sent from now on."""
    from core.dynamo.engine import dynamodb_client

    seen: list = []
    events = dynamodb_client().meta.events

    def record(params, **kwargs) -> None:
        seen.append(dict(params))

    events.register("before-parameter-build.dynamodb.UpdateItem", record, unique_id="read-back-test")
    yield seen
    events.unregister("before-parameter-build.dynamodb.UpdateItem", unique_id="read-back-test")


def test_an_advance_leaves_the_object_as_stored_and_asks_only_for_what_changed(table, sent) -> None:
    [sub] = seed_due(1, due=D)
    sub = fresh(sub)
    version = sub.Version
    access.mark_past_due(sub, slot=D, period=D, failed_retries=1, retry_on=date(2027, 3, 18),
                         next_reminder=date(2027, 4, 8))
    assert sub.serialize() == stored(sub) and sub.BillingPeriod == D.isoformat()
    access.advance_after_payment(sub, slot=date(2027, 3, 18), paid_period=D, next_payment=date(2027, 4, 15),
                                 next_reminder=date(2027, 4, 8))
    # BillingPeriod removed, the dates and keys moved, the version up by one per write
    assert sub.serialize() == stored(sub)
    assert (sub.BillingPeriod, sub.Status, sub.Version) == (None, SubscriptionStatus.ACTIVE, version + 2)
    # The advance's UpdateItem; marking past due is a transaction with its events (the
    # outbox), which returns nothing: the object is brought up to date from what it wrote.
    assert [p["ReturnValues"] for p in sent] == ["UPDATED_NEW"]


def test_a_versioned_update_and_a_cancel_leave_the_object_as_stored(table) -> None:
    [sub] = seed_due(1, due=D)
    sub = fresh(sub)
    with pytest.raises(access.ConditionFailed):  # the version is checked: a stale copy is refused
        stale = fresh(sub)
        access.claim_reminder(fresh(sub), day=date(2027, 3, 8), next_reminder=date(2027, 4, 8))
        access.cancel_subscription(stale)
    access.cancel_subscription(sub := fresh(sub))
    assert sub.serialize() == stored(sub)
    assert (sub.NextPaymentDate, sub.DuePaymentKey, sub.Status) == (None, None, SubscriptionStatus.CANCELLED)


def test_a_path_beyond_a_maps_declared_keys_is_refused_before_anything_is_written(table, sent) -> None:
    from pynamodb.expressions.operand import Path

    [sub] = seed_due(1, due=D)
    sub = fresh(sub)
    before = stored(sub)
    for path in (["PaymentDetails", "Nope"], ["PaymentDetails", "Token", "x"], ["Email", "x"]):
        with pytest.raises(ValueError, match=".".join(path)):
            access.update_subscription(sub, [Path(path).set("tok_other")])
    assert sent == [] and stored(sub) == before


def test_a_maps_declared_key_set_and_removed_reads_as_a_fresh_read_does(table, sent) -> None:
    # PaymentDetails.AwaitingCharge (a renewal waiting for the customer's bank) is written
    # alone, so a card replaced meanwhile is never overwritten by a stale copy of the map
    [sub] = seed_due(1, due=D)
    sub = fresh(sub)
    access.update_subscription(sub, [Subscription.PaymentDetails.AwaitingCharge.set("pi_1")], check_version=False)
    assert sub.PaymentDetails.AwaitingCharge == "pi_1" and sub.serialize() == stored(sub)
    access.update_subscription(sub, [Subscription.PaymentDetails.AwaitingCharge.remove()], check_version=False)
    assert sub.PaymentDetails.AwaitingCharge is None and sub.serialize() == stored(sub)
    assert sent[0]["UpdateExpression"].count("#") >= 2  # a nested path, not the map set whole


def test_a_value_removed_or_set_to_nothing_reads_as_a_fresh_read_does(table) -> None:
    # absent and NULL both read back as the attribute's default (RetryCount: 0)
    [sub] = seed_due(1, due=D)
    sub = fresh(sub)
    access.update_subscription(sub, [Subscription.RetryCount.set(None), Subscription.CancelReason.set("x")],
                               check_version=False)
    assert sub.RetryCount == 0 and sub.serialize() == stored(sub)
    access.update_subscription(sub, [Subscription.RetryCount.set(3)], check_version=False)
    access.update_subscription(sub, [Subscription.RetryCount.remove(), Subscription.CancelReason.remove()],
                               check_version=False)
    assert (sub.RetryCount, sub.CancelReason) == (0, None) and sub.serialize() == stored(sub)
