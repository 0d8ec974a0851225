"""Sign up, log in, log out, password change and reset; the landing page; login_required."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.urls import reverse

from billing import access
from tests.builders import PASSWORD
from tests.signup import confirm_link

pytestmark = pytest.mark.django_db


def test_landing_page_for_visitors_costs_no_dynamodb_request(client, moto_table, ddb_requests) -> None:
    response = client.get("/")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'href="/login/"' in html and 'href="/signup/"' in html
    assert ddb_requests.total == 0


PROTECTED = ["/subscribe/", "/subscribe/confirm/", "/receipts/", "/receipts/export.csv",
             "/subscriptions/abc/", "/subscriptions/abc/payment-day/", "/subscriptions/abc/card/",
             "/subscriptions/abc/cancel/", "/subscriptions/abc/cancelled/", "/receipts/REC%23x/",
             "/password/change/"]


@pytest.mark.parametrize("url", PROTECTED)
def test_pages_need_a_login(client, moto_table, url) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def test_sign_up_creates_user_account_and_session(client, moto_table, ddb_requests, mailoutbox) -> None:
    # the address confirmed by the link its e-mail carries, then the password chosen there
    client.post("/signup/", {"email": "New@Example.com"})
    ddb_requests.reset()
    response = client.post(confirm_link("new@example.com"), {"password1": PASSWORD, "password2": PASSWORD})
    assert ddb_requests.by_name() == {"TransactWriteItems": 1}  # the account and its user link, both or neither
    assert response.status_code == 302 and response["Location"] == reverse("subscribe")
    user = get_user_model().objects.get(username="new@example.com")
    assert user.email == "new@example.com" and user.check_password(PASSWORD)
    account_id = access.get_account_id_for_user(user.pk)
    assert account_id and client.session["account_id"] == account_id
    assert access.get_account(account_id).Email == "new@example.com"
    # random ids: never derived from the e-mail
    assert "new" not in account_id


# The password's errors are on the confirmation link's page (test_signup_promises).
@pytest.mark.parametrize(("data", "field", "message"), [
    ({"email": "not-an-email"}, "email", "valid email"),
    ({"email": ""}, "email", "required"),
])
def test_sign_up_errors_are_shown(client, moto_table, data, field, message) -> None:
    response = client.post("/signup/", data)
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors[field])
    assert 'class="invalid-feedback"' in response.content.decode() or "is-invalid" in response.content.decode()
    assert not get_user_model().objects.filter(username="x@example.com").exists()


def test_sign_up_with_an_existing_email_reveals_nothing_and_mails_its_owner(client, customer, mailoutbox) -> None:
    """The page does not say the address has an account (anyone could learn who uses
    rpay); it asks to check the e-mail, as a password reset does, and the owner is told
    there. No second account, no log-in, the password typed unused."""
    response = client.post("/signup/", {"email": "ANN@example.com", "password1": PASSWORD, "password2": PASSWORD})
    html = response.content.decode()
    assert response.status_code == 200 and 'data-testid="signup-check-email"' in html
    assert "already" not in html and "exists" not in html
    assert get_user_model().objects.filter(username__iexact="ann@example.com").count() == 1
    assert "_auth_user_id" not in client.session
    [message] = mailoutbox
    assert message.to == ["ann@example.com"] and message.subject == "You already have an rpay account"
    assert "You already have an account with this address" in message.body
    assert "/login/" in message.body and "/password/reset/" in message.body


def test_log_in_puts_the_account_in_the_session_with_one_get(moto_table, products, ddb_requests) -> None:
    user = get_user_model().objects.create_user("cy@example.com", email="cy@example.com", password=PASSWORD)
    account = access.create_account("cy@example.com", user_id=user.pk)
    client = Client()
    ddb_requests.reset()
    response = client.post("/login/", {"username": "cy@example.com", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.session["account_id"] == account.account_id
    assert ddb_requests.ops == ["GetItem"]


def test_log_in_with_a_wrong_password(client, customer) -> None:
    response = client.post("/login/", {"username": customer.email, "password": "nope"})
    assert response.status_code == 200
    assert "correct" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_staff_without_an_account_go_to_the_admin(client, moto_table) -> None:
    get_user_model().objects.create_user("staff@example.com", email="staff@example.com", password=PASSWORD,
                                         is_staff=True)
    response = client.post("/login/", {"username": "staff@example.com", "password": PASSWORD})
    assert response["Location"] == "/admin/"
    assert client.get("/")["Location"] == "/admin/"


def test_customer_without_an_account_gets_one(client, moto_table, products) -> None:
    # sign-up interrupted between the user and the account: the portal repairs it
    user = get_user_model().objects.create_user("half@example.com", email="half@example.com", password=PASSWORD)
    client.force_login(user)
    assert client.get("/").status_code == 200
    assert access.get_account_id_for_user(user.pk) == client.session["account_id"]


def test_log_out_is_a_post(customer) -> None:
    assert customer.client.get("/logout/").status_code == 405
    response = customer.client.post("/logout/")
    assert response.status_code == 302
    assert "_auth_user_id" not in customer.client.session
    assert customer.client.get("/subscribe/").status_code == 302


def test_every_form_has_a_csrf_token(customer) -> None:
    for url in ["/subscribe/", "/password/change/"]:
        assert "csrfmiddlewaretoken" in customer.client.get(url).content.decode()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(get_user_model().objects.get(username=customer.email))
    assert strict.post("/subscribe/", {}).status_code == 403


def test_password_change(customer) -> None:
    bad = customer.client.post("/password/change/", {"old_password": "wrong", "new_password1": "x",
                                                     "new_password2": "y"})
    assert bad.status_code == 200 and "incorrectly" in bad.content.decode()
    new = "another-Long-pass-99"
    ok = customer.client.post("/password/change/", {"old_password": PASSWORD, "new_password1": new,
                                                    "new_password2": new})
    assert ok["Location"] == reverse("password_change_done")
    assert get_user_model().objects.get(username=customer.email).check_password(new)
    assert customer.client.get("/").status_code == 200  # still logged in


def test_password_reset_by_mail(client, customer) -> None:
    response = client.post("/password/reset/", {"email": customer.email})
    assert response["Location"] == reverse("password_reset_done")
    assert len(mail.outbox) == 1 and mail.outbox[0].to == [customer.email]
    assert mail.outbox[0].subject == "Reset your rpay password"
    link = re.search(r"https?://[^/]+(/password/reset/\S+/)", mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    assert form_page.status_code == 200 and form_page.context["validlink"]
    new = "reset-Long-pass-77"
    done = client.post(form_page.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert done["Location"] == reverse("password_reset_complete")
    assert get_user_model().objects.get(username=customer.email).check_password(new)


def test_password_reset_for_an_unknown_email_sends_nothing(client, moto_table) -> None:
    response = client.post("/password/reset/", {"email": "nobody@example.com"})
    assert response.status_code == 302 and mail.outbox == []


def test_the_log_in_form_asks_for_an_email(client, moto_table) -> None:
    html = client.get("/login/").content.decode()
    assert 'type="email" name="username"' in html and re.search(r"E-mail<span", html) and "Username" not in html
    assert 'data-testid="login-for-checkout"' not in html
    from_checkout = client.get("/login/?next=/shop/checkout/").content.decode()
    assert "Log in to check out" in from_checkout
