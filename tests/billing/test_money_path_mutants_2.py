"""Behaviour of the money path that its mutants showed untested (docs/MUTATION.md), second
part: the charges that bought nothing and are refunded whole. An upgrade's (or more
seats') charge whose change was not made is recorded for the days it paid, with the tax it
carried, and refunded once under its own key, with its reason and actor; a charge that
lands after its account was closed is refunded, whatever staff refunded of it already.
Written against what is recorded, refunded and said, not private helpers."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import time_machine
from django.conf import settings as conf
from django.core import mail

from billing import access
from billing.actions import seats, switch
from billing.actions import subscriptions as subscribing
from billing.batches.reconcile import reconcile
from billing.models import AuditAction
from billing.operations import payments, refunds
from billing.operations.outcomes import PaymentStatus
from core.money import format_with_code
from core.payments.gateway import get_gateway
from tests.builders import card, fresh, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

MADE = date(2027, 3, 10)  # subscribed on the 10th, payment day 10: paid through 9 April
MID = date(2027, 3, 25)  # 16 of the period's 31 days left: an upgrade 1000 -> 2000 costs 516


def at(day: date):
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


@pytest.fixture
def catalog(moto_table) -> None:
    access.create_product("NEWS", "News", 1000, "USD")
    access.create_product("NEWS-PLUS", "News Plus", 2000, "USD")


def subscribed(email: str, sku: str = "NEWS", country: str | None = None):
    account = access.create_account(email)
    account.BillingCountry = country
    with at(MADE):
        started = subscribing.subscribe(
            account, sku=sku, product_name="News", payment_day=10, amount=1000,
            currency="USD", card=card(), today=MADE, actor="customer")
    assert started.started
    return started.sub


def crashed_switch(sub, monkeypatch):
    """An upgrade charged, then the process died before the switch was recorded: the
    charge, as the gateway has it."""
    with at(MID):
        monkeypatch.setattr(access, "switch_subscription", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("down")))
        with pytest.raises(RuntimeError):
            switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer")
        monkeypatch.undo()
    [made] = [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "switch"]
    return get_gateway().charge_status(made["charge_id"])


def undone_receipts(sub, kind: str = "switch"):
    return [r for r in receipts_of(sub) if r.Kind == kind and r.PeriodStart == MID.isoformat()]


def test_an_unapplied_switch_is_recorded_for_its_days_with_the_tax_it_carried_and_refunded_once(
        catalog, monkeypatch) -> None:
    from tests.billing.test_tax_ledger import use_seller

    use_seller(monkeypatch, include=False)  # charged on prices before tax
    sub = subscribed("undone@example.com", country="FR")  # a consumer in France: its rate, through the OSS
    charge = crashed_switch(sub, monkeypatch)
    use_seller(monkeypatch, include=True)  # the seller's setting changed before the reconciliation
    mail.outbox = []
    with at(MID):
        _, [difference] = reconcile(MID, MID, fix=True, today=MID)
    assert (difference.kind, difference.fixed) == ("charge of a switch not made", True)
    assert difference.detail.endswith(f"; refunded {format_with_code(charge.amount, 'USD')}")
    [undone] = undone_receipts(sub)
    # the days it paid for, the product it was for, the charge's own tax terms (not today's setting)
    assert (undone.SKU, undone.PeriodStart, undone.PeriodEnd, undone.BillingDate) == (
        "NEWS-PLUS", "2027-03-25", "2027-04-09", "2027-03-25")
    assert (undone.ProcessedAmount, undone.RefundedAmount) == (charge.amount, charge.amount)
    assert (undone.PricesIncludeTax, undone.BuyerCountry, undone.TaxCountry) == (False, "FR", "FR")
    assert (undone.Net, undone.Tax, undone.TaxRate) == (
        int(charge.metadata["net"]), int(charge.metadata["tax"]), charge.metadata["tax_rate"])
    assert undone.TaxLines[0].PeriodEnd == "2027-04-09"
    # refunded whole, once, under the unapplied switch's own key, with its reason and actor
    [refund] = get_gateway().refunds_made(charge.charge_id)
    assert (refund["idempotency_key"], refund["amount"]) == (f"refund:{charge.charge_id}:switch-undone", charge.amount)
    [entry] = undone.Refunds
    assert (entry.Actor, entry.Reason, entry.Amount) == ("reconcile", "switch of product not made", charge.amount)
    paid = [e for e in access.get_events_by_account(sub.account_id) if e.Action == AuditAction.PAYMENT_SUCCEEDED]
    assert [e.Actor for e in paid if e.After["Receipt"] == undone.SK] == ["reconcile"]
    assert [m for m in mail.outbox if m.subject.startswith("Refund")]
    # asked again (another reconciliation, a retried page): refunded already, nothing moves
    with at(MID):
        assert refunds.refund_unapplied_switch(fresh(sub), charge, actor="reconcile") == 0
    assert len(get_gateway().refunds_made(charge.charge_id)) == 1


@pytest.mark.parametrize(("staff_refunded", "refunded_now"), [(515, 1), (516, 0), (0, 516)])
def test_an_unapplied_switch_refunds_what_is_left_of_its_charge(catalog, monkeypatch, staff_refunded,
                                                                  refunded_now) -> None:
    # Its receipt was recorded (as a run would, before it died) and staff refunded part of
    # it: the rest is refunded, under the unapplied switch's key; nothing if none is left.
    sub = subscribed(f"left{staff_refunded}@example.com")
    charge = crashed_switch(sub, monkeypatch)
    assert charge.amount == 516
    with at(MID):
        receipt, created = access.create_receipt(
            fresh(sub), billing_date=MID, amount=charge.amount, currency="USD", charge_id=charge.charge_id,
            retention_days=conf.RECEIPT_RETENTION_DAYS, period_end=date(2027, 4, 9),
            sku=charge.metadata["sku"], kind="switch")
        assert created
        if staff_refunded:
            refunds.refund_receipt(receipt, staff_refunded, request_id="staff-1", actor="staff")
        assert refunds.refund_unapplied_switch(fresh(sub), charge, actor="reconcile") == refunded_now
    undone_keys = [(r["idempotency_key"], r["amount"]) for r in get_gateway().refunds_made(charge.charge_id)
                   if r["idempotency_key"].endswith(":switch-undone")]
    assert undone_keys == ([(f"refund:{charge.charge_id}:switch-undone", refunded_now)] if refunded_now else [])
    [undone] = undone_receipts(sub)
    assert undone.RefundedAmount == 516


def test_an_unapplied_change_of_seats_is_refunded_with_its_own_reason(moto_table, monkeypatch) -> None:
    with at(MADE):
        started = subscribing.subscribe(
            access.create_account("seats@example.com"), sku="TEAM", product_name="Team", payment_day=10,
            amount=1000, currency="USD", card=card(), today=MADE, actor="customer")
    sub = started.sub
    with at(MID):
        monkeypatch.setattr(access, "change_seats", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("down")))
        with pytest.raises(RuntimeError):
            seats.change_quantity(fresh(sub), 2, "customer", today=MID)
        monkeypatch.undo()
        _, [difference] = reconcile(MID, MID, fix=True, today=MID)
    assert difference.fixed
    [undone] = undone_receipts(sub, "seats")
    assert (undone.PeriodEnd, undone.RefundedAmount, undone.ProcessedAmount) == ("2027-04-09", 516, 516)
    [entry] = undone.Refunds
    assert (entry.Actor, entry.Reason) == ("reconcile", "change of seats not made")


# --- a charge that lands after its account was closed ----------------------------------

D = date(2027, 3, 15)


def test_a_charge_landing_after_the_close_is_refunded_by_the_batch_under_the_cancels_key(moto_table) -> None:
    [sub] = seed_due(1, due=D)
    read_by_the_run = fresh(sub)
    access.cancel_subscription(fresh(sub), reason=access.ACCOUNT_CLOSED_REASON, actor="customer")
    out = payments.take_payment(read_by_the_run, run_date=D)
    assert out.reason == "refunded: the account was closed"
    [receipt] = receipts_of(sub)
    [refund] = get_gateway().refunds_made(receipt.ChargeId)
    assert refund["idempotency_key"] == f"refund:{receipt.ChargeId}:cancel-{sub.sub_id}"
    [entry] = receipt.Refunds
    assert (entry.Actor, entry.Reason, entry.Amount) == ("batch", "charged after the account was closed", 999)


@pytest.mark.parametrize(("staff_refunded", "refunded_now"), [(998, 1), (999, 0)])
def test_a_charge_replayed_after_the_close_refunds_only_what_staff_left(moto_table, staff_refunded,
                                                                        refunded_now) -> None:
    # The run charged and wrote the receipt, then died before its advance; the account was
    # closed and staff refunded (part of) the charge; the next run replays the charge's key.
    [sub] = seed_due(1, due=D)
    metadata = {"account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU, "billing_date": D.isoformat(),
                "period_start": D.isoformat(), "period_end": "2027-04-14", "attempt": "0"}
    charged = get_gateway().charge(sub.PaymentDetails.Token, 999, "USD", f"{sub.sub_id}:{D}:0", metadata)
    receipt, created = access.create_receipt(sub, billing_date=D, amount=999, currency="USD",
                                             charge_id=charged.charge_id, period_end=date(2027, 4, 14),
                                             retention_days=conf.RECEIPT_RETENTION_DAYS)
    assert created
    read_by_the_run = fresh(sub)
    access.cancel_subscription(fresh(sub), reason=access.ACCOUNT_CLOSED_REASON, actor="customer")
    refunds.refund_receipt(receipt, staff_refunded, request_id="staff-1", actor="staff")
    out = payments.record_paid_charge(read_by_the_run, charged, run_date=D)
    assert (out.status, out.reason) == (PaymentStatus.SKIPPED, "refunded: the account was closed")
    batch_refunds = [r["amount"] for r in get_gateway().refunds_made(charged.charge_id)
                     if r["idempotency_key"].endswith(f":cancel-{sub.sub_id}")]
    assert batch_refunds == ([refunded_now] if refunded_now else [])
    assert receipts_of(sub)[0].RefundedAmount == 999


# --- days paid and no longer bought: a yearly period's unused share --------------------


def test_fewer_seats_of_a_yearly_plan_months_into_its_year_credit_the_quoted_share(moto_table) -> None:
    # The year was paid in January, two more seats in February (both charges older than
    # three months by June): the credit the quote promised is refunded, from the newest
    # charge that paid the days, the seats' one.
    made, added, later = date(2027, 1, 10), date(2027, 2, 10), date(2027, 6, 10)
    with at(made):
        started = subscribing.subscribe(
            access.create_account("yearly@example.com"), sku="TEAM", product_name="Team", payment_day=10,
            amount=12000, currency="USD", card=card(), today=made, actor="customer", interval="year",
            interval_count=1)
        sub = started.sub
    with at(added):
        seats.change_quantity(fresh(sub), 3, "customer", today=added)
    [seats_receipt] = [r for r in receipts_of(sub) if r.PeriodStart == added.isoformat()]
    with at(later):
        q = seats.quote(fresh(sub), 2, today=later)
        assert q.credit_now > 0
        done = seats.change_quantity(fresh(sub), 2, "customer", today=later)
    assert done.credited == q.credit_now
    [refund] = get_gateway().refunds_made()
    assert (refund["charge_id"], refund["amount"]) == (seats_receipt.ChargeId, q.credit_now)


# --- fewer seats: the credit taken from the charges that paid the days, newest first -----

LATER = date(2027, 4, 1)  # 9 of the period's 31 days left


def grown_team(email: str):
    """One seat from 10 March ($10.00 a seat), a second added on 10 March, a third on 25
    March: three charges pay the days after 1 April, the third the newest."""
    with at(MADE):
        started = subscribing.subscribe(
            access.create_account(email), sku="TEAM", product_name="Team", payment_day=10, amount=1000,
            currency="USD", card=card(), today=MADE, actor="customer")
        seats.change_quantity(fresh(started.sub), 2, "customer", today=MADE)
    with at(MID):
        seats.change_quantity(fresh(started.sub), 3, "customer", today=MID)
    return started.sub


def refunds_by_charge(sub) -> dict[str, int]:
    return {r.ChargeId: int(r.RefundedAmount or 0) for r in receipts_of(sub)}


def test_fewer_seats_take_the_credit_from_the_newest_charges_first(moto_table) -> None:
    # 2 seats' 9 days: 581, of which each seat charge pays 290; the last unit from the
    # period's own charge. A newer charge of another subscription of the account is not
    # touched.
    sub = grown_team("newest@example.com")
    with at(LATER):
        other = subscribing.subscribe(
            access.get_account(sub.account_id), sku="NEWS", product_name="News", payment_day=1, amount=700,
            currency="USD", card=card(), today=LATER, actor="customer").sub
        q = seats.quote(fresh(sub), 1, today=LATER)
        done = seats.change_quantity(fresh(sub), 1, "customer", today=LATER)
    assert done.credited == q.credit_now == 581
    by_start = {(r.PeriodStart, r.SK.split("#")[3]): r for r in receipts_of(sub)}
    third, second, first = (by_start[("2027-03-25", "TEAM~seats3")], by_start[("2027-03-10", "TEAM~seats2")],
                            by_start[("2027-03-10", "TEAM")])
    assert [int(r.RefundedAmount or 0) for r in (third, second, first)] == [290, 290, 1]
    assert {(r["idempotency_key"], r["amount"]) for r in get_gateway().refunds_made()} == {
        (f"refund:{third.ChargeId}:seats-v4", 290), (f"refund:{second.ChargeId}:seats-v4", 290),
        (f"refund:{first.ChargeId}:seats-v4", 1)}
    assert {(e.Actor, e.Reason) for r in (third, second, first) for e in r.Refunds} == {("customer", "2 fewer seats")}
    assert not [r for r in receipts_of(other) if r.RefundedAmount]


def test_fewer_seats_skip_a_charge_refunded_whole_already(moto_table) -> None:
    sub = grown_team("skipped@example.com")
    [third] = [r for r in receipts_of(sub) if r.PeriodStart == MID.isoformat()]
    refunds.refund_receipt(third, 516, request_id="staff-1", actor="staff")
    with at(LATER):
        done = seats.change_quantity(fresh(sub), 1, "customer", today=LATER)
    assert done.credited == 580  # 290 from each of the older charges: all they paid of those days
    assert sorted(int(r.RefundedAmount or 0) for r in receipts_of(sub)) == [290, 290, 516]
    failed = [e for e in access.get_events_by_account(sub.account_id) if e.Action == AuditAction.STAFF_REFUND_FAILED]
    assert failed == []  # nothing asked of the gateway for the charge with nothing left


def test_a_refused_credit_is_logged_and_taken_from_the_older_charges(moto_table, caplog) -> None:
    # The newest charge was refunded at the processor, not recorded yet: its refund is
    # refused, logged, and the credit comes from the older charges.
    sub = grown_team("refused@example.com")
    [third] = [r for r in receipts_of(sub) if r.PeriodStart == MID.isoformat()]
    get_gateway().refund(third.ChargeId, 516, idempotency_key="dashboard-1")
    with at(LATER), caplog.at_level("WARNING", logger="billing.operations.refunds"):
        done = seats.change_quantity(fresh(sub), 1, "customer", today=LATER)
    assert done.credited == 580
    [warned] = [r.getMessage() for r in caplog.records if r.name == "billing.operations.refunds"]
    assert warned.startswith(f"{sub.sub_id}: the unused days' refund on {third.SK} is not made: ")
    assert warned.endswith("refund exceeds the amount charged")


def test_an_unapplied_switch_whose_refund_is_refused_is_left_for_the_next_reconciliation(
        catalog, monkeypatch, caplog) -> None:
    sub = subscribed("refused-switch@example.com")
    charge = crashed_switch(sub, monkeypatch)
    get_gateway().refund(charge.charge_id, charge.amount, idempotency_key="dashboard-1")  # at the processor
    with at(MID), caplog.at_level("WARNING", logger="billing.operations.refunds"):
        _, [difference] = reconcile(MID, MID, fix=True, today=MID)
    assert (difference.fixed, difference.detail.endswith("; refund not made yet")) == (False, True)
    [warned] = [r.getMessage() for r in caplog.records if r.name == "billing.operations.refunds"]
    assert warned == (f"the unapplied switch {charge.charge_id} of {sub.sub_id} is not refunded yet: "
                      "refund exceeds the amount charged")


# --- when a switch of cadence applies: a longer or equally long period now, a shorter later --


@pytest.mark.parametrize(("interval", "count", "to_interval", "to_count", "now"), [
    ("month", 1, "month", 3, True),  # monthly to quarterly: a longer period, at once
    ("month", 3, "month", 1, False),  # quarterly to monthly: shorter, from the next payment
    ("year", 1, "month", 12, True),  # a year to twelve months: as long, at once
    ("month", 12, "year", 1, True),
    ("week", 2, "month", 1, True),
    ("month", 1, "week", 4, False),  # 4 weeks are shorter than a month
])
def test_a_switch_of_cadence_applies_now_when_its_period_is_at_least_as_long(interval, count, to_interval,
                                                                            to_count, now) -> None:
    from types import SimpleNamespace

    from billing.rules.switch import SwitchTarget, applies_now

    sub = SimpleNamespace(PaymentDay=10, Interval=interval, IntervalCount=count, IntervalAnchor="2027-03-10",
                          PaymentAmount=1000)
    # the new price is lower per period: the timing is the cadence's alone
    target = SwitchTarget("NEWS", "News", 900, "price_x", "USD", to_interval, to_count)
    assert applies_now(sub, target) is now


def test_a_switch_to_a_product_is_to_its_default_price_in_its_currency() -> None:
    from types import SimpleNamespace

    from billing.models import ProductStatus, SubscriptionStatus
    from billing.rules.switch import SwitchRefused, check_switch, quote_switch

    sub = SimpleNamespace(sub_id="s1", SKU="NEWS", PriceId=None, PaymentAmount=1000, Currency="USD", PaymentDay=10,
                          Interval=None, IntervalCount=None, IntervalAnchor=None, PaidThroughDate="2027-04-09",
                          NextPaymentDate="2027-04-10", TrialEnd=None, Status=SubscriptionStatus.ACTIVE,
                          CancelMode=None, PausedFrom=None, Quantity=None, LastSwitchDate=None)
    plus = SimpleNamespace(SKU="NEWS-PLUS", Name="News Plus", PaymentAmount=2000, Currency="usd",
                           Status=ProductStatus.ACTIVE)
    assert check_switch(sub, plus, MID) is plus
    q = quote_switch(sub, plus, [], MID)
    assert (q.new_sku, q.new_name, q.new_price, q.new_price_id, q.choice, q.upgrade, q.effective) == (
        "NEWS-PLUS", "News Plus", 2000, "price_default_NEWS-PLUS", "NEWS-PLUS", True, MID)
    # what the page says when it cannot
    refusals = {
        "That product is not offered.": SimpleNamespace(**{**vars(plus), "Status": "retired"}),
        "The subscription is already to that product.": SimpleNamespace(**{**vars(plus), "SKU": "NEWS"}),
        "That product is priced in another currency.": SimpleNamespace(**{**vars(plus), "Currency": "EUR"}),
    }
    for said, product in refusals.items():
        with pytest.raises(SwitchRefused) as refused:
            check_switch(sub, product, MID)
        assert str(refused.value) == said
    with pytest.raises(SwitchRefused) as refused:
        check_switch(sub, None, MID)
    assert str(refused.value) == "That product is not offered."
    with pytest.raises(SwitchRefused) as refused:
        check_switch(SimpleNamespace(**{**vars(sub), "Status": SubscriptionStatus.PAST_DUE}), plus, MID)
    assert str(refused.value) == "Only an active subscription can switch (a past-due one pays what it owes first)."


def test_a_switch_refused_says_why_and_each_refusal_is_its_own() -> None:
    from types import SimpleNamespace

    from billing.models import ProductStatus, SubscriptionStatus
    from billing.rules.switch import SwitchRefused, SwitchTarget, check_switch

    sub = SimpleNamespace(sub_id="s1", SKU="NEWS", PriceId=None, PaymentAmount=1000, Currency="USD", PaymentDay=10,
                          Interval=None, IntervalCount=None, IntervalAnchor=None, PaidThroughDate="2027-04-09",
                          NextPaymentDate="2027-04-10", TrialEnd=None, Status=SubscriptionStatus.ACTIVE,
                          CancelMode=None, PausedFrom=None, Quantity=None, LastSwitchDate=None, MeteredPriceId=None)
    plus = SimpleNamespace(SKU="NEWS-PLUS", Name="News Plus", PaymentAmount=2000, Currency="USD",
                           Status=ProductStatus.ACTIVE)
    yearly = SwitchTarget("NEWS-PLUS", "News Plus", 20000, "price_y", "USD", "year", 1)

    def said(change: dict, target: SwitchTarget | None = None) -> str | None:
        """The refusal's text for ``sub`` so changed, or None when the switch may be made."""
        try:
            check_switch(SimpleNamespace(**{**vars(sub), **change}), plus, MID, target)
        except SwitchRefused as refused:
            return str(refused)
        return None

    paused = "A paused or cancelling subscription cannot switch."
    # each condition refuses alone: a cancel at the period's end, a pause from the next
    # payment (its day still set), a subscription with no next payment
    assert said({"CancelMode": "period_end"}) == paused
    assert said({"PausedFrom": "2027-04-10"}) == paused
    assert said({"NextPaymentDate": None}) == paused
    assert said({}) is None
    assert said({"Quantity": 3}) == (  # the default price is not sold by the seat
        "That price is not sold by the seat: change to one seat first.")
    assert said({"Quantity": 1}) is None
    assert said({"LastSwitchDate": MID.isoformat()}) == (
        "The subscription has switched today already: switch again tomorrow.")
    assert said({"LastSwitchDate": "2027-03-24"}) is None
    # a new cadence: not for a subscription billed for its usage, nor on its payment day
    assert said({}, yearly) is None
    assert said({"MeteredPriceId": "price_pages"}, yearly) == (
        "A subscription billed for its usage cannot change its billing period yet.")
    assert said({"MeteredPriceId": "price_pages"}) is None  # the same cadence
    assert said({"NextPaymentDate": MID.isoformat()}, yearly) == (
        "A payment is due today: change the billing period after it is taken.")
    assert said({"NextPaymentDate": MID.isoformat()}) is None  # the same cadence


def test_a_new_cadence_keeps_its_count_now_and_from_the_next_payment() -> None:
    from types import SimpleNamespace

    from billing.rules.switch import SwitchTarget, quote_switch

    sub = SimpleNamespace(sub_id="s1", SKU="NEWS", PriceId=None, PaymentAmount=1000, Currency="USD", PaymentDay=10,
                          Interval=None, IntervalCount=None, IntervalAnchor=None, PaidThroughDate="2027-04-09",
                          NextPaymentDate="2027-04-10", TrialEnd=None)
    quarterly = quote_switch(sub, SwitchTarget("NEWS", "News", 2500, "price_q", "USD", "month", 3), [], MID)
    # longer: at once, a whole quarter from today charged
    assert (quarterly.upgrade, quarterly.new_cadence.count, quarterly.new_period_end, quarterly.charge) == (
        True, 3, date(2027, 6, 24), 2500)
    fortnightly = quote_switch(sub, SwitchTarget("NEWS", "News", 500, "price_f", "USD", "week", 2), [], MID)
    # shorter: from the next payment, every two weeks from it
    assert (fortnightly.upgrade, fortnightly.effective, fortnightly.new_cadence.count) == (False, date(2027, 4, 10), 2)


def test_back_to_the_product_paid_for_at_the_same_price_leaves_no_switch_pending(catalog) -> None:
    # a switch to a product of the same price waits for the next payment; switching back
    # before it does undoes it: nothing pending, the product paid for kept, its cadence unchanged
    access.create_product("NEWS-ALT", "News Alt", 1000, "USD")
    sub = subscribed("back@example.com")
    with at(MID):
        switch.switch(fresh(sub), "NEWS-ALT", today=MID, actor="customer")
    pending = fresh(sub)
    assert (pending.SKU, pending.PreviousSKU, pending.SwitchFrom) == ("NEWS-ALT", "NEWS", "2027-04-10")
    day = date(2027, 3, 26)
    with at(day):
        q = switch.quote(fresh(sub), "NEWS", today=day)
        assert (q.upgrade, q.effective, q.new_cadence, q.due_now) == (False, date(2027, 4, 10), None, 0)
        switch.switch(fresh(sub), "NEWS", today=day, actor="customer", expected=q)
    after = fresh(sub)
    assert (after.SKU, after.PaymentAmount, after.PreviousSKU, after.SwitchFrom) == ("NEWS", 1000, None, None)
    assert (after.PaymentDay, after.Interval, after.IntervalAnchor, after.NextPaymentDate) == (
        10, None, None, "2027-04-10")


# --- what an upgrade credits: the unused days of the charges paying them, nothing else ----


def _monthly_sub(**change):
    from types import SimpleNamespace

    # paid on the 10th, in its second period: 10 April to 9 May (30 days) paid
    return SimpleNamespace(**{
        "sub_id": "s1", "SKU": "NEWS", "PriceId": None, "PaymentAmount": 1000, "Currency": "USD", "PaymentDay": 10,
        "Interval": None, "IntervalCount": None, "IntervalAnchor": None, "PaidThroughDate": "2027-05-09",
        "NextPaymentDate": "2027-05-10", "TrialEnd": None, **change})


def _paid(sub_id: str, first: str, last: str | None, refunded: int | None = None):
    """A receipt of 1000 for ``first``..``last`` (no ``last``: a receipt recorded without its
    period, as before periods were recorded)."""
    from billing.models import Receipt

    return Receipt("ACCOUNT#a", f"RECEIPT#{first}#{sub_id}", sub_id=sub_id, BillingDate=first,
                   PeriodStart=first if last else None, PeriodEnd=last, ProcessedAmount=1000, RefundedAmount=refunded)


def _plus():
    from types import SimpleNamespace

    from billing.models import ProductStatus

    return SimpleNamespace(SKU="NEWS-PLUS", Name="News Plus", PaymentAmount=2000, Currency="USD",
                           Status=ProductStatus.ACTIVE)


def test_an_upgrade_credits_only_what_paid_the_days_left_less_its_refunds() -> None:
    from billing.rules.switch import quote_switch

    sub, plus = _monthly_sub(), _plus()
    april = _paid("s1", "2027-04-10", "2027-05-09")
    # the ended March period, a receipt without its period and another subscription's
    # receipt credit nothing: only April's 15 days left of 30 (500 of 1000)
    history = [_paid("s1", "2027-02-10", None), _paid("s1", "2027-03-10", "2027-04-09"), april,
               _paid("s2", "2027-04-10", "2027-05-09")]
    q = quote_switch(sub, plus, history, date(2027, 4, 25))
    assert (q.charge, q.credit, q.due_now) == (1000, 500, 500)
    # on the period's last day that day is still unused: 1/30 of each price (half up)
    q = quote_switch(sub, plus, history, date(2027, 5, 9))
    assert (q.charge, q.credit, q.due_now) == (67, 33, 34)
    # what was refunded of the charge is not credited again; a charge refunded whole credits nothing
    assert quote_switch(sub, plus, [_paid("s1", "2027-04-10", "2027-05-09", 700)], date(2027, 4, 25)).credit == 300
    assert quote_switch(sub, plus, [_paid("s1", "2027-04-10", "2027-05-09", 1000)], date(2027, 4, 25)).credit == 0


def test_an_upgrade_after_a_yearly_plan_switched_to_monthly_from_its_end_credits_the_yearly_charge(catalog) -> None:
    # The yearly charge of 10 March is older than the monthly cadence's window (three
    # months back): the days it paid up to the year's end are still credited.
    from decimal import Decimal

    from billing.actions import prices as price_actions
    from billing.rules.price_choice import choose_price
    from billing.rules.pricing import PriceTerms

    yearly = price_actions.add_price("NEWS", PriceTerms("USD", unit_amount=Decimal(12000), interval="year"),
                                     actor="t", nickname="Yearly").PriceId
    product = access.get_product("NEWS")
    with at(MADE):
        started = subscribing.subscribe_to_price(access.create_account("y2m-up@example.com"), product,
                                                 choose_price(access.get_price(yearly), product), payment_day=10,
                                                 card=card(), today=MADE, actor="customer")
    sub = started.sub
    with at(date(2027, 9, 1)):
        switch.switch(fresh(sub), "NEWS", today=date(2027, 9, 1), actor="customer")  # monthly from 10 March 2028
    day = date(2027, 9, 20)
    with at(day):
        q = switch.quote(fresh(sub), "NEWS-PLUS", today=day)
    # 20 September to 9 March: 172 of the paid year's 366 days of 120.00, half up
    assert (q.upgrade, q.paid_through, q.credit) == (True, date(2028, 3, 9), 5639)


def test_with_prices_before_tax_a_receipt_credits_its_net_share_within_the_net_its_refunds_left() -> None:
    from billing.models import Receipt
    from billing.rules.switch import unused_credit

    def credit(on: date, *, gross: int = 1220, net: int | None = 1000, tax: int | None = 220,
               refunded: int | None = None, before_tax: bool = True) -> int:
        # paid for 10 April to 9 May (30 days); 22% on top of 10.00
        receipt = Receipt(sub_id="s1", BillingDate="2027-04-10", PeriodStart="2027-04-10", PeriodEnd="2027-05-09",
                          ProcessedAmount=gross, RefundedAmount=refunded, Net=net, Tax=tax)
        return unused_credit(receipt, on, before_tax=before_tax)

    first, mid = date(2027, 4, 10), date(2027, 4, 25)  # every day unused; 15 of 30
    assert (credit(mid), credit(mid, before_tax=False), credit(first)) == (500, 610, 1000)
    # a receipt without its tax figures (from before taxes were kept) is counted whole
    assert credit(mid, net=None, tax=None) == 610
    # a refund takes its share of the tax (as its credit note): 9.76 refunded is 1.76 of
    # tax and 8.00 of net, so 2.00 of net is left to credit
    assert credit(mid, refunded=976) == 200
    assert credit(first, refunded=1) == 999  # 0.01 refunded takes no tax: 9.99 of net left
    assert credit(first, refunded=1220) == 0  # refunded whole
    assert credit(first, gross=1, net=1, tax=0, refunded=1) == 0  # the smallest charge, refunded
    # without tax (0%), a refund is all net
    assert credit(first, gross=1000, net=1000, tax=0, refunded=600) == 400
    # the switch's quote counts it so when told prices are before tax; by default they include it
    from billing.rules.switch import quote_switch

    taxed = Receipt(sub_id="s1", BillingDate="2027-04-10", PeriodStart="2027-04-10", PeriodEnd="2027-05-09",
                    ProcessedAmount=1220, Net=1000, Tax=220)
    before = quote_switch(_monthly_sub(), _plus(), [taxed], mid, before_tax=True)
    assert (before.charge, before.credit) == (1000, 500)
    assert quote_switch(_monthly_sub(), _plus(), [taxed], mid).credit == 610


def test_an_upgrade_settles_only_the_days_recorded_as_paid_after_a_trial() -> None:
    from billing.rules.switch import quote_switch

    # the trial's last day is free whatever the product: the new price starts with the first charge
    trial = _monthly_sub(TrialEnd="2027-03-25", PaidThroughDate="2027-03-25", NextPaymentDate="2027-03-26")
    q = quote_switch(trial, _plus(), [], date(2027, 3, 25))
    assert (q.upgrade, q.effective, q.trial_end, q.charge, q.credit) == (True, date(2027, 3, 25), date(2027, 3, 25),
                                                                          0, 0)
    # days already paid after a trial still running are settled from the day after it:
    # here the whole first month (26 March to 25 April), at the new price less the old
    paid_ahead = _monthly_sub(PaymentDay=26, TrialEnd="2027-03-25", PaidThroughDate="2027-04-25",
                              NextPaymentDate="2027-04-26")
    q = quote_switch(paid_ahead, _plus(), [_paid("s1", "2027-03-26", "2027-04-25")], date(2027, 3, 20))
    assert (q.effective, q.trial_end, q.charge, q.credit, q.due_now) == (date(2027, 3, 20), date(2027, 3, 25),
                                                                        2000, 1000, 1000)
    # a subscription from before the days paid were recorded: at once, nothing to settle
    legacy = _monthly_sub(PaidThroughDate=None)
    q = quote_switch(legacy, _plus(), [_paid("s1", "2027-04-10", "2027-05-09")], date(2027, 4, 25))
    assert (q.upgrade, q.effective, q.paid_through, q.charge, q.credit) == (True, date(2027, 4, 25), None, 0, 0)


# --- how many payments a repeating coupon lasts: 1 to 120 ------------------------------


def test_a_repeating_coupon_lasts_one_to_a_hundred_and_twenty_payments() -> None:
    from billing.rules.coupons import CouponDuration, payments_left

    assert [payments_left(CouponDuration.REPEATING, n) for n in (1, 2, 119, 120)] == [1, 2, 119, 120]
    for n in (None, 0, -1, 121):
        with pytest.raises(ValueError, match="1-120 payments"):
            payments_left(CouponDuration.REPEATING, n)
    with pytest.raises(ValueError, match="unknown coupon duration 'sometimes'"):
        payments_left("sometimes")


def test_a_one_character_coupon_code_is_a_code() -> None:
    from billing.rules.coupons import normalize_code

    assert [normalize_code(c) for c in ("a", " 7 ", "-", "", " ")] == ["A", "7", "-", None, None]
