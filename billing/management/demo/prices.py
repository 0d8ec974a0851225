"""The demo's prices (docs/PRICING.md): five products of their own, each with the prices
the price models show: a monthly and a yearly price, $10 a seat a month (1 to 50 seats),
a metered API price in graduated tiers (first 1,000 calls free, then $0.002 a call; meter
``api_calls``), a yearly plan at ¥120,000 and a support desk priced by volume tiers of
agents ($12.00 an agent up to 10 agents, $9.00 up to 50, $7.00 above). Safe to run twice: a product is made only if
absent, a price only if its product has no active price of that nickname."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from billing import access
from billing.actions import prices as price_actions
from billing.management.commands.seed_demo import SEED_ACTOR
from billing.rules.price_objects import price_words_of
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode

# SKUs of this part only (seed_demo's PRODUCTS are left as they are): (sku, name, monthly amount, currency).
PRODUCTS = [
    ("PHOTO-PRO", "Photo editor Pro", 1200, "USD"),
    ("TEAM-SEATS", "Team workspace", 1000, "USD"),
    ("API-ACCESS", "Developer API access", 500, "USD"),
    ("ARCHIVE-JP", "Photo archive (Japan)", 10000, "JPY"),
    ("SUPPORT-DESK", "Support desk", 1200, "USD"),
]
# (sku, nickname, terms, extra fields of the price)
PRICES: list[tuple[str, str, PriceTerms, dict]] = [
    ("PHOTO-PRO", "Yearly", PriceTerms("USD", unit_amount=Decimal(12000), interval="year"), {}),
    ("TEAM-SEATS", "Per seat", PriceTerms("USD", unit_amount=Decimal(1000)),
     {"unit_label": "seat", "min_quantity": 1, "max_quantity": 50}),
    ("API-ACCESS", "API calls", PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                                           tiers=(Tier(1000, Decimal(0)), Tier(None, Decimal("0.2")))),
     {"unit_label": "call", "meter": "api_calls"}),
    ("ARCHIVE-JP", "Yearly plan", PriceTerms("JPY", unit_amount=Decimal(120000), interval="year"), {}),
    ("SUPPORT-DESK", "By volume", PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.VOLUME,
                                             tiers=(Tier(10, Decimal(1200)), Tier(50, Decimal(900)),
                                                    Tier(None, Decimal(700)))),
     {"unit_label": "agent", "min_quantity": 1, "max_quantity": 500}),
]


def seed(today: date) -> list[str]:
    for sku, name, amount, currency in PRODUCTS:
        if access.get_product(sku) is None:
            access.create_product(sku, name, amount, currency)
    lines = []
    for sku, nickname, terms, extra in PRICES:
        found = [p for p in access.list_prices(sku) if p.Nickname == nickname]
        price = found[0] if found else price_actions.add_price(sku, terms, actor=SEED_ACTOR, nickname=nickname,
                                                               **extra)
        lines.append(f"prices: {sku} {price.PriceId}: {price_words_of(price)}")
    return lines
