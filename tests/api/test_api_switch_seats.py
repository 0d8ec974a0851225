"""The API's switch of a subscription of several seats: the seats are kept (no
``quantity`` to pass), and the preview's ``amount_due`` is what the switch charges. On
moto; time by time-machine."""

from __future__ import annotations

from tests.billing.test_switch_seats import MID, at, catalog, switch_charges, team


def test_the_preview_at_five_seats_is_what_the_switch_charges(write_api, moto_table) -> None:
    prices = catalog()
    sub = team("api-seats@example.com", prices["monthly"])
    path = f"/subscriptions/{sub.sub_id}"
    with at(MID):
        body = write_api.get(f"{path}/switch_preview", price=prices["plus"]).json()
        assert (body["applies"], body["amount"], body["proration_charge"], body["proration_credit"]) == (
            "now", 10000, 5161, 2581)
        done = write_api.post(f"{path}/switch", {"price": prices["plus"], "expected_amount_due": body["amount_due"]},
                              key="sw-seats")
        assert done.status_code == 200, done.content
        refused = write_api.get(f"{path}/switch_preview", product="SOLO")
    [charge] = switch_charges(sub)
    assert charge["amount"] == body["amount_due"] == 2580
    assert done.json()["items"] == [{"price": prices["plus"], "quantity": 5}] and done.json()["quantity"] == 5
    assert refused.status_code == 409 and "not sold by the seat" in refused.json()["error"]["message"]
