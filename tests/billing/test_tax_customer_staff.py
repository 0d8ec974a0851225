"""The staff page "Business & tax": the seller's profile, read by whoever sees billing,
saved by the finance role (and an admin), versioned like the other staff forms."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from billing import access
from billing.models import SELLER_EVENTS_ACCOUNT
from billing.rules.tax import Seller
from tests.builders import make_user

pytestmark = pytest.mark.django_db

URL = "/admin/staff/business-tax/"

GOOD = {"legal_name": "rpay S.r.l.", "address": "Via Roma 1\n20121 Milano", "country": "IT",
        "vat_number": "IT 00743110157", "oss_registered": "on", "prices_include_tax": "on",
        "registrations": "gb 20\nKR 10%\nCH 8.1", "version": "0"}


def staff(role: str) -> Client:
    client = Client()
    if role == "superuser":
        user = get_user_model().objects.create_superuser("boss@rpay.localhost", "boss@rpay.localhost", "pw")
    else:
        user = make_user(f"{role}@rpay.localhost", staff=True, roles=[] if role == "none" else [role])
    client.force_login(user)
    return client


def test_the_url_is_the_pages(moto_table) -> None:
    assert reverse("admin:staff_business_tax") == URL


def test_until_saved_the_settings_stand_in(moto_table, settings) -> None:
    settings.RPAY_SELLER = {"name": "Acme GmbH", "address": "Hauptstr. 1\nBerlin", "tax_id": "DE 136 695 976"}
    settings.RPAY_SELLER_COUNTRY = "DE"
    profile = access.get_seller_profile()
    assert (profile.LegalName, profile.Country, profile.VatNumber, profile.Version) == \
        ("Acme GmbH", "DE", "DE136695976", None)
    assert access.seller_tax() == Seller("DE", "DE136695976", oss_registered=True, under_threshold=False,
                                         prices_include_tax=True, registrations={})
    html = staff("finance").get(URL).content.decode()
    assert 'data-testid="from-settings"' in html and "Acme GmbH" in html


@pytest.mark.parametrize("role", ["finance", "superuser"])
def test_finance_and_admin_save_it(moto_table, role) -> None:
    client = staff(role)
    response = client.post(URL, GOOD)
    assert response.status_code == 302, response.content.decode()
    profile = access.get_seller_profile()
    assert (profile.LegalName, profile.Country, profile.VatNumber, profile.Version) == \
        ("rpay S.r.l.", "IT", "IT00743110157", 1)
    assert access.seller_tax() == Seller(
        "IT", "IT00743110157", oss_registered=True, under_threshold=False, prices_include_tax=True,
        registrations={"GB": Decimal("20"), "KR": Decimal("10"), "CH": Decimal("8.1")})
    [event] = access.get_events_by_account(SELLER_EVENTS_ACCOUNT)
    assert event.Action == "staff.seller_profile" and event.After["Registrations"]["CH"] == "8.1"
    # unticked boxes are False; the next save moves the version on
    assert client.post(URL, {**GOOD, "oss_registered": "", "prices_include_tax": "", "under_threshold": "on",
                             "registrations": "", "version": "1"}).status_code == 302
    seller = access.seller_tax()
    assert (seller.oss_registered, seller.prices_include_tax, seller.under_threshold, seller.registrations) == \
        (False, False, True, {})
    assert access.get_seller_profile().Version == 2
    html = client.get(URL).content.decode()
    actor = "boss@rpay.localhost" if role == "superuser" else "finance@rpay.localhost"
    assert "<strong>UnderThreshold</strong>: False → True" in html and actor in html


def test_support_reads_it_and_may_not_save(moto_table) -> None:
    client = staff("support")
    page = client.get(URL)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="read-only"' in html and 'value="Save"' not in html
    refused = client.post(URL, GOOD)
    assert refused.status_code == 403 and "billing.manage_money" in refused.content.decode()
    assert access.get_seller_profile().Version is None


@pytest.mark.parametrize("role", ["none", "catalog"])
def test_others_may_not_see_it(moto_table, role) -> None:
    client = staff(role)
    assert client.get(URL).status_code == 403
    assert client.post(URL, GOOD).status_code == 403


def test_the_header_links_it_for_whoever_may_see_it(moto_table) -> None:
    assert f'href="{URL}"' in staff("support").get(reverse("admin:staff_index")).content.decode()
    assert f'href="{URL}"' not in staff("catalog").get(reverse("admin:staff_products")).content.decode()


def test_a_stale_form_changes_nothing(moto_table) -> None:
    first, second = staff("finance"), staff("superuser")
    assert first.post(URL, GOOD).status_code == 302  # version 0 -> 1
    stale = second.post(URL, {**GOOD, "legal_name": "Someone Else S.p.A.", "version": "0"})
    assert stale.status_code == 409
    html = stale.content.decode()
    assert "This changed since you opened the page." in html and 'data-testid="as-it-is-now"' in html
    assert 'value="1"' in html  # drawn again from the profile as it is now
    assert access.get_seller_profile().LegalName == "rpay S.r.l."


@pytest.mark.parametrize("changes, field", [
    ({"vat_number": "IT00743110158"}, "vat_number"),  # check digit
    ({"vat_number": "DE136695976"}, "vat_number"),  # not Italy's
    ({"country": "GB", "vat_number": "GB999999999"}, "vat_number"),  # stdnum's UK module
    ({"registrations": "GB twenty"}, "registrations"),
    ({"registrations": "FR 20"}, "registrations"),  # an EU country: the EU's data has its rates
    ({"registrations": "QQ 20"}, "registrations"),
    ({"registrations": "GB 120"}, "registrations"),
    ({"country": ""}, "country"),
    ({"legal_name": ""}, "legal_name"),
])
def test_bad_input_is_a_field_error(moto_table, changes, field) -> None:
    response = staff("finance").post(URL, {**GOOD, **changes})
    assert response.status_code == 200
    assert field in response.context["form"].errors, response.context["form"].errors
    assert access.get_seller_profile().Version is None


def test_a_uk_seller_with_a_valid_uk_number(moto_table) -> None:
    response = staff("finance").post(URL, {**GOOD, "country": "GB", "vat_number": "GB 980 7806 84",
                                           "registrations": ""})
    assert response.status_code == 302, response.context["form"].errors
    assert access.seller_tax().country == "GB"
