"""Staff add a metered price to a live subscription (the money role's): the page offers
only the prices the subscription can bill beside its own (its currency and cadence, a
meter it does not bill yet), the subscription bills it from its next payment on, and a
choice no longer possible is a field error that writes nothing."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from billing import access
from billing.actions import meters as meter_actions
from billing.actions import prices as price_actions
from billing.models import MeterAggregation
from billing.rules.pricing import PriceTerms
from tests.builders import fresh, make_account, make_subscription, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def metered(moto_table):
    for name in ("api_calls", "storage_gb"):
        meter_actions.add_meter(name, name, MeterAggregation.SUM, actor="test")
    access.create_product("API", "Developer API", 999, "USD")
    calls = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal("0.5")), actor="t", meter="api_calls")
    storage = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(10)), actor="t", meter="storage_gb")
    euros = price_actions.add_price("API", PriceTerms("EUR", unit_amount=Decimal(10)), actor="t", meter="storage_gb")
    yearly = price_actions.add_price("API", PriceTerms("USD", unit_amount=Decimal(10), interval="year"), actor="t",
                                     meter="storage_gb")
    sub = make_subscription(make_account(), sku="API", payment_day=15, amount=999, today=date(2027, 2, 15))
    sub = meter_actions.attach_metered_price(sub, calls.PriceId, actor="test")
    return sub, calls, storage, euros, yearly


def test_the_money_role_adds_a_metered_price_the_subscription_can_bill(client, metered) -> None:
    sub, calls, storage, euros, yearly = metered
    client.force_login(make_user("money@rpay.localhost", staff=True, money=True))
    url = reverse("admin:staff_add_metered", args=[sub.account_id, sub.sub_id])
    account = client.get(reverse("admin:staff_account", args=[sub.account_id])).content.decode()
    assert 'data-testid="staff-add-metered"' in account
    page = client.get(url).content.decode()
    # its own price, another currency's and another cadence's are not offered
    assert storage.PriceId in page and calls.PriceId not in page
    assert euros.PriceId not in page and yearly.PriceId not in page
    done = client.post(url, {"price": storage.PriceId, "version": fresh(sub).Version})
    assert done.status_code == 302, done.content.decode()
    assert fresh(sub).metered_price_ids == [calls.PriceId, storage.PriceId]
    attached = [e for e in access.get_events_by_account(sub.account_id)
                if e.Action == "subscription.metered_price_attached" and e.Actor == "money@rpay.localhost"]
    assert len(attached) == 1
    # nothing left to add: said on the account page, nothing offered
    refused = client.get(url)
    assert refused.status_code == 302 and refused["Location"].endswith(f"/staff/accounts/{sub.account_id}/")


def test_a_choice_no_longer_possible_is_a_field_error(client, metered) -> None:
    sub, calls, storage, euros, yearly = metered
    client.force_login(make_user("money@rpay.localhost", staff=True, money=True))
    url = reverse("admin:staff_add_metered", args=[sub.account_id, sub.sub_id])
    answer = client.post(url, {"price": euros.PriceId, "version": fresh(sub).Version})
    assert answer.status_code == 200 and "Select a valid choice" in answer.content.decode()
    assert fresh(sub).metered_price_ids == [calls.PriceId]
