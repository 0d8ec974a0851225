"""The money rules M1-M4 (docs/MONEY.md) as a model-based test: a hypothesis state machine
lives through many months of random days on moto, and after every step checks the
rules against a ledger it keeps from the gateway's side.

Steps: subscribe on any date with any day 1-31 (good or declining card), change the
day (also while past due and on the payment day), replace the card (good or
declining), cancel, staff "retry now", staff price changes, switches of product up
(charged now for the days paid) and down (from the next payment), subscriptions of several
seats to a price by the seat and their switches to other products' prices by the seat
(the seats kept: the whole price for them), the engine failing between
charge and receipt (a charge's receipt is lost), a first charge whose answer is lost at
subscribe, payment runs on random dates with days skipped (catch-up), two runs at once
(one after the other: the real-thread races are tests/billing/test_batch_payments),
reconciliation by hand and by each payment run (its own days and RECONCILE_DAYS before).

Checks after every step:
* every receipt has exactly one successful charge, and (once a payment run has
  reconciled the day a receipt was lost, or reconciliation by hand) every successful
  charge one receipt (M2); a first charge whose subscription never started is refunded
  in full once reconciled, never kept;
* each subscription's receipts tile its service without gap or overlap, from the day
  it was made to its PaidThroughDate, and each charge is the documented price of its
  days at the price the subscription had when charged (M1, M4: the price it was made
  with, or the one it switched to): what was charged equals the price over the days
  served; an upgrade's receipt is the new price of the paid days less their unused
  share at the old, and with it those days cost the new price (to a minor unit per
  switch);
* no charge pays for a day after the day it was made, and none is dated after the
  clock (M3); a batch run charges a subscription at most once;
* after a run on a day, every active subscription is paid through that day.

A bounded profile runs in ``make test``; ``HYPOTHESIS_PROFILE=long`` runs it deeper
(docs/MONEY.md, "How they are proven").
"""

from __future__ import annotations

import os
from collections import Counter
from datetime import date, timedelta
from decimal import Decimal
from itertools import pairwise

import pytest
from django.core import mail
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from billing import access, batches
from billing.actions import prices as price_actions
from billing.actions import subscriptions as actions
from billing.actions import switch
from billing.batches.reconcile import reconcile
from billing.models import MerchantEventType, SubscriptionStatus
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from billing.rules import coupons as coupon_rules
from billing.rules.price_choice import choose_price
from billing.rules.pricing import PriceTerms
from billing.rules.schedule import period_amount
from core.payments.errors import GatewayError
from core.payments.gateway import get_gateway
from core.payments.simulated import DECLINING_TEST_CARDS, SimulatedGateway
from tests.machines import DayClock, TrackedSubscription, own_table

pytestmark = pytest.mark.django_db(databases=[])

GOOD = "4242424242424242"
DECLINING = sorted(DECLINING_TEST_CARDS)
SKU = "NEWS-DAILY"
START = date(2027, 1, 1)

# make test: a few examples, and no shrinking (a failure is reported as found, at once;
# the long profile shrinks it to the shortest story).
settings.register_profile("money-bounded", max_examples=2, stateful_step_count=24, deadline=None,
                          suppress_health_check=list(HealthCheck),
                          phases=(Phase.explicit, Phase.reuse, Phase.generate))
settings.register_profile("long", max_examples=150, stateful_step_count=150, deadline=None,
                          suppress_health_check=list(HealthCheck))
# Between the two (minutes, no shrinking): HYPOTHESIS_PROFILE=medium.
settings.register_profile("medium", max_examples=12, stateful_step_count=60, deadline=None,
                          suppress_health_check=list(HealthCheck),
                          phases=(Phase.explicit, Phase.reuse, Phase.generate))
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") if os.environ.get("HYPOTHESIS_PROFILE") in ("long", "medium") \
    else "money-bounded"

# A product with a free trial, and coupons: a repeating percentage with few uses
# (so that some subscribe finds it used up) and an amount off for ever.
TRIAL_SKU, TRIAL_DAYS = "GYM-TRIAL", 14
COUPONS = {
    "TENOFF": {"percent_off": 10, "duration": "repeating", "duration_payments": 2, "max_uses": 2},
    "ONEOFF": {"amount_off": 100, "currency": "USD", "duration": "forever", "max_uses": 3},
}
# What subscriptions may switch to (up and down from Daily News's 9.99).
SWITCH_PRODUCTS = [("NEWS-PLUS", "Daily News Plus", 1999), ("NEWS-LITE", "Daily News Lite", 499)]
# Prices by the seat (a unit amount a seat a month, at most MAX_SEATS seats): Daily News's,
# which several seats subscribe to, and one of each product to switch to keeping the seats.
SEAT_PRICES = [(SKU, 999), ("NEWS-PLUS", 1499), ("NEWS-LITE", 399)]
MAX_SEATS = 4
ACTIONS_PER_DAY = 3
LIFETIME = timedelta(days=550)  # every example lives at least 18 months


def busy(self: MoneyMachine) -> bool:
    return self.actions_today < ACTIONS_PER_DAY


def act(method):
    """An action of the day: counted, so that the days keep passing."""
    def counted(self, *args, **kwargs):
        self.actions_today += 1
        return method(self, *args, **kwargs)

    counted.__name__ = method.__name__
    return precondition(busy)(counted)


class Tracked(TrackedSubscription):
    """What the model knows of one subscription, independently of the table."""

    def __init__(self, sub, price: int, made: date) -> None:
        super().__init__(sub, made)
        self.price = price  # what it pays a month now (the price it was made with, or switched to)
        self.prices = {price}  # every price it ever had
        self.days = {int(sub.PaymentDay)}  # every day the customer ever chose
        self.unstarted = False  # its first charge's answer was lost: it never started
        # A free trial's last day (its service from ``made`` to it is free), and the coupon
        # it was made with.
        self.trial_end = date.fromisoformat(sub.TrialEnd) if sub.TrialEnd else None
        self.coupon = sub.CouponCode


def _charge_key(charge: dict) -> tuple:
    """A charge at the gateway: its subscription, the period it pays, and which attempt."""
    meta = charge["metadata"]
    return (meta["sub_id"], meta.get("period_start", ""), meta.get("period_end", ""), meta.get("attempt", ""),
            charge.get("amount"))


class MoneyMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        from django.conf import settings as django_settings

        self.django_settings = django_settings
        own_table("rpay_model", LEDGER_DIR)
        django_settings.PAYMENT_RETRY_DAYS = [1, 3, 5]
        django_settings.RECEIPT_RETENTION_DAYS = 5000  # the ledger reads every receipt of the months lived
        django_settings.MERCHANT_EVENT_RETENTION_DAYS = 5000  # and every merchant event
        mail.outbox = []
        self.today = START
        self.clock = DayClock(self.today)
        self.price = 999
        access.create_product(SKU, "Daily News", self.price, "USD")
        for sku, name, amount in SWITCH_PRODUCTS:
            access.create_product(sku, name, amount, "USD")
        access.create_product(TRIAL_SKU, "City Gym", 2500, "USD", trial_days=TRIAL_DAYS)
        self.seat_prices = [
            price_actions.add_price(sku, PriceTerms("USD", unit_amount=Decimal(unit)), actor="staff",
                                    unit_label="seat", min_quantity=1, max_quantity=MAX_SEATS).PriceId
            for sku, unit in SEAT_PRICES]
        for code, terms in COUPONS.items():
            access.create_coupon(code, actor="staff", **terms)
        self.subs: list[Tracked] = []
        # The day an engine failure (or a lost answer at subscribe) left a charge without
        # its receipt; None once a reconciliation covering that day has run.
        self.lost_on: date | None = None
        self.actions_today = 0  # after a few actions, the days pass (see ACTIONS_PER_DAY)
        # The merchant's events read so far (the outbox), and where to read on from.
        self.merchant_events: list = []
        self.merchant_cursor = f"evt_{START:%Y%m%d}T000000000000Z_00000000"

    def _move_to(self, day: date) -> None:
        self.clock.move_to(day)
        self.today = day

    def teardown(self) -> None:
        try:
            # Whatever the last steps left, the runs and the reconciliation repair it all.
            self._live_until(max(self.today, START + LIFETIME), skip=False)
            self._run_payments()
            reconcile(START, self.today, fix=True, today=self.today)
            self.lost_on = None
            self.ledger_matches()
        finally:
            self.clock.stop()

    # --- helpers -----------------------------------------------------------------------

    def _live(self) -> list[Tracked]:
        return [t for t in self.subs if t.read().is_live]

    def _charges(self, tracked: Tracked) -> list:
        """The gateway's own record of the subscription's charges (its list API)."""
        return get_gateway().list_charges(START, date(2100, 1, 1), sub_id=tracked.sub_id)

    @property
    def unrecorded(self) -> bool:
        return self.lost_on is not None

    def awaiting_record(self) -> set[str]:
        """Succeeded charges allowed, for now, to have no receipt (a sibling model's: a charge
        the customer confirmed with their bank and whose page never came back)."""
        return set()

    def _run_payments(self) -> batches.RunSummary:
        before = Counter(_charge_key(c) for c in get_gateway().charges_made())
        summary = batches.run_payments(run_date=self.today, workers=1)
        assert summary.counts["differences"] == 0, summary.differences
        # The run reconciled its dates and RECONCILE_DAYS before them: a receipt lost
        # within that window is recorded now (M2, no person needed).
        reach = summary.dates[0] - timedelta(days=self.django_settings.RECONCILE_DAYS)
        if summary.ok and self.lost_on is not None and self.lost_on >= reach:
            self.lost_on = None
        made: dict[str, list[tuple[date, date]]] = {}
        for (sub_id, start, end, *_), count in (Counter(_charge_key(c) for c in get_gateway().charges_made())
                                                 - before).items():
            assert start and end, f"{sub_id}: a run's charge names the period it pays"
            made.setdefault(sub_id, []).extend([(date.fromisoformat(start), date.fromisoformat(end))] * count)
        for sub_id, periods in made.items():
            periods.sort()
            # never the same day twice: each period charged begins after the one before ends
            assert all(b[0] > a[1] for a, b in pairwise(periods)), f"{sub_id} charged twice for {periods}"
            if len(summary.dates) <= 28:
                # A run of 28 dates reaches one due day of a period of 28 days or more
                # (schedule.period_end); a second only after a first period cut short to the
                # payment day (a first payment taken late: its answer lost at subscribing).
                short = [(a, b) for a, b in periods[:-1] if (b - a).days + 1 < 28]
                assert len(periods) - len(short) <= 1, f"{sub_id} charged twice in one run: {periods}"
        return summary

    # --- rules -------------------------------------------------------------------------

    @initialize(days=st.lists(st.integers(1, 31), min_size=1, max_size=2),
                first_day=st.integers(0, 60), seats=st.integers(1, MAX_SEATS))
    def first_customers(self, days: list[int], first_day: int, seats: int) -> None:
        """Every example starts with customers (a short example would check nothing). When
        ``seats`` is more than one, the last of two, or a lone one on an odd day, takes that
        many seats of the price by the seat (so that switches at several seats are tried in
        the few examples of ``make test``); still two customers at most, for the run's time."""
        self._move_to(START + timedelta(days=first_day))
        for number, day in enumerate(days):
            if seats > 1 and number == len(days) - 1 and (len(days) == 2 or number == 0 and day % 2):
                self._subscribe_seats(day, seats)
            else:
                self._subscribe(day, declining=False)

    @rule(day=st.integers(1, 31), declining=st.booleans())
    @act
    def subscribe(self, day: int, declining: bool) -> None:
        if len(self.subs) < 3:
            self._subscribe(day, declining)

    def _subscribe(self, day: int, declining: bool) -> None:
        number = DECLINING[0] if declining else GOOD
        token = get_gateway().tokenize_card(number, 12, 2040, "123")
        product = access.get_product(SKU)
        started = actions.subscribe(
            access.create_account(f"c{len(self.subs)}@example.com"), sku=SKU, product_name=product.Name,
            payment_day=day, amount=int(product.PaymentAmount), currency=product.Currency, card=token,
            today=self.today, actor="customer")
        assert started.started != declining
        self.subs.append(Tracked(started.sub, int(product.PaymentAmount), self.today))

    @rule(day=st.integers(1, 31), trial=st.booleans(), coupon=st.sampled_from([None, *COUPONS]))
    @act
    def subscribe_with_a_trial_or_a_coupon(self, day: int, trial: bool, coupon: str | None) -> None:
        """A product with a free trial, a coupon, or both. A coupon used up is
        refused at subscribing with nothing written."""
        if len(self.subs) >= 4:
            return
        sku = TRIAL_SKU if trial else SKU
        product = access.get_product(sku)
        found = access.get_coupon(coupon) if coupon else None
        account = access.create_account(f"t{len(self.subs)}@example.com")
        try:
            started = actions.subscribe(
                account, sku=sku, product_name=product.Name, payment_day=day, amount=int(product.PaymentAmount),
                currency="USD", card=get_gateway().tokenize_card(GOOD, 12, 2040, "123"), today=self.today,
                actor="customer", coupon=found, trial_days=int(product.TrialDays or 0) if trial else 0)
        except access.CouponRefused:
            assert found is not None and found.MaxUses is not None and found.Uses >= found.MaxUses
            assert access.get_subscriptions_by_account(account.account_id) == []  # nothing written
            return
        assert started.started or (trial and started.sub.TrialEnd)
        if trial:  # nothing charged at subscribing
            assert get_gateway().charges_made(sub_id=started.sub.sub_id) == []
        self.subs.append(Tracked(started.sub, int(product.PaymentAmount), self.today))

    @rule(day=st.integers(1, 31), seats=st.integers(2, MAX_SEATS))
    @act
    def subscribe_with_seats(self, day: int, seats: int) -> None:
        """Several seats of Daily News's price by the seat: the whole price is the unit
        amount × the seats, charged as any subscription's."""
        if len(self.subs) < 4:
            self._subscribe_seats(day, seats)

    def _subscribe_seats(self, day: int, seats: int) -> None:
        product = access.get_product(SKU)
        choice = choose_price(access.get_price(self.seat_prices[0]), product, seats)
        started = actions.subscribe_to_price(
            access.create_account(f"s{len(self.subs)}@example.com"), product, choice, payment_day=day,
            card=get_gateway().tokenize_card(GOOD, 12, 2040, "123"), today=self.today, actor="customer")
        assert started.started and int(started.sub.Quantity) == seats
        self.subs.append(Tracked(started.sub, choice.amount, self.today))

    @rule(data=st.data(), day=st.integers(1, 31))
    @act
    def change_day(self, data: st.DataObject, day: int) -> None:
        live = self._live()
        if not live:
            return
        tracked = data.draw(st.sampled_from(live))
        before = tracked.read()
        actions.change_payment_day(before, day, actor="customer")
        after = tracked.read()
        # M1: a change never forgives a past-due period nor moves a date
        assert (after.Status, after.BillingPeriod, after.RetryCount, after.NextPaymentDate, after.PaidThroughDate) == \
            (before.Status, before.BillingPeriod, before.RetryCount, before.NextPaymentDate, before.PaidThroughDate)
        tracked.days.add(day)

    @rule(data=st.data(), declining=st.booleans())
    @act
    def replace_card(self, data: st.DataObject, declining: bool) -> None:
        live = self._live()
        if not live:
            return
        tracked = data.draw(st.sampled_from(live))
        token = get_gateway().tokenize_card(DECLINING[1] if declining else GOOD, 12, 2040, "123")
        outcome = actions.replace_card(tracked.read(), token, actor="customer", today=self.today)
        if outcome is not None and not declining:
            assert outcome.status == PaymentStatus.PAID  # pay now: the owed period is paid

    @rule(data=st.data())
    @act
    def cancel(self, data: st.DataObject) -> None:
        live = self._live()
        if live:
            actions.cancel(data.draw(st.sampled_from(live)).read(), actor="customer")

    @rule(data=st.data())
    @act
    def staff_retry_now(self, data: st.DataObject) -> None:
        past_due = [t for t in self.subs if t.read().Status == SubscriptionStatus.PAST_DUE]
        if past_due:
            payments.take_payment(data.draw(st.sampled_from(past_due)).read(), run_date=self.today, actor="staff")

    @rule(price=st.integers(100, 20000))
    @act
    def staff_changes_the_price(self, price: int) -> None:
        access.update_product(SKU, name="Daily News", amount=price, currency="USD")  # M4: new subscriptions only

    @rule(data=st.data(), sku=st.sampled_from([p[0] for p in SWITCH_PRODUCTS] + [SKU]
                                              + [f"seat:{n}" for n in range(len(SEAT_PRICES))]))
    @act
    def switch_product(self, data: st.DataObject, sku: str) -> None:
        """The customer switches product, or to a price by the seat (``seat:<n>``: several
        seats keep them, at its unit amount × the seats): up, charged now for the days
        paid; down (or the same price), from the next payment. A refusal (past due, paused,
        cancelling, twice a day, the same product, seats a price does not take) changes
        nothing; nor does an upgrade whose charge is declined (a card replaced by a
        declining one): nothing charged, nothing switched."""
        live = self._live()
        if not live:
            return
        tracked = data.draw(st.sampled_from(live))
        before = tracked.read()
        seats = int(before.Quantity or 1)
        if seats > 1 and not sku.startswith("seat:"):
            # several seats: to a price by the seat (a product's default price takes one
            # seat only, a refusal tests/billing/test_switch_seats.py proves)
            sku = f"seat:{data.draw(st.integers(0, len(SEAT_PRICES) - 1))}"
        if sku.startswith("seat:"):
            sku = self.seat_prices[int(sku.removeprefix("seat:"))]
        charged_before = get_gateway().charges_made(sub_id=tracked.sub_id)
        try:
            done = switch.switch(before, sku, today=self.today, actor="customer")
        except switch.SwitchRefused:
            after = tracked.read()
            assert (after.SKU, after.PaymentAmount, after.Version) == (before.SKU, before.PaymentAmount, before.Version)
            return
        except switch.SwitchDeclined:
            after = tracked.read()
            # the subscription as it was (its count of failed switch charges aside: the
            # next attempt's key), and the one new charge the declined one
            assert (after.SKU, after.ProductName, after.PaymentAmount, after.Status, after.PaidThroughDate,
                    after.NextPaymentDate, after.LastSwitchDate, after.Version) == (
                before.SKU, before.ProductName, before.PaymentAmount, before.Status, before.PaidThroughDate,
                before.NextPaymentDate, before.LastSwitchDate, before.Version)
            new = get_gateway().charges_made(sub_id=tracked.sub_id)[len(charged_before):]
            assert [(c["metadata"].get("kind"), c["status"]) for c in new] == [("switch", "declined")]
            return
        assert done.quote.due_now == done.charged or done.charged == 0
        # the seats kept, the new price the whole for them
        assert done.quote.quantity == seats == int(tracked.read().Quantity or 1)
        if done.quote.unit_amount is not None:
            assert done.quote.new_price == done.quote.unit_amount * seats
        tracked.price = done.quote.new_price
        tracked.prices.add(tracked.price)

    @rule(days=st.integers(1, 120), skip=st.booleans())
    def days_pass(self, days: int, skip: bool) -> None:
        """The clock moves on; the payment run happens on every day something is due (the
        days between have nothing to run), except the first such day when ``skip``: the
        next run catches it up."""
        self.actions_today = 0
        self._live_until(self.today + timedelta(days=days), skip)

    def _live_until(self, target: date, skip: bool) -> None:
        while self.today < target:
            due = [date.fromisoformat(sub.NextPaymentDate) for sub in (t.read() for t in self.subs)
                   if sub.is_live and sub.NextPaymentDate]
            later = [d for d in due if d > self.today]
            # never more than 27 days without a run: the catch-up window stays covered
            self._move_to(min([*later, target, self.today + timedelta(days=27)]))
            if skip and self.today in due:
                skip = False
                continue
            self._run_and_check()

    @rule()
    @act
    def payment_run(self) -> None:
        self._run_and_check()

    def _run_and_check(self) -> None:
        summary = self._run_payments()
        if summary.ok and not self.unrecorded:
            for tracked in self.subs:
                sub = tracked.read()
                if sub.Status == SubscriptionStatus.ACTIVE:
                    assert sub.PaidThroughDate >= self.today.isoformat(), "an active subscription owes days"

    @rule()
    @act
    def two_runs_at_once(self) -> None:
        self._run_payments()
        made = len(get_gateway().charges_made())
        self._run_payments()
        assert len(get_gateway().charges_made()) == made  # the second finds nothing left to charge

    @rule()
    @act
    def engine_fails_between_charge_and_receipt(self) -> None:
        real = access.create_receipt

        def engine_down(*args, **kwargs):
            raise RuntimeError("DynamoDB unreachable")

        access.create_receipt = engine_down
        try:
            summary = batches.run_payments(run_date=self.today, workers=1)
        finally:
            access.create_receipt = real
        if summary.counts["errors"]:
            self.lost_on = self.lost_on or self.today

    @rule()
    @act
    def answer_lost_at_subscribe(self) -> None:
        """The gateway charges the first payment and its answer never arrives: the customer
        is told it failed and the subscription does not start; a run refunds the charge."""
        if len(self.subs) >= 4:
            return
        real = SimulatedGateway.charge

        def lost(gateway, *args, **kwargs):
            real(gateway, *args, **kwargs)
            raise GatewayError("read timeout")

        SimulatedGateway.charge = lost
        account = access.create_account(f"lost{len(self.subs)}@example.com")
        try:
            actions.subscribe(account, sku=SKU, product_name="Daily News", payment_day=self.today.day,
                              amount=self.price, currency="USD", card=get_gateway().tokenize_card(GOOD, 12, 2040, "123"),
                              today=self.today, actor="customer")
        except GatewayError:
            pass
        finally:
            SimulatedGateway.charge = real
        [sub] = access.get_subscriptions_by_account(account.account_id)
        assert sub.Status == SubscriptionStatus.CANCELLED and sub.CancelReason == "first_payment_failed"
        tracked = Tracked(sub, self.price, self.today)
        tracked.unstarted = True
        self.subs.append(tracked)
        self.lost_on = self.lost_on or self.today

    @rule()
    @act
    def reconcile_fix(self) -> None:
        reconcile(START, self.today, fix=True, today=self.today)
        self.lost_on = None

    # --- the ledger ----------------------------------------------------------------------

    @invariant()
    def coupons_are_never_used_more_than_allowed(self) -> None:
        for code, terms in COUPONS.items():
            coupon = access.get_coupon(code)
            assert 0 <= coupon.Uses <= terms["max_uses"]
            # each use is a live or ended subscription that holds it (a first payment that
            # failed gives its use back)
            holders = [t for t in self.subs if t.coupon == code and not t.unstarted]
            assert coupon.Uses <= len(holders)

    @invariant()
    def events_match_receipts(self) -> None:
        """The outbox: every receipt has exactly one ``payment.succeeded`` and one
        ``invoice.created``, of its amount, and nothing else has one (never lost, never
        invented, whatever crashed or raced); a receipt's ``refund.created`` add up to its
        refunded amount."""
        while True:  # read on from where the last check stopped, in order
            page, more = access.events_after(self.merchant_cursor, limit=1000)
            self.merchant_events += page
            self.merchant_cursor = page[-1].EventId if page else self.merchant_cursor
            if more is None:
                break
        receipts = {r.url_id: r for tracked in self.subs
                    for r in access.get_receipts_by_account(tracked.account_id, START, self.today)
                    if r.sub_id == tracked.sub_id}
        for kind in (MerchantEventType.PAYMENT_SUCCEEDED, MerchantEventType.INVOICE_CREATED):
            events = [e for e in self.merchant_events if e.Type == kind]
            assert Counter(e.ObjectId for e in events) == Counter(list(receipts)), kind
            assert all(e.Data["amount"] == receipts[e.ObjectId].ProcessedAmount for e in events)
        refunded = Counter()
        for event in (e for e in self.merchant_events if e.Type == MerchantEventType.REFUND_CREATED):
            refunded[event.Data["receipt"]] += event.Data["amount"]
        assert {k: v for k, v in refunded.items() if v} == \
            {k: r.RefundedAmount for k, r in receipts.items() if r.RefundedAmount}

    @invariant()
    def ledger_matches(self) -> None:
        for tracked in self.subs:
            sub = tracked.read()
            charges = self._charges(tracked)
            succeeded = {c.charge_id: c for c in charges if c.succeeded}
            receipts = sorted((r for r in access.get_receipts_by_account(tracked.account_id, START, self.today)
                               if r.sub_id == tracked.sub_id), key=lambda r: r.PeriodStart)
            # M2: every receipt one successful charge, never two receipts for one charge
            # (a period a coupon took whole is recorded with no charge at all)
            receipt_charges = [r.ChargeId for r in receipts if r.ChargeId]
            assert len(set(receipt_charges)) == len(receipt_charges)
            assert set(receipt_charges) <= set(succeeded)
            if not self.unrecorded:
                missing = set(succeeded) - set(receipt_charges)
                assert missing <= self.awaiting_record(), "a charge without its receipt"
            for charge in charges:
                # M3: nothing paid for ahead of the day it was charged, nothing after the clock
                assert charge.metadata["period_start"] <= charge.created[:10] <= self.today.isoformat()
            if tracked.unstarted:
                # Never started: its one charge is refunded in full once reconciled, never kept.
                assert sub.Status == SubscriptionStatus.CANCELLED and len(succeeded) == 1
                for receipt in receipts:
                    assert receipt.RefundedAmount == receipt.ProcessedAmount, "a charge kept for nothing"
                continue
            # M1 + M4: the receipts tile the service from the day it was made, each at the
            # price it had when charged; an upgrade's receipt settles the paid days at the new
            # A free trial's days are served free: the receipts start the day after it.
            expected_start = tracked.trial_end + timedelta(days=1) if tracked.trial_end else tracked.made
            discounted = 0
            for receipt in (r for r in receipts if r.Kind != "switch"):
                assert receipt.PeriodStart == expected_start.isoformat(), "a gap or an overlap"
                end = date.fromisoformat(receipt.PeriodEnd)
                off = int(receipt.DiscountAmount or 0)
                if receipt.ChargeId:
                    meta = succeeded[receipt.ChargeId].metadata
                    day, price = int(meta["payment_day"]), int(meta.get("price", tracked.price))
                    assert day in tracked.days and price in tracked.prices
                    full = period_amount(price, day, expected_start, end)
                else:  # the coupon took it all: no charge was made
                    assert receipt.ProcessedAmount == 0 < off and receipt.CouponCode
                    full = off
                # M1 with a coupon: the price of the days, less what the coupon takes off it
                assert receipt.ProcessedAmount == full - off
                if receipt.CouponCode:
                    terms = COUPONS[receipt.CouponCode]
                    assert receipt.CouponCode == tracked.coupon
                    assert off == coupon_rules.discount(full, percent_off=terms.get("percent_off"),
                                                        amount_off=terms.get("amount_off"))
                    discounted += 1
                else:
                    assert off == 0
                expected_start = end + timedelta(days=1)
            if tracked.coupon:
                assert discounted <= (COUPONS[tracked.coupon].get("duration_payments") or 10**6)
            for receipt in (r for r in receipts if r.Kind == "switch"):
                meta = succeeded[receipt.ChargeId].metadata
                start, end = date.fromisoformat(receipt.PeriodStart), date.fromisoformat(receipt.PeriodEnd)
                assert int(meta["price"]) in tracked.prices and start <= end
                assert receipt.SwitchCharge == period_amount(int(meta["price"]), int(meta["payment_day"]), start, end)
                assert receipt.ProcessedAmount == receipt.SwitchCharge - receipt.SwitchCredit > 0
            if not self.unrecorded and not set(succeeded) & self.awaiting_record():
                assert sub.PaidThroughDate == (expected_start - timedelta(days=1)).isoformat()
            assert sub.PaymentAmount == tracked.price  # M4: a staff price change never touches it


LEDGER_DIR = ""


def test_money_rules_hold_over_months_of_random_days(moto_table, tmp_path) -> None:
    global LEDGER_DIR
    LEDGER_DIR = str(tmp_path)
    run_state_machine_as_test(MoneyMachine, settings=settings.get_profile(PROFILE))
