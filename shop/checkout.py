"""Checkout (docs/SHOP.md, "How checkout works"): check the cart, price it, choose warehouses, place the
order in one transaction, charge the card, and finish or roll back.

The order id comes from the checkout token issued with the checkout page, so a double
submit finds its order already placed and settles that one: one order, one charge
(the card is charged under ``<orderId>:card``, which the gateway replays). A crash at
any step leaves a journal entry that ``manage.py reconcile_checkouts`` settles the same
way (``settle``).
"""

from __future__ import annotations

import logging
import random
import secrets
import time
from dataclasses import dataclass, replace

from django.utils.translation import gettext as _

from billing.customers import invoice_tax_figures
from core.payments.errors import GatewayError
from core.payments.gateway import CardToken, ChargeResult, get_gateway
from shop import faults
from shop.access import checkout_writes as writes
from shop.access.catalog import get_warehouses_by_ids
from shop.access.codes import get_discount_code, get_gift_card
from shop.access.inventory import get_product_with_inventory
from shop.access.orders import OrderDetails, get_order_details_by_order_id
from shop.access.transactions import Cancelled
from shop.clock import iso, today, utc_now
from shop.errors import (
    AuthenticationRequired,
    Busy,
    CardDeclined,
    DiscountCodeUsedUp,
    InvalidInput,
    NotFound,
    OutOfStock,
    PaymentPending,
    ShopError,
)
from shop.ids import check_id, gift_card_hash, new_id, normalize_discount_code
from shop.models import Address, Order, OrderStatus, ProductStatus, Warehouse
from shop.plan import (
    MAX_LINES,
    Stock,
    allocate,
    check_cart,
    check_code_dates,
    discount_amount,
    split_payment,
    tx_size,
    zip_distance,
)

log = logging.getLogger("shop.checkout")

ATTEMPTS = 10  # a transaction that met another one on the same stock item is tried again
MAX_TOKEN_LENGTH = 32  # ClientRequestToken takes 36 characters: the token and ".<attempt>"
WAREHOUSE_MAX_AGE = 60.0  # seconds a warehouse's address read by one checkout serves the next

def new_checkout_token() -> str:
    """Issued with the checkout page; becomes the order id and the ClientRequestToken."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class CheckoutRequest:
    token: str
    customer_id: str
    lines: tuple[tuple[str, int], ...]  # (product id, quantity)
    address: Address | dict[str, str]
    discount_code: str | None = None
    gift_card_code: str | None = None
    card: CardToken | None = None  # from core.payments.gateway.tokenize_card: never a card number
    shipment_type: str = "Standard"
    save_address: bool = True  # keep the address on the customer item for the next checkout
    email: str | None = None  # the account's, for a customer item the checkout creates


def checkout(request: CheckoutRequest) -> Order:
    """Place and pay an order; return it paid, or raise a ``ShopError`` that says why not
    (nothing is left reserved or debited then, except ``PaymentPending``)."""
    order_id = check_id(request.token, "checkout token")
    if len(order_id) > MAX_TOKEN_LENGTH:
        raise InvalidInput(_("The checkout token is not valid."), field="checkout token")
    customer_id = check_id(request.customer_id, "customer id")
    cart = check_cart(request.lines)
    address = _address(request.address)
    code = normalize_discount_code(request.discount_code) if request.discount_code else None
    gift_hash = gift_card_hash(request.gift_card_code) if request.gift_card_code else None

    for attempt in range(ATTEMPTS):
        try:
            plan = _plan(order_id, customer_id, cart, address, code, request, gift_hash)
        except ShopError:
            # Submitted again after it was placed: the first submit took the last units or
            # the gift card's balance. The answer is the order placed, not an error.
            if get_order_details_by_order_id(order_id, consistent=True) is not None:
                return settle(order_id, customer_present=True)
            raise
        faults.step("planned")
        try:
            details = writes.place_order(plan, token=_request_token(order_id, attempt))
        except writes.AlreadyPlaced:
            try:
                return settle(order_id, customer_present=True)
            except NotFound:
                # Its twin's transaction is not visible yet (same token, in flight).
                _pause(attempt)
                continue
        except OutOfStock:
            # The stock read was stale: plan again from fresh stock (another warehouse may
            # have some); the next plan raises OutOfStock itself when there is none.
            _pause(attempt)
            continue
        except Cancelled as cancelled:
            if not cancelled.conflict:
                raise
            _pause(attempt)
            continue
        faults.step("placed")
        return _settle(details)
    raise Busy(_("Many people are buying the same things right now: please try again."))


def _request_token(order_id: str, attempt: int) -> str:
    """The ClientRequestToken of an attempt. The first is the checkout token itself, so
    a double submit meets its twin's token; a retry after a conflict re-plans (other
    parameters), so it gets a token of its own: DynamoDB refuses a token reused with
    other parameters for ten minutes."""
    return order_id if attempt == 0 else f"{order_id}.{attempt}"


def _pause(attempt: int) -> None:
    time.sleep(random.uniform(0, 0.01 * 2**attempt))


def _address(value: Address | dict[str, str]) -> dict[str, str]:
    raw = value.as_dict() if isinstance(value, Address) else dict(value or {})
    required = ("Country", "City", "Street", "ZipCode")
    if any(not str(raw.get(k, "")).strip() for k in required):
        raise InvalidInput(_("The delivery address needs a country, city, street and postcode."), field="address")
    if any(len(str(v)) > 200 for v in raw.values()):
        raise InvalidInput(_("An address line is too long."), field="address")
    allowed = ("Country", "County", "City", "Street", "Number", "ZipCode")
    return {k: str(raw[k]).strip() for k in allowed if raw.get(k)}


def _plan(order_id: str, customer_id: str, cart, address: dict[str, str], code: str | None,
          request: CheckoutRequest, gift_hash: str | None) -> writes.PlannedOrder:
    """Read what the checkout needs (each product with its stock: a Query per product;
    the warehouses' addresses: a BatchGetItem, of those not read in the last minute; code
    and gift card: a GetItem each) and decide everything."""
    products, inventory = {}, {}
    for line in cart:
        product, stock = get_product_with_inventory(line.product_id)
        if product is None or product.Status != ProductStatus.ACTIVE:
            raise NotFound(_("There is no product %(product)s.") % {"product": line.product_id}, field="product")
        products[line.product_id], inventory[line.product_id] = product, stock
    currencies = {products[line.product_id].Currency for line in cart}
    if len(currencies) != 1:
        raise InvalidInput(_("One order is paid in one currency."), field="cart")
    (currency,) = currencies

    # The warehouses' addresses, to pick the nearest (an address a minute old picks the same).
    warehouses = get_warehouses_by_ids([s.warehouse_id for items in inventory.values() for s in items],
                                       max_age=WAREHOUSE_MAX_AGE)
    lines = []
    for line in cart:
        product = products[line.product_id]
        stock = [Stock(s.warehouse_id, s.Available, _distance(address, warehouses.get(s.warehouse_id)))
                 for s in inventory[line.product_id]]
        picks = allocate(line.product_id, product.Name, line.quantity, stock)
        lines.append(writes.PlannedLine(line.product_id, product.Name, product.Price, line.quantity, tuple(picks)))
    subtotal = sum(line.unit_price * line.quantity for line in lines)

    discount, max_uses = 0, None
    if code:
        found = get_discount_code(code)
        if found is None or found.Active != "yes":
            raise NotFound(_("There is no discount code %(code)s.") % {"code": code}, field="discount code")
        if found.AmountOff is not None and found.Currency != currency:
            raise InvalidInput(_("The code %(code)s is for %(currency)s orders.") % {"code": code, "currency": found.Currency},
                               field="discount code")
        check_code_dates(code, today(), found.ValidFrom, found.ValidUntil)
        if found.MaxUses is not None and found.Uses >= found.MaxUses:
            raise DiscountCodeUsedUp(code)
        discount = discount_amount(subtotal, percent_off=found.PercentOff, amount_off=found.AmountOff)
        max_uses = found.MaxUses

    balance, last4 = None, None
    if gift_hash:
        card = get_gift_card(request.gift_card_code or "")
        if card is None:
            raise NotFound(_("There is no gift card with that code."), field="gift card")
        if card.Currency != currency:
            raise InvalidInput(_("That gift card is in %(currency)s.") % {"currency": card.Currency}, field="gift card")
        balance, last4 = card.Balance, card.Last4
        if balance <= 0:
            raise InvalidInput(_("That gift card has nothing left on it."), field="gift card")

    split = split_payment(subtotal, discount, balance)
    if split.card and request.card is None:
        raise InvalidInput(_("A card is needed to pay the rest."), field="card")
    size = tx_size([len(line.picks) for line in lines], gift_card=bool(split.gift_card), code=bool(code),
                   card=bool(split.card), customer=request.save_address)
    if size > 100:
        raise InvalidInput(_("Too many products from too many warehouses for one order (at most %(count)s "
                             "products): split the order.") % {"count": MAX_LINES}, field="cart")
    card = request.card if split.card else None
    return writes.PlannedOrder(
        order_id=order_id, invoice_id=new_id(), customer_id=customer_id, placed_at=iso(utc_now()),
        currency=currency, lines=tuple(lines), subtotal=split.subtotal, discount=split.discount,
        gift_card_amount=split.gift_card, card_amount=split.card, discount_code=code, discount_max_uses=max_uses,
        gift_card_hash=gift_hash if split.gift_card else None, gift_card_last4=last4,
        card_token=card.token if card else None, card_brand=card.brand if card else None,
        card_last4=card.last4 if card else None, address=address, shipment_type=request.shipment_type,
        save_address=request.save_address, customer_email=request.email,
        tax=invoice_tax_figures(customer_id, split.subtotal - split.discount, today()),
    )


def _distance(address: dict[str, str], warehouse: Warehouse | None) -> int:
    if warehouse is None:
        return 10**10
    where = warehouse.Address
    return zip_distance(address.get("ZipCode"), where.ZipCode, address.get("Country", ""), where.Country)


def settle(order_id: str, *, customer_present: bool = False) -> Order:
    """Finish an order a crash, a double submit or the bank's confirmation left waiting for
    its card: charge it under the same idempotency key (the gateway replays a charge
    already made), then mark it paid or roll it back. An order already settled is returned
    (or its decline raised). ``customer_present``: the customer is on the page, so a
    charge the bank wants them to confirm waits for them (``AuthenticationRequired``);
    otherwise (the reconcile command) it is cancelled at the gateway and rolled back."""
    details = get_order_details_by_order_id(order_id, consistent=True)
    if details is None:
        raise NotFound(_("There is no order %(order)s.") % {"order": order_id})
    return _settle(details, customer_present=customer_present)


def _settle(details: OrderDetails, *, customer_present: bool = True) -> Order:
    order = details.order
    if order.Status == OrderStatus.DECLINED:
        raise CardDeclined(order.order_id, order.DeclineCode)
    if order.Status != OrderStatus.PENDING_PAYMENT:
        return order
    try:
        if order.ChargeId:  # a charge waiting for the customer's confirmation: how it stands
            charge = get_gateway().charge_status(order.ChargeId)
        else:
            charge = get_gateway().charge(
                order.CardToken or "", order.CardAmount, order.Currency, idempotency_key=f"{order.order_id}:card",
                metadata={"order_id": order.order_id, "source": "shop"}, off_session=False,  # the customer is there
            )
        if charge.needs_authentication:
            charge = _after_authentication(order, charge, customer_present=customer_present)
    except GatewayError as error:
        log.warning("order %s: the gateway failed (%s); reconcile will finish it", order.order_id, error)
        raise PaymentPending(order.order_id) from error
    if charge.succeeded:
        faults.step("charged")
        try:
            writes.finish_paid(details, charge.charge_id, iso(utc_now()))
        except Cancelled:
            return _settled_elsewhere(order.order_id)
        order.Status, order.ChargeId = OrderStatus.PAID, charge.charge_id
        return order
    faults.step("declined")
    try:
        writes.roll_back_checkout(details, charge.decline_code, iso(utc_now()))
    except Cancelled:
        _settled_elsewhere(order.order_id)
    raise CardDeclined(order.order_id, charge.decline_code)


def _after_authentication(order: Order, charge: ChargeResult, *, customer_present: bool) -> ChargeResult:
    """The charge as it stands now (a replayed key answers what it answered first): paid
    once the customer confirmed it, refused, or still waiting for them, which a customer on
    the page is asked to do and a reconcile run ends (cancelled at the gateway, unless it
    was paid meanwhile: then that is the answer)."""
    gateway = get_gateway()
    now = gateway.charge_status(charge.charge_id)
    if not now.needs_authentication:
        return now
    if customer_present:
        if order.ChargeId != now.charge_id:
            writes.note_awaiting_charge(order, now.charge_id)
        raise AuthenticationRequired(order.order_id, now.charge_id, now.client_secret or charge.client_secret)
    ended = gateway.cancel_charge(now.charge_id)
    return ended if ended.succeeded else replace(ended, decline_code="authentication_required")


def _settled_elsewhere(order_id: str) -> Order:
    """Another process (the double submit's twin, the reconcile command) settled it first."""
    details = get_order_details_by_order_id(order_id, consistent=True)
    if details is None or details.order.Status == OrderStatus.PENDING_PAYMENT:
        raise PaymentPending(order_id)
    if details.order.Status == OrderStatus.DECLINED:
        raise CardDeclined(order_id, details.order.DeclineCode)
    return details.order

