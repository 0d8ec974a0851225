"""Pause, resume, cancel at period end, keep and cancel now over months of random days,
as a hypothesis state machine on moto with time-machine: the payment and
reminder runs happen on every day something is due, and after every step a ledger kept
by the test from the gateway's side and the receipts is checked:

* no day is charged twice (the receipts never overlap) and each charge is the price of
  its days (``schedule.period_amount``);
* no paused day is charged (no receipt meets a paused span the model recorded), and
  no charge is made after a cancel;
* no paid day is lost: ``PaidThroughDate`` is the last day the receipts pay for, except
  after a cancel now, when it is that day and the days after it are refunded, each
  charge by its unused days' share (``lifecycle.unused_share``);
* while paused the item is in no index but under its resume date (payment) and the
  reminder of that payment; a cancelled one is in neither index;
* after a run, an active, unpaused subscription is paid through the day of the run.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.core import mail
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from billing import access, batches
from billing.actions import lifecycle as lifecycle_actions
from billing.exceptions import PauseRefused
from billing.models import SubscriptionStatus
from billing.rules.lifecycle import pause_end, state_of, unused_share
from billing.rules.schedule import period_amount
from core.payments.gateway import get_gateway
from tests.machines import DayClock, TrackedSubscription, machine_profile, own_table

pytestmark = pytest.mark.django_db(databases=[])

START = date(2027, 1, 1)
PRICE = 999
PROFILE = machine_profile("lifecycle", examples=3, steps=25, long_examples=100, long_steps=80)
LEDGER_DIR = ""
FAR = date(9999, 12, 31)


class Tracked(TrackedSubscription):
    def __init__(self, sub, made: date) -> None:
        super().__init__(sub, made)
        self.day = int(sub.PaymentDay)
        self.paused: list[list[date]] = []  # [first paused day, last paused day]
        self.ended_on: date | None = None  # cancel: charges after this are forbidden
        self.charges_at_end = 0
        self.cut_to: date | None = None  # cancel now: PaidThroughDate cut to this day
        self.expected_refund = 0


class LifecycleMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        from django.conf import settings as django_settings

        own_table("rpay_life", LEDGER_DIR)
        django_settings.RECEIPT_RETENTION_DAYS = 5000
        mail.outbox = []
        self.today = START
        self.clock = DayClock(START)
        self.subs: list[Tracked] = []

    def _move_to(self, day: date) -> None:
        self.clock.move_to(day)
        self.today = day

    def teardown(self) -> None:
        self.clock.stop()

    def _charges(self, tracked: Tracked) -> list:
        return [c for c in get_gateway().list_charges(START, date(2100, 1, 1), sub_id=tracked.sub_id) if c.succeeded]

    def _receipts(self, tracked: Tracked) -> list:
        return sorted((r for r in access.get_receipts_by_account(tracked.account_id, START, self.today)
                       if r.sub_id == tracked.sub_id), key=lambda r: r.PeriodStart)

    # --- rules -------------------------------------------------------------------------

    @initialize(days=st.lists(st.integers(1, 31), min_size=1, max_size=2), first_day=st.integers(0, 40))
    def customers(self, days: list[int], first_day: int) -> None:
        self._move_to(START + timedelta(days=first_day))
        for n, day in enumerate(days):
            from billing.actions import subscriptions as actions
            from tests.builders import card

            started = actions.subscribe(access.create_account(f"c{n}@example.com"), sku="NEWS", product_name="News",
                                        payment_day=day, amount=PRICE, currency="USD", card=card(),
                                        today=self.today, actor="customer")
            assert started.started
            self.subs.append(Tracked(started.sub, self.today))

    @rule(data=st.data(), how=st.sampled_from(["skip", "until", "open"]), payments=st.integers(1, 3),
          until=st.integers(1, 120))
    def pause(self, data: st.DataObject, how: str, payments: int, until: int) -> None:
        tracked = data.draw(st.sampled_from(self.subs))
        sub = tracked.read()
        kwargs = {"skip": {"payments": payments}, "until": {"until": self.today + timedelta(days=until)},
                  "open": {}}[how]
        try:
            resume = pause_end(sub, self.today, **kwargs)
        except PauseRefused:
            return
        lifecycle_actions.pause(sub, resume=resume, today=self.today, actor="customer")
        sub = tracked.read()
        first = date.fromisoformat(sub.PausedFrom)
        tracked.paused.append([first, resume - timedelta(days=1) if resume else FAR])

    @rule(data=st.data())
    def resume(self, data: st.DataObject) -> None:
        tracked = data.draw(st.sampled_from(self.subs))
        sub = tracked.read()
        if state_of(sub, self.today).kind != "paused":
            return
        lifecycle_actions.resume(sub, today=self.today, actor="customer")
        tracked.paused[-1][1] = date.fromisoformat(tracked.read().NextPaymentDate) - timedelta(days=1)
        self._drop_empty_span(tracked)

    @rule(data=st.data())
    def cancel_at_period_end(self, data: st.DataObject) -> None:
        tracked = data.draw(st.sampled_from(self.subs))
        sub = tracked.read()
        if not sub.is_live:
            return
        lifecycle_actions.cancel_at_period_end(sub, today=self.today, actor="customer", reason="other")
        self._ended(tracked)

    def _ended(self, tracked: Tracked) -> None:
        tracked.ended_on = self.today
        tracked.charges_at_end = len(self._charges(tracked))
        # A cancel ends the pause: the days after today are no longer paused (a "keep"
        # resumes the schedule from the paid-through date).
        if tracked.paused and tracked.paused[-1][1] >= self.today:
            tracked.paused[-1][1] = self.today
        self._drop_empty_span(tracked)

    @staticmethod
    def _drop_empty_span(tracked: Tracked) -> None:
        if tracked.paused and tracked.paused[-1][0] > tracked.paused[-1][1]:
            tracked.paused.pop()

    @rule(data=st.data())
    def keep(self, data: st.DataObject) -> None:
        tracked = data.draw(st.sampled_from(self.subs))
        sub = tracked.read()
        if state_of(sub, self.today).kind != "cancelling":
            return
        lifecycle_actions.keep(sub, today=self.today, actor="customer")
        tracked.ended_on = None

    @rule(data=st.data())
    def cancel_now(self, data: st.DataObject) -> None:
        tracked = data.draw(st.sampled_from(self.subs))
        sub = tracked.read()
        if not (sub.is_live or state_of(sub, self.today).kind == "cancelling"):
            return
        expected = 0
        for receipt in self._receipts(tracked):
            end = date.fromisoformat(receipt.PeriodEnd)
            if end > self.today:
                expected += unused_share(int(receipt.ProcessedAmount), date.fromisoformat(receipt.PeriodStart), end,
                                         self.today)
        done = lifecycle_actions.cancel_now(sub, today=self.today, actor="customer", reason="other")
        assert done.refunded == expected and not done.refund_failures
        tracked.expected_refund += expected
        tracked.cut_to = self.today
        self._ended(tracked)

    @rule(days=st.integers(1, 90))
    def days_pass(self, days: int) -> None:
        target = self.today + timedelta(days=days)
        while self.today < target:
            due = []
            for sub in (t.read() for t in self.subs):
                due += [date.fromisoformat(d) for d in (sub.NextPaymentDate, sub.NextReminderDate) if d]
            later = [d for d in due if d > self.today]
            self._move_to(min([*later, target, self.today + timedelta(days=27)]))
            self._run()

    def _run(self) -> None:
        batches.run_reminders(run_date=self.today, workers=1)
        assert batches.run_payments(run_date=self.today, workers=1).ok
        for tracked in self.subs:
            sub = tracked.read()
            if sub.Status == SubscriptionStatus.ACTIVE and state_of(sub, self.today).kind == "active":
                # Resumed once its paid days were over, it is active again (no "paused until"
                # on its pages), and the days up to its next payment stay unpaid and free:
                # the end of the pause's span, never charged.
                resumed_gap = any(first <= self.today <= last for first, last in tracked.paused)
                assert sub.PaidThroughDate >= self.today.isoformat() or resumed_gap, "an active subscription owes days"

    # --- the ledger --------------------------------------------------------------------

    @invariant()
    def ledger(self) -> None:
        for tracked in self.subs:
            sub = tracked.read()
            receipts = self._receipts(tracked)
            charges = self._charges(tracked)
            assert {r.ChargeId for r in receipts} == {c.charge_id for c in charges}
            previous_end = tracked.made - timedelta(days=1)
            for receipt in receipts:
                start, end = date.fromisoformat(receipt.PeriodStart), date.fromisoformat(receipt.PeriodEnd)
                assert start > previous_end, "a day charged twice"
                assert receipt.ProcessedAmount == period_amount(PRICE, tracked.day, start, end)
                for first, last in tracked.paused:
                    assert end < first or start > last, f"paused days {first}..{last} charged ({start}..{end})"
                previous_end = end
            if tracked.ended_on is not None:
                assert len(charges) == tracked.charges_at_end, "charged after a cancel"
                assert sub.NextPaymentDate is None and sub.NextReminderDate is None
            paid_through = previous_end if tracked.cut_to is None else min(previous_end, tracked.cut_to)
            assert sub.PaidThroughDate == paid_through.isoformat(), "a paid day lost or granted"
            refunded = sum(int(r.RefundedAmount or 0) for r in receipts)
            assert refunded == tracked.expected_refund
            state = state_of(sub, self.today)
            if state.kind == "paused":
                assert sub.NextPaymentDate is None or sub.NextPaymentDate == sub.PausedUntil
                if sub.NextReminderDate:
                    assert sub.NextReminderDate >= (state.until - timedelta(days=7)).isoformat()


def test_pause_resume_cancel_and_keep_never_charge_a_paused_or_cancelled_day(moto_table, tmp_path) -> None:
    global LEDGER_DIR
    LEDGER_DIR = str(tmp_path)
    run_state_machine_as_test(LifecycleMachine, settings=settings.get_profile(PROFILE))


class Pick:
    """Stands in for ``st.data()`` in the fixed scenarios below: always this subscription."""

    def __init__(self, value: object) -> None:
        self.value = value

    def draw(self, _strategy: object) -> object:
        return self.value


# Fixed stories through the same machine and ledger: the random search may not meet each
# of them in the bounded profile, and each breaks if its rule breaks (an open pause that
# kept its due keys was caught by the first one and missed by three random examples).
SCENARIOS = {
    "open pause, then two months": [("pause", {"how": "open"}), ("days_pass", {"days": 60})],
    "pause for two payments": [("pause", {"how": "skip", "payments": 2}), ("days_pass", {"days": 90})],
    "pause until a date, resume early": [("pause", {"how": "until", "until": 100}), ("days_pass", {"days": 20}),
                                         ("resume", {}), ("days_pass", {"days": 60})],
    "open pause, resume after the paid days": [("pause", {"how": "open"}), ("days_pass", {"days": 45}),
                                               ("resume", {}), ("days_pass", {"days": 45})],
    "cancel at period end, keep": [("days_pass", {"days": 20}), ("cancel_at_period_end", {}), ("keep", {}),
                                   ("days_pass", {"days": 60})],
    "cancel at period end, then the period ends": [("cancel_at_period_end", {}), ("days_pass", {"days": 70}),
                                                   ("keep", {})],
    "cancel now mid-period": [("days_pass", {"days": 20}), ("days_pass", {"days": 3}), ("cancel_now", {}),
                              ("days_pass", {"days": 60})],
    "cancel at period end, then cancel now": [("days_pass", {"days": 20}), ("cancel_at_period_end", {}),
                                              ("days_pass", {"days": 5}), ("cancel_now", {})],
    "pause, then cancel now": [("days_pass", {"days": 20}), ("pause", {"how": "skip", "payments": 1}),
                               ("cancel_now", {}), ("days_pass", {"days": 60})],
}


@pytest.mark.parametrize("story", list(SCENARIOS))
def test_lifecycle_stories(moto_table, tmp_path, story: str) -> None:
    global LEDGER_DIR
    LEDGER_DIR = str(tmp_path)
    machine = LifecycleMachine()
    try:
        machine.customers(days=[15], first_day=9)
        machine.ledger()
        tracked = machine.subs[0]
        defaults = {"payments": 1, "until": 1}
        for step, kwargs in SCENARIOS[story]:
            rule_kwargs = {**defaults, **kwargs} if step == "pause" else kwargs
            if step in ("pause", "resume", "cancel_at_period_end", "keep", "cancel_now"):
                getattr(machine, step)(Pick(tracked), **rule_kwargs)
                if step == "pause":
                    assert tracked.paused, "the story's pause was refused"
                if step.startswith("cancel"):
                    assert tracked.ended_on == machine.today
            else:
                getattr(machine, step)(**rule_kwargs)
            machine.ledger()
    finally:
        machine.teardown()
