"""A customer's data rights (docs/PORTAL.md, "Your data"): a copy of their data (its audit
event; the file itself is billing/views/account_export.py) and closing the account: every live
subscription cancelled now with the cancel-now refund, the cards detached and the customer
deleted at the processor, the confirmation e-mail, the personal data erased in every item
of the account's partition and its look-ups (the customer's own words in the audit notes
too), in the merchant's events about it and the webhook deliveries made of them, the Django
user and its log-in throttle records deleted. Receipts are kept, with their invoice fields, until the tax retention
date, then deleted by their TTL.

Every step is safe to repeat, and to run beside a payment run or another close: the
cancel is a conditional write (one of two wins; the loser refunds nothing), refunds carry
the cancel-now idempotency keys, erasure is conditional per item.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_noop

from billing import access
from billing.account_data import account_data_sources
from billing.actions import lifecycle
from billing.models import (
    Account,
    AuditAction,
    BillingItem,
    Card,
    CreditNote,
    Receipt,
    Subscription,
    SubscriptionStatus,
)
from billing.notify import tell_account
from billing.operations.expiry import expire
from billing.operations.retention import retained_until, retention_end, retention_years
from billing.operations.webhook_signing import event_body
from billing.rules.lifecycle import CancelMode
from core.clock import billing_today
from core.localformat import billing_day
from core.mail import date_text, lazy_message, money_text
from core.payments.gateway import get_gateway

log = logging.getLogger("billing")

CLOSE_REASON = access.ACCOUNT_CLOSED_REASON
# Who closed it, as the account's own audit events say (never the customer's e-mail, which
# the close erases): the customer themselves, or the staff member's user name.
CUSTOMER_ACTOR = "customer"


def record_export(account_id: str, *, actor: str, staff: bool = False, reference: str = "") -> None:
    """The audit event of a copy of the account's data made (by the customer or by staff)."""
    access.record_event(account_id, actor=actor,
                        action=AuditAction.STAFF_DATA_EXPORTED if staff else AuditAction.DATA_EXPORTED,
                        subject=account_id, note=reference[:500] or None)


@dataclass
class ClosedAccount:
    account_id: str
    closed_now: bool = False  # False: it was closed already (a repeat, or a close beside it)
    cancelled: list[str] = field(default_factory=list)  # subscription ids cancelled by this close
    refunded: dict[str, int] = field(default_factory=dict)  # currency -> minor units
    refund_failures: list[str] = field(default_factory=list)
    receipts_kept: int = 0
    kept_until: datetime | None = None  # the last receipt's retention date


def _still_served(sub: Subscription, today: date) -> bool:
    """Live, or cancelled at period end (by the customer, or by staff, whose cancel has no
    mode) but still served: the close ends it today, its unused days refunded and its usage
    so far billed, so nothing of a closed account is served, charged or reminded later."""
    if sub.is_live:
        return True
    return (sub.Status == SubscriptionStatus.CANCELLED and sub.CancelMode in (CancelMode.PERIOD_END, None)
            and bool(sub.PaidThroughDate) and sub.PaidThroughDate > today.isoformat())


def _cancel_all(subs: list[Subscription], today: date, actor: str, done: ClosedAccount) -> None:
    for sub in subs:
        if sub.Status == SubscriptionStatus.INCOMPLETE:
            # A first payment still waiting for the bank: it never starts (the charge is
            # cancelled at the processor; one taken anyway is refunded by the reconciliation).
            if expire(sub, actor=actor):
                done.cancelled.append(sub.sub_id)
            continue
        for _attempt in range(5):
            if not _still_served(sub, today):
                break
            try:
                result = lifecycle.cancel_now(sub, today=today, actor=actor, reason=CLOSE_REASON)
            except access.ConditionFailed:
                # a payment run (or another close) changed it first: read it again
                fresh = access.get_subscription(sub.account_id, sub.sub_id, sub.key_sku)
                if fresh is None:
                    break
                sub = fresh
                continue
            done.cancelled.append(sub.sub_id)
            if result.refunded:
                done.refunded[sub.Currency] = done.refunded.get(sub.Currency, 0) + result.refunded
            done.refund_failures += result.refund_failures
            break


def _secrets(account: Account, items: list[BillingItem]) -> list[str]:
    """The texts that identify the customer, scrubbed wherever an item quotes them."""
    found = {account.Email, account.Name or "", account.StripeCustomerId or "", account.VatNumber or ""}
    for item in items:
        if isinstance(item, Subscription):
            found |= {item.Email, item.CancelComment or "", item.PaymentDetails.BillingAddress or ""}
        if isinstance(item, Card):
            found |= {item.Details.BillingAddress or ""}
        found.add(access.customer_words(item))  # a comment kept only in an audit note
    found.discard(access.pseudonym(account.account_id))
    # longest first: an e-mail is replaced whole before a name inside it
    return sorted((s for s in found if len(s) >= 3), key=len, reverse=True)


def _forget_at_processor(account: Account, items: list[BillingItem]) -> None:
    """Detach every card rpay holds a token of, then delete the processor's customer.
    A ``GatewayError`` stops the close before anything is erased: run it again."""
    gateway = get_gateway()
    tokens = {item.Details.Token for item in items if isinstance(item, Card)}
    tokens |= {item.PaymentDetails.Token for item in items if isinstance(item, Subscription)}
    for token in sorted(tokens - {access.ERASED_TOKEN, ""}):
        gateway.forget_card(token)
    if account.StripeCustomerId:
        gateway.delete_customer(account.StripeCustomerId)


def _tell_closed(account: Account, receipts: list[Receipt], notes: list[CreditNote], until: datetime | None) -> None:
    """The last e-mail: what is erased, and what tax law keeps (the receipts and the credit
    notes that correct them, each listed)."""
    kept = [{"number": r.Number or r.BillingDate, "date": date_text(date.fromisoformat(r.BillingDate)),
             "amount": money_text(int(r.ProcessedAmount), r.Currency)} for r in receipts]
    kept_notes = [{"number": n.Number, "date": date_text(billing_day(n.IssuedAt)),
                   "amount": money_text(int(n.Gross), n.Currency)} for n in notes]
    tell_account("account_closed", account, lazy_message(gettext_noop("Your account is closed")),
                 receipts_kept=len(receipts), kept=kept, kept_notes=kept_notes,
                 kept_until=date_text(until.date()) if until else "", retention_years=retention_years())


def _forget_login(user_id: int | None, email: str) -> None:
    """The Django user and every log-in throttle record of its name, and of every IP
    address recorded for that name (django-axes keeps the user name and the IP address of
    each attempt). An address shared with others (an office, a carrier's NAT) loses their
    records too: that only resets the throttle for it."""
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    if user_id is not None:
        access.forget_user_link(user_id)
        get_user_model().objects.filter(pk=user_id).delete()
    if email:
        name = email.strip().lower()
        models = (AccessAttempt, AccessLog, AccessFailureLog)
        addresses: set[str] = set()
        for model in models:
            addresses |= set(model.objects.filter(username__iexact=name).exclude(ip_address=None)
                             .values_list("ip_address", flat=True))
        for model in models:
            model.objects.filter(username__iexact=name).delete()
            if addresses:
                model.objects.filter(ip_address__in=addresses).delete()


def _erase(items: list[BillingItem], secrets: list[str], years: int) -> None:
    for item in items:
        if isinstance(item, Card):
            access.delete_item(item)
        elif isinstance(item, Receipt):
            access.keep_receipt_until(item, retained_until(item, years))
        elif isinstance(item, CreditNote):  # an invoice's correction: kept as the invoice is
            access.keep_credit_note_until(item, retention_end(date.fromisoformat(item.IssuedAt[:10]), years))
        else:
            access.erase_item(item, secrets)


def _erase_copies(account_id: str, secrets: list[str]) -> None:
    """The merchant's events about the account (what ``GET /api/v1/events`` serves for
    ``MERCHANT_EVENT_RETENTION_DAYS``) and every webhook delivery made of them, delivered
    or still queued: kept, with the objects in them as the closed account's."""
    erased = {}
    for event in access.account_merchant_events(account_id):
        data = access.erased_object(event.Data, account_id, secrets)
        access.set_event_data(event, data)
        erased[event.EventId] = (event, data)
    for delivery in access.deliveries_of_events(set(erased)):
        event, data = erased[delivery.EventId]
        access.erase_delivery(delivery, event_body(event_id=event.EventId, event_type=event.Type,
                                                   created_at=event.CreatedAt, data=data), secrets)


def close_account(account_id: str, *, actor: str = CUSTOMER_ACTOR, today: date | None = None,
                  staff: bool = False, reference: str = "") -> ClosedAccount:
    """Close the account (see the module's docstring); ``reference``: the customer's
    request as staff filed it (a ticket number), kept in the close's audit event."""
    today = today or billing_today(settings.BILLING_TIMEZONE)
    done = ClosedAccount(account_id)
    items = list(access.account_items(account_id))
    account = next((i for i in items if isinstance(i, Account)), None)
    if account is None:
        return done
    # As read before anything changed: a close running beside this one may erase them meanwhile.
    first, first_items = account, items
    email, user_id = account.Email, account.UserId
    done.closed_now = access.mark_account_closed(account_id, datetime.now(UTC).isoformat())
    _cancel_all([i for i in items if isinstance(i, Subscription)], today, actor, done)

    items = list(access.account_items(account_id))  # after the cancels and their refunds
    account = next((i for i in items if isinstance(i, Account)), account)
    receipts = [i for i in items if isinstance(i, Receipt)]
    years = retention_years()
    done.receipts_kept = len(receipts)
    done.kept_until = max((retained_until(r, years) for r in receipts), default=None)
    if done.closed_now and first.Email != access.pseudonym(account_id):
        notes = [i for i in items if isinstance(i, CreditNote)]
        _tell_closed(first, receipts, notes, done.kept_until)  # before this close erases the address

    _forget_at_processor(first, first_items + items)
    for source in account_data_sources():
        source.erase(account_id)
    secrets = sorted(set(_secrets(first, first_items)) | set(_secrets(account, items)), key=len, reverse=True)
    _erase(items, secrets, years)
    # A payment run that took a subscription before it was cancelled may still have
    # written (a receipt, its event) while the above ran: once more over what is new.
    seen = {(i.PK, i.SK) for i in items}
    _erase([i for i in access.account_items(account_id) if (i.PK, i.SK) not in seen], secrets, years)
    _erase_copies(account_id, secrets)
    _forget_login(user_id, email)
    if done.closed_now:
        access.record_event(account_id, actor=actor,
                            action=AuditAction.STAFF_CLOSE_ACCOUNT if staff else AuditAction.ACCOUNT_CLOSED,
                            subject=account_id, after={"cancelled": done.cancelled, "receipts_kept": done.receipts_kept},
                            note=reference[:500] or None)
    log.info("account %s closed by %s (%s cancelled)", account_id, actor if staff else CUSTOMER_ACTOR,
             len(done.cancelled))
    return done
