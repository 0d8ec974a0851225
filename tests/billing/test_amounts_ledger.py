"""What the customer sees is what is charged, checked as a ledger would: for subscriptions
with each kind of coupon (percent and amount off; once, for N payments, for ever), a free
trial, a downgrade, an upgrade and a pause, in a 0-, a 2- and a 3-decimal currency, the
amounts read from the rendered pages (dashboard's next payments and monthly total, the
subscription, switch and cancel pages), the reminder e-mail and the staff's account and
upcoming pages equal what the real payment run then charges on each of the next three payment dates.

Also: the projection's first coming charge is what ``take_payment`` charges (a hypothesis
property), an upgrade during a free trial charges nothing now, and the staff's upcoming
days count a subscription due twice in the window twice.
"""

from __future__ import annotations

import html as htmllib
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from billing import access, batches
from billing.actions import lifecycle as lifecycle_actions
from billing.actions import switch as switch_actions
from billing.models import Subscription
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from billing.rules.projection import coming_charges, owed_charge
from billing.rules.schedule import is_anchor, next_payment_date
from core.mail import money_text
from core.money import format_with_code, format_with_symbol
from tests.builders import (
    BILLING_COUNTRY,
    DECLINED_NUMBER,
    Customer,
    card,
    fresh,
    make_account,
    make_customer,
    make_user,
    receipts_of,
)

pytestmark = pytest.mark.django_db

SUBSCRIBED = date(2027, 1, 10)  # payment day 15: the first period is 10-14 January
CHANGED = date(2027, 1, 11)  # the day a switch or a pause is made
PAYMENT_DAY = 15

# A 0-, a 2- and a 3-decimal currency: the monthly price, and an amount off in each.
CURRENCIES = {"KRW": (15000, 3000), "USD": (999, 500), "KWD": (4500, 1250)}


def at(day: date):
    """Noon UTC on ``day`` (the billing day in the tests' time zone)."""
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


@dataclass(frozen=True)
class Case:
    name: str
    coupon: dict | None = None  # create_coupon's terms
    trial: bool = False
    change: str = ""  # "downgrade", "upgrade" or "pause", made on CHANGED


CASES = [
    Case("plain"),
    Case("percent-for-3", {"percent_off": 10, "duration": "repeating", "duration_payments": 3}),
    Case("amount-for-ever", {"amount_off": True, "duration": "forever"}),
    Case("amount-for-2", {"amount_off": True, "duration": "repeating", "duration_payments": 2}),
    Case("percent-once-after-trial", {"percent_off": 20, "duration": "once"}, trial=True),
    Case("trial", trial=True),
    Case("percent-for-ever-then-downgrade", {"percent_off": 15, "duration": "forever"}, change="downgrade"),
    Case("amount-for-3-then-upgrade", {"amount_off": True, "duration": "repeating", "duration_payments": 3},
         change="upgrade"),
    Case("percent-for-3-then-pause", {"percent_off": 10, "duration": "repeating", "duration_payments": 3},
         change="pause"),
    Case("upgrade-in-trial", trial=True, change="upgrade"),
]


def products_in(currency: str) -> dict[str, str]:
    price, _ = CURRENCIES[currency]
    skus = {"std": f"STD-{currency}", "big": f"BIG-{currency}", "small": f"SMALL-{currency}",
            "trial": f"TRIAL-{currency}"}
    access.create_product(skus["std"], f"Standard {currency}", price, currency)
    access.create_product(skus["big"], f"Big {currency}", price * 2 + 7, currency)
    access.create_product(skus["small"], f"Small {currency}", price // 2 + 3, currency)
    access.create_product(skus["trial"], f"Trial {currency}", price, currency, trial_days=14)
    return skus


def make_case(case: Case, currency: str, buyer: tuple[str, str | None] | None = None,
              ) -> tuple[Customer, Subscription, dict[str, str]]:
    skus = products_in(currency)
    price, amount_off = CURRENCIES[currency]
    coupon = None
    if case.coupon:
        terms = dict(case.coupon)
        if terms.pop("amount_off", None):
            terms.update(amount_off=amount_off, currency=currency)
        coupon = access.create_coupon(f"C-{currency}", actor="staff@example.com", **terms)
    customer = make_customer(f"{case.name}-{currency}@example.com".lower())
    sku = skus["trial"] if case.trial else skus["std"]
    product = access.get_product(sku)
    with at(SUBSCRIBED):
        sub = access.create_subscription(
            access.get_account(customer.account_id), sku=sku, payment_day=PAYMENT_DAY, amount=price,
            currency=currency, card=card(), today=SUBSCRIBED, reminder_days_before=7, product_name=product.Name,
            coupon=coupon, trial_days=product.trial_days)
        if buyer:  # the customer's billing country and VAT number, as copied onto the subscription
            sub.update(actions=[Subscription.BillingCountry.set(buyer[0]), Subscription.VatNumber.set(buyer[1])])
        if not case.trial:
            out = payments.take_first_payment(sub, today=SUBSCRIBED)
            assert out.status == PaymentStatus.PAID, out.reason
    sub = fresh(sub)
    with at(CHANGED):
        if case.change in ("downgrade", "upgrade"):
            target = skus["small"] if case.change == "downgrade" else skus["big"]
            done = switch_actions.switch(sub, target, today=CHANGED, actor=customer.email)
            assert done.quote.upgrade == (case.change == "upgrade")
            if case.trial:  # a trial's days are free whatever the product: nothing charged now
                assert (done.quote.due_now, done.charged) == (0, 0)
        elif case.change == "pause":
            lifecycle_actions.pause(sub, resume=date(2027, 2, 15), today=CHANGED, actor=customer.email)
    return customer, fresh(sub), skus


def logged_in(client: Client, email: str) -> None:
    client.force_login(get_user_model().objects.get(email=email))


def _one(pattern: str, page: str) -> str:
    found = re.findall(pattern, page, flags=re.S)
    assert len(found) == 1, (pattern, found)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", found[0])).strip()


def full_month(start: date, end: date) -> bool:
    return is_anchor(PAYMENT_DAY, start) and end + timedelta(days=1) == next_payment_date(PAYMENT_DAY, start)


@pytest.mark.parametrize("currency", list(CURRENCIES))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_amount_shown_is_the_amount_charged(case: Case, currency: str, moto_table, settings) -> None:
    settings.REMINDER_DAYS_BEFORE = 7
    check_ledger(case, currency)


@pytest.mark.parametrize(("case", "currency"), [(CASES[2], "KWD"), (CASES[8], "KRW"), (CASES[9], "USD")],
                         ids=lambda v: getattr(v, "name", v))
def test_every_amount_shown_is_the_amount_charged_on_dynamodb_local(case: Case, currency: str, local_table,
                                                                    settings) -> None:
    settings.REMINDER_DAYS_BEFORE = 7
    check_ledger(case, currency)


# Prices that exclude tax, sold by an Italian business: to an Italian consumer (22% on top)
# and to a German business (reverse charged: the price alone).
TAXED = [(CASES[1], "USD", ("IT", None)), (CASES[7], "KWD", ("IT", None)), (CASES[8], "KRW", ("IT", None)),
         (CASES[0], "KRW", ("DE", "DE136695976")), (CASES[6], "USD", ("DE", "DE136695976"))]


@pytest.mark.parametrize(("case", "currency", "buyer"), TAXED, ids=lambda v: getattr(v, "name", str(v)))
def test_tax_exclusive_prices_are_shown_as_charged_net_plus_tax(case: Case, currency: str, buyer, moto_table,
                                                                  settings, monkeypatch) -> None:
    from types import SimpleNamespace

    from billing.access import seller

    profile = SimpleNamespace(LegalName="Rpay S.r.l.", Address="Via Roma 1", Country="IT", VatNumber="IT00743110157",
                              OssRegistered=True, UnderThreshold=False, PricesIncludeTax=False, Registrations=None,
                              Version=None)
    monkeypatch.setattr(seller, "get_seller_profile", lambda: profile)
    settings.REMINDER_DAYS_BEFORE = 7
    ledger = check_ledger(case, currency, buyer)
    for receipt in ledger:
        assert receipt.Net + receipt.Tax == receipt.ProcessedAmount and receipt.PricesIncludeTax is False
        assert receipt.TaxTreatment == ("domestic" if buyer[0] == "IT" else "reverse_charge")
        assert (receipt.Tax > 0) == (buyer[0] == "IT" and receipt.Net > 0)


def check_ledger(case: Case, currency: str, buyer: tuple[str, str | None] | None = None) -> list:
    """Read every amount to come, run the payment run on the next three dates, compare."""
    customer, sub, _ = make_case(case, currency, buyer)
    # the e-mail a switch or a pause sends names the next payment's amount
    changed_mail = [m for m in mail.outbox if customer.email in m.to
                    and (m.subject.startswith("Your subscription now") or m.subject.endswith("is paused"))]
    seen_on = date.fromisoformat(sub.NextReminderDate)  # the pages are read the day the reminder goes
    clerk = make_user("clerk@rpay.localhost", staff=True)
    money = lambda amount: format_with_symbol(amount, currency)  # noqa: E731 - the pages' format
    with at(seen_on):
        logged_in(customer.client, customer.email)  # sessions made at the real time have expired by then
        staff = Client()
        staff.force_login(clerk)
        mail.outbox.clear()
        batches.run_reminders(run_date=seen_on, workers=1)
        [reminder] = [m for m in mail.outbox if customer.email in m.to]
        dashboard = customer.client.get("/").content.decode()
        upcoming = [(d, htmllib.unescape(a)) for d, a in re.findall(
            r'<li class="d-flex[^"]*"><span>([^<]*?) · [^<]*</span><span class="money" data-testid="upcoming-amount">'
            r'([^<]*)</span></li>', dashboard)]
        assert len(upcoming) == 3, dashboard
        monthly = _one(r'data-testid="monthly-total">(.*?)</div>', dashboard)
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        next_amount = _one(r'data-testid="next-amount">(.*?)</span>', page)
        switch_page = _one(r'data-testid="next-payment">(.*?)</span>',
                           customer.client.get(f"/subscriptions/{sub.sub_id}/switch/").content.decode())
        cancel_page = _one(r'data-testid="next-payment">(.*?)</span>',
                           customer.client.get(f"/subscriptions/{sub.sub_id}/cancel/").content.decode())
        staff_page = staff.get(reverse("admin:staff_upcoming")).content.decode()
        staff_account = _one(r'data-testid="next-amount">(.*?)</small>', staff.get(
            reverse("admin:staff_account", args=[customer.account_id])).content.decode())
    dates = [date.fromisoformat(c.date.isoformat()) for c in coming_charges(sub, 3)]
    assert [d for d, _ in upcoming] == [f"{d.day} {d:%b %Y}" for d in dates]

    # The real payment run on each of the three dates the dashboard shows.
    for day in dates:
        with at(day):
            batches.run_payments(run_date=day, workers=1, reconcile=False)
    ledger = sorted((r for r in receipts_of(sub) if r.Kind != "switch" and r.BillingDate >= dates[0].isoformat()),
                    key=lambda r: r.BillingDate)
    assert [r.BillingDate for r in ledger] == [d.isoformat() for d in dates]
    charged = [int(r.ProcessedAmount) for r in ledger]

    assert [a for _, a in upcoming] == [money(a) for a in charged]
    assert next_amount == money(charged[0])
    assert money(charged[0]) in switch_page
    assert money(charged[0]) in cancel_page
    assert str(money_text(charged[0], currency)) in reminder.body
    assert staff_account == format_with_code(charged[0], currency)
    if case.change in ("downgrade", "upgrade"):
        [switched] = changed_mail
        assert f"is {money(charged[0])}." in switched.body
    elif case.change == "pause":
        [paused] = changed_mail
        assert str(money_text(charged[0], currency)) in paused.body
    month = next(int(r.ProcessedAmount) for r in ledger
                 if full_month(date.fromisoformat(r.PeriodStart), date.fromisoformat(r.PeriodEnd)))
    if case.change == "pause":  # still paused when read: not counted until it resumes, and said so
        assert monthly == "—" and 'data-testid="paused-not-counted"' in dashboard
    else:
        assert monthly == money(month)
    # The staff's upcoming days: each payment in the window on its day, at its own amount.
    for day, amount in zip(dates, charged, strict=True):
        if (day - seen_on).days < 30:
            row = _one(rf'<tr data-day="{day.isoformat()}">(.*?)</tr>', staff_page)
            assert format_with_code(amount, currency) in row
    if case.trial and case.change == "upgrade":  # the first charge after the trial is at the new price
        assert f"BIG-{currency}" == ledger[0].SKU and not [r for r in receipts_of(sub) if r.Kind == "switch"]
    return ledger


def test_the_staff_upcoming_days_count_a_payment_due_twice_in_the_window_twice(moto_table) -> None:
    # Paying on the 1st: 1 February and 1 March are both within 30 days of 31 January.
    account = make_account("twice@example.com")
    coupon = access.create_coupon("TWICE", percent_off=50, duration="once", actor="staff@example.com")
    with at(date(2027, 1, 20)):
        sub = access.create_subscription(account, sku="NEWS", payment_day=1, amount=1000, currency="USD", card=card(),
                                         today=date(2027, 1, 20), reminder_days_before=7, product_name="News")
        payments.take_first_payment(sub, today=date(2027, 1, 20))
        access.apply_coupon(fresh(sub), coupon, today=date(2027, 1, 20), actor="staff@example.com")
    clerk = make_user("clerk@rpay.localhost", staff=True)
    with at(date(2027, 1, 31)):
        staff = Client()
        staff.force_login(clerk)
        chart = staff.get(reverse("admin:staff_upcoming")).context["chart"]
    values = chart["amounts"]["USD"]["values"]
    assert values[1] == 500 and values[29] == 1000  # 1 Feb at the coupon's half, 1 Mar at the full price
    assert sum(chart["payments"]) == 2


def test_an_upgrade_in_a_free_trial_charges_nothing_now_and_the_first_charge_is_at_the_new_price(
        customer, products) -> None:
    access.create_product("TRIAL-NEWS", "Trial News", 999, "USD", trial_days=14)
    access.create_product("BIG-NEWS", "Big News", 2500, "USD")
    with at(date(2027, 1, 10)):
        sub = access.create_subscription(
            access.get_account(customer.account_id), sku="TRIAL-NEWS", payment_day=10, amount=999, currency="USD",
            card=card(), today=date(2027, 1, 10), reminder_days_before=7, product_name="Trial News", trial_days=14)
    with at(date(2027, 1, 12)):
        logged_in(customer.client, customer.email)
        page = customer.client.post(f"/subscriptions/{sub.sub_id}/switch/", {"sku": "BIG-NEWS"}).content.decode()
        assert _one(r'data-testid="due-now">(.*?)</td>', page) == "$0.00"
        assert "Credit" not in page
        done = switch_actions.switch(fresh(sub), "BIG-NEWS", today=date(2027, 1, 12), actor=customer.email)
    assert (done.quote.charge, done.quote.credit, done.charged) == (0, 0, 0)
    assert receipts_of(sub) == []
    first = owed_charge(fresh(sub))
    # The trial ends on 23 January; the first charge, on the 24th, runs to 9 February at the new price.
    assert (first.date, first.period_end, first.amount) == (date(2027, 1, 24), date(2027, 2, 9), round(2500 * 17 / 31))
    with at(date(2027, 1, 24)):
        batches.run_payments(run_date=date(2027, 1, 24), workers=1, reconcile=False)
    [receipt] = receipts_of(sub)
    assert (receipt.ProcessedAmount, receipt.SKU) == (first.amount, "BIG-NEWS")


# --- the projection's first coming charge is what the run charges ---------------------


@hypothesis_settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(price=st.integers(1, 10**6), day=st.integers(1, 31), subscribed_on=st.dates(date(2027, 1, 1), date(2028, 12, 31)),
       percent=st.one_of(st.none(), st.integers(1, 100)), amount_off=st.integers(1, 10**6),
       duration=st.sampled_from(["once", "repeating", "forever"]), n_payments=st.integers(1, 3),
       currency=st.sampled_from(list(CURRENCIES)), with_coupon=st.booleans(),
       new_day=st.one_of(st.none(), st.integers(1, 31)))
def test_the_first_coming_charge_is_what_take_payment_charges(moto_table, price, day, subscribed_on, percent,
                                                              amount_off, duration, n_payments, currency,
                                                              with_coupon, new_day) -> None:
    n = access.new_id()
    coupon = None
    if with_coupon:
        terms = {"percent_off": percent} if percent else {"amount_off": amount_off, "currency": currency}
        coupon = access.create_coupon(f"P{n[:8]}", duration=duration, actor="staff@example.com",
                                      duration_payments=n_payments if duration == "repeating" else None, **terms)
    account = make_account(f"p{n}@example.com")
    sub = access.create_subscription(account, sku="NEWS", payment_day=day, amount=price, currency=currency,
                                     card=card(), today=subscribed_on, reminder_days_before=7, product_name="News",
                                     coupon=coupon)
    on = subscribed_on
    for n in range(3):  # the first payment and two renewals: each the projection's first, as it said
        sub = fresh(sub)
        if n == 1 and new_day is not None and new_day != day:  # a change of day: a prorated period next
            sub = access.change_payment_day(sub, new_day)
        projected = coming_charges(sub, 2)
        out = payments.take_payment(sub, run_date=projected[0].date)
        assert out.status == PaymentStatus.PAID, out.reason
        assert (out.amount, out.period, out.period_end) == (
            projected[0].amount, projected[0].period_start, projected[0].period_end)
        after = coming_charges(fresh(sub), 1)[0]
        assert after == projected[1]  # the walk's second is the next one's first after the advance
        on = projected[1].date
    assert on > subscribed_on


# --- a coupon's words at subscribing --------------------------------------------------


def test_an_amount_off_for_ever_reads_as_the_discount_of_each_payment(customer) -> None:
    # $5.00 off for ever, subscribing on 10 January for the 15th: the first period (5 days)
    # costs $1.61, so $1.61 off it; then $5.00 off every payment, not "−$1.61 on every payment".
    access.create_coupon("FIVE", amount_off=500, currency="USD", duration="forever", actor="staff@example.com")
    with at(SUBSCRIBED):
        logged_in(customer.client, customer.email)
        chosen = customer.client.post("/subscribe/", {"product": "NEWS-DAILY", "payment_day": "15",
                                                      "card_number": "4242 4242 4242 4242", "exp_month": "12",
                                                      "exp_year": "2030", "cvc": "123", "coupon": "FIVE",
                                                      **BILLING_COUNTRY})
        assert chosen.status_code == 302, chosen.content.decode()[:2000]
        html = customer.client.get("/subscribe/confirm/").content.decode()
        terms = _one(r'data-testid="discount-terms">(.*?)</span>', html)
        assert terms == "on this payment, then $5.00 off every payment"
        assert 'data-testid="first-charge">$0.00' in html
        quote = re.search(r'name="quote" value="([^"]+)"', html)[1]
        mail.outbox.clear()
        assert customer.client.post("/subscribe/confirm/", {"quote": quote}).status_code == 302
    [confirmed] = [m for m in mail.outbox if "confirmed" in m.subject]
    assert "on this payment, then $5.00 off every payment" in confirmed.body
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert [c.amount for c in coming_charges(sub, 2)] == [999 - 500, 999 - 500]


# --- a past-due period ----------------------------------------------------------------


@pytest.mark.parametrize("currency", ["KRW", "KWD"])
def test_a_past_due_period_is_shown_and_retried_at_the_amount_owed(moto_table, currency) -> None:
    # Paid 10-14 January with 10 % off for 3 payments; the 15 January renewal is declined:
    # the period stays owed (with its discount: the coupon is used by a payment, not a try),
    # is retried the next day, then the months after it.
    customer, sub, _ = make_case(CASES[1], currency)
    access.replace_card(sub, card(DECLINED_NUMBER))
    with at(date(2027, 1, 15)):
        batches.run_payments(run_date=date(2027, 1, 15), workers=1, reconcile=False)
    sub = fresh(sub)
    assert sub.Status == "past_due" and sub.NextPaymentDate == "2027-01-16"
    access.replace_card(sub, card())
    with at(date(2027, 1, 15)):
        logged_in(customer.client, customer.email)
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        dashboard = customer.client.get("/").content.decode()
    next_amount = _one(r'data-testid="next-amount">(.*?)</span>', page)
    upcoming = [htmllib.unescape(a) for a in re.findall(r'data-testid="upcoming-amount">([^<]*)<', dashboard)]
    dates = [c.date for c in coming_charges(fresh(sub), 3)]
    assert dates == [date(2027, 1, 16), date(2027, 2, 15), date(2027, 3, 15)]
    for day in dates:
        with at(day):
            batches.run_payments(run_date=day, workers=1, reconcile=False)
    ledger = sorted((r for r in receipts_of(sub) if r.BillingDate >= "2027-01-15"), key=lambda r: r.BillingDate)
    assert [r.BillingDate for r in ledger] == ["2027-01-15", "2027-02-15", "2027-03-15"]
    charged = [format_with_symbol(int(r.ProcessedAmount), currency) for r in ledger]
    assert next_amount == charged[0] and upcoming == charged
    assert [bool(r.DiscountAmount) for r in ledger] == [True, True, False]
