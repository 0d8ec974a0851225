"""The OpenAPI 3 document and the docs page: generated from the code, served without a key,
and the page works under the site's Content-Security-Policy (nothing inline, nothing from
elsewhere)."""

from __future__ import annotations

import re

from django.contrib.staticfiles import finders
from django.test import Client

from tests.test_hardening_csp import assert_no_inline, assert_strict

EXPECTED_PATHS = {
    "/api/v1/customers", "/api/v1/customers/{customer_id}", "/api/v1/customers/{customer_id}/subscriptions",
    "/api/v1/subscriptions/{subscription_id}", "/api/v1/customers/{customer_id}/receipts",
    "/api/v1/customers/{customer_id}/receipts/{receipt_id}", "/api/v1/customers/{customer_id}/receipts/{receipt_id}/pdf",
    "/api/v1/products", "/api/v1/products/{product_id}", "/api/v1/coupons", "/api/v1/coupons/{code}",
    "/api/v1/disputes", "/api/v1/events", "/api/v1/subscriptions/{subscription_id}/cancel", "/api/v1/subscriptions/{subscription_id}/keep",
    "/api/v1/subscriptions/{subscription_id}/pause", "/api/v1/subscriptions/{subscription_id}/resume",
    "/api/v1/subscriptions/{subscription_id}/items",
    "/api/v1/subscriptions/{subscription_id}/items/{price_id}",
    "/api/v1/subscriptions/{subscription_id}/switch", "/api/v1/subscriptions/{subscription_id}/payment_day",
    "/api/v1/subscriptions/{subscription_id}/coupon", "/api/v1/customers/{customer_id}/receipts/{receipt_id}/refund",
}


def test_the_openapi_document_lists_every_path() -> None:
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    document = response.json()
    assert document["openapi"].startswith("3.")
    assert set(document["paths"]) >= EXPECTED_PATHS
    schemes = document["components"]["securitySchemes"]
    assert {s["scheme"] for s in schemes.values()} == {"bearer"}
    # every write documents its Idempotency-Key and its 409
    for path, operations in document["paths"].items():
        if "post" in operations:
            post = operations["post"]
            assert any(p["name"] == "Idempotency-Key" for p in post["parameters"]), path
            assert "409" in post["responses"], path


def test_the_docs_page_works_under_the_csp() -> None:
    client = Client()
    page = client.get("/api/v1/docs")
    assert page.status_code == 200
    assert_strict(page, "/api/v1/docs")
    assert_no_inline(page, "/api/v1/docs")
    html = page.content.decode()
    assert "//" not in "".join(re.findall(r'(?:src|href)="([^"]+)"', html))  # nothing from another origin
    # each script and style is a static file of this site (ninja's, collected with the rest)
    assets = re.findall(r'(?:src|href)="/static/([^"]+)"', html)
    assert "ninja/swagger-ui-bundle.js" in assets
    for asset in assets:
        assert finders.find(asset), asset


def test_the_upcoming_line_s_schema_names_every_field_a_line_has() -> None:
    # the endpoint answers each ChargeLine as a JSON object: the schema clients generate
    # their code from lists each field (a usage tier's unit amount, flat amount, package size)
    from billing.api.upcoming import UpcomingLineOut
    from billing.operations.charge_lines import ChargeLine

    assert set(UpcomingLineOut.model_fields) == set(ChargeLine._fields)
