"""``python manage.py load_ecb_rates <file>``: put a newer ECB reference-rates history
(``eurofxref-hist.csv`` or the ECB's ``eurofxref-hist.zip``) where every conversion reads
it (``ECB_RATES_FILE``, core/ecb_rates.py): the OSS return in euro and the revenue page's
reporting currency. Checked before anything changes; safe to run again. A file that is not
one: one line, exit 1, the rates in use untouched."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.ecb_rates import BadRatesFile, load


class Command(BaseCommand):
    # The command that repairs a rates file the system checks refuse (billing.E008) must
    # run without them.
    requires_system_checks: list[str] = []
    help = ("Load the ECB's euro reference rates history (eurofxref-hist.csv or .zip, from "
            "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip) into ECB_RATES_FILE, "
            "read by the OSS return in euro and the revenue page.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file", help="eurofxref-hist.csv or eurofxref-hist.zip")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            loaded = load(options["file"])
        except OSError as error:
            raise CommandError(f"{options['file']}: cannot be read ({error.strerror or error})") from None
        except BadRatesFile as error:
            raise CommandError(f"{options['file']}: not an ECB rates file: {error}; nothing changed") from None
        self.stdout.write(f"Loaded {loaded.days} days of ECB rates, {loaded.first} to {loaded.last}, "
                          f"{loaded.currencies} currencies, into {loaded.path}")
