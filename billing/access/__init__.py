"""The named access patterns (docs/TABLE.md, "Access patterns"): the only code that reads or writes items.

Views, forms, commands and batches call these functions; they never build keys or
touch PynamoDB models for queries themselves. Every function here is a Query,
GetItem, PutItem or UpdateItem: nothing scans the table.

One module per kind of item (accounts, subscriptions, receipts, catalog, events,
runs), the batches' conditional writes and the staff's look ahead; this package is
their public API: callers write ``access.<name>``.
"""

from billing.access._common import new_id, utc_now
from billing.access.accounts import (
    AccountCollection,
    create_account,
    get_account,
    get_account_collection,
    get_account_id_for_user,
    link_user,
    set_stripe_customer,
)
from billing.access.api_keys import (
    IDEMPOTENCY_HOURS,
    begin_idempotent,
    count_api_call,
    create_api_key,
    find_api_key,
    finish_idempotent,
    get_api_key,
    list_api_keys,
    release_idempotent,
    revoke_api_key,
    touch_api_key,
)
from billing.access.api_pages import (
    Page,
    coupons_page,
    disputes_page,
    products_page,
    receipts_page,
    subscriptions_page,
)
from billing.access.batch_writes import (
    advance_after_payment,
    claim_reminder,
    extend_after_cancel,
    forget_awaiting_charge,
    mark_past_due,
)
from billing.access.bulk import batch_items, due_subscription
from billing.access.cards import (
    Replaced,
    Wallet,
    add_card,
    card_details,
    default_card,
    get_card,
    get_cards,
    get_wallet,
    remove_card,
    replace_card_everywhere,
    set_default_card,
    subscriptions_using,
    update_card_copies,
    use_card,
)
from billing.access.catalog import create_product, get_product, list_products, retire_product, update_product
from billing.access.coupons import (
    apply_coupon,
    check_coupon,
    coupon_snapshot,
    create_coupon,
    end_coupon,
    get_coupon,
    list_coupons,
    release_coupon_use,
    update_coupon,
)
from billing.access.credit_notes import (
    credit_notes_of_receipt,
    get_credit_note,
    get_credit_notes_by_account,
    is_credit_note_number,
)
from billing.access.data_rights import CLOSE_REASON as ACCOUNT_CLOSED_REASON
from billing.access.data_rights import ERASED as ERASED_TOKEN
from billing.access.data_rights import (
    account_items,
    account_receipts,
    delete_item,
    erase_item,
    forget_user_link,
    item_data,
    keep_receipt_until,
    mark_account_closed,
    pseudonym,
)
from billing.access.disputes import (
    DISPUTES_PAGE_SIZE,
    Dispute,
    dispute_snapshot,
    list_disputes,
    record_dispute,
)
from billing.access.due_dates import due_key, no_due_attributes, shard_of
from billing.access.due_shards import REFRESH as DUE_SHARDS_REFRESH
from billing.access.due_shards import (
    DueShardLayout,
    check_due_shards,
    due_shard_layout,
    due_shards_mismatch_message,
    forget_due_shard_layout,
    read_due_shard_layout,
    record_due_shards,
)
from billing.access.endpoints import (
    DELIVERY_LOG_PAGE,
    advance_cursor,
    advance_done_through,
    claim_delivery,
    clear_endpoint_failing,
    delivery_log,
    disable_failing_endpoint,
    get_delivery,
    get_endpoint,
    iso_time,
    list_endpoints,
    mark_endpoint_failing,
    oldest_unfinished,
    queue_delivery,
    queue_extra_delivery,
    queue_page,
    record_attempt,
    rotate_endpoint_secret,
    set_endpoint_status,
    stream_position,
)
from billing.access.endpoints import create_endpoint as create_webhook_endpoint
from billing.access.events import (
    audited_change,
    get_events_by_account,
    new_event,
    record_event,
    subscription_snapshot,
)
from billing.access.history import FailedAttempt, PaymentHistory, get_payment_history
from billing.access.incomplete import (
    delete_entry,
    expire_incomplete,
    incomplete_entries,
    mark_incomplete,
    release_trial,
)
from billing.access.languages import get_user_link, set_account_language
from billing.access.lifecycle import (
    end_subscription,
    keep_subscription,
    pause_subscription,
    resume_subscription,
)
from billing.access.lookups import (
    get_account_id_for_subscription,
    get_account_ids_for_users,
    record_subscription_id,
)
from billing.access.outbox import (
    events_after,
    new_merchant_event,
    payment_attempt_event,
    settled_before,
)
from billing.access.receipt_numbers import (
    ReceiptNumbers,
    format_receipt_number,
    is_receipt_number,
    reserve_receipt_numbers,
)
from billing.access.receipts import (
    claim_refund,
    create_receipt,
    get_receipt,
    get_receipt_by_number,
    get_receipt_for_url,
    get_receipts_by_account,
    get_unexpired_receipt,
    receipt_snapshot,
    receipt_ttl,
    record_refund,
    refund_of_request,
    release_refund_claim,
)
from billing.access.reshard import (
    ReshardCount,
    begin_due_shards_migration,
    finish_due_shards_migration,
    reshard_day,
)
from billing.access.runs import (
    MAX_RECORDED_FAILURES,
    RUN_LEASE,
    abandoned_batch_runs,
    completed_batch_runs,
    finish_batch_run,
    list_batch_runs,
    mark_batch_run_abandoned,
    renew_batch_run,
    start_batch_run,
)
from billing.access.seller import (
    default_seller_profile,
    get_seller_profile,
    registrations_of,
    save_seller_profile,
    seller_of,
    seller_tax,
)
from billing.access.subscriptions import (
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
    update_subscription,
)
from billing.access.switch import count_switch_failure, switch_failures, switch_subscription
from billing.access.tax_identity import (
    TaxIdentity,
    backfill_billing_country,
    buyer_of,
    copy_tax_identity,
    set_card_country,
    set_tax_identity,
    tax_evidence_mismatch,
)
from billing.access.tax_ledger import (
    InvoiceSeller,
    InvoiceTax,
    invoice_seller,
    invoice_tax,
    tax_terms,
    tax_totals,
)
from billing.access.tax_report import quarter_tax_report
from billing.access.trials import record_trial_will_end, trial_used
from billing.access.upcoming import (
    UpcomingDay,
    count_due_payments_by_date,
    count_due_reminders_by_date,
    get_upcoming,
)
from billing.access.webhooks import (
    WEBHOOK_PAGE_SIZE,
    claim_webhook,
    event_time,
    finish_webhook,
    get_webhook_events,
    webhook_key,
)
from billing.exceptions import (
    AlreadyExists,
    CardInUse,
    ConditionFailed,
    CouponRefused,
    DueShardsMismatch,
    MigrationConflict,
    PaymentInProgress,
    ReceiptNumberTaken,
    RefundedMeanwhile,
    TrialAlreadyUsed,
)

__all__ = [
    # the merchant's events (the outbox)
    "events_after",
    "record_trial_will_end",
    "new_merchant_event",
    "payment_attempt_event",
    "settled_before",
    # incomplete first payments
    "delete_entry",
    "expire_incomplete",
    "incomplete_entries",
    "mark_incomplete",
    "release_trial",
    "switch_subscription",
    "count_switch_failure",
    "switch_failures",
    "end_subscription",
    "keep_subscription",
    "pause_subscription",
    "resume_subscription",
    # errors callers catch
    "AlreadyExists",
    "ConditionFailed",
    "PaymentInProgress",
    "RefundedMeanwhile",
    "TrialAlreadyUsed",
    # ids and the clock
    "new_id",
    "utc_now",
    # accounts
    "AccountCollection",
    "create_account",
    "get_account",
    "get_account_collection",
    "get_account_id_for_user",
    "link_user",
    # the customer's language (account, user link, subscriptions)
    "get_user_link",
    "set_account_language",
    "set_stripe_customer",
    # data rights: the partition for an export, a closed account's erasure
    "ACCOUNT_CLOSED_REASON",
    "ERASED_TOKEN",
    "account_items",
    "account_receipts",
    "delete_item",
    "erase_item",
    "forget_user_link",
    "item_data",
    "keep_receipt_until",
    "mark_account_closed",
    "pseudonym",
    # the quarter's VAT report (billing/rules/tax_report.py over the ledger's totals)
    "quarter_tax_report",
    # the payment processor's webhook events
    "WEBHOOK_PAGE_SIZE",
    "claim_webhook",
    "event_time",
    "finish_webhook",
    "get_webhook_events",
    "webhook_key",
    # outbound webhooks: the merchant's endpoints, their deliveries (queue and log)
    "DELIVERY_LOG_PAGE",
    "advance_cursor",
    "advance_done_through",
    "claim_delivery",
    "clear_endpoint_failing",
    "create_webhook_endpoint",
    "delivery_log",
    "disable_failing_endpoint",
    "get_delivery",
    "get_endpoint",
    "iso_time",
    "list_endpoints",
    "mark_endpoint_failing",
    "oldest_unfinished",
    "queue_delivery",
    "queue_extra_delivery",
    "queue_page",
    "record_attempt",
    "rotate_endpoint_secret",
    "set_endpoint_status",
    "stream_position",
    # the staff look-up: a subscription by its id alone, the accounts of many users
    "get_account_id_for_subscription",
    "get_account_ids_for_users",
    "record_subscription_id",
    # subscriptions
    "cancel_subscription",
    "change_payment_day",
    "create_subscription",
    "trial_used",
    "get_due_payments_by_date",
    "get_due_reminders_by_date",
    "get_subscription",
    "get_subscriptions_by_account",
    "payment_details_from",
    "replace_card",
    "set_schedule",
    "subscription_snapshot",
    "update_subscription",
    # coupons: staff's codes, and a coupon's use (counted with the write that gives it)
    "CouponRefused",
    "apply_coupon",
    "check_coupon",
    "coupon_snapshot",
    "create_coupon",
    "end_coupon",
    "get_coupon",
    "list_coupons",
    "release_coupon_use",
    "update_coupon",
    # the wallet
    "CardInUse",
    "Replaced",
    "Wallet",
    "add_card",
    "card_details",
    "default_card",
    "get_card",
    "get_cards",
    "get_wallet",
    "remove_card",
    "replace_card_everywhere",
    "set_default_card",
    "subscriptions_using",
    "update_card_copies",
    "use_card",
    # the batches' conditional writes
    "advance_after_payment",
    "forget_awaiting_charge",
    "claim_reminder",
    "extend_after_cancel",
    "mark_past_due",
    # receipts
    "create_receipt",
    "get_receipt",
    "get_receipts_by_account",
    "get_unexpired_receipt",
    "receipt_snapshot",
    "receipt_ttl",
    "record_refund",
    "claim_refund",
    "release_refund_claim",
    "refund_of_request",
    # disputes (chargebacks): on the receipt, and the staff-wide list
    "DISPUTES_PAGE_SIZE",
    "Dispute",
    "dispute_snapshot",
    "list_disputes",
    "record_dispute",
    # receipt numbers (R-2026-000123) and the payment history
    "FailedAttempt",
    "PaymentHistory",
    "ReceiptNumberTaken",
    "ReceiptNumbers",
    "format_receipt_number",
    "get_payment_history",
    "get_receipt_by_number",
    "get_receipt_for_url",
    "is_receipt_number",
    "reserve_receipt_numbers",
    # catalog
    "create_product",
    "get_product",
    "list_products",
    "retire_product",
    "update_product",
    # audit trail
    "audited_change",
    "get_events_by_account",
    "new_event",
    "record_event",
    # batch runs
    "MAX_RECORDED_FAILURES",
    "RUN_LEASE",
    "abandoned_batch_runs",
    "completed_batch_runs",
    "renew_batch_run",
    "mark_batch_run_abandoned",
    "finish_batch_run",
    "list_batch_runs",
    "start_batch_run",
    # the due indexes' write shards
    "DUE_SHARDS_REFRESH",
    "DueShardLayout",
    "DueShardsMismatch",
    "check_due_shards",
    "due_key",
    "due_shard_layout",
    "due_shards_mismatch_message",
    "no_due_attributes",
    "forget_due_shard_layout",
    "read_due_shard_layout",
    "record_due_shards",
    "shard_of",
    # migrate_due_shards' steps
    "MigrationConflict",
    "ReshardCount",
    "begin_due_shards_migration",
    "finish_due_shards_migration",
    "reshard_day",
    # the seller's tax profile, the customer's tax identity
    "TaxIdentity",
    "backfill_billing_country",
    "buyer_of",
    "copy_tax_identity",
    "default_seller_profile",
    "get_seller_profile",
    "registrations_of",
    "save_seller_profile",
    "seller_of",
    "seller_tax",
    "set_card_country",
    "set_tax_identity",
    "tax_evidence_mismatch",
    # staff look ahead, bulk writes
    "UpcomingDay",
    "count_due_payments_by_date",
    "count_due_reminders_by_date",
    "get_upcoming",
    "batch_items",
    "due_subscription",
    # the REST API: its keys, rate counter and idempotency records, its one-Query pages
    "IDEMPOTENCY_HOURS",
    "begin_idempotent",
    "count_api_call",
    "create_api_key",
    "find_api_key",
    "finish_idempotent",
    "get_api_key",
    "list_api_keys",
    "release_idempotent",
    "revoke_api_key",
    "touch_api_key",
    "Page",
    "coupons_page",
    "disputes_page",
    "products_page",
    "receipts_page",
    "subscriptions_page",
    # tax: the seller and the buyer, invoices' tax, credit notes, the quarter's totals
    "InvoiceSeller",
    "InvoiceTax",
    "credit_notes_of_receipt",
    "get_credit_note",
    "get_credit_notes_by_account",
    "invoice_seller",
    "invoice_tax",
    "is_credit_note_number",
    "tax_terms",
    "tax_totals",
]
