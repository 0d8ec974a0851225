"""The named access patterns of DESIGN.md §3: the only code that reads or writes items.

Views, forms, commands and batches call these functions; they never build keys or
touch PynamoDB models for queries themselves. Every function here is a Query,
GetItem, PutItem or UpdateItem: nothing scans the table.

The patterns live in one module per kind of item (accounts, subscriptions, receipts,
catalog, events, runs) plus the batches' conditional writes and the staff's look ahead;
this package re-exports them all, so callers keep writing ``access.<name>``.
"""

from ._common import (
    AlreadyExists,
    ConditionFailed,
    PaymentInProgress,
    _expired,
    _is_conditional_failure,
    _live,
    iso_now,
    new_id,
    utc_now,
)
from .accounts import (
    AccountCollection,
    TableOverview,
    create_account,
    get_account,
    get_account_collection,
    get_account_id_for_user,
    link_user,
    table_overview,
)
from .batch_writes import (
    _still_due,
    advance_after_payment,
    claim_reminder,
    mark_past_due,
)
from .bulk import (
    batch_items,
)
from .catalog import (
    create_product,
    get_product,
    list_products,
    retire_product,
    update_product,
)
from .events import (
    audited_change,
    get_events_by_account,
    record_event,
)
from .receipts import (
    create_receipt,
    get_receipt,
    get_receipts_by_account,
    get_unexpired_receipt,
    receipt_snapshot,
    receipt_ttl,
    record_refund,
)
from .runs import (
    MAX_RECORDED_FAILURES,
    finish_batch_run,
    last_completed_run,
    list_batch_runs,
    start_batch_run,
)
from .subscriptions import (
    cancel_subscription,
    change_payment_day,
    create_subscription,
    get_due_payments_by_date,
    get_due_reminders_by_date,
    get_subscription,
    get_subscriptions_by_account,
    payment_details_from,
    replace_card,
    set_schedule,
    subscription_snapshot,
    update_subscription,
)
from .upcoming import (
    UpcomingDay,
    get_upcoming,
)

__all__ = [
    "AlreadyExists",
    "ConditionFailed",
    "PaymentInProgress",
    "new_id",
    "utc_now",
    "iso_now",
    "_is_conditional_failure",
    "_live",
    "_expired",
    "create_account",
    "link_user",
    "get_account",
    "get_account_id_for_user",
    "AccountCollection",
    "get_account_collection",
    "TableOverview",
    "table_overview",
    "payment_details_from",
    "create_subscription",
    "get_subscription",
    "get_subscriptions_by_account",
    "update_subscription",
    "change_payment_day",
    "set_schedule",
    "replace_card",
    "cancel_subscription",
    "get_due_reminders_by_date",
    "get_due_payments_by_date",
    "subscription_snapshot",
    "receipt_ttl",
    "create_receipt",
    "get_receipts_by_account",
    "get_receipt",
    "get_unexpired_receipt",
    "record_refund",
    "receipt_snapshot",
    "list_products",
    "get_product",
    "create_product",
    "update_product",
    "retire_product",
    "audited_change",
    "record_event",
    "get_events_by_account",
    "list_batch_runs",
    "start_batch_run",
    "MAX_RECORDED_FAILURES",
    "finish_batch_run",
    "last_completed_run",
    "_still_due",
    "advance_after_payment",
    "mark_past_due",
    "claim_reminder",
    "UpcomingDay",
    "get_upcoming",
    "batch_items",
]
