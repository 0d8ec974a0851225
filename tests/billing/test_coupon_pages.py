"""Coupons on the pages: the subscribe form's code (field errors, the confirm page's
signed amounts), the receipt page and e-mail, the staff's coupon pages and the staff's
"give a coupon" action, each behind its permission."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail

from billing import access
from billing.models import COUPON_EVENTS_ACCOUNT, AuditAction
from billing.rules.coupons import discount
from billing.rules.schedule import first_period, period_amount
from billing.views.common import SESSION_PENDING
from core.pages import today
from tests.builders import GOOD_CARD, TEST_CARD, fresh, make_user, subscribe

pytestmark = pytest.mark.django_db

QUOTE = re.compile(r'name="quote" value="([^"]+)"')


def dollars(minor: int) -> str:
    return f"${minor // 100}.{minor % 100:02d}"


def post_subscribe(customer, **changes):
    data = {"product": "NEWS-DAILY", "payment_day": "31", **GOOD_CARD, **changes}
    return customer.client.post("/subscribe/", data)


def coupon(code: str = "WELCOME", **kwargs):
    kwargs.setdefault("percent_off", None if "amount_off" in kwargs else 25)
    return access.create_coupon(code, actor="staff@example.com", **kwargs)


def first_amounts(percent: int) -> tuple[int, int]:
    start, end = first_period(31, today())
    price = period_amount(999, 31, start, end)
    return price, discount(price, percent_off=percent)


def test_a_customer_subscribes_with_a_coupon_and_sees_the_signed_amounts(customer) -> None:
    coupon(duration="forever")
    response = post_subscribe(customer, coupon=" welcome ")
    assert response.status_code == 302, response.content.decode()[:2000]
    confirm = customer.client.get("/subscribe/confirm/")
    html = confirm.content.decode()
    price, off = first_amounts(25)
    assert 'data-testid="first-price">' + dollars(price) in html
    assert "Discount (WELCOME)" in html and f"−{dollars(off)}" in html
    assert 'data-testid="first-charge">' + dollars(price - off) in html
    assert f"Confirm and pay {dollars(price - off)}" in html
    done = customer.client.post("/subscribe/confirm/", {"quote": QUOTE.search(html)[1]})
    assert done.status_code == 302
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.CouponCode == "WELCOME" and sub.CouponPercentOff == 25
    assert access.get_coupon("WELCOME").Uses == 1
    start = first_period(31, today())[0]
    [receipt] = access.get_receipts_by_account(customer.account_id, start, start)
    assert (receipt.ProcessedAmount, receipt.DiscountAmount, receipt.CouponCode) == (price - off, off, "WELCOME")
    receipt_mail = next(m for m in mail.outbox if "Invoice" in m.subject)  # a charge's receipt is its invoice
    # the e-mail writes its amounts as the pages do
    assert "WELCOME" in receipt_mail.body and dollars(price - off) in receipt_mail.body
    assert dollars(off) in receipt_mail.body
    page = customer.client.get(f"/receipts/{receipt.url_id}/").content.decode()
    assert "Discount (WELCOME)" in page and dollars(off) in page and dollars(price) in page


@pytest.mark.parametrize(("code", "terms", "error"), [
    ("NOPE", None, "There is no coupon NOPE."),
    # dates as days from the day the test runs (not from the day the tests were collected)
    ("OLD", {"valid_until": -1}, "The coupon OLD has expired."),
    ("SOON", {"valid_from": 1}, "The coupon SOON is not valid yet."),
    ("EURO", {"amount_off": 100, "currency": "EUR"}, "for another currency"),
    ("ONE", {"max_uses": 1}, "has been used as many times as it may be"),
])
def test_a_coupon_that_cannot_be_used_is_a_field_error(customer, other_customer, code, terms, error) -> None:
    if terms is not None:
        terms = {name: today() + timedelta(days=value) if name.startswith("valid_") else value
                 for name, value in terms.items()}
        made = coupon(code, **terms)
        if terms.get("max_uses"):  # its one use taken by another customer
            account = access.get_account(other_customer.account_id)
            access.create_subscription(account, sku="NEWS-DAILY", payment_day=15, amount=999, currency="USD",
                                       card=TEST_CARD, today=today(), reminder_days_before=7, coupon=made)
    response = post_subscribe(customer, coupon=code.lower())
    assert response.status_code == 200
    html = response.content.decode()
    assert error in html and 'id="id_coupon"' in html
    assert SESSION_PENDING not in customer.client.session


def test_a_coupon_used_up_between_the_steps_is_not_charged(customer, other_customer) -> None:
    made = coupon(max_uses=1)
    assert post_subscribe(customer, coupon="WELCOME").status_code == 302
    account = access.get_account(other_customer.account_id)
    access.create_subscription(account, sku="NEWS-DAILY", payment_day=15, amount=999, currency="USD",
                               card=TEST_CARD, today=today(), reminder_days_before=7, coupon=made)
    confirm = customer.client.get("/subscribe/confirm/")
    assert confirm.status_code == 302 and confirm["Location"].startswith("/subscribe/?")
    assert access.get_subscriptions_by_account(customer.account_id) == []


# --- staff ------------------------------------------------------------------------------


def staff_client(client, **kwargs):
    user = make_user(kwargs.pop("name", "clerk@example.com"), staff=True, **kwargs)
    client.force_login(user)
    return client


COUPON_FORM = {"code": "spring-10", "percent_off": "10", "amount_off": "", "currency": "", "duration": "repeating",
               "duration_payments": "3", "max_uses": "100", "valid_from": "", "valid_until": ""}


def test_catalog_staff_make_a_coupon_and_the_list_is_one_query(client, moto_table, ddb_requests) -> None:
    staff_client(client, roles=["support", "catalog"])  # the list is view_billing's, making one catalog's
    response = client.post("/admin/staff/coupons/add/", COUPON_FORM)
    assert response.status_code == 302, response.content.decode()[:3000]
    made = access.get_coupon("SPRING-10")
    assert (made.PercentOff, made.Duration, made.DurationPayments, made.MaxUses) == (10, "repeating", 3, 100)
    [event] = access.get_events_by_account(COUPON_EVENTS_ACCOUNT)
    assert event.Action == AuditAction.COUPON_CREATED and event.Actor == "clerk@example.com"
    ddb_requests.reset()
    page = client.get("/admin/staff/coupons/")
    assert page.status_code == 200 and "SPRING-10" in page.content.decode()
    assert ddb_requests.ops == ["Query"]
    again = client.post("/admin/staff/coupons/add/", COUPON_FORM)
    assert again.status_code == 200 and "already exists" in again.content.decode()


def test_a_coupon_form_needs_one_kind_of_discount_and_a_currency_for_an_amount(client, moto_table) -> None:
    staff_client(client, roles=["catalog"])
    both = client.post("/admin/staff/coupons/add/", {**COUPON_FORM, "amount_off": "5.00", "currency": "USD"})
    assert "either a percentage or an amount off" in both.content.decode()
    no_currency = client.post("/admin/staff/coupons/add/", {**COUPON_FORM, "percent_off": "", "amount_off": "5.00"})
    assert "An amount off needs a currency" in no_currency.content.decode()
    bad = client.post("/admin/staff/coupons/add/", {**COUPON_FORM, "code": "TEN OFF"})
    assert bad.status_code == 200
    assert access.list_coupons() == []
    amount = client.post("/admin/staff/coupons/add/", {**COUPON_FORM, "percent_off": "", "amount_off": "5.00",
                                                       "currency": "usd", "duration": "once"})
    assert amount.status_code == 302
    assert (access.get_coupon("SPRING-10").AmountOff, access.get_coupon("SPRING-10").Currency) == (500, "USD")


def test_staff_edit_and_end_a_coupon(client, moto_table) -> None:
    staff_client(client, roles=["catalog"])
    coupon("SPRING", max_uses=5)
    edited = client.post("/admin/staff/coupons/SPRING/edit/", {"max_uses": "7", "valid_from": "",
                                                                "valid_until": "2099-12-31"})
    assert edited.status_code == 302
    assert (access.get_coupon("SPRING").MaxUses, access.get_coupon("SPRING").ValidUntil) == (7, "2099-12-31")
    assert client.get("/admin/staff/coupons/SPRING/end/").status_code == 200
    assert client.post("/admin/staff/coupons/SPRING/end/").status_code == 302
    assert access.get_coupon("SPRING").Status == "ended"
    actions = sorted(e.Action for e in access.get_events_by_account(COUPON_EVENTS_ACCOUNT))
    assert actions == [AuditAction.COUPON_CREATED, AuditAction.COUPON_ENDED, AuditAction.COUPON_UPDATED]


def test_support_may_list_coupons_but_not_make_edit_or_end_them(client, moto_table) -> None:
    staff_client(client, roles=["support"])
    coupon("SPRING")
    assert client.get("/admin/staff/coupons/").status_code == 200
    assert client.post("/admin/staff/coupons/add/", COUPON_FORM).status_code == 403
    assert client.post("/admin/staff/coupons/SPRING/edit/", {"max_uses": "1"}).status_code == 403
    assert client.post("/admin/staff/coupons/SPRING/end/").status_code == 403
    assert access.get_coupon("SPRING").Status == "active" and access.get_coupon("SPRING-10") is None


def test_finance_gives_a_coupon_to_a_live_subscription_and_support_cannot(client, customer) -> None:
    sub = subscribe(customer, on=today() - timedelta(days=3), day=(today() - timedelta(days=3)).day)
    access.set_schedule(fresh(sub), next_payment=today() + timedelta(days=10), last_payment=today() - timedelta(days=3),
                        next_reminder=today() + timedelta(days=3), last_reminder=today() - timedelta(days=3))
    coupon("LOYAL", percent_off=50, duration="once")
    url = f"/admin/staff/accounts/{customer.account_id}/subscriptions/{sub.sub_id}/coupon/"
    staff_client(client, roles=["support"], name="support@example.com")
    assert client.post(url, {"code": "LOYAL"}).status_code == 403
    client.logout()
    staff_client(client, roles=["finance"], name="finance@example.com")
    assert client.get(url).status_code == 200
    refused = client.post(url, {"code": "NOPE"})
    assert refused.status_code == 200 and "There is no coupon NOPE." in refused.content.decode()
    done = client.post(url, {"code": "loyal"})
    assert done.status_code == 302
    after = fresh(sub)
    assert (after.CouponCode, after.CouponPercentOff, after.CouponPaymentsLeft) == ("LOYAL", 50, 1)
    assert access.get_coupon("LOYAL").Uses == 1
    [event] = [e for e in access.get_events_by_account(customer.account_id) if e.Action == AuditAction.COUPON_APPLIED]
    assert event.Actor == "finance@example.com"


def test_a_coupon_given_from_a_page_drawn_before_another_change_is_not_given(client, customer) -> None:
    sub = subscribe(customer, on=today() - timedelta(days=3), day=(today() - timedelta(days=3)).day)
    sub = access.set_schedule(fresh(sub), next_payment=today() + timedelta(days=10),
                              last_payment=today() - timedelta(days=3), next_reminder=today() + timedelta(days=3),
                              last_reminder=today() - timedelta(days=3))
    coupon("LOYAL", percent_off=50, duration="once")
    url = f"/admin/staff/accounts/{customer.account_id}/subscriptions/{sub.sub_id}/coupon/"
    staff_client(client, roles=["finance"], name="finance@example.com")
    shown = fresh(sub).Version
    assert f'name="version" value="{shown}"' in client.get(url).content.decode()
    access.change_payment_day(fresh(sub), 20, actor="customer")  # meanwhile, in another tab
    response = client.post(url, {"code": "LOYAL", "version": shown})
    assert response.status_code == 409 and "This changed since you opened the page." in response.content.decode()
    assert response.context["form"]["code"].value() == "LOYAL"  # what was typed is kept
    assert fresh(sub).CouponCode is None and access.get_coupon("LOYAL").Uses == 0


def test_a_coupon_edit_drawn_before_another_edit_saves_nothing(client, moto_table) -> None:
    staff_client(client)
    coupon("SPRING")
    url = "/admin/staff/coupons/SPRING/edit/"
    import re

    [version] = re.findall(r'name="version" value="([^"]+)"', client.get(url).content.decode())
    assert client.post(url, {"max_uses": "50", "version": version}).status_code == 302  # tab 1
    response = client.post(url, {"max_uses": "7", "version": version})  # tab 2, drawn before
    html = response.content.decode()
    assert response.status_code == 409 and "This changed since you opened the page." in html
    assert "limit 50" in html and response.context["form"]["max_uses"].value() == "7"
    assert access.get_coupon("SPRING").MaxUses == 50
