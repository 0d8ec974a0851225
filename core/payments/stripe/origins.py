"""The origins the Content-Security-Policy must allow for Stripe.js (settings.py): read by
the settings module, so this imports nothing of Django's or Stripe's."""

from __future__ import annotations

from urllib.parse import urlsplit

# Stripe.js loads from js.stripe.com, calls api.stripe.com and frames its card fields and
# 3-D Secure pages from js.stripe.com and hooks.stripe.com (Stripe's CSP guide).
_STRIPE_API = "https://api.stripe.com"
_STRIPE_FRAMES = ("https://js.stripe.com", "https://hooks.stripe.com")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


def stripe_origins(gateway: str, js_url: str, api_base: str) -> dict[str, list[str]]:
    """{"script", "connect", "frame"}: empty lists unless the gateway is Stripe."""
    if gateway not in ("stripe", "core.payments.stripe.StripeGateway"):
        return {"script": [], "connect": [], "frame": []}
    script = _origin(js_url)
    api = _origin(api_base) or _STRIPE_API
    if script == "https://js.stripe.com":
        return {"script": [script], "connect": [api], "frame": list(_STRIPE_FRAMES)}
    # localstripe: its fake Stripe.js draws plain inputs in the page and calls its own API.
    return {"script": [script], "connect": sorted({script, api}), "frame": []}
