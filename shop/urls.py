"""The shop's customer pages under /shop/ (the staff's are admin URLs: shop.staff)."""

from django.urls import path

from shop import views

app_name = "shop"

urlpatterns = [
    path("", views.catalogue, name="catalogue"),
    path("c/<str:category>/", views.catalogue, name="category"),
    path("p/<str:product_id>/", views.product_page, name="product"),
    path("cart/", views.cart_page, name="cart"),
    path("cart/update/", views.cart_update, name="cart_update"),
    path("checkout/", views.checkout_page, name="checkout"),
    path("orders/", views.orders_page, name="orders"),
    path("orders/<str:order_id>/", views.order_page, name="order"),
    path("orders/<str:order_id>/authenticate/", views.order_authenticate, name="order_authenticate"),
    path("history/", views.history_page, name="history"),
    path("gift-card/", views.gift_card_page, name="gift_card"),
]
