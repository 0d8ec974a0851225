"""The billing staff pages (inside the admin) in Italian, Korean and Chinese: none
of their main English phrases left, flash messages, statuses and dates in the language.
English stays the default (tests/test_staff_*.py read the pages in English)."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from billing import access
from billing.models import BatchRun
from tests.builders import make_customer_with_history, make_user

pytestmark = pytest.mark.django_db

LANGUAGES = ("it", "ko", "zh-hans")
# The billing staff pages' main English phrases (headings, column heads, links, notes,
# and the statuses, which English shows as stored: "past_due"). Stored codes (event actions, cancel reasons, batch counters) and the data
# (e-mails, SKUs, ids) are not text of the page and are not listed; nor are "E-mail" and
# "Account" (Italian too).
PHRASES = (
    "Find a customer", "Upcoming", "Batch runs", "Product catalog", "Billing",
    "Account id", "Created", "Subscriptions", "Product", "Status", "Amount", "Next payment",
    "Next reminder", "Card", "Actions", "Cancel", "Change day", "Retry now", "Pause", "Payment failures",
    "Past-due subscription", "Period being retried", "Retries made", "Next retry", "Payment run",
    "Failure as recorded", "Receipts since", "Billed", "Processed", "Refund", "Events", "When", "Who",
    "Action", "Subject", "Note", "active", "past_due", "cancelled", "paid", "Fill in one box",
    "One match opens", "Find", "Subscription id", "Due per day", "Payments", "Reminders", "Day",
    "in the next", "the billing day", "Started", "Finished", "Outcome", "Counts", "Failures",
    "completed", "Runs are started by the scheduler", "Add product", "A retired product", "Monthly price",
    "Edit", "Retire", "retired", "Cancel this subscription", "Customer", "Back", "Refund up to",
    "Amount to refund", "Already refunded", "Charged", "Reason", "on day", "billed",
    "Card id", "Used by", "No card in the wallet",
)


def english_left(html: str) -> list[str]:
    # The audit events' rows show what was stored (field names such as "Status", actions
    # such as "portal.change_card"): data, not the page's words.
    html = re.sub(r'(<table data-testid="events">.*?<tbody>).*?(</tbody>)', r"\1\2", html, flags=re.S)
    text = re.sub(r"<script.*?</script>|<style.*?</style>|<[^>]+>", " ", html, flags=re.S)
    return [p for p in PHRASES if re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", text)]


@pytest.fixture
def customer(moto_table, products):
    history = make_customer_with_history()
    BatchRun(BatchRun.pk(kind="payments"), BatchRun.sk(started="2026-11-20T06:00:00+00:00", run_id="r1"),
             Kind="payments", RunId="r1", StartedAt="2026-11-20T06:00:00+00:00", FirstDate="2026-11-20",
             LastDate="2026-11-20", Outcome="completed", Counts={"charged": 3},
             Failures=[{"sub_id": history.past_due.sub_id, "reason": "card_declined"}]).save()
    return history


@pytest.fixture
def staff_client(client):
    # support, catalog and finance: every billing staff page and every action link
    client.force_login(make_user("clerk@rpay.localhost", staff=True, money=True))
    return client


def staff_urls(customer) -> list[str]:
    account, sub = customer.account_id, customer.sub.sub_id
    return [
        reverse("admin:staff_index"),
        reverse("admin:staff_account", args=[account]),
        reverse("admin:staff_upcoming"),
        reverse("admin:staff_runs"),
        reverse("admin:staff_products"),
        reverse("admin:staff_product_add"),
        reverse("admin:staff_cancel", args=[account, sub]),
        reverse("admin:staff_refund", args=[account, customer.receipt.SK]),
    ]


def test_the_phrases_are_on_the_english_pages(staff_client, customer) -> None:
    # The list is worth something only if the pages show its phrases in English.
    found = set()
    for url in staff_urls(customer):
        found |= set(english_left(staff_client.get(url).content.decode()))
    assert sorted(set(PHRASES) - found) == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_staff_pages_show_no_english_phrase(staff_client, customer, language) -> None:
    for url in staff_urls(customer):
        response = staff_client.get(url, HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert f'<html lang="{language}"' in html, url
        assert english_left(html) == [], url


def test_dates_and_money_on_the_staff_pages_follow_the_language(staff_client, customer) -> None:
    url = reverse("admin:staff_account", args=[customer.account_id])
    billed = customer.receipt.BillingDate  # ISO in English (test_staff_pages)
    year, month, day = (int(part) for part in billed.split("-"))
    chinese = staff_client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert f"<td>{year}年{month}月{day}日<br>" in chinese and f"<td>{billed}" not in chinese
    assert "2026年11月20日 06:00" in chinese  # the payment run's start, with its time
    italian = staff_client.get(url, HTTP_ACCEPT_LANGUAGE="it").content.decode()
    assert "9,99 USD" in italian and "45,00 GBP" in italian and "9.99 USD" not in italian
    korean = staff_client.get(url, HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert ">연체<" in korean and ">해지됨<" in korean  # the statuses, the portal's words


def test_a_staff_flash_message_is_in_the_language(staff_client, customer) -> None:
    url = reverse("admin:staff_cancel", args=[customer.account_id, customer.sub.sub_id])
    response = staff_client.post(url, HTTP_ACCEPT_LANGUAGE="ko", follow=True)
    messages = [str(m) for m in response.context["messages"]]
    assert messages == [f"{customer.sub.ProductName or customer.sub.SKU} 구독이 해지되었습니다."]
    assert access.get_subscription(customer.account_id, customer.sub.sub_id).Status == "cancelled"
    html = response.content.decode()
    assert "구독이 해지되었습니다." in html and "cancelled." not in html


def test_the_upcoming_charts_get_their_words_in_the_language(staff_client, customer) -> None:
    html = staff_client.get(reverse("admin:staff_upcoming"), HTTP_ACCEPT_LANGUAGE="it").content.decode()
    assert '"payments": "Pagamenti dovuti"' in html and '"total": "Totale %(currency)s"' in html


@pytest.mark.parametrize("language, expected", [
    ("en", "20 November 2026, 06:00"), ("it", "20 nov 2026, 06:00"), ("ko", "2026년 11월 20일 06:00"),
    ("zh-hans", "2026年11月20日 06:00"),
])
def test_a_date_with_its_time_in_each_language(language, expected) -> None:
    # The shop's order page ("j F Y, H:i") and the staff pages' timestamps: CLDR has no
    # "yMMMdHm" skeleton, so the date and the time are joined by the locale's own pattern.
    from django.utils import translation

    from core.localformat import local_date

    with translation.override(language):
        assert local_date("2026-11-20T06:00:00+00:00", "j F Y, H:i") == expected


def test_a_staff_timestamp_has_the_same_date_as_a_staff_date() -> None:
    from django.utils import translation

    from billing.templatetags.staff_pages import staff_date

    with translation.override("ko"):
        assert staff_date("2026-11-20") == "2026. 11. 20."
        assert staff_date("2026-11-20T06:00:00+00:00") == "2026. 11. 20. 06:00"
    with translation.override("en"):
        assert staff_date("2026-11-20T06:00:00+00:00") == "2026-11-20 06:00"  # English: ISO
        assert staff_date("not a date") == "not a date"


@pytest.mark.parametrize(("language", "name"), [
    ("it", "Può rimborsare e ritentare i pagamenti"),
    ("ko", "결제를 환불하고 재시도할 수 있음"),
    ("zh-hans", "可以退款和重试付款"),
])
def test_the_403_page_names_the_missing_permission_in_the_language(client, customer, language, name) -> None:
    # The permission's name is stored in English (a Permission row); the page translates it.
    client.force_login(make_user("support@rpay.localhost", staff=True, roles=["support"]))
    url = reverse("admin:staff_refund", args=[customer.account_id, customer.receipt.SK])
    response = client.get(url, HTTP_ACCEPT_LANGUAGE=language)
    html = response.content.decode()
    assert response.status_code == 403
    assert name in html and "Can refund and retry payments" not in html
    assert "billing.manage_money" in html  # the codename stays, for the administrator


@pytest.mark.parametrize("language, header, index_title", [
    ("en", "rpay staff", "rpay staff pages"), ("it", "Staff di rpay", "Pagine dello staff di rpay"),
    ("ko", "rpay 직원", "rpay 직원 페이지"), ("zh-hans", "rpay 员工", "rpay 员工页面"),
])
def test_the_admin_says_rpay_in_each_language(staff_client, language, header, index_title) -> None:
    # site_header (every page's heading), site_title (the tab's title) and index_title:
    # rpay's staff site, never Django's "Django administration".
    html = staff_client.get(reverse("admin:index"), HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert re.search(rf'<div id="site-name"><a href="/admin/">{re.escape(header)}</a></div>', html), language
    assert re.search(rf"<title>{re.escape(index_title)} \| {re.escape(header)}</title>", html), language
    assert "Django" not in re.sub(r"<script.*?</script>|<[^>]+>", " ", html, flags=re.S)
    login = Client().get(reverse("admin:login"), HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert re.search(rf'<div id="site-name"><a href="/admin/">{re.escape(header)}</a></div>', login), language
