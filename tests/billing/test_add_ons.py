"""Add-ons (billing/rules/add_ons.py, docs/PRICING.md "Add-ons"): a further fixed price on a
subscription, added or removed from its next payment. Nothing is charged or refunded now;
the next payment's fee is the plan's plus its add-ons', on one charge whose invoice has a
line an item, as the upcoming payment showed them. On moto and DynamoDB Local, and on
localstripe."""

from __future__ import annotations

from datetime import date

import pytest
import time_machine
from django.core import mail
from hypothesis import given
from hypothesis import strategies as st

from billing import access, batches
from billing.actions import add_ons as add_on_actions
from billing.actions import coupons as coupon_actions
from billing.actions import seats
from billing.actions import subscriptions as subscribing
from billing.actions import switch as switch_actions
from billing.analytics import revenue_report
from billing.exceptions import ConditionFailed
from billing.models import AuditAction, MerchantEventType
from billing.operations import payments
from billing.operations.charge_lines import charge_lines
from billing.rules.add_ons import AddOnRefused, add_ons_of, fee_shares, plan_amount, split_fee
from billing.rules.switch import SwitchRefused
from core.payments.gateway import get_gateway
from tests.builders import card, fresh, make_user, prices_exclude_vat, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

MADE = date(2027, 3, 10)  # subscribed on the 10th, payment day 10: paid through 9 April
MID = date(2027, 3, 25)
NEXT, FOLLOWING = date(2027, 4, 10), date(2027, 5, 10)


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def plan(email: str = "addons@example.com", user_id: int | None = None):
    """A $9.99 monthly plan (Magazine) paid 10 March .. 9 April, and two add-on products."""
    access.create_product("MAG", "Magazine", 999, "USD")
    access.create_product("STORAGE", "Extra storage", 300, "USD", add_on=True)
    access.create_product("SUPPORT", "Priority support", 1500, "USD", add_on=True)
    with at(MADE):
        started = subscribing.subscribe(
            access.create_account(email, user_id=user_id), sku="MAG", product_name="Magazine", payment_day=10,
            amount=999, currency="USD", card=card(), today=MADE, actor="customer")
    assert started.started
    return started.sub


def _pay(sub, day: date):
    with at(day):
        return payments.take_payment(fresh(sub), run_date=day)


REMOVED = date(2027, 4, 20)  # in the period 10 April .. 9 May, paid with the add-on


def _added_paid_removed(sub, price_id: str) -> None:
    """``price_id`` added on 25 March, billed on 10 April, removed on 20 April."""
    with at(MID):
        add_on_actions.add(fresh(sub), price_id, today=MID, actor="customer")
    _pay(sub, NEXT)
    with at(REMOVED):
        add_on_actions.remove(fresh(sub), price_id, today=REMOVED, actor="customer")


def _upcoming_lines(sub) -> list[tuple[str, int, int]]:
    current = fresh(sub)
    charge = payments.next_charge(current)
    return [(line.description.split(",")[0], line.amount, line.tax)
            for line in charge_lines(current, charge, access.tax_terms(current))]


def _gross(lines: list[tuple[str, int, int]]) -> list[tuple[str, int]]:
    """Each line's words and price (the seller's prices include the tax: net + tax)."""
    return [(words, net + tax) for words, net, tax in lines]


def test_an_add_on_is_billed_from_the_next_payment_on_a_line_of_its_own(table) -> None:
    sub = plan()
    mail.outbox = []
    charged_before = len(get_gateway().charges_made(sub_id=sub.sub_id))
    with at(MID):
        offered = add_on_actions.offers(fresh(sub), MID)
        assert [o.price_id for o in offered] == ["price_default_STORAGE", "price_default_SUPPORT"]
        done = add_on_actions.add(fresh(sub), "price_default_STORAGE", today=MID, actor="customer",
                                  expected_version=fresh(sub).Version)
    assert (done.old_price, done.new_price, done.effective) == (999, 1299, NEXT)
    after = fresh(sub)
    assert int(after.PaymentAmount) == 1299 and plan_amount(after) == 999
    assert [(a.price_id, a.first_day, a.last_day) for a in add_ons_of(after)] == [("price_default_STORAGE", NEXT, None)]
    # nothing charged now: the add-on starts with the payment that pays for it
    assert len(get_gateway().charges_made(sub_id=sub.sub_id)) == charged_before
    [told] = mail.outbox
    assert told.subject == "Your add-ons: Extra storage added"
    assert "Extra storage is added to your subscription to Magazine, at $3.00 a month: your payments include it " \
           "from your next one, on 10 April 2027." in " ".join(told.body.split())
    assert "Your next payment, on 10 April 2027, is $12.99." in told.body
    [event] = [e for e in access.get_events_by_account(sub.account_id) if e.Action == AuditAction.ADD_ON_ADDED]
    assert event.After["PaymentAmount"] == 1299 and event.Before["PaymentAmount"] == 999
    with at(MID):
        updated = [e for e in access.events_after(None, limit=1000)[0]
                   if e.Type == MerchantEventType.SUBSCRIPTION_UPDATED and e.ObjectId == sub.sub_id]
    assert updated[-1].Data["amount"] == 1299
    assert [item for item in updated[-1].Data["items"] if item.get("add_on")] == [
        {"price": "price_default_STORAGE", "quantity": 1, "add_on": True, "amount": 300, "starts_on": "2027-04-10"}]

    with at(NEXT):
        upcoming = _upcoming_lines(sub)
    assert _gross(upcoming) == [("Magazine", 999), ("Extra storage", 300)]
    paid = _pay(sub, NEXT)
    assert paid.amount == 1299
    [receipt] = [r for r in receipts_of(sub) if r.BillingDate == NEXT.isoformat()]
    assert [(line.Description, int(line.Gross)) for line in receipt.TaxLines] == [
        ("Magazine", 999), ("Extra storage", 300)]
    assert [(d, n, t) for d, n, t in upcoming] == [(line.Description, int(line.Net), int(line.Tax))
                                                    for line in receipt.TaxLines]


def test_an_add_on_removed_stays_until_the_next_payment_and_is_gone_after_it(table) -> None:
    sub = plan()
    with at(MID):
        add_on_actions.add(fresh(sub), "price_default_SUPPORT", today=MID, actor="customer")
    _pay(sub, NEXT)  # $24.99: the plan and the support, 10 April .. 9 May
    removed_on = date(2027, 4, 20)
    mail.outbox = []
    with at(removed_on):
        done = add_on_actions.remove(fresh(sub), "price_default_SUPPORT", today=removed_on, actor="customer")
    assert (done.old_price, done.new_price, done.effective) == (2499, 999, FOLLOWING)
    [entry] = add_ons_of(fresh(sub))
    assert (entry.first_day, entry.last_day) == (NEXT, date(2027, 5, 9))  # paid for until then
    [told] = mail.outbox
    assert "you keep it until your next payment, on 10 May 2027, which no longer includes it" in " ".join(
        told.body.split())
    with at(FOLLOWING):
        assert _gross(_upcoming_lines(sub)) == [("Magazine", 999)]
    assert _pay(sub, FOLLOWING).amount == 999
    [receipt] = [r for r in receipts_of(sub) if r.BillingDate == FOLLOWING.isoformat()]
    assert [line.Description for line in receipt.TaxLines] == ["Magazine"]
    # the next change drops the ended add-on from the list
    later = date(2027, 5, 12)
    with at(later):
        add_on_actions.add(fresh(sub), "price_default_STORAGE", today=later, actor="customer")
    assert [a.price_id for a in add_ons_of(fresh(sub))] == ["price_default_STORAGE"]


def test_an_add_on_added_and_removed_before_a_payment_leaves_nothing(table) -> None:
    sub = plan()
    with at(MID):
        add_on_actions.add(fresh(sub), "price_default_STORAGE", today=MID, actor="customer")
        add_on_actions.remove(fresh(sub), "price_default_STORAGE", today=MID, actor="customer")
    after = fresh(sub)
    assert int(after.PaymentAmount) == 999 and add_ons_of(after) == [] and after.AddOns is None


def test_an_add_on_removed_then_added_again_keeps_on(table) -> None:
    sub = plan()
    _added_paid_removed(sub, "price_default_STORAGE")
    with at(REMOVED):
        again = add_on_actions.add(fresh(sub), "price_default_STORAGE", today=REMOVED, actor="customer")
    assert (again.old_price, again.new_price) == (999, 1299)
    [entry] = add_ons_of(fresh(sub))
    assert (entry.first_day, entry.last_day) == (NEXT, None)


def test_refusals(table) -> None:
    sub = plan()
    access.create_product("EURO", "Euro thing", 300, "EUR", add_on=True)
    access.create_product("PLAIN", "Sold alone", 300, "USD")
    with at(MID):
        with pytest.raises(AddOnRefused, match="another currency"):
            add_on_actions.add(fresh(sub), "price_default_EURO", today=MID, actor="customer")
        with pytest.raises(AddOnRefused, match="^That product is not sold as an add-on.$"):
            add_on_actions.add(fresh(sub), "price_default_PLAIN", today=MID, actor="customer")
        with pytest.raises(AddOnRefused, match="your plan's own product"):
            add_on_actions.add(fresh(sub), "price_default_MAG", today=MID, actor="customer")
        with pytest.raises(AddOnRefused, match="not offered"):
            add_on_actions.add(fresh(sub), "price_default_NOPE", today=MID, actor="customer")
        add_on_actions.add(fresh(sub), "price_default_STORAGE", today=MID, actor="customer")
        with pytest.raises(AddOnRefused, match="has that add-on already"):
            add_on_actions.add(fresh(sub), "price_default_STORAGE", today=MID, actor="customer")
        with pytest.raises(AddOnRefused, match="no such add-on"):
            add_on_actions.remove(fresh(sub), "price_default_SUPPORT", today=MID, actor="customer")
        with pytest.raises(add_on_actions.AddOnsChanged):
            add_on_actions.add(fresh(sub), "price_default_SUPPORT", today=MID, actor="customer", expected_version=1)
        # a switch prices the plan alone: refused while it has add-ons
        with pytest.raises(SwitchRefused, match="add-ons"):
            switch_actions.quote(fresh(sub), "SUPPORT", today=MID)
    with at(NEXT), pytest.raises(AddOnRefused, match="Today's payment is due"):
        add_on_actions.remove(fresh(sub), "price_default_STORAGE", today=NEXT, actor="customer")


def test_a_change_written_meanwhile_refuses_the_add_on(table) -> None:
    sub = plan()
    read = fresh(sub)
    with at(MID):
        add_on_actions.add(fresh(sub), "price_default_SUPPORT", today=MID, actor="customer")
        with pytest.raises(ConditionFailed):
            add_on_actions.add(read, "price_default_STORAGE", today=MID, actor="customer")
    after = fresh(sub)
    assert int(after.PaymentAmount) == 2499 and [a.price_id for a in add_ons_of(after)] == ["price_default_SUPPORT"]


def test_seats_price_the_plan_and_keep_the_add_ons(table) -> None:
    sub = plan()
    with at(MID):
        add_on_actions.add(fresh(sub), "price_default_STORAGE", today=MID, actor="customer")
        q = seats.quote(fresh(sub), 3, today=MID)
        assert (q.unit_amount, q.old_price, q.new_price) == (999, 1299, 999 * 3 + 300)
        seats.change_quantity(fresh(sub), 3, "customer", today=MID)
    after = fresh(sub)
    assert int(after.PaymentAmount) == 3297 and plan_amount(after) == 2997
    _pay(sub, NEXT)
    [receipt] = [r for r in receipts_of(sub) if r.BillingDate == NEXT.isoformat()]
    assert [(line.Description, int(line.Gross)) for line in receipt.TaxLines] == [
        ("Magazine", 2997), ("Extra storage", 300)]


@given(plan_price=st.integers(0, 10**6), add_ons=st.lists(st.integers(1, 10**6), min_size=1, max_size=5),
       fee=st.integers(0, 10**7), tax=st.integers(0, 10**6), include=st.booleans())
def test_the_fee_split_sums_to_the_fee_and_its_tax(plan_price, add_ons, fee, tax, include) -> None:
    net, gross = (fee - min(tax, fee), fee) if include else (fee, fee + tax)
    tax = gross - net
    lines = split_fee(plan_price, add_ons, net=net, tax=tax, gross=gross, prices_include_tax=include)
    assert len(lines) == 1 + len(add_ons)
    assert sum(n for n, _, _ in lines) == net and sum(t for _, t, _ in lines) == tax
    assert sum(g for _, _, g in lines) == gross and all(n + t == g for n, t, g in lines)
    assert all(min(line) >= 0 for line in lines)
    shares = fee_shares(plan_price, add_ons, fee)
    assert sum(shares) == fee


def test_the_payment_run_itemises_the_add_ons_from_its_index(table, ddb_requests) -> None:
    """The run charges from GSI-2's projection (which holds ``AddOns``): one charge of the
    whole fee, its invoice a line an item, as when one payment is taken by hand, at a
    fixed-price payment's two writes (tests/billing/test_batch_payments.py) and no read."""
    sub = plan()
    with at(MID):
        add_on_actions.add(fresh(sub), "price_default_STORAGE", today=MID, actor="customer")
        add_on_actions.add(fresh(sub), "price_default_SUPPORT", today=MID, actor="customer")
    with at(NEXT):
        upcoming = _upcoming_lines(sub)
        ddb_requests.reset()
        summary = batches.run_payments(run_date=NEXT, workers=1, catch_up_days=0)
    assert summary.counts["paid"] == 1, summary.counts
    # the run's own: its record (PutItem, UpdateItem), its three Queries, the seller's GetItem;
    # the payment's: its receipt's transaction and its advance. The transaction is made twice
    # when the run draws its receipt number from the series the first payment's came from
    # (one in RECEIPT_NUMBER_SERIES): that counter moved on, the next number is taken.
    counts = ddb_requests.by_name()
    assert counts.pop("TransactWriteItems") in (1, 2)
    assert counts == {"PutItem": 1, "UpdateItem": 2, "Query": 3, "GetItem": 1}
    [receipt] = [r for r in receipts_of(sub) if r.BillingDate == NEXT.isoformat()]
    assert int(receipt.ProcessedAmount) == 999 + 300 + 1500
    assert [(line.Description, int(line.Net), int(line.Tax)) for line in receipt.TaxLines] == upcoming
    assert [(line.Description, int(line.Gross)) for line in receipt.TaxLines] == [
        ("Magazine", 999), ("Extra storage", 300), ("Priority support", 1500)]
    assert sum(int(line.Tax) for line in receipt.TaxLines) == int(receipt.Tax)
    # each add-on's line is for the period the fee pays for, at its rate
    assert {(line.PeriodStart, line.PeriodEnd, line.TaxRate) for line in receipt.TaxLines} == {
        ("2027-04-10", "2027-05-09", receipt.TaxLines[0].TaxRate)}


@pytest.mark.django_db  # the report reads Django's database too
def test_an_add_on_is_expansion_and_its_removal_contraction(table) -> None:
    """MRR reads the fee from the change's audit event: an add-on moves it the day it is
    added or removed (as a pending downgrade does), by its monthly amount."""
    sub = plan(user_id=make_user("addons@example.com").pk)  # the report finds accounts through users
    _added_paid_removed(sub, "price_default_SUPPORT")
    with at(date(2027, 4, 30)):
        report = revenue_report("2027-04", today=date(2027, 4, 30))
    rows = {row.month: row.by_currency["USD"] for row in report.months if "USD" in row.by_currency}
    assert (rows["2027-03"].new, rows["2027-03"].expansion, rows["2027-03"].closing) == (999, 1500, 2499)
    assert (rows["2027-04"].contraction, rows["2027-04"].closing) == (1500, 999)


def test_the_upcoming_lines_share_the_tax_as_the_receipt_does_to_the_cent(table) -> None:
    """Prices including the tax are shared by their gross, as the receipt shares them: with
    a $1.21 add-on beside $9.99 (VAT 23 % included), a share of the net would put a cent of
    tax on the other line."""
    sub = plan()
    access.create_product("TINY", "Tiny extra", 121, "USD", add_on=True)
    with at(MID):
        add_on_actions.add(fresh(sub), "price_default_TINY", today=MID, actor="customer")
    with at(NEXT):
        upcoming = _upcoming_lines(sub)
    assert _gross(upcoming) == [("Magazine", 999), ("Tiny extra", 121)]
    _pay(sub, NEXT)
    [receipt] = [r for r in receipts_of(sub) if r.BillingDate == NEXT.isoformat()]
    assert [(line.Description, int(line.Net), int(line.Tax)) for line in receipt.TaxLines] == upcoming


def test_prices_before_tax_share_their_nets_and_the_tax_added(table) -> None:
    """A seller whose prices exclude the tax (22 % added): each line is its price, its tax
    its share of the tax added, on the upcoming payment as on the receipt."""
    prices_exclude_vat()
    sub = plan()
    with at(MID):
        add_on_actions.add(fresh(sub), "price_default_STORAGE", today=MID, actor="customer")
    with at(NEXT):
        upcoming = _upcoming_lines(sub)
    assert [(words, net) for words, net, _ in upcoming] == [("Magazine", 999), ("Extra storage", 300)]
    _pay(sub, NEXT)
    [receipt] = [r for r in receipts_of(sub) if r.BillingDate == NEXT.isoformat()]
    assert [(line.Description, int(line.Net), int(line.Tax)) for line in receipt.TaxLines] == upcoming
    assert int(receipt.ProcessedAmount) == 1299 + int(receipt.Tax) and int(receipt.Tax) > 0


def test_a_change_of_seats_charges_the_seats_alone_on_one_line(table) -> None:
    """A seats receipt (a change's charge) pays for the seats added: never split by the
    add-ons, though its subscription has one billed that period."""
    sub = plan()
    with at(MID):
        add_on_actions.add(fresh(sub), "price_default_STORAGE", today=MID, actor="customer")
    _pay(sub, NEXT)
    day = date(2027, 4, 20)
    with at(day):
        done = seats.change_quantity(fresh(sub), 2, "customer", today=day)
    assert done.charged > 0
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "seats"]
    assert len(receipt.TaxLines) == 1 and int(receipt.TaxLines[0].Gross) == int(receipt.ProcessedAmount)


def test_a_coupon_and_tax_added_share_the_fee_as_the_receipt_does(table) -> None:
    """Prices before tax, with a coupon: the fee after the coupon is shared by the net, as
    the receipt shares it (by the gross, $7.49 of the plan's line would be $7.50)."""
    prices_exclude_vat()
    sub = plan()
    access.create_product("PUZZLES", "Puzzles", 150, "USD", add_on=True)
    with at(MID):
        coupon = access.create_coupon("QUARTER", percent_off=25, duration="forever", actor="staff")
        coupon_actions.give_coupon(fresh(sub), coupon, today=MID, actor="staff")
        add_on_actions.add(fresh(sub), "price_default_PUZZLES", today=MID, actor="customer")
    with at(NEXT):
        upcoming = _upcoming_lines(sub)
    assert [(words, net) for words, net, _ in upcoming] == [("Magazine", 749), ("Puzzles", 113)]
    _pay(sub, NEXT)
    [receipt] = [r for r in receipts_of(sub) if r.BillingDate == NEXT.isoformat()]
    assert [(line.Description, int(line.Net), int(line.Tax)) for line in receipt.TaxLines] == upcoming

