"""Seed demo data once: users, products, accounts, subscriptions and eight months of receipts."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from billing import access
from billing.access.disputes import Dispute
from billing.actions import subscriptions as subscribing
from billing.actions.accounts import payment_customer
from billing.actions.switch import switch
from billing.exceptions import ConditionFailed
from billing.management.demo import seed_parts
from billing.management.demo_tax import (
    REFUNDED_CUSTOMER,
    TAX_CUSTOMERS,
    declare_tax_identity,
    demo_invoice_tax,
    refund_with_credit_note,
)
from billing.models import Account, Card, Subscription
from billing.operations.expiry import expire
from billing.operations.payments import charge_key, take_payment
from billing.operations.refunds import refund_receipt
from billing.rules.lifecycle import CancelMode
from billing.rules.schedule import (
    add_months,
    anchor_date,
    first_payment_date,
    next_payment_date,
    period_end,
    reminder_date,
)
from billing.rules.switch import SwitchRefused
from core.clock import billing_today
from core.dynamo.command import BillingCommand
from core.dynamo.table import registered
from core.payments.demo_cards import demo_card
from core.payments.gateway import CardToken, PaymentGateway, get_gateway

STAFF_EMAIL = "staff@rpay.localhost"
STAFF_PASSWORD = "staff-demo-2026"
CUSTOMER_EMAIL = "customer@rpay.localhost"
CUSTOMER_PASSWORD = "customer-demo-2026"

# (sku, name, monthly price, currency, free trial days): Daily News comes in three sizes
# to switch between; the gym offers a free trial.
PRODUCTS = [
    ("NEWS-DAILY", "Daily News digital", 999, "USD", 0),
    ("MUSIC-FAMILY", "Music Family plan", 1699, "USD", 0),
    ("CLOUD-200", "Cloud Storage 200 GB", 299, "EUR", 0),
    ("GYM-CITY", "City Gym membership", 4500, "GBP", 14),
    ("COFFEE-BOX", "Coffee beans monthly box", 2450, "USD", 0),
    ("NEWS-PLUS", "Daily News Plus (with the archive)", 1999, "USD", 0),
    ("NEWS-LITE", "Daily News Lite (weekends)", 499, "USD", 0),
]
# Coupons a customer may type at subscribing, or staff give: (code, terms).
COUPONS = [
    ("WELCOME10", {"percent_off": 10, "duration": "repeating", "duration_payments": 3, "max_uses": 500}),
    ("LOYAL5", {"amount_off": 500, "currency": "USD", "duration": "forever", "max_uses": 50}),
]

# (e-mail, [(sku, payment day)]): days 29, 30 and 31 show the month-end clamp.
SEED_ACTOR = "seed_demo"
# Test cards both gateways know (core/payments/demo_cards.py), with billing addresses.
DEMO_CARDS = [("visa", "1 Example Street\nLondon EC1A 1AA"), ("mastercard", "1 Example Street\nLondon EC1A 1AA")]
# A payment day of None: today's, so that the subscription's renewal is due at once (the
# demo customer's coffee box, whose bank then asks them to confirm it: "action required").
DEMO_ACCOUNTS: list[tuple[str, list[tuple[str, int | None]]]] = [
    (CUSTOMER_EMAIL, [("NEWS-DAILY", 31), ("MUSIC-FAMILY", 15), ("CLOUD-200", 29), ("COFFEE-BOX", None)]),
    ("ada@example.com", [("GYM-CITY", 30), ("COFFEE-BOX", 1)]),
    ("grace@example.com", [("NEWS-DAILY", 28), ("CLOUD-200", 31)]),
    ("alan@example.com", [("MUSIC-FAMILY", 29)]),
    ("edsger@example.com", [("COFFEE-BOX", 12), ("GYM-CITY", 5)]),
    # Invoices with VAT (billing/management/demo_tax.py): an Italian consumer, a German
    # business (reverse charge), a French consumer (OSS); cloud storage is priced in euros.
    ("giulia@example.it", [("CLOUD-200", 3)]),
    ("buchhaltung@example.de", [("CLOUD-200", 10)]),
    ("camille@example.fr", [("CLOUD-200", 20)]),
]


def demo_charge(gateway: PaymentGateway, sub: Subscription, billed: date, end: date,
                tax: dict[str, str] | None = None) -> str:
    """A real charge on the gateway, so staff can refund demo receipts. Made as the payment
    run makes one (its key, its metadata naming the account, subscription and period, and
    ``tax``: the tax it carries), so that ``reconcile_payments`` finds each seeded
    receipt's charge and each charge's receipt."""
    result = gateway.charge(
        sub.PaymentDetails.Token, int(sub.PaymentAmount), sub.Currency,
        idempotency_key=charge_key(sub.sub_id, billed, 0),
        metadata={"account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU,
                  "billing_date": billed.isoformat(), "period_start": billed.isoformat(),
                  "period_end": end.isoformat(), "attempt": "0", "payment_day": str(sub.PaymentDay),
                  "price": str(sub.PaymentAmount), **(tax or {})},
    )
    return result.charge_id


def access_token(card: Card) -> CardToken:
    d = card.Details
    return CardToken(token=d.Token, brand=d.Brand, last4=d.Last4, exp_month=d.ExpMonth, exp_year=d.ExpYear)


def demo_wallet(gateway: PaymentGateway, account: Account, today: date, *, two_cards: bool,
                address: str | None = None) -> list[Card]:
    """The account's wallet as a customer would have made it: a default Visa and, for the
    demo customer, a Mastercard (with Stripe, payment methods of the account's Stripe
    customer, on localstripe's test numbers); ``address``: the card's billing address."""
    customer = payment_customer(account)
    numbers = DEMO_CARDS if two_cards else DEMO_CARDS[:1]
    if address:
        numbers = [(name, address) for name, _ in numbers]
    cards = []
    for n, (name, address) in enumerate(numbers):
        token = demo_card(gateway, name, exp_year=today.year + 3 - n, customer=customer)
        cards.append(access.add_card(account.account_id, token, address, actor=SEED_ACTOR, make_default=n == 0))
    return cards


def fresh(sub: Subscription) -> Subscription:
    return access.get_subscription(sub.account_id, sub.sub_id, sku=sub.key_sku) or sub


def show_the_portal(subs: dict[str, Subscription], today: date) -> None:
    """The demo customer's portal shows each feature at once: one subscription paused, one
    cancelled at the end of its period, a receipt partly refunded, and one whose renewal
    today waits for their bank ("action required": its card is the 3-D Secure test card,
    charged by the payment run's own path, which e-mails the link)."""
    coffee = fresh(subs["COFFEE-BOX"])
    account = access.get_account(coffee.account_id)
    if account is not None:
        card = access.add_card(account.account_id, demo_card(get_gateway(), "3ds", customer=payment_customer(account)),
                               DEMO_CARDS[0][1], actor=SEED_ACTOR)
        access.replace_card(coffee, access_token(card), card.Details.BillingAddress, actor=CUSTOMER_EMAIL,
                            card_id=card.card_id)
        take_payment(fresh(coffee), run_date=today, actor=SEED_ACTOR)
    with suppress(ConditionFailed):  # a date on which the rule refuses: left as it is
        access.pause_subscription(fresh(subs["MUSIC-FAMILY"]), resume=None, today=today,
                                  reminder_days_before=settings.REMINDER_DAYS_BEFORE, actor=CUSTOMER_EMAIL)
    with suppress(ConditionFailed):
        access.end_subscription(fresh(subs["CLOUD-200"]), mode=CancelMode.PERIOD_END, today=today, actor=CUSTOMER_EMAIL,
                                reason="too_expensive")
    news = subs["NEWS-DAILY"]
    receipts = access.get_receipts_by_account(news.account_id, today - timedelta(days=62), today)
    paid = [r for r in receipts if r.sub_id == news.sub_id and not r.RefundedAmount]
    if paid:
        refund_receipt(paid[0], paid[0].ProcessedAmount // 4, request_id="demo-goodwill", actor=STAFF_EMAIL,
                       reason="Goodwill: a week without delivery")


def show_an_incomplete_first_payment(account_id: str, today: date, *, sku: str, expired: bool = False) -> None:
    """A subscription made today with the 3-D Secure test card, through the portal's own
    operation: its first payment waits for the bank, so it is ``incomplete`` (not active,
    in no total; the dashboard's "Finish payment" link confirms it). ``expired``: then
    expired at once, as the payment run expires one left unconfirmed for 23 hours: a
    subscription that never started (edsger's)."""
    account = access.get_account(account_id)
    product = access.get_product(sku)
    if account is None or product is None:
        return
    sca = next((c for c in access.get_cards(account_id) if c.Details.Last4 == "3184"), None)
    if sca is None:
        sca = access.add_card(account_id, demo_card(get_gateway(), "3ds", customer=payment_customer(account)),
                              DEMO_CARDS[0][1], actor=SEED_ACTOR)
    started = subscribing.subscribe(
        account, sku=sku, product_name=product.Name, payment_day=today.day, amount=int(product.PaymentAmount),
        currency=product.Currency, card=access_token(sca), today=today, actor=account.Email,
        billing_address=sca.Details.BillingAddress, card_id=sca.card_id)
    if expired and started.awaits_authentication:
        expire(fresh(started.sub), actor=SEED_ACTOR)


def show_plan_changes(account: Account, subs: dict[str, Subscription], today: date) -> None:
    """Plan changes on grace's account: her Daily News switched down to Lite from the next
    payment (the page says until when she keeps what she paid for), a coupon given to her
    cloud storage, and a gym membership in its free trial (nothing charged yet)."""
    with suppress(SwitchRefused, ConditionFailed):
        switch(fresh(subs["NEWS-DAILY"]), "NEWS-LITE", today=today, actor="grace@example.com")
    welcome = access.get_coupon("WELCOME10")  # a percentage: any currency
    for sku in ("CLOUD-200", "NEWS-DAILY"):  # the first not due today (a coupon applies from the next payment)
        with suppress(ConditionFailed):
            if welcome is not None:
                access.apply_coupon(fresh(subs[sku]), welcome, today=today, actor=STAFF_EMAIL)
                break
    gym = access.get_product("GYM-CITY")
    card = access.get_cards(account.account_id)[0]
    access.create_subscription(
        account, sku="GYM-CITY", payment_day=today.day, amount=int(gym.PaymentAmount), currency=gym.Currency,
        card=access_token(card), today=today, reminder_days_before=settings.REMINDER_DAYS_BEFORE,
        product_name=gym.Name, billing_address=card.Details.BillingAddress, card_id=card.card_id,
        trial_days=int(gym.TrialDays or 0), actor="grace@example.com")


def show_a_dispute(subs: dict[str, Subscription], today: date) -> None:
    """Staff's "Disputes" page and a receipt marked disputed: one chargeback still open on
    the gym's latest receipt, one won on the coffee box's oldest, as Stripe's events would
    have recorded them."""
    for sku, newest, status in (("GYM-CITY", True, "needs_response"), ("COFFEE-BOX", False, "won")):
        sub = subs[sku]
        receipts = sorted((r for r in access.get_receipts_by_account(sub.account_id, today - timedelta(days=270), today)
                           if r.sub_id == sub.sub_id and r.ChargeId), key=lambda r: r.BillingDate)
        if not receipts:
            continue
        receipt = receipts[-1 if newest else 0]
        # Twelve days after the charge, or an hour ago when that is still to come (the
        # newest receipt may be days old): a dispute is never opened in the future.
        charged = datetime.fromisoformat(receipt.ProcessedDate)
        opened = max(charged, min(charged + timedelta(days=12), access.utc_now() - timedelta(hours=1)))
        dispute = Dispute(dispute_id=f"dp_demo_{sub.sub_id}", charge_id=receipt.ChargeId,
                          amount=int(receipt.ProcessedAmount), currency=receipt.Currency,
                          reason="fraudulent" if newest else "product_not_received", status="needs_response",
                          opened_at=opened.isoformat(timespec="seconds"))
        access.record_dispute(receipt, dispute, actor="stripe")
        if status != "needs_response":
            access.record_dispute(access.get_receipt(receipt.account_id, receipt.SK) or receipt,
                                  replace(dispute, status=status), actor="stripe")


class Command(BillingCommand):
    help = "Seed demo users, products, accounts, subscriptions and receipts (only once)."

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        staff, created_staff = User.objects.get_or_create(
            username=STAFF_EMAIL, defaults={"email": STAFF_EMAIL, "is_staff": True, "is_superuser": True}
        )
        if created_staff:
            staff.set_password(STAFF_PASSWORD)
            staff.save()
        money = Permission.objects.filter(codename="manage_money", content_type__app_label="billing").first()
        if money:
            staff.user_permissions.add(money)

        for sku, name, amount, currency, trial_days in PRODUCTS:
            if access.get_product(sku) is None:
                access.create_product(sku, name, amount, currency, trial_days=trial_days)
        for code, terms in COUPONS:
            if access.get_coupon(code) is None:
                access.create_coupon(code, actor=SEED_ACTOR, **terms)

        today = billing_today(settings.BILLING_TIMEZONE)
        seeded = 0
        gateway = get_gateway()
        for email, subs in DEMO_ACCOUNTS:
            user, created_user = User.objects.get_or_create(username=email, defaults={"email": email})
            # get_or_create leaves password "" (which Django counts as usable): set it on creation.
            if created_user:
                user.set_password(CUSTOMER_PASSWORD)
                user.save()
            if access.get_account_id_for_user(user.pk):
                continue
            account = access.create_account(email, user_id=user.pk, name=email.split("@")[0].title())
            if email in TAX_CUSTOMERS:
                declare_tax_identity(account)
            wallet = demo_wallet(gateway, account, today, two_cards=email == CUSTOMER_EMAIL,
                                 address=TAX_CUSTOMERS[email][0] if email in TAX_CUSTOMERS else None)
            made = {}
            for n, (sku, payment_day) in enumerate(subs):
                day = payment_day or today.day
                product = access.get_product(sku)
                # Made eight months ago, so the receipts below belong to it.
                created = date(*add_months(today.year, today.month, -8), 1)
                card = wallet[n % len(wallet)]  # the demo customer's second card pays the second one
                sub = made[sku] = access.create_subscription(
                    account, sku=sku, payment_day=day, amount=product.PaymentAmount,
                    currency=product.Currency, card=access_token(card), today=created,
                    reminder_days_before=settings.REMINDER_DAYS_BEFORE, product_name=product.Name,
                    billing_address=card.Details.BillingAddress, card_id=card.card_id,
                )
                # Paid every month from eight months ago up to today. A subscription without
                # a day of its own pays today (the payment run's states are shown on it); one
                # whose day falls today has paid already, as after the morning's run: else on
                # that day of the month the demo's "cancelled at the end of its period" ended
                # yesterday, and the portal's states would depend on the day it was seeded.
                billed_dates = [anchor_date(*add_months(today.year, today.month, -n), day) for n in range(8, -1, -1)]
                billed_dates = [d for d in billed_dates if d < today or (d == today and payment_day is not None)]
                for billed in billed_dates:
                    if billed + timedelta(days=settings.RECEIPT_RETENTION_DAYS) < today:
                        # Past its retention, the table's TTL would delete the receipt (the
                        # reads hide it already): its charge, made today, would then be a
                        # charge without a receipt to the reconciliation. Neither is made.
                        continue
                    end = period_end(day, billed)
                    # The demo business's invoices carry their tax, charge and receipt alike.
                    tax, tax_metadata = (demo_invoice_tax(sub, int(product.PaymentAmount), billed)
                                         if email in TAX_CUSTOMERS else (None, None))
                    access.create_receipt(
                        sub, billing_date=billed, amount=product.PaymentAmount,
                        currency=product.Currency, charge_id=demo_charge(gateway, sub, billed, end, tax_metadata),
                        retention_days=settings.RECEIPT_RETENTION_DAYS,
                        processed_at=datetime(billed.year, billed.month, billed.day, 6, tzinfo=UTC),
                        period_end=end, tax=tax,
                    )
                last_paid = billed_dates[-1] if billed_dates else None
                # Bring the schedule up to date as the payment batch would have.
                next_payment = next_payment_date(day, today) if today in billed_dates else first_payment_date(day, today)
                remind = reminder_date(next_payment, settings.REMINDER_DAYS_BEFORE, today)
                access.set_schedule(
                    sub, next_payment=next_payment, last_payment=last_paid or created,
                    next_reminder=remind, last_reminder=remind - timedelta(days=30),
                )
            if email == CUSTOMER_EMAIL:
                show_the_portal(made, today)
                show_an_incomplete_first_payment(account.account_id, today, sku="NEWS-PLUS")
            if email == "edsger@example.com":
                # edsger's page shows the two ends: a subscription that never started (its
                # first payment unconfirmed, expired) and one that ended (cancelled now).
                show_an_incomplete_first_payment(account.account_id, today, sku="NEWS-LITE", expired=True)
                with suppress(ConditionFailed):
                    access.end_subscription(fresh(made["GYM-CITY"]), mode=CancelMode.NOW, today=today,
                                            actor="edsger@example.com", reason="not_using")
            if email == "ada@example.com":
                show_a_dispute(made, today)
            if email == "grace@example.com":
                show_plan_changes(account, made, today)
            if email == REFUNDED_CUSTOMER:
                refund_with_credit_note(made, today)
            seeded += 1

        self.stdout.write(f"seeded {seeded} new demo account(s); {len(DEMO_ACCOUNTS) - seeded} already there")
        self.stdout.write(f"staff log-in:    {STAFF_EMAIL} / {STAFF_PASSWORD}")
        self.stdout.write(f"customer log-in: {CUSTOMER_EMAIL} / {CUSTOMER_PASSWORD}")
        # The capabilities' own demo parts (prices, usage, revenue history), each idempotent.
        for line in seed_parts(today):
            self.stdout.write(line)
        self._seed_other_tables()

    def _seed_other_tables(self) -> None:
        """The other apps' demo data (the shop's: the seed's sample with its ids)."""
        for table in registered():
            if table.seed_demo:
                for line in table.seed_demo(CUSTOMER_PASSWORD):
                    self.stdout.write(line)
