"""Django set up for a benchmark process (``make bench``: scripts/bench.py, the sections
it runs and scripts/profile_payments.py) against a local engine: its own table, ledger
and quiet logs."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def bench_engine(prefix: str = "rpay-bench-") -> Iterator[tuple[str, Path]]:
    """A DynamoDB Local of the benchmark's own, in memory, and Django set up on it:
    ``(endpoint, folder)``, the folder (new, named ``prefix``…) holding the engine's log
    and the gateway's ledger. In memory because seeding 100,000 items into the engine's
    on-disk SQLite file takes twice as long, and the disk would add its own noise to the
    figures. The engine is stopped at the end, after a kill (SIGTERM) or Ctrl-C too."""
    from devtools.localengine import free_port, start_local_engine

    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    server = start_local_engine(free_port(), None, log_file=tmp / "dynamodb.log")
    # kill runs the finally below as Ctrl-C does, which stops the engine.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    try:
        setup_django(server.endpoint, tmp)
        yield server.endpoint, tmp
    finally:
        server.stop()
