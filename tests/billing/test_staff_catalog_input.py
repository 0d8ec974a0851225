"""Product names and descriptions are one line (header injection): a line break
in a name made the subscribe confirm step a 500 and lost the batches' e-mails. The staff
form refuses control characters with a field error; nothing is stored."""

from __future__ import annotations

import pytest
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from billing import access
from billing.staff.forms import ProductForm
from tests.builders import make_user

BREAKS = ["Daily\nNews", "Daily\r\nNews", "Daily\rNews", "Tab\there", "Nul\x00byte", "Bell\x07", "Del\x7f",
          "C1\x85next line", "Line\u2028separator", "Para\u2029separator"]


def data(**changes) -> dict:
    return {"sku": "TEA-BOX", "name": "Tea box", "description": "Loose leaf", "price": "12.99",
            "currency": "USD", **changes}


@pytest.mark.parametrize("text", BREAKS)
@pytest.mark.parametrize("field", ["name", "description"])
def test_the_form_refuses_control_characters(field: str, text: str) -> None:
    form = ProductForm(data(**{field: text}))
    assert not form.is_valid()
    assert form.has_error(field, code="control_characters")
    assert "no line breaks" in form.errors[field][0]


def test_too_many_decimals_for_the_currency_is_a_price_error_in_the_pages_language() -> None:
    from django.utils import translation

    form = ProductForm(data(price="12.5", currency="JPY"))
    assert not form.is_valid() and form.has_error("price", code="decimal_places")
    assert form.errors["price"] == ["JPY has 0 decimal places at most."]
    with translation.override("it"):
        form = ProductForm(data(price="12.5", currency="JPY"))
        assert not form.is_valid()
        assert form.errors["price"] == ["JPY ha al massimo 0 decimali."]


@given(st.text(alphabet=st.characters(blacklist_categories=["Cc", "Cs", "Zl", "Zp"]), min_size=1, max_size=60)
       .filter(lambda s: s.strip()))
def test_one_line_names_are_accepted(name: str) -> None:
    form = ProductForm(data(name=name))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["name"] == name.strip()


@pytest.mark.django_db
def test_the_catalog_pages_store_nothing_with_a_line_break(client, moto_table) -> None:
    client.force_login(make_user("cat@rpay.localhost", staff=True, roles=["catalog"]))
    response = client.post(reverse("admin:staff_product_add"), data(name="Tea\nBcc: victim@example.com"))
    assert response.status_code == 200
    assert "no line breaks" in response.content.decode()
    assert access.get_product("TEA-BOX") is None

    access.create_product("TEA-BOX", "Tea box", 1299, "USD")
    response = client.post(reverse("admin:staff_product_edit", args=["TEA-BOX"]), data(description="a\r\nb"))
    assert response.status_code == 200 and "no line breaks" in response.content.decode()
    assert access.get_product("TEA-BOX").Description is None


@pytest.mark.parametrize("code", ["XYZ", "ABC", "XAU", "XTS", "XXX"])
def test_the_form_refuses_a_currency_that_is_not_payable_iso_4217(code: str) -> None:
    # Unknown codes, and ISO codes without minor units (gold, the testing code, "no currency").
    form = ProductForm(data(currency=code))
    assert not form.is_valid() and form.has_error("currency", code="unknown_currency")
    assert form.errors["currency"] == [f"{code} is not an ISO 4217 currency that can be paid in (e.g. USD, EUR, JPY)."]


@pytest.mark.parametrize(("code", "price", "minor"), [
    ("USD", "12.99", 1299), ("JPY", "1300", 1300), ("KWD", "1.250", 1250),
    # The exponents a hand-written table had wrong (ISO 4217: CLF 4, UYI 0, UYW 4).
    ("CLF", "1.2345", 12345), ("UYI", "120", 120), ("UYW", "0.0001", 1),
])
def test_prices_are_stored_in_the_currencys_iso_minor_units(code: str, price: str, minor: int) -> None:
    form = ProductForm(data(currency=code, price=price))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["amount"] == minor
