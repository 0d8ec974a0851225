from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("shop/", include("shop.urls")),
    path("", include("billing.urls")),
]

handler404 = "billing.views.page_not_found"
handler500 = "billing.views.server_error"
