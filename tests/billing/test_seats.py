"""Changing a subscription's seats (billing/actions/seats.py, docs/MONEY.md M7): more seats
charge their price of the days already paid once, however often the request is sent;
fewer seats credit theirs to the card; the receipt, e-mails, audit and merchant events;
the renewals charge the new whole price; a change refused after its charge, or cut short
by a crash, is refunded in full. On moto and DynamoDB Local, and on localstripe."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
import time_machine
from django.core import mail

from billing import access, batches
from billing.actions import seats
from billing.actions import subscriptions as subscribing
from billing.batches.reconcile import reconcile
from billing.models import AuditAction, MerchantEventType
from billing.operations import payments
from billing.rules.invoice import invoice_of
from billing.rules.schedule import period_amount
from billing.rules.seat_lines import LineSeats, stored_seats
from billing.rules.seats import QuantityOutOfBounds, SeatsRefused
from core.payments.errors import GatewayError
from core.payments.gateway import get_gateway
from core.payments.simulated import SimulatedGateway
from tests.builders import card, fresh, receipts_of
from tests.wallclock import per_test

pytestmark = pytest.mark.django_db(databases=[])

MADE = date(2027, 3, 10)  # subscribed on the 10th, payment day 10: paid through 9 April
MID = date(2027, 3, 25)  # 16 of the period's 31 days left
PAID_THROUGH = date(2027, 4, 9)


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def team(seats_: int = 5, email: str = "team@example.com"):
    """A subscription of ``seats_`` seats at $10.00 a seat, paid 10 March .. 9 April: one
    seat subscribed, the others added on its first day (their whole period charged)."""
    with at(MADE):
        started = subscribing.subscribe(
            access.create_account(email), sku="TEAM", product_name="Team", payment_day=10, amount=1000,
            currency="USD", card=card(), today=MADE, actor="customer")
        assert started.started
        if seats_ > 1:
            done = seats.change_quantity(fresh(started.sub), seats_, "customer", today=MADE)
            assert done.charged == 1000 * (seats_ - 1)
    return started.sub


def seat_charges(sub) -> list[dict]:
    return [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "seats"]


def test_more_seats_charge_the_days_left_once_and_the_renewals_the_new_price(table) -> None:
    sub = team()
    mail.outbox = []
    with at(MID):
        q = seats.quote(fresh(sub), 7, today=MID)
        assert (q.old_quantity, q.new_quantity, q.unit_amount, q.due_now) == (5, 7, 1000, 1032)
        assert q.due_now == period_amount(2000, 10, MID, PAID_THROUGH)
        done = seats.change_quantity(fresh(sub), 7, "customer", today=MID, expected_version=fresh(sub).Version,
                                     expected_amount=seats.charged_now(fresh(sub), q))
    assert done.charged == 1032 and done.credited == 0
    after = fresh(sub)
    assert (after.Quantity, after.UnitAmount, after.PaymentAmount) == (7, 1000, 7000)
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "seats" and r.PeriodStart == MID.isoformat()]
    assert (receipt.ProcessedAmount, receipt.PeriodEnd, receipt.SKU) == (1032, "2027-04-09", "TEAM")
    charge = seat_charges(sub)[-1]
    assert charge["idempotency_key"] == f"{sub.sub_id}:seats:{MID.isoformat()}:v{done.sub.Version - 1}:7"
    assert receipt.ChargeId == charge["charge_id"] and charge["amount"] == 1032
    # the seats' e-mail and the charge's invoice, as every charge sends
    [told] = [m for m in mail.outbox if not m.subject.startswith("Invoice ")]
    assert "7" in told.subject and "$10.00 a seat" in told.body and "$10.32" in told.body
    assert "Your next payment, on 10 April 2027, is $70.00." in told.body
    [invoice] = [m for m in mail.outbox if m.subject.startswith("Invoice ")]
    assert "Team" in invoice.subject
    events = access.get_events_by_account(sub.account_id)
    assert sorted(e.After.get("Quantity") for e in events if e.Action == AuditAction.QUANTITY_CHANGED) == [5, 7]
    with at(MID):
        updated = [e for e in access.events_after(None, limit=1000)[0]
                   if e.Type == MerchantEventType.SUBSCRIPTION_UPDATED and e.ObjectId == sub.sub_id]
    assert updated[-1].Data["quantity"] == 7 and updated[-1].Data["amount"] == 7000
    # what the next payment costs is the new whole price, and the run charges it
    assert payments.next_charge(fresh(sub)).amount == 7000
    with at(date(2027, 4, 10)):
        assert batches.run_payments(run_date=date(2027, 4, 10), workers=1).counts["paid"] == 1
    assert [r.ProcessedAmount for r in receipts_of(sub) if r.BillingDate == "2027-04-10" and not r.Kind] == [7000]


def test_a_retried_request_charges_once(table, monkeypatch) -> None:
    sub = team(2)
    real = SimulatedGateway.charge

    def lost(gateway, *args, **kwargs):
        real(gateway, *args, **kwargs)
        raise GatewayError("read timeout")

    before = len(seat_charges(sub))
    monkeypatch.setattr(SimulatedGateway, "charge", lost)
    with at(MID), pytest.raises(GatewayError):
        seats.change_quantity(fresh(sub), 4, "customer", today=MID)
    assert fresh(sub).Quantity == 2  # nothing changed: the answer never came
    monkeypatch.setattr(SimulatedGateway, "charge", real)
    page = fresh(sub)  # the same request again: the same version, the same key
    version = page.Version
    with at(MID):
        done = seats.change_quantity(page, 4, "customer", today=MID, expected_version=version)
        # and once more, from the page drawn before the change: stale, nothing charged
        with pytest.raises(seats.SeatsChanged):
            seats.change_quantity(fresh(sub), 4, "customer", today=MID, expected_version=version)
    charges = seat_charges(sub)[before:]
    assert len(charges) == 1 and charges[0]["amount"] == done.charged == period_amount(2000, 10, MID, PAID_THROUGH)
    assert charges[0]["idempotency_key"] == f"{sub.sub_id}:seats:{MID.isoformat()}:v{version}:4"
    assert fresh(sub).Quantity == 4
    assert len([r for r in receipts_of(sub) if r.Kind == "seats" and r.PeriodStart == MID.isoformat()]) == 1


def test_fewer_seats_credit_the_days_left_to_the_card(table) -> None:
    sub = team(5)
    mail.outbox = []
    with at(MID):
        q = seats.quote(fresh(sub), 2, today=MID)
        assert (q.due_now, q.credit_now) == (0, period_amount(3000, 10, MID, PAID_THROUGH)) == (0, 1548)
        done = seats.change_quantity(fresh(sub), 2, "customer", today=MID)
    assert (done.charged, done.credited) == (0, 1548)
    assert fresh(sub).PaymentAmount == 2000 and fresh(sub).Quantity == 2
    refunded = sum(int(r.RefundedAmount or 0) for r in receipts_of(sub))
    assert refunded == 1548
    # no receipt is refunded beyond what it paid for the days left
    assert all(int(r.RefundedAmount or 0) <= int(r.ProcessedAmount) for r in receipts_of(sub))
    [told] = [m for m in mail.outbox if "seat" in m.body and not m.subject.startswith("Refund")]
    assert "$15.48 was refunded" in told.body
    with at(date(2027, 4, 10)):
        batches.run_payments(run_date=date(2027, 4, 10), workers=1)
    assert [r.ProcessedAmount for r in receipts_of(sub) if r.BillingDate == "2027-04-10" and not r.Kind] == [2000]


def test_adding_and_removing_the_same_seats_the_same_day_costs_nothing(table) -> None:
    sub = team(3)
    with at(MID):
        added = seats.change_quantity(fresh(sub), 6, "customer", today=MID)
        removed = seats.change_quantity(fresh(sub), 3, "customer", today=MID)
        again = seats.change_quantity(fresh(sub), 6, "customer", today=MID)  # a change of its own: charged
    assert added.charged == removed.credited == again.charged == period_amount(3000, 10, MID, PAID_THROUGH)
    assert len({c["idempotency_key"] for c in seat_charges(sub)}) == len(seat_charges(sub))


def test_refusals_charge_nothing(table) -> None:
    sub = team(2)
    before = len(seat_charges(sub))
    with at(MID):
        for quantity in (0, 10_001):
            with pytest.raises(QuantityOutOfBounds):
                seats.change_quantity(fresh(sub), quantity, "customer", today=MID)
        with pytest.raises(SeatsRefused, match="already"):
            seats.change_quantity(fresh(sub), 2, "customer", today=MID)
        with pytest.raises(seats.SeatsChanged):
            seats.change_quantity(fresh(sub), 3, "customer", today=MID, expected_version=fresh(sub).Version - 1)
        with pytest.raises(seats.SeatsChanged):  # the amounts of another day
            seats.change_quantity(fresh(sub), 3, "customer", today=MID, expected_amount=1)
    assert len(seat_charges(sub)) == before and fresh(sub).Quantity == 2


def test_a_declined_card_changes_nothing(table) -> None:
    sub = team(2)
    with at(MID):
        subscribing.replace_card(fresh(sub), card("4000000000000002"), actor="customer", today=MID)
        with pytest.raises(seats.SeatsDeclined):
            seats.change_quantity(fresh(sub), 3, "customer", today=MID)
    assert fresh(sub).Quantity == 2 and fresh(sub).PaymentAmount == 2000


def test_a_change_meanwhile_refuses_it_and_refunds_its_charge(table) -> None:
    from billing.rules.lifecycle import CancelMode

    sub = team(2)
    stale = fresh(sub)  # what the page read
    with at(MID):
        access.end_subscription(fresh(sub), mode=CancelMode.PERIOD_END, today=MID, actor="customer",
                                reason="too_expensive")  # in another tab, meanwhile
        with pytest.raises(access.ConditionFailed):
            seats.change_quantity(stale, 3, "customer", today=MID)
    assert fresh(sub).Quantity == 2
    [undone] = [r for r in receipts_of(sub) if r.Kind == "seats" and r.PeriodStart == MID.isoformat()]
    assert undone.RefundedAmount == undone.ProcessedAmount == 516  # charged, recorded, refunded: never kept
    # its line names the seats that charge paid for, as a change made does
    assert stored_seats(undone.TaxLines[0]) == LineSeats(3, 1000, 2)
    assert [line.description for line in invoice_of(undone).lines] == ["Team: $10.00 a seat, 2 → 3 seats"]


def crash_after_the_charge(sub, quantity: int, monkeypatch) -> list:
    """A change to ``quantity`` seats on MID whose process dies after its charge, before
    its write; then the reconciliation of MID: its differences."""
    with at(MID):
        monkeypatch.setattr(access, "change_seats", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("down")))
        with pytest.raises(RuntimeError):
            seats.change_quantity(fresh(sub), quantity, "customer", today=MID)
        monkeypatch.undo()
        return reconcile(MID, MID, fix=True, today=MID)[1]


def test_a_crash_after_the_charge_is_refunded_by_the_reconciliation(table, monkeypatch) -> None:
    sub = team(2)
    differences = crash_after_the_charge(sub, 3, monkeypatch)
    assert [d.kind for d in differences] == ["charge of a switch not made"] and differences[0].fixed
    [undone] = [r for r in receipts_of(sub) if r.Kind == "seats" and r.PeriodStart == MID.isoformat()]
    assert undone.RefundedAmount == undone.ProcessedAmount == 516
    assert fresh(sub).Quantity == 2
    with at(MID):
        assert reconcile(MID, MID, fix=True, today=MID)[1] == []  # once


def test_a_change_on_the_payment_day_has_a_receipt_of_its_own(table) -> None:
    sub = team(2)
    renewal = date(2027, 4, 10)
    with at(renewal):
        batches.run_payments(run_date=renewal, workers=1)
        done = seats.change_quantity(fresh(sub), 3, "customer", today=renewal)
    assert done.charged == 1000  # a whole month of one more seat, from the day it was paid
    assert sorted((r.Kind or "", r.ProcessedAmount) for r in receipts_of(sub) if r.BillingDate == "2027-04-10") == [
        ("", 2000), ("seats", 1000)]


# --- Stripe (localstripe) ----------------------------------------------------------------

STRIPE_TODAY = per_test(__name__, "STRIPE_TODAY", lambda now: now.date())


@pytest.mark.django_db
def test_on_stripe_more_seats_charge_once_and_fewer_credit(moto_table, stripe_gateway, localstripe) -> None:
    from tests.stripe_server import saved_card_token

    customer = stripe_gateway.create_customer("acct-seats", "seats@example.com")
    token = saved_card_token(stripe_gateway, localstripe, customer)
    due = STRIPE_TODAY + timedelta(days=10)
    sub = access.due_subscription("acct-seats", "sub-seats", due=due, card=access.payment_details_from(token),
                                  payment_day=due.day)
    access.batch_items([sub])
    version = fresh(sub).Version
    done = seats.change_quantity(fresh(sub), 3, "customer", today=STRIPE_TODAY, expected_version=version)
    assert done.charged > 0 and fresh(sub).Quantity == 3
    with pytest.raises(seats.SeatsChanged):  # the same page sent again: nothing more charged
        seats.change_quantity(fresh(sub), 3, "customer", today=STRIPE_TODAY, expected_version=version)
    creates = [r for r in stripe_gateway.recorded.creates("/v1/payment_intents")
               if ":seats:" in (r.idempotency_key or "")]
    assert [r.idempotency_key for r in creates] == [f"sub-seats:seats:{STRIPE_TODAY.isoformat()}:v{version}:3"]
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "seats"]
    assert receipt.ChargeId.startswith("pi_") and receipt.ProcessedAmount == done.charged
    fewer = seats.change_quantity(fresh(sub), 1, "customer", today=STRIPE_TODAY)
    assert fewer.credited == fewer.quote.credit_now == done.charged  # the same days, the same seats
    assert fresh(sub).PaymentAmount == fewer.quote.unit_amount
    assert sum(int(r.RefundedAmount or 0) for r in receipts_of(sub)) == fewer.credited


def test_a_switch_of_product_is_for_one_seat_and_leaves_no_old_seat_price(table) -> None:
    from billing.actions import switch
    from billing.rules.switch import SwitchRefused

    access.create_product("TEAM", "Team", 1000, "USD")
    access.create_product("TEAM-PLUS", "Team Plus", 2000, "USD")
    sub = team(3)
    with at(MID):
        # a product's default price is not sold by the seat: it takes one
        with pytest.raises(SwitchRefused, match="not sold by the seat: change to one seat first"):
            switch.quote(fresh(sub), "TEAM-PLUS", today=MID)
        seats.change_quantity(fresh(sub), 1, "customer", today=MID)
        switch.switch(fresh(sub), "TEAM-PLUS", today=MID, actor="customer")
    after = fresh(sub)
    assert (after.SKU, after.PaymentAmount, after.Quantity, after.UnitAmount) == ("TEAM-PLUS", 2000, None, None)
    later = MID + timedelta(days=1)
    with at(later):  # seats now at the new product's price
        assert seats.quote(fresh(sub), 2, today=later).unit_amount == 2000


def test_the_subscriptions_price_gives_the_bounds(table) -> None:
    from decimal import Decimal

    from billing.actions import prices as price_actions
    from billing.models import Subscription
    from billing.rules.pricing import PriceTerms

    access.create_product("TEAM", "Team", 1000, "USD")
    price = price_actions.add_price("TEAM", PriceTerms("USD", unit_amount=Decimal(1000)), actor="t",
                                    nickname="Per seat", unit_label="seat", min_quantity=2, max_quantity=8)
    sub = team(1)
    assert seats.bounds_of(fresh(sub)) == (1, 10_000)  # no price named: the product's default, no bounds
    fresh(sub).update(actions=[Subscription.PriceId.set(price.PriceId)])  # as subscribing to the price leaves it
    assert seats.bounds_of(fresh(sub)) == (2, 8)
    with at(MID):
        for quantity in (1, 9):
            with pytest.raises(QuantityOutOfBounds) as refused:
                seats.change_quantity(fresh(sub), quantity, "customer", today=MID)
            assert (refused.value.low, refused.value.high) == (2, 8)
        assert seats.change_quantity(fresh(sub), 8, "customer", today=MID).quote.new_quantity == 8


def test_the_seats_e_mail_is_in_the_customers_language(moto_table) -> None:
    sub = team(2, email="it@example.com")
    access.set_account_language(sub.account_id, "it")
    mail.outbox = []
    with at(MID):
        seats.change_quantity(fresh(sub), 4, "customer", today=MID)
    [told] = [m for m in mail.outbox if "posti" in m.subject]
    assert told.subject == "I tuoi posti ora: 4"
    assert "Il tuo abbonamento a Team ha ora 4 posti, a " in told.body and " a posto, da oggi." in told.body
    assert "i posti aggiunti costano" in told.body and "Il tuo prossimo pagamento, il 10 aprile 2027" in told.body
    assert "Your" not in told.body


def test_a_change_racing_the_payment_run_is_refused_not_left_unpaid(table, monkeypatch) -> None:
    sub = team(2)
    renewal = date(2027, 4, 10)
    with at(renewal):
        with pytest.raises(SeatsRefused, match="payment is due"):  # before the run: refused in words
            seats.change_quantity(fresh(sub), 3, "customer", today=renewal)
        # past the rule (a request checked a moment before midnight, say) while the run has
        # charged the old number for the new period and not yet advanced: the write's
        # condition refuses it, or the added seat would go unpaid for the whole period
        monkeypatch.setattr(seats, "quote", lambda s, q, today, priced=None: seats.quote_seats(s, q, today))
        with pytest.raises(access.ConditionFailed):
            seats.change_quantity(fresh(sub), 3, "customer", today=renewal)
        batches.run_payments(run_date=renewal, workers=1)
    assert fresh(sub).Quantity == 2
    assert [r.ProcessedAmount for r in receipts_of(sub) if r.BillingDate == "2027-04-10" and not r.Kind] == [2000]


def test_the_seats_e_mail_writes_its_amounts_in_the_customers_language(table) -> None:
    # Staff working in English changes an Italian customer's seats: the e-mail's amounts
    # are formatted when it is written, in Italian ("10,00 $"), not in the caller's English.
    from django.utils import translation

    from core.money import format_with_symbol

    sub = team(2, email="squadra@example.com")
    access.set_account_language(sub.account_id, "it")
    mail.outbox = []
    with at(MID), translation.override("en"):
        seats.change_quantity(access.get_subscription(sub.account_id, sub.sub_id), 3, "staff:ann", today=MID)
    with translation.override("it"):
        italian = format_with_symbol(1000, "USD")
    [told] = [m for m in mail.outbox if "10" in m.body and not m.subject.startswith(("Refund", "Fattura", "Invoice"))][:1]
    assert italian in told.body and "$10.00" not in told.body
