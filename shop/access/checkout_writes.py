"""The checkout's writes (docs/SHOP.md, "How checkout works"): placing an order in one TransactWriteItems,
finishing it once the card is charged, rolling it back when the card is declined.

Each is one transaction, so stock, gift card, discount code and order never disagree.
A cancelled transaction is turned into the ``ShopError`` that names what failed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.utils.translation import gettext

from shop.access.gift_card_ledger import ledger_entry
from shop.access.orders import OrderDetails
from shop.access.transactions import Cancelled, Failure, LabelledWrite
from shop.errors import (
    Busy,
    DiscountCodeExpired,
    DiscountCodeNotValidYet,
    DiscountCodeUsedUp,
    GiftCardBalanceTooLow,
    NotFound,
    OutOfStock,
)
from shop.models import (
    Address,
    Customer,
    DiscountCode,
    GiftCard,
    GiftCardEntry,
    GiftCardEntryKind,
    Invoice,
    Order,
    OrderItem,
    OrderStatus,
    Payment,
    PaymentStatus,
    PaymentType,
    PendingAction,
    Pick,
    ShipmentStatus,
    WarehouseItem,
)
from shop.plan import check_code_dates

if TYPE_CHECKING:
    from billing.customers import InvoiceTaxFigures

JOURNAL_SHARDS = 8


class AlreadyPlaced(Exception):
    """This checkout's order exists already (a double submit, or a retry after a crash)."""


@dataclass(frozen=True)
class PlannedLine:
    product_id: str
    name: str
    unit_price: int
    quantity: int
    picks: tuple[tuple[str, int], ...]  # (warehouse id, quantity)


@dataclass(frozen=True)
class PlannedOrder:
    """Everything the checkout decided; ``place_order`` writes it."""

    order_id: str
    invoice_id: str
    customer_id: str
    placed_at: str
    currency: str
    lines: tuple[PlannedLine, ...]
    subtotal: int
    discount: int
    gift_card_amount: int
    card_amount: int
    discount_code: str | None = None
    discount_max_uses: int | None = None
    gift_card_hash: str | None = None
    gift_card_last4: str | None = None
    card_token: str | None = None
    card_brand: str | None = None
    card_last4: str | None = None
    address: dict[str, str] = field(default_factory=dict)
    shipment_type: str | None = None
    save_address: bool = False  # keep the address on the customer item for next time
    customer_email: str | None = None
    tax: InvoiceTaxFigures | None = None  # the invoice's seller and VAT

    @property
    def total(self) -> int:
        return self.subtotal - self.discount


def invoice_tax_attributes(tax: InvoiceTaxFigures | None) -> dict[str, object]:
    """The invoice's seller and VAT attributes (none for a plan without them)."""
    if tax is None:
        return {}
    return {"SellerName": tax.seller_name, "SellerAddress": tax.seller_address, "SellerCountry": tax.seller_country,
            "SellerVatNumber": tax.seller_vat_number or None, "Net": tax.net, "Tax": tax.tax, "TaxRate": tax.rate,
            "TaxTreatment": tax.treatment, "BuyerCountry": tax.buyer_country, "BuyerVatNumber": tax.buyer_vat_number}


def journal_entry(order_id: str, kind: str, at: str) -> PendingAction:
    shard = int(hashlib.sha256(order_id.encode()).hexdigest(), 16) % JOURNAL_SHARDS
    return PendingAction(**PendingAction.keys(shard=shard, at=at, order_id=order_id, kind=kind),
                         OrderId=order_id, Kind=kind, At=at)


def gift_card_payment_id(order_id: str) -> str:
    return f"{order_id}-gc"


def card_payment_id(order_id: str) -> str:
    return f"{order_id}-card"


def _order_keys(plan: PlannedOrder) -> dict[str, str]:
    return {"order_id": plan.order_id, "customer_id": plan.customer_id, "placed_at": plan.placed_at}


def build_order_details(plan: PlannedOrder) -> OrderDetails:
    """The items ``place_order`` writes, as they will be stored."""
    keys = _order_keys(plan)
    status = OrderStatus.PENDING_PAYMENT if plan.card_amount else OrderStatus.PAID
    order = Order(
        **Order.keys(**keys), PlacedAt=plan.placed_at, Status=status, Currency=plan.currency,
        Subtotal=plan.subtotal, Discount=plan.discount, Total=plan.total, GiftCardAmount=plan.gift_card_amount,
        CardAmount=plan.card_amount, DiscountCode=plan.discount_code, GiftCardHash=plan.gift_card_hash,
        CardToken=plan.card_token, CardBrand=plan.card_brand, CardLast4=plan.card_last4,
        InvoiceId=plan.invoice_id, ShippingAddress=Address(**plan.address) if plan.address else None,
        ShipmentType=plan.shipment_type,
    )
    details = OrderDetails(order=order)
    for line in plan.lines:
        details.items.append(OrderItem(
            **OrderItem.keys(product_id=line.product_id, **keys), OrderId=plan.order_id,
            ProductId=line.product_id, Name=line.name, Price=line.unit_price, Currency=plan.currency,
            Quantity=line.quantity, Picks=[Pick(WarehouseId=w, Quantity=q) for w, q in line.picks],
        ))
    details.invoice = Invoice(
        **Invoice.keys(invoice_id=plan.invoice_id, issued_at=plan.placed_at, **keys), OrderId=plan.order_id,
        IssuedAt=plan.placed_at, Subtotal=plan.subtotal, Discount=plan.discount, Amount=plan.total,
        Currency=plan.currency, DiscountCode=plan.discount_code, **invoice_tax_attributes(plan.tax),
    )
    if plan.gift_card_amount:
        details.payments.append(Payment(
            **Payment.keys(payment_id=gift_card_payment_id(plan.order_id), invoice_id=plan.invoice_id, **keys),
            OrderId=plan.order_id, Type=PaymentType.GIFT_CARD, Amount=plan.gift_card_amount,
            Currency=plan.currency, PaidAt=plan.placed_at, Last4=plan.gift_card_last4,
        ))
    return details


def keep_address(tx: LabelledWrite, customer_id: str, address: dict[str, str], at: str,
                 email: str | None = None) -> None:
    """Add to ``tx`` the customer item's update that keeps ``address`` for the next
    checkout. It creates the item when the account has never bought anything (a shop
    customer is an rpay account: nothing else writes it first); no condition, so it
    never cancels the order it rides with."""
    actions = [Customer.EntityType.set(Customer), Customer.ShippingAddress.set(Address(**address)),
               Customer.AddressSavedAt.set(at), Customer.CreatedAt.set(Customer.CreatedAt | at)]
    if email:
        actions.append(Customer.Email.set(Customer.Email | email))
    tx.update(("customer",), Customer(**Customer.keys(customer_id=customer_id)), actions)


def _stock(product_id: str, warehouse_id: str) -> WarehouseItem:
    return WarehouseItem(**WarehouseItem.keys(product_id=product_id, warehouse_id=warehouse_id))


def place_order(plan: PlannedOrder, token: str) -> OrderDetails:
    """One TransactWriteItems: the order (only if absent), its lines, the invoice, the
    gift-card payment, a stock reservation per pick (only if available), the gift-card
    debit (only if the balance covers it), the code's use (only under its limit) and,
    when a card is still to be charged, the journal entry the reconcile command reads;
    and, when the customer keeps it, the address on the customer item (no extra request).

    Raises ``AlreadyPlaced``, ``OutOfStock``, ``GiftCardBalanceTooLow``,
    ``DiscountCodeUsedUp``, or ``Cancelled`` (a conflict with another transaction: retry)."""
    details = build_order_details(plan)
    tx = LabelledWrite(client_request_token=token)
    tx.put(("order",), details.order, condition=Order.PK.does_not_exist())
    for item in details.items:
        tx.put(("line", item.ProductId), item)
    tx.put(("invoice",), details.invoice)
    for payment in details.payments:
        tx.put(("payment",), payment)
    if plan.card_amount:
        tx.put(("journal",), journal_entry(plan.order_id, "checkout", plan.placed_at))
    if plan.save_address and plan.address:
        keep_address(tx, plan.customer_id, plan.address, plan.placed_at, plan.customer_email)
    for line in plan.lines:
        for warehouse_id, quantity in line.picks:
            tx.update(("stock", line.product_id, warehouse_id), _stock(line.product_id, warehouse_id),
                      [WarehouseItem.Available.add(-quantity), WarehouseItem.Reserved.add(quantity)],
                      condition=WarehouseItem.Available >= quantity)
    if plan.gift_card_amount and plan.gift_card_hash:
        card = GiftCard(**GiftCard.keys(code_hash=plan.gift_card_hash))
        tx.update(("gift_card",), card, [GiftCard.Balance.add(-plan.gift_card_amount)],
                  condition=(GiftCard.Balance >= plan.gift_card_amount) & (GiftCard.Currency == plan.currency))
        tx.put(("gift_card_entry",), ledger_entry(
            plan.gift_card_hash, GiftCardEntryKind.DEBIT, -plan.gift_card_amount, plan.currency,
            plan.customer_email or f"customer {plan.customer_id}", plan.order_id))
    if plan.discount_code:
        code = DiscountCode(**DiscountCode.keys(code=plan.discount_code))
        day = plan.placed_at[:10]  # the code must still be valid on the day the order is placed
        condition = ((DiscountCode.Active == "yes")
                     & (DiscountCode.ValidFrom.does_not_exist() | (DiscountCode.ValidFrom <= day))
                     & (DiscountCode.ValidUntil.does_not_exist() | (DiscountCode.ValidUntil >= day)))
        if plan.discount_max_uses is not None:
            condition &= (DiscountCode.Uses < plan.discount_max_uses) & (DiscountCode.MaxUses == plan.discount_max_uses)
        else:  # read without a limit: staff giving it one meanwhile must not be passed by
            condition &= DiscountCode.MaxUses.does_not_exist()
        tx.update(("discount_code",), code, [DiscountCode.Uses.add(1)], condition=condition)
    try:
        tx.commit()
    except Cancelled as cancelled:
        raise _why(cancelled, plan) from cancelled
    return details


def _why(cancelled: Cancelled, plan: PlannedOrder) -> Exception:
    """The first business reason a checkout transaction was cancelled, or the cancellation."""
    if cancelled.idempotent_mismatch or cancelled.failed("order"):
        return AlreadyPlaced(plan.order_id)
    names = {line.product_id: line.name for line in plan.lines}
    for failure in cancelled.failed("stock"):
        product_id = failure.label[1]
        return OutOfStock(product_id, names.get(product_id, product_id), failure.number("Available"))
    for failure in cancelled.failed("gift_card"):
        return GiftCardBalanceTooLow(failure.number("Balance"), plan.currency)
    for failure in cancelled.failed("discount_code"):
        return _code_refused(failure, plan)
    return cancelled


def _code_refused(failure: Failure, plan: PlannedOrder) -> Exception:
    """Why the code's condition failed, from the code as it was (staff changed its dates,
    midnight passed since the plan, or its last use was taken)."""
    code, day = plan.discount_code or "", plan.placed_at[:10]
    if failure.item is None or failure.text("Active") != "yes":
        return NotFound(gettext("There is no discount code %(code)s.") % {"code": code}, field="discount code")
    try:
        check_code_dates(code, day, failure.text("ValidFrom"), failure.text("ValidUntil"))
    except (DiscountCodeExpired, DiscountCodeNotValidYet) as error:
        return error
    limit, uses = failure.number("MaxUses"), failure.number("Uses")
    if limit is not None and uses is not None and uses < limit:  # staff changed its limit meanwhile: not used up
        return Busy(gettext("The discount code %(code)s changed just now: please place the order again.") % {
            "code": code})
    return DiscountCodeUsedUp(code)


def note_awaiting_charge(order: Order, charge_id: str) -> None:
    """The card payment waits for the customer's confirmation (3-D Secure): the order names
    that charge (``ChargeId`` while ``pending_payment``), so whoever settles it next asks
    the gateway about that charge instead of making another."""
    order.update(actions=[Order.ChargeId.set(charge_id)], condition=Order.Status == OrderStatus.PENDING_PAYMENT)


def finish_paid(details: OrderDetails, charge_id: str, paid_at: str) -> None:
    """The card was charged: the order is paid, the card payment recorded and the journal
    entry gone, in one transaction, only if the order still waits for its payment."""
    order = details.order
    keys = {"order_id": order.order_id, "customer_id": order.customer_id, "placed_at": order.PlacedAt}
    payment = Payment(
        **Payment.keys(payment_id=card_payment_id(order.order_id), invoice_id=order.InvoiceId, **keys),
        OrderId=order.order_id, Type=PaymentType.CARD, Amount=order.CardAmount, Currency=order.Currency,
        PaidAt=paid_at, ChargeId=charge_id, CardBrand=order.CardBrand, Last4=order.CardLast4,
    )
    tx = LabelledWrite()
    tx.update(("order",), order, [Order.Status.set(OrderStatus.PAID), Order.ChargeId.set(charge_id)],
              condition=Order.Status == OrderStatus.PENDING_PAYMENT)
    tx.put(("payment",), payment, condition=Payment.PK.does_not_exist())
    tx.delete(("journal",), journal_entry(order.order_id, "checkout", order.PlacedAt))
    tx.commit()
    details.payments.append(payment)


def shipped_quantities(details: OrderDetails) -> dict[tuple[str, str], int]:
    """(product id, warehouse id) -> units that left the warehouse in a shipped shipment."""
    shipped = {s.shipment_id for s in details.shipments if s.Status == ShipmentStatus.SHIPPED}
    out: dict[tuple[str, str], int] = {}
    for item in details.shipment_items:
        if item.ShipmentId in shipped:
            key = (item.ProductId, item.WarehouseId)
            out[key] = out.get(key, 0) + item.Quantity
    return out


def put_back(tx: LabelledWrite, details: OrderDetails, *, kind: str, actor: str) -> None:
    """Add to ``tx`` what gives back an order's stock, gift-card money (with its ledger
    entry) and code use.

    Units still reserved are released; units already shipped come back as returned goods
    (on hand again). ``kind`` is a ``GiftCardEntryKind``: ``reversal`` (the card was
    declined) marks the gift-card payment reversed, ``cancel``/``refund`` refunded."""
    order = details.order
    shipped = shipped_quantities(details)
    for item in details.items:
        for pick in item.Picks:
            returned = min(shipped.get((item.ProductId, pick.WarehouseId), 0), pick.Quantity)
            released = pick.Quantity - returned
            actions = [WarehouseItem.Available.add(pick.Quantity)]
            if released:
                actions.append(WarehouseItem.Reserved.add(-released))
            if returned:
                actions.append(WarehouseItem.OnHand.add(returned))
            tx.update(("stock", item.ProductId, pick.WarehouseId), _stock(item.ProductId, pick.WarehouseId), actions)
    if order.GiftCardAmount and order.GiftCardHash:
        card = GiftCard(**GiftCard.keys(code_hash=order.GiftCardHash))
        tx.update(("gift_card",), card, [GiftCard.Balance.add(order.GiftCardAmount)])
        # Only if absent: a second put-back of one order would fail the transaction.
        entry = ledger_entry(order.GiftCardHash, kind, order.GiftCardAmount, order.Currency, actor, order.order_id)
        tx.put(("gift_card_entry",), entry, condition=GiftCardEntry.PK.does_not_exist())
        for payment in details.payments:
            if payment.Type == PaymentType.GIFT_CARD and payment.Status == PaymentStatus.SUCCEEDED:
                status = PaymentStatus.REVERSED if kind == GiftCardEntryKind.REVERSAL else PaymentStatus.REFUNDED
                tx.update(("payment", payment.SK), payment,
                          [Payment.Status.set(status), Payment.RefundedAmount.set(payment.Amount)])
    if order.DiscountCode:
        code = DiscountCode(**DiscountCode.keys(code=order.DiscountCode))
        tx.update(("discount_code",), code, [DiscountCode.Uses.add(-1)])


def roll_back_checkout(details: OrderDetails, decline_code: str | None, at: str) -> None:
    """The card was declined: one transaction puts back stock, gift card and code, marks
    the order declined and removes the journal entry, only if the order still waits."""
    order = details.order
    tx = LabelledWrite()
    tx.update(("order",), order, [Order.Status.set(OrderStatus.DECLINED),
                                  Order.DeclineCode.set(decline_code or "declined"), Order.ClosedAt.set(at)],
              condition=Order.Status == OrderStatus.PENDING_PAYMENT)
    put_back(tx, details, kind=GiftCardEntryKind.REVERSAL, actor="system")
    tx.delete(("journal",), journal_entry(order.order_id, "checkout", order.PlacedAt))
    tx.commit()


def get_pending_actions(older_than: str) -> list[PendingAction]:
    """Journal entries written before ``older_than`` (ISO): one Query per shard, no Scan."""
    found: list[PendingAction] = []
    for shard in range(JOURNAL_SHARDS):
        pk = PendingAction.pk(shard=shard)
        found += list(PendingAction.query(pk, PendingAction.SK < older_than,  # noqa: SIM300
                                          consistent_read=True))
    return found
