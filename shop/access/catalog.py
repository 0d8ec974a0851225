"""Customers, products and warehouses: patterns 1-3 and products by category."""

from __future__ import annotations

import threading
import time

from shop.access._common import all_valid, get_by_ids, iso, utc_now
from shop.ids import check_id
from shop.models import Address, Customer, Product, ShopItem, Warehouse


def get_customer_by_customer_id(customer_id: str) -> Customer | None:
    """Pattern 1: GetItem PK = SK = c#<customerId>."""
    return get_by_ids(Customer, customer_id=customer_id)


def get_product_by_product_id(product_id: str) -> Product | None:
    """Pattern 2: GetItem PK = SK = p#<productId>."""
    return get_by_ids(Product, product_id=product_id)


def get_warehouse_by_warehouse_id(warehouse_id: str) -> Warehouse | None:
    """Pattern 3: GetItem PK = SK = w#<warehouseId>."""
    return get_by_ids(Warehouse, warehouse_id=warehouse_id)


def get_products_by_category(category: str, limit: int = 100) -> list[Product]:
    """A category's products sorted by name: one Query of GSI1 ``cat#<category>``."""
    if not all_valid(category):
        return []
    pk = Product.key_templates["GSI1PK"].format(category=category)
    return [p for p in ShopItem.gsi1.query(pk, limit=limit) if isinstance(p, Product)]


def get_products_by_ids(product_ids: list[str]) -> dict[str, Product]:
    """Several products in one BatchGetItem (the names behind a list of ids)."""
    wanted = sorted({p for p in product_ids if all_valid(p)})
    keys = [(Product.pk(product_id=p), Product.sk(product_id=p)) for p in wanted]
    return {item.product_id: item for item in Product.batch_get(keys)} if keys else {}


# Warehouses read for their addresses, by (table, id): (expires at, the warehouse or None).
_warehouses: dict[tuple[str, str], tuple[float, Warehouse | None]] = {}
_warehouses_lock = threading.Lock()


def get_warehouses_by_ids(warehouse_ids: list[str], *, max_age: float = 0) -> dict[str, Warehouse]:
    """Several warehouses in one BatchGetItem (their addresses, to choose the nearest).

    ``max_age`` > 0: a warehouse read in this process less than that many seconds ago is
    not read again (the checkout: an address changes rarely, and one a minute old only
    picks another warehouse as the nearest; a write here forgets them all)."""
    wanted = sorted({w for w in warehouse_ids if all_valid(w)})
    table, now = ShopItem.Meta.table_name, time.monotonic()
    found: dict[str, Warehouse] = {}
    if max_age > 0:
        with _warehouses_lock:
            kept = {w: _warehouses.get((table, w)) for w in wanted}
        fresh = {w: entry[1] for w, entry in kept.items() if entry is not None and entry[0] > now}
        found = {w: item for w, item in fresh.items() if item is not None}
        wanted = [w for w in wanted if w not in fresh]
    keys = [(Warehouse.pk(warehouse_id=w), Warehouse.sk(warehouse_id=w)) for w in wanted]
    read = {item.warehouse_id: item for item in Warehouse.batch_get(keys)} if keys else {}
    if max_age > 0:
        with _warehouses_lock:
            for w in wanted:
                _warehouses[(table, w)] = (now + max_age, read.get(w))
    return {**found, **read}


def forget_warehouses() -> None:
    """Drop the warehouses ``get_warehouses_by_ids(max_age=...)`` kept (a warehouse written)."""
    with _warehouses_lock:
        _warehouses.clear()


def create_customer(customer_id: str, email: str, name: str = "") -> Customer:
    """The shop side of an rpay account (customer id = AccountId); written once."""
    check_id(customer_id, "customer id")
    customer = Customer(**Customer.keys(customer_id=customer_id), Email=email, Name=name or None,
                        CreatedAt=iso(utc_now()))
    customer.save(condition=Customer.PK.does_not_exist())
    return customer


def create_product(product_id: str, name: str, price: int, currency: str, category: str,
                   description: str = "") -> Product:
    check_id(product_id, "product id")
    check_id(category, "category")
    if not isinstance(price, int) or price < 0:
        raise ValueError("price must be a non-negative integer number of minor units")
    product = Product(
        **Product.keys(product_id=product_id, category=category, sort_name=Product.sort_name(name)),
        Name=name, Description=description or None, Category=category, Price=price, Currency=currency,
    )
    product.save(condition=Product.PK.does_not_exist())
    return product


def create_warehouse(warehouse_id: str, name: str, address: Address) -> Warehouse:
    check_id(warehouse_id, "warehouse id")
    warehouse = Warehouse(**Warehouse.keys(warehouse_id=warehouse_id), Name=name, Address=address)
    warehouse.save(condition=Warehouse.PK.does_not_exist())
    forget_warehouses()
    return warehouse


def forget_customer(customer_id: str) -> None:
    """A closed account's shop customer item goes: its e-mail, name and saved address
    (docs/PORTAL.md, "Your data"). Deleting an absent item is no error (a second close)."""
    if all_valid(customer_id):
        Customer(**Customer.keys(customer_id=customer_id)).delete()
