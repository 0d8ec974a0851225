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
