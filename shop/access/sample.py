"""The seed's sample data (AnOnlineShop_14.json + the facets model's payments), types fixed.

Same ids as the seed: customers c#12345, c#23456, c#54321; products p#12345 "Options
Open" and p#99887 "The Book"; warehouses w#12345 and w#12376 with their stock; the
order o#12345 with its lines, invoice i#55443, payments pmn#33442 (gift card) and
pmn#33224 (card) and shipments sh#98765 and sh#88899. What changed on the way in:
amounts are minor units (SEK: the seed's 100 is 100.00 kr) with a currency, quantities
are numbers, dates are UTC with 'Z', the order has one PlacedAt, the warehouseItem the
seed left out of GSI2 is in it, and shipment items are keyed
``shp#<shipmentId>#<productId>`` (the seed's own shp# numbers identify nothing else).
"""

from __future__ import annotations

from shop.models import (
    Address,
    Customer,
    Invoice,
    Order,
    OrderItem,
    OrderStatus,
    Payment,
    PaymentType,
    Pick,
    Product,
    Shipment,
    ShipmentItem,
    ShipmentStatus,
    ShopItem,
    Warehouse,
    WarehouseItem,
)

CURRENCY = "SEK"
CUSTOMERS = [("12345", "samaneh@example.com", "Samaneh"), ("23456", "kathleen@example.com", "Kathleen"),
             ("54321", "henrik@example.com", "Henrik")]
ORDER_ID, INVOICE_ID, CUSTOMER_ID = "12345", "55443", "12345"
PLACED_AT = "2020-06-21T19:10:00Z"
ISSUED_AT = "2020-06-21T19:18:00Z"
PAID_AT = "2020-06-21T20:30:00Z"


def _address(city: str, street: str, number: str, zip_code: str) -> Address:
    return Address(Country="Sweden", County="Vastra Gotaland", City=city, Street=street, Number=number,
                   ZipCode=zip_code)


SHIP_TO = _address("Goteborg", "Slanbarsvagen", "34", "41787")


def sample_items(card_charge_id: str | None = None) -> list[ShopItem]:
    """Every item of the sample, each keyed through its entity's templates."""
    items: list[ShopItem] = [
        Customer(**Customer.keys(customer_id=cid), Email=email, Name=name) for cid, email, name in CUSTOMERS
    ]
    products = [("12345", "Options Open", "The latest album", 10000, "music"),
                ("99887", "The Book", "The best book ever", 4000, "books")]
    for pid, name, description, price, category in products:
        items.append(Product(**Product.keys(product_id=pid, category=category, sort_name=Product.sort_name(name)),
                             Name=name, Description=description, Category=category, Price=price,
                             Currency=CURRENCY))
    items += [
        Warehouse(**Warehouse.keys(warehouse_id="12345"), Name="Goteborg",
                  Address=_address("Goteborg", "MainStreet", "20", "41111")),
        Warehouse(**Warehouse.keys(warehouse_id="12376"), Name="Boras",
                  Address=_address("Boras", "RiverStreet", "20", "11111")),
    ]
    for pid, wid, quantity in [("12345", "12345", 50), ("99887", "12345", 4), ("99887", "12376", 4)]:
        items.append(WarehouseItem(**WarehouseItem.keys(product_id=pid, warehouse_id=wid),
                                   OnHand=quantity, Reserved=0, Available=quantity))

    order_keys = {"order_id": ORDER_ID, "customer_id": CUSTOMER_ID, "placed_at": PLACED_AT}
    items.append(Order(
        **Order.keys(**order_keys), PlacedAt=PLACED_AT, Status=OrderStatus.SHIPPED, Currency=CURRENCY,
        Subtotal=40000, Discount=0, Total=40000, GiftCardAmount=10000, CardAmount=30000,
        CardBrand="Mastercard", CardLast4="4444", ChargeId=card_charge_id, InvoiceId=INVOICE_ID,
        ShippingAddress=SHIP_TO, ShipmentType="Express", Version=1,
    ))
    lines = [("12345", "Options Open", 10000, 2, [("12345", 2)]),
             ("99887", "The Book", 4000, 5, [("12345", 3), ("12376", 2)])]
    for pid, name, price, quantity, picks in lines:
        items.append(OrderItem(
            **OrderItem.keys(product_id=pid, **order_keys), OrderId=ORDER_ID, ProductId=pid, Name=name,
            Price=price, Currency=CURRENCY, Quantity=quantity,
            Picks=[Pick(WarehouseId=w, Quantity=q) for w, q in picks],
        ))
    items.append(Invoice(**Invoice.keys(invoice_id=INVOICE_ID, issued_at=ISSUED_AT, **order_keys),
                         OrderId=ORDER_ID, IssuedAt=ISSUED_AT, Subtotal=40000, Discount=0, Amount=40000,
                         Currency=CURRENCY))
    for payment_id, kind, amount, extra in [
        ("33442", PaymentType.GIFT_CARD, 10000, {"Last4": "0001"}),
        ("33224", PaymentType.CARD, 30000, {"CardBrand": "Mastercard", "Last4": "4444",
                                            "ChargeId": card_charge_id}),
    ]:
        items.append(Payment(**Payment.keys(payment_id=payment_id, invoice_id=INVOICE_ID, **order_keys),
                             OrderId=ORDER_ID, Type=kind, Amount=amount, Currency=CURRENCY, PaidAt=PAID_AT,
                             **extra))
    for shipment_id, wid, created, contents in [
        ("98765", "12345", "2020-06-22T10:20:00Z", [("12345", 2), ("99887", 3)]),
        ("88899", "12376", "2020-06-22T08:20:00Z", [("99887", 2)]),
    ]:
        items.append(Shipment(
            **Shipment.keys(shipment_id=shipment_id, warehouse_id=wid, created_at=created, **order_keys),
            OrderId=ORDER_ID, WarehouseId=wid, Address=SHIP_TO, Type="Express", Status=ShipmentStatus.SHIPPED,
            CreatedAt=created, ShippedAt=created,
        ))
        for pid, quantity in contents:
            items.append(ShipmentItem(
                **ShipmentItem.keys(shipment_id=shipment_id, product_id=pid, **order_keys),
                OrderId=ORDER_ID, ShipmentId=shipment_id, ProductId=pid, WarehouseId=wid, Quantity=quantity,
            ))
    return items


def load_seed_sample(card_charge_id: str | None = None) -> bool:
    """Write the sample once (BatchWriteItem); False when it is there already."""
    from shop.access.catalog import forget_warehouses, get_customer_by_customer_id

    if get_customer_by_customer_id(CUSTOMER_ID) is not None:
        return False
    with ShopItem.batch_write() as batch:
        for item in sample_items(card_charge_id):
            batch.save(item)
    forget_warehouses()
    return True
