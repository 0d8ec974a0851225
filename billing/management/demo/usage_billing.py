"""The demo's usage billed in arrears (docs/USAGE.md "Billing a period"): the demo
customer's monthly US-dollar subscription is given the prices part's metered API price
(``API-ACCESS`` "API calls": first 1,000 calls free, then $0.002 a call; meter
``api_calls``, whose calls the usage part sends), so its next payment also charges the
calls of the month just ended. Runs after the prices and usage parts (its name sorts after
theirs). Safe to run twice: a subscription that has the price already is left as it is."""

from __future__ import annotations

from datetime import date

from django.contrib.auth import get_user_model

from billing import access
from billing.access.usage_billing import attach_metered_price
from billing.management.commands.seed_demo import CUSTOMER_EMAIL, SEED_ACTOR
from billing.rules.schedule import cadence_of

SKU, NICKNAME = "API-ACCESS", "API calls"


def seed(today: date) -> list[str]:
    price = next((p for p in access.list_prices(SKU) if p.Nickname == NICKNAME), None)
    if price is None:
        return [f"usage billing: no {NICKNAME} price of {SKU}: run the prices part first"]
    user = get_user_model().objects.filter(email__iexact=CUSTOMER_EMAIL).order_by("pk").first()
    account_id = access.get_account_id_for_user(user.pk) if user is not None else None
    subs = access.get_subscriptions_by_account(account_id) if account_id else []
    # A monthly subscription in the price's currency, with a payment to come.
    fits = [s for s in subs if s.is_live and s.NextPaymentDate and s.Currency == price.Currency
            and cadence_of(s).is_monthly]
    if not fits:
        return [f"usage billing: {CUSTOMER_EMAIL} has no live monthly {price.Currency} subscription"]
    done = next((s for s in fits if s.MeteredPriceId == price.PriceId), None)
    if done is None:
        done = attach_metered_price(sorted(fits, key=lambda s: s.sub_id)[0], price.PriceId, actor=SEED_ACTOR)
    return [f"usage billing: {CUSTOMER_EMAIL}'s {done.ProductName or done.SKU} ({done.sub_id}) bills "
            f"{price.Meter} at {price.PriceId} in arrears, next on {done.NextPaymentDate}"]
