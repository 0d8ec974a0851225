"""Switching between prices and cadences (docs/MONEY.md "Switching price or cadence"):
monthly to yearly now (a new period from today, its whole price less the unused days'
credit), yearly to monthly from the end of the paid year (nothing now, the run charges
the new price on the next payment day), a switch of price within a product, the confirm
page's amount against the charge (USD and KRW), and a hypothesis property of the amounts across cadences. On moto; time by time-machine."""

from __future__ import annotations

import re
from datetime import date, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from hypothesis import given, settings
from hypothesis import strategies as st

from billing import access, batches
from billing.actions import lifecycle, switch
from billing.actions import prices as price_actions
from billing.actions import subscriptions as subscribing
from billing.models import Receipt, Subscription, SubscriptionStatus
from billing.rules.price_choice import choose_price
from billing.rules.pricing import Interval, PriceTerms
from billing.rules.schedule import cadence_of, first_period, new_cadence, period_amount, renewal_reminder
from billing.rules.switch import SwitchTarget, quote_switch
from core.money import format_with_symbol
from core.payments.gateway import get_gateway
from tests.builders import PASSWORD, card, fresh, make_customer, receipts_of

pytestmark = pytest.mark.django_db

MADE = date(2027, 3, 10)  # subscribed on the 10th: the first period is 10 March to 9 April (31 days)
MID = date(2027, 3, 25)  # 16 of those days left


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def catalog(currency: str = "USD", monthly: int = 1000, yearly: int = 12000) -> str:
    """A product (its default price monthly) with a yearly price; returns the yearly price's id."""
    access.create_product("MAG", "Magazine", monthly, currency)
    return price_actions.add_price("MAG", PriceTerms(currency, unit_amount=Decimal(yearly), interval="year"),
                                   actor="t", nickname="Yearly").PriceId


def subscribed(account, price_id: str | None = None, on: date = MADE) -> Subscription:
    """To the product's default monthly price, or to ``price_id``, paid on ``on``."""
    product = access.get_product("MAG")
    price = access.get_price(price_id) if price_id else access.default_price(product)
    with at(on):
        started = subscribing.subscribe_to_price(account, product, choose_price(price, product), payment_day=on.day,
                                                 card=card(), today=on, actor="customer")
    assert started.started
    return fresh(started.sub)


def switch_charges(sub) -> list[dict]:
    return [c for c in get_gateway().charges_made(sub_id=sub.sub_id) if c["metadata"].get("kind") == "switch"]


def test_monthly_to_yearly_starts_a_year_today_less_the_unused_days(moto_table) -> None:
    yearly = catalog()
    sub = subscribed(access.create_account("m2y@example.com"))
    mail.outbox = []
    with at(MID):
        q = switch.quote(sub, yearly, today=MID)
        unused = period_amount(1000, 10, MID, date(2027, 4, 9))  # 16 of 31 days at 10.00
        assert (q.upgrade, q.restarts, q.charge, q.credit, q.due_now) == (True, True, 12000, unused, 12000 - unused)
        assert q.new_period_end == date(2028, 3, 24)
        done = switch.switch(fresh(sub), yearly, today=MID, actor="customer", expected=q)
    assert done.charged == 12000 - unused == 11484
    after = fresh(sub)
    assert (after.PriceId, after.PaymentAmount, after.Interval, after.IntervalCount, after.PaymentDay) == (
        yearly, 12000, "year", 1, 25)
    assert (after.IntervalAnchor, after.PaidThroughDate, after.NextPaymentDate, after.LastPaymentDate) == (
        "2027-03-25", "2028-03-24", "2028-03-25", "2027-03-25")
    # a yearly renewal is reminded LONG_PERIOD_REMINDER_DAYS ahead (schedule.renewal_reminder)
    assert after.NextReminderDate == renewal_reminder(cadence_of(after), date(2028, 3, 25), 7, MID).isoformat()
    assert after.NextReminderDate < "2028-03-18" and after.DuePaymentKey.startswith("2028-03-25#")
    [told] = [m for m in mail.outbox if not m.subject.startswith("Invoice ")]
    assert "A new billing period starts today and runs to 24 March 2028" in told.body and "$114.84" in told.body
    [charge] = switch_charges(sub)
    assert charge["idempotency_key"] == f"{sub.sub_id}:switch:2027-03-25:{yearly}"
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert (receipt.ProcessedAmount, receipt.SwitchCharge, receipt.SwitchCredit, receipt.PeriodStart,
            receipt.PeriodEnd, receipt.SKU) == (11484, 12000, unused, "2027-03-25", "2028-03-24", "MAG")
    assert receipt.SK.split("#")[3] == "MAG~switch"  # never the period's receipt of the same day
    # the next payment: a year on, the yearly price
    renew = date(2028, 3, 25)
    with at(renew):
        batches.run_payments(run_date=renew, workers=1)
    assert [r.ProcessedAmount for r in receipts_of(sub) if r.BillingDate == renew.isoformat()] == [12000]
    assert fresh(sub).PaidThroughDate == "2029-03-24"


def test_yearly_to_monthly_waits_for_the_end_of_the_paid_year(moto_table) -> None:
    yearly = catalog()
    sub = subscribed(access.create_account("y2m@example.com"), yearly)
    assert (sub.Interval, sub.PaidThroughDate, sub.NextPaymentDate) == ("year", "2028-03-09", "2028-03-10")
    day = date(2027, 9, 1)
    with at(day):
        q = switch.quote(sub, "MAG", today=day)
        assert (q.upgrade, q.due_now, q.effective, q.restarts) == (False, 0, date(2028, 3, 10), False)
        switch.switch(fresh(sub), "MAG", today=day, actor="customer", expected=q)
    after = fresh(sub)
    assert (after.PriceId, after.PaymentAmount, after.Interval, after.IntervalCount, after.IntervalAnchor) == (
        None, 1000, None, None, None)
    assert (after.PaidThroughDate, after.NextPaymentDate, after.SwitchFrom) == ("2028-03-09", "2028-03-10",
                                                                               "2028-03-10")
    assert not switch_charges(sub)
    # A cancel now before the year's end still finds the yearly receipt (older than the
    # monthly window) and refunds its unused days.
    later = date(2027, 11, 20)
    with at(later):
        assert lifecycle.refund_if_cancelled_now(fresh(sub), later) > 0
    renew = date(2028, 3, 10)
    with at(renew):
        batches.run_payments(run_date=renew, workers=1)
    [paid] = [r for r in receipts_of(sub) if r.BillingDate == renew.isoformat()]
    assert (paid.ProcessedAmount, paid.PeriodEnd) == (1000, "2028-04-09")


def test_a_cheaper_price_of_the_same_cadence_and_a_dearer_one(moto_table) -> None:
    """Within one cadence the rule is the switch of product's: a higher price now for the
    paid days, a lower one from the next payment."""
    catalog()
    dear = price_actions.add_price("MAG", PriceTerms("USD", unit_amount=Decimal(2000)), actor="t").PriceId
    sub = subscribed(access.create_account("same@example.com"))
    with at(MID):
        q = switch.quote(sub, dear, today=MID)
        assert (q.upgrade, q.restarts, q.charge) == (True, False, period_amount(2000, 10, MID, date(2027, 4, 9)))
        switch.switch(fresh(sub), dear, today=MID, actor="customer", expected=q)
    after = fresh(sub)
    assert (after.PriceId, after.PaymentAmount, after.Interval, after.PaidThroughDate) == (dear, 2000, None,
                                                                                           "2027-04-09")
    with at(MID + timedelta(days=1)):
        back = switch.quote(after, "MAG", today=MID + timedelta(days=1))
        assert (back.upgrade, back.effective) == (False, date(2027, 4, 10))


def test_in_a_free_trial_a_new_cadence_starts_with_the_first_charge(moto_table) -> None:
    """Nothing was paid: nothing settles now, and the first charge after the trial is the
    yearly price's, prorated to the payment day as a yearly subscription with a trial's."""
    access.create_product("TRY", "Trial box", 1000, "USD", trial_days=14)
    yearly = price_actions.add_price("TRY", PriceTerms("USD", unit_amount=Decimal(12000), interval="year"),
                                     actor="t").PriceId
    product = access.get_product("TRY")
    with at(MID):
        started = subscribing.subscribe_to_price(access.create_account("trial@example.com"), product,
                                                 choose_price(access.default_price(product), product), payment_day=25,
                                                 card=card(), today=MID, actor="customer")
    sub = fresh(started.sub)
    assert (sub.TrialEnd, sub.NextPaymentDate) == ("2027-04-07", "2027-04-08")
    day = date(2027, 3, 30)
    with at(day):
        q = switch.quote(sub, yearly, today=day)
        assert (q.upgrade, q.charge, q.credit, q.restarts, q.trial_end) == (True, 0, 0, False, date(2027, 4, 7))
        switch.switch(fresh(sub), yearly, today=day, actor="customer", expected=q)
    assert not switch_charges(sub)
    after = fresh(sub)
    assert (after.Interval, after.IntervalAnchor, after.NextPaymentDate) == ("year", "2027-04-25", "2027-04-08")
    first = date(2027, 4, 8)
    with at(first):
        batches.run_payments(run_date=first, workers=1)
    [paid] = [r for r in receipts_of(sub) if r.BillingDate == first.isoformat()]
    assert (paid.ProcessedAmount, paid.PeriodEnd) == (
        period_amount(12000, cadence_of(after), first, date(2027, 4, 24)), "2027-04-24")
    assert fresh(sub).NextPaymentDate == "2027-04-25"


def test_a_crash_after_a_switch_of_price_s_charge_is_refunded_by_the_reconciliation(moto_table, monkeypatch) -> None:
    """The charge's receipt key within one product (``MAG~switch``) is the one the
    reconciliation looks for: found missing once, recorded and refunded whole (M2)."""
    from billing.batches.reconcile import reconcile

    yearly = catalog()
    sub = subscribed(access.create_account("crash@example.com"))
    with at(MID):
        monkeypatch.setattr(access, "switch_subscription", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("down")))
        with pytest.raises(RuntimeError):
            switch.switch(fresh(sub), yearly, today=MID, actor="customer")
        monkeypatch.undo()
        _, differences = reconcile(MID, MID, fix=True, today=MID)
        assert [d.kind for d in differences] == ["charge of a switch not made"] and differences[0].fixed
        assert reconcile(MID, MID, fix=True, today=MID)[1] == []  # once
    [undone] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert undone.RefundedAmount == undone.ProcessedAmount == 11484
    assert (fresh(sub).PriceId, fresh(sub).Interval) == (None, None)


def test_refusals(moto_table) -> None:
    yearly = catalog()
    sub = subscribed(access.create_account("no@example.com"), yearly)
    with at(MID), pytest.raises(switch.SwitchRefused, match="already"):
        switch.quote(sub, yearly, today=MID)
    with at(MID), pytest.raises(switch.SwitchRefused, match="not offered"):
        switch.quote(sub, "price_MAG_nope", today=MID)
    # A subscription billed for its usage keeps its cadence (its usage periods are the cadence's).
    from billing.access.usage_billing import attach_metered_price
    from billing.actions import meters as meter_actions
    from billing.models import MeterAggregation

    meter_actions.add_meter("pages", "Pages", MeterAggregation.SUM, actor="t")
    metered = price_actions.add_price("MAG", PriceTerms("USD", unit_amount=Decimal(1)), actor="t", meter="pages")
    usage = attach_metered_price(subscribed(access.create_account("usage@example.com")), metered.PriceId)
    with at(MID), pytest.raises(switch.SwitchRefused, match="billed for its usage"):
        switch.quote(usage, yearly, today=MID)
    price_actions.archive_price(access.get_price(yearly), actor="t")
    other = subscribed(access.create_account("no2@example.com"))
    with at(MID), pytest.raises(switch.SwitchRefused, match="archived"):
        switch.quote(other, yearly, today=MID)


# --- the confirm page's amount is the amount charged ----------------------------------------


def _due_now(html: str) -> str:
    return re.search(r'data-testid="due-now">([^<]+)<', html).group(1)


def _next_payment(html: str) -> str:
    return re.search(r'data-testid="next-payment">([^<]+)<', html).group(1)


@pytest.mark.parametrize(("currency", "monthly", "yearly", "shown"), [
    ("USD", 1000, 12000, "$114.84"), ("KRW", 10000, 120000, "KRW 114,839")])
def test_the_confirm_page_shows_what_monthly_to_yearly_charges(db, moto_table, currency, monthly, yearly,
                                                                shown) -> None:
    price_id = catalog(currency, monthly, yearly)
    customer = make_customer(f"page-{currency.lower()}@example.com")
    sub = subscribed(access.get_account(customer.account_id))
    url = f"/subscriptions/{sub.sub_id}/switch/"
    with at(MID):
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        choose = customer.client.get(url).content.decode()
        assert "Magazine — " in choose and "(from today)" in choose
        page = customer.client.post(url, {"sku": price_id})
        html = page.content.decode()
        assert 'data-testid="new-period"' in html and "a year" in html
        q = page.context["quote"]
        done = customer.client.post(url, {"sku": price_id, "step": "confirm", "upgrade": "1", "charge": q.charge,
                                          "credit": q.credit}, follow=True)
    assert done.status_code == 200 and "a new billing period started today" in done.content.decode()
    [charge] = switch_charges(sub)
    assert _due_now(html) == shown == format_with_symbol(charge["amount"], currency)


@pytest.mark.parametrize(("currency", "monthly", "yearly", "shown"), [
    ("USD", 1000, 12000, "$10.00"), ("KRW", 10000, 120000, "KRW 10,000")])
def test_the_confirm_page_shows_what_yearly_to_monthly_charges(db, moto_table, currency, monthly, yearly,
                                                                shown) -> None:
    price_id = catalog(currency, monthly, yearly)
    customer = make_customer(f"down-{currency.lower()}@example.com")
    sub = subscribed(access.get_account(customer.account_id), price_id)
    url = f"/subscriptions/{sub.sub_id}/switch/"
    day = date(2027, 9, 1)
    with at(day):
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        page = customer.client.post(url, {"sku": "MAG"})
        html = page.content.decode()
        assert "Nothing is charged or refunded now" in html and "a month" in html
        assert customer.client.post(url, {"sku": "MAG", "step": "confirm", "upgrade": "0", "charge": 0,
                                          "credit": 0}).status_code == 302
    assert not switch_charges(sub)
    told = _next_payment(html)
    assert shown in told and "10 March 2028" in told
    renew = date(2028, 3, 10)
    with at(renew):
        batches.run_payments(run_date=renew, workers=1)
    [paid] = [r for r in receipts_of(sub) if r.BillingDate == renew.isoformat()]
    assert paid.ProcessedAmount == monthly


# --- the rule, over cadences ---------------------------------------------------------------

CADENCES = [(Interval.MONTH, 1), (Interval.YEAR, 1), (Interval.MONTH, 3), (Interval.WEEK, 1), (Interval.WEEK, 2)]


@settings(max_examples=30, deadline=None)
@given(old=st.sampled_from(CADENCES), new=st.sampled_from(CADENCES), day=st.integers(1, 31),
       offset=st.integers(0, 400), into=st.integers(0, 400), old_price=st.integers(1, 100_000),
       new_price=st.integers(1, 100_000))
def test_across_cadences_the_charge_is_never_above_the_new_price_nor_the_credit_above_what_was_paid(
        old, new, day, offset, into, old_price, new_price) -> None:
    made = date(2027, 1, 1) + timedelta(days=offset)
    cadence = new_cadence(day, made, *old)
    start, end = first_period(cadence, made)
    today = min(end, start + timedelta(days=into))
    paid = period_amount(old_price, cadence, start, end)
    receipt = Receipt(sub_id="s1", PeriodStart=start.isoformat(), PeriodEnd=end.isoformat(),
                      BillingDate=start.isoformat(), ProcessedAmount=paid, RefundedAmount=0)
    sub = Subscription("ACC#a", "SUB#s1#SKU#A", SKU="A", PaymentAmount=old_price, PaymentDay=day, Currency="USD",
                       Status=SubscriptionStatus.ACTIVE, PaidThroughDate=end.isoformat(),
                       NextPaymentDate=(end + timedelta(days=1)).isoformat(), LastPaymentDate=start.isoformat(),
                       Interval=None if cadence.is_monthly else str(cadence.interval),
                       IntervalCount=None if cadence.is_monthly else cadence.count,
                       IntervalAnchor=cadence.anchor.isoformat() if cadence.anchor else None)
    assert cadence_of(sub) == cadence
    q = quote_switch(sub, SwitchTarget("B", "B", new_price, "price_B_x", "USD", *new), [receipt], today)
    assert 0 <= q.charge <= new_price and 0 <= q.credit <= paid
    assert q.due_now <= new_price and q.refund_now <= q.credit
    if not q.upgrade:
        assert (q.charge, q.credit, q.effective) == (0, 0, end + timedelta(days=1))
    if q.restarts:  # a longer interval: the new cadence's whole first period, from today
        assert q.charge == new_price and q.new_cadence is not None
        assert first_period(q.new_cadence, today) == (today, q.new_period_end)
    if q.new_cadence is not None and not q.upgrade:  # from the next payment: a whole period of it
        assert first_period(q.new_cadence, end + timedelta(days=1))[0] == end + timedelta(days=1)


def test_staff_switch_monthly_to_yearly_then_see_the_way_back(db, moto_table, client) -> None:
    """The staff page offers the prices, asks with the new price in words, and charges what it asked."""
    from django.urls import reverse

    from tests.builders import make_user

    yearly = catalog()
    account = access.create_account("staff-sw@example.com")
    sub = subscribed(account)
    url = reverse("admin:staff_switch", args=[account.account_id, sub.sub_id])
    with at(MID):
        client.force_login(make_user("money@example.com", staff=True, money=True))
        assert "Magazine — $120.00 a year (from today)" in client.get(url).content.decode()
        shown = client.post(url, {"sku": yearly})
        question = shown.content.decode()
        assert "at 120.00 USD a year, from today" in question and "114.84 USD is charged" in question
        done = client.post(url, dict(shown.context["form"].initial.items()), follow=True)
    assert "114.84 USD charged now" in done.content.decode()
    [charge] = switch_charges(sub)
    assert charge["amount"] == 11484 and fresh(sub).Interval == "year"
    with at(MID + timedelta(days=1)):
        back = client.post(url, {"sku": "MAG"}).content.decode()
    assert "from the next payment (2028-03-25), at 10.00 USD a month? Nothing is charged" in back


def test_the_receipt_of_the_period_in_force_is_still_found_after_a_switch(moto_table) -> None:
    """Eight months on, outside the six months' window: the yearly receipt of a switch
    within the product (keyed ``MAG~switch``), and the yearly receipt of a subscription
    switched to another product's monthly price from the year's end (keyed by the old SKU)."""
    yearly = catalog()
    access.create_product("NEWS", "News", 900, "USD")
    restarted = subscribed(access.create_account("in-force-1@example.com"))
    with at(MID):
        switch.switch(fresh(restarted), yearly, today=MID, actor="customer")
    waiting = subscribed(access.create_account("in-force-2@example.com"), yearly)
    with at(MID):
        switch.switch(fresh(waiting), "NEWS", today=MID, actor="customer")
    later = date(2027, 11, 20)
    window = date(2027, 5, 20)
    found = access.receipts_in_force([fresh(restarted), fresh(waiting)], window, later)
    assert sorted((r.sub_id, r.Kind or "", r.PeriodEnd) for r in found) == sorted([
        (restarted.sub_id, "switch", "2028-03-24"), (waiting.sub_id, "", "2028-03-09")])
