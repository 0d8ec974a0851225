"""The demo's add-ons (docs/PRICING.md "Add-ons"): two small products sold beside a plan,
"Weekend print edition" ($4.00 a month) and "Crosswords and puzzles" ($1.50 a month), and a
demo customer of its own, ``addons@example.com`` (log-in password as the demo customer's),
subscribed today through the portal's own action to Daily News digital ($9.99 a month) with
both added from its next payment: its subscription page lists them ("…, from <day>"), its
next payment is $15.49, on one invoice a line an item, and its add-ons page offers and
removes them. Safe to run twice: a customer who has subscribed already is left as it is."""

from __future__ import annotations

from datetime import date

from billing import access
from billing.actions import add_ons as add_on_actions
from billing.management.demo._customers import demo_customer, subscribe_monthly
from billing.rules.price_objects import default_price_id

EMAIL = "addons@example.com"
LABEL = "add-ons"
PLAN = "NEWS-DAILY"
# (SKU, name, $ a month): sold on their own too, and offered as add-ons to any monthly plan in dollars
ADD_ONS = [("PRINT-WEEKEND", "Weekend print edition", 400), ("CROSSWORDS", "Crosswords and puzzles", 150)]


def seed(today: date) -> list[str]:
    plan = access.get_product(PLAN)
    if plan is None:
        return [f"{LABEL}: no {PLAN} product (seed_demo makes it)"]
    for sku, name, amount in ADD_ONS:
        if access.get_product(sku) is None:
            access.create_product(sku, name, amount, "USD", add_on=True)
    account = demo_customer(EMAIL)
    if access.get_subscriptions_by_account(account.account_id):
        return [f"{LABEL}: {EMAIL} has subscribed already"]
    started = subscribe_monthly(account, plan, today, EMAIL)
    if not started.started:
        return [f"{LABEL}: {EMAIL}'s {plan.Name} did not start"]
    for sku, _name, _amount in ADD_ONS:  # each on the subscription as it is now
        sub = access.get_subscription(account.account_id, started.sub.sub_id)
        add_on_actions.add(sub, default_price_id(sku), today=today, actor=EMAIL)
    return [f"{LABEL}: {EMAIL}'s {plan.Name} with {len(ADD_ONS)} add-ons from {sub.NextPaymentDate} "
            f"(next payment {int(sub.PaymentAmount)} cents)"]
