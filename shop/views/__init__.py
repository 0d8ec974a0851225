"""The shop's customer pages (docs/SHOP.md, "Pages"): they call
``shop.access`` (and ``shop.checkout``) only."""

from shop.views.cart_pages import cart_page, cart_update
from shop.views.catalog_pages import catalogue, product_page
from shop.views.checkout_pages import checkout_page, order_authenticate
from shop.views.order_pages import gift_card_page, history_page, order_page, orders_page

__all__ = ["cart_page", "cart_update", "catalogue", "checkout_page", "gift_card_page", "history_page",
           "order_authenticate", "order_page", "orders_page", "product_page"]
