"""The demo data shows the product as it is today (``seed_demo``): a wallet with a default
card and a second one, subscriptions paying with each, one paused, one cancelled at the
end of its period, a receipt partly refunded; on Stripe the cards are payment methods of
the account's Stripe customer."""

from __future__ import annotations

import re
from datetime import date
from io import StringIO

import pytest
from django.core.management import call_command

from billing import access
from billing.management.commands.seed_demo import CUSTOMER_EMAIL, CUSTOMER_PASSWORD

pytestmark = pytest.mark.django_db


def test_the_demo_wallet_has_two_cards_and_the_subscribe_page_offers_the_default(client, moto_table) -> None:
    call_command("seed_demo", stdout=StringIO())
    client.post("/login/", {"username": CUSTOMER_EMAIL, "password": CUSTOMER_PASSWORD})
    wallet = client.get("/wallet/")
    rows = wallet.context["rows"]
    # the default Visa, a Mastercard, and the 3-D Secure Visa the coffee box's renewal waits on
    assert sorted((r.details.Brand, r.details.Last4) for r in rows) == [
        ("Mastercard", "4444"), ("Visa", "3184"), ("Visa", "4242")]
    paying = {r.details.Last4: sorted(s.SKU for s in r.subscriptions) for r in rows}
    # (the incomplete subscription waiting on the 3-D Secure card is not live: not listed)
    assert paying["4444"] == ["MUSIC-FAMILY"] and "NEWS-DAILY" in paying["4242"] and paying["3184"] == ["COFFEE-BOX"]
    assert [r.details.Last4 for r in rows if r.is_default] == ["4242"]
    html = wallet.content.decode()
    assert "Card on this subscription" not in html  # every demo subscription pays with a wallet card
    form = client.get("/subscribe/").context["form"]
    default = next(r for r in rows if r.is_default)
    assert form["saved_card"].value() == default.card.card_id


def test_the_demo_portal_shows_a_pause_a_cancel_at_period_end_and_a_partial_refund(client, moto_table) -> None:
    call_command("seed_demo", stdout=StringIO())
    client.post("/login/", {"username": CUSTOMER_EMAIL, "password": CUSTOMER_PASSWORD})
    account_id = client.session["account_id"]
    subs = {s.SKU: s for s in access.get_subscriptions_by_account(account_id)}
    assert client.get("/").context["paused_count"] == 1 and subs["MUSIC-FAMILY"].is_live
    assert not subs["CLOUD-200"].is_live and subs["CLOUD-200"].PaidThroughDate
    refunded = [r for r in access.get_receipts_by_account(account_id, date(2000, 1, 1), date(2100, 1, 1))
                if r.RefundedAmount]
    assert len(refunded) == 1 and 0 < refunded[0].RefundedAmount < refunded[0].ProcessedAmount


def test_the_demo_shows_a_renewal_waiting_for_the_bank_and_two_disputes(client, admin_client, moto_table) -> None:
    from django.core import mail

    call_command("seed_demo", stdout=StringIO())
    client.post("/login/", {"username": CUSTOMER_EMAIL, "password": CUSTOMER_PASSWORD})
    account_id = client.session["account_id"]
    coffee = next(s for s in access.get_subscriptions_by_account(account_id) if s.SKU == "COFFEE-BOX")
    assert coffee.Status == "past_due" and coffee.PaymentDetails.AwaitingCharge
    assert b'data-testid="action-required"' in client.get("/").content
    assert any(m.subject.startswith("Please confirm your payment") for m in mail.outbox)
    disputes = admin_client.get("/admin/staff/disputes/")
    assert disputes.status_code == 200
    assert [r["entry"].Status for r in disputes.context["rows"]].count("needs_response") == 1
    assert [r["entry"].Status for r in disputes.context["rows"]].count("won") == 1
    now = access.utc_now().isoformat()
    assert all(r["entry"].OpenedAt <= now for r in disputes.context["rows"])  # none opened in the future


def test_seed_demo_on_stripe_makes_customers_and_payment_methods(client, moto_table, stripe_gateway) -> None:
    call_command("seed_demo", stdout=StringIO())
    client.post("/login/", {"username": CUSTOMER_EMAIL, "password": CUSTOMER_PASSWORD})
    account = access.get_account(client.session["account_id"])
    assert account.StripeCustomerId.startswith("cus_")
    for card in access.get_cards(account.account_id):
        assert card.Details.Token.startswith(f"{account.StripeCustomerId}/pm_")
    # the demo's receipts are real PaymentIntents on localstripe, so staff can refund them
    assert stripe_gateway.recorded.creates("/v1/payment_intents")
    assert stripe_gateway.recorded.creates("/v1/refunds")


def test_the_demo_shows_a_switch_a_coupon_and_a_free_trial(client, moto_table) -> None:
    call_command("seed_demo", stdout=StringIO())
    client.post("/login/", {"username": "grace@example.com", "password": CUSTOMER_PASSWORD})
    subs = {s.SKU: s for s in access.get_subscriptions_by_account(client.session["account_id"])}
    lite, gym = subs["NEWS-LITE"], subs["GYM-CITY"]
    assert lite.PreviousProductName == "Daily News digital" and lite.SwitchFrom == lite.NextPaymentDate
    assert [s.CouponCode for s in subs.values() if s.CouponCode] == ["WELCOME10"]
    assert gym.TrialEnd and gym.PaidThroughDate == gym.TrialEnd and not receipts_of_sub(gym)
    assert b'data-testid="switch-pending"' in client.get(f"/subscriptions/{lite.sub_id}/").content


def receipts_of_sub(sub) -> list:
    return [r for r in access.get_receipts_by_account(sub.account_id, date(2000, 1, 1), date(2100, 1, 1))
            if r.sub_id == sub.sub_id]


def test_the_demo_shows_each_state_with_its_one_label(client, moto_table) -> None:
    """Active, paused, cancelling, action required and incomplete (with its Finish payment
    link) on the demo customer's dashboard; a trial on grace's; a subscription that never
    started and one that ended on edsger's."""
    call_command("seed_demo", stdout=StringIO())
    client.post("/login/", {"username": CUSTOMER_EMAIL, "password": CUSTOMER_PASSWORD})
    home = client.get("/")
    html = home.content.decode()
    states = re.findall(r'data-testid="sub-status" data-state="([a-z_]+)"', html)
    assert sorted(states) == ["action_required", "active", "cancelling", "incomplete", "paused"]
    plus = next(s for s in access.get_subscriptions_by_account(client.session["account_id"]) if s.SKU == "NEWS-PLUS")
    assert plus.Status == "incomplete" and not plus.is_live
    assert f'href="/subscriptions/{plus.sub_id}/confirm-payment/" data-testid="finish-payment"' in html
    assert "Cancelled subscriptions" not in html  # the cancel at period end is listed with the live ones
    assert [s.SKU for s in home.context["live"] if s.SKU == "NEWS-PLUS"] == []  # counted nowhere
    client.post("/logout/")
    client.post("/login/", {"username": "grace@example.com", "password": CUSTOMER_PASSWORD})
    assert 'data-state="trialing"' in client.get("/").content.decode()
    client.post("/logout/")
    client.post("/login/", {"username": "edsger@example.com", "password": CUSTOMER_PASSWORD})
    edsger = client.get("/").content.decode()
    assert 'data-state="not_started"' in edsger and "Cancelled subscriptions (1)" in edsger
