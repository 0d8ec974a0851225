"""The API's docs page in a real Chromium: Swagger UI draws the operations from
/api/v1/openapi.json and the Content-Security-Policy blocks nothing."""

from __future__ import annotations

import pytest


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_docs_page_draws_the_api_with_no_policy_violation(page) -> None:
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)
    page.goto("/api/v1/docs")
    page.wait_for_selector(".opblock-summary-path", timeout=20_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/api/v1/subscriptions/{subscription_id}/cancel" in p.replace("\u200b", "") for p in paths), paths
    assert violations == []
