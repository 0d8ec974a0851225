"""The shop's checkout asks the billing country too (required, prefilled from the
account), and the country given there becomes the account's."""

from __future__ import annotations

import pytest

from billing import access
from tests.shop.test_shop_pages import (  # noqa: F401 (fixtures)
    ADDRESS,
    GOOD_CARD,
    add,
    ann,
    checkout_form,
    order_id_of,
    shop_site,
    shop_stock,
)

pytestmark = pytest.mark.django_db


def test_the_checkout_requires_a_billing_country(ann) -> None:  # noqa: F811
    add(ann.client, "book")
    response = ann.client.post("/shop/checkout/", {**checkout_form(ann.client), **ADDRESS, **GOOD_CARD,
                                                   "billing_country": ""})
    assert response.status_code == 200
    assert response.context["form"].errors["billing_country"] == ["Choose your billing country."]
    assert access.get_account(ann.account_id).BillingCountry is None


def test_the_checkout_is_prefilled_and_gives_the_account_its_country(ann) -> None:  # noqa: F811
    account = access.get_account(ann.account_id)
    access.set_tax_identity(account, access.TaxIdentity("IT", "IT00743110157"), [], actor="test")
    add(ann.client, "book")
    assert ann.client.get("/shop/checkout/").context["form"]["billing_country"].value() == "IT"
    order_id_of(ann.client.post("/shop/checkout/", {**checkout_form(ann.client), **ADDRESS, **GOOD_CARD,
                                                    "billing_country": "SE"}))
    account = access.get_account(ann.account_id)
    # the Italian VAT number is not a Swedish business's: it goes with the old country
    assert (account.BillingCountry, account.VatNumber) == ("SE", None)
