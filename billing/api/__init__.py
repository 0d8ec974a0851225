"""The merchant's REST API, ``/api/v1/`` (docs/API.md): keys, reads, writes through the
actions, idempotency, cursor paging and JSON errors. ``api_urls()`` is what the site mounts."""

from billing.api.site import api, api_urls

__all__ = ["api", "api_urls"]
