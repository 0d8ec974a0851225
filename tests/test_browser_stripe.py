"""Real money's card entry in a real Chromium, against localstripe (its Stripe.js stand-in
draws the card fields; real Stripe.js draws them in its own frames): sign up, subscribe
with a card typed into Elements, first charge and receipt; a second card in the wallet,
made default, a replacement, a removal; a shop checkout with a discount code, a gift
card and a card. Every request the browser sends to rpay's own server is recorded, and
none may hold the card number (docs/TABLE.md, "No card numbers": the card goes to Stripe only).

Screenshots go to artifacts/screenshots/stripe-*.png.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus, urlsplit

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from billing import access
from tests.browser import screenshot
from tests.builders import receipts_of
from tests.shop import test_shop_pages as shop_pages
from tests.shop.test_browser_shop import fill_address_code_and_gift_card
from tests.signup import confirm_link

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

shop_site = shop_pages.shop_site
shop_stock = shop_pages.shop_stock

PASSWORD = "a-long-Password-2026"
NUMBERS = ("4242424242424242", "5555555555554444", "4000056655665556", "4000002760003184")


class RpayRequests:
    """Every request the page sends to rpay's server (not to Stripe), with its body."""

    def __init__(self, page, live_url: str) -> None:
        self.host = urlsplit(live_url).netloc
        self.seen: list[str] = []
        page.on("request", self._note)

    def _note(self, request) -> None:
        if urlsplit(request.url).netloc == self.host:
            self.seen.append(unquote_plus(request.url + " " + (request.post_data or "")))

    def assert_no_card_number(self) -> None:
        assert self.seen, "no request to rpay was recorded"
        for text in self.seen:
            squeezed = re.sub(r"[\s-]", "", text)
            for number in NUMBERS:
                assert number not in squeezed, text


def sign_up(page, email: str) -> None:
    page.goto("/signup/")
    page.locator("#id_email").fill(email)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_test_id("signup-check-email")).to_be_visible()
    page.goto(confirm_link(email))  # the link the e-mail carries
    page.locator("#id_password1").fill(PASSWORD)
    page.locator("#id_password2").fill(PASSWORD)
    page.get_by_role("button", name="Open my account").click()
    page.wait_for_load_state()


def type_card(page, number: str) -> None:
    """Type into the card fields Stripe.js drew (localstripe's: plain inputs)."""
    field = page.get_by_test_id("card-entry")
    field.locator("input[placeholder=number]").fill(number)
    field.locator("input[placeholder=exp_month]").fill("12")
    field.locator("input[placeholder=exp_year]").fill("34")
    field.locator("input[placeholder=cvc]").fill("123")


def csp_watch(page) -> list[str]:
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    return violations


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_subscribe_and_wallet_with_cards_typed_into_stripe(request, products, stripe_gateway, live_server,
                                                           size) -> None:
    page = request.getfixturevalue("page" if size == "desktop" else "phone_page")
    sent = RpayRequests(page, live_server.url)
    csp = csp_watch(page)
    email = f"nia-{size}@example.com"
    sign_up(page, email)

    page.goto("/subscribe/")
    page.get_by_label("City Gym — £45.00 a month").check()
    expect(page.get_by_test_id("card-entry").locator("input")).to_have_count(5)
    assert page.locator("input[name=card_number]").count() == 0  # no card field of rpay's own
    type_card(page, NUMBERS[0])
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url("**/subscribe/confirm/")
    screenshot(page, f"stripe-subscribe-confirm-{size}")
    page.get_by_role("button", name=re.compile("Confirm and pay")).click()
    expect(page.locator("body")).to_contain_text("You are subscribed to City Gym")
    user = get_user_model().objects.get(email=email)
    account_id = access.get_account_id_for_user(user.pk)
    [sub] = access.get_subscriptions_by_account(account_id)
    [receipt] = receipts_of(sub)
    assert receipt.ChargeId.startswith("pi_") and sub.PaymentDetails.Last4 == "4242"

    # a second card in the wallet, made default; the first replaced; the replacement removed
    page.goto("/wallet/add/")
    type_card(page, NUMBERS[1])
    page.get_by_role("button", name="Add the card").click()
    expect(page.locator("body")).to_contain_text("is in your wallet")
    cards = {c.Details.Last4: c for c in access.get_cards(account_id)}
    assert set(cards) == {"4242", "4444"}
    page.goto("/wallet/")
    page.get_by_test_id("wallet-card").filter(has_text="4444").get_by_role("button", name=re.compile("Make default")).click()
    expect(page.locator("body")).to_contain_text("is now your default card")
    assert access.get_account(account_id).DefaultCardId == cards["4444"].card_id
    screenshot(page, f"stripe-wallet-{size}")

    page.get_by_test_id("wallet-card").filter(has_text="4242").get_by_role("link", name=re.compile("Replace")).click()
    type_card(page, NUMBERS[2])
    page.get_by_role("button", name="Use the new card").click()
    expect(page.locator("body")).to_contain_text("replaces the old card")
    assert access.get_subscriptions_by_account(account_id)[0].PaymentDetails.Last4 == "5556"

    page.get_by_test_id("wallet-card").filter(has_text="4444").get_by_role("button", name=re.compile("Remove")).click()
    expect(page.locator("body")).to_contain_text("was removed from your wallet")
    assert {c.Details.Last4 for c in access.get_cards(account_id)} == {"5556"}
    detaches = [r for r in stripe_gateway.recorded.sent if r.path.endswith("/detach")]
    assert len(detaches) == 1  # the removed card left the Stripe customer too

    sent.assert_no_card_number()
    assert csp == []


def subscribe_with_the_3ds_card(page, email: str, *, shot: str = ""):
    """Sign up and subscribe to the gym with 4000 0027 6000 3184, completing the bank's page
    (localstripe's stand-in) when the card is saved and when it is charged; the subscription."""
    sign_up(page, email)
    page.goto("/subscribe/")
    page.get_by_label("City Gym — £45.00 a month").check()
    type_card(page, "4000002760003184")
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Complete authentication").click()  # saving the card
    page.wait_for_url("**/subscribe/confirm/")
    page.get_by_role("button", name=re.compile("Confirm and pay")).click()
    page.wait_for_url("**/subscribe/authenticate/")
    expect(page.locator("body")).to_contain_text("Your bank asks you to confirm the first payment")
    if shot:
        screenshot(page, shot)
    page.get_by_role("button", name="Confirm with my bank").click()
    page.get_by_role("button", name="Complete authentication").click()  # the charge
    expect(page.locator("body")).to_contain_text("You are subscribed to City Gym")
    account_id = access.get_account_id_for_user(get_user_model().objects.get(email=email).pk)
    [sub] = access.get_subscriptions_by_account(account_id)
    return sub


def test_a_first_payment_confirmed_with_the_bank_in_the_browser(page, products, stripe_gateway, live_server) -> None:
    """4000 0027 6000 3184 asks for 3-D Secure when the card is saved and when it is charged:
    the customer completes the bank's page (localstripe's stand-in) both times."""
    sent = RpayRequests(page, live_server.url)
    csp = csp_watch(page)
    sub = subscribe_with_the_3ds_card(page, "sca@example.com", shot="stripe-authenticate")
    assert sub.is_live and len(receipts_of(sub)) == 1
    sent.assert_no_card_number()
    assert csp == []


def test_a_renewal_the_bank_wants_confirmed_is_paid_from_the_e_mails_link(page, products, stripe_gateway,
                                                                          live_server) -> None:
    """The renewal of a 3-D Secure card (off-session): "action required" on the dashboard
    and in an e-mail; its link; the bank's page; the receipt. In the end Stripe's
    PaymentIntents for the subscription and its receipts are the same two."""
    from datetime import date

    from django.core import mail

    from billing import batches

    sent = RpayRequests(page, live_server.url)
    csp = csp_watch(page)
    sub = subscribe_with_the_3ds_card(page, "renewal@example.com")

    summary = batches.run_payments(run_date=date.fromisoformat(sub.NextPaymentDate), workers=1)
    assert summary.counts["action_required"] == 1, summary.counts
    page.goto("/")
    expect(page.get_by_test_id("action-required")).to_contain_text("Action required for City Gym")
    screenshot(page, "stripe-action-required")
    link = re.search(r"https?://\S+(/subscriptions/\S+/confirm-payment/)", mail.outbox[-1].body)
    assert link, mail.outbox[-1].body
    page.goto(link.group(1))
    expect(page.locator("body")).to_contain_text("Your bank asks you to confirm the payment of £45.00")
    page.get_by_role("button", name="Confirm with my bank").click()
    page.get_by_role("button", name="Complete authentication").click()
    expect(page.locator("body")).to_contain_text("Thank you: your payment of £45.00 went through.")
    screenshot(page, "stripe-renewal-confirmed")

    receipts = receipts_of(sub)
    intents = [i for i in stripe_gateway.client.v1.payment_intents.list({"limit": 100}).auto_paging_iter()
               if i.metadata and i.metadata.to_dict().get("sub_id") == sub.sub_id]
    assert sorted(r.ChargeId for r in receipts) == sorted(i.id for i in intents if i.status == "succeeded")
    assert len(receipts) == 2 and len(intents) == 2
    sent.assert_no_card_number()
    assert csp == []


def test_a_shop_checkout_pays_the_rest_with_a_card_typed_into_stripe(page, live_server, shop_stock, stripe_gateway,
                                                                      settings) -> None:
    sent = RpayRequests(page, live_server.url)
    csp = csp_watch(page)
    email = "ivy@example.com"
    user = get_user_model().objects.create_user(email, email=email, password=PASSWORD)
    access.create_account(email, user_id=user.pk)
    page.goto("/login/")
    page.locator("#id_username").fill(email)
    page.locator("#id_password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()

    page.goto("/shop/p/album/")
    page.get_by_label("Quantity").fill("2")
    page.get_by_role("button", name="Add to cart").click()
    page.wait_for_url("**/shop/cart/")
    page.get_by_role("link", name="Check out").click()
    page.wait_for_url("**/shop/checkout/")
    fill_address_code_and_gift_card(page)
    type_card(page, NUMBERS[0])
    screenshot(page, "stripe-shop-checkout")
    page.get_by_role("button", name="Place order").click()
    page.wait_for_url(re.compile(r".*/shop/orders/[0-9a-f]+/$"))
    expect(page.locator(".alert-success")).to_contain_text("is placed and paid")
    payments = " ".join(page.get_by_test_id("payment").all_inner_texts())
    assert "Gift card ending ABCD" in payments and "ending 4242" in payments
    [intent] = stripe_gateway.recorded.creates("/v1/payment_intents")
    order_id = page.url.rstrip("/").rsplit("/", 1)[1]
    assert intent.idempotency_key == f"{order_id}:card" and "off_session" not in intent.params
    sent.assert_no_card_number()
    assert csp == []
