"""The online shop's single table (docs/SHOP.md), modelled with PynamoDB.

Every entity is a subclass of ``ShopItem`` told apart by ``EntityType`` (the seed's
lower-case values), and declares its key templates once, in ``key_templates``: the
base-table keys and every index key its type has. ``Entity.keys(**ids)`` formats them
all at once, so an item can never be written without one of its index keys (the
seed's sample left a warehouseItem out of GSI2; docs/SHOP.md, "Where the original
design is wrong" 2).

The table lives on the same engine as the billing table (same endpoint, region and
botocore client); only its name differs (``SHOP_DYNAMODB_TABLE``). Money is an
integer number of minor units plus ``Currency``; timestamps are UTC ISO-8601 with
``Z``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pynamodb.attributes import (
    DiscriminatorAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    VersionAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from core.dynamo import engine
from core.dynamo.engine import OnSharedEngine
from core.dynamo.invoice_tax import InvoiceTaxAttributes
from core.dynamo.keys import KeyPart, KeyTemplate

# The seed's hyphenated index attribute names.
GSI1_PK, GSI1_SK, GSI2_PK, GSI2_SK = "GSI1-PK", "GSI1-SK", "GSI2-PK", "GSI2-SK"


class GSI1(GlobalSecondaryIndex):
    """Overloaded: category -> products, product -> order lines by date, invoice ->
    invoice and payments, shipment -> shipment and its items."""

    class Meta:
        index_name = "GSI1"
        projection = AllProjection()

    GSI1PK = UnicodeAttribute(hash_key=True, attr_name=GSI1_PK)
    GSI1SK = UnicodeAttribute(range_key=True, attr_name=GSI1_SK)


class GSI2(GlobalSecondaryIndex):
    """Overloaded: warehouse -> stock and shipments, customer -> orders, invoices and
    purchased lines by date."""

    class Meta:
        index_name = "GSI2"
        projection = AllProjection()

    GSI2PK = UnicodeAttribute(hash_key=True, attr_name=GSI2_PK)
    GSI2SK = UnicodeAttribute(range_key=True, attr_name=GSI2_SK)


class Address(MapAttribute):
    """A postal address as the seed writes it (all strings: a house number may be '12B')."""

    Country = UnicodeAttribute()
    County = UnicodeAttribute(null=True)
    City = UnicodeAttribute()
    Street = UnicodeAttribute()
    Number = UnicodeAttribute(null=True)
    ZipCode = UnicodeAttribute()


class Pick(MapAttribute):
    """How many units of an order line come from one warehouse."""

    WarehouseId = UnicodeAttribute()
    Quantity = NumberAttribute()


class ShopItem(OnSharedEngine):
    """Base model of the shop table: generic keys, the discriminator, both indexes."""

    class Meta:
        table_name = "OnlineShop"
        region = "us-east-1"
        host: str | None = None
        billing_mode = "PAY_PER_REQUEST"

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True)
    EntityType = DiscriminatorAttribute()
    GSI1PK = UnicodeAttribute(null=True, attr_name=GSI1_PK)
    GSI1SK = UnicodeAttribute(null=True, attr_name=GSI1_SK)
    GSI2PK = UnicodeAttribute(null=True, attr_name=GSI2_PK)
    GSI2SK = UnicodeAttribute(null=True, attr_name=GSI2_SK)

    gsi1 = GSI1()
    gsi2 = GSI2()

    # Python attribute name -> template, for PK, SK and every index key of the type.
    key_templates: ClassVar[dict[str, KeyTemplate]] = {}

    @classmethod
    def keys(cls, **values: Any) -> dict[str, str]:
        """Every key attribute of this entity, formatted from the ids given.

        Each template takes only the fields it names; ``KeyTemplate.format`` refuses a
        value holding '#'."""
        out = {}
        for attr, template in cls.key_templates.items():
            out[attr] = template.format(**{f: values[f] for f in template.fields})
        return out

    @classmethod
    def pk(cls, **values: Any) -> str:
        return cls.key_templates["PK"].format(**values)

    @classmethod
    def sk(cls, **values: Any) -> str:
        return cls.key_templates["SK"].format(**values)

    @classmethod
    def index_keys(cls) -> list[str]:
        """The index key attributes this entity's type has (Python names)."""
        return [a for a in cls.key_templates if a.startswith("GSI")]


def _t(template: str) -> KeyTemplate:
    return KeyTemplate(template)


CUSTOMER = _t("c#{customer_id}")
PRODUCT = _t("p#{product_id}")
WAREHOUSE = _t("w#{warehouse_id}")
ORDER = _t("o#{order_id}")
INVOICE = _t("i#{invoice_id}")
SHIPMENT = _t("sh#{shipment_id}")
GIFT_CARD = _t("gc#{code_hash}")


class Customer(ShopItem, discriminator="customer"):
    """A shop customer is an rpay account: customer id = AccountId.

    The item is written by the first checkout that keeps its address (or by
    ``create_customer``); ``ShippingAddress`` is the address to offer next time."""

    key_templates = {"PK": CUSTOMER, "SK": CUSTOMER}

    Email = UnicodeAttribute(null=True)  # None only when the checkout that made it knew none
    Name = UnicodeAttribute(null=True)
    CreatedAt = UnicodeAttribute(null=True)
    ShippingAddress = Address(null=True)
    AddressSavedAt = UnicodeAttribute(null=True)

    customer_id = KeyPart(CUSTOMER)


class ProductStatus:
    ACTIVE = "active"
    RETIRED = "retired"


class Product(ShopItem, discriminator="product"):
    key_templates = {
        "PK": PRODUCT, "SK": PRODUCT,
        # Browsing a category sorted by name (docs/SHOP.md, "The table"). The name is folded
        # for sorting and stripped of '#' (it is not parsed back).
        "GSI1PK": _t("cat#{category}"), "GSI1SK": _t("{sort_name}#p#{product_id}"),
    }

    Name = UnicodeAttribute()
    Description = UnicodeAttribute(null=True)
    Category = UnicodeAttribute()
    Price = NumberAttribute()  # minor units
    Currency = UnicodeAttribute()
    Status = UnicodeAttribute(default=ProductStatus.ACTIVE)

    product_id = KeyPart(PRODUCT)

    @staticmethod
    def sort_name(name: str) -> str:
        """The name as it sorts in a category: folded, no '#', at most 60 characters."""
        return " ".join(name.replace("#", " ").casefold().split())[:60]


class Warehouse(ShopItem, discriminator="warehouse"):
    key_templates = {"PK": WAREHOUSE, "SK": WAREHOUSE}

    Name = UnicodeAttribute(null=True)
    Address = Address()

    warehouse_id = KeyPart(WAREHOUSE)


class WarehouseItem(ShopItem, discriminator="warehouseItem"):
    """Stock of one product in one warehouse.

    ``Available`` is kept equal to ``OnHand - Reserved`` by every write, because a
    condition expression cannot subtract: checkout's condition is ``Available >= q``."""

    key_templates = {"PK": PRODUCT, "SK": WAREHOUSE, "GSI2PK": WAREHOUSE, "GSI2SK": PRODUCT}

    OnHand = NumberAttribute(default=0)
    Reserved = NumberAttribute(default=0)
    Available = NumberAttribute(default=0)

    product_id = KeyPart(PRODUCT)
    warehouse_id = KeyPart(WAREHOUSE, "SK")


class OrderStatus:
    PENDING_PAYMENT = "pending_payment"  # placed, card not charged yet
    PAID = "paid"
    PARTIALLY_SHIPPED = "partially_shipped"
    SHIPPED = "shipped"
    DECLINED = "declined"  # the card was declined: stock, gift card and code put back
    CANCELLED = "cancelled"  # cancelled before shipping: everything put back
    REFUNDED = "refunded"  # returned after shipping: money and stock back
    OPEN = (PAID, PARTIALLY_SHIPPED, SHIPPED)


class Order(ShopItem, discriminator="order"):
    key_templates = {
        "PK": ORDER, "SK": CUSTOMER,
        # A customer's order history, newest last (docs/SHOP.md, "The table").
        "GSI2PK": CUSTOMER, "GSI2SK": _t("o#{placed_at}#{order_id}"),
    }

    PlacedAt = UnicodeAttribute()
    Status = UnicodeAttribute()
    Currency = UnicodeAttribute()
    Subtotal = NumberAttribute()
    Discount = NumberAttribute(default=0)
    Total = NumberAttribute()
    GiftCardAmount = NumberAttribute(default=0)
    CardAmount = NumberAttribute(default=0)
    DiscountCode = UnicodeAttribute(null=True)
    GiftCardHash = UnicodeAttribute(null=True)
    CardToken = UnicodeAttribute(null=True)  # gateway token, never a card number
    CardBrand = UnicodeAttribute(null=True)
    CardLast4 = UnicodeAttribute(null=True)
    ChargeId = UnicodeAttribute(null=True)
    DeclineCode = UnicodeAttribute(null=True)
    InvoiceId = UnicodeAttribute()
    ShippingAddress = Address(null=True)
    ShipmentType = UnicodeAttribute(null=True)
    ClosedAt = UnicodeAttribute(null=True)
    Version = VersionAttribute()

    order_id = KeyPart(ORDER)
    customer_id = KeyPart(CUSTOMER, "SK")


class OrderItem(ShopItem, discriminator="orderItem"):
    key_templates = {
        "PK": ORDER, "SK": PRODUCT,
        "GSI1PK": PRODUCT, "GSI1SK": _t("{placed_at}"),
        "GSI2PK": CUSTOMER, "GSI2SK": _t("p#{placed_at}"),
    }

    OrderId = UnicodeAttribute()
    ProductId = UnicodeAttribute()
    Name = UnicodeAttribute()  # denormalized: an order page needs no product read
    Price = NumberAttribute()  # unit price, minor units
    Currency = UnicodeAttribute()
    Quantity = NumberAttribute()
    Picks = ListAttribute(of=Pick)

    product_id = KeyPart(PRODUCT, "SK")


class Invoice(ShopItem, InvoiceTaxAttributes, discriminator="invoice"):
    key_templates = {
        "PK": ORDER, "SK": INVOICE,
        "GSI1PK": INVOICE, "GSI1SK": INVOICE,
        "GSI2PK": CUSTOMER, "GSI2SK": _t("i#{issued_at}"),
    }

    OrderId = UnicodeAttribute()
    IssuedAt = UnicodeAttribute()
    Subtotal = NumberAttribute()
    Discount = NumberAttribute(default=0)
    Amount = NumberAttribute()  # what is owed: subtotal - discount
    Currency = UnicodeAttribute()
    DiscountCode = UnicodeAttribute(null=True)
    # The seller at the sale and the VAT included in ``Amount`` (billing.customers
    # ``invoice_tax_figures``), as billing's invoices keep them; null on invoices written
    # before (their page names today's seller).
    SellerName = UnicodeAttribute(null=True)
    SellerAddress = UnicodeAttribute(null=True)
    SellerCountry = UnicodeAttribute(null=True)
    SellerVatNumber = UnicodeAttribute(null=True)
    Net = NumberAttribute(null=True)
    Tax = NumberAttribute(null=True)
    # TaxRate, TaxTreatment, BuyerCountry, BuyerVatNumber: ``InvoiceTaxAttributes``.
    # Set when the customer's account is closed: the end of its tax retention, when
    # DynamoDB's TTL deletes it (docs/PORTAL.md, "Your data"). Unset: kept.
    TTL = TTLAttribute(null=True)

    invoice_id = KeyPart(INVOICE, "SK")


class PaymentType:
    GIFT_CARD = "GiftCard"
    CARD = "Card"


class PaymentStatus:
    SUCCEEDED = "succeeded"
    REVERSED = "reversed"  # a gift-card debit put back when the card was declined
    REFUNDED = "refunded"


class Payment(ShopItem, discriminator="payment"):
    key_templates = {
        "PK": ORDER, "SK": _t("pmn#{payment_id}"),
        "GSI1PK": INVOICE, "GSI1SK": _t("pmn#{payment_id}"),
    }

    OrderId = UnicodeAttribute()
    Type = UnicodeAttribute()  # GiftCard | Card
    Amount = NumberAttribute()
    Currency = UnicodeAttribute()
    PaidAt = UnicodeAttribute()
    Status = UnicodeAttribute(default=PaymentStatus.SUCCEEDED)
    ChargeId = UnicodeAttribute(null=True)
    CardBrand = UnicodeAttribute(null=True)
    Last4 = UnicodeAttribute(null=True)  # card or gift card
    RefundedAmount = NumberAttribute(default=0)
    RefundId = UnicodeAttribute(null=True)


class ShipmentStatus:
    CREATED = "created"  # to be picked
    SHIPPED = "shipped"
    CANCELLED = "cancelled"


class Shipment(ShopItem, discriminator="shipment"):
    key_templates = {
        "PK": ORDER, "SK": SHIPMENT,
        "GSI1PK": SHIPMENT, "GSI1SK": SHIPMENT,
        # A warehouse's shipments by date: today's pick list is one Query.
        "GSI2PK": WAREHOUSE, "GSI2SK": _t("sh#{created_at}#{shipment_id}"),
    }

    OrderId = UnicodeAttribute()
    WarehouseId = UnicodeAttribute()
    Address = Address(null=True)
    Type = UnicodeAttribute(null=True)  # e.g. Express
    Status = UnicodeAttribute(default=ShipmentStatus.CREATED)
    CreatedAt = UnicodeAttribute()
    Carrier = UnicodeAttribute(null=True)
    TrackingNumber = UnicodeAttribute(null=True)
    ShippedAt = UnicodeAttribute(null=True)

    shipment_id = KeyPart(SHIPMENT, "SK")


class ShipmentItem(ShopItem, discriminator="shipmentItem"):
    key_templates = {
        "PK": ORDER, "SK": _t("shp#{shipment_id}#{product_id}"),
        "GSI1PK": SHIPMENT, "GSI1SK": PRODUCT,
    }

    OrderId = UnicodeAttribute()
    ShipmentId = UnicodeAttribute()
    ProductId = UnicodeAttribute()
    WarehouseId = UnicodeAttribute()
    Quantity = NumberAttribute()


class DiscountCode(ShopItem, discriminator="discountCode"):
    """A price adjustment on the invoice (not a payment): a percentage or an amount off."""

    key_templates = {"PK": _t("dc#{code}"), "SK": _t("dc#{code}")}

    Code = UnicodeAttribute()
    PercentOff = NumberAttribute(null=True)
    AmountOff = NumberAttribute(null=True)  # minor units, in Currency
    Currency = UnicodeAttribute(null=True)
    MaxUses = NumberAttribute(null=True)  # None: unlimited
    Uses = NumberAttribute(default=0)
    Active = UnicodeAttribute(default="yes")
    # UTC dates (YYYY-MM-DD), both days included; None: no limit on that side. Text
    # compares as dates, so the checkout transaction can check them in its condition.
    ValidFrom = UnicodeAttribute(null=True)
    ValidUntil = UnicodeAttribute(null=True)


class GiftCard(ShopItem, discriminator="giftCard"):
    """A gift card is a bearer secret: the key is the code's hash, the card shows its last four."""

    key_templates = {"PK": GIFT_CARD, "SK": GIFT_CARD}

    Balance = NumberAttribute()
    Currency = UnicodeAttribute()
    Last4 = UnicodeAttribute()
    IssuedAt = UnicodeAttribute(null=True)


class GiftCardEntryKind:
    ISSUED = "issued"  # staff issued the card (credit)
    DEBIT = "debit"  # an order paid with it
    REVERSAL = "reversal"  # the order's card was declined: its debit put back
    CANCEL = "cancel"  # the order was cancelled: money back
    REFUND = "refund"  # the order was refunded: money back


class GiftCardEntry(ShopItem, discriminator="giftCardEntry"):
    """One movement of a gift card's balance (the ledger), written in the same
    transaction as the balance change, in the card's own partition: the card and its
    newest movements are one Query. ``e#`` sorts before the card's ``gc#``, so a Query
    newest-first returns the card, then its movements, newest first."""

    key_templates = {"PK": GIFT_CARD, "SK": _t("e#{at}#{entry_id}")}

    Kind = UnicodeAttribute()  # GiftCardEntryKind
    Amount = NumberAttribute()  # signed minor units: + credit, - debit
    Currency = UnicodeAttribute()
    At = UnicodeAttribute()
    Actor = UnicodeAttribute()  # a staff member's e-mail, the customer's, or "system"
    OrderId = UnicodeAttribute(null=True)

    @staticmethod
    def entry_id(kind: str, order_id: str | None) -> str:
        """Unique per card: one movement of each kind per order (so a retried write is
        refused, not doubled); the issue has none."""
        return f"{order_id}-{kind}" if order_id else kind


class PendingAction(ShopItem, discriminator="pendingAction"):
    """A journal entry for money work not finished yet: a checkout whose card is not
    charged, or a cancellation/refund whose card refund is not made. Written in the
    same transaction as the order change and deleted in the one that finishes it, so
    the reconcile command finds what a crash left half-way with a Query per shard
    (no Scan). Sharded so a busy shop does not write one hot partition."""

    key_templates = {"PK": _t("pa#{shard}"), "SK": _t("{at}#{order_id}#{kind}")}

    OrderId = UnicodeAttribute()
    Kind = UnicodeAttribute()  # checkout | cancel | refund
    At = UnicodeAttribute()


ENTITIES: tuple[type[ShopItem], ...] = (
    Customer, Product, Warehouse, WarehouseItem, Order, OrderItem, Invoice, Payment,
    Shipment, ShipmentItem, DiscountCode, GiftCard, GiftCardEntry, PendingAction,
)


def configure(*, table_name: str) -> None:
    """Point the shop entities at their table on the engine.

    Call it after the billing table's ``configure`` (start-up, tests): the endpoint, region,
    retries and HTTP pool are the engine's (docs/SHOP.md: same engine settings)."""
    engine.configure_shared_table(ShopItem, ENTITIES, table_name=table_name)
