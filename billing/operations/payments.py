"""Taking one payment: charge the period owed with an idempotency key, record the charge
(receipt and audit event) only if absent, then advance (or mark past due, or cancel) on
condition the item is still due.

Made safe to repeat and to race by a condition, never by a transaction (docs/TABLE.md,
"Exactly one charge and one receipt"): the charge's idempotency key is
``<SubId>:<BillingDate>`` (the first day the charge pays for), and
``<SubId>:<BillingDate>:retry<N>`` for the N-th retry of a declined period (a gateway
replays the recorded decline for a repeated key, so a retry needs a key of its own, while
each attempt stays idempotent); its receipt is written only if absent, and the
subscription advances only if ``NextPaymentDate`` still equals the date being processed.
A process that dies between any two steps is repaired by the next attempt: the charge
replays, the receipt is found, the advance happens once. Only the process that wins the
conditional write sends the customer's e-mail.

What a charge pays for (docs/MONEY.md M1 and "Periods and rounding"): the period
from the first unpaid day (``BillingPeriod`` while past due, else ``NextPaymentDate``)
to ``schedule.period_end`` (or, for the first payment, to the day before the first
anchor date), at ``schedule.period_amount``. The charge carries that period in its
metadata, and what is recorded is what the gateway says was charged: a replayed key
returns the first call's period even if the payment day changed meanwhile.

Who takes a payment: the payment run (billing/batches/runs.py); the first payment at
subscribing, staff's "retry now" and a new card paying a past-due period
(billing/actions/); the reconciliation and the processor's webhooks, recording a charge
found without its receipt. All through this one path, so the guarantees hold for each.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy

from billing import access
from billing.models import MerchantEventType, Price, Receipt, Subscription, SubscriptionStatus
from billing.notify import manage_url, subscription_context
from billing.operations.metered import metered_usages, usage_priced
from billing.operations.outcomes import PaymentOutcome, PaymentStatus
from billing.operations.refunds import refund_after_close
from billing.rules.invoice import invoice_of
from billing.rules.invoice_tax import tax_metadata
from billing.rules.projection import ComingCharge, MeteredUsage, coming_charges, owed_charge, with_usage
from billing.rules.schedule import cadence_of, renewal_reminder, retry_after
from billing.rules.seat_lines import charge_seats, seats_metadata
from billing.rules.tax import Seller
from billing.rules.usage_metadata import usage_keys, usage_metadata
from core.clock import billing_today
from core.localformat import LocalDate
from core.mail import money_text, send_customer_email
from core.money import format_with_code
from core.payments.errors import GatewayError
from core.payments.gateway import ChargeResult, PaymentGateway, get_gateway

AUTHENTICATION_REQUIRED = "authentication_required"  # the decline code of a charge waiting for the cardholder
GATEWAY_ATTEMPTS = 3  # a GatewayError leaves the outcome unknown: the same key is safe to repeat


def charge_key(sub_id: str, period: date, attempt: int) -> str:
    """The gateway idempotency key of one attempt to pay one period (its first day)."""
    key = f"{sub_id}:{period.isoformat()}"
    return key if attempt == 0 else f"{key}:retry{attempt}"


def _owed(sub: Subscription, seller: access.InvoiceSeller | None = None, *, close: bool = False) -> ComingCharge:
    """The projection's first coming charge, taxed as the seller and the buyer say."""
    return next_charge(sub, seller=seller.tax if seller else None, close=close)


def next_charge(sub: Subscription, *, seller: Seller | None = None, first: bool | None = None,
                close: bool = False, metered_prices: dict[str, Price] | None = None) -> ComingCharge:
    """The payment ``take_payment`` takes next, for an e-mail or a page to announce: the
    same charge (its days, the coupon's discount, the tax) it charges. ``seller``: the
    seller's tax profile when the caller has read it (a run reads it once). ``first``: for
    an item read from GSI-1, which does not project ``LastPaymentDate``: whether the owed
    period is the first payment's (the run knows it from ``LastPaymentDate``).
    ``metered_prices``: the subscription's metered prices the caller has read, by id.

    A subscription with metered prices (``metered_price_ids``) also pays their usage of the
    period just ended (billing/operations/metered.py): so far, until ``close``, which the
    payment itself passes on its day (the period is then closed to late events first)."""
    tax = access.tax_terms(sub, seller)
    charge = owed_charge(sub, tax=tax) if first is None else coming_charges(sub, 1, first=first, tax=tax)[0]
    usages = metered_usages(sub, charge, close=close, prices=metered_prices)
    return with_usage(charge, usages, tax) if usages else charge


def owed_period(sub: Subscription) -> tuple[date, date]:
    """The days the subscription's next charge pays for (first and last, inclusive): the
    first of its coming charges (``rules.projection``, the one walk pages and e-mails
    show). The first payment (nothing paid yet: ``LastPaymentDate`` is still the period's
    first day, as ``create_subscription`` leaves it) runs to the day before the first
    anchor date; any other to ``schedule.period_end``."""
    charge = _owed(sub)
    return charge.period_start, charge.period_end


def owed_amount(sub: Subscription) -> int:
    """What the next charge will be, in minor units, after any coupon and with the tax
    when prices exclude it (reminders, pages and the staff's upcoming payments show it)."""
    return _owed(sub).amount


def _charge(gateway: PaymentGateway, sub: Subscription, key: str, amount: int, metadata: dict[str, str], *,
            off_session: bool) -> ChargeResult:
    for n in range(GATEWAY_ATTEMPTS - 1):
        try:
            return gateway.charge(sub.PaymentDetails.Token, amount, sub.Currency, key, metadata,
                                  off_session=off_session)
        except GatewayError:
            time.sleep(0.2 * 2**n)
    # The last attempt: its GatewayError reaches the caller (the run counts an error).
    return gateway.charge(sub.PaymentDetails.Token, amount, sub.Currency, key, metadata, off_session=off_session)


def _created_on(sub: Subscription) -> date | None:
    """The billing day the subscription was made on (its first period starts then)."""
    if not sub.CreatedDate:
        return None
    return billing_today(settings.BILLING_TIMEZONE, datetime.fromisoformat(sub.CreatedDate))


def _next_reminder(sub: Subscription, payment: date, run_date: date) -> date | None:
    """The reminder of ``payment`` at the subscription's cadence (None: not reminded)."""
    return renewal_reminder(cadence_of(sub), payment, settings.REMINDER_DAYS_BEFORE, run_date)


def take_payment(
    sub: Subscription,
    *,
    run_date: date,
    dry_run: bool = False,
    gateway: PaymentGateway | None = None,
    actor: str = "batch",
    end_on_decline: bool = False,
    numbers: access.ReceiptNumbers | None = None,
    seller: access.InvoiceSeller | None = None,
) -> PaymentOutcome:
    """Charge one subscription for the period it owes (due on its ``NextPaymentDate``).

    ``sub`` is the item as read from GSI-2 or by GetItem. An active subscription is
    charged only when due on or before ``run_date``; a past-due one may be retried
    early (staff's "retry now", the customer's new card). Safe to call again after a
    crash at any point and to call from two processes at once: see the package
    docstring. DynamoDB and gateway failures raise (the caller counts them as errors);
    business outcomes are returned. ``numbers``: where receipt numbers come from (a
    run's block reservation; default one reservation per receipt). ``seller``: the
    seller's tax profile (a run reads it once; default: read here).
    """
    out = PaymentOutcome(PaymentStatus.SKIPPED, sub.sub_id, sub.account_id)
    if not sub.is_live or not sub.NextPaymentDate:
        out.reason = "not live"
        return out
    due = out.due = date.fromisoformat(sub.NextPaymentDate)
    retrying = bool(sub.BillingPeriod)
    seller = seller or access.invoice_seller()
    # On its day (or retried) a charge with usage closes the usage period before reading it.
    close = bool(sub.MeteredPriceId) and not dry_run and (due <= run_date or retrying)
    owed = _owed(sub, seller, close=close)  # the projection's first coming charge: what every page showed
    start, end, off = owed.period_start, owed.period_end, owed.discount
    out.period, out.period_end = start, end
    out.attempt = (sub.RetryCount or 0) + 1 if retrying else 0
    if due > run_date and not retrying:
        out.reason = f"not due until {due}"
        return out
    amount = out.amount = owed.amount
    awaiting = sub.PaymentDetails.AwaitingCharge if retrying and sub.PaymentDetails else None
    if dry_run:
        out.status, out.reason = PaymentStatus.DRY_RUN, f"would charge {format_with_code(amount, sub.Currency)}"
        if awaiting:
            out.reason = f"would ask about {awaiting}, waiting for the customer's bank"
        return out
    gateway = gateway or get_gateway()
    if awaiting and (settled := _awaited(gateway, sub, out, awaiting, run_date, actor, numbers, seller)) is not None:
        return settled

    # Enough for reconciliation to find the account, the subscription and the period
    # from the gateway's side alone (``reconcile_payments``).
    metadata = {
        "account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU,
        "billing_date": start.isoformat(), "period_start": start.isoformat(), "period_end": end.isoformat(),
        "attempt": str(out.attempt), "payment_day": str(sub.PaymentDay), "price": str(sub.PaymentAmount),
        # The coupon's discount, so that what is recorded is what was charged (a replayed
        # key returns the first call's metadata).
        **({"coupon": sub.CouponCode, "discount": str(off)} if sub.CouponCode else {}),
        # The invoice's tax: recorded as charged, and checked by the reconciliation.
        **(tax_metadata(owed.tax_line, prices_include_tax=access.tax_terms(sub, seller.tax).prices_include_tax)
           if owed.tax_line else {}),
        # The usage billed in arrears with it (its lines after the fee's), as charged.
        **usage_metadata(owed.usages),
        # The seats the fee pays for, named on its invoice line as charged (``charge_seats``).
        **seats_metadata(sub),
    }
    if amount == 0:
        # Nothing to charge (a coupon took it all): the gateway refuses amounts <= 0, so
        # the period is recorded paid by the same path, with a receipt of 0 and no charge.
        free = ChargeResult(status="succeeded", charge_id="", amount=0, currency=sub.Currency, metadata=metadata)
        return _paid(sub, out, free, run_date, actor, numbers, seller, priced=owed.usages)
    asked = time.perf_counter()
    # The first period's charge is made on-session (the customer is on the subscribe page;
    # the bank may ask them for 3-D Secure), every later one off-session (the card was saved
    # for it). By whoever makes it: should a payment run make the first charge (the page
    # died before it), its key must carry the same request, or Stripe refuses the replay.
    # The first period is the one ``owed_period`` knows by ``LastPaymentDate``, made today.
    first = out.attempt == 0 and sub.LastPaymentDate == start.isoformat() and start == _created_on(sub)
    result = _charge(gateway, sub, charge_key(sub.sub_id, start, out.attempt), amount, metadata,
                     off_session=not first)
    out.gateway_ms = (time.perf_counter() - asked) * 1000
    out.charge_id, out.amount, out.currency = result.charge_id, result.amount, result.currency
    if result.succeeded:
        return _paid(sub, out, result, run_date, actor, numbers, seller, priced=owed.usages)
    if result.needs_authentication and (first or end_on_decline):  # the customer confirms it (confirm_first_payment)
        return _incomplete(sub, out, result, actor)
    if end_on_decline:
        return _ended_unpaid(sub, out, result, actor)
    if result.needs_authentication:
        return _action_required(gateway, sub, out, result, run_date, actor, numbers, seller)
    return _declined(sub, out, result, run_date, actor)


def _awaited(gateway: PaymentGateway, sub: Subscription, out: PaymentOutcome, charge_id: str, run_date: date,
             actor: str, numbers: access.ReceiptNumbers | None,
             seller: access.InvoiceSeller | None = None) -> PaymentOutcome | None:
    """A past-due period whose charge waits for the cardholder's bank (3-D Secure) is
    never charged again blindly: the charge is asked about (a gateway read). Paid
    meanwhile (the customer confirmed it, and neither their page nor the webhook recorded
    it yet): recorded here, by the same path. Still waiting: on its retry day the customer
    is reminded, and after the last the charge and the subscription are cancelled, as after
    a last decline; before it (staff's "retry now") nothing changes. Refused or cancelled:
    forgotten, and None: the caller charges anew."""
    result = gateway.charge_status(charge_id)
    out.charge_id = charge_id
    if result.succeeded:
        out.amount, out.currency = result.amount, result.currency
        return _paid(sub, out, result, run_date, actor, numbers, seller)
    if not result.needs_authentication:
        try:
            access.forget_awaiting_charge(sub, charge_id)
        except access.ConditionFailed:
            out.reason = "changed meanwhile; the next run takes it"
            return out
        return None
    assert out.due is not None
    if out.due > run_date:
        out.reason = "waiting for the customer to confirm the payment with their bank"
        return out
    return _action_required(gateway, sub, out, result, run_date, actor, numbers, seller)


def _action_required(gateway: PaymentGateway, sub: Subscription, out: PaymentOutcome, result: ChargeResult,
                     run_date: date, actor: str, numbers: access.ReceiptNumbers | None,
                     seller: access.InvoiceSeller | None = None) -> PaymentOutcome:
    """A renewal's charge the bank wants the cardholder to confirm: past due, "action
    required", the customer e-mailed a link to confirm that very charge; the retry days
    remind them (never a new charge), and after the last the charge is cancelled and the
    subscription ends, as after a last decline (docs/STRIPE.md "Action required")."""
    assert out.period and out.due
    retry_on = retry_after(run_date, settings.PAYMENT_RETRY_DAYS, out.attempt)
    if retry_on is None:
        final = gateway.cancel_charge(result.charge_id)
        if final.succeeded:  # confirmed at the last moment: paid
            return _paid(sub, out, final, run_date, actor, numbers, seller)
        return _declined(sub, out, replace(final, decline_code=AUTHENTICATION_REQUIRED), run_date, actor)
    next_anchor = (out.period_end or out.period) + timedelta(days=1)
    try:
        access.mark_past_due(
            sub, slot=out.due, period=out.period, failed_retries=out.attempt, retry_on=retry_on,
            next_reminder=_next_reminder(sub, next_anchor, run_date), decline_code=AUTHENTICATION_REQUIRED, actor=actor,
            amount=result.amount, awaiting_charge=result.charge_id, period_end=out.period_end,
        )
    except access.ConditionFailed:
        out.reason = "already handled by another run, or its card replaced"
        return out
    out.status, out.next_payment = PaymentStatus.ACTION_REQUIRED, retry_on
    out.reason = f"{AUTHENTICATION_REQUIRED}; waits for the customer, reminded on {retry_on}"
    out.mail_error = send_customer_email("payment_action_required", sub.Email, format_lazy(
        gettext_lazy("Please confirm your payment: {product}"), product=sub.ProductName or sub.SKU), {
            **subscription_context(sub), "billing_date": out.period, "retry_on": retry_on,
            "amount": money_text(result.amount, result.currency), "reminder": out.attempt > 0,
            "confirm_url": manage_url(sub, "confirm-payment/")}, language=sub.Language)
    return out


def _incomplete(sub: Subscription, out: PaymentOutcome, result: ChargeResult, actor: str) -> PaymentOutcome:
    """The first charge waits for the customer's bank (3-D Secure): the subscription is
    ``incomplete`` (out of both due indexes: no reminder, no charge by a run, in no total)
    until they confirm it, or expires (billing/operations/expiry.py). Also when a payment run
    made the first charge (the subscribe page died before it): the customer finishes it
    from the dashboard."""
    out.status, out.reason, out.client_secret = PaymentStatus.ACTION_REQUIRED, AUTHENTICATION_REQUIRED, \
        result.client_secret
    try:
        access.mark_incomplete(sub, charge_id=result.charge_id, actor=actor, amount=result.amount)
    except access.ConditionFailed:
        out.reason += "; already incomplete, or paid meanwhile"
    return out


def _ended_unpaid(sub: Subscription, out: PaymentOutcome, result: ChargeResult, actor: str) -> PaymentOutcome:
    out.reason = result.decline_code or "declined"
    try:
        access.cancel_subscription(sub, reason="first_payment_declined", actor=actor, check_version=False,
                                   also=[_failed_event(sub, out, result)])
    except access.ConditionFailed:
        out.reason += "; already handled by another run"
        return out
    out.status = PaymentStatus.CANCELLED
    return out


def take_first_payment(sub: Subscription, *, today: date, gateway: PaymentGateway | None = None,
                       actor: str = "customer") -> PaymentOutcome:
    """The charge at subscribing, through the batch's own path (its own key
    ``<SubId>:<today>``). A decline ends the subscription at once, unpaid and unserved
    (no dunning for a subscription that never started): the caller says so."""
    return take_payment(sub, run_date=today, gateway=gateway, actor=actor, end_on_decline=True)


def record_paid_charge(sub: Subscription, result: ChargeResult, *, run_date: date, actor: str = "batch") -> PaymentOutcome:
    """Record a charge the gateway says succeeded (the batch's path and
    reconciliation's): its receipt and event if absent, then the subscription paid
    through its last day, whatever its state now (docs/MONEY.md M2)."""
    start = date.fromisoformat(result.metadata["period_start"])
    end = date.fromisoformat(result.metadata["period_end"])
    # The date the subscription is due on for that period: its retry date while the
    # period is being retried, else the period's first day.
    slot = date.fromisoformat(sub.NextPaymentDate) if sub.NextPaymentDate and sub.BillingPeriod == start.isoformat() \
        else start
    out = PaymentOutcome(PaymentStatus.SKIPPED, sub.sub_id, sub.account_id, due=slot, period=start,
                         period_end=end, charge_id=result.charge_id, amount=result.amount)
    out.attempt = int(result.metadata.get("attempt", "0"))
    if sub.Status == SubscriptionStatus.INCOMPLETE_EXPIRED:
        # Never started: its charge is the reconciliation's to refund, never kept.
        out.reason = "the subscription expired before its first payment was confirmed"
        return out
    return _paid(sub, out, result, run_date, actor)


def _paid(sub: Subscription, out: PaymentOutcome, result: ChargeResult, run_date: date, actor: str,
          numbers: access.ReceiptNumbers | None = None, seller: access.InvoiceSeller | None = None,
          priced: tuple[MeteredUsage, ...] = ()) -> PaymentOutcome:
    """``priced``: the usage the charge billed, as priced when it was charged (its tiers
    are the invoice's usage lines); without it (a charge recorded later: a webhook, the
    reconciliation, a confirmed 3-D Secure charge) the price is read again (one GetItem)."""
    assert out.period and out.due
    # What the gateway charged is the truth: a replayed key returns the first call's period.
    start = date.fromisoformat(result.metadata.get("period_start", out.period.isoformat()))
    end = date.fromisoformat(result.metadata["period_end"]) if "period_end" in result.metadata else out.period_end
    assert end is not None
    out.period, out.period_end = start, end
    next_payment = end + timedelta(days=1)
    # The receipt first: if we die after it, the re-run finds it and only advances.
    coupon = result.metadata.get("coupon") or None
    receipt, created = access.create_receipt(
        sub, billing_date=start, amount=result.amount, currency=result.currency,
        charge_id=result.charge_id or None, retention_days=settings.RECEIPT_RETENTION_DAYS,
        period_end=end, actor=actor, numbers=numbers, sku=result.metadata.get("sku"),
        discount=int(result.metadata.get("discount") or 0), coupon=coupon,
        # The tax the charge carried (its metadata), on the invoice's day.
        tax=access.invoice_tax(sub, amount=result.amount, on=billing_today(settings.BILLING_TIMEZONE),
                               metadata=result.metadata, seller=seller),
        # The usage billed in arrears with it, as the charge's metadata says.
        usage=usage_keys(result.metadata),
        priced=priced or usage_priced(result.metadata),
        seats=charge_seats(result.metadata),
    )
    try:
        access.advance_after_payment(
            sub, slot=out.due, paid_period=start, next_payment=next_payment,
            next_reminder=_next_reminder(sub, next_payment, run_date), coupon_used=coupon,
        )
    except access.ConditionFailed:
        # Skipped when another run advanced it, or the account was closed (the charge is
        # refunded: nothing served, nothing to mail).
        out.reason = _after_refused_advance(sub, start, end, receipt)
        out.status = PaymentStatus.PAID if out.reason.startswith("paid after") else PaymentStatus.SKIPPED
        if out.status == PaymentStatus.PAID:
            # This process recorded the payment of a subscription cancelled meanwhile: it
            # tells the customer, and no payment follows (the e-mail says when it ends).
            out.mail_error = send_receipt(sub, receipt, created, result, start, end, None)
        return out
    out.status, out.next_payment = PaymentStatus.PAID, next_payment
    # The process whose conditional advance recorded the payment tells the customer, once:
    # also when the receipt was written by a run whose answer was lost before its advance
    # (an outage between the two), which the receipt's own "created" could not tell.
    out.mail_error = send_receipt(sub, receipt, created, result, start, end, next_payment)
    return out


def send_receipt(sub: Subscription, receipt: Receipt, created: bool, result: ChargeResult, start: date, end: date,
                 next_payment: date | None) -> str:
    """The receipt e-mail of every charge, the renewals' and a switch's (the stored
    receipt's number when another run wrote it: one GetItem); without ``next_payment``, it
    says the subscription ends with the period paid. A receipt of 0 (a coupon took the
    payment whole: nothing charged, no ``charge_id``) says so, and names no card."""
    if not created:
        receipt = access.get_receipt(sub.account_id, receipt.SK) or receipt
    return send_customer_email("receipt", sub.Email, receipt_subject(receipt), language=sub.Language, context={
        **subscription_context(sub), "amount": money_text(result.amount, result.currency),
        "product": receipt.ProductName or receipt.SKU,  # what was charged for, should it have switched since
        "billing_date": start, "period_start": start, "period_end": end,
        "charge_id": result.charge_id, "next_payment": next_payment, "nothing_charged": result.amount == 0,
        "receipt_number": receipt.Number, "receipt_path": reverse("receipt", args=[receipt.url_id]),
        "doc": invoice_of(receipt),  # None for a tax-blind receipt: the e-mail is a receipt's
        **_discount_context(result),
    })


def _discount_context(result: ChargeResult) -> dict[str, Any]:
    """A coupon's discount on the charge (its metadata): price, discount (code), paid."""
    coupon = result.metadata.get("coupon")
    if not coupon:
        return {}
    off = int(result.metadata.get("discount") or 0)
    # The coupon came off the price before the tax: with tax-exclusive prices the price is
    # the net's, not the amount charged's.
    exclusive = result.metadata.get("prices_include_tax") == "0" and "net" in result.metadata
    before = int(result.metadata["net"]) if exclusive else result.amount
    return {"coupon": coupon, "discount": money_text(off, result.currency),
            "price": money_text(before + off, result.currency)}


def receipt_subject(receipt: Receipt) -> Any:
    """The receipt e-mail's subject: its number, product and first day paid for; lazy, so
    it is worded in the customer's language when the e-mail is sent."""
    paid_from = date.fromisoformat(receipt.BillingDate)
    if receipt.is_invoice:
        return format_lazy(gettext_lazy("Invoice {number}: {product}, {date}"), number=receipt.Number or "",
                           product=receipt.ProductName or receipt.SKU, date=LocalDate(paid_from))
    return format_lazy(gettext_lazy("Receipt {number}: {product}, {date}"), number=receipt.Number or "",
                       product=receipt.ProductName or receipt.SKU, date=LocalDate(paid_from))


def _after_refused_advance(sub: Subscription, start: date, end: date, receipt: Receipt) -> str:
    """The advance was refused: another run advanced it, or it was cancelled while the
    charge was in flight. Then the customer paid for ``start``..``end``: the service runs
    to ``end`` (never money taken for nothing), unless the account was closed: no service
    can follow, so the charge is refunded (``refunds.refund_after_close``)."""
    now = access.get_subscription(sub.account_id, sub.sub_id, sub.key_sku)
    if now is None or now.Status != SubscriptionStatus.CANCELLED:
        return "already advanced by another run"
    if now.CancelReason == access.ACCOUNT_CLOSED_REASON:
        return refund_after_close(receipt, now)
    try:
        access.extend_after_cancel(now, paid_period=start, paid_through=end)
    except access.ConditionFailed:
        return "already recorded"
    return f"paid after cancel: service runs to {end}"


def _declined(sub: Subscription, out: PaymentOutcome, result: ChargeResult, run_date: date, actor: str) -> PaymentOutcome:
    assert out.period and out.due
    failed_retries = out.attempt  # the first attempt is not a retry
    # Counted from the real run date, at least a day on (docs/MONEY.md M3): a catch-up run
    # over several dates never meets the retry again, and never squeezes the dunning.
    retry_on = retry_after(run_date, settings.PAYMENT_RETRY_DAYS, failed_retries)
    reason = result.decline_code or "declined"
    # The amount tried, not the monthly price: a retried or first period may be longer.
    context = {**subscription_context(sub), "billing_date": out.period, "retry_on": retry_on,
               "amount": money_text(result.amount, result.currency)}
    if retry_on is None:
        try:
            access.cancel_subscription(sub, reason="payment_failed", actor=actor, check_version=False,
                                       also=[_failed_event(sub, out, result)])
        except access.ConditionFailed:
            out.reason = "already cancelled or changed by another run"
            return out
        out.status, out.reason = PaymentStatus.CANCELLED, f"{reason}; no retry left"
        out.mail_error = send_customer_email("subscription_cancelled", sub.Email, format_lazy(
            gettext_lazy("Subscription cancelled: {product}"), product=context["product"]), context, language=sub.Language)
        return out
    # The reminder for the period after the owed one: the retry does not move the schedule.
    next_anchor = (out.period_end or out.period) + timedelta(days=1)
    try:
        access.mark_past_due(
            sub, slot=out.due, period=out.period, failed_retries=failed_retries, retry_on=retry_on,
            next_reminder=_next_reminder(sub, next_anchor, run_date), decline_code=reason, actor=actor,
            amount=result.amount, charge_id=result.charge_id or None, period_end=out.period_end,
        )
    except access.ConditionFailed:
        out.reason = "already handled by another run"
        return out
    out.status, out.reason, out.next_payment = PaymentStatus.DECLINED, f"{reason}; retry on {retry_on}", retry_on
    out.mail_error = send_customer_email("payment_declined", sub.Email, format_lazy(
        gettext_lazy("Payment declined: {product}"), product=context["product"]), context, language=sub.Language)
    return out


def _failed_event(sub: Subscription, out: PaymentOutcome, result: ChargeResult) -> Any:
    """The merchant's ``payment.failed`` for a declined charge that ends the subscription:
    written in the cancel's own transaction (a charge's answer without a currency: the
    subscription's, as ``payment_attempt_object`` fills it)."""
    return access.payment_attempt_event(
        MerchantEventType.PAYMENT_FAILED, sub, amount=result.amount, currency=result.currency,
        period_start=out.period, period_end=out.period_end, charge_id=result.charge_id or None,
        decline_code=result.decline_code or "declined", attempt=out.attempt)
