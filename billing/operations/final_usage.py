"""The usage of a period a cancellation ends (docs/USAGE.md "Billed at a cancellation"):
a cancelled subscription has no next payment to bill its open period's usage in arrears,
so the cancel bills it alone: the period closed (``mark_billed`` through the last day
served: a later event of it is refused), read strongly consistent, charged once under the
key ``usage:<SubId>:<start>`` and recorded with a receipt of one usage line.

Safe to repeat and to be killed at any step, as a payment is: closing only moves the
watermark forward, the closed aggregate re-reads the same quantity, the gateway replays
the key's charge, and the receipt is written only if absent. A charge whose receipt was
never written (the process died between the two) is found by the reconciliation, which
records it here by its metadata's ``kind``."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from django.conf import settings

from billing import access
from billing.access.usage_billing import retry_usage_end, usage_end_entries
from billing.models import Price, Receipt, Subscription, SubscriptionStatus, UsageEndEntry
from billing.operations.metered import usage_priced, usages_over
from billing.operations.payments import send_receipt
from billing.rules.invoice_tax import TaxTerms, tax_metadata
from billing.rules.lifecycle import CancelMode, last_usage_billed_on
from billing.rules.projection import ChargeKind, ComingCharge, MeteredUsage
from billing.rules.schedule import anchor_on_or_before, cadence_of, retry_after
from billing.rules.tax import TaxLine
from billing.rules.usage_metadata import usage_keys, usage_metadata
from core.clock import billing_today
from core.payments.errors import GatewayError
from core.payments.gateway import ChargeResult, PaymentGateway, get_gateway

USAGE_KIND = "usage"  # the charge's metadata ``kind`` and its receipt's ``Kind``

log = logging.getLogger(__name__)


def final_usage_key(sub_id: str, start: date, attempt: int = 0) -> str:
    """The gateway idempotency key of the usage a cancellation bills; a retry after a
    declined charge has its own (the processor would replay the decline under the first)."""
    key = f"usage:{sub_id}:{start.isoformat()}"
    return key if attempt == 0 else f"{key}:retry{attempt}"


@dataclass(frozen=True)
class FinalUsage:
    """What billing a cancelled period's usage came to: its receipt, or nothing to bill
    (neither), or the charge refused by the bank (``declined``, its reason)."""

    receipt: Receipt | None = None
    declined: str | None = None


def usage_start(sub: Subscription, last_day: date) -> date:
    """The first day of the open period: the first day the last payment paid for
    (``LastPaymentDate``), the day the next payment's window would have started (usage
    before it was billed by that payment; a trial's days, before it, are free). A
    subscription without it (written before it existed) falls back to the cadence's date on
    or before the last day served."""
    if sub.LastPaymentDate:
        return date.fromisoformat(sub.LastPaymentDate)
    return anchor_on_or_before(cadence_of(sub), last_day)


@dataclass(frozen=True)
class UsageDue:
    """The open period's usage a cancellation bills: its first day, each metered price's
    usage priced, and its tax line (``line.gross`` is the amount charged)."""

    start: date
    usages: tuple[MeteredUsage, ...]
    line: TaxLine
    tax: TaxTerms


def usage_due(sub: Subscription, last_day: date, *, close: bool = False,
              prices: dict[str, Price] | None = None, nothing_too: bool = False) -> UsageDue | None:
    """What billing ``sub``'s usage through ``last_day`` charges, as ``bill_final_usage``
    charges it (None: no metered price, nothing used unless ``nothing_too``, or a trial's
    first period that never began): the cancel page shows it before the customer confirms,
    and a subscription ending at its period's end shows its last charge as it stands.
    ``close``: each period is closed first (``mark_billed``), so no event is left unbilled;
    a page's reading closes nothing. ``prices``: the metered prices the caller has read, by
    id. Requests, per metered price: its GetItem (unless given), the meter's GetItem, the
    usage's Query (and one UpdateItem per usage shard to close it)."""
    start, end = usage_start(sub, last_day), last_day + timedelta(days=1)
    if not sub.MeteredPriceId or start >= end:  # cancelled during a free trial: its usage never began
        return None
    usages = usages_over(sub, start, end, close=close, prices=prices)
    amount = sum(u.amount for u in usages)
    if not usages or (amount <= 0 and not nothing_too):
        return None
    tax = access.tax_terms(sub)
    return UsageDue(start, usages, tax.line(amount, last_day), tax)


def last_usage_charge(sub: Subscription, today: date, *,
                      prices: dict[str, Price] | None = None) -> ComingCharge | None:
    """The charge still to come of a subscription cancelled at its period's end (still
    running after ``today``): its last period's usage alone, charged the day after its
    last day, as it stands (``usage_due``, what ``bill_final_usage`` then charges); None
    for any other. The API's upcoming payment shows it, as Stripe's upcoming invoice shows
    a cancelling subscription's last invoice, and so do the subscription's pages.
    ``prices``: the metered prices the caller has read, by id."""
    billed_on = last_usage_billed_on(sub, today)
    if billed_on is None:
        return None
    last_day = billed_on - timedelta(days=1)
    due = usage_due(sub, last_day, prices=prices, nothing_too=True)
    if due is None:
        return None
    return ComingCharge(date=billed_on, period_start=due.start, period_end=last_day, list_price=0, discount=0,
                        amount=due.line.gross, kind=ChargeKind.FINAL_USAGE, tax_line=due.line, usages=due.usages)


def bill_final_usage(sub: Subscription, *, last_day: date, actor: str,
                     gateway: PaymentGateway | None = None, attempt: int = 0) -> FinalUsage:
    """Close ``sub``'s usage through ``last_day``, charge it and record its receipt (none:
    no metered price, or no event counted; used but priced at 0, or events adding up to
    0: a receipt of 0, no charge;
    ``declined``: the bank refused the charge, the
    period stays closed, and the entry's retry charges it under ``attempt``'s key). Requests: the
    price's and the meter's GetItems, one UpdateItem per usage shard, the Query, then the
    charge and the receipt's transaction when anything was used."""
    # Closed first: no event is left unbilled. Read priced at nothing too: usage within
    # free units still gets its receipt.
    due = usage_due(sub, last_day, close=True, nothing_too=True)
    if due is None or not any(usage.quantity or usage.events for usage in due.usages):
        return FinalUsage()  # no event counted: nothing to charge or record
    start, usages, line, tax = due.start, due.usages, due.line, due.tax
    metadata = {
        "account_id": sub.account_id, "sub_id": sub.sub_id, "sku": sub.SKU, "kind": USAGE_KIND,
        "billing_date": start.isoformat(), "period_start": start.isoformat(), "period_end": last_day.isoformat(),
        **tax_metadata(line, prices_include_tax=tax.prices_include_tax), **usage_metadata(usages),
    }
    if line.gross == 0:
        # Used, priced at nothing (free units, or events of 0): no charge (a processor
        # refuses 0), a receipt of 0 that records the usage, as a payment a coupon took
        # whole. So each event of a closed day is in one receipt's usage (docs/MONEY.md M8).
        free = ChargeResult(status="succeeded", charge_id="", amount=0, currency=sub.Currency, metadata=metadata)
        return FinalUsage(record_usage_charge(sub, free, actor=actor, priced=usages))
    gateway = gateway or get_gateway()
    result = gateway.charge(sub.PaymentDetails.Token if sub.PaymentDetails else "", line.gross, sub.Currency,
                            final_usage_key(sub.sub_id, start, attempt), metadata, off_session=True)
    if not result.succeeded:  # declined, or the bank wants the cardholder (off-session: a decline)
        return FinalUsage(declined=result.decline_code or result.status)
    return FinalUsage(record_usage_charge(sub, result, actor=actor, priced=usages))


def receipt_sku(metadata: dict[str, str]) -> str:
    """The SKU in the key of the receipt of a charge with ``metadata``: a usage charge's is
    ``<SKU>.usage`` (its first day is often a period receipt's too), any other's the SKU."""
    return f"{metadata['sku']}.{USAGE_KIND}" if metadata.get("kind") == USAGE_KIND else metadata["sku"]


def record_usage_charge(sub: Subscription, result: ChargeResult, *, actor: str,
                        priced: tuple[MeteredUsage, ...] = ()) -> Receipt:
    """The receipt of a usage charge (its metadata says what it billed), only if absent,
    and its receipt e-mail when written now:
    keyed by the usage's first day and ``<SKU>.usage``, never a period's receipt key, and
    paying no day after the last served (a cancel's refund never takes it back). Its lines
    are the usage's tiers: ``priced`` (as charged), else the price read again (the
    reconciliation's, one GetItem)."""
    meta = result.metadata
    start, last_day = date.fromisoformat(meta["period_start"]), date.fromisoformat(meta["period_end"])
    receipt, created = access.create_receipt(
        sub, billing_date=start, amount=result.amount, currency=result.currency, charge_id=result.charge_id or None,
        retention_days=settings.RECEIPT_RETENTION_DAYS, period_end=last_day, actor=actor,
        sku=receipt_sku(meta), product_name=sub.ProductName or sub.SKU, kind=USAGE_KIND,
        tax=access.invoice_tax(sub, amount=result.amount, on=billing_today(settings.BILLING_TIMEZONE),
                               metadata=meta),
        usage=usage_keys(meta), priced=priced or usage_priced(meta))
    if created:
        # Its receipt e-mail, as every charge's (once: a re-run finds the receipt written):
        # no next payment, so it says the subscription ends with the period billed.
        send_receipt(sub, receipt, True, result, start, last_day, None)
    return receipt


def bill_ended_periods(today: date, *, gateway: PaymentGateway | None = None,
                       takes: Callable[[str], bool] | None = None, actor: str = "batch") -> Counter[str]:
    """The payment run's step for cancelled subscriptions whose last period's usage is due
    (``UsageEndEntry``: a cancel at period end, the day after its last day served; a cancel
    now whose own attempt failed, the next day): each billed, then its entry deleted.
    ``takes(sub_id)``: only these (a run's shards). Counts ``usage_billed`` (charged) and
    ``usage_declined`` (declined: retried on ``PAYMENT_RETRY_DAYS``, each retry under its
    own key, then given up, the period closed unpaid). An entry whose subscription was
    kept, cancelled now (which billed its usage itself) or cancelled again to another day
    is deleted unbilled; one whose processor could not be reached stays for the next run
    (the same key: charged once). Requests: one Query, one GetItem per entry,
    ``bill_final_usage``'s, one DeleteItem (a retry: one PutItem more)."""
    counts: Counter[str] = Counter()
    for entry in usage_end_entries(today):
        if takes is not None and not takes(entry.SubId):
            continue
        sub = access.get_subscription(entry.AccountId, entry.SubId, entry.SKU)
        if sub is None or not still_ends(sub, entry):
            access.delete_entry(entry)
            continue
        try:
            done = bill_final_usage(sub, last_day=date.fromisoformat(entry.LastDay), actor=actor, gateway=gateway,
                                    attempt=int(entry.Attempts or 0))
        except GatewayError as error:
            log.warning("usage of %s's last period not billed yet: %s", entry.SubId, error)
            continue
        counts["usage_billed"] += done.receipt is not None
        if done.declined:
            counts["usage_declined"] += 1
            retry_usage_later(entry, sub, today, done.declined)
        else:
            access.delete_entry(entry)
    return counts


def retry_usage_later(entry: UsageEndEntry, sub: Subscription, today: date, reason: str) -> None:
    """A declined usage charge: tried again on the next of ``PAYMENT_RETRY_DAYS`` (its
    attempts counted on the entry), or given up after the last, the period closed unpaid."""
    again = retry_after(today, settings.PAYMENT_RETRY_DAYS, int(entry.Attempts or 0))
    if again is None:
        log.warning("usage of %s's last period given up after %s declined charges (%s)", entry.SubId,
                    int(entry.Attempts or 0) + 1, reason)
        access.delete_entry(entry)
        return
    retry_usage_end(entry, sub, again)


def told_in_advance(entry: UsageEndEntry) -> bool:
    """Whether the last charge ``entry`` bills is announced before it is made (the
    customer's reminder, the merchant's ``invoice.upcoming``): a cancel at period end's;
    not a retry after a decline (its own e-mail told the customer), nor a cancel now's."""
    return not int(entry.Attempts or 0) and entry.Mode == CancelMode.PERIOD_END


def still_ends(sub: Subscription, entry: UsageEndEntry) -> bool:
    """The cancel the entry was put by still holds: a cancel now for good; a cancel at
    period end while it still ends on that day (not kept, nor cancelled now since). Staff's
    cancel stores no mode: it ends at the period's end, and is never kept."""
    if sub.Status != SubscriptionStatus.CANCELLED:
        return False
    if entry.Mode == CancelMode.NOW:
        return sub.CancelMode == CancelMode.NOW
    return sub.CancelMode in (CancelMode.PERIOD_END, None) and sub.PaidThroughDate == entry.LastDay
