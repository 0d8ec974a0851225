"""The demo's invoice of a fee and usage, half refunded (docs/TAX.md "Credit notes'
rounding", "Line by line"): a demo customer of its own, ``metered@example.com`` (log-in
password as the demo customer's), subscribed a month ago to ``API-ACCESS`` ($5.00 a month)
with its metered price "API calls" (first 1,000 calls free, then $0.002 a call), 2,500
calls sent over that month, and today's payment taken: one invoice with the fee's line and
a line a tier. Staff then refunded half of it: its credit note has the invoice's lines,
each its part of the refund and of its tax. Then the rest of the calls' line alone (a
refund of one line, docs/TAX.md "One line chosen"): its credit note has that line only.
Runs after the prices and usage parts (its name sorts after theirs). Safe to run twice: a
customer subscribed already is left as it is."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from billing import access
from billing.access import usage as metered
from billing.actions import subscriptions as subscribing
from billing.management.commands.seed_demo import STAFF_EMAIL, access_token
from billing.management.demo._customers import default_card, demo_customer, usage_moment
from billing.management.demo.usage_alone import SKU, api_calls_price
from billing.models import Receipt
from billing.operations.payments import take_payment
from billing.operations.refunds import refund_receipt
from billing.rules.price_choice import choose_price

EMAIL = "metered@example.com"
CALLS = ((25, 800), (18, 1200), (4, 500))  # (days before today, calls): 2,500 in all
MONTH = timedelta(days=30)


def seed(today: date) -> list[str]:
    paid = paid_then_half_refunded(today)
    if isinstance(paid, str):
        return [paid]
    receipt, done = paid
    calls = len(receipt.TaxLines) - 1  # the paid tier's line, the invoice's last
    lines = access.refundable_lines(done) or []
    left = lines[calls][1] if calls < len(lines) else 0
    if left:
        done = refund_receipt(done, left, request_id="demo-usage-line-refund", actor=STAFF_EMAIL, line=calls,
                              reason="Calls counted twice by a client's retries").receipt
    return [f"usage refund: {EMAIL} paid {done.Number} (the fee and {receipt.UsageQuantity} calls, "
            f"{len(receipt.TaxLines or [])} lines); staff refunded half, its credit note line by line, "
            "then the rest of the calls' line alone"]


def paid_then_half_refunded(today: date) -> tuple[Receipt, Receipt] | str:
    """The customer subscribed, its month of calls, today's payment, and half of it
    refunded: the receipt as paid and as refunded, or why not (one line)."""
    found = api_calls_price("usage refund")
    if isinstance(found, str):
        return found
    product, price, meter = found
    account = demo_customer(EMAIL)
    if any(s.SKU == SKU for s in access.get_subscriptions_by_account(account.account_id)):
        return f"usage refund: {EMAIL} is subscribed already"
    before = today.replace(day=1) - timedelta(days=1)
    started = before.replace(day=min(today.day, before.day))  # a month ago, on the payment day
    card = default_card(account)
    fee = choose_price(access.default_price(product), product)  # its $5.00 a month
    sub = subscribing.subscribe_to_price(
        account, product, fee, payment_day=today.day, card=access_token(card), today=started, actor=EMAIL, billing_address=card.Details.BillingAddress, card_id=card.card_id,
        trial=False, metered_price_id=price.PriceId).sub
    # The month's calls, then its payment due today: the fee of the month to come and the
    # calls of the month just ended, in one charge.
    now = datetime.combine(today, time(0, 30), tzinfo=UTC)
    for days, count in CALLS:
        seconds, key = usage_moment(today - timedelta(days=days), 10)
        metered.record_event(meter, metered.UsageEvent(
            account_id=account.account_id, identifier=f"metered-{today - timedelta(days=days)}",
            value=Decimal(count), timestamp=seconds, day=key), now=now)
    sub = access.set_schedule(sub, next_payment=today, last_payment=started,
                              next_reminder=today + MONTH - timedelta(days=7), last_reminder=today - timedelta(days=7))
    outcome = take_payment(sub, run_date=today, actor="batch")
    receipt = next((r for r in access.get_receipts_by_account(account.account_id, today, today)
                    if r.UsageQuantity), None)
    if receipt is None:
        return f"usage refund: {EMAIL}'s payment today was not taken ({outcome.status})"
    done = refund_receipt(receipt, int(receipt.ProcessedAmount) // 2, request_id="demo-usage-refund",
                          actor=STAFF_EMAIL, reason="Half of the month: the API was down for two weeks").receipt
    return receipt, done
