"""A price's own tax behaviour (Stripe's ``tax_behavior``; docs/TAX.md "A price's tax
behaviour"): ``inclusive`` amounts include the tax, ``exclusive`` ones have it added,
``unspecified`` ones follow the seller's profile at each charge. The subscription copies
its price's, and every amount it is charged or shown comes from ``tax_terms``: the first
charge, the renewal the run takes and the estimate a page shows before it. The prices one
charge bills together, and the price a switch moves to, are taxed alike."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from types import SimpleNamespace

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from billing import access, batches
from billing.access.usage_billing import why_not_metered
from billing.actions import prices as price_actions
from billing.actions import subscriptions as subscribing
from billing.actions import switch as switch_actions
from billing.actions.seller import change_seller_profile
from billing.actions.switch import SwitchRefused
from billing.management.demo import vat_added
from billing.operations.outcomes import PaymentStatus
from billing.operations.payments import next_charge, take_payment
from billing.rules.price_choice import TAXED_OTHERWISE, choose_price, metered_prices_of
from billing.rules.price_objects import price_object
from billing.rules.pricing import BillingScheme, PriceTerms, Tier, TiersMode
from billing.rules.tax import Seller, TaxBehavior, includes_tax, stored_tax_behavior
from tests.builders import card, fresh, make_customer, make_user, receipts_of

pytestmark = pytest.mark.django_db

TODAY = date(2027, 3, 10)
EUR_20 = PriceTerms("EUR", unit_amount=Decimal(2000))
CALLS = PriceTerms("EUR", BillingScheme.TIERED, tiers_mode=TiersMode.GRADUATED, tiers=(Tier(None, Decimal(1)),))


@given(behavior=st.sampled_from([None, *TaxBehavior]), seller_default=st.booleans(),
       amount=st.integers(min_value=1, max_value=10**9))
def test_a_behaviour_includes_the_tax_or_adds_it_and_unspecified_follows_the_seller(
        behavior: str | None, seller_default: bool, amount: int) -> None:
    italy = Seller(country="IT", vat_number="IT00743110157", prices_include_tax=seller_default)
    sub = SimpleNamespace(TaxBehavior=stored_tax_behavior(behavior), BillingCountry="IT", VatNumber=None)
    line = access.tax_terms(sub, italy).line(amount, TODAY)
    include = {TaxBehavior.INCLUSIVE: True, TaxBehavior.EXCLUSIVE: False}.get(behavior, seller_default)
    assert includes_tax(stored_tax_behavior(behavior), seller_default) is include
    # the amount is what the customer pays when it includes the tax, the net when not
    assert (line.gross if include else line.net) == amount
    assert line.net + line.tax == line.gross


def test_stored_as_null_when_unspecified_and_refused_when_unknown() -> None:
    assert [stored_tax_behavior(b) for b in (None, "", "unspecified", "inclusive", "exclusive")] == [
        None, None, None, "inclusive", "exclusive"]
    with pytest.raises(ValueError):
        stored_tax_behavior("included")


def test_a_price_keeps_its_behaviour_and_shows_it_in_stripe_words(moto_table) -> None:
    access.create_product("BOOKS", "Bookkeeping", 2000, "EUR")
    added = price_actions.add_price("BOOKS", EUR_20, actor="t", tax_behavior="exclusive")
    plain = price_actions.add_price("BOOKS", EUR_20, actor="t")
    assert (access.get_price(added.PriceId).TaxBehavior, access.get_price(plain.PriceId).TaxBehavior) == (
        "exclusive", None)
    assert (price_object(added)["tax_behavior"], price_object(plain)["tax_behavior"]) == ("exclusive", "unspecified")
    assert price_object(access.default_price(access.get_product("BOOKS")))["tax_behavior"] == "unspecified"
    with pytest.raises(ValueError, match="inclusive, exclusive or unspecified"):
        price_actions.add_price("BOOKS", EUR_20, actor="t", tax_behavior="sometimes")


def italian_seller(*, prices_include_tax: bool) -> None:
    """An Italian seller (22% for a buyer of no other country) whose catalogue prices include
    VAT or have it added."""
    change_seller_profile(access.get_seller_profile(), legal_name="Rpay S.r.l.", address="Via Roma 1",
                          country="IT", vat_number="IT00743110157", oss_registered=True, under_threshold=False,
                          prices_include_tax=prices_include_tax, registrations={}, actor="test")


def _subscribed(price_terms_behavior: str | None, email: str = "buyer@example.com"):
    """A customer subscribed on ``TODAY`` to a €20.00 monthly price of that behaviour."""
    product = access.get_product("BOOKS") or access.create_product("BOOKS", "Bookkeeping", 2000, "EUR")
    price = price_actions.add_price("BOOKS", EUR_20, actor="t", tax_behavior=price_terms_behavior)
    customer = make_customer(email)
    account = access.get_account(customer.account_id)
    started = subscribing.subscribe_to_price(account, product, choose_price(price, product), payment_day=10,
                                             card=card(), today=TODAY, actor=email)
    assert started.started
    return fresh(started.sub), price


@pytest.mark.parametrize(("behavior", "seller_includes", "charged", "net", "tax"), [
    ("exclusive", True, 2440, 2000, 440),  # €20.00 + 22% Italian VAT, though the seller's prices include it
    ("inclusive", False, 2000, 1639, 361),  # the tax inside €20.00, though the seller's prices exclude it
    (None, True, 2000, 1639, 361),  # as the seller's profile says
    (None, False, 2440, 2000, 440),
], ids=["exclusive", "inclusive", "unspecified-included", "unspecified-added"])
def test_the_first_charge_the_estimate_and_the_renewal_follow_the_price(
        moto_table, behavior: str | None, seller_includes: bool, charged: int, net: int, tax: int) -> None:
    italian_seller(prices_include_tax=seller_includes)
    with time_machine.travel(TODAY, tick=False):
        sub, _price = _subscribed(behavior)
    assert sub.TaxBehavior == behavior
    [first] = receipts_of(sub)
    assert (int(first.ProcessedAmount), int(first.Net), int(first.Tax), bool(first.PricesIncludeTax)) == (
        charged, net, tax, behavior == "inclusive" or (behavior is None and seller_includes))
    # the estimate a page and the reminder show is what the run charges on the day
    estimate = next_charge(sub)
    assert (estimate.date, estimate.amount) == (date(2027, 4, 10), charged)
    with time_machine.travel(date(2027, 4, 10), tick=False):
        out = take_payment(fresh(sub), run_date=date(2027, 4, 10))
    assert (out.status, out.amount) == (PaymentStatus.PAID, estimate.amount)
    renewal = receipts_of(sub)[-1]
    assert (int(renewal.ProcessedAmount), int(renewal.Net), int(renewal.Tax)) == (charged, net, tax)


@pytest.mark.local_engine
def test_the_batches_read_it_from_the_due_indexes(local_table) -> None:
    """On DynamoDB Local, whose indexes project only what the models list: the reminder run
    (GSI-1) announces, and the payment run (GSI-2) charges, the VAT a price adds."""
    italian_seller(prices_include_tax=True)
    with time_machine.travel(TODAY, tick=False):
        sub, _ = _subscribed("exclusive")
    reminded = date.fromisoformat(sub.NextReminderDate)
    mail.outbox.clear()
    with time_machine.travel(reminded, tick=False):
        assert batches.run_reminders(run_date=reminded, workers=1).counts["sent"] == 1
    [reminder] = mail.outbox
    assert "24.40" in reminder.body and "20.00" not in reminder.body
    with time_machine.travel(date(2027, 4, 10), tick=False):
        assert batches.run_payments(run_date=date(2027, 4, 10), workers=1).counts["paid"] == 1
    assert [int(r.ProcessedAmount) for r in receipts_of(sub)] == [2440, 2440]


def test_a_seller_changing_its_profile_moves_only_the_unspecified_prices(moto_table) -> None:
    italian_seller(prices_include_tax=True)
    with time_machine.travel(TODAY, tick=False):
        added, _ = _subscribed("exclusive", "added@example.com")
        follows, _ = _subscribed(None, "follows@example.com")
    assert (next_charge(added).amount, next_charge(follows).amount) == (2440, 2000)
    italian_seller(prices_include_tax=False)
    assert (next_charge(fresh(added)).amount, next_charge(fresh(follows)).amount) == (2440, 2440)


def test_the_metered_prices_billed_beside_a_price_are_taxed_alike(moto_table) -> None:
    access.create_product("BOOKS", "Bookkeeping", 2000, "EUR")
    alike = price_actions.add_price("BOOKS", CALLS, actor="t", meter="calls", tax_behavior="exclusive")
    other = price_actions.add_price("BOOKS", CALLS, actor="t", meter="pages")
    prices = access.list_prices("BOOKS")
    assert [p.PriceId for p in metered_prices_of(prices, "EUR", "month", 1, "exclusive")] == [alike.PriceId]
    assert [p.PriceId for p in metered_prices_of(prices, "EUR", "month", 1, None)] == [other.PriceId]
    with time_machine.travel(TODAY, tick=False):
        sub, _ = _subscribed("exclusive")
    assert why_not_metered(sub, alike, alike.PriceId, set()) is None
    assert why_not_metered(sub, other, other.PriceId, set()) == (
        f"{other.PriceId}'s tax_behavior is unspecified, the subscription's exclusive")


def test_a_switch_keeps_how_the_tax_is_charged(moto_table) -> None:
    with time_machine.travel(TODAY, tick=False):
        sub, price = _subscribed("exclusive")
        yearly = price_actions.add_price("BOOKS", PriceTerms("EUR", unit_amount=Decimal(20000), interval="year"),
                                         actor="t", tax_behavior="exclusive")
        included = price_actions.add_price("BOOKS", PriceTerms("EUR", unit_amount=Decimal(3000)), actor="t",
                                           tax_behavior="inclusive")
        offered = {t.price_id for t in switch_actions.targets(sub)}
        assert yearly.PriceId in offered and included.PriceId not in offered
        # nor the product's default price, which follows the seller's profile
        assert not any(t.price_id.startswith("price_default_") for t in switch_actions.targets(sub))
        for refused in (included.PriceId, "BOOKS"):
            with pytest.raises(SwitchRefused) as why:
                switch_actions.quote(sub, refused, today=TODAY)
            assert str(why.value) == str(TAXED_OTHERWISE)
        quote = switch_actions.quote(sub, yearly.PriceId, today=TODAY)
        done = switch_actions.switch(sub, yearly.PriceId, today=TODAY, actor="t", expected=quote)
    assert fresh(done.sub).TaxBehavior == "exclusive"
    # the upgrade's charge adds the VAT to the price's days less the credit, as the quote said
    assert done.charged == access.tax_terms(sub).line(quote.due_now, TODAY).gross > quote.due_now


def test_staff_add_a_price_with_vat_added_and_see_it_listed(client, moto_table) -> None:
    access.create_product("BOOKS", "Bookkeeping", 2000, "EUR")
    client.force_login(make_user("finance@rpay.localhost", staff=True, roles=["finance"]))
    answer = client.post(reverse("admin:staff_price_add", args=["BOOKS"]), {
        "model": "per_unit", "currency": "EUR", "unit_price": "20.00", "interval": "month", "interval_count": 1,
        "tax_behavior": "exclusive"})
    assert answer.status_code == 302, answer.content
    [price] = [p for p in access.list_prices("BOOKS") if not p.PriceId.startswith("price_default_")]
    assert price.TaxBehavior == "exclusive"
    page = client.get(reverse("admin:staff_prices")).content.decode()
    assert "Added to the amounts" in page and "As the seller&#x27;s profile says" in page


def test_staff_see_a_subscriptions_vat_beside_its_price(client, moto_table) -> None:
    with time_machine.travel(TODAY, tick=False):
        added, _ = _subscribed("exclusive", "added@example.com")
        follows, _ = _subscribed(None, "follows@example.com")
    client.force_login(make_user("support@rpay.localhost", staff=True))
    page = client.get(reverse("admin:staff_account", args=[added.account_id])).content.decode()
    assert "€20.00 a month" in page and "VAT: Added to the amounts" in page
    page = client.get(reverse("admin:staff_account", args=[follows.account_id])).content.decode()
    assert "€20.00 a month" in page and "VAT: " not in page


def test_the_demo_charges_a_price_with_vat_added_once(moto_table) -> None:
    italian_seller(prices_include_tax=True)  # the demo's seller
    with time_machine.travel(TODAY, tick=False):
        [line] = vat_added.seed(TODAY)
        assert line.endswith("24.40 EUR charged")
        assert vat_added.seed(TODAY)[0].startswith(f"VAT added: {vat_added.EMAIL} has BOOKKEEPING")
    user = get_user_model().objects.get(username=vat_added.EMAIL)
    [sub] = access.get_subscriptions_by_account(access.get_account_id_for_user(user.pk))
    [receipt] = receipts_of(sub)
    assert (int(receipt.Net), int(receipt.Tax), int(receipt.ProcessedAmount)) == (2000, 440, 2440)


@pytest.mark.parametrize("behavior", ["exclusive", "inclusive"])
def test_a_charge_recorded_without_its_tax_behaviour_follows_its_price(moto_table, behavior: str) -> None:
    """A charge whose metadata does not say whether its amount includes the tax (one made
    before the metadata carried it, recorded now by the reconciliation): its invoice follows
    its subscription's price, not the seller's profile."""
    sub = SimpleNamespace(TaxBehavior=behavior, BillingCountry="IT", VatNumber=None)
    assert access.seller_tax().prices_include_tax  # the profile includes it: "exclusive" says otherwise
    invoiced = access.invoice_tax(sub, amount=1220, on=TODAY, metadata={})
    assert invoiced.prices_include_tax is (behavior == "inclusive")
