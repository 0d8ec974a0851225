"""The money rules over prices, seats, cadences and metered usage (docs/MONEY.md M1-M8,
docs/USAGE.md, docs/PRICING.md): a hypothesis state machine on moto and the simulated
gateway, as tests/billing/test_money_model.py, whose fixtures it copies.

Each example has a currency (USD, two decimals, or JPY, none), a seller whose VAT is
included in its prices (Ireland) or added on top (Italy), a sum meter with a metered
price (per unit, or graduated with free units), and three customers: monthly with seats,
yearly, and every three months, each billing the meter's usage in arrears. The monthly
customer and a customer of usage alone also bill a second meter (storage, per unit):
several metered prices on one charge (docs/USAGE.md "Several metered prices"), until the
storage price is removed at a period's end (docs/USAGE.md "Removing a metered price").

Steps: the days pass (the clock jumps to the next payment day; the run happens there),
the payment run, more or fewer seats (prorated: charged now, or credited to the card),
usage events (new, a repeated identifier, late within the 35 days' window, out of order,
too old, a batch of several), the storage price removed or replaced by a dearer one, a
percent or an amount coupon, pause, resume, cancel now
and at period end, a staff refund of part of a receipt (shared over its lines, or of one
line alone).

Checks after every step:
* M8: each accepted event is counted in one receipt's usage at most: the usage ranges of
  one subscription never overlap, and a receipt's usage quantity and amount are
  ``amount_for`` of the events the model accepted for its days; no event is accepted for
  a day already billed, none is refused that was not; once its day is closed, an event of
  a day served is in a receipt's usage (exactly once), paused days and a cancelled
  subscription's last period included (a cancel at the period's end is billed by the run
  of the day after it);
* the upcoming payment read on the payment day before the run (``payments.next_charge``,
  what ``GET /api/v1/subscriptions/{id}/upcoming`` returns) is what the run charges, to
  the minor unit, its lines summing to it;
* a regular receipt's amount before added tax is the fixed fee of its days at the price
  it was charged at, less the coupon's discount of that fee, plus the usage; the price is
  the unit amount times a number of seats the subscription had;
* the customer never keeps more than the seats held day by day and the usage billed
  (charges less refunds, to a minor unit per rounding);
* receipts' totals are the gateway's charges (M2: one receipt a charge, one charge a
  receipt), the invoice lines' tax sums to the receipt's tax and their gross to its
  amount; refunds never exceed the charge and are the gateway's (M5); nothing is charged
  ahead of the clock (M3);
* an invoice's credit notes, one a refund: each note's lines sum to its totals with no
  negative net, its tax is the invoice's tax on all refunded so far less the earlier notes'
  (``refund_share``), a refund of one line credits that line alone, and no invoice line is
  credited more than it holds.

``make test`` runs a bounded profile (a few seconds); ``HYPOTHESIS_PROFILE=long`` or
``medium`` a deeper one (docs/MONEY.md, "How they are proven").
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

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
from billing.access.credit_notes import refunds_so_far
from billing.access.receipts import receipt_usages
from billing.access.usage import billed_through, get_meter
from billing.access.usage_billing import attach_metered_price
from billing.actions import add_ons as add_on_actions
from billing.actions import coupons as coupon_actions
from billing.actions import lifecycle as lifecycle_actions
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.actions import seats as seat_actions
from billing.actions import subscriptions as actions
from billing.actions import switch as switch_actions
from billing.exceptions import ConditionFailed, PauseRefused
from billing.models import MeterAggregation, SubscriptionStatus
from billing.operations import payments, refunds
from billing.operations.charge_lines import upcoming_object
from billing.rules import coupons as coupon_rules
from billing.rules.add_ons import AddOnRefused, add_ons_of
from billing.rules.credit_lines import InvoiceLine, lines_left
from billing.rules.invoice import invoice_of
from billing.rules.invoice_tax import refund_share
from billing.rules.lifecycle import pause_end, state_of
from billing.rules.price_objects import terms_of
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode, amount_for
from billing.rules.schedule import cadence_of, period_amount
from billing.rules.seats import SeatsRefused
from billing.rules.switch import SwitchRefused, usage_only
from billing.rules.usage import EventRefused
from core.payments.gateway import get_gateway
from tests.builders import prices_exclude_vat
from tests.machines import DayClock, TrackedSubscription, own_table

pytestmark = pytest.mark.django_db(databases=[])

START = date(2027, 1, 1)
GOOD = "4242424242424242"
METER = "calls"
STORAGE_METER = "storage"  # a second meter, billed beside the calls by two customers
WINDOW_DAYS = 35  # an event may be this many days late (docs/USAGE.md)
# Per currency: the monthly unit price, the yearly price, the metered price's terms, an
# amount coupon.
CURRENCIES = {
    "USD": (1250, 9900, PriceTerms("USD", unit_amount=Decimal("0.5")), 300),
    "JPY": (1500, 15000, PriceTerms("JPY", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                                    tiers=(Tier(100, Decimal(0)), Tier(None, Decimal(2)))), 400),
}
CADENCES = [("month", 1, "monthly"), ("year", 1, "yearly"), ("month", 3, "monthly")]

settings.register_profile("pricing-bounded", max_examples=3, stateful_step_count=12, deadline=None,
                          suppress_health_check=list(HealthCheck),
                          phases=(Phase.explicit, Phase.reuse, Phase.generate))
settings.register_profile("pricing-medium", max_examples=15, stateful_step_count=50, deadline=None,
                          suppress_health_check=list(HealthCheck),
                          phases=(Phase.explicit, Phase.reuse, Phase.generate))
settings.register_profile("pricing-long", max_examples=120, stateful_step_count=100, deadline=None,
                          suppress_health_check=list(HealthCheck))
PROFILE = {"long": "pricing-long", "medium": "pricing-medium"}.get(os.environ.get("HYPOTHESIS_PROFILE", ""),
                                                                   "pricing-bounded")
LEDGER_DIR = ""


class Tracked(TrackedSubscription):
    """The model's record of one subscription: its unit price, its seats day by day, when
    its service ended, the usage events accepted for its account."""

    def __init__(self, sub, made: date, unit: int, quantity: int, tiers: PriceTerms | None = None) -> None:
        super().__init__(sub, made)
        self.unit = unit
        self.tiers = tiers  # a price by tiers of seats: its whole price is the tiers' amount
        self.seats: list[tuple[date, int]] = [(made, quantity)]  # (from this day, seats)
        self.served_until: date | None = None  # cancelled now: the last day served
        self.meters = [METER]  # the meters it bills, in the subscription's order
        self.storage_last: date | None = None  # the storage price removed: the last day it bills
        self.dearer_from: date | None = None  # the dearer storage price replacing it: its first day
        self.events: dict[str, tuple[str, date, Decimal]] = {}  # identifier -> (meter, UTC day, value), accepted
        self.sent_at: dict[str, date] = {}  # identifier -> the clock's day it was accepted
        self.moment: dict[str, int] = {}  # identifier -> its timestamp (a retry sends the same)
        # Each receipt's cadence when it was first seen (a resume may anchor the cadence anew
        # later: the receipt was priced on the one it was charged under).
        self.cadences: dict[str, object] = {}
        # Its add-ons: [price id, amount a period, first payment day billing it, last day or None]
        self.extras: list[list] = []

    def extra_on(self, day: date) -> int:
        """The add-ons the payment of the period starting ``day`` bills, a period."""
        return sum(amount for _, amount, first, last in self.extras if first <= day and (last is None or day <= last))

    def cadence_of_receipt(self, receipt):
        return self.cadences.setdefault(receipt.SK, cadence_of(self.read()))

    def whole(self, quantity: int) -> int:
        """The fixed price a period at ``quantity`` seats."""
        return amount_for(self.tiers, quantity) if self.tiers is not None else self.unit * quantity

    def quantities(self) -> set[int]:
        return {q for _, q in self.seats}

    def used(self, start: date, end: date, meter: str = METER) -> Decimal:
        """The model's sum of ``meter``'s events of the UTC days [start, end)."""
        return sum((v for m, d, v in self.events.values() if m == meter and start <= d < end), Decimal(0))

    def fixed_cap(self, cadence, start: date, end: date) -> tuple[int, int]:
        """The fixed fee of [start, end] at the seats held each day (and the pieces
        priced, each rounded on its own)."""
        if self.served_until is not None:
            end = min(end, self.served_until)
        total = pieces = 0
        if self.extra_on(start) and start <= end:  # the add-ons that period's payment bills
            total += period_amount(self.extra_on(start), cadence, start, end)
            pieces += 1
        changes = self.seats + [(date.max, 0)]
        for (since, quantity), (until, _) in itertools.pairwise(changes):
            a, b = max(start, since), min(end, until - timedelta(days=1))
            if a <= b:
                total += period_amount(self.whole(quantity), cadence, a, b)
                pieces += 1
        return total, pieces


class PricingMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        from django.conf import settings as django_settings

        own_table("rpay_pricing", LEDGER_DIR)
        django_settings.PAYMENT_RETRY_DAYS = [1, 3, 5]
        django_settings.RECEIPT_RETENTION_DAYS = 5000
        django_settings.MERCHANT_EVENT_RETENTION_DAYS = 5000
        mail.outbox = []
        self.today = START
        self.clock = DayClock(self.today)
        self.subs: list[Tracked] = []
        self.names = itertools.count()
        self.estimates: dict[str, tuple[str, int, int | None]] = {}  # sub -> (period start, amount, usage qty)
        self.checked_estimates = 0

    def teardown(self) -> None:
        self.clock.stop()
        if os.environ.get("PRICING_MODEL_STATS"):
            print("estimates checked", self.checked_estimates, "usage receipts",
                  sum(1 for t in self.subs for r in self._receipts(t) if r.UsageStart), "with two meters",
                  sum(1 for t in self.subs for r in self._receipts(t) if r.OtherUsage), "storage removed",
                  sum(1 for t in self.subs if t.storage_last), "to usage alone",
                  sum(1 for t in self.subs if t.unit and usage_only(t.read())), "with add-ons",
                  sum(1 for t in self.subs if t.extras), "add-on lines billed",
                  sum(1 for t in self.subs for r in self._receipts(t) for line in r.TaxLines or []
                      if line.Description == "Extra"), "events",
                  sum(len(t.events) for t in self.subs))

    # --- set-up ----------------------------------------------------------------------------

    @initialize(currency=st.sampled_from(sorted(CURRENCIES)), tax_added=st.booleans(),
                first_day=st.integers(0, 40), days=st.lists(st.integers(1, 31), min_size=3, max_size=3),
                seats=st.integers(1, 4), by_tiers=st.booleans(),
                behavior=st.sampled_from([None, "inclusive", "exclusive"]))
    def customers(self, currency: str, tax_added: bool, first_day: int, days: list[int], seats: int,
                  by_tiers: bool, behavior: str | None) -> None:
        self.currency = currency
        unit, yearly, terms, amount_off = CURRENCIES[currency]
        if tax_added:  # VAT on top of the prices (an Italian seller); else Irish VAT included
            prices_exclude_vat()
        # The prices' own tax behaviour (docs/TAX.md "A price's tax behaviour"): the seller's
        # profile's (None), or theirs against it; one for all, as one charge bills them together.
        taxed = {"tax_behavior": behavior}
        self.today = START + timedelta(days=first_day)
        self.clock.move_to(self.today)
        meter_actions.add_meter(METER, "Calls", MeterAggregation.SUM, actor="test")
        access.create_product("API", "Developer API", unit, currency)
        # A metered price per cadence: its usage is billed only with payments of its own
        # interval (rules.price_choice.bills_with); the same tiers, so the same amounts.
        self.metered = {(interval, count): price_actions.add_price(
            "API", replace(terms, interval=interval, interval_count=count), actor="test", nickname=f"calls {name}",
            meter=METER, **taxed) for interval, count, name in CADENCES}
        self.terms = terms_of(self.metered["month", 1])
        self.metered_ids = {p.PriceId for p in self.metered.values()}
        meter_actions.add_meter(STORAGE_METER, "Storage", MeterAggregation.SUM, actor="test")
        self.storage = price_actions.add_price("API", PriceTerms(currency, unit_amount=Decimal(3)), actor="test",
                                               nickname="storage", meter=STORAGE_METER, **taxed)
        self.storage_terms = terms_of(self.storage)
        # the storage's dearer price, which replaces it at a period's end
        self.dearer = price_actions.add_price("API", PriceTerms(currency, unit_amount=Decimal(5)), actor="test",
                                              nickname="dearer storage", meter=STORAGE_METER, **taxed)
        self.dearer_terms = terms_of(self.dearer)
        # Add-ons (docs/PRICING.md "Add-ons"): another product's fixed price of each cadence
        access.create_product("EXTRA", "Extra", unit, currency, add_on=True)
        self.extra_prices = {(interval, count): price_actions.add_price(
            "EXTRA", PriceTerms(currency, unit_amount=Decimal(unit // 2 or 1), interval=interval,
                               interval_count=count), actor="test", nickname=f"extra {name}", **taxed)
            for interval, count, name in CADENCES}
        access.create_coupon("PCT20", actor="staff", percent_off=20, duration="forever")
        access.create_coupon("AMT", actor="staff", amount_off=amount_off, currency=currency, duration="repeating",
                             duration_payments=2)
        # The monthly customer's seats: a price a seat, or a price by volume tiers of seats
        # (docs/PRICING.md "Seats priced by tiers": from the third seat every seat costs less,
        # so more seats can be credited).
        seat_tiers = PriceTerms(currency, BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                                tiers=(Tier(2, Decimal(unit)), Tier(None, Decimal(unit * 3 // 5)))) if by_tiers else None
        seat_price = price_actions.add_price("API", seat_tiers, actor="test", nickname="seats by volume",
                                             unit_label="seat", min_quantity=1, max_quantity=5, **taxed) \
            if seat_tiers else None
        for (interval, count, _), day, amount in zip(CADENCES, days, (unit, yearly, unit * 3), strict=True):
            quantity = seats if interval == "month" and count == 1 else 1
            tiers = seat_tiers if interval == "month" and count == 1 else None
            token = get_gateway().tokenize_card(GOOD, 12, 2040, "123")
            seat_terms = {"price_id": seat_price.PriceId, "quantity": quantity, "unit_amount": None} if tiers \
                else {"quantity": quantity, "unit_amount": amount}
            started = actions.subscribe(
                access.create_account(f"p{next(self.names)}@example.com"), sku="API", product_name="Developer API",
                payment_day=day, amount=amount_for(tiers, quantity) if tiers else amount * quantity, currency=currency,
                card=token, today=self.today, actor="customer", interval=interval, interval_count=count, **seat_terms,
                **taxed)
            assert started.started
            sub = attach_metered_price(started.sub, self.metered[interval, count].PriceId, actor="test")
            tracked = Tracked(sub, self.today, amount, quantity, tiers)
            if interval == "month" and count == 1:
                self._bill_storage(tracked)
            self.subs.append(tracked)
        # A customer of the monthly metered price alone (docs/USAGE.md "Usage alone"): no
        # fixed fee, its first payment a receipt of 0, each later one its usage only.
        token = get_gateway().tokenize_card(GOOD, 12, 2040, "123")
        started = actions.subscribe(
            access.create_account(f"p{next(self.names)}@example.com"), sku="API", product_name="Developer API",
            payment_day=days[0], amount=0, currency=currency, card=token, today=self.today, actor="customer",
            metered_price_id=self.metered["month", 1].PriceId, **taxed)
        assert started.started and usage_only(started.sub)
        alone = Tracked(started.sub, self.today, 0, 1)
        self._bill_storage(alone)
        self.subs.append(alone)

    def _bill_storage(self, tracked: Tracked) -> None:
        attach_metered_price(tracked.read(), self.storage.PriceId, actor="test")
        tracked.meters.append(STORAGE_METER)

    # --- helpers -----------------------------------------------------------------------

    def _live(self) -> list[Tracked]:
        return [t for t in self.subs if t.read().is_live]

    def _receipts(self, tracked: Tracked) -> list:
        return sorted((r for r in access.get_receipts_by_account(tracked.account_id, START, date(2100, 1, 1))
                       if r.sub_id == tracked.sub_id), key=lambda r: (r.PeriodStart or "", r.Kind or ""))

    def _move_to(self, day: date) -> None:
        self.clock.move_to(day)
        self.today = day

    def _live_until(self, target: date) -> None:
        """Jump from payment day to payment day up to ``target``: on each, read the upcoming
        payment of what is due, then run."""
        while self.today < target:
            due = [date.fromisoformat(s.NextPaymentDate) for s in (t.read() for t in self.subs)
                   if s.is_live and s.NextPaymentDate]
            # nothing is due between two payment days: the run of each is enough
            self._move_to(min([d for d in due if d > self.today] + [target]))
            self._run()

    def _run(self) -> None:
        self.estimates.clear()
        for tracked in self.subs:
            sub = tracked.read()
            if sub.Status == SubscriptionStatus.ACTIVE and sub.NextPaymentDate == self.today.isoformat():
                tax = access.tax_terms(sub)
                charge = payments.next_charge(sub, seller=tax.seller)  # the upcoming endpoint's function
                shown = upcoming_object(sub, charge, tax)
                assert sum(line["amount"] + line["tax"] for line in shown["lines"]) == shown["amount_due"]
                self.estimates[tracked.sub_id] = (charge.period_start.isoformat(), charge.amount,
                                                  [u.quantity for u in charge.usages])
        summary = batches.run_payments(run_date=self.today, workers=1, catch_up_days=0)
        assert summary.counts["differences"] == 0, summary.differences
        assert summary.counts.get("errors", 0) == 0, summary.counts
        for tracked in self.subs:
            if tracked.sub_id not in self.estimates:
                continue
            start, amount, quantity = self.estimates[tracked.sub_id]
            [receipt] = [r for r in self._receipts(tracked) if r.PeriodStart == start and not r.Kind]
            assert (receipt.ProcessedAmount, [q for _, _, q, _ in receipt_usages(receipt)]) == (amount, quantity), \
                "the upcoming payment is not what was charged"
            self.checked_estimates += 1

    # --- rules -----------------------------------------------------------------------------

    @rule(data=st.data())
    def next_payment_day(self, data: st.DataObject) -> None:
        """The clock jumps to a subscription's next payment day (the runs of the payment
        days before it on the way), at most four months on."""
        live = self._live()
        if live:
            sub = data.draw(st.sampled_from(live)).read()
            # at most four months a step (a yearly renewal: over several steps, in the long runs)
            day = date.fromisoformat(sub.NextPaymentDate)
            self._live_until(min(max(day, self.today + timedelta(days=1)), self.today + timedelta(days=120)))

    @rule(days=st.integers(1, 20))
    def days_pass(self, days: int) -> None:
        self._live_until(self.today + timedelta(days=days))

    @rule()
    def payment_run_again(self) -> None:
        made = len(get_gateway().charges_made())
        summary = batches.run_payments(run_date=self.today, workers=1, catch_up_days=0)
        assert summary.counts["differences"] == 0
        assert len(get_gateway().charges_made()) == made  # nothing left to charge today

    @rule(data=st.data(), quantity=st.integers(1, 5))
    def change_seats(self, data: st.DataObject, quantity: int) -> None:
        tracked = data.draw(st.sampled_from(self.subs))
        before = tracked.read()
        held = int(before.Quantity or 1)  # read now: the change writes the new seats into ``before``
        try:
            done = seat_actions.change_quantity(before, quantity, "customer", today=self.today)
        except (SeatsRefused, SwitchRefused, ConditionFailed):
            after = tracked.read()
            assert (after.Quantity, after.PaymentAmount, after.PaidThroughDate) == \
                (before.Quantity, before.PaymentAmount, before.PaidThroughDate)
            return
        after = tracked.read()
        assert int(after.PaymentAmount) == tracked.whole(quantity) + tracked.extra_on(
            date.fromisoformat(after.NextPaymentDate))
        # charged when the whole price goes up, credited when it goes down (more seats may
        # cost less by volume tiers)
        assert (done.quote.new_price - done.quote.old_price) == tracked.whole(quantity) - tracked.whole(held)
        if done.quote.new_price >= done.quote.old_price:
            assert done.credited == 0
        else:
            assert done.charged == 0 and done.credited <= seat_actions.credited_now(before, done.quote)
        tracked.seats.append((self.today, quantity))

    @rule(data=st.data(), events=st.lists(
        st.tuples(st.integers(0, WINDOW_DAYS + 3), st.integers(0, 86399), st.integers(0, 400),
                  st.booleans()), min_size=1, max_size=5))
    def usage_events(self, data: st.DataObject, events: list[tuple[int, int, int, bool]]) -> None:
        """A batch of events for one customer: each late by any number of days (out of
        order, within the window or past it), new or a repeat of an identifier sent."""
        self._send(data, data.draw(st.sampled_from(self.subs)), events)

    @rule(data=st.data(), values=st.lists(st.integers(0, 400), min_size=1, max_size=3))
    def usage_events_now(self, data: st.DataObject, values: list[int]) -> None:
        """Events of today for every customer (each period has some to bill)."""
        for tracked in self.subs:
            self._send(data, tracked, [(0, 43200, value, False) for value in values])

    def _send(self, data: st.DataObject, tracked: Tracked, events: list[tuple[int, int, int, bool]]) -> None:
        name = data.draw(st.sampled_from(tracked.meters))
        meter = get_meter(name)
        now = datetime(self.today.year, self.today.month, self.today.day, 12, tzinfo=UTC)
        for days_late, second, value, repeat in events:
            recent = sorted(i for i, sent in tracked.sent_at.items()
                            if (self.today - sent).days < WINDOW_DAYS - 5 and tracked.events[i][0] == name)
            identifier = data.draw(st.sampled_from(recent)) if repeat and recent else f"ev{next(self.names)}"
            at = int((now - timedelta(days=days_late)).timestamp()) - 43200 + second
            at = tracked.moment.get(identifier, min(at, int(now.timestamp())))
            days_late = (now - datetime.fromtimestamp(at, tz=UTC)).days
            day = datetime.fromtimestamp(at, tz=UTC).date()
            watermark = billed_through(tracked.account_id, name)
            try:
                answer = meter_actions.record_usage(meter, customer=tracked.account_id, identifier=identifier,
                                                    value=value, timestamp=at, now=now)
            except EventRefused as refused:
                if refused.reason == "period_billed":
                    assert watermark is not None and day.isoformat() <= watermark
                else:
                    assert refused.reason == "timestamp_too_old" and days_late >= WINDOW_DAYS, refused.reason
                continue
            if identifier in tracked.events:
                assert answer == "duplicate"
                continue
            assert answer == "accepted", answer
            assert watermark is None or day.isoformat() > watermark, "an event counted in a billed day"
            tracked.events[identifier] = (name, day, Decimal(value))
            tracked.sent_at[identifier] = self.today
            tracked.moment[identifier] = at

    @rule(data=st.data(), now=st.booleans())
    def remove_storage(self, data: st.DataObject, now: bool) -> None:
        """The storage price leaves at the end of the period paid for, or today: its usage
        through that day is billed by the next payment (a retry, a cancel's last charge),
        none after."""
        billing = [t for t in self._live() if STORAGE_METER in t.meters and t.storage_last is None]
        if not billing:
            return
        tracked = data.draw(st.sampled_from(billing))
        sub = meter_actions.remove_metered_price(tracked.read(), self.storage.PriceId, actor="test", now=now)
        tracked.storage_last = date.fromisoformat(sub.metered_ends[self.storage.PriceId])

    @rule(data=st.data(), now=st.booleans())
    def storage_price_changed(self, data: st.DataObject, now: bool) -> None:
        """The storage's dearer price replaces it at the end of the period paid for (or
        today): the storage is billed at the old price through that day, at the new after."""
        billing = [t for t in self._live() if STORAGE_METER in t.meters and t.storage_last is None]
        if not billing:
            return
        tracked = data.draw(st.sampled_from(billing))
        sub = meter_actions.replace_metered_price(tracked.read(), self.storage.PriceId, self.dearer.PriceId,
                                                  actor="test", now=now)
        tracked.storage_last = date.fromisoformat(sub.metered_ends[self.storage.PriceId])
        tracked.dearer_from = date.fromisoformat(sub.metered_starts[self.dearer.PriceId])

    @rule(data=st.data(), dearer=st.booleans())
    def to_usage_alone(self, data: st.DataObject, dearer: bool) -> None:
        """A plan switched to usage alone from its next payment (docs/USAGE.md "Usage
        alone"): of its own calls price, or of the dearer storage price, which then replaces
        the storage from that day. Its fee is 0 from then on; the usage is billed as before."""
        plans = [t for t in self._live() if not usage_only(t.read())]
        if not plans:
            return
        tracked = data.draw(st.sampled_from(plans))
        sub = tracked.read()
        replacing = dearer and STORAGE_METER in tracked.meters and tracked.storage_last is None
        target = self.dearer.PriceId if replacing else str(sub.MeteredPriceId)
        try:
            done = switch_actions.switch(sub, target, today=self.today, actor="customer")
        except (SwitchRefused, ConditionFailed):
            after = tracked.read()
            assert (after.PaymentAmount, after.metered_price_ids) == (sub.PaymentAmount, sub.metered_price_ids)
            return
        effective = done.quote.effective
        assert not done.quote.upgrade and done.charged == 0 and effective.isoformat() == sub.NextPaymentDate
        assert usage_only(tracked.read())
        tracked.seats.append((effective, 0))  # no fee from the next payment
        if replacing:
            tracked.storage_last, tracked.dearer_from = effective - timedelta(days=1), effective

    @rule(data=st.data())
    def add_on(self, data: st.DataObject) -> None:
        """An add-on added from the next payment (docs/PRICING.md "Add-ons"): nothing
        charged now; the next payment's fee the plan's and the add-ons'."""
        plans = [t for t in self._live() if not usage_only(t.read())]
        if plans:
            self._change_add_on(data.draw(st.sampled_from(plans)), remove=False)

    @precondition(lambda self: any(t.extras for t in self.subs))
    @rule(data=st.data())
    def remove_add_on(self, data: st.DataObject) -> None:
        """An add-on removed from the next payment: kept, paid for, until then."""
        self._change_add_on(data.draw(st.sampled_from([t for t in self.subs if t.extras])), remove=True)

    def _change_add_on(self, tracked: Tracked, *, remove: bool) -> None:
        sub = tracked.read()
        cadence = cadence_of(sub)
        price = self.extra_prices[str(cadence.interval), cadence.count]
        charged = len(get_gateway().charges_made())
        try:
            if remove:
                done = add_on_actions.remove(sub, price.PriceId, today=self.today, actor="customer")
            else:
                done = add_on_actions.add(sub, price.PriceId, today=self.today, actor="customer")
        except (AddOnRefused, ConditionFailed):
            after = tracked.read()
            assert (after.PaymentAmount, add_ons_of(after)) == (sub.PaymentAmount, add_ons_of(sub))
            return
        assert len(get_gateway().charges_made()) == charged  # nothing now
        effective = date.fromisoformat(sub.NextPaymentDate)
        assert done.effective == effective and done.new_price - done.old_price == (-1 if remove else 1) * done.amount
        if remove:
            [entry] = [e for e in tracked.extras if e[0] == price.PriceId and e[3] is None]
            if entry[2] >= effective:  # never billed: gone
                tracked.extras.remove(entry)
            else:
                entry[3] = effective - timedelta(days=1)
        else:
            kept = [e for e in tracked.extras if e[0] == price.PriceId and e[3] is not None and e[3] >= self.today]
            if kept:  # removed, still paid for: kept on
                kept[0][3] = None
            else:
                tracked.extras.append([price.PriceId, done.amount, effective, None])
        assert int(tracked.read().PaymentAmount) == done.new_price

    @rule(data=st.data(), code=st.sampled_from(["PCT20", "AMT"]))
    def coupon(self, data: st.DataObject, code: str) -> None:
        tracked = data.draw(st.sampled_from(self.subs))
        sub = tracked.read()
        if not sub.is_live:
            return
        with contextlib.suppress(access.CouponRefused, ConditionFailed):
            coupon_actions.give_coupon(sub, access.get_coupon(code), today=self.today, actor="staff")

    @rule(data=st.data(), skip=st.integers(1, 2))
    def pause(self, data: st.DataObject, skip: int) -> None:
        tracked = data.draw(st.sampled_from(self.subs))
        sub = tracked.read()
        try:
            resume = pause_end(sub, self.today, payments=skip)
            lifecycle_actions.pause(sub, resume=resume, today=self.today, actor="customer")
        except (PauseRefused, ConditionFailed):
            return

    @rule(data=st.data())
    def resume(self, data: st.DataObject) -> None:
        sub = data.draw(st.sampled_from(self.subs)).read()
        if sub.is_live and state_of(sub, self.today).kind == "paused":
            with contextlib.suppress(PauseRefused, ConditionFailed):
                lifecycle_actions.resume(sub, today=self.today, actor="customer")

    @precondition(lambda self: len(self._live()) > 1)
    @rule(data=st.data(), now=st.booleans())
    def cancel(self, data: st.DataObject, now: bool) -> None:
        tracked = data.draw(st.sampled_from(self._live()))
        sub = tracked.read()
        if now:
            lifecycle_actions.cancel_now(sub, today=self.today, actor="customer", reason="other")
            tracked.served_until = self.today
        elif state_of(sub, self.today).kind != "cancelling":
            lifecycle_actions.cancel_at_period_end(sub, today=self.today, actor="customer", reason="other")

    @rule(data=st.data())
    def staff_refund(self, data: st.DataObject) -> None:
        """Staff refund part of a paid invoice: shared over its lines, or of one line alone
        (at most what it holds), as the staff form offers."""
        held = [r for t in self.subs for r in self._receipts(t)
                if r.ChargeId and r.Net is not None and r.ProcessedAmount > r.RefundedAmount]
        if not held:
            return
        receipt = data.draw(st.sampled_from(held))
        lines = access.refundable_lines(receipt) or []
        line = data.draw(st.sampled_from([None, *(n for n, (_, left) in enumerate(lines) if left)]))
        most = receipt.ProcessedAmount - receipt.RefundedAmount if line is None else lines[line][1]
        amount = data.draw(st.integers(1, most))
        done = refunds.refund_receipt(receipt, amount, request_id=f"staff-{next(self.names)}", actor="staff:ann",
                                      expected_refunded=int(receipt.RefundedAmount), line=line)
        assert done.amount == amount and done.receipt.Refunds[-1].Line == line

    # --- checks -------------------------------------------------------------------------

    @invariant()
    def everything_adds_up(self) -> None:
        gateway = get_gateway()
        for tracked in self.subs:
            receipts = self._receipts(tracked)
            charges = {c.charge_id: c for c in gateway.list_charges(START, date(2100, 1, 1), sub_id=tracked.sub_id)
                       if c.succeeded}
            for charge in charges.values():  # M3
                assert charge.metadata["period_start"] <= charge.created[:10] <= self.today.isoformat()
            paid = [r.ChargeId for r in receipts if r.ChargeId]
            assert sorted(paid) == sorted(charges), "a charge without its receipt, or a receipt without its charge"
            self._usage_counted_once(tracked, [r for r in receipts if r.UsageStart])
            kept = cap = slack = 0
            for receipt in receipts:
                self._receipt_adds_up(tracked, receipt, charges)
                kept += receipt.ProcessedAmount - receipt.RefundedAmount
                rate = Decimal(receipt.TaxRate or 0) if receipt.PricesIncludeTax is False else Decimal(0)
                usage = sum(amount for _, _, _, amount in receipt_usages(receipt))
                if receipt.Kind:  # seats: within a period a regular receipt paid, priced there
                    # a receipt of usage alone: its usage
                    cap += int((usage * (1 + rate / 100)).to_integral_value()) if rate else usage
                    slack += 2 if usage else 0
                    continue
                fixed, pieces = tracked.fixed_cap(tracked.cadence_of_receipt(receipt),
                                                  date.fromisoformat(receipt.PeriodStart),
                                                  date.fromisoformat(receipt.PeriodEnd))
                net = fixed + usage
                cap += int((net * (1 + rate / 100)).to_integral_value()) if rate else net
                slack += 2 * pieces + 2
            # never more than the seats held day by day and the usage billed (M1, M7, M8)
            assert kept <= cap + slack, f"kept {kept}, the days and usage cost {cap}: " + repr(
                [(r.Kind, r.PeriodStart, r.PeriodEnd, r.ProcessedAmount, r.RefundedAmount, r.Net, r.UsageAmount)
                 for r in receipts]) + repr(tracked.seats) + repr(cadence_of(tracked.read()))

    def _usage_counted_once(self, tracked: Tracked, billed: list) -> None:
        spans = sorted((r.UsageStart, r.UsageEnd) for r in billed)
        # Exactly once: an event of a day the subscription served, once that day is closed,
        # is in a receipt's usage: paused days, a cancel's last period (now, or at its end,
        # billed by the next run) included; not the days before it was made (no
        # subscription, no usage to bill).
        for meter in tracked.meters:
            closed = billed_through(tracked.account_id, meter)
            left = {i for i, (m, day, _) in tracked.events.items() if m == meter and closed and tracked.made <= day
                    and day.isoformat() <= closed and not any(a <= day.isoformat() < b for a, b in spans)}
            assert not left, f"{meter}'s events closed and never billed: {sorted(left)} {spans}"
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, f"usage billed twice: {spans}"
        for receipt in billed:
            start, end = date.fromisoformat(receipt.UsageStart), date.fromisoformat(receipt.UsageEnd)
            quantity = math.ceil(tracked.used(start, end))
            # in the subscription's order, which a switch to the dearer storage alone puts first
            usages = receipt_usages(receipt)
            [(price_id, _, billed_quantity, amount)] = [u for u in usages if u[1] == METER]
            assert price_id in self.metered_ids
            assert billed_quantity == quantity, "an event not counted once"
            assert amount == amount_for(self.terms, quantity)
            # the second meter's usage of the same days, on the same charge: at its price
            # through its last day (once removed or replaced), at the dearer one from its first
            others = sorted(u for u in usages if u[1] == STORAGE_METER)
            assert others == sorted(self._storage_billed(tracked, start, end)), "a meter's usage not billed once"

    def _storage_billed(self, tracked: Tracked, start: date, end: date) -> list[tuple[str, str, int, int]]:
        """The storage a receipt whose usage days are [start, end) bills, price by price."""
        if STORAGE_METER not in tracked.meters:
            return []
        billed = []
        until = end if tracked.storage_last is None else min(end, tracked.storage_last + timedelta(days=1))
        if start < until:
            stored = math.ceil(tracked.used(start, until, STORAGE_METER))
            billed.append((self.storage.PriceId, STORAGE_METER, stored, amount_for(self.storage_terms, stored)))
        since = max(start, tracked.dearer_from) if tracked.dearer_from else end
        if since < end:
            stored = math.ceil(tracked.used(since, end, STORAGE_METER))
            billed.append((self.dearer.PriceId, STORAGE_METER, stored, amount_for(self.dearer_terms, stored)))
        return billed

    def _receipt_adds_up(self, tracked: Tracked, receipt, charges: dict) -> None:
        if receipt.ChargeId:
            charge = charges[receipt.ChargeId]
            assert charge.amount == receipt.ProcessedAmount, "a receipt's total is not its charge"
            refunds = gateway_refunds = sum(r.amount for r in get_gateway().refunds_of(receipt.ChargeId))
            assert receipt.RefundedAmount == gateway_refunds == refunds <= receipt.ProcessedAmount  # M5
        assert receipt.RefundedAmount == sum(int(r.Amount) for r in receipt.Refunds or [])
        if receipt.Net is not None:
            assert receipt.Net + receipt.Tax == receipt.ProcessedAmount
            document = invoice_of(receipt)
            if document is not None:
                assert sum(line.tax for line in document.lines) == receipt.Tax, "the lines' tax is not the tax"
                assert sum(line.gross for line in document.lines) == receipt.ProcessedAmount
            self._credit_notes_add_up(receipt)
        if receipt.Kind or not receipt.ChargeId:
            return
        meta = charges[receipt.ChargeId].metadata
        price = int(meta["price"])
        start = date.fromisoformat(receipt.PeriodStart)
        assert price in {tracked.whole(q) + tracked.extra_on(start) for q in tracked.quantities()}, \
            "a price the seats and add-ons never had"
        # the add-on billed on a line of its own (the model's one add-on product)
        assert [line.Description for line in receipt.TaxLines or []].count("Extra") == (
            1 if tracked.extra_on(start) else 0), "an add-on billed without its line, or a line without it"
        start, end = date.fromisoformat(receipt.PeriodStart), date.fromisoformat(receipt.PeriodEnd)
        fixed = period_amount(price, tracked.cadence_of_receipt(receipt), start, end)
        off = int(receipt.DiscountAmount or 0)
        if receipt.CouponCode:
            coupon = access.get_coupon(receipt.CouponCode)
            assert off == coupon_rules.discount(fixed, percent_off=coupon.PercentOff, amount_off=coupon.AmountOff)
        else:
            assert off == 0
        before_added_tax = receipt.ProcessedAmount if receipt.PricesIncludeTax is not False else receipt.Net
        usage = sum(amount for _, _, _, amount in receipt_usages(receipt))
        assert before_added_tax == fixed - off + usage, "not the days' fee and usage"


    @staticmethod
    def _credit_notes_add_up(receipt) -> None:
        notes = {note.RefundId: note for note in access.credit_notes_of_receipt(receipt)}
        assert len(notes) == len(receipt.Refunds or []), "a refund of an invoice without its credit note"
        gross, tax, before = int(receipt.ProcessedAmount), int(receipt.Tax), 0
        for refund in receipt.Refunds or []:
            note = notes[refund.RefundId]
            share = refund_share(tax=tax, gross=gross, earlier=[before], refund=int(refund.Amount))
            assert (-note.Gross, -note.Tax) == (share.gross, share.tax)
            assert sum(int(line.Gross) for line in note.TaxLines) == note.Gross
            assert sum(int(line.Tax) for line in note.TaxLines) == note.Tax
            assert all(int(line.Gross) <= int(line.Tax) <= 0 for line in note.TaxLines), "a line's net below 0"
            if refund.Line is not None:
                assert len(note.TaxLines) == 1, "a refund of one line credited others"
            before += int(refund.Amount)
        if receipt.TaxLines and sum(int(line.Gross) for line in receipt.TaxLines) == gross:
            left = lines_left([InvoiceLine(int(line.Gross), int(line.Tax)) for line in receipt.TaxLines],
                              refunds_so_far(receipt))
            assert all(held >= 0 for held in left) and sum(left) == gross - before


def test_money_rules_hold_over_seats_cadences_and_usage(moto_table, tmp_path) -> None:
    global LEDGER_DIR
    LEDGER_DIR = str(tmp_path)
    run_state_machine_as_test(PricingMachine, settings=settings.get_profile(PROFILE))
