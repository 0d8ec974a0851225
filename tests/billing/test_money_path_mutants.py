"""Behaviour of the money path that its mutants showed untested (docs/MUTATION.md): the
amounts charged, recorded and e-mailed with a coupon, and the helpers of core/money.py,
the refunds and the batch's writes. Written against what is charged and said, not the
private helpers, which move."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.utils import translation

from billing import access
from billing.actions import subscriptions as subscribing
from billing.actions import switch
from billing.models import AuditAction, Receipt, Subscription
from billing.operations import payments, refunds
from billing.operations.outcomes import PaymentStatus
from billing.rules import api_objects, tax
from core import money
from core.pages import today
from core.payments.errors import GatewayError, RefundRefused
from core.payments.gateway import get_gateway
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.builders import card, fresh, make_account, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

SUBSCRIBED = date(2027, 1, 15)  # payment day 15: a whole month, 999


def subscribed(coupon=None, *, email: str = "pat@example.com", currency: str = "USD", amount: int = 999):
    account = make_account(email)
    sub = access.create_subscription(
        account, sku="NEWS-DAILY", payment_day=15, amount=amount, currency=currency, card=card(), today=SUBSCRIBED,
        reminder_days_before=7, product_name="Daily News", coupon=coupon)
    mail.outbox = []
    out = payments.take_first_payment(sub, today=SUBSCRIBED)
    assert out.status == PaymentStatus.PAID, out.reason
    return fresh(sub)


def receipt_mail() -> str:
    [message] = [m for m in mail.outbox if m.subject.startswith("Invoice ")]
    return message.body


def lines(body: str) -> list[str]:
    return [" ".join(line.split()) for line in body.splitlines() if line.strip()]


# --- the receipt e-mail of a discounted payment ----------------------------------------


def test_the_receipt_email_of_a_discounted_payment_shows_price_discount_and_amount(moto_table) -> None:
    coupon = access.create_coupon("TENOFF", actor="staff", percent_off=10, duration="forever")
    sub = subscribed(coupon)
    said = lines(receipt_mail())
    # 999 less 10 % (99.9: 100): the price is what was charged plus the discount
    assert "Price: $9.99" in said and "Discount (TENOFF): -$1.00" in said and "Amount: $8.99" in said
    [receipt] = receipts_of(sub)
    assert (receipt.ProcessedAmount, receipt.DiscountAmount) == (899, 100)
    # The audit trail says which coupon took what off this payment.
    [paid] = events(sub, "payment.succeeded")
    assert (paid.After["Amount"], paid.After["Coupon"], paid.After["Discount"]) == (899, "TENOFF", 100)


def test_the_receipt_email_of_a_payment_a_coupon_took_whole(moto_table) -> None:
    coupon = access.create_coupon("FREE", actor="staff", percent_off=100, duration="once")
    subscribed(coupon)
    said = lines(receipt_mail())
    assert "Price: $9.99" in said and "Discount (FREE): -$9.99" in said and "Amount: $0.00" in said
    assert not any(line.startswith("Reference:") for line in said)  # no charge, no reference


def test_the_receipt_email_of_a_discounted_payment_in_a_zero_and_a_three_decimal_currency(moto_table) -> None:
    coupon = access.create_coupon("AMOUNT", actor="staff", amount_off=100, currency="JPY", duration="forever")
    subscribed(coupon, currency="JPY", amount=1500)
    said = lines(receipt_mail())
    assert "Price: ¥1,500" in said and "Discount (AMOUNT): -¥100" in said and "Amount: ¥1,400" in said
    mail.outbox = []
    coupon = access.create_coupon("HALF", actor="staff", percent_off=50, duration="forever")
    subscribed(coupon, email="kw@example.com", currency="KWD", amount=3005)
    said = lines(receipt_mail())
    # 3.005 KWD less half (1.5025: 1.503 rounded half up to the minor unit, 1.502 paid)
    assert [line for line in said if line.startswith(("Price:", "Discount", "Amount:"))] == [
        "Price: KWD 3.005", "Discount (HALF): -KWD 1.503", "Amount: KWD 1.502"]


def test_the_receipt_email_without_a_coupon_has_no_discount_lines(moto_table) -> None:
    subscribed()
    said = lines(receipt_mail())
    assert "Amount: $9.99" in said
    assert not any(line.startswith(("Price:", "Discount")) for line in said)


def test_a_renewal_receipt_email_shows_the_renewals_discount(moto_table) -> None:
    coupon = access.create_coupon("LOYAL", actor="staff", amount_off=250, currency="EUR", duration="forever")
    sub = subscribed(coupon, currency="EUR", amount=1000)
    mail.outbox = []
    assert payments.take_payment(fresh(sub), run_date=date(2027, 2, 15)).status == PaymentStatus.PAID
    said = lines(receipt_mail())
    assert [line for line in said if line.startswith(("Price:", "Discount", "Amount:"))] == [
        "Price: €10.00", "Discount (LOYAL): -€2.50", "Amount: €7.50"]


# --- refunds ---------------------------------------------------------------------------


def paid_receipt(moto_table_fixture=None):
    sub = subscribed()
    [receipt] = receipts_of(sub)
    return sub, receipt


def test_a_refund_is_recorded_e_mailed_with_its_amounts_and_keyed_per_request(moto_table) -> None:
    sub, receipt = paid_receipt()
    mail.outbox = []
    done = refunds.refund_receipt(receipt, 300, request_id="req-1", actor="staff", reason="goodwill")
    assert (done.amount, done.mail_error) == (300, "") and done.refund_id
    assert done.receipt.RefundedAmount == 300
    [message] = mail.outbox
    assert message.subject == "Refund: Daily News" and message.to == ["pat@example.com"]
    said = lines(message.body)
    assert "Refunded now: $3.00" in said and "Refunded in all: $3.00 of $9.99" in said
    assert f"Reference: {done.refund_id}" in said
    [refund] = get_gateway().refunds_made(receipt.ChargeId)
    assert refund["idempotency_key"] == f"refund:{receipt.ChargeId}:req-1" and refund["amount"] == 300
    # the same request again: one refund, no second e-mail
    again = refunds.refund_receipt(fresh_receipt(receipt), 300, request_id="req-1", actor="staff")
    assert again.refund_id == done.refund_id and len(mail.outbox) == 1
    assert len(get_gateway().refunds_made(receipt.ChargeId)) == 1
    # another request: a refund of its own, the total said
    refunds.refund_receipt(fresh_receipt(receipt), 200, request_id="req-2", actor="staff")
    assert "Refunded in all: $5.00 of $9.99" in lines(mail.outbox[-1].body)
    assert fresh_receipt(receipt).RefundedAmount == 500


def fresh_receipt(receipt):
    return access.get_receipt(receipt.account_id, receipt.SK)


def test_a_refund_the_gateway_refuses_is_audited_with_its_reason(moto_table) -> None:
    sub, receipt = paid_receipt()
    with pytest.raises(RefundRefused, match="refund exceeds the amount charged"):
        refunds.refund_receipt(receipt, 5000, request_id="too-much", actor="staff@example.com")
    [event] = [e for e in access.get_events_by_account(sub.account_id) if e.Action == AuditAction.STAFF_REFUND_FAILED]
    assert event.Note == "refund exceeds the amount charged" and event.Actor == "staff@example.com"
    assert event.Subject == receipt.SK
    assert not fresh_receipt(receipt).RefundedAmount


def test_a_refund_the_gateway_cannot_answer_is_audited_and_raised(moto_table, monkeypatch) -> None:
    sub, receipt = paid_receipt()

    def down(*args, **kwargs):
        raise GatewayError("connection reset")

    monkeypatch.setattr(type(get_gateway()), "refund", down)
    with pytest.raises(GatewayError):
        refunds.refund_receipt(receipt, 100, request_id="r", actor="staff")
    [event] = [e for e in access.get_events_by_account(sub.account_id) if e.Action == AuditAction.STAFF_REFUND_FAILED]
    assert event.Note == "gateway unreachable: connection reset"


def test_a_receipt_without_a_charge_cannot_be_refunded(moto_table) -> None:
    coupon = access.create_coupon("FREE", actor="staff", percent_off=100, duration="once")
    sub = subscribed(coupon)
    [receipt] = receipts_of(sub)
    with pytest.raises(RefundRefused, match="no charge to refund"):
        refunds.refund_receipt(receipt, 1, request_id="r", actor="staff")


def test_a_refund_made_at_the_processor_is_recorded_and_e_mailed_once(moto_table) -> None:
    sub, receipt = paid_receipt()
    mail.outbox = []
    assert refunds.record_processor_refund(receipt, "re_dash_1", 250, actor="stripe") is True
    assert refunds.record_processor_refund(fresh_receipt(receipt), "re_dash_1", 250, actor="stripe") is False
    [message] = mail.outbox
    said = lines(message.body)
    assert "Refunded now: $2.50" in said and "Reference: re_dash_1" in said
    stored = fresh_receipt(receipt)
    assert stored.RefundedAmount == 250
    [refund] = stored.Refunds
    assert (refund.RefundId, refund.Amount) == ("re_dash_1", 250)
    assert refund.Reason == "refunded at the payment processor"


def test_a_refund_e_mail_names_the_sku_when_the_receipt_has_no_product_name(moto_table) -> None:
    sub, receipt = paid_receipt()
    receipt.ProductName = None
    mail.outbox = []
    refunds.tell_refund(receipt, "re_x", 100)
    [message] = mail.outbox
    assert message.subject == "Refund: NEWS-DAILY" and "NEWS-DAILY" in message.body
    # told before the receipt records any refund: nothing refunded in all yet
    assert "Refunded in all: $0.00 of $9.99" in lines(message.body)


# --- core/money.py ---------------------------------------------------------------------


@pytest.mark.parametrize(("code", "payable"), [("usd", True), ("JPY", True), ("", False), (None, False),
                                               ("ZZZ", False)])
def test_payable_currencies(code, payable) -> None:
    assert money.is_payable_currency(code) is payable


def test_amounts_of_a_currency_the_table_does_not_know_have_two_decimals() -> None:
    assert money.exponent("zzz") == 2 and money.exponent(None) == 2 and money.exponent("jpy") == 0
    assert str(money.to_decimal(1299, "usd")) == "12.99" and str(money.to_decimal(5, "bhd")) == "0.005"
    assert str(money.to_decimal(500, "JPY")) == "500" and str(money.to_decimal(100, "USD")) == "1.00"
    assert money.minor_units(money.to_decimal(1299, "USD"), "usd") == 1299


def test_negative_and_zero_amounts_are_formatted_with_their_sign() -> None:
    with translation.override("en"):
        assert money.format_with_symbol(0, "USD") == "$0.00"
        assert money.format_with_symbol(-123456, "usd") == "-$1,234.56"
        assert money.format_with_symbol(-5, "CHF") == "-CHF 0.05"
        assert money.format_with_code(0, "USD") == "0.00 USD"
        assert money.format_with_code(-123456, "usd") == "-1,234.56 USD"
        assert money.format_with_code(1500, "jpy") == "1,500 JPY"
        assert money.decimal_string(-150, "USD") == "-1.50"


# --- the batch's conditional writes (billing/access/batch_writes.py) ---------------------

DUE = date(2027, 3, 15)


def due_sub(n: int = 1, **kwargs):
    from tests.builders import seed_due

    [sub] = seed_due(1, due=DUE, prefix=f"bw{n}-", **kwargs)
    return fresh(sub)


def events(sub, action):
    return [e for e in access.get_events_by_account(sub.account_id) if e.Action == action]


def test_a_declined_charge_marks_past_due_with_its_event(moto_table) -> None:
    sub = due_sub()
    access.mark_past_due(sub, slot=DUE, period=DUE, failed_retries=1, retry_on=date(2027, 3, 18),
                         next_reminder=date(2027, 4, 8), decline_code="insufficient_funds", actor="staff@x", amount=999)
    after = fresh(sub)
    assert (after.Status, after.BillingPeriod, after.RetryCount, after.NextPaymentDate, after.NextReminderDate) == (
        "past_due", "2027-03-15", 1, "2027-03-18", "2027-04-08")
    assert after.PaymentDetails.AwaitingCharge is None
    [event] = events(sub, AuditAction.PAYMENT_DECLINED)
    assert (event.Actor, event.Note, event.Subject) == ("staff@x", "insufficient_funds", sub.SK)
    assert event.After["Amount"] == 999 and event.After["Product"] == "Daily News"
    assert event.Before["Status"] == "active" and event.After["Status"] == "past_due"
    # the same slot again: refused (the run that lost the race changes nothing)
    with pytest.raises(access.ConditionFailed):
        access.mark_past_due(sub, slot=DUE, period=DUE, failed_retries=1, retry_on=date(2027, 3, 18),
                             next_reminder=date(2027, 4, 8))


def test_a_charge_waiting_for_the_bank_is_kept_on_its_card_only(moto_table) -> None:
    sub = due_sub()
    access.mark_past_due(sub, slot=DUE, period=DUE, failed_retries=0, retry_on=date(2027, 3, 16),
                         next_reminder=date(2027, 4, 8), decline_code="authentication_required", amount=999,
                         awaiting_charge="ch_wait")
    after = fresh(sub)
    assert after.PaymentDetails.AwaitingCharge == "ch_wait" and after.Status == "past_due"
    [event] = events(sub, AuditAction.PAYMENT_ACTION_REQUIRED)
    assert (event.Actor, event.Note) == ("batch", "authentication_required ch_wait")
    assert not events(sub, AuditAction.PAYMENT_DECLINED)
    with pytest.raises(access.ConditionFailed):  # the slot is no longer due: a second run changes nothing
        access.mark_past_due(after, slot=DUE, period=DUE, failed_retries=0, retry_on=date(2027, 3, 16),
                             next_reminder=date(2027, 4, 8), awaiting_charge="ch_other")
    assert fresh(sub).PaymentDetails.AwaitingCharge == "ch_wait"
    # declined at the retry: the awaited charge is forgotten with it
    access.mark_past_due(after, slot=date(2027, 3, 16), period=DUE, failed_retries=1, retry_on=date(2027, 3, 18),
                         next_reminder=date(2027, 4, 8))
    assert fresh(sub).PaymentDetails.AwaitingCharge is None
    [declined] = events(sub, AuditAction.PAYMENT_DECLINED)
    assert declined.Note == "declined" and declined.Actor == "batch"


def test_an_awaited_charge_is_not_kept_when_the_card_changed_meanwhile(moto_table) -> None:
    sub = due_sub()
    stale = fresh(sub)
    access.replace_card(sub, card(), actor="customer")
    with pytest.raises(access.ConditionFailed):
        access.mark_past_due(stale, slot=DUE, period=DUE, failed_retries=0, retry_on=date(2027, 3, 16),
                             next_reminder=date(2027, 4, 8), awaiting_charge="ch_wait")
    assert fresh(sub).PaymentDetails.AwaitingCharge is None and fresh(sub).Status == "active"


def test_forgetting_an_awaited_charge_only_forgets_that_charge(moto_table) -> None:
    sub = due_sub()
    access.mark_past_due(sub, slot=DUE, period=DUE, failed_retries=0, retry_on=date(2027, 3, 16),
                         next_reminder=date(2027, 4, 8), awaiting_charge="ch_wait")
    with pytest.raises(access.ConditionFailed):
        access.forget_awaiting_charge(fresh(sub), "ch_other")
    assert fresh(sub).PaymentDetails.AwaitingCharge == "ch_wait"
    stale = fresh(sub)
    access.change_payment_day(fresh(sub), 20, actor="customer")  # another write meanwhile: the version moved
    access.forget_awaiting_charge(stale, "ch_wait")  # the charge's condition, not the version
    after = fresh(sub)
    assert after.PaymentDetails.AwaitingCharge is None and after.Status == "past_due"  # still owed


def test_a_payment_after_cancel_extends_the_service_once_with_its_event(moto_table) -> None:
    sub = due_sub()
    access.cancel_subscription(sub, actor="customer")
    access.extend_after_cancel(fresh(sub), paid_period=DUE, paid_through=date(2027, 4, 14))
    after = fresh(sub)
    assert (after.PaidThroughDate, after.LastPaymentDate, after.Status) == ("2027-04-14", "2027-03-15", "cancelled")
    [event] = events(sub, AuditAction.PAID_AFTER_CANCEL)
    assert event.Actor == "batch" and event.After["PaidThroughDate"] == "2027-04-14"
    assert event.Before["PaidThroughDate"] == "2027-03-14"
    with pytest.raises(access.ConditionFailed):  # a repeat changes nothing
        access.extend_after_cancel(fresh(sub), paid_period=DUE, paid_through=date(2027, 4, 14))


def test_a_live_subscription_is_not_extended_after_cancel(moto_table) -> None:
    sub = due_sub()
    with pytest.raises(access.ConditionFailed):
        access.extend_after_cancel(sub, paid_period=DUE, paid_through=date(2027, 4, 14))


def advance(sub, coupon_used):
    return access.advance_after_payment(sub, slot=DUE, paid_period=DUE, next_payment=date(2027, 4, 15),
                                        next_reminder=date(2027, 4, 8), coupon_used=coupon_used)


@pytest.mark.parametrize(("left", "used", "expected"), [
    (2, "TEN", (1, "TEN")),  # one of its payments used
    (1, "TEN", (None, None)),  # the last: the coupon goes
    (2, "OTHER", (2, "TEN")),  # the charge was discounted by another coupon: this one untouched
    (2, None, (2, "TEN")),  # not discounted
    (None, "TEN", (None, "TEN")),  # for ever
])
def test_a_payment_uses_one_of_the_coupons_payments(moto_table, left, used, expected) -> None:
    sub = due_sub()
    access.update_subscription(sub, [Subscription.CouponCode.set("TEN"), Subscription.CouponPercentOff.set(10),
                                     *([Subscription.CouponPaymentsLeft.set(left)] if left else [])])
    advance(fresh(sub), used)
    after = fresh(sub)
    assert (after.CouponPaymentsLeft, after.CouponCode) == expected
    assert after.CouponPercentOff == (10 if expected[1] else None)
    assert (after.NextPaymentDate, after.PaidThroughDate, after.LastPaymentDate, after.Status, after.RetryCount) == (
        "2027-04-15", "2027-04-14", "2027-03-15", "active", 0)


def test_a_payment_advances_from_past_due_and_forgets_the_awaited_charge(moto_table) -> None:
    sub = due_sub()
    access.mark_past_due(sub, slot=DUE, period=DUE, failed_retries=1, retry_on=date(2027, 3, 18),
                         next_reminder=date(2027, 4, 8), awaiting_charge="ch_wait")
    access.advance_after_payment(fresh(sub), slot=date(2027, 3, 18), paid_period=DUE, next_payment=date(2027, 4, 15),
                                 next_reminder=date(2027, 4, 8), paid_through=date(2027, 4, 14))
    after = fresh(sub)
    assert (after.Status, after.BillingPeriod, after.RetryCount, after.PaymentDetails.AwaitingCharge) == (
        "active", None, 0, None)
    with pytest.raises(access.ConditionFailed):  # the slot moved on: a second run's advance is refused
        access.advance_after_payment(fresh(sub), slot=date(2027, 3, 18), paid_period=DUE,
                                     next_payment=date(2027, 4, 15), next_reminder=date(2027, 4, 8))


def test_a_reminder_is_claimed_once_and_never_for_a_cancelled_subscription(moto_table) -> None:
    sub = due_sub()
    day = date(2027, 3, 8)
    access.claim_reminder(fresh(sub), day=day, next_reminder=date(2027, 4, 8))
    after = fresh(sub)
    assert (after.LastReminderDate, after.NextReminderDate) == ("2027-03-08", "2027-04-08")
    with pytest.raises(access.ConditionFailed):
        access.claim_reminder(fresh(sub), day=day, next_reminder=date(2027, 4, 8))
    other = due_sub(2)
    access.cancel_subscription(other, actor="customer")
    with pytest.raises(access.ConditionFailed):
        access.claim_reminder(fresh(other), day=day, next_reminder=date(2027, 4, 8))


def merchant_events(sub) -> list:
    """The merchant events written for ``sub``'s account, oldest first."""
    made, _ = access.events_after(None, limit=1000)
    return [e for e in made if e.AccountId == sub.account_id]


def payment_event(sub, *, status: str, charge: str | None, **fields) -> dict:
    """A ``payment`` object as the merchant's event carries it (rules.event_objects)."""
    return {"object": "payment", "id": charge, "status": status, "customer": sub.account_id,
            "subscription": sub.sub_id, "product": sub.SKU, "amount": 999, "currency": "USD",
            "period_start": "2027-03-15", "period_end": "2027-04-14", "charge": charge, **fields}


# how the charge failed -> (mark_past_due's charge argument, decline code, retries, retry on,
# the merchant's event type, the payment's status)
FAILED_ATTEMPTS = {
    "declined": ({"charge_id": "ch_declined"}, "insufficient_funds", 1, date(2027, 3, 18), "payment.failed",
                 "failed"),
    "waiting for the bank": ({"awaiting_charge": "ch_wait"}, "authentication_required", 2, date(2027, 3, 16),
                             "payment.action_required", "action_required"),
}


@pytest.mark.parametrize("case", FAILED_ATTEMPTS)
def test_a_failed_charge_tells_the_merchant_what_was_tried(case, moto_table) -> None:
    # the merchant's event is how its systems learn of the attempt: every field it carries
    charge, code, retries, retry_on, event_type, status = FAILED_ATTEMPTS[case]
    [charge_id] = charge.values()
    sub = due_sub()
    access.mark_past_due(sub, slot=DUE, period=DUE, period_end=date(2027, 4, 14), failed_retries=retries,
                         retry_on=retry_on, next_reminder=date(2027, 4, 8), decline_code=code, amount=999, **charge)
    [event] = merchant_events(sub)
    assert (event.Type, event.ObjectType, event.ObjectId) == (event_type, "payment", charge_id)
    assert event.Data == payment_event(sub, status=status, charge=charge_id, decline_code=code, attempt=retries,
                                       next_retry=retry_on.isoformat())


def test_a_payment_after_cancel_tells_the_merchant_the_service_runs_longer(moto_table) -> None:
    sub = due_sub()
    access.cancel_subscription(sub, actor="customer")
    before = merchant_events(sub)
    access.extend_after_cancel(fresh(sub), paid_period=DUE, paid_through=date(2027, 4, 14))
    [event] = merchant_events(sub)[len(before):]
    assert (event.Type, event.ObjectType, event.ObjectId) == ("subscription.updated", "subscription", sub.sub_id)
    assert event.Data["stored_status"] == "cancelled"
    assert event.Data == api_objects.subscription_object(fresh(sub), today())


# --- the receipt e-mail's subject and price with taxes ---------------------------------


# (prices include tax, billing country) -> (net, tax, charged): 10.00 less 10 % = 9.00
TAXED_DISCOUNTS = {
    "exclusive, a German consumer": (False, "DE", (900, 171, 1071)),  # 9.00 net + 19 %
    "inclusive, an Italian consumer": (True, "IT", (738, 162, 900)),  # 9.00 with 22 % in it
}


@pytest.mark.parametrize("case", TAXED_DISCOUNTS)
def test_the_price_of_a_discounted_taxed_charge_is_before_the_discount_and_on_the_prices_own_terms(
        case, moto_table, monkeypatch) -> None:
    """The coupon comes off the price as the seller states it: with prices before tax the
    e-mail's price is the net plus the discount (not the amount charged, tax included, plus
    it); with prices including tax, the amount charged plus the discount."""
    from tests.billing.test_tax_ledger import use_seller

    include, country, (net, tax, charged) = TAXED_DISCOUNTS[case]
    use_seller(monkeypatch, include=include)
    coupon = access.create_coupon("TENOFF", actor="staff", percent_off=10, duration="forever")
    account = make_account("pat@example.com")
    account.BillingCountry = country
    sub = access.create_subscription(
        account, sku="NEWS-DAILY", payment_day=15, amount=1000, currency="EUR", card=card(), today=SUBSCRIBED,
        reminder_days_before=7, product_name="Daily News", coupon=coupon)
    mail.outbox = []
    assert payments.take_first_payment(sub, today=SUBSCRIBED).status == PaymentStatus.PAID
    [receipt] = receipts_of(sub)
    assert (receipt.Net, receipt.Tax, receipt.ProcessedAmount, receipt.DiscountAmount) == (net, tax, charged, 100)
    said = lines(receipt_mail())
    assert "Price: €10.00" in said and "Discount (TENOFF): -€1.00" in said
    assert f"Amount: €{money.decimal_string(charged, 'EUR')}" in said


def test_a_receipt_from_before_taxes_is_mailed_as_a_receipt_not_an_invoice(moto_table) -> None:
    sub = subscribed()
    [receipt] = receipts_of(sub)
    assert str(payments.receipt_subject(receipt)) == f"Invoice {receipt.Number}: Daily News, 15 January 2027"
    receipt.Number = None  # (every receipt is numbered: the subject would still read)
    assert str(payments.receipt_subject(receipt)) == "Invoice : Daily News, 15 January 2027"
    receipt.Number = receipts_of(sub)[0].Number
    receipt.Net = None  # as written before taxes: no tax figures, so no invoice
    assert str(payments.receipt_subject(receipt)) == f"Receipt {receipt.Number}: Daily News, 15 January 2027"
    receipt.ProductName = None
    assert str(payments.receipt_subject(receipt)) == f"Receipt {receipt.Number}: NEWS-DAILY, 15 January 2027"
    receipt.Number = None
    assert str(payments.receipt_subject(receipt)) == "Receipt : NEWS-DAILY, 15 January 2027"
    with translation.override("it"):
        assert str(payments.receipt_subject(receipt)).startswith("Ricevuta ")


def test_a_first_payment_tells_the_merchant_the_subscription_is_active(moto_table) -> None:
    sub = subscribed()
    [activated] = [e for e in merchant_events(sub) if e.Type == "subscription.activated"]
    assert (activated.ObjectType, activated.ObjectId) == ("subscription", sub.sub_id)
    assert activated.Data["status"] == "active" and activated.Data["id"] == sub.sub_id


# --- a charge recorded after its subscription or the tax rates changed -----------------
# What is recorded is what the gateway charged (its metadata), whatever changed between the
# charge and its recording: a switch of product, a new tax rate, a cancel.

RECORDED = date(2027, 3, 16)  # the day after DUE: the charge of the 15th is recorded then


def on_day(day: date):
    return time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False)


@pytest.fixture
def italy_until_the_16th(monkeypatch) -> None:
    """An Italian seller, prices including tax; Italy's rate was 20 % until 16 March 2027
    (22 % from that day): a charge of the 15th recorded on the 16th falls across the change."""
    from tests.billing.test_tax_ledger import use_seller

    use_seller(monkeypatch)
    monkeypatch.setattr(tax, "EARLIER_STANDARD_RATES", (("IT", RECORDED, Decimal(20)),))


def tax_of(receipt) -> tuple:
    return (receipt.ProcessedAmount, receipt.Net, receipt.Tax, receipt.TaxRate, receipt.TaxCountry,
            receipt.TaxTreatment, receipt.BillingDate, receipt.ProcessedDate[:10])


@pytest.mark.parametrize(("switched_to", "price", "in_catalog", "named"), [
    ("NEWS-LITE", 500, True, "Daily News"),  # a downgrade: the subscription remembers the product
    ("NEWS-PLUS", 1999, True, "Daily News"),  # an upgrade: the catalog names it
    ("NEWS-PLUS", 1999, False, "NEWS-DAILY"),  # nowhere named (data from before the catalog): its SKU
])
def test_a_charge_recorded_after_a_switch_is_recorded_for_the_product_charged(
        moto_table, monkeypatch, switched_to, price, in_catalog, named) -> None:
    # The run charges, and dies before the receipt; the customer switches that day (a
    # downgrade from the next payment, or an upgrade at once); the next run's charge (the
    # same key) is the first one, for the product it charged.
    if in_catalog:
        access.create_product("NEWS-DAILY", "Daily News", 999, "USD")
    access.create_product(switched_to, "News Other", price, "USD")
    sub = due_sub()
    recorded = access.create_receipt
    monkeypatch.setattr(access, "create_receipt", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("down")))
    with on_day(DUE), pytest.raises(RuntimeError):
        payments.take_payment(fresh(sub), run_date=DUE)
    monkeypatch.setattr(access, "create_receipt", recorded)
    with on_day(DUE):
        switch.switch(fresh(sub), switched_to, today=DUE, actor="customer")
    assert switched_to == fresh(sub).SKU
    with on_day(RECORDED):
        out = payments.take_payment(fresh(sub), run_date=RECORDED)
    assert (out.status, out.amount, out.next_payment) == (PaymentStatus.PAID, 999, date(2027, 4, 15))
    [receipt] = receipts_of(sub)
    assert (receipt.SKU, receipt.SK, receipt.ProcessedAmount, receipt.PeriodStart, receipt.PeriodEnd) == (
        "NEWS-DAILY", Receipt.sk(billing_date="2027-03-15", sku="NEWS-DAILY", sub_id=sub.sub_id), 999,
        "2027-03-15", "2027-04-14")
    assert len(get_gateway().charges_made(sub_id=sub.sub_id)) == 1
    # Named as the product charged for, on the receipt and in its e-mail, not the one switched to.
    assert receipt.ProductName == named
    [message] = [m for m in mail.outbox if m.subject.startswith("Invoice ")]
    assert message.subject == f"Invoice {receipt.Number}: {named}, 15 March 2027"
    assert f"we received your payment for {named}." in " ".join(message.body.split())


def test_a_charge_confirmed_after_a_rate_change_is_invoiced_with_the_tax_it_carried(
        moto_table, italy_until_the_16th) -> None:
    # Charged on the 15th at 20 %, waiting for the bank; confirmed on the 16th, when the
    # rate is 22 %: the invoice (dated the 16th) has the tax charged, 999 x 20 / 120.
    [sub] = seed_due(1, due=DUE, number=AUTHENTICATING_TEST_CARD)
    with on_day(DUE):
        assert payments.take_payment(sub, run_date=DUE).status == PaymentStatus.ACTION_REQUIRED
    [charge] = get_gateway().charges_made(sub_id=sub.sub_id)
    assert (charge["metadata"]["tax"], charge["metadata"]["tax_rate"]) == ("167", "20")
    with on_day(RECORDED):
        out = subscribing.confirm_renewal(fresh(sub), today=RECORDED, actor="customer", bank_answer=True)
    assert out.status == PaymentStatus.PAID
    [receipt] = receipts_of(sub)
    assert tax_of(receipt) == (999, 832, 167, "20", "IT", "domestic", "2027-03-15", "2027-03-16")


def test_a_charge_made_before_taxes_were_kept_is_invoiced_at_the_rate_of_the_invoices_day(
        moto_table, italy_until_the_16th) -> None:
    # Its metadata names no tax (the code before taxes): the tax is the part of the amount
    # charged at the rate in force on the day it is invoiced, 999 x 22 / 122.
    sub = due_sub()
    metadata = {"account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU, "billing_date": "2027-03-15",
                "period_start": "2027-03-15", "period_end": "2027-04-14", "attempt": "0"}
    with on_day(DUE):
        charged = get_gateway().charge(sub.PaymentDetails.Token, 999, "USD", f"{sub.sub_id}:2027-03-15", metadata)
    with on_day(RECORDED):
        out = payments.record_paid_charge(fresh(sub), charged, run_date=RECORDED)
    assert out.status == PaymentStatus.PAID
    [receipt] = receipts_of(sub)
    assert tax_of(receipt) == (999, 819, 180, "22", "IT", "domestic", "2027-03-15", "2027-03-16")


def test_a_charge_returning_after_a_cancel_is_e_mailed_for_the_days_it_paid(moto_table) -> None:
    # The run read the subscription live and charged it; the customer cancelled while the
    # charge was in flight: its advance is refused, the service runs to the period's end,
    # and this run, which recorded it, sends the receipt for the days paid.
    sub = due_sub()
    read_by_the_run = fresh(sub)
    with on_day(DUE):
        access.cancel_subscription(fresh(sub), reason="customer", actor="pat@example.com")
        mail.outbox = []
        out = payments.take_payment(read_by_the_run, run_date=DUE)
    assert (out.status, out.reason) == (PaymentStatus.PAID, "paid after cancel: service runs to 2027-04-14")
    [receipt] = receipts_of(sub)
    [message] = mail.outbox
    assert message.subject == f"Invoice {receipt.Number}: Daily News, 15 March 2027"
    said = lines(message.body)
    assert f"Receipt: {receipt.Number}" in said and f"Reference: {receipt.ChargeId}" in said
    assert "Billing date: 15 March 2027" in said and "Pays for: 15 March 2027 to 14 April 2027" in said
    # Cancelled: no payment follows, and the e-mail says so instead of naming one.
    assert not any("next payment" in line for line in said)
    ends = "You have paid for it up to 14 April 2027: it runs until the end of that day, then it ends."
    assert any(line.startswith(ends) for line in said)
    assert ends in " ".join(message.alternatives[0][0].split())
