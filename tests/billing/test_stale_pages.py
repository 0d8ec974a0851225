"""A form drawn from something that changed since (another tab, another device) answers
"This changed since you opened the page" and shows it as it is now (409), drawn again
from the stored item: never a silent redirect, a dropped choice or a 404."""

from __future__ import annotations

import re
from datetime import date

import pytest

from billing import access
from billing.models import SubscriptionStatus
from tests.billing.test_portal_lifecycle import ON, on, paid_subscription
from tests.builders import GOOD_CARD, fresh

pytestmark = pytest.mark.django_db

CHANGED = "This changed since you opened the page"
MASTERCARD = {**GOOD_CARD, "card_number": "5555 5555 5555 4444", "exp_month": "6", "exp_year": "2031"}


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_keep_on_a_subscription_kept_in_another_tab_shows_it_kept(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{sub.sub_id}/cancel/", {"when": "period_end", "reason": "other",
                                                                      "version": sub.Version})
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        [shown_version] = re.findall(r'name="version" value="(\d+)"', page)  # the Keep button's form
        assert customer.client.post(f"/subscriptions/{sub.sub_id}/keep/",
                                    {"version": shown_version}).status_code == 302  # tab 1
        kept = fresh(sub)
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/keep/", {"version": shown_version})  # tab 2
        html = response.content.decode()
        assert response.status_code == 409
        assert any(m.startswith(CHANGED) for m in messages_of(response))
        assert "has ended" not in html and "Keep my subscription" not in html  # as it is now: kept
        assert len([e for e in access.get_events_by_account(sub.account_id) if e.Action == "subscription.kept"]) == 1
        assert fresh(sub).Version == kept.Version


def test_cancel_now_after_another_tab_cancelled_at_period_end_keeps_the_choice(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        url = f"/subscriptions/{sub.sub_id}/cancel/"
        customer.client.post(url, {"when": "period_end", "reason": "other", "version": sub.Version})  # tab 1
        response = customer.client.post(url, {"when": "now", "reason": "too_expensive", "comment": "sorry",
                                              "version": sub.Version})  # tab 2, drawn before
        html = response.content.decode()
        assert response.status_code == 409
        assert any(m.startswith(CHANGED) for m in messages_of(response))
        assert "Cancels on 14 March 2027" in html  # as it is now
        # the choice is kept: cancel now, with its refund, the reason and the comment
        form = response.context["form"]
        assert (form["when"].value(), form["reason"].value(), form["comment"].value()) == (
            "now", "too_expensive", "sorry")
        assert "refunded" in html and 'value="now"' in html
        current = fresh(sub)
        assert form["version"].value() == str(current.Version)
        assert current.CancelMode == "period_end"  # nothing done by the stale post
        # submitting it again ends it now
        done = customer.client.post(url, {"when": "now", "reason": "too_expensive", "version": current.Version})
        assert done.status_code == 302 and done["Location"].endswith(f"/subscriptions/{sub.sub_id}/cancelled/")
        ended = fresh(sub)
        assert (ended.Status, ended.CancelMode, ended.PaidThroughDate) == (SubscriptionStatus.CANCELLED, "now",
                                                                           ON.isoformat())


def test_make_default_on_a_card_removed_in_another_tab_shows_the_wallet(customer) -> None:
    customer.client.post("/wallet/add/", GOOD_CARD)
    customer.client.post("/wallet/add/", MASTERCARD)
    master = next(c for c in access.get_cards(customer.account_id) if c.Details.Last4 == "4444")
    assert customer.client.post(f"/wallet/{master.card_id}/remove/").status_code == 302  # tab 1
    customer.client.get("/wallet/")  # its messages shown
    for action in ("default", "remove"):  # tab 2, drawn before
        response = customer.client.post(f"/wallet/{master.card_id}/{action}/")
        html = response.content.decode()
        assert response.status_code == 409
        assert any(m.startswith(CHANGED) for m in messages_of(response))
        assert "Visa" in html and "4444" not in html  # the wallet as it is now
    replace = customer.client.get(f"/wallet/{master.card_id}/replace/")  # a Replace link from the old page
    assert replace.status_code == 409 and any(m.startswith(CHANGED) for m in messages_of(replace))
    assert [c.Details.Last4 for c in access.get_cards(customer.account_id)] == ["4242"]


def test_keep_after_the_paid_days_are_over_still_says_it_ended(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{sub.sub_id}/cancel/", {"when": "period_end", "reason": "other",
                                                                      "version": sub.Version})
        version = fresh(sub).Version
    with on(date(2027, 3, 15), customer):
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/keep/", {"version": version}, follow=True)
        assert "This subscription has ended: subscribe again to get it back." in messages_of(response)


def test_resume_from_a_tab_drawn_before_another_resumed_shows_it_resumed(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{sub.sub_id}/pause/", {"how": "open", "version": sub.Version})
        paused = fresh(sub)
        assert customer.client.post(f"/subscriptions/{sub.sub_id}/resume/",
                                    {"version": paused.Version}).status_code == 302  # tab 1
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/resume/", {"version": paused.Version})
        assert response.status_code == 409 and any(m.startswith(CHANGED) for m in messages_of(response))
        assert "Resume now" not in response.content.decode()
        assert len([e for e in access.get_events_by_account(sub.account_id)
                    if e.Action == "subscription.resumed"]) == 1


# --- staff ---------------------------------------------------------------------------------


@pytest.fixture
def staff_customer(moto_table):
    from tests.builders import make_customer_with_history

    return make_customer_with_history()


@pytest.fixture
def all_staff(client):
    from tests.builders import make_user

    client.force_login(make_user("all@rpay.localhost", staff=True, money=True))
    return client


def test_staff_confirm_pages_drawn_from_an_older_subscription_do_nothing(all_staff, staff_customer) -> None:
    from django.urls import reverse

    sub = staff_customer.sub
    args = [staff_customer.account_id, sub.sub_id]
    page = all_staff.get(reverse("admin:staff_cancel", args=args)).content.decode()
    [version] = re.findall(r'name="version" value="(\d+)"', page)
    # the customer (another tab) changes the day meanwhile
    access.change_payment_day(fresh(sub), 20, actor="customer")
    for name, data in (("staff_cancel", {}), ("staff_payment_day", {"payment_day": 25})):
        response = all_staff.post(reverse(f"admin:{name}", args=args), {**data, "version": version})
        html = response.content.decode()
        assert response.status_code == 409, name
        assert CHANGED in html and "Nothing was done: here it is as it is now." in html, name
        assert f'name="version" value="{fresh(sub).Version}"' in html, name  # drawn again, as it is now
    now = fresh(sub)
    assert (now.Status, now.PaymentDay, now.PausedFrom) == ("active", 20, None)


def test_a_pause_from_a_stale_page_keeps_the_choice(customer) -> None:
    with on(ON, customer):
        sub = paid_subscription(customer)
        customer.client.post(f"/subscriptions/{sub.sub_id}/payment-day/", {"payment_day": 20,
                                                                           "version": sub.Version})  # tab 1
        response = customer.client.post(f"/subscriptions/{sub.sub_id}/pause/", {
            "how": "skip", "payments": "3", "version": sub.Version})  # tab 2, drawn before
        assert response.status_code == 409 and any(m.startswith(CHANGED) for m in messages_of(response))
        form = response.context["form"]
        assert (form["how"].value(), form["payments"].value()) == ("skip", "3")
        assert form["version"].value() == str(fresh(sub).Version) and fresh(sub).PausedFrom is None
