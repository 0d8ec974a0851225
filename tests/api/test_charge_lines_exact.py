"""The upcoming payment's lines, field by field (billing/operations/charge_lines.py): the
fixed fee's line (its product, days, price, seats, amount and tax), then a line a tier of
each metered price (its words, units, unit amount, flat amount, package size and its share
of the tax), the lines summing to what is charged, whether prices include VAT or it is
added on top; a meter of which nothing was used keeps one line of nothing; a charge
projected without tax terms is itemised untaxed; usage whose tiers are not what was
charged is a line a meter."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from decimal import Decimal

import pytest
import time_machine

from billing import access
from billing.access.coupons import coupon_attributes
from billing.access.usage_billing import attach_metered_price
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.actions.seller import change_seller_profile
from billing.models import MeterAggregation, Price, Subscription
from billing.operations.charge_lines import ChargeLine, charge_lines, upcoming_object
from billing.operations.metered import metered_usages, priced_usage
from billing.operations.payments import next_charge
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from billing.rules.projection import ComingCharge, owed_charge, with_usage
from tests.api.conftest import ApiClient
from tests.api.test_api_several_metered_prices import send_events, two_meters
from tests.api.test_api_usage_billing import LAST_EVENTS, D
from tests.builders import card, fresh, make_account, make_subscription, prices_exclude_vat

pytestmark = pytest.mark.django_db

FEE_DAYS = "2027-03-15 to 2027-04-14"  # the period D pays in advance
USED_DAYS = "2027-02-15 to 2027-03-15 (exclusive)"  # the usage D bills in arrears
# the first 1,000 calls free, then 0.2 cents a call plus $1.00 for the tier
CALLS = PriceTerms("USD", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED,
                   tiers=(Tier(1000, Decimal(0)), Tier(None, Decimal("0.2"), flat_amount=100)))
STORAGE = PriceTerms("USD", unit_amount=Decimal(50), package_size=10)  # 50 cents a package of 10 GB


def _due_on_d(sku: str) -> Subscription:
    """A monthly subscription to ``sku`` at 9.99, paid through 14 March, due on D, with a card."""
    sub = make_subscription(make_account(), sku=sku, payment_day=15, amount=999, today=date(2027, 2, 15))
    sub = access.set_schedule(sub, next_payment=D, last_payment=date(2027, 2, 15), next_reminder=date(2027, 3, 8),
                              last_reminder=date(2027, 2, 8))
    return access.replace_card(fresh(sub), card(), actor="test")


def test_a_fixed_price_s_upcoming_payment_is_its_one_line_of_seats_and_tax(read_api: ApiClient) -> None:
    """The whole upcoming object of a fixed price's 3 seats with VAT on top: the product's
    name (not its SKU) and the days paid for, the price, the seats, the amount before tax
    and the tax, no usage fields; the subscription, its currency and its period."""
    prices_exclude_vat()
    access.create_product("NEWS-DAILY", "News", 999, "USD")
    price = price_actions.add_price("NEWS-DAILY", PriceTerms("USD", unit_amount=Decimal(333)), actor="test")
    sub = _due_on_d("NEWS-DAILY")
    sub.PriceId, sub.Quantity, sub.UnitAmount = price.PriceId, 3, 333
    sub.save()
    with time_machine.travel(LAST_EVENTS, tick=False):
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    assert shown == {
        "object": "upcoming_payment", "subscription": sub.sub_id, "amount_due": 999 + 220, "currency": "USD",
        "date": "2027-03-15", "period_start": "2027-03-15", "period_end": "2027-04-14",
        "lines": [{"description": f"News-Daily, {FEE_DAYS}", "price": price.PriceId, "meter": None, "quantity": 3,
                   "amount": 999, "tax": 220,  # 22% of 9.99
                   "unit_amount_decimal": None, "flat_amount": None, "package_size": None}]}


def test_each_tier_of_each_meter_is_a_line_with_its_words_units_and_share_of_the_tax(
        read_api: ApiClient, write_api: ApiClient) -> None:
    """Half off the fee (a coupon, which leaves the usage whole), VAT on top: the fee's line
    is taxed alone (22% of 4.99); the calls' tiers, worded with the price's unit ("call"),
    the second with its flat amount, and the storage's packages share the rest of the tax;
    each usage line carries its unit amount, flat amount and package size."""
    prices_exclude_vat()
    meter_actions.add_meter("api_calls", "API calls", MeterAggregation.SUM, actor="test")
    meter_actions.add_meter("storage_gb", "Storage", MeterAggregation.MAX, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    calls = price_actions.add_price("API", CALLS, actor="test", unit_label="call", meter="api_calls")
    storage = price_actions.add_price("API", STORAGE, actor="test", meter="storage_gb")
    sub = _due_on_d("API")
    for name, value in coupon_attributes(access.create_coupon("HALF", actor="staff", percent_off=50,
                                                              duration="forever")).items():
        setattr(sub, name, value)
    sub.save()
    sub = attach_metered_price(fresh(sub), calls.PriceId, actor="test")
    sub = attach_metered_price(sub, storage.PriceId, actor="test")
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)  # 1,235 calls and 30 GB
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    used = {"price": calls.PriceId, "meter": "api_calls", "package_size": None}
    assert shown["lines"] == [
        {"description": f"Api, {FEE_DAYS}", "price": None, "meter": None, "quantity": 1, "amount": 499, "tax": 110,
         "unit_amount_decimal": None, "flat_amount": None, "package_size": None},
        {"description": f"api_calls, {USED_DAYS}: 1,000 calls free", **used, "quantity": 1000, "amount": 0,
         "tax": 0, "unit_amount_decimal": "0", "flat_amount": 0},
        {"description": f"api_calls, {USED_DAYS}: 235 calls × $0.002 plus $1.00", **used, "quantity": 235,
         "amount": 47 + 100, "tax": 32, "unit_amount_decimal": "0.2", "flat_amount": 100},
        {"description": f"storage_gb, {USED_DAYS}: 3 packages of 10 units × $0.50", "price": storage.PriceId,
         "meter": "storage_gb", "quantity": 3, "amount": 150, "tax": 33, "unit_amount_decimal": "50",
         "flat_amount": 0, "package_size": 10}]
    # 22% of 4.99 + 1.47 + 1.50 = 7.96: 1.75, of which the fee's 1.10
    assert shown["amount_due"] == 796 + 175 == sum(line["amount"] + line["tax"] for line in shown["lines"])


def test_with_prices_including_vat_each_line_s_price_is_its_amount_and_its_tax(
        read_api: ApiClient, write_api: ApiClient) -> None:
    """An Italian seller whose prices include VAT: the fee's 9.99 holds its 22% (1.80),
    each tier's price holds its share of the usage's (2.43 in 13.46, less the fee's), the
    lines' amounts and taxes summing to the prices."""
    change_seller_profile(access.get_seller_profile(), legal_name="Rpay S.r.l.", address="Via Roma 1",
                          country="IT", vat_number="IT00743110157", oss_registered=True, under_threshold=False,
                          prices_include_tax=True, registrations={}, actor="test")
    sub, _, _ = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)  # 1,235 calls and 30 GB
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    assert [(line["quantity"], line["amount"], line["tax"]) for line in shown["lines"]] == [
        (1, 999 - 180, 180), (1000, 0, 0), (235, 47 - 9, 9), (30, 300 - 54, 54)]
    assert shown["amount_due"] == 999 + 47 + 300


def test_a_meter_of_which_nothing_was_used_is_one_line_of_nothing_before_the_next_meter(
        read_api: ApiClient, write_api: ApiClient) -> None:
    """A Finnish seller whose prices exclude VAT (25.5%): no call made, the calls' graduated
    price entered no tier and is one line naming its meter and price at 0, with no unit
    amount; the storage's line after it takes the usage's whole tax."""
    change_seller_profile(access.get_seller_profile(), legal_name="Rpay Oy", address="Mannerheimintie 1",
                          country="FI", vat_number="FI01120389", oss_registered=True, under_threshold=False,
                          prices_include_tax=False, registrations={}, actor="test")
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub, [("storage_gb", date(2027, 3, 1), 30)])
        shown = read_api.get(f"/subscriptions/{sub.sub_id}/upcoming").json()
    nothing = {"unit_amount_decimal": None, "flat_amount": None, "package_size": None}
    assert shown["lines"] == [
        {"description": f"Api, {FEE_DAYS}", "price": None, "meter": None, "quantity": 1, "amount": 999,
         "tax": 255, **nothing},
        {"description": f"api_calls, {USED_DAYS}", "price": calls.PriceId, "meter": "api_calls", "quantity": 0,
         "amount": 0, "tax": 0, **nothing},
        {"description": f"storage_gb, {USED_DAYS}: 30 units × $0.10", "price": storage.PriceId,
         "meter": "storage_gb", "quantity": 30, "amount": 300, "tax": 76, "unit_amount_decimal": "10",
         "flat_amount": 0, "package_size": None}]
    assert shown["amount_due"] == 999 + 300 + 331  # 25.5% of 12.99


def test_a_charge_projected_without_tax_terms_is_itemised_untaxed(write_api: ApiClient) -> None:
    """A charge projected without the seller's terms (no tax line): the fee after nothing
    off, then each tier at its amount, every line's tax 0, summing to the charge; without
    usage, the fee's one line at what is charged."""
    prices_exclude_vat()
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        fee_only = owed_charge(fresh(sub))
        charge = with_usage(fee_only, metered_usages(fresh(sub), fee_only, close=False))
    assert fee_only.tax_line is None and charge.tax_line is None
    fee = ChargeLine(f"Api, {FEE_DAYS}", None, None, 1, 999, 0)
    assert charge_lines(fresh(sub), fee_only) == [fee]
    lines = charge_lines(fresh(sub), charge)
    assert lines == [
        fee,
        ChargeLine(f"api_calls, {USED_DAYS}: 1,000 units free", calls.PriceId, "api_calls", 1000, 0, 0, "0", 0, None),
        ChargeLine(f"api_calls, {USED_DAYS}: 235 units × $0.002", calls.PriceId, "api_calls", 235, 47, 0, "0.2", 0,
                   None),
        ChargeLine(f"storage_gb, {USED_DAYS}: 30 units × $0.10", storage.PriceId, "storage_gb", 30, 300, 0, "10", 0,
                   None)]
    assert sum(line.amount for line in lines) == charge.amount == 999 + 47 + 300
    assert upcoming_object(fresh(sub), charge)["amount_due"] == charge.amount


def _charged_otherwise(write_api: ApiClient) -> tuple[Subscription, ComingCharge, Price, Price]:
    """A payment due on D, VAT on top, whose usage (1,235 calls and 30 GB) carries tiers of
    other quantities than it was charged for (1,300 calls, 20 GB): the subscription, the
    charge, and its two prices."""
    prices_exclude_vat()
    sub, calls, storage = two_meters()
    with time_machine.travel(LAST_EVENTS, tick=False):
        send_events(write_api, sub)
        charge = next_charge(fresh(sub))
    usages = tuple(replace(u, parts=priced_usage(price, u.start, u.end, quantity).parts)
                   for u, price, quantity in zip(charge.usages, (calls, storage), (1300, 20), strict=True))
    return sub, replace(charge, usages=usages), calls, storage


def test_usage_whose_tiers_are_not_what_was_charged_is_a_line_a_meter_its_tax_shared(write_api: ApiClient) -> None:
    """Tiers that do not add up to the amount charged are not shown: a line a metered
    price at its quantity and amount, the usage's tax (22% of 13.46 less the fee's 2.20)
    shared over them in proportion to their amounts, the lines summing to the charge."""
    sub, charge, calls, storage = _charged_otherwise(write_api)
    lines = charge_lines(fresh(sub), charge, access.tax_terms(fresh(sub)))
    assert lines == [ChargeLine(f"Api, {FEE_DAYS}", None, None, 1, 999, 220),
                     ChargeLine(f"api_calls, {USED_DAYS}", calls.PriceId, "api_calls", 1235, 47, 10),
                     ChargeLine(f"storage_gb, {USED_DAYS}", storage.PriceId, "storage_gb", 30, 300, 66)]
    assert sum(line.amount + line.tax for line in lines) == charge.amount == 1346 + 296


def test_usage_that_is_not_its_charge_s_taxed_usage_is_each_meter_s_amount_untaxed(write_api: ApiClient) -> None:
    """A charge whose tax line is not its fee and usage's (1.00 more taxed than they make):
    neither tiers nor a share of the tax can be told, each meter's line is its amount
    alone, without tax."""
    sub, charge, calls, storage = _charged_otherwise(write_api)
    terms = access.tax_terms(fresh(sub))
    more = replace(charge, tax_line=terms.line(charge.list_price - charge.discount + charge.usage_amount + 100, D))
    assert charge_lines(fresh(sub), more, terms) == [
        ChargeLine(f"Api, {FEE_DAYS}", None, None, 1, 999, 220),
        ChargeLine(f"api_calls, {USED_DAYS}", calls.PriceId, "api_calls", 1235, 47, 0),
        ChargeLine(f"storage_gb, {USED_DAYS}", storage.PriceId, "storage_gb", 30, 300, 0)]


def test_a_taxed_charge_with_usage_is_itemised_only_with_its_tax_terms(write_api: ApiClient) -> None:
    """The fee's tax cannot be told from the whole's without the terms it was taxed by."""
    sub, charge, _, _ = _charged_otherwise(write_api)
    with pytest.raises(AssertionError, match="^a charge with usage is itemised with its tax terms$"):
        charge_lines(fresh(sub), charge)
