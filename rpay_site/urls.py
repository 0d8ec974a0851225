from django.contrib import admin
from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path

from billing.api import api_urls


def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """/favicon.ico, which browsers ask for where a page names no icon (a PDF, a CSV, an
    old bookmark): the static icon, rather than a 404 in the console. Not permanent: the
    static file's address may change."""
    return HttpResponseRedirect(static("favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("shop/", include("shop.urls")),
    # The merchant's REST API (billing/api/, docs/API.md): JSON only, keys, no session.
    path("api/v1/", include(api_urls())),
    path("", include("billing.urls")),
]

handler404 = "billing.views.page_not_found"
handler500 = "billing.views.server_error"
