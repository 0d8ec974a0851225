"""Free trials: a product's trial days; subscribing starts the trial with no
charge (the card is kept for the first charge, off-session, the day after the trial); the
first charge pays from the day after the trial to the day before the first anchor date
(M1, prorated by day); one trial per account and product, also under concurrency; a cancel
during the trial never charges; the staff form, pages and chart."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta

import pytest
import time_machine
from django.core import mail
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing import access, batches
from billing.actions import subscriptions as actions
from billing.models import Product, Subscription, SubscriptionStatus, TrialUse
from billing.operations import payments
from billing.rules.schedule import is_anchor, period_amount
from core.payments.gateway import get_gateway
from core.payments.simulated import SimulatedGateway
from tests.builders import GOOD_CARD, PASSWORD, at_once, card, fresh, make_account, make_user, receipts_of

pytestmark = pytest.mark.django_db

SKU = "TRIAL-NEWS"
ON = date(2027, 3, 10)  # 14 days free: 10..23 March; first charge on 24 March, to day 15's anchor
TRIAL_END = date(2027, 3, 23)
FIRST = date(2027, 3, 24)
# 24 March .. 14 April: 22 of the 31 days of the anchor period 15 March .. 14 April:
# 999 * 22 / 31 = 708.97 -> 709 (half up, to the minor unit)
FIRST_AMOUNT = 709


@pytest.fixture
def trial_product(moto_table) -> Product:
    return access.create_product(SKU, "Trial News", 999, "USD", trial_days=14)


@contextmanager
def on(day: date, customer=None) -> Iterator[None]:
    """Travel to ``day`` (and log in again there: a session from another day may have expired)."""
    with time_machine.travel(day, tick=False):
        if customer is not None:
            assert customer.client.post("/login/", {"username": customer.email,
                                                    "password": PASSWORD}).status_code == 302
        yield


def quote_of(response) -> str:
    return re.search(r'name="quote" value="([^"]+)"', response.content.decode()).group(1)


def charges(**metadata: str) -> list[dict]:
    gateway = get_gateway()
    assert isinstance(gateway, SimulatedGateway)
    return gateway.charges_made(**metadata)


def subscribe_on_the_page(customer, sku: str = SKU, day: int = 15, **post):
    """Both steps of the portal's subscribe flow; returns the confirm page and the response."""
    step = customer.client.post("/subscribe/", {"product": sku, "payment_day": str(day), **GOOD_CARD})
    assert step.status_code == 302, step.content
    confirm = customer.client.get("/subscribe/confirm/")
    done = customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm), **post}, follow=True)
    return confirm, done


def subscribe_with_trial(account, *, today: date = ON, day: int = 15, trial_days: int = 14) -> actions.Started:
    return actions.subscribe(account, sku=SKU, product_name="Trial News", payment_day=day, amount=999,
                             currency="USD", card=card(), today=today, actor=account.Email, trial_days=trial_days)


def pay_on(day: date):
    with on(day):
        return batches.run_payments(run_date=day, workers=1)


# --- subscribing, the reminder, the first charge ----------------------------------------------


def test_a_trial_charges_nothing_then_its_first_charge_is_prorated_to_the_anchor(customer, trial_product,
                                                                                 monkeypatch) -> None:
    sessions: list[bool] = []
    real_charge = SimulatedGateway.charge

    def charge(self, *args, off_session: bool = True, **kwargs):
        sessions.append(off_session)
        return real_charge(self, *args, off_session=off_session, **kwargs)

    monkeypatch.setattr(SimulatedGateway, "charge", charge)
    mail.outbox.clear()
    with on(ON, customer):
        page = customer.client.get("/subscribe/").content.decode()
        assert "Trial News — $9.99 a month · 14-day free trial" in page
        confirm, done = subscribe_on_the_page(customer)
    html = confirm.content.decode()
    assert confirm.status_code == 200
    assert "Free until 23 March 2027, then $7.09 on 24 March 2027, then $9.99 a month" in html
    assert "Start the free trial" in html and "Confirm and pay" not in html
    assert "Your free trial runs until 23 March 2027: nothing was charged" in done.content.decode()

    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.Status == SubscriptionStatus.ACTIVE and sub.TrialEnd == TRIAL_END.isoformat()
    assert sub.NextPaymentDate == FIRST.isoformat() and sub.PaidThroughDate == TRIAL_END.isoformat()
    assert sub.NextReminderDate == (FIRST - timedelta(days=7)).isoformat()  # reminder_date: 7 days before
    assert charges() == [] and sessions == []  # the gateway's ledger: nothing charged at subscribing
    assert payments.owed_period(sub) == (FIRST, date(2027, 4, 14)) and payments.owed_amount(sub) == FIRST_AMOUNT
    # the card is required, and kept for the first charge (it joined the wallet)
    [wallet_card] = access.get_cards(customer.account_id)
    assert sub.PaymentDetails.CardId == wallet_card.card_id
    created = next(e for e in access.get_events_by_account(customer.account_id) if e.Action == "subscription.created")
    assert created.After["TrialEnd"] == "2027-03-23" and created.After["PaidThroughDate"] == "2027-03-23"
    marker = TrialUse.get(TrialUse.pk(account_id=customer.account_id), TrialUse.sk(sku=SKU))
    assert marker.SubId == sub.sub_id and marker.TrialEnd == TRIAL_END.isoformat()

    [confirmed] = mail.outbox
    text, html_mail = confirmed.body, confirmed.alternatives[0][0]
    for body in (text, html_mail):
        assert "free until 23 March 2027; nothing is charged today" in body
        assert "$7.09 on 24 March 2027, for 24 March 2027 to 14 April 2027" in body
    assert "Paid today" not in text

    # the reminder before the first charge tells the trial's end and the prorated amount
    mail.outbox.clear()
    reminder_day = date.fromisoformat(sub.NextReminderDate)
    with on(reminder_day):
        batches.run_reminders(run_date=reminder_day, workers=1)
    [reminder] = mail.outbox
    assert reminder.subject == "Your free trial ends soon: Trial News, first payment on 24 March 2027"
    for body in (reminder.body, reminder.alternatives[0][0]):
        assert "ends on 23 March 2027" in body and "$7.09" in body
    # the next reminder announces the payment after it, as any reminder
    assert fresh(sub).NextReminderDate == "2027-04-08"

    # the last free day: nothing due, nothing charged
    assert pay_on(TRIAL_END).counts.get("paid", 0) == 0 and charges() == []
    # the day after: the first period, prorated to the anchor, off-session (the customer is not there)
    mail.outbox.clear()
    pay_on(FIRST)
    [first] = charges()
    assert first["amount"] == FIRST_AMOUNT == period_amount(999, 15, FIRST, date(2027, 4, 14))
    assert first["metadata"]["period_start"] == "2027-03-24" and first["metadata"]["period_end"] == "2027-04-14"
    assert first["idempotency_key"] == f"{sub.sub_id}:2027-03-24"
    assert sessions == [True]
    after = fresh(sub)
    assert after.PaidThroughDate == "2027-04-14" and after.NextPaymentDate == "2027-04-15"
    assert [m.subject for m in mail.outbox][0].startswith("Invoice R-")

    # then the monthly price on each anchor; the receipts tile from the day after the trial
    pay_on(date(2027, 4, 15))
    pay_on(date(2027, 5, 15))
    receipts = sorted(receipts_of(sub), key=lambda r: r.PeriodStart)
    assert [(r.PeriodStart, r.PeriodEnd, r.ProcessedAmount) for r in receipts] == [
        ("2027-03-24", "2027-04-14", FIRST_AMOUNT), ("2027-04-15", "2027-05-14", 999),
        ("2027-05-15", "2027-06-14", 999)]
    assert sessions == [True, True, True]


# --- one trial per account and product ----------------------------------------------------------


def test_a_second_subscribe_gets_no_trial_and_is_charged_at_once(customer, trial_product) -> None:
    with on(ON, customer):
        subscribe_on_the_page(customer)
    [first] = access.get_subscriptions_by_account(customer.account_id)
    actions.cancel(first, actor=customer.email)  # cancelled or not, the trial was had
    with on(date(2027, 3, 12), customer):
        confirm, done = subscribe_on_the_page(customer)
    html = confirm.content.decode()
    assert "You have already had the free trial of Trial News" in html
    # 12..14 March: 3 days of the anchor period 15 February .. 14 March: 999 * 3 / 28 = 107.04
    assert "Free until" not in html and "Confirm and pay $1.07" in html
    second = next(s for s in access.get_subscriptions_by_account(customer.account_id) if s.sub_id != first.sub_id)
    assert second.TrialEnd is None and second.PaidThroughDate == "2027-03-14"
    [charge] = charges()
    assert charge["amount"] == 107 and charge["metadata"]["sub_id"] == second.sub_id


def test_a_trial_quote_confirmed_after_the_trial_was_taken_elsewhere_charges_nothing(customer, trial_product) -> None:
    with on(ON, customer):
        customer.client.post("/subscribe/", {"product": SKU, "payment_day": "15", **GOOD_CARD})
        stale = customer.client.get("/subscribe/confirm/")
        assert "Free until 23 March 2027" in stale.content.decode()
        subscribe_with_trial(access.get_account(customer.account_id))  # another tab took the trial
        response = customer.client.post("/subscribe/confirm/", {"quote": quote_of(stale), "again": "on"})
    # the customer confirmed a free trial: not charged without it, shown the new quote (M4)
    assert response.status_code == 409
    html = response.content.decode()
    assert "You have already had the free trial of Trial News" in html and "Confirm and pay $1.78" in html  # 10..14 March: 999 * 5 / 28
    assert len(access.get_subscriptions_by_account(customer.account_id)) == 1 and charges() == []


def test_the_marker_refuses_a_second_trial_in_the_subscriptions_own_transaction(table) -> None:
    account = make_account("pat@example.com")
    made = access.create_subscription(account, sku=SKU, payment_day=15, amount=999, currency="USD", card=card(),
                                      today=ON, reminder_days_before=7, trial_days=14)
    assert access.trial_used(account.account_id, SKU) and not access.trial_used(account.account_id, "OTHER")
    with pytest.raises(access.TrialAlreadyUsed):
        access.create_subscription(account, sku=SKU, payment_day=15, amount=999, currency="USD", card=card(),
                                   today=ON, reminder_days_before=7, trial_days=30)
    # nothing of the refused one was written: no item, no event
    assert [s.sub_id for s in access.get_subscriptions_by_account(account.account_id)] == [made.sub_id]
    assert len([e for e in access.get_events_by_account(account.account_id)
                if e.Action == "subscription.created"]) == 1
    # without a trial it subscribes as usual; another product, or another account, has its own trial
    access.create_subscription(account, sku=SKU, payment_day=15, amount=999, currency="USD", card=card(),
                               today=ON, reminder_days_before=7)
    access.create_subscription(account, sku="OTHER", payment_day=15, amount=999, currency="USD", card=card(),
                               today=ON, reminder_days_before=7, trial_days=7)
    access.create_subscription(make_account("bob@example.com"), sku=SKU, payment_day=15, amount=999,
                               currency="USD", card=card(), today=ON, reminder_days_before=7, trial_days=14)
    with pytest.raises(ValueError):
        access.create_subscription(account, sku="X", payment_day=15, amount=999, currency="USD", card=card(),
                                   today=ON, reminder_days_before=7, trial_days=366)


def test_two_subscribes_at_once_get_one_trial(local_table) -> None:
    account = make_account("pat@example.com")
    tries = 4

    def attempt() -> object:
        try:
            return subscribe_with_trial(account)
        except access.TrialAlreadyUsed as refused:
            return refused

    results = at_once(attempt, tries)  # real threads released together, on DynamoDB Local
    started = [r for r in results if isinstance(r, actions.Started)]
    refused = [r for r in results if isinstance(r, access.TrialAlreadyUsed)]
    assert len(results) == tries and len(started) == 1 and len(refused) == tries - 1
    assert started[0].in_trial
    # one subscription (the refused ones wrote nothing), one marker, nothing charged
    [sub] = access.get_subscriptions_by_account(account.account_id)
    assert sub.sub_id == started[0].sub.sub_id and sub.TrialEnd == TRIAL_END.isoformat()
    assert charges() == []


# --- cancelling during the trial ------------------------------------------------------------------


def test_a_cancel_at_period_end_during_the_trial_ends_it_at_its_end_and_never_charges(customer, trial_product) -> None:
    with on(ON, customer):
        subscribe_on_the_page(customer)
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    with on(date(2027, 3, 15), customer):
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/").content.decode()
        assert "Free until 23 Mar 2027" in page
        customer.client.post(f"/subscriptions/{sub.sub_id}/cancel/", {"when": "period_end", "reason": "other",
                                                                      "version": sub.Version})
    stored = fresh(sub)
    assert stored.Status == SubscriptionStatus.CANCELLED and stored.CancelMode == "period_end"
    assert stored.PaidThroughDate == TRIAL_END.isoformat() and stored.NextPaymentDate is None
    from billing.rules.lifecycle import state_of
    assert state_of(stored, TRIAL_END).kind == "cancelling" and state_of(stored, TRIAL_END).until == TRIAL_END
    assert state_of(stored, FIRST).kind == "ended"  # the one label: "Ended"
    for day in (TRIAL_END, FIRST, date(2027, 3, 25), date(2027, 4, 15)):
        pay_on(day)
    assert charges() == [] and receipts_of(sub) == []


def test_a_cancel_now_during_the_trial_refunds_nothing_and_never_charges(customer, trial_product) -> None:
    with on(ON, customer):
        subscribe_on_the_page(customer)
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    mail.outbox.clear()
    with on(date(2027, 3, 15), customer):
        customer.client.post(f"/subscriptions/{sub.sub_id}/cancel/", {"when": "now", "reason": "other",
                                                                      "version": sub.Version})
    stored = fresh(sub)
    assert stored.Status == SubscriptionStatus.CANCELLED and stored.PaidThroughDate == "2027-03-15"
    assert [m.subject for m in mail.outbox] == ["Your Trial News subscription is cancelled"]  # no refund e-mail
    for day in (FIRST, date(2027, 4, 15)):
        pay_on(day)
    assert charges() == [] and get_gateway().refunds_made() == []


# --- staff: the product form, the catalogue, the account page, the chart -------------------------


def product_data(**changes: str) -> dict[str, str]:
    return {"sku": "TEA-TRIAL", "name": "Tea", "description": "", "price": "15.00", "currency": "EUR",
            "trial_days": "30", **changes}


@pytest.mark.parametrize(("value", "error"), [
    ("-1", "A trial cannot be negative"), ("366", "A trial lasts at most 365 days"),
    ("ten", "Give a whole number of days"), ("1.5", "Give a whole number of days"),
])
def test_the_staff_form_refuses_trials_outside_0_to_365_days(client, moto_table, value: str, error: str) -> None:
    client.force_login(make_user("shelf@rpay.localhost", staff=True, roles=["catalog"]))
    response = client.post(reverse("admin:staff_product_add"), product_data(trial_days=value))
    assert response.status_code == 200
    assert error in " ".join(response.context["form"].errors["trial_days"])
    assert list(response.context["form"].errors) == ["trial_days"]
    assert access.get_product("TEA-TRIAL") is None


def test_a_catalog_only_user_sets_the_trial_and_the_catalogue_shows_it(client, moto_table) -> None:
    client.force_login(make_user("shelf@rpay.localhost", staff=True, roles=["catalog"]))
    assert client.post(reverse("admin:staff_product_add"), product_data()).status_code == 302
    assert access.get_product("TEA-TRIAL").TrialDays == 30
    listing = client.get(reverse("admin:staff_products")).content.decode()
    assert "30-day free trial" in listing
    edit = reverse("admin:staff_product_edit", args=["TEA-TRIAL"])
    assert client.get(edit).context["form"]["trial_days"].value() == 30
    assert client.post(edit, product_data(trial_days="365")).status_code == 302
    assert access.get_product("TEA-TRIAL").TrialDays == 365
    assert client.post(edit, product_data(trial_days="")).status_code == 302  # empty: no trial
    assert access.get_product("TEA-TRIAL").trial_days == 0
    assert "free trial" not in client.get(reverse("admin:staff_products")).content.decode()
    # a product without trial days stays as it was (no attribute, no label)
    assert client.post(reverse("admin:staff_product_add"), product_data(sku="PLAIN", trial_days="0")).status_code == 302
    assert access.get_product("PLAIN").TrialDays is None


def test_staff_see_the_trial_and_the_chart_counts_its_first_charge_prorated(client, moto_table, trial_product,
                                                                            settings) -> None:
    account = make_account("pat@example.com")
    today = date(2027, 3, 10)
    with on(today):
        sub = subscribe_with_trial(account).sub
        client.force_login(make_user("clerk@rpay.localhost", staff=True))
        page = client.get(reverse("admin:staff_account", args=[account.account_id])).content.decode()
        assert re.search(r'data-testid="sub-trial">trial until 2027-03-23<', page)
        chart = client.get(reverse("admin:staff_upcoming")).context["chart"]
    offset = (FIRST - today).days
    assert chart["payments"][offset] == 1
    assert chart["amounts"]["USD"]["values"][offset] == FIRST_AMOUNT and sum(chart["amounts"]["USD"]["values"]) \
        == FIRST_AMOUNT
    assert fresh(sub).TrialEnd == "2027-03-23"


# --- the first charge after any trial, on any day ----------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trial_days=st.integers(1, 365), payment_day=st.integers(1, 31),
       subscribed=st.dates(date(2027, 1, 1), date(2028, 12, 31)))
def test_the_first_charge_starts_the_day_after_the_trial_and_ends_before_an_anchor(
        moto_table, trial_days: int, payment_day: int, subscribed: date) -> None:
    account = make_account(f"p{trial_days}-{payment_day}-{subscribed}@example.com")
    sub = access.create_subscription(account, sku=SKU, payment_day=payment_day, amount=999, currency="USD",
                                     card=card(), today=subscribed, reminder_days_before=7, trial_days=trial_days)
    trial_end = subscribed + timedelta(days=trial_days - 1)
    assert sub.TrialEnd == trial_end.isoformat() and sub.PaidThroughDate == trial_end.isoformat()
    # the reminder is before the first charge, never before the day after subscribing
    assert subscribed < date.fromisoformat(sub.NextReminderDate) <= trial_end + timedelta(days=1)
    paid: list[tuple[date, date]] = []
    for _ in range(2):
        due = date.fromisoformat(sub.NextPaymentDate)
        assert payments.take_payment(sub, run_date=due).status == "paid"
        sub = fresh(sub)
        [receipt] = [r for r in receipts_of(sub) if r.BillingDate == due.isoformat()]
        paid.append((date.fromisoformat(receipt.PeriodStart), date.fromisoformat(receipt.PeriodEnd)))
        if len(paid) == 1:
            start, end = paid[0]
            assert start == trial_end + timedelta(days=1)  # no trial day is charged
            assert is_anchor(payment_day, end + timedelta(days=1))  # it ends before an anchor date
            assert (end - start).days < 31 or is_anchor(payment_day, start)  # prorated up to the first anchor
            assert receipt.ProcessedAmount == period_amount(999, payment_day, start, end)
    # no day charged twice, none skipped
    assert paid[1][0] == paid[0][1] + timedelta(days=1)
    assert sub.PaidThroughDate == paid[1][1].isoformat()


def test_subscription_carries_no_trial_by_default(moto_table) -> None:
    sub = access.create_subscription(make_account(), sku=SKU, payment_day=15, amount=999, currency="USD",
                                     card=card(), today=ON, reminder_days_before=7)
    assert sub.TrialEnd is None and sub.NextPaymentDate == ON.isoformat()
    assert isinstance(sub, Subscription)
    assert not access.trial_used(sub.account_id, SKU)
    # its first charge never taken (the page died), its Last* dates and NextPaymentDate are
    # all the day of subscribing: its reminder, later, is an ordinary one, not a trial's end
    mail.outbox.clear()
    batches.run_reminders(run_date=date.fromisoformat(sub.NextReminderDate), workers=1)
    [reminder] = mail.outbox
    assert reminder.subject.startswith("Upcoming payment: ") and "free trial" not in reminder.body
