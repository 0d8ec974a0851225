"""The staff look-up: part of an e-mail or a name (Django's users), a
subscription id alone (its SUBID# look-up item), a result list when several match."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing import access
from tests.builders import make_account, make_subscription, make_user

pytestmark = pytest.mark.django_db

LOOKUP = "admin:staff_index"


def customer(email: str, first: str = "", last: str = "") -> str:
    """A Django user with a billing account; returns the account id."""
    user = get_user_model().objects.create_user(email, email=email, password="pw", first_name=first, last_name=last)
    return access.create_account(email, user_id=user.pk).account_id


@pytest.fixture
def staff_client(client):
    client.force_login(make_user("support@rpay.localhost", staff=True, roles=["support"]))
    return client


def find(client, **query):
    return client.get(reverse(LOOKUP), query)


# --- the look-up item ------------------------------------------------------------------------


def test_a_new_subscription_is_found_by_its_id_alone_in_one_getitem(table, ddb_requests) -> None:
    account = make_account()
    sub = make_subscription(account)
    ddb_requests.reset()
    assert access.get_account_id_for_subscription(sub.sub_id) == account.account_id
    assert ddb_requests.ops == ["GetItem"]
    assert access.get_account_id_for_subscription("0123456789abcdef") is None
    # ids that cannot be in a key find nothing, as everywhere (invariant 9)
    for bad in ("a#b", "x" * 1100, "a\nb"):
        assert access.get_account_id_for_subscription(bad) is None


def test_the_look_up_item_is_outside_the_account_and_the_indexes(table) -> None:
    account = make_account()
    make_subscription(account)
    collection = access.get_account_collection(account.account_id)
    assert len(collection.subscriptions) == 1  # the account's partition holds no look-up item
    # the look-up item carries no GSI key: the due queries never see it
    from billing.models import SubIdLookup

    assert not {"NextPaymentDate", "NextReminderDate"} & set(SubIdLookup.get_attributes())


def test_accounts_of_many_users_in_one_batch_get(table, ddb_requests) -> None:
    ids = {u: make_account(f"u{u}@example.com", user_id=u).account_id for u in range(1, 31)}
    ddb_requests.reset()
    found = access.get_account_ids_for_users([*ids, 999])
    assert found == ids
    assert ddb_requests.ops == ["BatchGetItem"]
    assert access.get_account_ids_for_users([]) == {}


# --- the page --------------------------------------------------------------------------------


def test_a_subscription_id_alone_opens_its_account(staff_client, moto_table, ddb_requests) -> None:
    account = make_account()
    sub = make_subscription(account)
    ddb_requests.reset()
    response = find(staff_client, sub_id=sub.sub_id)
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:staff_account", args=[account.account_id]) + f"#sub-{sub.sub_id}"
    assert "Scan" not in ddb_requests.ops and ddb_requests.ops[0] == "GetItem"
    assert "No subscription with that id." in find(staff_client, sub_id="0123456789abcdef").content.decode()
    # with its account id too, as before
    assert find(staff_client, sub_id=sub.sub_id, account_id=account.account_id).status_code == 302
    other = make_account("other@example.com")
    wrong = find(staff_client, sub_id=sub.sub_id, account_id=other.account_id)
    assert "That account has no subscription with that id." in wrong.content.decode()


def test_part_of_an_e_mail_lists_the_customers_it_matches(staff_client, moto_table, ddb_requests) -> None:
    pat = customer("pat@example.com")
    patricia = customer("patricia@example.org")
    customer("bob@example.com")
    get_user_model().objects.create_user("patsy@example.net", email="patsy@example.net")  # no billing account
    ddb_requests.reset()
    response = find(staff_client, email="PAT")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="lookup-results"' in html and "2 customers match" in html
    for account_id in (pat, patricia):
        assert reverse("admin:staff_account", args=[account_id]) in html
    assert "bob@example.com" not in html and "patsy@example.net" not in html
    assert ddb_requests.ops == ["BatchGetItem"]  # not a GetItem per user, never a Scan
    # one match goes straight to the page
    assert find(staff_client, email="tricia@")["Location"] == reverse("admin:staff_account", args=[patricia])


def test_an_exact_e_mail_wins_over_partial_matches(staff_client, moto_table) -> None:
    pat = customer("pat@example.com")
    customer("spat@example.com")
    assert find(staff_client, email="Pat@Example.com")["Location"] == reverse("admin:staff_account", args=[pat])
    assert "2 customers match" in find(staff_client, email="pat@example").content.decode()


def test_a_name_finds_the_customer(staff_client, moto_table) -> None:
    ada = customer("a.l@example.com", "Ada", "Lovelace")
    customer("ada.b@example.com", "Ada", "Byron")
    page = reverse("admin:staff_account", args=[ada])
    assert find(staff_client, email="lovelace")["Location"] == page
    assert find(staff_client, email="  ada   LOVE ")["Location"] == page  # every word, any field
    html = find(staff_client, email="ada").content.decode()
    assert "2 customers match" in html and "Ada Lovelace" in html and "Ada Byron" in html
    html = find(staff_client, email="ada smith").content.decode()
    assert "No customer with a billing account has that e-mail or name." in html


def test_many_matches_are_capped_and_say_so(staff_client, moto_table, ddb_requests) -> None:
    from billing.staff.lookup import MAX_MATCHES

    for n in range(MAX_MATCHES + 3):
        customer(f"member{n:02d}@club.example")
    ddb_requests.reset()
    html = find(staff_client, email="club.example").content.decode()
    assert f"{MAX_MATCHES} customers match" in html
    assert 'data-testid="lookup-more"' in html
    assert ddb_requests.ops == ["BatchGetItem"]
    assert 'data-testid="lookup-more"' not in find(staff_client, email="member0").content.decode()


@pytest.mark.parametrize("query, error", [
    ({}, None),
    ({"email": " "}, "Give an e-mail or name, an account id or a subscription id."),
    ({"sub_id": "a#b"}, "Ids never contain"),
])
def test_look_up_errors(staff_client, moto_table, query, error) -> None:
    response = find(staff_client, **query)
    assert response.status_code == 200
    if error:
        assert error in response.content.decode()
