"""The add-ons pages: the customer's list (theirs, and those they may add), the confirm step
showing the next payment the run will then take, a stale confirm changing nothing (409),
another customer's 404, the subscription page's words; the staff page for the finance
role only."""

from __future__ import annotations

from datetime import date

import time_machine
from django.urls import reverse

from billing import access
from billing.models import AuditAction
from billing.operations import payments
from billing.operations.outcomes import PaymentStatus
from billing.rules.add_ons import add_ons_of
from tests.builders import PASSWORD, card, fresh, make_customer, make_subscription, make_user

MADE, DAY = date(2027, 3, 10), date(2027, 3, 25)


def paid_plan(customer):
    """Daily News, $9.99 a month, made on 10 March (payment day 10): paid through 9 April."""
    access.create_product("STORAGE", "Extra storage", 300, "USD", add_on=True)
    with time_machine.travel("2027-03-10 12:00Z", tick=False):
        sub = make_subscription(access.get_account(customer.account_id), payment_day=10, today=MADE, card=card())
        assert payments.take_first_payment(sub, today=MADE).status == PaymentStatus.PAID
    return fresh(sub)


def at(day: date):
    return time_machine.travel(f"{day.isoformat()} 12:00Z", tick=False)


def log_in(customer) -> None:
    assert customer.client.post("/login/", {"username": customer.email, "password": PASSWORD}).status_code == 302


def test_the_customer_adds_and_removes_an_add_on(customer) -> None:
    sub = paid_plan(customer)
    url = f"/subscriptions/{sub.sub_id}/add-ons/"
    with at(DAY):
        log_in(customer)
        assert 'data-testid="add-ons-link"' in customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        page = customer.client.get(url).content.decode()
        # the plan's own product and another currency's are not offered
        assert "Extra storage" in page and "$3.00 a month" in page and "Tea from Japan" not in page
        assert 'data-testid="no-add-ons"' in page
        asked = customer.client.post(url, {"action": "add", "price": "price_default_STORAGE", "version": sub.Version})
        text = " ".join(asked.content.decode().split())
        assert "Extra storage, $3.00 a month, is included in your payments from your next one, on 10 April 2027. " \
               "Nothing is charged now." in text
        assert "Your next payment, on 10 April 2027, is $12.99." in text
        assert asked.context["amount_shown"] == payments.next_charge(fresh(sub)).amount + 300
        assert add_ons_of(fresh(sub)) == []  # nothing written by the question
        done = customer.client.post(url, {"action": "add", "price": "price_default_STORAGE", "version": sub.Version,
                                          "amount": asked.context["amount_shown"], "step": "confirm"}, follow=True)
        shown = " ".join(done.content.decode().split())
        assert "Extra storage is added: your payments include it from your next one, on 10 April 2027." in shown
        assert "Extra storage: $3.00 a month, from 10 Apr 2027" in shown
        assert "$12.99" in shown
        # what the page said is what the run takes
        assert payments.next_charge(fresh(sub)).amount == asked.context["amount_shown"]
        # the same confirm again (a double click): stale, nothing changed twice
        again = customer.client.post(url, {"action": "add", "price": "price_default_STORAGE", "version": sub.Version,
                                           "amount": asked.context["amount_shown"], "step": "confirm"})
        assert again.status_code == 409
        assert int(fresh(sub).PaymentAmount) == 1299

        current = fresh(sub)
        removing = customer.client.post(url, {"action": "remove", "price": "price_default_STORAGE",
                                              "version": current.Version})
        assert "Your next payment, on 10 April 2027, is $9.99." in removing.content.decode()
        customer.client.post(url, {"action": "remove", "price": "price_default_STORAGE", "version": current.Version,
                                   "amount": removing.context["amount_shown"], "step": "confirm"})
    assert int(fresh(sub).PaymentAmount) == 999 and add_ons_of(fresh(sub)) == []


def test_another_customer_gets_a_404(customer) -> None:
    sub = paid_plan(customer)
    other = make_customer("bob@example.com")
    with at(DAY):
        assert other.client.post("/login/", {"username": other.email, "password": PASSWORD}).status_code == 302
        assert other.client.get(f"/subscriptions/{sub.sub_id}/add-ons/").status_code == 404


def test_staff_with_the_finance_role_change_add_ons_others_may_not(customer, client) -> None:
    sub = paid_plan(customer)
    url = reverse("admin:staff_add_ons", args=[customer.account_id, sub.sub_id])
    with at(DAY):
        client.force_login(make_user("support@example.com", staff=True, roles=["support"]))
        assert client.get(url).status_code == 403
        client.force_login(make_user("money@example.com", staff=True, money=True))
        page = client.get(url).content.decode()
        assert "Extra storage: 3.00 USD a month" in page and "9.99 USD now" in page
        done = client.post(url, {"price": "price_default_STORAGE", "version": sub.Version})
        assert done.status_code == 302
        account = client.get(done.url).content.decode()
        assert "Extra storage is added from the next payment" in account and "12.99 USD a period" in account
        assert 'data-testid="staff-remove-add-on"' in account
        # the subscription's prices: the plan's part, then the add-on's
        assert "$9.99 a month" in account and "Add-on: Extra storage: $3.00 a month, from 2027-04-10" in account
        removed = client.post(reverse("admin:staff_remove_add_on", args=[customer.account_id, sub.sub_id]),
                              {"price": "price_default_STORAGE", "version": fresh(sub).Version})
        assert removed.status_code == 302
    assert int(fresh(sub).PaymentAmount) == 999
    actions = [e for e in access.get_events_by_account(customer.account_id)
               if e.Action in (AuditAction.ADD_ON_ADDED, AuditAction.ADD_ON_REMOVED)]
    assert len(actions) == 2 and all(e.Actor == "money@example.com" for e in actions)


def test_the_page_reads_the_catalogue_once_however_many_add_ons_it_offers(customer, ddb_requests) -> None:
    """The offers come from one Query of the catalogue (products and prices together),
    never a read per product or price offered."""
    sub = paid_plan(customer)

    def page_reads() -> dict:
        with at(DAY):
            log_in(customer)
            ddb_requests.reset()
            assert customer.client.get(f"/subscriptions/{sub.sub_id}/add-ons/").status_code == 200
        return dict(ddb_requests.by_name())

    one = page_reads()
    for n in range(3):
        access.create_product(f"MORE-{n}", f"More {n}", 100 + n, "USD", add_on=True)
    assert page_reads() == one
    assert one == {"Query": 2}  # the subscription (its key holds its SKU), and the catalogue


def test_only_products_sold_as_add_ons_are_offered(customer, client) -> None:
    """The catalogue's staff say which products are sold as add-ons (the product's form);
    the customer's page offers those alone."""
    sub = paid_plan(customer)  # Extra storage is one; Daily News, Tea and the gym are not
    with at(DAY):
        client.force_login(make_user("catalog@example.com", staff=True, roles=["catalog"]))
        made = client.post(reverse("admin:staff_product_add"), {
            "sku": "ARCHIVE", "name": "The archive", "price": "2.50", "currency": "USD", "add_on": "on"})
        assert made.status_code == 302, made.content.decode()[:500]
        client.post(reverse("admin:staff_product_add"), {"sku": "PLAIN", "name": "Sold alone", "price": "2.00",
                                                         "currency": "USD"})
        log_in(customer)
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/add-ons/").content.decode()
    assert access.get_product("ARCHIVE").sold_as_add_on and not access.get_product("PLAIN").sold_as_add_on
    assert "The archive" in page and "Extra storage" in page
    assert "Sold alone" not in page and "Daily News" not in page.split("Add an add-on")[1]
