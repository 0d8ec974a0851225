"""Data rights' reads and writes (docs/PORTAL.md, "Your data"): the account's whole partition,
read page by page (one paginated Query, never a Scan), and the erasure of a closed
account's personal data item by item, with conditional writes that are safe to repeat:
its own partition, and the copies outside it (the merchant's events that
``GET /api/v1/events`` serves, and the webhook deliveries made of them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from pynamodb.attributes import DiscriminatorAttribute, JSONAttribute, MapAttribute, UnicodeAttribute
from pynamodb.exceptions import DeleteError

from billing.access._common import is_conditional_failure, update_if, utc_now
from billing.access.endpoints import list_endpoints
from billing.access.outbox import oldest_kept_day
from billing.models import (
    Account,
    AuditEvent,
    BillingItem,
    MerchantEvent,
    PaymentDetails,
    Receipt,
    ReceiptNumberLookup,
    UserLink,
    WebhookDelivery,
)
from core.dynamo.erase import update_until_settled

# The cancel reason of the subscriptions an account close cancels: a charge that lands
# after it (a payment run's, in flight at the close) is refunded, not served.
CLOSE_REASON = "account_closed"
PAGE_SIZE = 100  # items per Query page: a large account is read, and streamed, in pages
ERASED = "[erased]"
# Attributes removed from every item of a closed account (receipts excepted): who the
# customer is, how rpay and the processor knew them, and their own words. (An audit
# event's note is kept, with the customer's words in it scrubbed: it holds staff's
# request references.)
# A business's VAT number names its owner (a sole trader's is their own): it goes too; the
# invoices kept for the tax retention carry their own copy.
# A cancel's audit note, as billing/access/lifecycle.py writes it: ``<mode>: <reason>`` and,
# when the customer wrote one, ``: <comment>`` (cut to the note's 500 characters, so the
# comment may be there only in part: it is found by its place, not by its text). A reason
# that is not a code (a caller's free text) goes with the comment.
CANCEL_NOTE = re.compile(r"(?P<mode>now|period_end): (?P<rest>.*)", re.DOTALL)
REASON_CODE = re.compile(r"[a-z0-9_]{1,64}")
REMOVED = ("Name", "UserId", "StripeCustomerId", "DefaultCardId", "CancelComment", "VatNumber", "VatNumberCheck",
           "VatCheckedAt")


def pseudonym(account_id: str) -> str:
    """What replaces the e-mail where an item must have one: names the account, not the person."""
    return f"closed-{account_id}@erased.invalid"


def account_items(account_id: str) -> Iterator[BillingItem]:
    """Every item of the account's partition, in key order, a page at a time (strongly
    consistent: an export made just after a change holds it)."""
    return BillingItem.query(Account.pk(account_id=account_id), consistent_read=True, page_size=PAGE_SIZE)


def account_receipts(account_id: str) -> Iterator[Receipt]:
    """The account's receipts, oldest first, a page at a time (their PDFs in the export)."""
    return Receipt.query(Account.pk(account_id=account_id), Receipt.SK.startswith("REC#"),
                         consistent_read=True, page_size=PAGE_SIZE)


def item_data(item: BillingItem) -> dict[str, Any]:
    """An item's attributes as plain JSON values, without the card's processor token (a
    card is shown by brand, last four digits and expiry only)."""
    data: dict[str, Any] = {}
    for name, attribute in item.get_attributes().items():
        value = getattr(item, name, None)
        if value is None:
            continue
        if isinstance(attribute, DiscriminatorAttribute):
            value = attribute.serialize(value)  # the kind's name ("Receipt"), not the class
        elif isinstance(value, PaymentDetails):
            value = {k: v for k, v in value.as_dict().items() if k != "Token" and v is not None}
        elif isinstance(value, MapAttribute):
            value = value.as_dict()
        elif isinstance(value, list):
            value = [v.as_dict() if isinstance(v, MapAttribute) else v for v in value]
        elif isinstance(value, datetime):
            value = value.isoformat()
        data[attribute.attr_name] = value
    return json.loads(json.dumps(data, default=str))


# --- closing ----------------------------------------------------------------------------


def mark_account_closed(account_id: str, at: str) -> bool:
    """Record that the account is closed: True the first time, False when it was
    already (a second close, or one running beside it, carries on with the same steps)."""
    account = Account(Account.pk(account_id=account_id), Account.sk(account_id=account_id))
    return update_if(account, [Account.ClosedDate.set(at)], Account.PK.exists() & Account.ClosedDate.does_not_exist())


def _scrub(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with every occurrence of a secret string replaced, inside lists and maps too."""
    if isinstance(value, str):
        for secret in secrets:
            if secret and secret in value:
                value = value.replace(secret, ERASED)
        return value
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, secrets) for k, v in value.items()}
    return value


def customer_words(item: BillingItem) -> str:
    """The customer's own words in an audit event's note (a cancel comment), or ""."""
    if not isinstance(item, AuditEvent) or not item.Note:
        return ""
    found = CANCEL_NOTE.fullmatch(item.Note)
    if found is None:
        return ""
    reason, _, comment = found["rest"].partition(": ")
    return comment if REASON_CODE.fullmatch(reason) else found["rest"]


def _without_customer_words(item: BillingItem, note: str) -> str:
    words = customer_words(item)
    if not words or words == ERASED or not note.endswith(words):
        return note
    return note[: len(note) - len(words)] + ERASED


def erasure_actions(item: BillingItem, secrets: list[str]) -> list[Any]:
    """The update actions that leave ``item`` with no personal data: the e-mail replaced by
    the pseudonym, names, ids at the processor, free text and card tokens removed, and any
    other text that quotes one of ``secrets`` (the e-mail, the name, a comment) scrubbed."""
    account_id = Account.pk_template.parse(item.PK)["account_id"]
    actions: list[Any] = []
    for name, attribute in item.get_attributes().items():
        value = getattr(item, name, None)
        if value is None or attribute.is_hash_key or attribute.is_range_key:
            continue
        if name in REMOVED:
            actions.append(attribute.remove())
        elif name == "Email":
            if value != pseudonym(account_id):
                actions.append(attribute.set(pseudonym(account_id)))
        elif isinstance(value, PaymentDetails):
            if value.Token != ERASED or value.BillingAddress or value.AwaitingCharge:
                actions.append(attribute.set(PaymentDetails(
                    Token=ERASED, Brand=value.Brand, Last4=value.Last4, ExpMonth=value.ExpMonth,
                    ExpYear=value.ExpYear, CardId=value.CardId)))
        elif isinstance(attribute, JSONAttribute | UnicodeAttribute):
            scrubbed = _scrub(_without_customer_words(item, value) if name == "Note" else value, secrets)
            if scrubbed != value:
                actions.append(attribute.set(scrubbed))
    return actions


def erased_object(value: Any, account_id: str, secrets: list[str]) -> Any:
    """An API object (an event's ``data``) as a closed account's: its ``email`` fields the
    pseudonym (what the API shows for the account now), every other quote of ``secrets``
    ``[erased]``."""
    if isinstance(value, dict):
        return {k: pseudonym(account_id) if k == "email" and isinstance(v, str) and v
                else erased_object(v, account_id, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [erased_object(v, account_id, secrets) for v in value]
    return _scrub(value, secrets)


def erase_item(item: BillingItem, secrets: list[str]) -> None:
    """Erase one item's personal data (``erasure_actions``), re-reading it when a write
    beside ours (a payment run's) changed it first; nothing when it is gone. On a
    subscription, its version check (VersionAttribute) makes such a change refuse ours."""
    update_until_settled(item, lambda current: erasure_actions(current, secrets))


def delete_item(item: BillingItem) -> None:
    """Delete an item that only a living account needs (a wallet card); gone already is fine."""
    try:
        item.delete()
    except DeleteError as error:
        if not is_conditional_failure(error):
            raise


def keep_receipt_until(receipt: Receipt, until: datetime) -> None:
    """Keep a closed account's receipt (and its number's look-up) to ``until``, the end of
    its tax retention, then let DynamoDB's TTL delete it."""
    receipt.update(actions=[Receipt.TTL.set(until)], condition=Receipt.PK.exists())
    if receipt.Number:
        lookup = ReceiptNumberLookup(ReceiptNumberLookup.pk(number=receipt.Number),
                                     ReceiptNumberLookup.sk(number=receipt.Number))
        update_if(lookup, [ReceiptNumberLookup.TTL.set(until)], ReceiptNumberLookup.PK.exists())


def forget_user_link(user_id: int) -> None:
    """Delete the log-in's link to the account (it names the e-mail)."""
    UserLink(UserLink.pk(user_id=user_id), UserLink.sk(user_id=user_id)).delete()



# --- the copies outside the partition ----------------------------------------------------


def account_merchant_events(account_id: str) -> list[MerchantEvent]:
    """Every kept merchant event about the account: one paginated Query per UTC day
    partition (``EVT#<day>``) of the retention window, filtered by ``AccountId``, never a
    Scan. It reads the whole window (an event names its account only in an attribute), which
    only a close does."""
    found: list[MerchantEvent] = []
    day, today = oldest_kept_day(), utc_now().date()
    while day <= today:
        found += MerchantEvent.query(MerchantEvent.pk(day=day.isoformat()),
                                     filter_condition=MerchantEvent.AccountId == account_id,
                                     consistent_read=True, page_size=PAGE_SIZE)
        day += timedelta(days=1)
    return found


def set_event_data(event: MerchantEvent, data: dict[str, Any]) -> None:
    """Rewrite a kept event's object (its id, type and time stay); one gone is left gone."""
    if data == event.Data:
        return
    update_if(event, [MerchantEvent.Data.set(data)], MerchantEvent.PK.exists())


def deliveries_of_events(event_ids: set[str]) -> list[WebhookDelivery]:
    """Every endpoint's deliveries of these events (a resend's too: it carries the event's
    id): one Query per endpoint, from the first event's key on (a delivery's key is its
    event's id, or a later cursor's), kept only when its event is one of ``event_ids``."""
    if not event_ids:
        return []
    start = min(event_ids)
    found: list[WebhookDelivery] = []
    for endpoint in list_endpoints():
        found += [d for d in WebhookDelivery.query(WebhookDelivery.pk(endpoint_id=endpoint.EndpointId),
                                                   WebhookDelivery.SK >= start,  # noqa: SIM300
                                                   consistent_read=True, page_size=PAGE_SIZE)
                  if d.EventId in event_ids]
    return found


def erase_delivery(delivery: WebhookDelivery, payload: str, secrets: list[str]) -> None:
    """Rewrite a delivery's body (each attempt signs the body it reads, so a delivery still
    queued is sent, and signed, erased), and scrub the receiver's answer kept with it (it
    may echo the body); its status and log stay. One gone is left gone."""
    actions = []
    if payload != delivery.Payload:
        actions.append(WebhookDelivery.Payload.set(payload))
    answer = _scrub(delivery.LastResponse, secrets) if delivery.LastResponse else delivery.LastResponse
    if answer != delivery.LastResponse:
        actions.append(WebhookDelivery.LastResponse.set(answer))
    if not actions:
        return
    update_if(delivery, actions, WebhookDelivery.PK.exists())
