"""The billing page of one account: subscriptions, the wallet (each card with the
subscriptions that pay with it), receipts, audit events (with what each changed) and the
payment-run failures that mention it.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext

from billing import access
from billing.access.prices import get_price
from billing.forms import vat_status
from billing.models import LIVE_STATUSES, Subscription, SubscriptionStatus
from billing.rules.add_ons import add_ons_words, plan_amount
from billing.rules.cadence_words import amount_per_period
from billing.rules.metered_items import item_words
from billing.rules.price_objects import price_words_of
from billing.rules.schedule import cadence_of, months_before
from billing.rules.switch import usage_only
from billing.staff.price_forms import tax_behavior_words
from billing.templatetags.staff_pages import staff_date
from core.countries import country_name
from core.money import format_with_symbol
from core.pages import or_404, today
from core.staff import render_staff


def _failures_for(account_id: str, sub_ids: set[str], runs: list) -> list[dict]:
    """Failures recorded by recent payment runs that name this account or its subscriptions.

    ``Failures`` is a list of ``{"subject", "reason"}`` (billing.batches); any entry that
    mentions one of the ids is shown as it was recorded.
    """
    needles = {account_id, *sub_ids}
    found = []
    for run in runs:
        for failure in run.Failures or []:
            text = json.dumps(failure, default=str)
            if any(n and n in text for n in needles):
                found.append({"run": run, "failure": failure, "text": text})
    return found


def event_changes(before: dict | None, after: dict | None) -> list[tuple[str, Any, Any]]:
    """The fields an event changed, as (field, before, after); every field when only one
    side was recorded. Unchanged fields stay in the stored event but off the page."""
    before, after = before or {}, after or {}
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [("", before, after)]
    names = list(dict.fromkeys([*before, *after]))
    if before and after:
        names = [n for n in names if before.get(n) != after.get(n)]
    return [(n, before.get(n), after.get(n)) for n in names]


def wallet_rows(wallet: access.Wallet, subscriptions: list[Subscription]) -> list[dict[str, Any]]:
    """Each wallet card (oldest first) with whether it is the default and the live
    subscriptions paying with it: what staff need when a customer asks "which card do
    you charge?" or a card is about to expire."""
    default = wallet.default
    return [{"card": card, "details": card.Details, "default": default is not None and card.card_id == default.card_id,
             "subscriptions": access.subscriptions_using(card.card_id, subscriptions)} for card in wallet.cards]


def price_lines(subscriptions: list[Subscription], day: date | None = None) -> dict[str, list[str]]:
    """Each subscription's prices in words, by its id: the fixed price's ("$10.00 a seat a
    month × 5"; a subscription made before prices, its amount and cadence: "¥120,000 a
    year"), then each metered price's ("first 1,000 calls free, then $0.002 a call, a
    month"; one removed at the period's end says until when), each add-on's ("Add-on: Extra
    storage: $3.00 a month, from 10 Apr 2027"), and the VAT of a price that
    says it for itself ("VAT: Added to the amounts"). One GetItem per distinct price named.
    ``day``: today (the billing day)."""
    day = day or today()
    prices: dict[str, Any] = {}

    def words(price_id: str) -> str | None:
        if price_id not in prices:
            prices[price_id] = get_price(price_id)
        price = prices[price_id]
        return price_words_of(price) if price is not None else None

    lines: dict[str, list[str]] = {}
    for sub in subscriptions:
        fixed = words(sub.PriceId) if sub.PriceId else None
        if usage_only(sub):
            fixed = None  # its one price is the metered one
        elif fixed is None:  # the plan's part of the fee (its add-ons have their own lines)
            fixed = amount_per_period(format_with_symbol(plan_amount(sub), sub.Currency), cadence_of(sub))
        elif sub.Quantity and int(sub.Quantity) > 1:
            fixed = f"{fixed} × {int(sub.Quantity)}"
        metered = [(price_id, words(price_id)) for price_id in sub.metered_price_ids]
        lines[sub.sub_id] = [*([fixed] if fixed else []),
                             *(f"{gettext('Add-on')}: {words}" for words in add_ons_words(sub, day, staff_date)),
                             *(item_words(sub, price_id, line, staff_date) for price_id, line in metered if line),
                             *([f"{gettext('VAT')}: {tax_behavior_words(sub.TaxBehavior)}"] if sub.TaxBehavior else [])]
    return lines


def account_detail(request: HttpRequest, account_id: str) -> HttpResponse:
    # The account item and its wallet cards are neighbours in the partition: one Query
    # reads both, where the account alone took a GetItem (the page's request count stays).
    wallet = access.get_wallet(account_id)
    account = or_404(wallet.account, "No such account")
    day = today()
    subscriptions = access.get_subscriptions_by_account(account_id)
    # six months, and the receipt of each period still in force that began before them
    # (a yearly's), as the customer's list shows it
    receipts = access.with_receipts_in_force(access.get_receipts_by_account(account_id, months_before(day, 6), day),
                                             subscriptions, months_before(day, 6), day)
    events = access.get_events_by_account(account_id)
    past_due = [s for s in subscriptions if s.Status == SubscriptionStatus.PAST_DUE]
    runs = access.list_batch_runs("payments", limit=30)
    failures = _failures_for(account_id, {s.sub_id for s in subscriptions}, runs)
    return render_staff(request, "staff/account.html", gettext("Billing: %(email)s") % {"email": account.Email}, {
        "account": account,
        "account_id": account_id,
        "subscriptions": subscriptions,
        "price_lines": price_lines(subscriptions, day),
        "cards": wallet_rows(wallet, subscriptions),
        "receipts": receipts,
        "events": [{"event": e, "changes": event_changes(e.Before, e.After)} for e in events],
        "past_due": past_due,
        "failures": failures,
        "receipts_from": months_before(day, 6),
        "live_statuses": LIVE_STATUSES,
        "tax": tax_evidence(account),
    })


def tax_evidence(account) -> dict[str, Any]:
    """The customer's tax identity as staff read it, and whether the evidence disagrees
    (the billing country is not the default card's country): flagged, never corrected."""
    return {"billing_country": country_name(account.BillingCountry), "card_country": country_name(account.CardCountry),
            "vat_status": vat_status(account), "mismatch": access.tax_evidence_mismatch(account)}
