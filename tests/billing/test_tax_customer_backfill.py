"""``manage.py backfill_billing_country``: existing accounts get the country their cards'
billing address names, else the seller's (reported, one line per account); conditional
writes only where absent, so it is safe to re-run."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from billing import access
from billing.actions import wallet
from core.countries import country_in_address
from tests.builders import TEST_CARD, make_account, make_user, subscribe

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("backfill_billing_country", *args, stdout=out)
    return out.getvalue()


def account_with(email: str, address: str | None):
    user = make_user(email)
    account = make_account(email, user_id=user.pk)
    if address is not None:
        wallet.add_card(account, TEST_CARD, address, actor="test")
    return account


@pytest.fixture
def accounts(moto_table, settings):
    settings.RPAY_SELLER_COUNTRY = "IT"
    return {
        "milan": account_with("milan@example.com", "Maria Rossi\nVia Roma 1\n20121 Milano\nItalia"),
        "paris": account_with("paris@example.com", "Jean Dupont, 5 rue de la Paix, 75002 Paris, France"),
        "nowhere": account_with("nowhere@example.com", "12 Bridge Street, Birmingham, B12 7ST"),
        "nocard": account_with("nocard@example.com", None),
    }


@pytest.mark.parametrize("address, country", [
    ("1 Example Street\nLondon EC1A 1AA\nUnited Kingdom", "GB"),
    ("Hauptstr. 5\n10115 Berlin\nDE", "DE"),
    ("Hauptstr. 5, 10115 Berlin, Deutschland", "DE"),
    ("Calle Mayor 1, Madrid, España", "ES"),
    ("1 Market St, San Francisco, CA", None),  # a state, not Canada
    ("12 Bridge Street, Birmingham, B12 7ST", None),
    ("", None),
])
def test_the_country_an_address_names(address, country) -> None:
    assert country_in_address(address) == country


def test_decided_and_undecided(accounts) -> None:
    sub = subscribe(_customer(accounts["paris"]))
    out = run()
    countries = {name: access.get_account(a.account_id).BillingCountry for name, a in accounts.items()}
    assert countries == {"milan": "IT", "paris": "FR", "nowhere": "IT", "nocard": "IT"}
    undecided = [line for line in out.splitlines() if line.startswith("undecided")]
    assert len(undecided) == 2
    assert any(accounts["nowhere"].account_id in line and "nowhere@example.com" in line for line in undecided)
    assert any(accounts["nocard"].account_id in line for line in undecided)
    assert "4 account(s): 2 got the country of their billing address, 2 the seller's (IT) by default" in out
    # the live subscription got the copy
    [stored] = access.get_subscriptions_by_account(accounts["paris"].account_id)
    assert stored.sub_id == sub.sub_id and stored.BillingCountry == "FR"


def test_a_dry_run_writes_nothing(accounts) -> None:
    out = run("--dry-run")
    assert "would get the seller's, IT" in out and "dry run: nothing written" in out
    assert all(access.get_account(a.account_id).BillingCountry is None for a in accounts.values())


def test_json(accounts) -> None:
    report = {r["email"]: r for r in json.loads(run("--json", "--dry-run"))}
    assert report["milan@example.com"]["decision"] == "address" and report["milan@example.com"]["country"] == "IT"
    assert report["nocard@example.com"]["decision"] == "seller"
    assert report["paris@example.com"]["source"].endswith("France")


def test_a_rerun_changes_nothing_and_keeps_the_customers_choice(accounts) -> None:
    run()
    # the customer chose another country since: a second run keeps it
    milan = access.get_account(accounts["milan"].account_id)
    access.set_tax_identity(milan, access.TaxIdentity("AT"), [], actor="customer")
    out = run()
    assert "0 got the country of their billing address, 0 the seller's (IT) by default, 4 had one" in out
    assert access.get_account(milan.account_id).BillingCountry == "AT"


def test_a_country_given_meanwhile_is_not_overwritten(accounts) -> None:
    from billing.actions.tax_identity import Decision, backfill_country

    nowhere = access.get_account(accounts["nowhere"].account_id)
    access.set_tax_identity(nowhere, access.TaxIdentity("PT"), [], actor="customer")
    # as if the run had read the account before the customer's change
    stale = access.AccountCollection(account=access.get_account(nowhere.account_id))
    stale.account.BillingCountry = None
    assert access.backfill_billing_country(stale.account, "IT", []) is False
    assert access.get_account(nowhere.account_id).BillingCountry == "PT"
    assert backfill_country(nowhere.account_id, "IT").decision == Decision.ALREADY


def test_a_closed_account_is_left_alone(accounts) -> None:
    from billing.models import Account

    closed = accounts["nocard"]
    Account(closed.PK, closed.SK).update(actions=[Account.ClosedDate.set("2026-01-01T00:00:00+00:00")])
    out = run()
    assert "1 closed" in out and access.get_account(closed.account_id).BillingCountry is None


def _customer(account):
    from tests.builders import Customer

    return Customer(client=None, email=account.Email, user_id=account.UserId, account_id=account.account_id)


def test_a_rerun_gives_a_subscription_its_copy(accounts) -> None:
    from billing.models import Subscription

    sub = subscribe(_customer(accounts["milan"]))
    run()
    # as if a killed run had written the account but not its subscription
    stored = access.get_subscription(sub.account_id, sub.sub_id)
    access.update_subscription(stored, [Subscription.BillingCountry.remove()], check_version=False)
    assert access.get_subscription(sub.account_id, sub.sub_id).BillingCountry is None
    run()
    assert access.get_subscription(sub.account_id, sub.sub_id).BillingCountry == "IT"
