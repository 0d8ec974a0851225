"""A switch refused for usage alone says why in the whole sentence (billing/rules/switch.py
``check_switch``): usage alone adds a fixed price of its own product only (a plan's
switch to another metered price alone: tests/api/test_usage_alone_other_price.py)."""

from __future__ import annotations

from decimal import Decimal

import pytest
import time_machine

from billing import access
from billing.actions import prices as price_actions
from billing.rules.pricing import PriceTerms
from tests.api.conftest import ApiClient, error_of
from tests.api.test_api_usage_alone import SUBSCRIBED, _subscribe, metered  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def test_usage_alone_switching_to_another_product_is_told_so(metered, write_api: ApiClient) -> None:  # noqa: F811
    customer, price, _fixed = metered
    _body, sub = _subscribe(write_api, customer, {"items": [{"price": price.PriceId}]})
    access.create_product("PHOTO", "Photo editor", 500, "USD")
    other = price_actions.add_price("PHOTO", PriceTerms("USD", unit_amount=Decimal(500)), actor="test")
    with time_machine.travel(SUBSCRIBED, tick=False):
        refused = write_api.post(f"/subscriptions/{sub.sub_id}/switch", {"price": other.PriceId})
    assert error_of(refused)["message"] == ("A subscription to usage alone can add a fixed price of its own product "
                                            "only: subscribe to the other product, then cancel this one.")
