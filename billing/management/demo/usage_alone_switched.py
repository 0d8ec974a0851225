"""The demo's plan switched to another price's usage alone (docs/USAGE.md "Usage alone"): a
demo customer of its own, ``plan-to-payg@example.com`` (log-in password as the demo
customer's), subscribed today through the portal's own action to the ``API-ACCESS`` plan
($5.00 a month, no metered price), then switched to the "API calls" metered price alone:
the month paid keeps the plan, and from the next payment there is no fee and the calls are
billed from that day on (the account page: "API calls …, from <day>"). Runs after the
prices and usage parts (its name sorts after theirs). Safe to run twice: a customer who has
switched already is left as it is."""

from __future__ import annotations

from datetime import date

from billing import access
from billing.actions import switch as switch_actions
from billing.management.demo._customers import demo_customer, subscribe_monthly
from billing.management.demo.usage_alone import api_calls_price

EMAIL = "plan-to-payg@example.com"
LABEL = "plan to usage alone"


def seed(today: date) -> list[str]:
    found = api_calls_price(LABEL)
    if isinstance(found, str):
        return [found]
    product, price, _meter = found
    account = demo_customer(EMAIL)
    if any(s.LastSwitchDate for s in access.get_subscriptions_by_account(account.account_id)):
        return [f"{LABEL}: {EMAIL} has switched already"]
    started = subscribe_monthly(account, product, today, EMAIL)
    if not started.started:
        return [f"{LABEL}: {EMAIL}'s {product.Name} did not start"]
    done = switch_actions.switch(started.sub, price.PriceId, today=today, actor=EMAIL, on_session=False)
    return [f"{LABEL}: {EMAIL}'s {product.Name} pays {price.Nickname} alone from "
            f"{done.quote.effective.isoformat()} (no fee from then)"]
