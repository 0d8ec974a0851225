"""A switch when the seller's prices exclude VAT: the credit for the unused paid days and
the new price are counted on one footing, before tax (each receipt's net share), and the
tax is added once, to what is charged now or to the excess credit refunded now, as those
days were charged (docs/MONEY.md, "Switching price or cadence"). Counting the credit with
its tax against a price before tax under-charged an upgrade by the credit's tax and
refunded the new period's tax with an excess credit."""

from __future__ import annotations

import re
from datetime import date, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from billing import access
from billing.actions import prices as price_actions
from billing.actions import subscriptions as subscribing
from billing.actions import switch
from billing.models import Receipt
from billing.rules.invoice_tax import refund_share
from billing.rules.lifecycle import unused_share
from billing.rules.pricing import PriceTerms
from billing.rules.schedule import period_amount
from billing.rules.switch import net_left, unused_credit
from core.money import format_with_code, format_with_symbol
from tests.billing.test_switch_prices import catalog, subscribed, switch_charges
from tests.builders import PASSWORD, card, fresh, make_customer, make_user, prices_exclude_vat, receipts_of

pytestmark = pytest.mark.django_db(databases=[])

MADE, MID = date(2027, 3, 10), date(2027, 3, 25)


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def quarter_totals(quarter: str = "2027Q1") -> tuple[int, int]:
    """The tax ledger's net and tax of the quarter, every country, rate and shard summed."""
    items = [t for t in access.tax_totals(quarter) if not t.is_reverse_charge_sales]
    return sum(int(t.Net) for t in items), sum(int(t.Tax) for t in items)


def test_the_excess_credit_of_a_switch_is_refunded_with_the_tax_it_was_charged(moto_table) -> None:
    prices_exclude_vat()
    access.create_product("BIG", "Big plan", 10000, "EUR")
    access.create_product("SMALL", "Small plan", 100, "EUR")
    yearly = price_actions.add_price("SMALL", PriceTerms("EUR", unit_amount=Decimal(1200), interval="year"),
                                     actor="test", nickname="Yearly")
    with at(MADE):
        sub = subscribing.subscribe(access.create_account("vat-switch@example.com"), sku="BIG", product_name="Big plan",
                                    payment_day=10, amount=10000, currency="EUR", card=card(), today=MADE,
                                    actor="customer").sub
    [first] = receipts_of(sub)
    assert first.ProcessedAmount == 12200  # 100.00 + 22% VAT
    with at(MID):
        q = switch.quote(fresh(sub), yearly.PriceId, today=MID)
        # 16 of March's 31 days unused: 51.61 of credit against a year at 12.00, before tax.
        assert (q.credit, q.refund_now) == (5161, 3961)
        assert switch.refunded_now(fresh(sub), q) == 4832  # 39.61 + 22% VAT, as those days were charged
        done = switch.switch(fresh(sub), yearly.PriceId, today=MID, actor="customer", expected=q)
    assert done.refunded == 4832
    [first] = [r for r in receipts_of(sub) if r.SK == first.SK]
    assert first.RefundedAmount == 4832
    # Its credit note takes back the net the quote refunded and the tax on it; the ledger agrees.
    [note] = access.credit_notes_of_receipt(first)
    assert (note.Net, note.Tax, note.Gross) == (-3961, -871, -4832)
    assert quarter_totals() == (10000 - 3961, 2200 - 871)



# --- an upgrade: the new price less the credit, both before tax, then the tax once --------------

@pytest.mark.django_db
def test_monthly_to_yearly_with_prices_before_vat_charges_the_difference_plus_its_vat_once(moto_table) -> None:
    prices_exclude_vat()
    yearly = catalog("EUR", 1000, 12000)
    customer = make_customer("vat-up@example.com")
    sub = subscribed(access.get_account(customer.account_id))
    [first] = receipts_of(sub)
    assert (first.Net, first.Tax, first.ProcessedAmount) == (1000, 220, 1220)
    url = f"/subscriptions/{sub.sub_id}/switch/"
    with at(MID):
        q = switch.quote(fresh(sub), yearly, today=MID)
        net_credit = period_amount(1000, 10, MID, date(2027, 4, 9))  # 16 of March's 31 days, before VAT
        assert (q.charge, q.credit, q.due_now) == (12000, net_credit, 12000 - net_credit) == (12000, 516, 11484)
        due = switch.charged_now(fresh(sub), q)
        assert due == 11484 + 2526  # 114.84 + 22% VAT, once (counting the credit's VAT would charge 138.71)
        assert switch.refunded_now(fresh(sub), q) == 0
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        page = customer.client.post(url, {"sku": yearly})
        html = page.content.decode()
        assert _shown(html, "due-now") == format_with_symbol(due, "EUR")
        assert _shown(html, "tax-added") == "+" + format_with_symbol(2526, "EUR")  # the lines add up
        assert _shown(html, "credit") == "−" + format_with_symbol(516, "EUR")
        done = customer.client.post(url, {"sku": yearly, "step": "confirm", "upgrade": "1", "charge": q.charge,
                                          "credit": q.credit}, follow=True)
    assert done.status_code == 200
    [charge] = switch_charges(sub)
    assert charge["amount"] == due == 14010
    # The switch's invoice: its lines (the new price, the credit) before VAT, its net their difference.
    [up] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert (up.SwitchCharge, up.SwitchCredit, up.Net, up.Tax, up.ProcessedAmount) == (12000, 516, 11484, 2526, 14010)
    assert up.Net == up.SwitchCharge - up.SwitchCredit and up.PricesIncludeTax is False
    assert quarter_totals() == (1000 + 11484, 220 + 2526)


@pytest.mark.django_db
def test_staff_see_and_charge_the_same_amount_with_prices_before_vat(moto_table, client) -> None:
    prices_exclude_vat()
    yearly = catalog("EUR", 1000, 12000)
    account = access.create_account("vat-staff@example.com")
    sub = subscribed(account)
    url = reverse("admin:staff_switch", args=[account.account_id, sub.sub_id])
    with at(MID):
        due = switch.charged_now(fresh(sub), switch.quote(fresh(sub), yearly, today=MID))
        client.force_login(make_user("vat-money@example.com", staff=True, money=True))
        shown = client.post(url, {"sku": yearly})
        assert f"{format_with_code(due, 'EUR')} is charged" in shown.content.decode()
        client.post(url, dict(shown.context["form"].initial.items()), follow=True)
    [charge] = switch_charges(sub)
    assert charge["amount"] == due == 14010


@pytest.mark.django_db
def test_the_pages_show_the_excess_credit_s_refund_as_refunded(moto_table, client) -> None:
    """A dear month for a cheap year: the customer's confirm page and staff's question say
    the refund ``refunded_now`` gives (before-VAT credit less the price, plus its VAT)."""
    prices_exclude_vat()
    access.create_product("BIG", "Big plan", 10000, "EUR")
    access.create_product("SMALL", "Small plan", 100, "EUR")
    yearly = price_actions.add_price("SMALL", PriceTerms("EUR", unit_amount=Decimal(1200), interval="year"),
                                     actor="test", nickname="Yearly").PriceId
    customer = make_customer("vat-refund@example.com")
    with at(MADE):
        sub = subscribing.subscribe(access.get_account(customer.account_id), sku="BIG", product_name="Big plan",
                                    payment_day=10, amount=10000, currency="EUR", card=card(), today=MADE,
                                    actor="customer").sub
    with at(MID):
        assert switch.refunded_now(fresh(sub), switch.quote(fresh(sub), yearly, today=MID)) == 4832
        assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302
        html = customer.client.post(f"/subscriptions/{sub.sub_id}/switch/", {"sku": yearly}).content.decode()
        refund = re.search(r'data-testid="refund-now">([^<]+)<', html).group(1)
        assert f"{format_with_symbol(4832, 'EUR')} is refunded" in refund
        client.force_login(make_user("vat-money2@example.com", staff=True, money=True))
        question = client.post(reverse("admin:staff_switch", args=[sub.account_id, sub.sub_id]),
                               {"sku": yearly}).content.decode()
        assert f"{format_with_code(4832, 'EUR')} is refunded" in question


# --- the rule: a receipt's credit before tax -----------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(net=st.integers(1, 1_000_000), rate=st.sampled_from([0, 10, 19, 22, 25]), days=st.integers(1, 366),
       into=st.integers(0, 366), refunded=st.floats(0, 1))
def test_a_receipt_s_credit_before_tax_is_its_net_share_within_what_is_left(net, rate, days, into,
                                                                               refunded) -> None:
    tax = (net * rate + 50) // 100
    gross = net + tax
    start = date(2027, 1, 1)
    end, today = start + timedelta(days=days - 1), start + timedelta(days=min(into, days - 1))
    back = int(gross * refunded)
    receipt = Receipt(sub_id="s1", PeriodStart=start.isoformat(), PeriodEnd=end.isoformat(),
                      BillingDate=start.isoformat(), ProcessedAmount=gross, RefundedAmount=back, Net=net, Tax=tax,
                      PricesIncludeTax=False)
    before, after = unused_credit(receipt, today, before_tax=True), unused_credit(receipt, today)
    assert 0 <= before <= after and before <= net_left(receipt) <= net
    # the net left is what the credit notes of the refunds left of the net
    assert net_left(receipt) == net - (refund_share(tax=tax, gross=gross, earlier=(), refund=back).net if back else 0)
    if not back:
        assert before == unused_share(net, start, end, today - timedelta(days=1))
    # refunded with its tax, it asks the receipt for no more than its unused share but a rounding
    assert before + (before * rate + 50) // 100 <= after + 2


def _shown(html: str, testid: str) -> str:
    return re.search(rf'data-testid="{testid}">([^<]+)<', html).group(1)
