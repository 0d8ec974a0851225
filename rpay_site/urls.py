from django.contrib import admin
from django.urls import include, path

from shop.staff import shop_staff_urls

# The shop's staff pages join the admin's URLs (first: the admin's end in a catch-all).
_admin_urls = admin.site.get_urls
admin.site.get_urls = lambda: shop_staff_urls(admin.site) + _admin_urls()

urlpatterns = [
    path("admin/", admin.site.urls),
    path("shop/", include("shop.urls")),
    path("", include("billing.urls")),
]

handler404 = "billing.views.page_not_found"
handler500 = "billing.views.server_error"
