"""The switch pages: the customer's two steps (choose, then the signed amounts,
then switched), the downgrade said on the subscription's page, another customer's 404;
the staff page for the finance role only, charging off-session."""

from __future__ import annotations

from datetime import date

import time_machine
from django.urls import reverse

from billing import access
from billing.models import AuditAction
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from tests.builders import PASSWORD, card, fresh, make_subscription, make_user, receipts_of

DAY = date(2027, 3, 25)


def paid_subscription(customer):
    """Made on 10 March (payment day 10) and paid through 9 April."""
    for sku, name, amount in (("NEWS-PLUS", "Daily News Plus", 1999), ("NEWS-LITE", "Daily News Lite", 499)):
        access.create_product(sku, name, amount, "USD")
    with time_machine.travel("2027-03-10 12:00Z", tick=False):
        sub = make_subscription(access.get_account(customer.account_id), payment_day=10, today=date(2027, 3, 10),
                                card=card())
        assert payments.take_first_payment(sub, today=date(2027, 3, 10)).status == PaymentStatus.PAID
    return fresh(sub)


def log_in(customer) -> None:
    assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302


def test_the_customer_switches_up_seeing_the_amounts_first(customer) -> None:
    sub = paid_subscription(customer)
    url = f"/subscriptions/{sub.sub_id}/switch/"
    with time_machine.travel("2027-03-25 12:00Z", tick=False):
        log_in(customer)
        assert b"Switch product" in customer.client.get(f"/subscriptions/{sub.sub_id}/").content
        choose = customer.client.get(url)
        html = choose.content.decode()
        assert "Daily News Plus — $19.99 a month (upgrade: from today)" in html
        assert "Daily News Lite — $4.99 a month (from your next payment)" in html
        assert "Tea" not in html  # another currency
        quote = customer.client.post(url, {"sku": "NEWS-PLUS"})
        page = quote.content.decode()
        assert 'data-testid="switch-quote"' in page and "+$10.32" in page and "−$5.16" in page
        assert b"$5.16" in quote.content  # charged now: 16 of 31 days at $19.99, less the same at $9.99
        assert not receipts_of(sub)[0].Kind  # nothing happened yet
        form = quote.context["quote"]
        done = customer.client.post(url, {"sku": "NEWS-PLUS", "step": "confirm", "upgrade": "1",
                                          "charge": form.charge, "credit": form.credit}, follow=True)
    assert "You now have Daily News Plus" in done.content.decode()
    after = fresh(sub)
    assert after.SKU == "NEWS-PLUS" and after.PaymentAmount == 1999
    [switched] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    receipt_page = customer.client.get(f"/receipts/{switched.url_id}/")
    assert b'data-testid="receipt-switch"' in receipt_page.content


def test_a_downgrade_is_said_on_the_subscriptions_page(customer) -> None:
    sub = paid_subscription(customer)
    url = f"/subscriptions/{sub.sub_id}/switch/"
    with time_machine.travel("2027-03-25 12:00Z", tick=False):
        log_in(customer)
        quote = customer.client.post(url, {"sku": "NEWS-LITE"})
        assert "Nothing is charged or refunded now" in quote.content.decode()
        customer.client.post(url, {"sku": "NEWS-LITE", "step": "confirm", "upgrade": "0", "charge": 0, "credit": 0})
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
    assert 'data-testid="switch-pending"' in page and "10 April 2027" in page
    assert fresh(sub).SKU == "NEWS-LITE"


def test_stale_amounts_are_shown_again_not_charged(customer) -> None:
    sub = paid_subscription(customer)
    url = f"/subscriptions/{sub.sub_id}/switch/"
    with time_machine.travel("2027-03-25 12:00Z", tick=False):
        log_in(customer)
        again = customer.client.post(url, {"sku": "NEWS-PLUS", "step": "confirm", "upgrade": "1", "charge": 900,
                                           "credit": 500})
    assert again.status_code == 200 and "The amounts changed" in again.content.decode()
    assert fresh(sub).SKU != "NEWS-PLUS"


def test_another_customers_subscription_is_not_found(customer, other_customer) -> None:
    sub = paid_subscription(customer)
    with time_machine.travel("2027-03-25 12:00Z", tick=False):
        log_in(other_customer)
        url = f"/subscriptions/{sub.sub_id}/switch/"
        assert other_customer.client.get(url).status_code == 404
        assert other_customer.client.post(url, {"sku": "NEWS-PLUS"}).status_code == 404


def test_staff_with_the_finance_role_switch_others_may_not(customer, client) -> None:
    sub = paid_subscription(customer)
    url = reverse("admin:staff_switch", args=[customer.account_id, sub.sub_id])
    with time_machine.travel("2027-03-25 12:00Z", tick=False):
        client.force_login(make_user("support@example.com", staff=True, roles=["support"]))
        assert client.get(url).status_code == 403
        client.force_login(make_user("money@example.com", staff=True, money=True))
        shown = client.post(url, {"sku": "NEWS-PLUS"})
        assert "$5.16" in shown.content.decode() or "5.16" in shown.content.decode()
        data = {k: v for k, v in shown.context["form"].initial.items()}
        done = client.post(url, data, follow=True)
    assert "Switched to Daily News Plus" in done.content.decode()
    assert fresh(sub).SKU == "NEWS-PLUS"
    assert AuditAction.STAFF_SWITCH in [e.Action for e in access.get_events_by_account(customer.account_id)]


def test_a_switch_made_today_is_said_up_front(customer, client) -> None:
    sub = paid_subscription(customer)
    url = f"/subscriptions/{sub.sub_id}/switch/"
    with time_machine.travel("2027-03-25 12:00Z", tick=False):
        log_in(customer)
        customer.client.post(url, {"sku": "NEWS-LITE", "step": "confirm", "upgrade": "0", "charge": 0, "credit": 0})
        html = customer.client.get(url).content.decode()
        assert 'data-testid="switched-today"' in html and 'name="sku"' not in html  # before choosing, not after
        client.force_login(make_user("money@example.com", staff=True, money=True))
        staff = client.get(reverse("admin:staff_switch", args=[customer.account_id, sub.sub_id])).content.decode()
        assert "switched product today already" in staff and 'name="sku"' not in staff
    with time_machine.travel("2027-03-26 12:00Z", tick=False):
        log_in(customer)
        assert 'data-testid="switched-today"' not in customer.client.get(url).content.decode()


def test_staff_switch_with_no_product_in_the_currency_says_so(customer, client) -> None:
    account = access.get_account(customer.account_id)
    with time_machine.travel("2027-03-10 12:00Z", tick=False):
        sub = make_subscription(account, sku="GYM", payment_day=10, currency="GBP", amount=4500,
                                today=date(2027, 3, 10), card=card())
    client.force_login(make_user("money@example.com", staff=True, money=True))
    response = client.get(reverse("admin:staff_switch", args=[customer.account_id, sub.sub_id]))
    html = response.content.decode()
    assert response.status_code == 200 and "There is no other live product in GBP" in html
    assert "<select" not in html and 'type="submit"' not in html.split('data-testid="confirm-form"')[1]
