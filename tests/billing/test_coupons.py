"""Coupons: staff's codes, a coupon's use counted with the write that gives it,
the payment run's discounted charges (to the minor unit), their durations, a 100 % coupon
recorded without a charge, and the requests per payment unchanged."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import date

import pytest

from billing import access, batches
from billing.actions import subscriptions as actions
from billing.models import COUPON_EVENTS_ACCOUNT, AuditAction, Coupon
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from billing.rules.coupons import CouponRefusal
from core.payments.gateway import get_gateway
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.builders import DECLINED_NUMBER, card, due_subscription, fresh, make_account, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

SUBSCRIBED = date(2027, 1, 10)  # payment day 15: the first period is 10-14 January, 5 of 31 days
FIRST_PRICE = 161  # 999 * 5 / 31 = 161.13
RENEWALS = [date(2027, 2, 15), date(2027, 3, 15), date(2027, 4, 15), date(2027, 5, 15)]


def new_coupon(code: str = "WELCOME", **kwargs) -> Coupon:
    kwargs.setdefault("percent_off", None if "amount_off" in kwargs else 25)
    return access.create_coupon(code, actor="staff@example.com", **kwargs)


def subscribed(coupon: Coupon | None, email: str = "pat@example.com", on: date = SUBSCRIBED):
    """A subscription made ``on`` with ``coupon`` and its first period paid."""
    account = make_account(email)
    sub = access.create_subscription(
        account, sku="NEWS-DAILY", payment_day=15, amount=999, currency="USD", card=card(), today=on,
        reminder_days_before=7, product_name="Daily News", coupon=coupon)
    out = payments.take_first_payment(sub, today=on)
    assert out.status == PaymentStatus.PAID, out.reason
    return fresh(sub)


def renew(sub, on: date):
    out = payments.take_payment(fresh(sub), run_date=on)
    assert out.status == PaymentStatus.PAID, out.reason
    return out


def charged(sub) -> list[int]:
    return [r.ProcessedAmount for r in sorted(receipts_of(sub), key=lambda r: r.BillingDate)]


def subscribe(coupon: Coupon | None, number: str | None = None) -> actions.Started:
    """pat subscribes on SUBSCRIBED as the portal does (the first charge at once)."""
    return actions.subscribe(make_account("pat@example.com"), sku="NEWS-DAILY", product_name="Daily News",
                             payment_day=15, amount=999, currency="USD", card=card(number) if number else card(),
                             today=SUBSCRIBED, actor="pat", coupon=coupon)


def bank_answers(started: actions.Started, *, approve: bool) -> actions.Started:
    """The customer's bank answers the first charge's 3-D Secure; the portal asks how it ended."""
    get_gateway().authenticate(started.outcome.charge_id, approve=approve)
    new = actions.NewSubscription("Daily News", 999, "USD", card(AUTHENTICATING_TEST_CARD))
    return actions.confirm_first_payment(fresh(started.sub), started.outcome.charge_id, new, today=SUBSCRIBED,
                                         actor="pat")


# --- staff's codes -------------------------------------------------------------------


def test_a_coupon_is_made_once_listed_with_one_query_and_audited(table, ddb_requests) -> None:
    new_coupon("welcome-20", percent_off=20, duration="repeating", duration_payments=3, max_uses=5)
    new_coupon("FIVE", amount_off=500, currency="usd")
    with pytest.raises(access.AlreadyExists):
        new_coupon("Welcome-20")
    ddb_requests.reset()
    coupons = access.list_coupons()
    assert ddb_requests.ops == ["Query"]
    assert [(c.Code, c.PercentOff, c.AmountOff, c.Currency) for c in coupons] == [
        ("FIVE", None, 500, "USD"), ("WELCOME-20", 20, None, None)]
    events = access.get_events_by_account(COUPON_EVENTS_ACCOUNT)
    assert Counter(e.Action for e in events) == {AuditAction.COUPON_CREATED: 2}


def test_ending_a_coupon_stops_new_uses_not_the_subscriptions_that_have_it(table) -> None:
    coupon = new_coupon(duration="forever")
    sub = subscribed(coupon)
    access.end_coupon(coupon, actor="staff@example.com")
    with pytest.raises(access.CouponRefused) as refused:
        subscribed(access.get_coupon("WELCOME"), email="late@example.com")
    assert refused.value.reason == CouponRefusal.ENDED
    renew(sub, date(2027, 1, 15))
    assert charged(sub) == [FIRST_PRICE - 40, 999 - 250]


# --- the discount, to the minor unit -----------------------------------------------


def test_a_percentage_on_a_prorated_first_period_and_on_renewals(table) -> None:
    sub = subscribed(new_coupon(percent_off=25, duration="forever"))
    renew(sub, date(2027, 1, 15))
    renew(sub, date(2027, 2, 15))
    # 161 - 40.25 (40); 999 - 249.75 (250), twice
    assert charged(sub) == [121, 749, 749]
    first = sorted(receipts_of(sub), key=lambda r: r.BillingDate)[0]
    assert (first.DiscountAmount, first.CouponCode, first.price_amount) == (40, "WELCOME", 161)
    assert fresh(sub).CouponPaymentsLeft is None and fresh(sub).CouponCode == "WELCOME"


def test_an_amount_off_on_a_prorated_first_period_and_on_renewals(table) -> None:
    sub = subscribed(new_coupon(amount_off=100, currency="USD", duration="repeating", duration_payments=2))
    renew(sub, date(2027, 1, 15))
    renew(sub, date(2027, 2, 15))
    assert charged(sub) == [FIRST_PRICE - 100, 899, 999]
    assert fresh(sub).CouponCode is None and fresh(sub).CouponPaymentsLeft is None


def test_once_discounts_only_the_first_payment(table) -> None:
    sub = subscribed(new_coupon(percent_off=50, duration="once"))
    assert fresh(sub).CouponCode is None  # used up by the first payment: its attributes went
    renew(sub, date(2027, 1, 15))
    assert charged(sub) == [80, 999]  # 161 - 80.5 (81)


def test_repeating_three_given_by_staff_discounts_three_renewals_and_the_fourth_is_full_price(table) -> None:
    sub = subscribed(None)
    renew(sub, date(2027, 1, 15))
    coupon = new_coupon(percent_off=10, duration="repeating", duration_payments=3)
    applied = access.apply_coupon(fresh(sub), coupon, today=date(2027, 1, 20), actor="staff@example.com")
    assert applied.CouponPaymentsLeft == 3
    left = []
    for on in RENEWALS:
        renew(sub, on)
        left.append(fresh(sub).CouponPaymentsLeft)
    assert charged(sub) == [FIRST_PRICE, 999, 899, 899, 899, 999]  # 99.9 off (100)
    assert left == [2, 1, None, None]
    assert access.get_coupon("WELCOME").Uses == 1
    [event] = [e for e in access.get_events_by_account(sub.account_id) if e.Action == AuditAction.COUPON_APPLIED]
    assert event.After["Coupon"] == "WELCOME" and event.Actor == "staff@example.com"


def test_staff_cannot_give_a_coupon_while_a_payment_is_due(table) -> None:
    sub = subscribed(None)
    coupon = new_coupon()
    with pytest.raises(access.PaymentInProgress):
        access.apply_coupon(fresh(sub), coupon, today=date(2027, 1, 15), actor="staff@example.com")
    assert access.get_coupon("WELCOME").Uses == 0 and fresh(sub).CouponCode is None


def test_a_hundred_percent_coupon_records_a_receipt_of_zero_without_a_charge(table) -> None:
    sub = subscribed(new_coupon(percent_off=100, duration="repeating", duration_payments=2))
    renew(sub, date(2027, 1, 15))
    renew(sub, date(2027, 2, 15))
    receipts = sorted(receipts_of(sub), key=lambda r: r.BillingDate)
    assert [r.ProcessedAmount for r in receipts] == [0, 0, 999]
    assert [r.ChargeId is None for r in receipts] == [True, True, False]
    assert [r.DiscountAmount for r in receipts] == [161, 999, None]
    assert len(get_gateway().charges_made(sub_id=sub.sub_id)) == 1  # only the full-price one
    assert fresh(sub).PaidThroughDate == "2027-03-14"


def test_an_amount_off_larger_than_the_period_is_capped_to_a_free_period(table) -> None:
    sub = subscribed(new_coupon(amount_off=500, currency="USD"))
    [receipt] = receipts_of(sub)
    assert (receipt.ProcessedAmount, receipt.DiscountAmount, receipt.ChargeId) == (0, FIRST_PRICE, None)
    assert get_gateway().charges_made(sub_id=sub.sub_id) == []


def test_the_discount_recorded_is_the_one_charged(table) -> None:
    sub = subscribed(new_coupon(percent_off=25, duration="forever"))
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert charge["metadata"]["coupon"] == "WELCOME" and charge["metadata"]["discount"] == "40"
    assert charge["amount"] == 121


def test_owed_amount_and_the_upcoming_totals_count_the_discount(table) -> None:
    sub = subscribed(new_coupon(percent_off=25, duration="forever"))
    assert payments.owed_amount(fresh(sub)) == 749
    [day] = access.get_upcoming(date(2027, 1, 15), 1, amount_of=payments.owed_amount)
    assert day.totals == {"USD": 749}


# --- refusals at subscribing ----------------------------------------------------------


@pytest.mark.parametrize(("terms", "reason"), [
    ({"max_uses": 1}, CouponRefusal.USED_UP),
    ({"valid_until": date(2027, 1, 9)}, CouponRefusal.EXPIRED),
    ({"valid_from": date(2027, 1, 11)}, CouponRefusal.NOT_YET),
    ({"amount_off": 100, "currency": "EUR"}, CouponRefusal.CURRENCY),
])
def test_a_coupon_that_cannot_be_used_writes_nothing(moto_table, terms, reason) -> None:
    coupon = new_coupon(**terms)
    if reason == CouponRefusal.USED_UP:
        subscribed(coupon, email="first@example.com")
        coupon = access.get_coupon("WELCOME")
    account = make_account("pat@example.com")
    with pytest.raises(access.CouponRefused) as refused:
        access.create_subscription(account, sku="NEWS-DAILY", payment_day=15, amount=999, currency="USD",
                                   card=card(), today=SUBSCRIBED, reminder_days_before=7, coupon=coupon)
    assert refused.value.reason == reason
    assert access.get_subscriptions_by_account(account.account_id) == []


def test_a_limit_reached_after_the_read_is_refused_by_the_transaction(moto_table) -> None:
    coupon = new_coupon(max_uses=1)
    stale = access.get_coupon("WELCOME")
    subscribed(coupon, email="first@example.com")
    account = make_account("pat@example.com")
    with pytest.raises(access.CouponRefused) as refused:
        access.create_subscription(account, sku="NEWS-DAILY", payment_day=15, amount=999, currency="USD",
                                   card=card(), today=SUBSCRIBED, reminder_days_before=7, coupon=stale)
    assert refused.value.reason == CouponRefusal.USED_UP
    assert access.get_subscriptions_by_account(account.account_id) == []
    assert access.get_coupon("WELCOME").Uses == 1


def test_a_first_payment_declined_gives_the_use_back(moto_table) -> None:
    coupon = new_coupon(max_uses=1)
    started = subscribe(coupon, DECLINED_NUMBER)
    assert not started.started
    assert access.get_coupon("WELCOME").Uses == 0


@pytest.mark.parametrize(("terms", "says"), [
    # 25 % of the prorated first period is $0.40, of a whole month $2.50: each said.
    ({"duration": "forever"}, "on this payment, then $2.50 off every payment"),
    ({"duration": "once"}, "on this payment only"),
    ({"duration": "repeating", "duration_payments": 3}, "on this payment, then $2.50 off each of the next 2 payments"),
])
def test_the_confirmation_email_shows_the_discount_and_for_how_long(moto_table, mailoutbox, terms, says) -> None:
    started = subscribe(new_coupon(**terms))
    assert started.started
    [mail] = [m for m in mailoutbox if "is confirmed" in m.subject]
    # 10..14 January: $1.61, 25 % off: -$0.40, $1.21 paid
    assert "Paid today:       $1.21 for" in mail.body
    assert f"Discount (WELCOME): -$0.40 {says}" in mail.body
    html = mail.alternatives[0][0]
    assert "Discount (WELCOME)" in html and f"−$0.40 {says}" in html


def test_the_confirmation_email_of_a_subscription_without_coupon_has_no_discount_line(moto_table, mailoutbox) -> None:
    subscribe(None)
    [mail] = [m for m in mailoutbox if "is confirmed" in m.subject]
    assert "Paid today:       $1.61 for" in mail.body and "Discount" not in mail.body


def test_a_first_payment_the_bank_asks_to_confirm_keeps_its_discount_and_its_one_use(moto_table, mailoutbox) -> None:
    # 3-D Secure on the first charge: the discounted charge waits for the bank; once the
    # customer confirms, its receipt carries the discount and the coupon, counted once.
    started = subscribe(new_coupon(max_uses=5), AUTHENTICATING_TEST_CARD)
    assert started.awaits_authentication and started.outcome.amount == FIRST_PRICE - 40  # 161 * 25 % = 40.25
    done = bank_answers(started, approve=True)
    assert done.started
    [receipt] = receipts_of(started.sub)
    assert (receipt.ProcessedAmount, receipt.DiscountAmount, receipt.CouponCode) == (121, 40, "WELCOME")
    assert access.get_coupon("WELCOME").Uses == 1
    [mail] = [m for m in mailoutbox if "is confirmed" in m.subject]
    assert "Discount (WELCOME): -$0.40 on this payment only" in mail.body


def test_a_first_payment_the_bank_refuses_to_confirm_gives_the_use_back(moto_table) -> None:
    started = subscribe(new_coupon(max_uses=1), AUTHENTICATING_TEST_CARD)
    assert access.get_coupon("WELCOME").Uses == 1  # held while the bank decides
    done = bank_answers(started, approve=False)
    assert not done.started and receipts_of(started.sub) == []
    assert access.get_coupon("WELCOME").Uses == 0


# --- concurrency: the use is counted in the subscription's own transaction -----------------


def test_eight_customers_racing_for_three_uses_on_dynamodb_local(local_table) -> None:
    new_coupon(max_uses=3)
    accounts = [make_account(f"c{n}@example.com") for n in range(8)]
    token = card()
    barrier = threading.Barrier(len(accounts))
    made, refused, errors = [], [], []

    def take(account) -> None:
        coupon = access.get_coupon("WELCOME")  # each reads it before any has written
        barrier.wait()
        try:
            made.append(access.create_subscription(
                account, sku="NEWS-DAILY", payment_day=15, amount=999, currency="USD", card=token,
                today=SUBSCRIBED, reminder_days_before=7, coupon=coupon))
        except access.CouponRefused as error:
            refused.append(error.reason)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=take, args=(a,)) for a in accounts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(made) == 3 and len(refused) == 5
    assert set(refused) <= {CouponRefusal.USED_UP, "changed"}
    assert access.get_coupon("WELCOME").Uses == 3
    with_coupon = [s for a in accounts for s in access.get_subscriptions_by_account(a.account_id)]
    assert len(with_coupon) == 3 and all(s.CouponCode == "WELCOME" for s in with_coupon)


# --- the payment run's requests ------------------------------------------------------------


def test_a_discounted_payment_costs_the_same_requests(table, ddb_requests) -> None:
    D = date(2027, 3, 15)
    token = card()
    subs = [due_subscription(n, due=D, card=token) for n in range(10)]
    for sub in subs:
        sub.CouponCode, sub.CouponPercentOff, sub.CouponPaymentsLeft = "WELCOME", 10, 3
    access.batch_items(subs)
    ddb_requests.reset()
    summary = batches.run_payments(run_date=D, workers=2, catch_up_days=0)
    assert summary.counts["paid"] == 10
    # As without a coupon (test_batch_payments): the BatchRun's PutItem and UpdateItem, one
    # index page, two writes per payment (the receipt's transaction takes its number too),
    # the run's one Query of incomplete subscriptions to expire and one of cancelled
    # subscriptions' usage due; the seller's tax profile, once per run.
    assert ddb_requests.by_name() == Counter({"PutItem": 1, "TransactWriteItems": 10, "UpdateItem": 11, "Query": 3,
                                              "GetItem": 1})
    assert {r.ProcessedAmount for s in subs for r in receipts_of(s)} == {899}
    assert {fresh(s).CouponPaymentsLeft for s in subs} == {2}
