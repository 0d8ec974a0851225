"""The HTTP connection pool the batch workers share (at 300 ms per charge a
process needs tens of workers, and a worker that finds the pool empty opens a new
connection for each request and throws it away)."""

from __future__ import annotations

from django.conf import settings

from billing.models import BillingItem, Receipt, Subscription
from core.dynamo.engine import dynamodb_client


def test_every_entity_shares_one_client_whose_pool_holds_64_workers(moto_table) -> None:
    client = dynamodb_client()
    # botocore's own default is 10: 64 workers would share 10 connections.
    assert client.meta.config.max_pool_connections >= 64
    assert client.meta.config.max_pool_connections == BillingItem.Meta.max_pool_connections
    assert Subscription._get_connection().connection.client is client
    assert Receipt._get_connection().connection.client is client


def test_the_site_setting_defaults_to_64_connections() -> None:
    assert settings.DYNAMODB_MAX_POOL_CONNECTIONS >= 64
