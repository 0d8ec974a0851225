"""Discount codes and gift cards: look-ups (one GetItem each), issuing them, and the
staff's changes to a code (its limit and dates; ending it)."""

from __future__ import annotations

from datetime import date

from django.utils.translation import gettext
from pynamodb.exceptions import DoesNotExist, PutError, UpdateError

from shop.access._common import iso, utc_now
from shop.access.gift_card_ledger import ledger_entry
from shop.access.transactions import Cancelled, LabelledWrite
from shop.errors import InvalidInput, NotFound
from shop.ids import gift_card_hash, normalize_discount_code
from shop.models import DiscountCode, GiftCard, GiftCardEntryKind


def get_discount_code(code: str) -> DiscountCode | None:
    """GetItem dc#<CODE> (codes are case-insensitive); None for a code that cannot exist."""
    try:
        code = normalize_discount_code(code)
        return DiscountCode.get(*DiscountCode.keys(code=code).values())
    except (InvalidInput, DoesNotExist):
        return None


def get_gift_card(code: str) -> GiftCard | None:
    """GetItem gc#<hash of the code>: the code itself is never stored."""
    try:
        return GiftCard.get(*GiftCard.keys(code_hash=gift_card_hash(code)).values())
    except (InvalidInput, DoesNotExist):
        return None


def create_discount_code(code: str, *, percent_off: int | None = None, amount_off: int | None = None,
                         currency: str | None = None, max_uses: int | None = None,
                         valid_from: date | None = None, valid_until: date | None = None) -> DiscountCode:
    """A new code (PutItem, only if the code is free). ``valid_from``/``valid_until`` are
    UTC days, both included; None leaves that side open."""
    code = normalize_discount_code(code)
    if (percent_off is None) == (amount_off is None):
        raise InvalidInput(gettext("A discount code takes either a percentage or an amount off."))
    if percent_off is not None and not 0 < percent_off <= 100:
        raise InvalidInput(gettext("The percentage must be 1-100."))
    if amount_off is not None and (amount_off <= 0 or not currency):
        raise InvalidInput(gettext("An amount off must be positive and have a currency."))
    if max_uses is not None and max_uses < 1:
        raise InvalidInput(gettext("A limit on uses must be at least 1."))
    if valid_from and valid_until and valid_until < valid_from:
        raise InvalidInput(gettext("The last valid day is before the first."))
    item = DiscountCode(**DiscountCode.keys(code=code), Code=code, PercentOff=percent_off,
                        AmountOff=amount_off, Currency=currency, MaxUses=max_uses, Uses=0,
                        ValidFrom=valid_from.isoformat() if valid_from else None,
                        ValidUntil=valid_until.isoformat() if valid_until else None)
    try:
        item.save(condition=DiscountCode.PK.does_not_exist())
    except PutError as error:
        raise InvalidInput(gettext("The code %(code)s exists already.") % {"code": code}) from error
    return item


def _conditional_failure(error: UpdateError) -> bool:
    return getattr(error, "cause_response_code", None) == "ConditionalCheckFailedException"


def update_discount_code(code: str, *, max_uses: int | None, valid_from: date | None,
                         valid_until: date | None) -> DiscountCode:
    """Change a code's limit on uses and its validity days (UTC, both included; None: no
    limit, open on that side): one UpdateItem, returning the code as it now is.

    Condition: the code exists, and a new limit is not below the uses already made. The
    condition counts a use a checkout takes meanwhile; and the checkout's own condition
    names the limit it read (or that there was none), so an order placed across the change
    cannot go past the new limit either."""
    code = normalize_discount_code(code)
    if max_uses is not None and max_uses < 1:
        raise InvalidInput(gettext("A limit on uses must be at least 1."))
    if valid_from and valid_until and valid_until < valid_from:
        raise InvalidInput(gettext("The last valid day is before the first."))
    item = DiscountCode(**DiscountCode.keys(code=code))
    actions = [
        DiscountCode.MaxUses.set(max_uses) if max_uses is not None else DiscountCode.MaxUses.remove(),
        DiscountCode.ValidFrom.set(valid_from.isoformat()) if valid_from else DiscountCode.ValidFrom.remove(),
        DiscountCode.ValidUntil.set(valid_until.isoformat()) if valid_until else DiscountCode.ValidUntil.remove(),
    ]
    condition = DiscountCode.PK.exists()
    if max_uses is not None:
        condition &= DiscountCode.Uses <= max_uses
    try:
        item.update(actions=actions, condition=condition)
    except UpdateError as error:
        if not _conditional_failure(error):
            raise
        current = get_discount_code(code)
        if current is None:
            raise NotFound(gettext("There is no discount code %(code)s.") % {"code": code}) from error
        raise InvalidInput(gettext("%(code)s has been used %(uses)s times: the limit cannot be lower.") % {
            "code": code, "uses": current.Uses}) from error
    return item


def end_discount_code(code: str) -> DiscountCode:
    """End a code now: one UpdateItem of ``Active``. Checkout refuses it from then on, in
    its transaction's condition too (an order being placed at that moment cannot take it)."""
    code = normalize_discount_code(code)
    item = DiscountCode(**DiscountCode.keys(code=code))
    try:
        item.update(actions=[DiscountCode.Active.set("no")], condition=DiscountCode.PK.exists())
    except UpdateError as error:
        if not _conditional_failure(error):
            raise
        raise NotFound(gettext("There is no discount code %(code)s.") % {"code": code}) from error
    return item


def issue_gift_card(code: str, balance: int, currency: str, actor: str = "system") -> GiftCard:
    """A new gift card; the code is the bearer secret, only its hash and last four are kept.
    One transaction: the card (only if the code is free) and its ledger's first entry."""
    if not isinstance(balance, int) or balance <= 0:
        raise InvalidInput(gettext("A gift card's balance must be a positive whole number of minor units."))
    normalized = "".join(code.split()).upper()
    code_hash, now = gift_card_hash(code), iso(utc_now())
    card = GiftCard(**GiftCard.keys(code_hash=code_hash), Balance=balance, Currency=currency,
                    Last4=normalized[-4:], IssuedAt=now)
    tx = LabelledWrite()
    tx.put(("card",), card, condition=GiftCard.PK.does_not_exist())
    tx.put(("entry",), ledger_entry(code_hash, GiftCardEntryKind.ISSUED, balance, currency, actor))
    try:
        tx.commit()
    except Cancelled as error:
        if error.failed("card"):
            raise InvalidInput(gettext("That gift card code is taken.")) from error
        raise
    return card
