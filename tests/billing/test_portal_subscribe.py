"""Subscribing: the two-step form, tokenization, the confirmation e-mail, the dashboard."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail

from billing import access
from billing.models import Product, ProductStatus
from billing.rules.schedule import first_period, period_amount
from billing.views.common import SESSION_PENDING
from core.pages import today
from tests.builders import GOOD_CARD, subscribe

pytestmark = pytest.mark.django_db

PAN = re.compile(r"\d{13,19}")


QUOTE = re.compile(r'name="quote" value="([^"]+)"')


def quote_of(confirm_page) -> str:
    """The signed quote the confirm page carries (M4)."""
    return QUOTE.search(confirm_page.content.decode())[1]


def post_subscribe(customer, **changes):
    data = {"product": "NEWS-DAILY", "payment_day": "31", **GOOD_CARD, **changes}
    return customer.client.post("/subscribe/", data)


def test_subscribe_page_offers_only_active_products(customer, ddb_requests) -> None:
    ddb_requests.reset()
    response = customer.client.get("/subscribe/")
    assert ddb_requests.ops == ["Query", "Query"]  # the catalogue; the wallet
    html = response.content.decode()
    assert "Daily News — $9.99 a month" in html and "Tea from Japan — ¥1,500 a month" in html
    assert "Old Magazine" not in html
    assert "on months with fewer days you pay on the last day" in html.lower()
    # Rule changed (M1): the first period is paid at once; each day shows the
    # payment after it.
    first = first_period(31, today())[1] + timedelta(days=1)
    assert f"31 — next payment {first.day} {first:%b %Y}" in html
    for field in ["id_product_0", "id_payment_day", "id_card_number", "id_exp_month", "id_exp_year", "id_cvc"]:
        assert f'for="{field}"' in html, field  # every field labelled


def test_two_step_subscribe_stores_only_the_token(customer, ddb_requests) -> None:
    ddb_requests.reset()
    response = post_subscribe(customer, cardholder="Ann Lee", billing_address="1 Main St")
    assert response.status_code == 302 and response["Location"] == "/subscribe/confirm/"
    # the catalogue and the wallet; tokenizing is the gateway's business
    assert ddb_requests.ops == ["Query", "Query"]
    pending = customer.client.session[SESSION_PENDING]
    assert pending["card"]["last4"] == "4242" and pending["card"]["token"].startswith("tok_sim_")
    # only what the gateway gave back travels to step 2 (the random token may hold digit runs)
    assert set(pending["card"]) == {"token", "brand", "last4", "exp_month", "exp_year", "country"}
    assert "4242424242424242" not in str(pending).replace(" ", "")
    assert access.get_subscriptions_by_account(customer.account_id) == []  # nothing until confirmed

    ddb_requests.reset()
    confirm = customer.client.get("/subscribe/confirm/")
    # the product; the seller's tax profile (the quote's tax); the subscriptions (already has it?)
    assert ddb_requests.ops == ["GetItem", "GetItem", "Query"]
    # Rule changed (M1): paid in advance, the first (prorated) period today.
    start, end = first_period(31, today())
    first_amount = period_amount(999, 31, start, end)
    next_payment = end + timedelta(days=1)
    html = confirm.content.decode()
    assert f"{next_payment:%A} {next_payment.day} {next_payment:%B %Y}" in html
    assert f"${first_amount // 100}.{first_amount % 100:02d}" in html
    assert "Visa ending in 4242" in html and "$9.99 every month" in html

    ddb_requests.reset()
    done = customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm)})
    # product, the subscriptions (already has it?), account; subscription + its events; its
    # SUBID# look-up item; the charge's receipt + its events + its number's look-up item;
    # the advance with its subscription.activated (a transaction: the first payment; the
    # receipt's number is taken by the receipt's transaction); the subscription read back for the
    # page; the new card into the wallet; and, the account's first billing country, the
    # account's tax identity + its event; the seller's tax profile (the first charge's tax)
    assert ddb_requests.by_name() == {"GetItem": 4, "Query": 1, "TransactWriteItems": 5, "PutItem": 1}
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert done["Location"] == f"/subscriptions/{sub.sub_id}/"
    assert (sub.SKU, sub.PaymentDay, sub.PaymentAmount, sub.Currency) == ("NEWS-DAILY", 31, 999, "USD")
    assert sub.NextPaymentDate == next_payment.isoformat() and sub.PaidThroughDate == end.isoformat()
    assert sub.PaymentDetails.Last4 == "4242" and sub.PaymentDetails.Token == pending["card"]["token"]
    assert sub.PaymentDetails.BillingAddress == "Ann Lee\n1 Main St"
    assert SESSION_PENDING not in customer.client.session
    events = access.get_events_by_account(customer.account_id)
    assert sorted(e.Action for e in events) == ["account.tax_identity_changed", "payment.succeeded",
                                                "subscription.created"]
    assert (sub.BillingCountry, access.get_account(customer.account_id).BillingCountry) == ("US", "US")
    created = next(e for e in events if e.Action == "subscription.created")
    assert (created.Actor, created.Subject) == (customer.email, sub.SK)
    [receipt] = access.get_receipts_by_account(customer.account_id, start, start)
    assert (receipt.ProcessedAmount, receipt.PeriodStart, receipt.PeriodEnd) == (first_amount, start.isoformat(),
                                                                                 end.isoformat())
    # the receipt and the confirmation e-mail: product, amount, dates, last four; never the number
    [receipt_mail, message] = mail.outbox
    assert receipt_mail.subject.startswith("Invoice")  # a charge's receipt is its tax invoice
    assert message.to == [customer.email]
    assert "Daily News" in message.body and "$9.99" in message.body and "4242" in message.body
    assert f"{next_payment.day} {next_payment:%B %Y}" in message.body
    assert not PAN.search(re.sub(r"https?://\S+", "", message.body))  # ids in the link are random hex
    # a second confirm (double click, back button) makes nothing more
    again = customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm)})
    assert again["Location"] == "/subscribe/"
    assert len(access.get_subscriptions_by_account(customer.account_id)) == 1


def test_a_declining_card_is_refused_at_subscribing(customer) -> None:
    # Rule changed (M1): the first period is charged at once, so a declining
    # card (which still tokenizes) subscribes to nothing.
    response = post_subscribe(customer, card_number="4000 0000 0000 0002")
    assert response["Location"] == "/subscribe/confirm/"
    confirm = customer.client.get("/subscribe/confirm/")
    done = customer.client.post("/subscribe/confirm/", {"quote": quote_of(confirm)}, follow=True)
    assert "was declined" in done.content.decode()
    [sub] = access.get_subscriptions_by_account(customer.account_id)
    assert sub.PaymentDetails.Last4 == "0002" and not sub.is_live and sub.CancelReason == "first_payment_declined"
    assert access.get_receipts_by_account(customer.account_id, today(), today()) == []


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"card_number": "4242 4242 4242 4241"}, "card_number", "not valid"),
    ({"card_number": "hello"}, "card_number", "not valid"),
    ({"card_number": ""}, "card_number", "required"),
    ({"exp_month": "1", "exp_year": "2026"}, "exp_month", "expired"),
    ({"exp_month": "13"}, "exp_month", "valid choice"),
    ({"cvc": "12"}, "cvc", "at least 3"),
    ({"cvc": "abc"}, "cvc", "3 or 4 digits"),
    ({"cvc": "1234"}, "cvc", "3 digits"),  # Visa: the gateway wants 3
    ({"payment_day": "32"}, "payment_day", "valid choice"),
    ({"payment_day": "0"}, "payment_day", "valid choice"),
    ({"product": "OLD-MAG"}, "product", "valid choice"),  # retired
    ({"product": "NOPE"}, "product", "valid choice"),
])
def test_subscribe_errors_are_shown_and_the_number_is_not_echoed(customer, changes, field, message) -> None:
    response = post_subscribe(customer, **changes)
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors[field])
    html = response.content.decode()
    assert "is-invalid" in html
    number = changes.get("card_number", GOOD_CARD["card_number"])
    if number:
        assert number not in html and number.replace(" ", "") not in html
    assert 'name="cvc"' in html and 'value="123"' not in html
    assert SESSION_PENDING not in customer.client.session
    assert access.get_subscriptions_by_account(customer.account_id) == []


def test_confirm_without_a_pending_subscription(customer) -> None:
    response = customer.client.get("/subscribe/confirm/")
    assert response["Location"] == "/subscribe/"


def test_product_retired_between_the_steps(customer, products) -> None:
    post_subscribe(customer, product="GYM")
    products["GYM"].update(actions=[Product.Status.set(ProductStatus.RETIRED)])
    response = customer.client.post("/subscribe/confirm/", {"quote": "x"}, follow=True)
    assert "no longer available" in response.content.decode()
    assert access.get_subscriptions_by_account(customer.account_id) == []


def test_dashboard_is_one_query(customer, ddb_requests) -> None:
    news = subscribe(customer, "NEWS-DAILY", day=31, amount=999, currency="USD")
    subscribe(customer, "GYM", day=5, amount=4500, currency="GBP")
    subscribe(customer, "MUSIC", day=10, amount=1699, currency="USD")
    tea = subscribe(customer, "TEA-JP", day=2, amount=1500, currency="JPY")
    access.cancel_subscription(tea)
    ddb_requests.reset()
    response = customer.client.get("/")
    assert ddb_requests.ops == ["Query", "GetItem"]  # and the seller's tax profile: the amounts' tax
    html = response.content.decode()
    ctx = response.context
    assert len(ctx["live"]) == 3 and [s.SKU for s in ctx["cancelled"]] == ["TEA-JP"]
    assert ctx["totals"] == [("GBP", 4500), ("USD", 2698)]
    assert "£45.00" in html and "$26.98" in html
    upcoming = [p["date"] for p in ctx["upcoming"]]
    assert len(upcoming) == 3 and upcoming == sorted(upcoming)
    assert min(upcoming).isoformat() == min(s.NextPaymentDate for s in ctx["live"])
    assert "Visa ···· 4242" in html and news.NextReminderDate is not None
    assert "<details" in html and "Cancelled subscriptions (1)" in html


def test_dashboard_shows_past_due_clearly(customer) -> None:
    sub = subscribe(customer)
    sub.update(actions=[sub.__class__.Status.set("past_due"), sub.__class__.BillingPeriod.set(sub.NextPaymentDate)])
    html = customer.client.get("/").content.decode()
    assert "Past due" in html and "Payment failed for" in html and "alert-danger" in html


def test_empty_dashboard(customer) -> None:
    html = customer.client.get("/").content.decode()
    assert "You have no subscriptions yet" in html and "No payments scheduled" in html


@pytest.mark.parametrize("path", ["/subscribe/", "card"])
def test_card_number_never_reaches_error_reports(customer, monkeypatch, caplog, path) -> None:
    from django.views.debug import SafeExceptionReporterFilter

    if path == "card":
        path = f"/subscriptions/{subscribe(customer).sub_id}/card/"

    class Broken:
        def tokenize_card(self, *args, **kwargs):
            raise RuntimeError("gateway exploded")

    monkeypatch.setattr("core.cardforms.get_gateway", lambda: Broken())
    customer.client.raise_request_exception = False
    response = customer.client.post(path, {"product": "NEWS-DAILY", "payment_day": "3", **GOOD_CARD})
    assert response.status_code == 500
    [record] = [r for r in caplog.records if r.name == "django.request"]
    posted = SafeExceptionReporterFilter().get_post_parameters(record.request)
    assert set(posted["card_number"]) == {"*"} and set(posted["cvc"]) == {"*"}
    # the number, in any spacing (not any "4242": a random subscription id in the URL may hold it)
    digits = "".join(caplog.text.split())
    assert "4242424242424242" not in digits and "4242 4242" not in caplog.text
    assert "Something went wrong on our side" in response.content.decode()  # the custom 500 page
