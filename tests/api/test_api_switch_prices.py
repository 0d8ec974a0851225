"""The API's switch to a price (``POST /subscriptions/{id}/switch`` with ``price``) and its
preview (``GET /subscriptions/{id}/switch_preview``): the preview's ``amount_due`` is what
the switch charges, a stale ``expected_amount_due`` charges nothing, a repeated
Idempotency-Key replays the first answer. On moto; time by time-machine."""

from __future__ import annotations

from datetime import timedelta

from billing import access
from tests.billing.test_switch_prices import MID, at, catalog, subscribed, switch_charges


def test_the_api_preview_is_what_the_switch_charges(write_api, moto_table) -> None:
    yearly = catalog()
    sub = subscribed(access.create_account("api@example.com"))
    path = f"/subscriptions/{sub.sub_id}"
    with at(MID):
        preview = write_api.get(f"{path}/switch_preview", price=yearly)
        assert preview.status_code == 200, preview.content
        body = preview.json()
        assert (body["applies"], body["interval"], body["amount"], body["period_end"]) == (
            "now", "year", 12000, "2028-03-24")
        stale = write_api.post(f"{path}/switch", {"price": yearly, "expected_amount_due": body["amount_due"] + 1},
                               key="sw-0")
        assert stale.status_code == 409 and not switch_charges(sub)
        done = write_api.post(f"{path}/switch", {"price": yearly, "expected_amount_due": body["amount_due"]},
                              key="sw-1")
        assert done.status_code == 200, done.content
        again = write_api.post(f"{path}/switch", {"price": yearly, "expected_amount_due": body["amount_due"]},
                               key="sw-1")
        assert again.json() == done.json()
        assert write_api.post(f"{path}/switch", {"price": yearly, "product": "MAG"}).status_code == 400
    [charge] = switch_charges(sub)
    assert charge["amount"] == body["amount_due"] == 11484
    assert done.json()["items"][0]["price"] == yearly and done.json()["interval"] == "year"
    with at(MID + timedelta(days=1)):
        down = write_api.get(f"{path}/switch_preview", product="MAG").json()
    assert (down["applies"], down["amount_due"], down["effective_date"], down["next_payment_amount"]) == (
        "period_end", 0, "2028-03-25", 1000)


def test_with_prices_before_vat_the_preview_is_what_the_switch_charges_tax_included(write_api, moto_table) -> None:
    """The seller's prices exclude VAT: ``amount_due`` is the new price less the credit,
    both before VAT, plus the VAT once (``switch.charged_now``), and the switch charges it."""
    from billing.actions import switch as switch_actions
    from tests.billing.test_switch_tax_added import prices_exclude_vat

    prices_exclude_vat()
    yearly = catalog("EUR", 1000, 12000)
    sub = subscribed(access.create_account("api-vat@example.com"))
    path = f"/subscriptions/{sub.sub_id}"
    with at(MID):
        body = write_api.get(f"{path}/switch_preview", price=yearly).json()
        q = switch_actions.quote(sub, yearly, today=MID)
        assert (body["proration_charge"], body["proration_credit"], body["refund"]) == (12000, 516, 0)
        assert body["amount_due"] == switch_actions.charged_now(sub, q) == 11484 + 2526
        done = write_api.post(f"{path}/switch", {"price": yearly, "expected_amount_due": body["amount_due"]},
                              key="sw-vat")
        assert done.status_code == 200, done.content
    [charge] = switch_charges(sub)
    assert charge["amount"] == body["amount_due"]


def test_with_prices_before_vat_the_preview_s_refund_is_what_the_switch_refunds(write_api, moto_table) -> None:
    """A credit above the new price: ``refund`` is ``switch.refunded_now`` (the excess before
    VAT plus the VAT those days were charged), what the switch then refunds."""
    from decimal import Decimal

    from billing.actions import prices as price_actions
    from billing.actions import switch as switch_actions
    from billing.rules.pricing import PriceTerms
    from tests.billing.test_switch_tax_added import prices_exclude_vat

    prices_exclude_vat()
    catalog("EUR", 10000, 120000)
    access.create_product("LITE", "Lite", 100, "EUR")
    cheap = price_actions.add_price("LITE", PriceTerms("EUR", unit_amount=Decimal(1200), interval="year"),
                                    actor="t", nickname="Yearly").PriceId
    sub = subscribed(access.create_account("api-vat-refund@example.com"))
    with at(MID):
        body = write_api.get(f"/subscriptions/{sub.sub_id}/switch_preview", price=cheap).json()
        assert (body["amount_due"], body["proration_credit"], body["refund"]) == (0, 5161, 4832)
        done = switch_actions.switch(sub, cheap, today=MID, actor="customer")
    assert done.refunded == body["refund"]
