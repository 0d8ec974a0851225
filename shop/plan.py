"""Pure rules of a checkout: checking the cart, pricing, and choosing warehouses.

No DynamoDB here: ``shop.checkout`` reads what these functions need, and
``shop.access.checkout_writes`` writes what they decide.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.utils.translation import gettext as _

from shop.errors import DiscountCodeExpired, DiscountCodeNotValidYet, InvalidInput, OutOfStock
from shop.ids import check_id

MAX_QUANTITY = 100  # per line: more is a typo or a reseller, not a customer
MAX_LINES = 20  # keeps the checkout within one transaction's 100 items (see tx_size)


@dataclass(frozen=True)
class CartLine:
    product_id: str
    quantity: int


def check_cart(lines: Iterable[tuple[str, object]]) -> list[CartLine]:
    """The cart's lines, merged per product, or ``InvalidInput`` naming the problem."""
    merged: dict[str, int] = {}
    for product_id, quantity in lines:
        check_id(product_id, "product id")
        if isinstance(quantity, bool) or not isinstance(quantity, int):
            raise InvalidInput(_("A quantity must be a whole number."), field="quantity")
        if quantity < 1:
            raise InvalidInput(_("A quantity must be at least 1."), field="quantity")
        merged[product_id] = merged.get(product_id, 0) + quantity
        if merged[product_id] > MAX_QUANTITY:
            raise InvalidInput(_("At most %(count)s of one product per order.") % {"count": MAX_QUANTITY}, field="quantity")
    if not merged:
        raise InvalidInput(_("The cart is empty."), field="cart")
    if len(merged) > MAX_LINES:
        raise InvalidInput(_("At most %(count)s different products per order.") % {"count": MAX_LINES}, field="cart")
    return [CartLine(p, q) for p, q in merged.items()]


def discount_amount(subtotal: int, *, percent_off: int | None, amount_off: int | None) -> int:
    """What a code takes off, in minor units, never more than the subtotal.
    A percentage rounds half up (to the nearest minor unit)."""
    if percent_off is not None:
        return min(subtotal, (subtotal * percent_off + 50) // 100)
    return min(subtotal, amount_off or 0)


def check_code_dates(code: str, today: str, valid_from: str | None, valid_until: str | None) -> None:
    """Refuse a code outside its validity (UTC dates as YYYY-MM-DD, both days included)."""
    if valid_from and today < valid_from:
        raise DiscountCodeNotValidYet(code, valid_from)
    if valid_until and today > valid_until:
        raise DiscountCodeExpired(code, valid_until)


@dataclass(frozen=True)
class Split:
    """Who pays what: the discount is a price adjustment, then the gift card, then the card."""

    subtotal: int
    discount: int
    gift_card: int
    card: int

    @property
    def total(self) -> int:
        return self.subtotal - self.discount


def split_payment(subtotal: int, discount: int, gift_card_balance: int | None) -> Split:
    total = subtotal - discount
    gift = min(gift_card_balance or 0, total)
    return Split(subtotal=subtotal, discount=discount, gift_card=gift, card=total - gift)


@dataclass(frozen=True)
class Stock:
    warehouse_id: str
    available: int
    distance: int  # smaller is nearer


def zip_distance(a: str | None, b: str | None, country_a: str = "", country_b: str = "") -> int:
    """A stand-in for real distance: postcodes are roughly geographic (Sweden's are).
    Another country is farther than any postcode."""
    far = 10**9
    if country_a and country_b and country_a.casefold() != country_b.casefold():
        return far * 2
    digits_a = "".join(ch for ch in a or "" if ch.isdigit())
    digits_b = "".join(ch for ch in b or "" if ch.isdigit())
    if not digits_a or not digits_b:
        return far
    return abs(int(digits_a) - int(digits_b))


def allocate(product_id: str, name: str, quantity: int, stock: Sequence[Stock]) -> list[tuple[str, int]]:
    """Warehouses and quantities for one line: the nearest warehouse with stock first,
    split across the next ones when it has too few (as the seed's sample order is)."""
    picks: list[tuple[str, int]] = []
    wanted = quantity
    for s in sorted(stock, key=lambda s: (s.distance, s.warehouse_id)):
        if wanted == 0:
            break
        take = min(wanted, max(s.available, 0))
        if take:
            picks.append((s.warehouse_id, take))
            wanted -= take
    if wanted:
        raise OutOfStock(product_id, name, sum(max(s.available, 0) for s in stock))
    return picks


def tx_size(picks_per_line: Sequence[int], *, gift_card: bool, code: bool, card: bool,
            customer: bool = False) -> int:
    """Items in the checkout transaction (at most 100): order, invoice, a line and its
    stock updates each, the gift card and its payment, the code, the journal entry, the
    customer item keeping the address."""
    return (2 + sum(1 + n for n in picks_per_line) + (2 if gift_card else 0) + (1 if code else 0)
            + (1 if card else 0) + (1 if customer else 0))
