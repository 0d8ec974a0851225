"""Switching a subscription's product: an upgrade charged now for the days
already paid (the new price of them less their unused share at the old), a downgrade from
the next payment; the key, the receipt, the e-mail, the refusals; a switch refused by a
change meanwhile, or cut short by a crash after its charge, is refunded in full (M2);
the next renewals charge the new price. On moto and DynamoDB Local."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
import time_machine
from django.core import mail
from hypothesis import given, settings
from hypothesis import strategies as st

from billing import access, batches
from billing.actions import subscriptions as subscribing
from billing.actions import switch
from billing.batches.reconcile import reconcile
from billing.models import AuditAction, Receipt, SubscriptionStatus
from billing.operations import payments
from billing.rules.schedule import first_period, period_amount
from billing.rules.switch import SwitchRefused, quote_switch
from core.payments.gateway import get_gateway
from tests.builders import card, fresh, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

MADE = date(2027, 3, 10)  # subscribed on the 10th, payment day 10: paid through 9 April
MID = date(2027, 3, 25)


@pytest.fixture
def catalog(table) -> None:
    access.create_product("NEWS", "News", 1000, "USD")
    access.create_product("NEWS-PLUS", "News Plus", 2000, "USD")
    access.create_product("NEWS-LITE", "News Lite", 500, "USD")
    access.create_product("NEWS-EUR", "News (euro)", 900, "EUR")


def subscribed(day: int = 10, on: date = MADE):
    with time_machine.travel(f"{on.isoformat()} 12:00Z", tick=False):
        started = subscribing.subscribe(
            access.create_account(f"sw{day}@example.com"), sku="NEWS", product_name="News", payment_day=day,
            amount=1000, currency="USD", card=card(), today=on, actor="customer")
    assert started.started
    return started.sub


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def test_an_upgrade_charges_the_paid_days_difference_now_and_renewals_the_new_price(catalog) -> None:
    sub = subscribed()
    mail.outbox = []
    with at(MID):
        q = switch.quote(fresh(sub), "NEWS-PLUS", today=MID)
        # 25 March .. 9 April: 16 of the period's 31 days
        assert (q.upgrade, q.charge, q.credit) == (True, period_amount(2000, 10, MID, date(2027, 4, 9)),
                                                   period_amount(1000, 10, MID, date(2027, 4, 9)))
        assert (q.charge, q.credit, q.due_now) == (1032, 516, 516)
        done = switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer", expected=q)
    assert done.charged == 516
    after = fresh(sub)
    assert (after.SKU, after.ProductName, after.PaymentAmount) == ("NEWS-PLUS", "News Plus", 2000)
    assert after.SK == sub.SK and after.key_sku == "NEWS"  # the key keeps the product it was made for
    assert after.PreviousSKU is None and after.LastSwitchDate == MID.isoformat()
    switched = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert [(r.ProcessedAmount, r.SwitchCharge, r.SwitchCredit, r.PeriodStart, r.PeriodEnd, r.SKU) for r in switched] == [
        (516, 1032, 516, "2027-03-25", "2027-04-09", "NEWS-PLUS")]
    [charge] = [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "switch"]
    assert charge["idempotency_key"] == f"{sub.sub_id}:switch:2027-03-25:NEWS-PLUS" and charge["amount"] == 516
    # the switch's e-mail, and the charge's invoice, as every charge sends
    [message] = [m for m in mail.outbox if not m.subject.startswith("Invoice ")]
    assert "News Plus" in message.subject and "$5.16" in message.body
    [invoice] = [m for m in mail.outbox if m.subject.startswith("Invoice ")]
    assert "News Plus" in invoice.subject and "$5.16" in invoice.body
    events = [e.Action for e in access.get_events_by_account(sub.account_id)]
    assert AuditAction.SUBSCRIPTION_SWITCHED in events
    # the renewal on 10 April charges the new price, for a whole month
    with at(date(2027, 4, 10)):
        assert batches.run_payments(run_date=date(2027, 4, 10), workers=1).counts["paid"] == 1
    renewal = [r for r in receipts_of(sub) if r.BillingDate == "2027-04-10"]
    assert [(r.ProcessedAmount, r.SKU) for r in renewal] == [(2000, "NEWS-PLUS")]


def test_a_downgrade_charges_nothing_now_and_the_next_payment_the_new_price(catalog) -> None:
    sub = subscribed()
    with at(MID):
        q = switch.quote(fresh(sub), "NEWS-LITE", today=MID)
        assert (q.upgrade, q.due_now, q.effective) == (False, 0, date(2027, 4, 10))
        switch.switch(fresh(sub), "NEWS-LITE", today=MID, actor="customer", expected=q)
    after = fresh(sub)
    assert (after.SKU, after.PaymentAmount, after.PreviousProductName, after.SwitchFrom) == (
        "NEWS-LITE", 500, "News", "2027-04-10")
    assert not [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "switch"]
    assert payments.owed_amount(after) == 500
    with at(date(2027, 4, 10)):
        batches.run_payments(run_date=date(2027, 4, 10), workers=1)
    assert [r.ProcessedAmount for r in receipts_of(sub) if r.BillingDate == "2027-04-10"] == [500]


def test_refusals(catalog) -> None:
    sub = subscribed()
    with at(MID):
        for sku in ("NEWS", "NEWS-EUR", "NOPE"):
            with pytest.raises(SwitchRefused):
                switch.quote(fresh(sub), sku, today=MID)
        switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer")
        with pytest.raises(SwitchRefused, match="today already"):
            switch.quote(fresh(sub), "NEWS-LITE", today=MID)
    access.retire_product("NEWS-LITE")
    with at(MID + timedelta(days=1)), pytest.raises(SwitchRefused, match="not offered"):
        switch.quote(fresh(sub), "NEWS-LITE", today=MID + timedelta(days=1))


def test_amounts_changed_since_the_confirm_page_charge_nothing(catalog) -> None:
    sub = subscribed()
    with at(MID):
        shown = switch.quote(fresh(sub), "NEWS-PLUS", today=MID - timedelta(days=3))  # an older page
        with pytest.raises(switch.QuoteChanged):
            switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer", expected=shown)
    assert not [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "switch"]
    assert fresh(sub).SKU == "NEWS"


def test_a_change_meanwhile_refuses_the_switch_and_refunds_its_charge(catalog) -> None:
    from billing.rules.lifecycle import CancelMode

    sub = subscribed()
    stale = fresh(sub)  # what the confirm page read
    with at(MID):
        access.end_subscription(fresh(sub), mode=CancelMode.PERIOD_END, today=MID, actor="customer",
                                reason="too_expensive")  # in another tab, meanwhile
        real_quote = switch.quote
        switch.quote = lambda s, sku, today: real_quote(stale, sku, today=today)
        try:
            with pytest.raises(access.ConditionFailed):
                switch.switch(stale, "NEWS-PLUS", today=MID, actor="customer")
        finally:
            switch.quote = real_quote
    assert fresh(sub).SKU == "NEWS"
    [undone] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert undone.RefundedAmount == undone.ProcessedAmount == 516  # charged, recorded, refunded: never kept


def test_a_crash_after_the_charge_is_refunded_by_the_reconciliation(catalog, monkeypatch) -> None:
    sub = subscribed()
    with at(MID):
        monkeypatch.setattr(access, "switch_subscription", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("down")))
        with pytest.raises(RuntimeError):
            switch.switch(fresh(sub), "NEWS-PLUS", today=MID, actor="customer")
        monkeypatch.undo()
        _, differences = reconcile(MID, MID, fix=True, today=MID)
    assert [d.kind for d in differences] == ["charge of a switch not made"] and differences[0].fixed
    [undone] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert undone.RefundedAmount == undone.ProcessedAmount == 516
    assert fresh(sub).SKU == "NEWS"
    with at(MID):
        assert reconcile(MID, MID, fix=True, today=MID)[1] == []  # once


@settings(max_examples=60, deadline=None)
@given(day=st.integers(1, 31), offset=st.integers(0, 60), into=st.integers(0, 40),
       old=st.integers(100, 5000), extra=st.integers(1, 5000))
def test_the_credit_is_the_unused_share_and_no_day_is_paid_twice(day: int, offset: int, into: int, old: int,
                                                                 extra: int) -> None:
    """Over any payment day, date and prices: the credit never exceeds what was paid, the
    credit and what the days before the switch cost add up to the receipt (rounding aside:
    each part is rounded half up once), and the charge is the new price of the same days."""
    from billing.models import Product, Subscription

    made = date(2027, 1, 1) + timedelta(days=offset)
    start, end = first_period(day, made)
    switch_day = min(end, start + timedelta(days=into))
    paid = period_amount(old, day, start, end)
    receipt = Receipt(sub_id="s1", PeriodStart=start.isoformat(), PeriodEnd=end.isoformat(),
                      BillingDate=start.isoformat(), ProcessedAmount=paid, RefundedAmount=0)
    sub = Subscription("ACC#a", "SUB#s1#SKU#A", SKU="A", PaymentAmount=old, PaymentDay=day, Currency="USD",
                       Status=SubscriptionStatus.ACTIVE, PaidThroughDate=end.isoformat(),
                       NextPaymentDate=(end + timedelta(days=1)).isoformat())
    product = Product("CATALOG", "SKU#B", SKU="B", Name="B", PaymentAmount=old + extra, Currency="USD")
    q = quote_switch(sub, product, [receipt], switch_day)
    used = paid - q.credit
    assert 0 <= q.credit <= paid and used >= 0
    days, used_days = (end - start).days + 1, (switch_day - start).days
    assert abs(used - paid * used_days / days) <= 1  # the days before the switch: their share, paid once
    assert q.charge == period_amount(old + extra, day, switch_day, end) and q.due_now == max(0, q.charge - q.credit)


def test_an_upgrade_whose_paid_days_cost_less_refunds_the_difference(catalog) -> None:
    """Down to Lite (from the next payment: the days stay paid at 10.00), then the next day
    up to Mid (8.00 > Lite's 5.00): the paid days cost less at Mid's price, so the
    difference is refunded from the receipt that paid them, once."""
    access.create_product("NEWS-MID", "News Mid", 800, "USD")
    sub = subscribed()
    with at(MID):
        switch.switch(fresh(sub), "NEWS-LITE", today=MID, actor="customer")
    day = MID + timedelta(days=1)
    with at(day):
        q = switch.quote(fresh(sub), "NEWS-MID", today=day)
        assert q.upgrade and q.due_now == 0 and q.refund_now == q.credit - q.charge > 0
        done = switch.switch(fresh(sub), "NEWS-MID", today=day, actor="customer", expected=q)
    assert done.refunded == q.refund_now and done.charged == 0
    [paid] = [r for r in receipts_of(sub) if r.Kind != "switch"]
    assert paid.RefundedAmount == q.refund_now
    after = fresh(sub)
    assert (after.SKU, after.PaymentAmount, after.PreviousSKU) == ("NEWS-MID", 800, None)
    assert not [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "switch"]
