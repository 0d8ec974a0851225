"""What a customer or a staff member does to a subscription, as one operation each:
the access function makes the change and records its audit event (so no caller can
forget it), and this module tells the customer (``core.mail``). Zulip's
``zerver/actions`` are the model. Views and staff pages call these, never the access
functions for these changes.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.actions import meters, wallet
from billing.actions.coupons import give_back_unused
from billing.actions.lifecycle import next_amount_text
from billing.models import Account, AuditAction, Coupon, Product, Subscription, SubscriptionStatus
from billing.notify import manage_url, tell
from billing.operations.expiry import expire
from billing.operations.outcomes import PaymentOutcome, PaymentStatus
from billing.operations.payments import (
    owed_amount,
    owed_period,
    record_paid_charge,
    take_first_payment,
    take_payment,
)
from billing.rules.add_ons import AddOn
from billing.rules.lifecycle import is_expired_incomplete
from billing.rules.price_choice import PriceChoice
from billing.rules.projection import owed_charges
from core.clock import billing_today
from core.mail import money_text
from core.payments.errors import GatewayError
from core.payments.gateway import CardToken, ChargeResult, get_gateway

log = logging.getLogger(__name__)


@dataclass
class Started:
    """A subscription and the outcome of its first charge (``outcome.status`` is PAID when
    it started; otherwise it has been ended unpaid and the page says why)."""

    sub: Subscription
    outcome: PaymentOutcome

    @property
    def started(self) -> bool:
        return self.outcome.status == PaymentStatus.PAID or self.in_trial

    @property
    def in_trial(self) -> bool:
        """Started with a free trial: nothing charged yet (the first charge is on
        ``NextPaymentDate``, off-session, by the payment run)."""
        return bool(self.sub.TrialEnd) and self.outcome.status == PaymentStatus.SKIPPED and self.sub.is_live

    @property
    def expired(self) -> bool:
        """Its first payment was confirmed too late (``incomplete_expired``): it never started."""
        return self.outcome.reason == SubscriptionStatus.INCOMPLETE_EXPIRED.value

    @property
    def awaits_authentication(self) -> bool:
        """The bank asks the customer to confirm the first charge (3-D Secure): the page
        confirms it with Stripe.js, then ``confirm_first_payment``."""
        return self.outcome.status == PaymentStatus.ACTION_REQUIRED


@dataclass(frozen=True)
class NewSubscription:
    """What the customer confirmed: the product, the price and the card (a new one joins
    the wallet under ``card_id`` once it has paid, the default card if ``make_default``)."""

    product_name: str
    amount: int
    currency: str
    card: CardToken
    billing_address: str | None = None
    card_id: str | None = None
    keep_card: bool = False
    make_default: bool = False


def subscribe(account: Account, *, sku: str, product_name: str, payment_day: int, amount: int, currency: str,
              card: CardToken, today: date, actor: str, billing_address: str | None = None,
              card_id: str | None = None, keep_card: bool = False, make_default: bool = False,
              coupon: Coupon | None = None, trial_days: int = 0, interval: str | None = None,
              interval_count: int | None = None, price_id: str | None = None, quantity: int | None = None,
              unit_amount: int | None = None, metered_price_id: str | None = None,
              more_metered_price_ids: tuple[str, ...] = (), tax_behavior: str | None = None,
              add_ons: tuple[AddOn, ...] = ()) -> Started:
    """Create the subscription and charge its first period at once (docs/MONEY.md M1, paid
    in advance) through the batch's path. A decline or an unreachable gateway ends it
    unpaid; should the gateway have charged after all, ``reconcile_payments`` finds the
    charge and records it (M2). A new card (``keep_card``) joins the wallet under
    ``card_id`` once it has paid (the default card if ``make_default``). ``coupon``: given
    from the first payment, its use counted with the subscription's own write
    (``access.CouponRefused``, nothing written, when it cannot be used); a subscription
    that does not start gives the use back.

    With ``trial_days``: a free trial, nothing charged now (the card is kept for the
    first charge, off-session, the day after the trial: docs/MONEY.md "Free
    trials"); ``access.TrialAlreadyUsed`` (nothing written, nothing charged) when the
    account has had this product's trial. ``interval``, ``interval_count``: the cadence
    (docs/MONEY.md "Cadences"; default monthly), ``amount`` being one period's price.
    ``metered_price_id``: a metered price whose usage each payment after the first bills
    in arrears (``with_metered_prices``); with ``amount`` 0, the subscription's one price
    (usage alone), named at its creation and its first payment a receipt of 0.
    ``more_metered_price_ids``: further metered prices billed beside it, each of another
    meter (``usage_billing.MAX_METERED_PRICES`` in all). ``tax_behavior``: the price's
    (``Price.TaxBehavior``), which its charges follow. ``add_ons`` (billing/rules/add_ons.py,
    checked by the caller): billed with the plan from the first charge, ``amount`` the
    plan's alone."""
    usage_only = amount == 0 and metered_price_id is not None
    amount += sum(add_on.amount for add_on in add_ons)  # the fee: the plan's and its add-ons'
    sub = access.create_subscription(
        account, sku=sku, payment_day=payment_day, amount=amount, currency=currency, card=card, today=today,
        reminder_days_before=settings.REMINDER_DAYS_BEFORE, product_name=product_name,
        billing_address=billing_address, actor=actor, card_id=card_id, coupon=coupon, trial_days=trial_days,
        interval=interval, interval_count=interval_count, price_id=price_id, quantity=quantity,
        unit_amount=unit_amount, metered_price_id=metered_price_id if usage_only else None,
        tax_behavior=tax_behavior, add_ons=add_ons,
    )
    metered = ([] if usage_only else [metered_price_id] if metered_price_id else []) + list(more_metered_price_ids)
    new = NewSubscription(product_name, amount, currency, card, billing_address, card_id, keep_card, make_default)
    if sub.TrialEnd:
        return with_metered_prices(_trial_started(sub, new, actor=actor), metered, actor=actor)
    discount = _coupon_line(sub)  # before the charge, which counts the coupon's use
    try:
        outcome = take_first_payment(sub, today=today, actor=actor)
    except Exception:
        # The outcome is unknown (gateway or engine down): the subscription does not start.
        access.cancel_subscription(sub, actor=actor, reason="first_payment_failed", check_version=False)
        _give_coupon_back(sub)
        raise
    if outcome.status == PaymentStatus.CANCELLED:
        _give_coupon_back(sub)
    elif outcome.status == PaymentStatus.SKIPPED and outcome.charge_id and _recorded_by_another(sub, outcome):
        # The charge succeeded and another process recorded it first (the processor's
        # webhook tells of a succeeded payment at once): paid all the same, and started.
        outcome.status = PaymentStatus.PAID
    return with_metered_prices(_after_first_charge(sub, outcome, new, actor=actor, discount=discount), metered,
                               actor=actor)


def with_metered_prices(started: Started, metered_price_ids: list[str], *, actor: str) -> Started:
    """A new subscription that started (or waits on its bank's confirmation of the first
    charge) names ``metered_price_ids`` from now on, in order: its payments after the first
    bill those prices' usage in arrears (docs/USAGE.md "Billing a period"). Named after the
    first charge, which bills no usage, so that charge is the fixed price alone, as quoted.
    The portal's subscribe and the API's both come here, so they attach them alike. A
    subscription changed meanwhile (its first payment recorded by another process) is
    read again and named once more; ``NotMetered`` for a price that cannot be."""
    if not (started.started or started.awaits_authentication):
        return started
    for price_id in metered_price_ids:
        try:
            started.sub = meters.attach_metered_price(started.sub, price_id, actor=actor)
        except access.ConditionFailed:
            now = access.get_subscription(started.sub.account_id, started.sub.sub_id, started.sub.key_sku)
            if now is None:
                raise
            started.sub = meters.attach_metered_price(now, price_id, actor=actor)
    return started


def subscribe_to_price(account: Account, product: Product, choice: PriceChoice, *, payment_day: int,
                       card: CardToken, today: date, actor: str, billing_address: str | None = None,
                       card_id: str | None = None, keep_card: bool = False, make_default: bool = False,
                       coupon: Coupon | None = None, trial: bool = True,
                       metered_price_id: str | None = None, more_metered_price_ids: tuple[str, ...] = (),
                       add_ons: tuple[AddOn, ...] = ()) -> Started:
    """``subscribe`` to a chosen price of ``product`` (``rules.price_choice.choose_price``):
    its amount a period (its unit amount × the seats), cadence, currency and free trial
    (the price's, else the product's; none when ``trial`` is False or the account had this
    product's trial already: one GetItem of its marker). ``metered_price_id``,
    ``more_metered_price_ids``, ``add_ons``: as ``subscribe``."""
    trial_days = choice.trial_days if trial and choice.trial_days else 0
    # Usage alone: its price is the choice's; a metered price named with it is billed beside it.
    beside = (metered_price_id,) if choice.metered_price_id and metered_price_id else ()
    if trial_days and access.trial_used(account.account_id, product.SKU):
        trial_days = 0
    return subscribe(account, sku=product.SKU, product_name=product.Name, payment_day=payment_day,
                     amount=choice.amount, currency=choice.currency, card=card, today=today, actor=actor,
                     billing_address=billing_address, card_id=card_id, keep_card=keep_card,
                     make_default=make_default, coupon=coupon, trial_days=trial_days, interval=choice.interval,
                     interval_count=choice.interval_count, price_id=choice.stored_price_id,
                     metered_price_id=choice.metered_price_id or metered_price_id,
                     more_metered_price_ids=(*beside, *more_metered_price_ids), tax_behavior=choice.tax_behavior,
                     add_ons=add_ons, **choice.attributes())  # type: ignore[arg-type]


def _recorded_by_another(sub: Subscription, outcome: PaymentOutcome) -> bool:
    """Whether the first charge's period is recorded as paid on the live subscription."""
    now = access.get_subscription(sub.account_id, sub.sub_id, sub.key_sku)
    return (now is not None and now.is_live and outcome.period_end is not None
            and (now.PaidThroughDate or "") >= outcome.period_end.isoformat())


def _give_coupon_back(sub: Subscription) -> None:
    """A subscription that never started does not use its coupon."""
    if sub.CouponCode:
        access.release_coupon_use(sub.CouponCode)


def _trial_started(sub: Subscription, new: NewSubscription, *, actor: str) -> Started:
    """A free trial began: the confirmation e-mail says until when it is free and what the
    first charge will be and when; a new card joins the wallet now (it is the card that
    charge will use: kept, as Stripe Billing keeps a trial's card)."""
    start, end = owed_period(sub)
    first_amount = owed_amount(sub)
    outcome = PaymentOutcome(PaymentStatus.SKIPPED, sub.sub_id, sub.account_id, due=start, period=start,
                             period_end=end, amount=first_amount, currency=sub.Currency,
                             reason=f"free trial until {sub.TrialEnd}")
    tell("subscription_confirmed", sub, format_lazy(_("Your {product} subscription is confirmed"),
                                                    product=new.product_name),
         amount=money_text(new.amount, new.currency), trial_end=date.fromisoformat(sub.TrialEnd),
         first_charge=money_text(first_amount, new.currency), period_start=start, period_end=end,
         next_payment=start, manage_url=manage_url(sub), **_coupon_line(sub))
    if new.keep_card and new.card_id:
        wallet.keep_in_wallet(sub.account_id, new.card, new.billing_address, card_id=new.card_id, actor=actor,
                              make_default=new.make_default)
    return Started(sub, outcome)


def _coupon_line(sub: Subscription) -> dict[str, object]:
    """The coupon's line of the confirmation e-mail, from the subscription as it is before
    its first charge is recorded (no read): its code, what it takes off the first payment,
    and on how many payments (None: every one)."""
    if not sub.CouponCode:
        return {}
    # The first payment and the one after it, as the run will take them: an amount off is
    # not the same on a prorated first period as on a whole month (``rules.projection``).
    first, following = owed_charges(sub, 2, tax=access.tax_terms(sub))  # incomplete too: its confirmation records the first
    left = sub.CouponPaymentsLeft
    return {"coupon": sub.CouponCode, "discount": money_text(first.discount, sub.Currency),
            "next_discount": money_text(following.discount, sub.Currency) if following.discount != first.discount
            else "", "coupon_payments": None if left is None else int(left)}


def _after_first_charge(sub: Subscription, outcome: PaymentOutcome, new: NewSubscription, *, actor: str,
                        first_time: bool = True, discount: dict[str, object] | None = None) -> Started:
    fresh = access.get_subscription(sub.account_id, sub.sub_id, sub.key_sku) or sub
    if outcome.status == PaymentStatus.PAID and first_time:
        tell("subscription_confirmed", fresh, format_lazy(_("Your {product} subscription is confirmed"),
                                                          product=new.product_name),
             # The amounts as the customer saw them on the confirm page ("$9.99").
             amount=money_text(new.amount, new.currency),
             first_charge=money_text(outcome.amount or 0, new.currency), period_start=outcome.period,
             period_end=outcome.period_end, next_payment=date.fromisoformat(fresh.NextPaymentDate),
             manage_url=manage_url(sub), **(discount or {}))
        if new.keep_card and new.card_id:
            wallet.keep_in_wallet(sub.account_id, new.card, new.billing_address, card_id=new.card_id, actor=actor,
                                  make_default=new.make_default)
    return Started(fresh, outcome)


def confirm_first_payment(sub: Subscription, charge_id: str, new: NewSubscription, *, today: date,
                          actor: str, bank_answer: bool | None = None) -> Started:
    """After the customer confirmed the first charge with their bank (3-D Secure, in the
    browser): the charge as the gateway has it now. Paid: recorded through the batch's path
    (receipt, event, the subscription paid through its first period) and the subscription
    starts; still waiting: unchanged (``incomplete``); refused: the subscription ends
    unpaid, as a declined first charge does. Past its deadline (``incomplete`` 23 hours,
    billing/operations/expiry.py): expired, nothing recorded (``Started.expired``); a charge the
    processor took all the same is refunded by the reconciliation. ``bank_answer``: on the
    simulated gateway, the answer given on its own bank page (it has no Stripe.js).
    ``GatewayError`` when the gateway cannot say (nothing changed)."""
    if is_expired_incomplete(sub):
        expire(sub, actor=actor)
        outcome = PaymentOutcome(PaymentStatus.CANCELLED, sub.sub_id, sub.account_id, charge_id=charge_id,
                                 reason=SubscriptionStatus.INCOMPLETE_EXPIRED.value)
        return _after_first_charge(sub, outcome, new, actor=actor)
    result = _charge_after_bank(sub, charge_id, bank_answer, whose="the first charge of")
    if result.succeeded:
        discount = _coupon_line(sub)
        outcome = record_paid_charge(sub, result, run_date=today, actor=actor)
        # SKIPPED: recorded already (a second click, or a payment run): started, said once.
        first_time, outcome.status = outcome.status == PaymentStatus.PAID, PaymentStatus.PAID
        return _after_first_charge(sub, outcome, new, actor=actor, first_time=first_time, discount=discount)
    if result.needs_authentication:
        outcome = PaymentOutcome(PaymentStatus.ACTION_REQUIRED, sub.sub_id, sub.account_id, charge_id=charge_id,
                                 amount=result.amount, reason="authentication_required",
                                 client_secret=result.client_secret)
    else:
        outcome = PaymentOutcome(PaymentStatus.CANCELLED, sub.sub_id, sub.account_id, charge_id=charge_id,
                                 reason=result.decline_code or "authentication_failed")
        with suppress(access.ConditionFailed):  # ended already (a second click)
            if sub.Status == SubscriptionStatus.INCOMPLETE:
                access.expire_incomplete(sub, actor=actor, declined=True, amount=result.amount)
            else:
                access.cancel_subscription(sub, reason="first_payment_declined", actor=actor, check_version=False)
            _give_coupon_back(sub)
    return _after_first_charge(sub, outcome, new, actor=actor)


def _charge_after_bank(sub: Subscription, charge_id: str, bank_answer: bool | None, *, whose: str) -> ChargeResult:
    """The charge ``sub`` waits on, as the gateway has it once the customer answered their
    bank: the simulated gateway is given ``bank_answer`` first (it has no Stripe.js, so its
    own bank page answers); Stripe's answer came through the browser. A charge made for
    another subscription is refused (``ValueError``, ``whose`` says what it should be), so
    a link cannot record one subscription's charge on another."""
    gateway = get_gateway()
    bank = getattr(gateway, "authenticate", None)
    if bank_answer is not None and bank is not None:
        bank(charge_id, approve=bank_answer)
    result = gateway.charge_status(charge_id)
    if result.metadata.get("sub_id") != sub.sub_id:
        raise ValueError(f"charge {charge_id} is not {whose} {sub.sub_id}")
    return result


def finishing(sub: Subscription) -> NewSubscription:
    """What an incomplete subscription's customer chose, read back from it (the "Finish
    payment" link needs no session): its card joins the wallet once paid if it is not
    there yet (the default card when the wallet is empty)."""
    details = sub.PaymentDetails
    card = CardToken(token=details.Token, brand=details.Brand, last4=details.Last4, exp_month=int(details.ExpMonth),
                     exp_year=int(details.ExpYear))
    new_card = bool(details.CardId) and access.get_card(sub.account_id, details.CardId) is None
    make_default = new_card and not access.get_cards(sub.account_id)
    return NewSubscription(sub.ProductName or sub.SKU, int(sub.PaymentAmount), sub.Currency, card,
                           details.BillingAddress, details.CardId, new_card, make_default)


def awaited_charge(sub: Subscription) -> ChargeResult | None:
    """The charge the subscription waits on the customer's bank for (a renewal's, or an
    incomplete subscription's first), as the gateway has it now (None: nothing waits).
    ``GatewayError`` when it cannot say."""
    waiting = (SubscriptionStatus.PAST_DUE, SubscriptionStatus.INCOMPLETE)
    if sub.Status not in waiting or not sub.PaymentDetails.AwaitingCharge:
        return None
    return get_gateway().charge_status(sub.PaymentDetails.AwaitingCharge)


def confirm_renewal(sub: Subscription, *, today: date, actor: str, bank_answer: bool | None = None) -> PaymentOutcome:
    """After the customer confirmed a renewal's charge with their bank (Stripe.js's
    ``confirmCardPayment`` on the portal's page): the charge as the gateway has it now.
    Paid: recorded through the payment run's path (one receipt, whoever records it first:
    this page, the webhook or the run); still waiting: unchanged (ACTION_REQUIRED, with
    the secret to try again); refused: forgotten, so that the next retry charges anew
    (DECLINED, and the customer may replace the card). ``bank_answer``: on the simulated
    gateway, the answer given on its own bank page (it has no Stripe.js)."""
    charge_id = sub.PaymentDetails.AwaitingCharge
    out = PaymentOutcome(PaymentStatus.SKIPPED, sub.sub_id, sub.account_id, charge_id=charge_id)
    if sub.Status != SubscriptionStatus.PAST_DUE or not charge_id:
        out.reason = "nothing waits for confirmation"
        return out
    result = _charge_after_bank(sub, charge_id, bank_answer, whose="a charge of")
    if result.succeeded:
        paid = record_paid_charge(sub, result, run_date=today, actor=actor)
        paid.status = PaymentStatus.PAID  # SKIPPED: recorded already (the webhook was first): paid all the same
        return paid
    if result.needs_authentication:
        out.status, out.client_secret, out.reason = PaymentStatus.ACTION_REQUIRED, result.client_secret, \
            "authentication_required"
        return out
    with suppress(access.ConditionFailed):  # forgotten already (a second click, the run)
        access.forget_awaiting_charge(sub, charge_id)
    out.status, out.reason = PaymentStatus.DECLINED, result.decline_code or "authentication_failed"
    out.next_payment = date.fromisoformat(sub.NextPaymentDate) if sub.NextPaymentDate else None
    return out


def _drop_awaited_charge(sub: Subscription, *, today: date, actor: str) -> None:
    """Before the subscription stops waiting on a renewal's charge (a cancel, a card
    replaced): cancel it at the processor, so that an old link cannot pay it later; one
    the customer confirmed just before is recorded (paid). Unreachable: left as it is (a
    late success is still recorded, by the webhook or the reconciliation: M2)."""
    charge_id = sub.PaymentDetails.AwaitingCharge if sub.PaymentDetails else None
    if not charge_id:
        return
    try:
        result = get_gateway().cancel_charge(charge_id)
    except GatewayError as error:
        log.warning("could not cancel the charge %s of %s: %s", charge_id, sub.sub_id, error)
        return
    if result.succeeded:
        record_paid_charge(sub, result, run_date=today, actor=actor)
        fresh = access.get_subscription(sub.account_id, sub.sub_id, sub.key_sku)
        for name in type(sub).get_attributes() if fresh is not None else ():
            setattr(sub, name, getattr(fresh, name))  # the caller goes on with the item as stored


def change_payment_day(sub: Subscription, new_day: int, *, actor: str,
                       action: AuditAction = AuditAction.PAYMENT_DAY_CHANGED) -> Subscription:
    old_day = sub.PaymentDay
    access.change_payment_day(sub, new_day, actor=actor, action=action)
    start, end = owed_period(sub)
    tell("payment_day_changed", sub, format_lazy(_("Payment day changed: {product}"), product=sub.ProductName or sub.SKU),
          old_day=old_day, next_payment=date.fromisoformat(sub.NextPaymentDate), period_start=start,
          period_end=end, next_amount=next_amount_text(sub),
          past_due=sub.Status == SubscriptionStatus.PAST_DUE)
    return sub


def replace_card(sub: Subscription, card: CardToken, billing_address: str | None = None, *, actor: str,
                 today: date, action: AuditAction = AuditAction.CARD_REPLACED,
                 card_id: str | None = None) -> PaymentOutcome | None:
    """Replace the card (``card_id``: the id under which it joins the wallet); a
    past-due period is retried with it at once ("pay now"), so the owed period is
    neither forgiven nor left waiting. Returns that retry's outcome. A charge that waited
    for the old card's bank is cancelled first (or recorded, if confirmed meanwhile)."""
    _drop_awaited_charge(sub, today=today, actor=actor)
    access.replace_card(sub, card, billing_address, actor=actor, action=action, card_id=card_id)
    tell("card_replaced", sub, format_lazy(_("Card replaced: {product}"), product=sub.ProductName or sub.SKU))
    if card_id:
        # The new card joins the wallet under that id, whatever the retry below does.
        wallet.keep_in_wallet(sub.account_id, card, billing_address, card_id=card_id, actor=actor)
    if sub.Status != SubscriptionStatus.PAST_DUE:
        return None
    return take_payment(sub, run_date=today, actor=actor)


def cancel(sub: Subscription, *, actor: str, reason: str = "customer",
           action: AuditAction = AuditAction.SUBSCRIPTION_CANCELLED) -> Subscription:
    # Its usage up to the last day served is billed the day after it (a metered price's).
    access.cancel_subscription(sub, actor=actor, reason=reason, action=action, bill_usage=True)
    if not sub.is_live:  # ended now: nothing waits on the customer's bank any more
        _drop_awaited_charge(sub, today=billing_today(settings.BILLING_TIMEZONE), actor=actor)
    give_back_unused(sub, today=billing_today(settings.BILLING_TIMEZONE))  # a trial that paid nothing
    paid_through = date.fromisoformat(sub.PaidThroughDate) if sub.PaidThroughDate else None
    tell("subscription_ended", sub, format_lazy(_("Subscription cancelled: {product}"), product=sub.ProductName or sub.SKU),
          paid_through=paid_through, reason=reason)
    return sub
