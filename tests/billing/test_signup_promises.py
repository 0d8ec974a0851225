"""Sign-up's promises (docs/PORTAL.md, "Sign-up"): a sign-up that stopped half-way (a
log-in without a billing account) is finished by the next one, and opening an account is
safe to repeat; the pages never tell which addresses are known: sign-up and password reset
answer the same page whether the address has an account, a log-in only, or nothing, and the
owner of a known address is told by e-mail."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.test import Client

from billing import access
from billing.actions import accounts
from billing.views.auth_pages import SIGNUP_LINK_DAYS, signup_link_token
from tests.builders import PASSWORD
from tests.signup import confirm_link, sign_up

pytestmark = pytest.mark.django_db

SIGN_UP = {"password1": PASSWORD, "password2": PASSWORD}


def half_way(email: str):
    """The state a sign-up that stopped after making the log-in leaves: no billing account."""
    return get_user_model().objects.create_user(email, email=email, password=PASSWORD)


def visible(response) -> str:
    """The page as a visitor sees it, without what differs on every answer (the CSRF token)."""
    html = response.content.decode()
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)


def test_a_sign_up_that_stopped_after_the_log_in_is_finished_by_the_next(moto_table, products, mailoutbox) -> None:
    user = half_way("half@example.com")
    client = Client()
    response = client.post("/signup/", {"email": "Half@Example.com", **SIGN_UP})
    assert response.status_code == 200 and 'data-testid="signup-check-email"' in response.content.decode()
    account_id = access.get_account_id_for_user(user.pk)
    assert account_id, "the sign-up did not finish the account"
    assert access.get_account(account_id).Email == "half@example.com"
    [message] = mailoutbox
    assert message.to == ["half@example.com"] and "/login/" in message.body and "/password/reset/" in message.body
    # its owner logs in and finds that account, not a new one
    assert client.post("/login/", {"username": "half@example.com", "password": PASSWORD}).status_code == 302
    assert client.get("/subscribe/").status_code == 200
    assert client.session["account_id"] == account_id
    assert get_user_model().objects.filter(username__iexact="half@example.com").count() == 1


def test_opening_an_account_twice_gives_the_same_account(moto_table) -> None:
    """A crash after the account was made, before the page answered: the retry (or the
    first portal page) finds it rather than making a second account of the same user."""
    user = half_way("twice@example.com")
    first = accounts.open_account("twice@example.com", user_id=user.pk)
    again = accounts.open_account("twice@example.com", user_id=user.pk)
    assert again.account_id == first.account_id
    assert access.get_account_id_for_user(user.pk) == first.account_id


def test_a_link_without_its_account_gets_the_account(moto_table) -> None:
    user = half_way("linked@example.com")
    access.link_user(user.pk, "acc0000000000001", "linked@example.com")
    account = accounts.open_account("linked@example.com", user_id=user.pk)
    assert account.account_id == "acc0000000000001" and access.get_account("acc0000000000001") is not None


def test_a_sign_up_with_a_known_address_never_says_so_on_the_page(moto_table, products, customer,
                                                                    mailoutbox) -> None:
    half_way("half@example.com")
    known = visible(Client().post("/signup/", {"email": "ann@example.com", **SIGN_UP}))
    halfway = visible(Client().post("/signup/", {"email": "half@example.com", **SIGN_UP}))
    assert known.replace("ann@example.com", "X") == halfway.replace("half@example.com", "X")
    assert "already" not in known and "exists" not in known
    assert [m.to for m in mailoutbox] == [["ann@example.com"], ["half@example.com"]]
    assert all("You already have an account with this address" in m.body for m in mailoutbox)


def test_password_reset_answers_the_same_whatever_the_address(moto_table, products, customer, mailoutbox) -> None:
    half_way("half@example.com")
    answers = [Client().post("/password/reset/", {"email": email})
               for email in ("ann@example.com", "half@example.com", "nobody@example.com")]
    assert {(a.status_code, a["Location"]) for a in answers} == {(302, "/password/reset/sent/")}
    pages = {visible(Client().get(a["Location"])) for a in answers}
    assert len(pages) == 1
    assert sorted(m.to[0] for m in mailoutbox) == ["ann@example.com", "half@example.com"]


# --- the address confirmed by e-mail before anything is made ------------------------------


def test_sign_up_answers_one_page_whatever_the_address(moto_table, products, customer, mailoutbox) -> None:
    """A new address, one with an account and one with a log-in only: the same page, nobody
    logged in; what differs goes to the address's mailbox."""
    half_way("half@example.com")
    answers = {email: Client().post("/signup/", {"email": email, **SIGN_UP})
               for email in ("new@example.com", "ann@example.com", "half@example.com")}
    assert {a.status_code for a in answers.values()} == {200}
    pages = {visible(a).replace(email, "X") for email, a in answers.items()}
    assert len(pages) == 1 and 'data-testid="signup-check-email"' in pages.pop()
    assert not any("_auth_user_id" in a.wsgi_request.session for a in answers.values())
    assert not get_user_model().objects.filter(username="new@example.com").exists()  # nothing made yet
    by_address = {m.to[0]: m for m in mailoutbox}
    assert "/signup/confirm/" in by_address["new@example.com"].body
    for known in ("ann@example.com", "half@example.com"):
        assert "You already have an account" in by_address[known].body
        assert "/signup/confirm/" not in by_address[known].body


def test_the_link_lets_its_owner_choose_a_password_and_opens_the_account(moto_table, products,
                                                                         mailoutbox) -> None:
    client = Client()
    client.post("/signup/", {"email": "New@Example.com"})
    link = confirm_link("new@example.com")
    page = client.get(link)
    assert page.status_code == 200 and "new@example.com" in page.content.decode()
    assert not get_user_model().objects.filter(username="new@example.com").exists()  # a look opens nothing
    response = client.post(link, {"password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/subscribe/"
    user = get_user_model().objects.get(username="new@example.com")
    assert user.check_password(PASSWORD)
    assert client.session["account_id"] == access.get_account_id_for_user(user.pk)
    # used: the link logs no one in again, it sends to the log-in
    again = Client().get(link)
    assert again.status_code == 302 and again["Location"].startswith("/login/")


@pytest.mark.parametrize(("data", "message"), [
    ({"password1": PASSWORD, "password2": PASSWORD + "x"}, "do not match"),
    ({"password1": "short", "password2": "short"}, "too short"),
])
def test_the_link_page_checks_the_password(moto_table, mailoutbox, data, message) -> None:
    client = Client()
    client.post("/signup/", {"email": "new@example.com"})
    response = client.post(confirm_link("new@example.com"), data)
    assert response.status_code == 200 and message in response.content.decode()
    assert not get_user_model().objects.filter(username="new@example.com").exists()


def test_a_link_expires_and_cannot_be_changed(moto_table, mailoutbox) -> None:
    Client().post("/signup/", {"email": "new@example.com"})
    link = confirm_link("new@example.com")
    token = link.split("/")[-2]
    forged = signup_link_token("other@example.com", "en", "")[: -len(token.rsplit(":", 1)[1])] + token.rsplit(":", 1)[1]
    with time_machine.travel(datetime.now(UTC) + timedelta(days=SIGNUP_LINK_DAYS, seconds=1)):
        expired = Client().post(link, {"password1": PASSWORD, "password2": PASSWORD})
    changed = Client().post(f"/signup/confirm/{forged}/", {"password1": PASSWORD, "password2": PASSWORD})
    for answer in (expired, changed):
        assert answer.status_code == 400 and 'data-testid="signup-link-invalid"' in answer.content.decode()
    assert not get_user_model().objects.filter(username__in=["new@example.com", "other@example.com"]).exists()


def test_a_confirmation_stopped_after_the_log_in_is_finished_by_the_same_link(moto_table, products,
                                                                            mailoutbox) -> None:
    client = Client()
    client.post("/signup/", {"email": "new@example.com"})
    link = confirm_link("new@example.com")
    user = half_way("new@example.com")  # as a crash right after the log-in was made leaves it
    response = client.post(link, {"password1": PASSWORD + "2", "password2": PASSWORD + "2"})
    assert response.status_code == 302 and response["Location"] == "/subscribe/"
    user.refresh_from_db()
    assert user.check_password(PASSWORD + "2")
    assert client.session["account_id"] == access.get_account_id_for_user(user.pk)


def test_the_link_goes_on_to_the_page_the_sign_up_was_sent_from(moto_table, products, mailoutbox) -> None:
    assert sign_up(Client(), "shopper@example.com", next_page="/shop/checkout/")["Location"] == "/shop/checkout/"
    assert sign_up(Client(), "lost@example.com", next_page="https://evil.example/")["Location"] == "/subscribe/"
