"""The billing table as the engine knows it: registered at start-up (billing/apps.py)
so that ``setup_dynamodb``, ``export_workbench_model`` and the tests' fixtures find it."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from billing import access
from billing.models import BillingItem, Receipt
from billing.workbench import DESCRIPTION, NAME, billing_table_model
from core.dynamo.table import RegisteredTable, enable_ttl, register, ttl_status


def prepare_table(due_shards: int | None = None, ttl: bool = True) -> dict[str, Any]:
    """After the table exists: receipts expire through ``TTL`` (``ttl=False``: left as it
    is, for setup_dynamodb's report on a table that exists), and the due indexes' shard
    count is recorded if the table has none yet (``due_shards``, default
    ``settings.DUE_SHARDS``)."""
    layout = access.record_due_shards(due_shards or settings.DUE_SHARDS)
    return {"ttl": enable_ttl(BillingItem, Receipt.TTL.attr_name) if ttl else ttl_status(BillingItem),
            "due_shards": layout}


def register_billing_table() -> None:
    register(RegisteredTable(
        label="billing", base=BillingItem, description="the billing table", prepare=prepare_table,
        ttl_attribute=Receipt.TTL.attr_name,
        workbench=billing_table_model, workbench_name=NAME, workbench_description=DESCRIPTION))
