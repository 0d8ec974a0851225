"""The shop's named access patterns (docs/SHOP.md): the only code that reads or writes
shop items. The seed's sixteen, named in snake case, plus products by category, a
customer's orders, discount-code and gift-card look-ups; each is one request (a
BatchGetItem may follow for names). Nothing scans the table. Look-ups with an id that
could not be in a key find nothing; writes with one raise ``InvalidInput``.
"""

from shop.access.catalog import (
    create_customer,
    create_product,
    create_warehouse,
    forget_customer,
    get_customer_by_customer_id,
    get_product_by_product_id,
    get_products_by_category,
    get_products_by_ids,
    get_warehouse_by_warehouse_id,
    get_warehouses_by_ids,
)
from shop.access.codes import (
    create_discount_code,
    end_discount_code,
    get_discount_code,
    get_gift_card,
    issue_gift_card,
    update_discount_code,
)
from shop.access.gift_card_ledger import GiftCardLedger, get_gift_card_with_ledger
from shop.access.inventory import (
    adjust_stock,
    get_product_inventory_by_product_id,
    get_product_inventory_by_warehouse_id,
    get_product_with_inventory,
    put_stock,
)
from shop.access.orders import (
    OrderDetails,
    get_invoice_by_customer_id_for_date_range,
    get_invoice_by_invoice_id,
    get_invoice_by_order_id,
    get_order_by_product_id_for_date_range,
    get_order_details_by_order_id,
    get_orders_by_customer_id,
    get_payment_by_invoice_id,
    get_product_by_order_id,
    get_products_by_customer_id_for_date_range,
    get_shipment_by_order_id,
)
from shop.access.sample import load_seed_sample
from shop.access.shipments import (
    ShipmentDetails,
    get_shipment_by_warehouse_id,
    get_shipment_details_by_shipment_id,
)

__all__ = [
    "GiftCardLedger", "OrderDetails", "ShipmentDetails",
    "adjust_stock", "create_customer", "create_discount_code", "create_product", "create_warehouse",
    "end_discount_code", "forget_customer",
    "get_customer_by_customer_id", "get_discount_code", "get_gift_card", "get_gift_card_with_ledger",
    "get_invoice_by_customer_id_for_date_range", "get_invoice_by_invoice_id", "get_invoice_by_order_id",
    "get_order_by_product_id_for_date_range", "get_order_details_by_order_id", "get_orders_by_customer_id",
    "get_payment_by_invoice_id", "get_product_by_order_id", "get_product_by_product_id",
    "get_product_inventory_by_product_id", "get_product_with_inventory", "get_product_inventory_by_warehouse_id",
    "get_products_by_category", "get_products_by_customer_id_for_date_range", "get_products_by_ids",
    "get_shipment_by_order_id", "get_shipment_by_warehouse_id", "get_shipment_details_by_shipment_id",
    "get_warehouse_by_warehouse_id", "get_warehouses_by_ids", "issue_gift_card", "load_seed_sample", "put_stock",
    "update_discount_code",
]
