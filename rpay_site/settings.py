"""rpay settings: every value comes from an environment variable (DESIGN.md §4).

The defaults are safe for development on one machine: DEBUG on, SQLite for Django's
own tables, the local dynalite engine on port 8123, mail printed to the console.
Production sets DJANGO_DEBUG=0, DJANGO_SECRET_KEY, DJANGO_ALLOWED_HOSTS, DATABASE_URL,
and leaves DYNAMODB_ENDPOINT empty to reach AWS DynamoDB.
"""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default


def env_int_list(name: str, default: list[int]) -> list[int]:
    value = os.environ.get(name, "")
    if not value.strip():
        return default
    return [int(part) for part in value.split(",") if part.strip()]


DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or (
    "dev-only-insecure-key-change-me" if DEBUG else ""
)
if not SECRET_KEY:
    raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off")
ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")
    if h.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "crispy_forms",
    "crispy_bootstrap5",
    "billing",
    "shop",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "billing.middleware.DynamoDBUnavailableMiddleware",
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
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "rpay_site.wsgi.application"

# Django's own database holds only users, sessions and the admin log; billing data
# lives in DynamoDB.
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'var' / 'django.sqlite3'}",
        conn_max_age=60,
    )
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
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
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend"
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
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
# The online shop's own table, on the same engine (SHOP-DESIGN.md).
SHOP_DYNAMODB_TABLE = os.environ.get("SHOP_DYNAMODB_TABLE", "OnlineShop")
# Enough pooled HTTP connections for the batch workers (--workers up to 32).
DYNAMODB_MAX_POOL_CONNECTIONS = env_int("DYNAMODB_MAX_POOL_CONNECTIONS", 64)
DYNAMODB_MAX_RETRY_ATTEMPTS = env_int("DYNAMODB_MAX_RETRY_ATTEMPTS", 5)
DYNAMODB_CONNECT_TIMEOUT = env_int("DYNAMODB_CONNECT_TIMEOUT", 3)
DYNAMODB_READ_TIMEOUT = env_int("DYNAMODB_READ_TIMEOUT", 10)

# --- Billing rules ---------------------------------------------------------------
BILLING_TIMEZONE = os.environ.get("BILLING_TIMEZONE", "UTC")
REMINDER_DAYS_BEFORE = env_int("REMINDER_DAYS_BEFORE", 7)
# 200 days keeps six full calendar months plus the current one visible.
RECEIPT_RETENTION_DAYS = env_int("RECEIPT_RETENTION_DAYS", 200)
PAYMENT_RETRY_DAYS = env_int_list("PAYMENT_RETRY_DAYS", [1, 3, 5])
PAYMENT_GATEWAY = os.environ.get("PAYMENT_GATEWAY", "billing.gateway.SimulatedGateway")
# The simulated gateway keeps its idempotency ledger here (it stands in for the
# payment provider's own records, so it does not live in our table).
PAYMENT_GATEWAY_LEDGER = os.environ.get(
    "PAYMENT_GATEWAY_LEDGER", str(BASE_DIR / "var" / "gateway-ledger.sqlite3")
)
PAYMENT_GATEWAY_LATENCY_MS = env_int("PAYMENT_GATEWAY_LATENCY_MS", 0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "billing": {"handlers": ["console"], "level": os.environ.get("BILLING_LOG_LEVEL", "INFO")},
    },
}
