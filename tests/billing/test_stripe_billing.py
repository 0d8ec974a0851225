"""Billing on Stripe, against localstripe: the renewal batch charges off-session (paid,
declined into dunning, an outage counted and carried on), "retry now", refunds, the
reconciliation of a charge whose receipt was lost, and the portal's card pages (the
card saved through a SetupIntent, another customer's or a made-up one refused, Stripe
unreachable said in the page). Real dates: localstripe stamps its objects with the
machine's clock, which the reconciliation's range is read against."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.core import mail

from billing import access, batches
from billing.actions.retry import retry_now
from billing.models import SubscriptionStatus
from billing.operations.outcomes import PaymentStatus
from billing.operations.refunds import refund_receipt
from devtools.localengine import free_port
from tests.builders import BILLING_COUNTRY, fresh, lose_receipts, make_customer, receipts_of
from tests.stripe_server import authenticate_payment_in_browser, confirm_setup_in_browser, saved_card_token
from tests.wallclock import per_test

pytestmark = pytest.mark.django_db

TODAY = per_test(__name__, "TODAY", lambda now: now.date())


def stripe_due(gateway, localstripe, n: int, number: str = "4242424242424242"):
    """A subscription due today whose card is a Stripe payment method of its account's customer."""
    account_id, sub_id = f"acct-{n}", f"sub-{n}"
    customer = gateway.create_customer(account_id, f"{sub_id}@example.com")
    token = saved_card_token(gateway, localstripe, customer, number)
    sub = access.due_subscription(account_id, sub_id, due=TODAY, card=access.payment_details_from(token),
                                  email=f"{sub_id}@example.com")
    access.batch_items([sub])
    return sub


def intent_keys(gateway) -> list[str | None]:
    return [r.idempotency_key for r in gateway.recorded.creates("/v1/payment_intents")]


def test_the_renewal_batch_charges_off_session_and_declines_go_to_dunning(moto_table, stripe_gateway, localstripe) -> None:
    paid = stripe_due(stripe_gateway, localstripe, 1)
    declined = stripe_due(stripe_gateway, localstripe, 2, "4000000000000341")
    summary = batches.run_payments(run_date=TODAY, workers=2)
    assert summary.counts["paid"] == 1 and summary.counts["declined"] == 1, summary.counts
    [receipt] = receipts_of(paid)
    assert receipt.ChargeId.startswith("pi_") and receipt.ProcessedAmount == paid.PaymentAmount
    assert fresh(declined).Status == SubscriptionStatus.PAST_DUE and not receipts_of(declined)
    # Each PaymentIntent was created under the invariant-5 key, off-session.
    assert sorted(intent_keys(stripe_gateway)) == sorted(f"{s.sub_id}:{TODAY.isoformat()}" for s in (paid, declined))
    assert all(r.params["off_session"] == ["true"] for r in stripe_gateway.recorded.creates("/v1/payment_intents"))
    assert summary.counts.get("differences", 0) == 0  # the reconciliation found the paid one recorded


def test_stripe_down_is_an_error_the_next_run_carries_on_from(moto_table, stripe_gateway, localstripe, settings,
                                                               monkeypatch) -> None:
    sub = stripe_due(stripe_gateway, localstripe, 3)
    monkeypatch.setattr("billing.operations.payments.time.sleep", lambda seconds: None)  # no backoff wait
    live = stripe_gateway.client
    settings.STRIPE_API_BASE = f"http://127.0.0.1:{free_port()}"
    from core.payments.stripe.client import build_client
    stripe_gateway.client = build_client()  # the same gateway, Stripe unreachable
    down = batches.run_payments(run_date=TODAY, workers=1, reconcile=False)
    assert down.counts["errors"] == 1 and not receipts_of(sub)
    stripe_gateway.client = live
    again = batches.run_payments(run_date=TODAY, workers=1)
    assert again.counts["paid"] == 1 and len(receipts_of(sub)) == 1


def test_retry_now_and_two_partial_refunds(moto_table, stripe_gateway, localstripe) -> None:
    sub = stripe_due(stripe_gateway, localstripe, 4, "4000000000000341")
    batches.run_payments(run_date=TODAY, workers=1)
    past_due = fresh(sub)
    assert past_due.Status == SubscriptionStatus.PAST_DUE
    # A good card joins the account's Stripe customer and the subscription pays with it.
    customer = past_due.PaymentDetails.Token.split("/")[0]
    good = access.add_card(sub.account_id, saved_card_token(stripe_gateway, localstripe, customer), actor="test")
    access.use_card(past_due, good, actor="test")
    refreshed = fresh(sub)
    outcome = retry_now(refreshed, run_date=TODAY, actor="staff@example.com")
    assert outcome.status == PaymentStatus.PAID
    assert intent_keys(stripe_gateway)[-1] == f"{sub.sub_id}:{TODAY.isoformat()}:retry1"
    [receipt] = receipts_of(sub)
    refund_receipt(receipt, 100, request_id="r1", actor="staff@example.com", reason="goodwill")
    refund_receipt(receipts_of(sub)[0], 200, request_id="r2", actor="staff@example.com")
    [after] = receipts_of(sub)
    assert after.RefundedAmount == 300
    keys = [r.idempotency_key for r in stripe_gateway.recorded.creates("/v1/refunds")]
    assert keys == [f"refund:{receipt.ChargeId}:r1", f"refund:{receipt.ChargeId}:r2"]


def test_the_reconciliation_records_a_paymentintent_whose_receipt_was_lost(moto_table, stripe_gateway, localstripe,
                                                                          monkeypatch) -> None:
    sub = stripe_due(stripe_gateway, localstripe, 5)

    with monkeypatch.context() as mp:
        lose_receipts(mp)
        first = batches.run_payments(run_date=TODAY, workers=1, reconcile=False)
    assert first.counts["errors"] == 1 and not receipts_of(sub)
    mail.outbox.clear()
    # Only the reconciliation now: the subscription is no longer due (cancelled meanwhile).
    access.cancel_subscription(fresh(sub), reason="customer", actor="test", check_version=False)
    second = batches.run_payments(run_date=TODAY, workers=1)
    assert second.counts["reconciled"] == 1 and second.counts["differences"] == 0
    [receipt] = receipts_of(sub)
    [intent] = stripe_gateway.recorded.creates("/v1/payment_intents")
    assert receipt.ChargeId.startswith("pi_") and intent.idempotency_key == f"{sub.sub_id}:{TODAY.isoformat()}"


# --- the portal's card pages ------------------------------------------------------------


def client_secret(response) -> str:
    return re.search(r'data-client-secret="([^"]+)"', response.content.decode()).group(1)


def test_subscribing_saves_the_card_through_a_setupintent_and_charges_on_session(
        moto_table, products, stripe_gateway, localstripe) -> None:
    customer = make_customer("pat@example.com")
    page = customer.client.get("/subscribe/")
    html = page.content.decode()
    assert 'name="card_number"' not in html and 'name="cvc"' not in html  # no card field of rpay's
    assert localstripe.js_url in html and "js/card-entry.js" in html
    secret = client_secret(page)
    assert confirm_setup_in_browser(localstripe, secret)["status"] == "succeeded"
    step = customer.client.post("/subscribe/", {"product": "GYM", "payment_day": str(TODAY.day),
                                                "setup_intent": secret.split("_secret_")[0], **BILLING_COUNTRY})
    assert step.status_code == 302 and step["Location"] == "/subscribe/confirm/"
    confirm = customer.client.get("/subscribe/confirm/")
    quote = re.search(r'name="quote" value="([^"]+)"', confirm.content.decode()).group(1)
    customer.client.post("/subscribe/confirm/", {"quote": quote})
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    account = access.get_account(customer.account_id)
    assert account.StripeCustomerId and sub.PaymentDetails.Token.startswith(account.StripeCustomerId + "/pm_")
    assert sub.PaymentDetails.Last4 == "4242"
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId.startswith("pi_")
    [first] = stripe_gateway.recorded.creates("/v1/payment_intents")
    assert first.idempotency_key == f"{sub.sub_id}:{TODAY.isoformat()}" and "off_session" not in first.params
    [card] = access.get_cards(customer.account_id)
    assert card.Details.Token == sub.PaymentDetails.Token


@pytest.mark.parametrize("whose", ["another customer's", "made up"])
def test_a_setupintent_not_this_accounts_is_a_form_error_and_nothing_is_stored(
        moto_table, stripe_gateway, localstripe, whose) -> None:
    customer = make_customer("pat@example.com")
    if whose == "made up":
        setup_intent = "seti_madeup0000"
    else:
        other = stripe_gateway.create_customer("someone-else", "sam@example.com")
        entry = stripe_gateway.start_card_entry(other)
        confirm_setup_in_browser(localstripe, entry.client_secret)
        setup_intent = entry.client_secret.split("_secret_")[0]
    response = customer.client.post("/wallet/add/", {"setup_intent": setup_intent})
    assert response.status_code == 200
    assert "Your card could not be saved" in response.content.decode()
    assert access.get_cards(customer.account_id) == []


def test_stripe_unreachable_says_so_on_the_card_page_and_keeps_the_form(
        moto_table, products, stripe_gateway, localstripe, settings) -> None:
    customer = make_customer("pat@example.com")
    from core.payments.stripe.client import build_client
    settings.STRIPE_API_BASE = f"http://127.0.0.1:{free_port()}"
    stripe_gateway.client = build_client()
    page = customer.client.get("/wallet/add/")
    assert page.status_code == 200 and "Card entry is unavailable" in page.content.decode()
    step = customer.client.post("/subscribe/", {"product": "GYM", "payment_day": "20", "billing_address": "1 Main St",
                                                "setup_intent": "seti_whatever", **BILLING_COUNTRY})
    html = step.content.decode()
    assert step.status_code == 200 and "could not be reached" in html and "1 Main St" in html
    assert access.get_cards(customer.account_id) == []


def subscribe_with(customer, localstripe, number: str):
    """Step 1 with a card saved as Stripe.js would, then the confirm step's click."""
    page = customer.client.get("/subscribe/")
    secret = client_secret(page)
    confirm_setup_in_browser(localstripe, secret, number)
    customer.client.post("/subscribe/", {"product": "GYM", "payment_day": str(TODAY.day),
                                         "setup_intent": secret.split("_secret_")[0], **BILLING_COUNTRY})
    confirm = customer.client.get("/subscribe/confirm/")
    quote = re.search(r'name="quote" value="([^"]+)"', confirm.content.decode()).group(1)
    return customer.client.post("/subscribe/confirm/", {"quote": quote})


def test_a_first_charge_the_bank_wants_confirmed_waits_for_the_customer_then_starts(
        moto_table, products, stripe_gateway, localstripe) -> None:
    customer = make_customer("pat@example.com")
    clicked = subscribe_with(customer, localstripe, "4000002760003184")
    assert clicked.status_code == 302 and clicked["Location"] == "/subscribe/authenticate/"
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    # incomplete, as Stripe Billing has it: not live, in neither due index, nothing written
    assert sub.Status == "incomplete" and not sub.is_live and not receipts_of(sub)
    assert sub.DuePaymentKey is None and sub.DueReminderKey is None
    page = customer.client.get("/subscribe/authenticate/")
    html = page.content.decode()
    assert "Confirm the payment with your bank" in html and "js/card-authenticate.js" in html
    secret = client_secret(page)
    # Posting before the bank confirmed changes nothing.
    waiting = customer.client.post("/subscribe/authenticate/")
    assert waiting.status_code == 200 and "has not confirmed the payment yet" in waiting.content.decode()
    assert not receipts_of(sub)

    assert authenticate_payment_in_browser(localstripe, secret)["status"] == "succeeded"
    mail.outbox.clear()
    done = customer.client.post("/subscribe/authenticate/")
    assert done.status_code == 302 and done["Location"] == f"/subscriptions/{sub.sub_id}/"
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId == secret.split("_secret_")[0]
    after = fresh(sub)
    assert after.is_live and after.PaidThroughDate > TODAY.isoformat()
    subjects = sorted(m.subject for m in mail.outbox)  # the receipt and the confirmation, once each
    assert len(subjects) == 2 and subjects[0].startswith("Invoice") and "subscription is confirmed" in subjects[1]
    assert [c.Details.Last4 for c in access.get_cards(customer.account_id)] == ["3184"]
    # a second click (back button) neither records nor mails again
    mail.outbox.clear()
    assert customer.client.post("/subscribe/authenticate/").status_code == 302
    assert len(receipts_of(sub)) == 1 and mail.outbox == []


def test_a_refused_confirmation_ends_the_subscription_unpaid(moto_table, products, stripe_gateway, localstripe) -> None:
    customer = make_customer("pat@example.com")
    subscribe_with(customer, localstripe, "4000002760003184")
    secret = client_secret(customer.client.get("/subscribe/authenticate/"))
    authenticate_payment_in_browser(localstripe, secret, success=False)
    done = customer.client.post("/subscribe/authenticate/")
    # back to the form with what was chosen
    assert done.status_code == 302 and done["Location"].startswith("/subscribe/?product=GYM&")
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert not sub.is_live and not receipts_of(sub)
    assert access.get_cards(customer.account_id) == []  # a card that never paid does not join the wallet


def test_a_renewal_the_bank_wants_confirmed_is_action_required_then_paid_once(moto_table, stripe_gateway,
                                                                              localstripe) -> None:
    """Off-session, the 3-D Secure card's PaymentIntent waits for the cardholder: past due,
    "action required", e-mailed; the customer confirms that very PaymentIntent (as Stripe.js
    does) and the portal's path records it; the webhook's path finds it recorded. One
    PaymentIntent, one receipt."""
    from billing.actions import subscriptions as actions
    from billing.operations.found_charges import record_found_charge

    sub = stripe_due(stripe_gateway, localstripe, 31, "4000002760003184")
    summary = batches.run_payments(run_date=TODAY, workers=1)
    assert summary.counts["action_required"] == 1, summary.counts
    waiting = fresh(sub)
    intent_id = waiting.PaymentDetails.AwaitingCharge
    assert waiting.Status == SubscriptionStatus.PAST_DUE and intent_id.startswith("pi_")
    assert "confirm-payment/" in mail.outbox[-1].body
    charge = actions.awaited_charge(waiting)
    assert charge.needs_authentication and charge.client_secret.startswith(intent_id + "_secret_")
    assert charge.payment_method and sub.PaymentDetails.Token.endswith("/" + charge.payment_method)

    authenticate_payment_in_browser(localstripe, charge.client_secret)
    assert actions.confirm_renewal(waiting, today=TODAY, actor="customer").status == PaymentStatus.PAID
    record_found_charge(stripe_gateway.charge_status(intent_id), TODAY, actor="stripe")  # the webhook, late
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId == intent_id
    assert fresh(sub).Status == SubscriptionStatus.ACTIVE and fresh(sub).PaymentDetails.AwaitingCharge is None
    assert len(stripe_gateway.recorded.creates("/v1/payment_intents")) == 1
    # The next day's run asks nothing more of Stripe about it, and charges nothing.
    assert batches.run_payments(run_date=TODAY, workers=1).counts["processed"] == 0


def test_an_upgrade_the_bank_wants_confirmed_switches_once_the_customer_confirms(moto_table, stripe_gateway,
                                                                                 localstripe) -> None:
    """On-session, the 3-D Secure card's upgrade charge waits for the customer: nothing
    switched until they confirm that PaymentIntent; then the switch and its receipt."""
    from datetime import timedelta

    from billing.actions import switch

    access.create_product("NEWS-DAILY", "Daily News", 999, "USD")
    access.create_product("NEWS-PLUS", "Daily News Plus", 1999, "USD")
    account_id = "acct-sw"
    customer = stripe_gateway.create_customer(account_id, "sw@example.com")
    token = saved_card_token(stripe_gateway, localstripe, customer, "4000002760003184")
    sub = access.due_subscription(account_id, "sub-sw", due=TODAY + timedelta(days=10),
                                  card=access.payment_details_from(token), payment_day=(TODAY + timedelta(days=10)).day)
    access.batch_items([sub])
    waiting = switch.switch(fresh(sub), "NEWS-PLUS", today=TODAY, actor="customer")
    assert waiting.client_secret and waiting.charge_id.startswith("pi_")
    assert fresh(sub).SKU == "NEWS-DAILY"  # nothing switched yet
    authenticate_payment_in_browser(localstripe, waiting.client_secret)
    done = switch.finish_authenticated(fresh(sub), "NEWS-PLUS", waiting.charge_id, today=TODAY, actor="customer")
    assert done.charged == waiting.quote.due_now > 0
    assert fresh(sub).SKU == "NEWS-PLUS"
    [receipt] = [r for r in receipts_of(sub) if r.Kind == "switch"]
    assert receipt.ChargeId == waiting.charge_id
    [create] = stripe_gateway.recorded.creates("/v1/payment_intents")
    assert create.idempotency_key == f"sub-sw:switch:{TODAY.isoformat()}:NEWS-PLUS"
    assert "off_session" not in create.params  # the customer is on the page


def test_an_incomplete_subscription_is_finished_from_its_link_or_expires_on_stripe(
        moto_table, products, stripe_gateway, localstripe) -> None:
    """Stripe Billing's states on localstripe: the 3-D Secure card's first PaymentIntent
    leaves the subscription incomplete; the dashboard's Finish payment page confirms that
    very PaymentIntent with Stripe.js and it starts. Another, left alone, is expired by the
    payment run's step 23 hours on: its PaymentIntent cancelled at Stripe."""
    from datetime import timedelta

    from billing.operations.expiry import expire_due

    customer = make_customer("pat@example.com")
    subscribe_with(customer, localstripe, "4000002760003184")
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.Status == "incomplete"
    home = customer.client.get("/").content.decode()
    assert f'href="/subscriptions/{sub.sub_id}/confirm-payment/" data-testid="finish-payment"' in home
    page = customer.client.get(f"/subscriptions/{sub.sub_id}/confirm-payment/")
    assert b"js/card-authenticate.js" in page.content and b'data-testid="first-payment"' in page.content
    assert authenticate_payment_in_browser(localstripe, client_secret(page))["status"] == "succeeded"
    done = customer.client.post(f"/subscriptions/{sub.sub_id}/confirm-payment/")
    assert done.status_code == 302 and done["Location"] == f"/subscriptions/{sub.sub_id}/"
    assert fresh(sub).Status == "active" and len(receipts_of(sub)) == 1

    other = make_customer("lee@example.com")
    subscribe_with(other, localstripe, "4000002760003184")
    [left] = access.get_subscriptions_by_account(other.account_id)
    assert expire_due(now=datetime.now(tz=UTC) + timedelta(hours=23, minutes=1)) == 1
    assert fresh(left).Status == "incomplete_expired" and not receipts_of(left)
    intent = stripe_gateway.charge_status(left.PaymentDetails.AwaitingCharge)
    assert not intent.succeeded and not intent.needs_authentication  # cancelled at Stripe
