"""Django set up for a benchmark process (``make bench``: scripts/bench.py and
scripts/bench_shop.py) against a local engine: its own table, ledger and quiet logs."""

from __future__ import annotations

import os
from pathlib import Path


def setup_django(endpoint: str, tmp: Path) -> None:
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "rpay_site.settings",
        "DYNAMODB_ENDPOINT": endpoint,
        "DYNAMODB_TABLE": "bench_20000",
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        "PAYMENT_GATEWAY_LEDGER": str(tmp / "ledger.sqlite3"),
        "BILLING_LOG_LEVEL": "ERROR",
        "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "local"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "local"),
    })
    import django

    django.setup()
