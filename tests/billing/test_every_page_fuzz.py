"""Hypothesis over every page of the site (billing's portal and staff pages, the shop's,
the log-in and sign-up pages; the API has its own, tests/api/test_api_hostile_input.py):
whatever the path's ids, the query string or the posted form, as nobody, as a customer or
as staff, no page answers 500. The URLs come from the URL configuration itself, so a new
page is fuzzed the day it is added."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import get_resolver
from django.urls.resolvers import URLPattern, URLResolver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import subscribe

pytestmark = pytest.mark.django_db

# Django's own admin (its models' pages), the API (fuzzed by its own test) and the files
# served as they are: the rest is rpay's.
NOT_OURS = re.compile(r"^(admin/(auth|axes|r|autocomplete|jsi18n|password_change|\^|\(\?P)|api/|favicon|static/)")
PARAM = re.compile(r"<(?:(\w+):)?(\w+)>")


def our_patterns() -> list[str]:
    found: list[str] = []

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                found.append(prefix + str(pattern.pattern))

    walk(get_resolver().url_patterns, "")
    return sorted({p for p in found if not NOT_OURS.match(p) and not p.startswith("^")})


PATTERNS = our_patterns()

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)
values = st.one_of(
    text,
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.sampled_from(["", "0", "1", "31", "-1", "1e309", "NaN", "period_end", "now", "GYM", "NEWS-DAILY", "on",
                     "4242 4242 4242 4242", "x" * 3000, "a#b", "ACC#CATALOG", "%", "../", "2026Q4", "2027-13"]),
)
# The names the site's forms use, and some they do not.
FIELDS = ["product", "payment_day", "card_number", "exp_month", "exp_year", "cvc", "billing_address", "quote",
          "when", "reason", "comment", "version", "amount", "expected_refunded", "email", "password", "password1",
          "new_password1", "username", "code", "percent_off", "amount_off", "valid_until", "max_payments", "name",
          "sku", "price", "currency", "billing_country", "vat_number", "payments", "quantity", "url", "events",
          "confirm", "language", "next", "sub", "target", "card", "country", "registrations", "q", "quarter",
          "month", "format", "page", "cursor", "again", "stock", "warehouse"]
forms = st.dictionaries(st.sampled_from(FIELDS), values, max_size=8)


@pytest.fixture
def visitors(customer, shop_table_too):
    sub = subscribe(customer)
    staff = Client()
    staff.force_login(get_user_model().objects.create_superuser("boss@rpay.localhost", "boss@rpay.localhost", "pw"))
    real = {"account_id": customer.account_id, "customer_id": customer.account_id, "sub_id": sub.sub_id,
            "subscription_id": sub.sub_id, "sku": sub.SKU}
    return {"nobody": Client(), "customer": customer.client, "staff": staff}, real


def fill(pattern: str, real: dict[str, str], draw) -> str:
    """The pattern with each parameter a real id or a generated one (an int one: a number)."""

    def one(match: re.Match) -> str:
        converter, name = match.group(1), match.group(2)
        if converter == "int":
            return str(draw(st.integers(min_value=0, max_value=10**12)))
        if name in real and draw(st.booleans()):
            return real[name]
        return quote(draw(text | values), safe="") or "x"

    return PARAM.sub(one, pattern)


FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def test_the_url_configuration_lists_the_pages() -> None:
    # the walk finds the site's pages, so the property below covers them
    assert {"subscribe/", "subscriptions/<str:sub_id>/cancel/", "admin/staff/revenue/", "shop/checkout/",
            "signup/", "receipts/<str:receipt_id>/pdf/"} <= set(PATTERNS)


@FUZZ
@given(data=st.data())
def test_no_page_answers_500(visitors, data) -> None:
    clients, real = visitors
    who = data.draw(st.sampled_from(sorted(clients)), label="who")
    pattern = data.draw(st.sampled_from(PATTERNS), label="pattern")
    url = "/" + fill(pattern, real, data.draw)
    method = data.draw(st.sampled_from(["get", "post"]), label="method")
    form = data.draw(forms, label="form")
    client = clients[who]
    response = client.get(url, form) if method == "get" else client.post(url, form)
    assert response.status_code < 500, (who, method, url[:120], form, response.status_code)


@pytest.mark.parametrize("target", ["0", "home", "signup", "javascript:alert(1)", "//evil.example/"])
def test_a_next_that_is_no_page_of_the_site_is_ignored(customer, target) -> None:
    # found by the property above: a logged-in visitor's sign-up page with ?next=0 answered 500
    # (``redirect`` took the bare word for a view's name)
    response = customer.client.get("/signup/", {"next": target})
    assert response.status_code == 302 and response["Location"] == "/"
