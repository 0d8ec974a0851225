"""A subscription to a metered price alone pays by that price: the portal's switch page
does not offer it back, and a switch to it is refused as the subscription's own
(billing/rules/switch.py ``current_price_id``: usage alone's price is its metered one)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine

from billing.rules.switch import usage_only
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient, error_of
from tests.api.test_api_usage_alone import _subscribe, metered  # noqa: F401 - the fixture
from tests.builders import PASSWORD, fresh

pytestmark = pytest.mark.django_db

LATER = datetime(2027, 3, 1, 12, tzinfo=UTC)  # in the first period (15 February to 14 March)


def test_usage_alone_is_not_offered_its_own_metered_price(metered, write_api: ApiClient) -> None:  # noqa: F811
    customer, price, fixed = metered
    _body, sub = _subscribe(write_api, customer, {"items": [{"price": price.PriceId}]})
    with time_machine.travel(LATER, tick=False):
        customer.client.post("/login/", {"username": customer.email, "password": PASSWORD})
        page = customer.client.get(f"/subscriptions/{sub.sub_id}/switch/")
    choices = dict(page.context["form"].fields["sku"].choices)
    assert price.PriceId not in choices and fixed.PriceId in choices


def test_usage_alone_switching_to_its_own_metered_price_is_refused_as_its_own(
        metered, write_api: ApiClient) -> None:  # noqa: F811
    customer, price, _fixed = metered
    _body, sub = _subscribe(write_api, customer, {"items": [{"price": price.PriceId}]})
    with time_machine.travel(LATER, tick=False):
        refused = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"price": price.PriceId})
    assert refused.status_code in (400, 409), refused.content
    assert error_of(refused)["message"] == "The subscription is already to that product."
    assert usage_only(fresh(sub)) and get_gateway().charges_made(sub_id=sub.sub_id) == []
