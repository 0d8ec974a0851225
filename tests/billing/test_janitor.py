"""The payment run heals its own money records (docs/MONEY.md M2): after charging its dates it
reconciles the gateway's charges of those dates and RECONCILE_DAYS before them against the
receipts. A charge whose receipt was lost is recorded, mailed and audited (a subscription
cancelled meanwhile is paid through the period); the charge of a first payment whose
subscription never started is refunded in full; what it cannot fix makes it exit 1."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date, timedelta
from io import StringIO

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from billing import access, batches
from billing.actions import lifecycle, subscriptions
from billing.models import AuditAction, SubscriptionStatus
from core.payments.errors import GatewayError
from core.payments.gateway import get_gateway
from core.payments.simulated import SimulatedGateway
from tests.builders import at_once, card, fresh, lose_receipts, make_account, make_user, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)


def mails_to(sub) -> list:
    return [m for m in mail.outbox if m.to == [sub.Email]]


def test_a_lost_receipt_is_recorded_mailed_and_audited_by_the_next_days_run(table) -> None:
    subs = seed_due(4, due=D)
    with time_machine.travel(D, tick=False), pytest.MonkeyPatch.context() as mp:
        lose_receipts(mp)
        first = batches.run_payments(run_date=D, workers=2)
    assert first.counts["errors"] == 4 and len(get_gateway().charges_made()) == 4
    assert not any(receipts_of(sub) for sub in subs)
    gone, stays = subs[0], subs[1:]
    # The customer cancels (the portal's cancel at period end) before the next run.
    lifecycle.cancel_at_period_end(fresh(gone), today=D, actor=gone.Email, reason="too_expensive")
    mail.outbox.clear()

    with time_machine.travel(D + timedelta(days=1), tick=False):
        second = batches.run_payments(run_date=D + timedelta(days=1), workers=2)
    # The three still due were charged again under their key (the gateway replays it) and
    # recorded; the cancelled one's charge was found by the reconciliation.
    assert second.counts["paid"] == 3 and second.counts["reconciled"] == 1
    assert second.counts["differences"] == 0 and second.ok
    for sub in subs:
        [receipt] = receipts_of(sub)
        assert receipt.BillingDate == D.isoformat()
        assert len(mails_to(sub)) == 1 and receipt.Number in mails_to(sub)[0].subject
    assert len(get_gateway().charges_made()) == 4  # nothing charged twice
    after = fresh(gone)
    assert after.Status == SubscriptionStatus.CANCELLED and after.PaidThroughDate == "2027-04-14"
    [event] = [e for e in access.get_events_by_account(gone.account_id) if e.Action == AuditAction.PAYMENT_SUCCEEDED]
    assert event.Actor == "reconcile"
    assert all(fresh(sub).NextPaymentDate == "2027-04-15" for sub in stays)

    mail.outbox.clear()
    with time_machine.travel(D + timedelta(days=2), tick=False):
        third = batches.run_payments(run_date=D + timedelta(days=2))
    assert third.counts["reconciled"] == 0 and third.counts["differences"] == 0 and mail.outbox == []
    assert third.reconciled_charges == 4  # still within RECONCILE_DAYS: read, found, left alone


def test_the_run_reads_no_receipt_it_has_just_written(table, ddb_requests) -> None:
    seed_due(5, due=D)
    ddb_requests.reset()
    with time_machine.travel(D, tick=False):
        summary = batches.run_payments(run_date=D, catch_up_days=0)
    assert summary.counts["paid"] == 5 and summary.reconciled_charges == 5
    assert ddb_requests.by_name()["GetItem"] == 1  # the seller's tax profile, once a run: no receipt
    ddb_requests.reset()
    with time_machine.travel(D + timedelta(days=1), tick=False):
        batches.run_payments(run_date=D + timedelta(days=1), catch_up_days=0)
    # The next day: yesterday's five charges, one GetItem each (their receipts), and the
    # seller's tax profile once.
    assert ddb_requests.by_name()["GetItem"] == 5 + 1


def test_reconcile_days_bound_how_far_back_the_run_looks(table, settings) -> None:
    [sub] = seed_due(1, due=D)
    with time_machine.travel(D, tick=False), pytest.MonkeyPatch.context() as mp:
        lose_receipts(mp)
        batches.run_payments(run_date=D)
    lifecycle.cancel_at_period_end(fresh(sub), today=D, actor="x", reason="other")
    settings.RECONCILE_DAYS = 1
    late = D + timedelta(days=3)  # the run covers the 18th only: the 15th is 3 days back
    with time_machine.travel(late, tick=False):
        summary = batches.run_payments(run_date=late, catch_up_days=0)
    assert summary.reconciled_charges == 0 and receipts_of(sub) == []
    settings.RECONCILE_DAYS = 3
    with time_machine.travel(late, tick=False):
        summary = batches.run_payments(run_date=late, catch_up_days=0)
    assert summary.counts["reconciled"] == 1 and len(receipts_of(sub)) == 1


def test_no_reconcile_skips_it(table) -> None:
    [sub] = seed_due(1, due=D)
    with time_machine.travel(D, tick=False), pytest.MonkeyPatch.context() as mp:
        lose_receipts(mp)
        batches.run_payments(run_date=D)
    lifecycle.cancel_at_period_end(fresh(sub), today=D, actor="x", reason="other")
    with time_machine.travel(D + timedelta(days=1), tick=False):
        skipped = batches.run_payments(run_date=D + timedelta(days=1), reconcile=False)
    assert skipped.counts["reconciled"] == 0 and skipped.reconciled_charges == 0 and receipts_of(sub) == []


def test_the_shops_charges_are_not_the_payment_runs_to_reconcile(moto_table) -> None:
    gateway = get_gateway()
    with time_machine.travel(D, tick=False):
        gateway.charge(card().token, 1500, "SEK", "order-1:card", {"order_id": "o1", "source": "shop"})
        summary = batches.run_payments(run_date=D)
    assert summary.reconciled_charges == 0 and summary.counts["differences"] == 0


def _charged_but_lost(monkeypatch) -> None:
    """The gateway charges, and its answer never arrives (a timeout after the charge)."""
    real = SimulatedGateway.charge

    def lost_answer(self, *args, **kwargs):
        real(self, *args, **kwargs)
        raise GatewayError("read timeout")
    monkeypatch.setattr(SimulatedGateway, "charge", lost_answer)


def subscribe_with_lost_answer(email: str = "lee@example.com"):
    account = make_account(email)
    with pytest.MonkeyPatch.context() as mp:
        _charged_but_lost(mp)
        with pytest.raises(GatewayError):
            subscriptions.subscribe(account, sku="NEWS-DAILY", product_name="Daily News", payment_day=20,
                                    amount=999, currency="USD", card=card(), today=D, actor=email)
    [sub] = access.get_subscriptions_by_account(account.account_id)
    return sub


def test_a_lost_answer_at_subscribe_is_refunded_in_full_by_the_next_run_with_one_mail(table) -> None:
    with time_machine.travel(D, tick=False):
        sub = subscribe_with_lost_answer()
        assert sub.Status == SubscriptionStatus.CANCELLED and sub.CancelReason == "first_payment_failed"
        [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
        mail.outbox.clear()
        summary = batches.run_payments(run_date=D)
    assert summary.counts["reconciled"] == 1 and summary.ok
    [refund] = get_gateway().refunds_made(charge["charge_id"])
    assert refund["amount"] == charge["amount"]
    assert refund["idempotency_key"] == f"refund:{charge['charge_id']}:unstarted"  # an M5 key
    [receipt] = receipts_of(sub)  # M2: the charge has its one receipt, refunded in full
    assert receipt.ChargeId == charge["charge_id"] and receipt.RefundedAmount == charge["amount"]
    [message] = mail.outbox
    assert message.to == [sub.Email] and "Refund" in message.subject
    assert fresh(sub).Status == SubscriptionStatus.CANCELLED  # it never started, and does not now
    with time_machine.travel(D + timedelta(days=1), tick=False):
        again = batches.run_payments(run_date=D + timedelta(days=1))
    assert again.counts["reconciled"] == 0 and len(get_gateway().refunds_made()) == 1 and len(mail.outbox) == 1


@pytest.mark.local_engine
def test_two_runs_reconciling_the_same_days_at_once_fix_each_charge_once(local_table) -> None:
    subs = seed_due(30, due=D)
    with time_machine.travel(D, tick=False):
        with pytest.MonkeyPatch.context() as mp:
            lose_receipts(mp)
            batches.run_payments(run_date=D, workers=4)
        for sub in subs[:10]:  # these customers cancel before the next run
            lifecycle.cancel_at_period_end(fresh(sub), today=D, actor=sub.Email, reason="other")
        unstarted = [subscribe_with_lost_answer(f"u{n}@example.com") for n in range(5)]
    mail.outbox.clear()
    with time_machine.travel(D + timedelta(days=1), tick=True):
        results = at_once(lambda: batches.run_payments(run_date=D + timedelta(days=1), workers=4))
    assert sum(r.counts["paid"] for r in results) == 20
    assert sum(r.counts["differences"] for r in results) == 0
    for sub in subs:
        assert len(receipts_of(sub)) == 1
    assert Counter(m.to[0] for m in mail.outbox if "Invoice" in m.subject) == Counter(s.Email for s in subs)
    refunds = get_gateway().refunds_made()
    assert len(refunds) == 5 and len({r["charge_id"] for r in refunds}) == 5
    assert Counter(m.to[0] for m in mail.outbox if "Refund" in m.subject) == Counter(s.Email for s in unstarted)


def test_a_difference_it_cannot_fix_is_printed_on_stderr_and_exits_1(moto_table) -> None:
    # A charge naming a subscription that does not exist: nothing to record it on.
    gateway = get_gateway()
    with time_machine.travel(D, tick=False):
        gateway.charge(card().token, 999, "USD", "ghost:2027-03-15", {
            "account_id": "acct00000000000a", "sub_id": "ghost00000000000", "sku": "NEWS-DAILY",
            "billing_date": "2027-03-15", "period_start": "2027-03-15", "period_end": "2027-04-14"})
        out, err = StringIO(), StringIO()
        with pytest.raises(CommandError, match="1 difference"):
            call_command("process_payments", "--date", "2027-03-15", "--json", stdout=out, stderr=err)
    summary = json.loads(out.getvalue().splitlines()[-1])
    assert summary["differences"] == 1 and summary["reconciled"] == 0 and summary["outcome"] == "completed"
    [line] = [line for line in err.getvalue().splitlines() if line.startswith("difference:")]
    assert "ghost00000000000" in line and "no such subscription" in line
    [run] = access.list_batch_runs("payments")
    assert run.Counts["differences"] == 1 and any("ghost" in f["reason"] for f in run.Failures)
    with time_machine.travel(D, tick=False):
        call_command("process_payments", "--date", "2027-03-15", "--no-reconcile", stdout=StringIO())


@pytest.mark.django_db
def test_the_staff_run_history_shows_what_a_run_reconciled_and_left(moto_table, client) -> None:
    [sub] = seed_due(1, due=D)
    with time_machine.travel(D, tick=False), pytest.MonkeyPatch.context() as mp:
        lose_receipts(mp)
        batches.run_payments(run_date=D)
    lifecycle.cancel_at_period_end(fresh(sub), today=D, actor="x", reason="other")
    with time_machine.travel(D + timedelta(days=1), tick=False):
        batches.run_payments(run_date=D + timedelta(days=1))
    client.force_login(make_user("clerk@rpay.localhost", staff=True, roles=["support"]))
    html = client.get(reverse("admin:staff_runs")).content.decode()
    assert "reconciled: 1" in html and "differences: 0" in html


def test_a_refund_made_at_the_gateway_is_recorded_by_the_next_runs_reconciliation(table) -> None:
    """M5 healed: a refund made outside rpay (the processor's dashboard) whose notice never
    came is found by comparing the gateway's refunded amount with the receipt's."""
    [sub] = seed_due(1, due=D)
    with time_machine.travel(D, tick=False):
        batches.run_payments(run_date=D, workers=1)
    [receipt] = receipts_of(sub)
    outside = get_gateway().refund(receipt.ChargeId, 300, "made-in-the-dashboard", reason="dashboard")
    mail.outbox.clear()
    with time_machine.travel(D + timedelta(days=1), tick=False):
        run = batches.run_payments(run_date=D + timedelta(days=1), workers=1)
    assert run.counts["reconciled"] == 1 and run.counts["differences"] == 0, run.as_dict()
    [after] = receipts_of(sub)
    assert after.RefundedAmount == 300 and [r.RefundId for r in after.Refunds] == [outside.refund_id]
    assert len(mails_to(sub)) == 1 and "Refund" in mails_to(sub)[0].subject
    # the next run finds nothing more to do
    with time_machine.travel(D + timedelta(days=2), tick=False):
        third = batches.run_payments(run_date=D + timedelta(days=2), workers=1)
    assert third.counts["reconciled"] == 0 and len(receipts_of(sub)[0].Refunds) == 1
