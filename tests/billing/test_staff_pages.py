"""The staff pages: look-up, the billing page, upcoming, batch runs and the catalogue."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.conf import settings
from django.urls import reverse

from billing import access, batches
from billing.models import BatchRun
from billing.rules.projection import coming_charges
from core.clock import billing_today
from core.money import format_with_code
from tests.builders import (
    make_account,
    make_customer_with_history,
    make_subscription,
    make_user,
    receipts_of,
    seed_due,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    client.force_login(make_user("clerk@rpay.localhost", staff=True))
    return client


@pytest.fixture
def customer(moto_table):
    return make_customer_with_history()


# --- look-up -------------------------------------------------------------------------------


def test_lookup_by_email_goes_to_the_billing_page(staff_client, customer, ddb_requests) -> None:
    response = staff_client.get(reverse("admin:staff_index"), {"email": "PAT@example.com"})
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:staff_account", args=[customer.account_id])
    assert "Scan" not in ddb_requests.ops


def test_lookup_by_account_and_subscription(staff_client, customer) -> None:
    url = reverse("admin:staff_index")
    response = staff_client.get(url, {"account_id": customer.account_id, "sub_id": customer.sub.sub_id})
    assert response["Location"].endswith(f"/{customer.account_id}/#sub-{customer.sub.sub_id}")
    assert staff_client.get(url, {"account_id": customer.account_id})["Location"].endswith(
        f"/{customer.account_id}/")


@pytest.mark.parametrize("query, error", [
    ({"sub_id": "abc"}, "No subscription with that id."),
    ({"email": "nobody@example.com"}, "No customer with a billing account has that e-mail or name."),
    ({"account_id": "nope"}, "No account with that id."),
    ({"account_id": "a#b"}, "Ids never contain"),
])
def test_lookup_errors(staff_client, customer, query, error) -> None:
    response = staff_client.get(reverse("admin:staff_index"), query)
    assert response.status_code == 200
    assert error in response.content.decode()


def test_lookup_page_explains_what_it_finds(staff_client, moto_table) -> None:
    # A subscription id alone is found (tests/billing/test_staff_lookup.py).
    html = staff_client.get(reverse("admin:staff_index")).content.decode()
    assert "part of an e-mail or a name" in html and "subscription id (on its own" in html


def test_user_admin_links_to_the_billing_page(staff_client, customer) -> None:
    from django.contrib.auth import get_user_model

    # The user admin needs the auth view permission; a superuser has it.
    boss = get_user_model().objects.create_superuser("boss@rpay.localhost", "boss@rpay.localhost", "pw")
    staff_client.force_login(boss)
    link = reverse("admin:staff_user_billing", args=[customer.user.pk])
    assert link in staff_client.get(reverse("admin:auth_user_change", args=[customer.user.pk])).content.decode()
    assert link in staff_client.get(reverse("admin:auth_user_changelist")).content.decode()
    response = staff_client.get(link)
    assert response["Location"] == reverse("admin:staff_account", args=[customer.account_id])
    # a user who never subscribed has no account
    assert staff_client.get(reverse("admin:staff_user_billing", args=[boss.pk])).status_code == 404


def test_admin_index_links_to_the_staff_pages(staff_client, moto_table) -> None:
    html = staff_client.get(reverse("admin:index")).content.decode()
    for name in ("staff_index", "staff_upcoming", "staff_runs", "staff_products"):
        assert reverse(f"admin:{name}") in html


# --- the billing page ----------------------------------------------------------------------


def test_billing_page_shows_everything(staff_client, customer) -> None:
    today = billing_today(settings.BILLING_TIMEZONE)
    # a receipt older than six months is not shown; one inside the window is
    old, _ = access.create_receipt(customer.sub, billing_date=today - timedelta(days=190), amount=999,
                                   currency="USD", charge_id="ch_old", retention_days=400)
    access.record_event(customer.account_id, actor="customer", action="portal.change_card")
    BatchRun(BatchRun.pk(kind="payments"), BatchRun.sk(started="2026-11-20T06:00:00+00:00", run_id="r1"),
             Kind="payments", RunId="r1", StartedAt="2026-11-20T06:00:00+00:00", FirstDate="2026-11-20",
             LastDate="2026-11-20", Outcome="completed", Counts={"charged": 3, "declined": 1},
             Failures=[{"sub_id": customer.past_due.sub_id, "reason": "card_declined"},
                       {"sub_id": "someone-else", "reason": "insufficient_funds"}]).save()

    html = staff_client.get(reverse("admin:staff_account", args=[customer.account_id])).content.decode()
    assert "pat@example.com" in html
    for sub in (customer.sub, customer.past_due, customer.cancelled):  # all statuses
        assert f'id="sub-{sub.sub_id}"' in html
    assert "cancelled" in html and "past_due" in html
    assert customer.receipt.BillingDate in html and "9.99 USD" in html
    # (the receipts table; its payment.succeeded event, M6, names it in the events)
    receipts_table = html.split('data-testid="receipts"', 1)[1].split("</table>", 1)[0]
    assert old.BillingDate not in receipts_table
    assert "portal.change_card" in html
    assert "card_declined" in html and "insufficient_funds" not in html  # only this account's failures
    assert "45.00 GBP" in html


# --- upcoming --------------------------------------------------------------------------------


def test_upcoming_counts_match_the_subscriptions(staff_client, moto_table, ddb_requests) -> None:
    today = billing_today(settings.BILLING_TIMEZONE)
    subs = []
    for n, (day, amount, currency) in enumerate([(3, 999, "USD"), (3, 1500, "USD"), (17, 299, "EUR"),
                                                 (28, 4500, "GBP"), (17, 1000, "EUR")]):
        account = make_account(f"c{n}@example.com")
        subs.append(make_subscription(account, payment_day=day, amount=amount, currency=currency, today=today))
    gone = make_subscription(make_account("gone@example.com"), payment_day=3, amount=5, today=today)
    access.cancel_subscription(gone)
    end = today + timedelta(days=29)
    # Every payment in the window, as the run will take each (rules.projection): one first
    # period owed today and its next payment a few days on are both counted.
    due = [(c.date.isoformat(), s.Currency, c.amount) for s in subs for c in coming_charges(s, 3) if c.date <= end]
    payments = Counter(day for day, _, _ in due)
    reminders = Counter(s.NextReminderDate for s in subs if s.NextReminderDate <= end.isoformat())
    assert sum(payments.values()) >= 3  # the test is about something

    ddb_requests.reset()
    response = staff_client.get(reverse("admin:staff_upcoming"))
    assert response.status_code == 200
    # 30 days x (one Query of GSI-2 + one COUNT Query of GSI-1), and the seller's tax
    # profile (the amounts' tax) once; nothing else, never a Scan
    assert ddb_requests.by_name() == {"Query": 60, "GetItem": 1}

    html = response.content.decode()
    for offset in range(30):
        day = (today + timedelta(days=offset)).isoformat()
        assert f'data-testid="payments-{day}">{payments.get(day, 0)}<' in html
        assert f'data-testid="reminders-{day}">{reminders.get(day, 0)}<' in html
    chart = response.context["chart"]
    assert sum(chart["payments"]) == sum(payments.values())
    # totals per currency, in minor units, never mixed; each payment at what the run will
    # charge (these first periods are prorated, after any coupon)
    for currency in ("USD", "EUR", "GBP"):
        expected = sum(amount for _, money, amount in due if money == currency)
        got = sum(chart["amounts"].get(currency, {"values": [0]})["values"])
        assert got == expected, currency
    assert "vendor/chartjs/chart.umd.js" in html and "cdn" not in html.lower()
    assert json.loads(html.split('id="upcoming-data" type="application/json">')[1].split("</script>")[0])


def test_upcoming_uses_count_queries_for_reminders(moto_table, ddb_requests) -> None:
    captured = []

    def capture(params, **kwargs) -> None:
        captured.append(params)

    from core.dynamo.engine import dynamodb_client

    dynamodb_client().meta.events.register("before-parameter-build.dynamodb.Query", capture, unique_id="cap")
    try:
        access.get_upcoming(billing_today(settings.BILLING_TIMEZONE), 2)
    finally:
        dynamodb_client().meta.events.unregister("before-parameter-build.dynamodb.Query", unique_id="cap")
    by_index = {(p["IndexName"], p.get("Select")) for p in captured}
    assert by_index == {("GSI-2", None), ("GSI-1", "COUNT")}


# --- batch runs --------------------------------------------------------------------------------


def test_batch_runs_page(staff_client, moto_table) -> None:
    BatchRun(BatchRun.pk(kind="reminders"), BatchRun.sk(started="2026-11-21T05:00:00+00:00", run_id="r9"),
             Kind="reminders", RunId="r9", StartedAt="2026-11-21T05:00:00+00:00", FirstDate="2026-11-21",
             LastDate="2026-11-21", Outcome="failed", Counts={"sent": 12},
             Failures=[{"sub_id": "s1", "reason": "smtp timeout"}]).save()
    html = staff_client.get(reverse("admin:staff_runs")).content.decode()
    assert "sent: 12" in html and "smtp timeout" in html and "failed" in html
    assert "s1: smtp timeout" in html and "{" not in html.split('data-testid="runs-reminders"')[1].split("</table>")[0]
    assert "No payments runs recorded yet." in html
    content = html.split('<div class="staff">')[1]  # the admin header has its own log-out form
    assert "<button" not in content and "<form" not in content  # no way to start a batch


# --- product catalogue -------------------------------------------------------------------------


def test_add_edit_retire_a_product(staff_client, moto_table) -> None:
    add = reverse("admin:staff_product_add")
    bad = staff_client.post(add, {"sku": "tea-box", "name": "Tea", "price": "12.999", "currency": "usd"})
    assert bad.status_code == 200 and access.get_product("TEA-BOX") is None
    response = staff_client.post(add, {"sku": "tea-box", "name": "Tea box", "price": "12.99", "currency": "usd"})
    assert response.status_code == 302
    product = access.get_product("TEA-BOX")
    assert product.PaymentAmount == 1299 and isinstance(product.PaymentAmount, int) and product.Currency == "USD"
    duplicate = staff_client.post(add, {"sku": "TEA-BOX", "name": "Again", "price": "1", "currency": "USD"})
    assert "already exists" in duplicate.content.decode()

    sub = make_subscription(make_account(), sku="TEA-BOX", amount=1299)
    edit = reverse("admin:staff_product_edit", args=["TEA-BOX"])
    assert 'value="12.99"' in staff_client.get(edit).content.decode()
    staff_client.post(edit, {"sku": "IGNORED", "name": "Tea box XL", "price": "0.10", "currency": "EUR"})
    product = access.get_product("TEA-BOX")
    assert (product.Name, product.PaymentAmount, product.Currency) == ("Tea box XL", 10, "EUR")
    assert access.get_product("IGNORED") is None  # the SKU is the key: it does not change

    retire = reverse("admin:staff_product_retire", args=["TEA-BOX"])
    assert "Retire product" in staff_client.get(retire).content.decode()
    assert access.get_product("TEA-BOX").Status == "active"  # GET only asks
    staff_client.post(retire)
    assert access.get_product("TEA-BOX").Status == "retired"
    assert "TEA-BOX" not in [p.SKU for p in access.list_products()]  # no new subscriptions
    kept = access.get_subscription(sub.account_id, sub.sub_id)
    assert kept.Status == "active" and kept.PaymentAmount == 1299  # existing ones go on
    html = staff_client.get(reverse("admin:staff_products")).content.decode()
    assert "Tea box XL" in html and "retired" in html
    actions = [e.Action for e in access.get_events_by_account("CATALOG")]
    assert sorted(actions) == ["staff.create_product", "staff.retire_product", "staff.update_product"]


def test_event_changes_show_only_what_changed() -> None:
    from billing.staff import event_changes

    assert event_changes({"Status": "active", "Day": 3}, {"Status": "cancelled", "Day": 3}) == [
        ("Status", "active", "cancelled")]
    assert event_changes(None, {"SKU": "X"}) == [("SKU", None, "X")]
    assert event_changes(None, None) == []


# --- the wallet on the billing page ---------------------------------------------


def test_the_billing_page_shows_the_wallet_and_which_subscriptions_use_each_card(
        staff_client, moto_table, ddb_requests) -> None:
    import re

    from core.pages import today
    from core.payments.gateway import get_gateway

    account = make_account("wally@example.com")
    visa = get_gateway().tokenize_card("4242424242424242", 8, 2031, "123")
    master = get_gateway().tokenize_card("5555555555554444", 3, 2029, "123")
    first = access.add_card(account.account_id, visa, None, actor="wally", make_default=True)
    second = access.add_card(account.account_id, master, None, actor="wally")
    subs = [access.create_subscription(
        account, sku=sku, payment_day=15, amount=999, currency="USD", card=token, today=today(),
        reminder_days_before=7, product_name=sku.title(), card_id=card.card_id)
        for sku, token, card in (("NEWS-DAILY", visa, first), ("GYM-CITY", visa, first))]
    access.cancel_subscription(access.create_subscription(
        account, sku="CLOUD-200", payment_day=3, amount=299, currency="USD", card=master,
        today=today(), reminder_days_before=7, card_id=second.card_id))
    ddb_requests.reset()
    response = staff_client.get(reverse("admin:staff_account", args=[account.account_id]))
    # the account and its cards in one Query (it was a GetItem of the account alone);
    # subscriptions, receipts, events and the payment runs: one Query each; the seller's
    # tax profile (the coming amounts' tax)
    assert ddb_requests.by_name() == {"Query": 5, "GetItem": 1}
    html = response.content.decode()
    wallet = re.search(r'<table data-testid="wallet">.*?</table>', html, re.S).group(0)
    row = re.search(rf'<tr data-testid="card-{first.card_id}">.*?</tr>', wallet, re.S).group(0)
    assert "Visa ****4242" in row and "Default" in row and "08/2031" in row
    assert all(f'href="#sub-{s.sub_id}"' in row for s in subs)
    row = re.search(rf'<tr data-testid="card-{second.card_id}">.*?</tr>', wallet, re.S).group(0)
    assert "****4444" in row and "03/2029" in row and "Default" not in row
    assert "No live subscription" in row  # its one subscription is cancelled


def test_a_billing_page_without_cards_says_so(staff_client, customer) -> None:
    html = staff_client.get(reverse("admin:staff_account", args=[customer.account_id])).content.decode()
    assert "No card in the wallet." in html


def test_upcoming_totals_leave_paused_subscriptions_out(staff_client, moto_table) -> None:
    # A paused subscription is charged nothing: an open pause leaves the due indexes, so
    # it is in no day's total; a dated pause is counted once, on the day it is due again.
    from billing.rules.lifecycle import pause_end

    today = billing_today(settings.BILLING_TIMEZONE)
    due = today + timedelta(days=7)
    kinds = {}
    for name in ("paying", "open", "dated"):
        sub = make_subscription(make_account(f"{name}@example.com"), payment_day=due.day, amount=1000,
                                currency="USD", today=today)
        kinds[name] = access.set_schedule(sub, next_payment=due, last_payment=today - timedelta(days=20),
                                          next_reminder=today + timedelta(days=1),
                                          last_reminder=today - timedelta(days=20))
    access.pause_subscription(kinds["open"], resume=None, today=today, reminder_days_before=7, actor="t")
    resume = pause_end(kinds["dated"], today, payments=1)
    access.pause_subscription(kinds["dated"], resume=resume, today=today, reminder_days_before=7, actor="t")
    assert resume > due
    chart = staff_client.get(reverse("admin:staff_upcoming")).context["chart"]
    days = [today + timedelta(days=n) for n in range(30)]
    by_day = dict(zip(days, chart["amounts"]["USD"]["values"], strict=True))
    assert by_day[due] == 1000  # the paying one only: the paused ones are not due that day
    assert sum(by_day.values()) == 1000 + (1000 if resume in by_day else 0)


def test_the_staff_header_links_coupons_and_the_shop(staff_client, moto_table) -> None:
    html = staff_client.get(reverse("admin:staff_runs")).content.decode()
    nav = html.split('<ul class="staff-nav">')[1].split("</ul>")[0]
    assert reverse("admin:staff_coupons") in nav and reverse("admin:shop_staff_index") in nav


def test_a_coupon_without_dates_says_no_end(staff_client, moto_table) -> None:
    from billing.rules.coupons import CouponDuration

    access.create_coupon("FOREVER5", percent_off=5, duration=CouponDuration.FOREVER, actor="x")
    access.create_coupon("JUNE", percent_off=5, duration=CouponDuration.ONCE, actor="x",
                         valid_from=date(2027, 6, 1))
    html = staff_client.get(reverse("admin:staff_coupons")).content.decode()
    row = html.split('data-testid="coupon-FOREVER5"')[1].split("</tr>")[0]
    assert "no end" in row and "…" not in row
    assert "2027-06-01 – no end" in html.split('data-testid="coupon-JUNE"')[1].split("</tr>")[0]


def test_a_payment_runs_charged_money_is_an_amount_in_its_currency(staff_client, moto_table) -> None:
    """The run records what it charged in minor units per currency; the page shows each as
    money, the same figure as the receipts the run wrote ("EUR: 299" was minor units)."""
    due = date(2027, 3, 15)
    subs = seed_due(2, due=due, amount=299, currency="EUR") + seed_due(1, due=due, prefix="j", amount=1500,
                                                                       currency="JPY")
    with time_machine.travel(datetime(2027, 3, 15, 12, tzinfo=UTC), tick=False):
        batches_summary = batches.run_payments(run_date=due, workers=1)
    html = staff_client.get(reverse("admin:staff_runs")).content.decode()  # the staff's session is today's
    assert batches_summary.counts["charged:EUR"] == 598
    paid = Counter()
    for sub in subs:
        for receipt in receipts_of(sub):
            paid[receipt.Currency] += int(receipt.ProcessedAmount)
    table = html.split('data-testid="runs-payments"')[1].split("</table>")[0]
    for currency, amount in paid.items():
        assert f"charged: {format_with_code(amount, currency)}" in table
    assert "EUR: 598" not in table and "charged:EUR" not in table



def test_the_staff_header_links_every_staff_page_its_user_may_open(client, moto_table) -> None:
    """Every page the admin's index lists (billing/staff/urls.py STAFF_PAGES) is in the
    header for a user with its permission: the API keys page was missing."""
    from billing.staff.urls import STAFF_PAGES

    user = make_user("all@rpay.localhost", staff=True)
    user.is_superuser = True
    user.save()
    client.force_login(user)
    html = client.get(reverse("admin:staff_runs")).content.decode()
    nav = html.split('<ul class="staff-nav">')[1].split("</ul>")[0]
    missing = [name for name, *_ in STAFF_PAGES if f'href="{reverse("admin:" + name)}"' not in nav]
    assert missing == []
