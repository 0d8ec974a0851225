"""The receipt of a charge for more seats whose change was not made (recorded by the
reconciliation after a crash; refused after the charge: tests/billing/test_seats.py) names
on its line the seats that charge paid for, as the receipt of a change made
does, although it is refunded whole (billing/operations/refunds.py ``refund_unapplied_switch``);
handed again once refunded whole, it asks the processor for nothing; one of a cent is
refunded too."""

from __future__ import annotations

from datetime import date

import pytest

from billing import access
from billing.actions import seats
from billing.actions import subscriptions as subscribing
from billing.batches.reconcile import reconcile
from billing.operations import refunds
from billing.rules.invoice import invoice_of
from core.payments.gateway import get_gateway
from tests.billing.test_seats import MADE, MID, at, crash_after_the_charge, team
from tests.builders import card, fresh, receipts_of

pytestmark = pytest.mark.django_db(databases=[])


def undone(sub):
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "seats" and r.PeriodStart == MID.isoformat()]
    return receipt


def test_a_change_of_seats_cut_short_after_its_charge_is_recorded_naming_the_seats_added(
        moto_table, monkeypatch) -> None:
    sub = team(2)
    [difference] = crash_after_the_charge(sub, 3, monkeypatch)
    assert (difference.kind, difference.fixed) == ("charge of a switch not made", True)
    receipt = undone(sub)
    assert receipt.RefundedAmount == receipt.ProcessedAmount == 516
    assert [line.description for line in invoice_of(receipt).lines] == ["Team: $10.00 a seat, 2 → 3 seats"]


def test_an_unapplied_charge_already_refunded_whole_asks_the_processor_for_nothing_more(
        moto_table, monkeypatch) -> None:
    # The reconciliation recorded the charge and refunded it whole; handed the same charge
    # again, nothing is left of it: no refund is asked for, not even one of 0.
    sub = team(2)
    crash_after_the_charge(sub, 3, monkeypatch)
    receipt = undone(sub)
    assert receipt.RefundedAmount == receipt.ProcessedAmount == 516
    gateway = get_gateway()
    asked = []
    real = gateway.refund
    monkeypatch.setattr(gateway, "refund", lambda *a, **k: asked.append(a) or real(*a, **k))
    with at(MID):
        assert refunds.refund_unapplied_switch(fresh(sub), gateway.charge_status(receipt.ChargeId),
                                               actor="reconcile") == 0
    assert asked == []
    assert undone(sub).RefundedAmount == 516 and len(undone(sub).Refunds) == 1


def test_an_unapplied_charge_of_one_cent_is_refunded(moto_table, monkeypatch) -> None:
    # A seat at $0.31 a month added on the period's last day (1 of its 31 days): a charge
    # of 0.01, the process dying after it; the reconciliation records it and gives it back.
    with at(MADE):
        sub = subscribing.subscribe(
            access.create_account("cent@example.com"), sku="TEAM", product_name="Team", payment_day=10, amount=31,
            currency="USD", card=card(), today=MADE, actor="customer").sub
    last = date(2027, 4, 9)
    with at(last):
        monkeypatch.setattr(access, "change_seats", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("down")))
        with pytest.raises(RuntimeError):
            seats.change_quantity(fresh(sub), 2, "customer", today=last)
        monkeypatch.undo()
        [difference] = reconcile(last, last, fix=True, today=last)[1]
    assert (difference.kind, difference.fixed) == ("charge of a switch not made", True)
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "seats"]
    assert receipt.RefundedAmount == receipt.ProcessedAmount == 1
    assert [(r["charge_id"], r["amount"]) for r in get_gateway().refunds_made()] == [(receipt.ChargeId, 1)]
