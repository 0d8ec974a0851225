"""The customer's tax identity: the billing country (required at subscribe) and VAT
number (checked offline by python-stdnum; by VIES, behind its one network function,
when on), copied onto live subscriptions; the card's country as evidence."""

from __future__ import annotations

from datetime import date

import pytest
from django.urls import reverse

from billing import access
from billing.models import Subscription
from billing.rules.tax import Buyer
from billing.views.common import SESSION_PENDING
from core import vies
from core.payments.demo_cards import DEMO_NUMBERS, demo_card
from core.payments.gateway import get_gateway
from tests.builders import GOOD_CARD, make_user, prices_exclude_vat, subscribe

pytestmark = pytest.mark.django_db

# A valid Italian VAT number (format and check digit) and a German one.
IT_VAT, DE_VAT = "IT00743110157", "DE136695976"


def post_subscribe(customer, **changes):
    data = {"product": "NEWS-DAILY", "payment_day": "15", **GOOD_CARD, **changes}
    return customer.client.post("/subscribe/", data)


def confirm(customer):
    import re

    page = customer.client.get("/subscribe/confirm/")
    quote = re.search(r'name="quote" value="([^"]+)"', page.content.decode())[1]
    return customer.client.post("/subscribe/confirm/", {"quote": quote})


@pytest.fixture
def vies_answers(monkeypatch, settings):
    """The VIES check on, and its one network function replaced: ``answers[number]`` is
    a ``ViesAnswer``, or an exception to raise (unreachable)."""
    settings.VAT_VIES_CHECK = True
    answers: dict[str, object] = {}
    asked: list[str] = []

    def ask(number: str) -> vies.ViesAnswer:
        asked.append(number)
        answer = answers[number]
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(vies, "ask_vies", ask)
    answers["asked"] = asked
    return answers


# --- the subscribe form -------------------------------------------------------------------


def test_the_billing_country_is_required_at_subscribe(customer) -> None:
    response = post_subscribe(customer, billing_country="")
    assert response.status_code == 200
    assert response.context["form"].errors["billing_country"] == ["Choose your billing country."]
    assert SESSION_PENDING not in customer.client.session


def test_a_country_that_is_none_is_refused(customer) -> None:
    response = post_subscribe(customer, billing_country="ZZ")
    assert "billing_country" in response.context["form"].errors


@pytest.mark.parametrize("number", ["IT00743110158", "IT123", "XX00743110157", "00743110157"])
def test_an_invalid_vat_number_is_a_field_error(customer, number) -> None:
    response = post_subscribe(customer, billing_country="IT", vat_number=number)
    assert response.status_code == 200
    errors = response.context["form"].errors["vat_number"]
    assert errors == ["This is not a valid EU VAT number: check its country prefix and digits."]


def test_a_vat_number_of_another_country_is_a_field_error(customer) -> None:
    response = post_subscribe(customer, billing_country="FR", vat_number=IT_VAT)
    assert response.context["form"].errors["vat_number"] == [
        "This VAT number is not of your billing country (France)."]


def test_a_greek_vat_number_has_the_prefix_el(customer) -> None:
    response = post_subscribe(customer, billing_country="GR", vat_number="EL094259216")
    assert response.status_code == 302, response.context["form"].errors


def test_the_country_and_vat_number_reach_the_account_and_the_subscription(customer) -> None:
    assert post_subscribe(customer, billing_country="IT", vat_number="it 00743110157").status_code == 302
    pending = customer.client.session[SESSION_PENDING]
    assert pending["billing_country"] == "IT" and pending["vat"]["number"] == IT_VAT
    assert confirm(customer).status_code == 302
    account = access.get_account(customer.account_id)
    assert (account.BillingCountry, account.VatNumber, account.VatNumberCheck, account.VatCheckedAt) == \
        ("IT", IT_VAT, "format", None)
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert (sub.BillingCountry, sub.VatNumber) == ("IT", IT_VAT)
    assert access.buyer_of(sub) == Buyer("IT", IT_VAT) == access.buyer_of(account)
    [event] = [e for e in access.get_events_by_account(customer.account_id)
               if e.Action == "account.tax_identity_changed"]
    assert event.After["BillingCountry"] == "IT" and event.Before["BillingCountry"] is None


def test_the_form_is_prefilled_from_the_account(customer) -> None:
    account = access.get_account(customer.account_id)
    access.set_tax_identity(account, access.TaxIdentity("DE", DE_VAT), [], actor="test")
    form = customer.client.get("/subscribe/").context["form"]
    assert (form["billing_country"].value(), form["vat_number"].value()) == ("DE", DE_VAT)


def test_a_new_account_is_offered_the_sellers_country_preselected(customer, settings) -> None:
    settings.RPAY_SELLER_COUNTRY = "IT"
    form = customer.client.get("/subscribe/").context["form"]
    assert form["billing_country"].value() == "IT"


# --- VIES, behind its one network function ------------------------------------------------


def test_vies_off_by_default_asks_nothing(customer, monkeypatch) -> None:
    monkeypatch.setattr(vies, "ask_vies", lambda number: pytest.fail("VIES asked"))
    assert post_subscribe(customer, billing_country="IT", vat_number=IT_VAT).status_code == 302


def test_a_number_vies_confirms_is_shown_with_the_day(customer, vies_answers) -> None:
    vies_answers[IT_VAT] = vies.ViesAnswer(valid=True, checked_on=date(2026, 11, 20))
    response = customer.client.post("/account/billing/", {"billing_country": "IT", "vat_number": IT_VAT})
    assert response.status_code == 302
    account = access.get_account(customer.account_id)
    assert (account.VatNumberCheck, account.VatCheckedAt) == ("vies", "2026-11-20")
    page = customer.client.get("/account/billing/").content.decode()
    assert "confirmed by VIES on 20 November 2026" in page


def test_vies_unreachable_keeps_the_number_format_valid(customer, vies_answers) -> None:
    vies_answers[IT_VAT] = vies.ViesUnreachable("timed out")
    response = customer.client.post("/account/billing/", {"billing_country": "IT", "vat_number": IT_VAT},
                                    follow=True)
    html = response.content.decode()
    assert "VIES service could not be reached" in html
    account = access.get_account(customer.account_id)
    assert (account.VatNumber, account.VatNumberCheck, account.VatCheckedAt) == (IT_VAT, "format", None)
    assert "format valid" in html


def test_a_number_vies_does_not_know_is_a_field_error(customer, vies_answers) -> None:
    vies_answers[IT_VAT] = vies.ViesAnswer(valid=False, checked_on=date(2026, 11, 20))
    response = post_subscribe(customer, billing_country="IT", vat_number=IT_VAT)
    assert response.status_code == 200
    assert "not registered" in response.context["form"].errors["vat_number"][0]
    assert access.get_account(customer.account_id).VatNumber is None


def test_the_vies_function_turns_any_failure_into_unreachable(monkeypatch) -> None:
    from stdnum.eu import vat

    def down(number, timeout):
        raise OSError("no route to host")

    monkeypatch.setattr(vat, "check_vies", down)
    with pytest.raises(vies.ViesUnreachable):
        vies.ask_vies(IT_VAT)


# --- the account page: one action, the account and its live subscriptions ----------------


def test_the_account_page_copies_onto_each_live_subscription(customer) -> None:
    live = subscribe(customer)
    other = subscribe(customer, sku="GYM", currency="GBP", amount=4500)
    ended = subscribe(customer, sku="TEA-JP", currency="JPY", amount=1500)
    access.cancel_subscription(ended)
    response = customer.client.post("/account/billing/", {"billing_country": "DE", "vat_number": DE_VAT})
    assert response.status_code == 302
    subs = {s.sub_id: s for s in access.get_subscriptions_by_account(customer.account_id)}
    for sub in (live, other):
        assert (subs[sub.sub_id].BillingCountry, subs[sub.sub_id].VatNumber) == ("DE", DE_VAT)
        assert subs[sub.sub_id].Version == sub.Version + 1
    assert subs[ended.sub_id].BillingCountry is None  # an ended subscription is charged no more
    # and back to no VAT number: removed from the account and the copies
    customer.client.post("/account/billing/", {"billing_country": "AT", "vat_number": ""})
    assert {(s.BillingCountry, s.VatNumber) for s in access.get_subscriptions_by_account(customer.account_id)
            if s.is_live} == {("AT", None)}
    assert access.get_account(customer.account_id).VatNumber is None


def test_the_account_page_needs_a_country_and_a_valid_number(customer) -> None:
    response = customer.client.post("/account/billing/", {"billing_country": "", "vat_number": "IT1"})
    errors = response.context["form"].errors
    assert set(errors) == {"billing_country", "vat_number"}
    assert access.get_account(customer.account_id).BillingCountry is None


def test_the_dashboard_links_the_billing_details(customer) -> None:
    assert 'href="/account/billing/"' in customer.client.get("/").content.decode()


def test_buyer_of_an_account_without_a_country_is_the_sellers(customer, settings) -> None:
    settings.RPAY_SELLER_COUNTRY = "IT"
    assert access.buyer_of(access.get_account(customer.account_id)) == Buyer("IT", None)
    sub = subscribe(customer)
    assert access.buyer_of(sub, seller_country="FR") == Buyer("FR", None)


# --- evidence: the card's country ---------------------------------------------------------


def test_the_test_cards_have_stripes_countries() -> None:
    gateway = get_gateway()
    expected = {"visa": "US", "mastercard": "US", "3ds": "DE", "visa-it": "IT", "visa-de": "DE", "visa-fr": "FR"}
    assert {name: demo_card(gateway, name).country for name in DEMO_NUMBERS} == expected


def test_a_billing_country_unlike_the_cards_is_flagged_to_staff(client, customer) -> None:
    italian = {**GOOD_CARD, "card_number": "4000 0038 0000 0008"}
    assert customer.client.post("/subscribe/", {"product": "NEWS-DAILY", "payment_day": "15", **italian,
                                                "billing_country": "FR"}).status_code == 302
    assert confirm(customer).status_code == 302
    account = access.get_account(customer.account_id)
    assert (account.BillingCountry, account.CardCountry) == ("FR", "IT")
    assert access.tax_evidence_mismatch(account)
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.PaymentDetails.Country == "IT"
    assert access.buyer_of(sub).country == "FR"  # the invoice follows the billing country
    client.force_login(make_user("clerk@rpay.localhost", staff=True, roles=["support"]))
    page = client.get(reverse("admin:staff_account", args=[customer.account_id])).content.decode()
    assert 'data-testid="tax-evidence-mismatch"' in page and "France (FR)" in page and "Italy (IT)" in page
    # the customer says Italy after all: the flag goes
    customer.client.post("/account/billing/", {"billing_country": "IT", "vat_number": ""})
    page = client.get(reverse("admin:staff_account", args=[customer.account_id])).content.decode()
    assert 'data-testid="tax-evidence-mismatch"' not in page


def test_the_default_cards_country_follows_the_default_card(customer) -> None:
    from billing.actions import wallet

    account = access.get_account(customer.account_id)
    gateway = get_gateway()
    first = wallet.add_card(account, demo_card(gateway, "visa-de"), actor="test")
    assert access.get_account(customer.account_id).CardCountry == "DE"
    second = wallet.add_card(account, demo_card(gateway, "visa-fr"), actor="test")
    assert access.get_account(customer.account_id).CardCountry == "DE"  # not the default
    wallet.set_default_card(account, second, actor="test")
    assert access.get_account(customer.account_id).CardCountry == "FR"
    assert first.Details.Country == "DE"


def test_subscriptions_carry_the_copy_from_their_creation(customer) -> None:
    account = access.get_account(customer.account_id)
    access.set_tax_identity(account, access.TaxIdentity("IT", IT_VAT), [], actor="test")
    sub = subscribe(customer)
    stored = Subscription.get(sub.PK, sub.SK)
    assert (stored.BillingCountry, stored.VatNumber) == ("IT", IT_VAT)


def test_new_details_for_the_default_card_bring_its_country(customer) -> None:
    from billing.actions import wallet

    account = access.get_account(customer.account_id)
    gateway = get_gateway()
    card = wallet.add_card(account, demo_card(gateway, "visa-de"), actor="test")
    account = access.get_account(customer.account_id)
    wallet.replace_card(account, card, demo_card(gateway, "visa-it"), None, actor="test", today=date.today())
    assert access.get_account(customer.account_id).CardCountry == "IT"


def test_closing_the_account_erases_its_vat_number(customer) -> None:
    from billing.access.data_rights import erase_item
    from billing.actions.data_rights import _secrets

    sub = subscribe(customer)
    account = access.get_account(customer.account_id)
    access.set_tax_identity(account, access.TaxIdentity("IT", IT_VAT), [sub], actor="test")
    items = list(access.account_items(customer.account_id))
    secrets = _secrets(account, items)
    assert IT_VAT in secrets
    for item in items:
        erase_item(item, secrets)
    account = access.get_account(customer.account_id)
    assert (account.BillingCountry, account.VatNumber, account.VatNumberCheck) == ("IT", None, None)
    assert all(s.VatNumber is None for s in access.get_subscriptions_by_account(customer.account_id))
    assert all(IT_VAT not in str(e.Before) + str(e.After) for e in access.get_events_by_account(customer.account_id))


def test_stripes_card_country_is_the_evidence(moto_table, products, stripe_gateway, localstripe) -> None:
    """Stripe's ``card.country`` (localstripe gives every card FR) reaches the account."""
    from tests.billing.test_stripe_billing import subscribe_with
    from tests.builders import make_customer

    customer = make_customer("pat@example.com")
    assert subscribe_with(customer, localstripe, "4242424242424242").status_code == 302
    account = access.get_account(customer.account_id)
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert (account.CardCountry, sub.PaymentDetails.Country, account.BillingCountry) == ("FR", "FR", "US")
    assert access.tax_evidence_mismatch(account)


def test_the_batches_read_the_copy_from_the_due_indexes(customer) -> None:
    from billing.models import GSI1_PROJECTION, GSI2_PROJECTION

    assert {"BillingCountry", "VatNumber"} <= set(GSI1_PROJECTION) & set(GSI2_PROJECTION)
    account = access.get_account(customer.account_id)
    access.set_tax_identity(account, access.TaxIdentity("DE", DE_VAT), [], actor="test")
    sub = subscribe(customer, on=date(2026, 11, 2))
    [due] = [s for s in access.get_due_payments_by_date(date.fromisoformat(sub.NextPaymentDate))
             if s.sub_id == sub.sub_id]
    assert access.buyer_of(due, seller_country="IT") == Buyer("DE", DE_VAT)


def test_a_number_vies_confirms_at_subscribe_is_stored_so(customer, vies_answers) -> None:
    vies_answers[DE_VAT] = vies.ViesAnswer(valid=True, checked_on=date(2026, 11, 21))
    assert post_subscribe(customer, billing_country="DE", vat_number=DE_VAT).status_code == 302
    assert vies_answers["asked"] == [DE_VAT]
    assert confirm(customer).status_code == 302
    account = access.get_account(customer.account_id)
    assert (account.VatNumber, account.VatNumberCheck, account.VatCheckedAt) == (DE_VAT, "vies", "2026-11-21")
    staff = make_user("clerk@rpay.localhost", staff=True, roles=["support"])
    from django.test import Client

    clerk = Client()
    clerk.force_login(staff)
    page = clerk.get(reverse("admin:staff_account", args=[customer.account_id])).content.decode()
    assert "confirmed by VIES on 21 November 2026" in page


@pytest.mark.parametrize(("country", "vat_number", "treatment"), [
    ("DE", "", "oss"),  # a German consumer: 19% through the OSS, not the seller's 22%
    ("DE", "DE136695976", "reverse_charge"),  # a German business: no VAT
    ("IT", "", "domestic"),
])
def test_the_confirm_page_quotes_the_tax_of_the_country_chosen_in_step_one(customer, country, vat_number,
                                                                           treatment) -> None:
    import re

    prices_exclude_vat()
    assert post_subscribe(customer, billing_country=country, vat_number=vat_number).status_code == 302
    page = customer.client.get("/subscribe/confirm/").content.decode()
    quoted = re.search(r'data-testid="first-charge">([^<]+)<', page)[1].strip()
    assert confirm(customer).status_code == 302
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    [receipt] = access.get_receipts_by_account(customer.account_id, date(2000, 1, 1), date(2100, 1, 1))
    assert receipt.TaxTreatment == treatment and receipt.ProcessedAmount == receipt.Net + receipt.Tax
    # what the page said is what was charged: net + the tax of the country chosen
    assert quoted == f"${receipt.ProcessedAmount // 100}.{receipt.ProcessedAmount % 100:02d}", (quoted, receipt.Tax)
