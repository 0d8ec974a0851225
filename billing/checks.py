"""Django system checks for the billing settings (``manage.py check``; run before
``runserver``, ``migrate`` and every management command).

The environment parser (rpay_site/env.py) refuses values that do not parse; these
checks refuse values that parse but would break the billing rules.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.utils.module_loading import import_string

from core.payments.gateway import gateway_path

# The portal shows receipts from the same day six calendar months ago: at most 184
# days back (e.g. 31 December back to 30 June: July-December is 31+31+30+31+30+31).
SIX_MONTHS_DAYS = 184
GATEWAY_METHODS = ("tokenize_card", "charge", "refund")


@register("billing")
def check_receipt_retention(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    days = settings.RECEIPT_RETENTION_DAYS
    if days < SIX_MONTHS_DAYS:
        return [Error(
            f"RECEIPT_RETENTION_DAYS is {days}: receipts would expire before the six months "
            "the portal shows.",
            hint=f"Set it to at least {SIX_MONTHS_DAYS} (the default is 200).",
            id="billing.E001",
        )]
    return []


@register("billing")
def check_billing_timezone(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    name = settings.BILLING_TIMEZONE
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return [Error(
            f"BILLING_TIMEZONE {name!r} is not a known time zone.",
            hint="Use an IANA name such as UTC or Europe/Berlin.",
            id="billing.E002",
        )]
    return []


@register("billing")
def check_retry_days(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    days = list(settings.PAYMENT_RETRY_DAYS)
    if any(day <= 0 for day in days):
        return [Error(
            f"PAYMENT_RETRY_DAYS {days} holds a day that is not after the billing date.",
            hint="List whole days after a declined payment, each at least 1, e.g. 1,3,5.",
            id="billing.E003",
        )]
    return []


@register("billing")
def check_payment_gateway(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    path = gateway_path(settings.PAYMENT_GATEWAY)
    try:
        gateway = import_string(path)
    except ImportError as error:
        return [Error(
            f"PAYMENT_GATEWAY {path!r} cannot be imported: {error}",
            hint="Use simulated or stripe, or the dotted path of a gateway class.",
            id="billing.E004",
        )]
    missing = [name for name in GATEWAY_METHODS if not callable(getattr(gateway, name, None))]
    if missing:
        return [Error(
            f"PAYMENT_GATEWAY {path!r} lacks {', '.join(missing)}.",
            hint="A gateway implements core.payments.gateway.PaymentGateway.",
            id="billing.E004",
        )]
    return []


@register("billing")
def check_stripe_keys(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """With PAYMENT_GATEWAY=stripe: both keys set, of one mode; a live key never with DEBUG."""
    if gateway_path(settings.PAYMENT_GATEWAY) != gateway_path("stripe"):
        return []
    secret, publishable = settings.STRIPE_SECRET_KEY, settings.STRIPE_PUBLISHABLE_KEY
    missing = [name for name, value in (("STRIPE_SECRET_KEY", secret), ("STRIPE_PUBLISHABLE_KEY", publishable))
               if not value]
    if missing:
        return [Error(
            f"PAYMENT_GATEWAY is stripe but {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set.",
            hint="Copy the keys from the Stripe dashboard (Developers > API keys); "
                 "docs/STRIPE.md \"Going live\".",
            id="billing.E006",
        )]
    problems: list[CheckMessage] = []
    if secret.startswith(("sk_live_", "rk_live_")) != publishable.startswith("pk_live_"):
        problems.append(Error(
            "STRIPE_SECRET_KEY and STRIPE_PUBLISHABLE_KEY are of different modes (one live, one test).",
            hint="Take both keys from the same mode of the Stripe dashboard.",
            id="billing.E007",
        ))
    if not settings.STRIPE_WEBHOOK_SECRET:
        problems.append(Warning(
            "STRIPE_WEBHOOK_SECRET is not set: /webhooks/stripe/ refuses every delivery, so refunds made in "
            "Stripe's dashboard reach rpay only through the payment run's reconciliation.",
            hint="Add the endpoint in the Stripe dashboard (Developers > Webhooks) and copy its signing secret.",
            id="billing.W002",
        ))
    if secret.startswith(("sk_live_", "rk_live_")) and settings.DEBUG:
        problems.append(Warning(
            "A live Stripe key is set while DEBUG is on: real cards would be charged by a development site.",
            hint="Set DJANGO_DEBUG=false in production, or use a test key (sk_test_...) here.",
            id="billing.W001",
        ))
    return problems


@register("billing")
def check_site_url(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    url = settings.SITE_URL
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        return [Error(
            f"SITE_URL {url!r} is not an absolute http(s) URL: links in e-mails would not work.",
            hint="Include the scheme and host, e.g. https://billing.example.com",
            id="billing.E005",
        )]
    return []


@register("billing")
def check_revenue_reporting_currency(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The revenue page converts at the ECB's rates (core/ecb_rates.py): its reporting
    currency must be one they have, and the rates file must read."""
    from core.ecb_rates import BadRatesFile, header_currencies, rates_file

    code = settings.REVENUE_REPORTING_CURRENCY
    try:
        known = header_currencies()
    except (BadRatesFile, OSError) as error:
        return [Error(f"The ECB rates file {rates_file()} cannot be read: {error}.",
                      hint="Load it again with manage.py load_ecb_rates, or remove it to use the bundled rates.",
                      id="billing.E008")]
    if code not in known:
        return [Error(f"REVENUE_REPORTING_CURRENCY {code!r} is not a currency of the ECB's reference rates.",
                      hint="Use EUR or a code the ECB publishes (USD, GBP, JPY, CHF...).", id="billing.E008")]
    return []


@register("billing")
def check_revenue_rebuild_parts(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A split rebuild's part is the customers of some of the kept figures' 16 shards: the
    number of parts must divide 16, or a shard would be split between two parts."""
    from billing.analytics.rollups import SHARDS

    parts = settings.REVENUE_REBUILD_PARTS
    if SHARDS % parts:
        allowed = ", ".join(str(n) for n in range(1, SHARDS + 1) if SHARDS % n == 0)
        return [Error(f"REVENUE_REBUILD_PARTS is {parts}: the revenue rebuild can be split into {allowed} parts.",
                      hint="Each part keeps whole shards of the 16 the daily figures are cut into.",
                      id="billing.E009")]
    return []
