"""The EU's VIES service (VAT Information Exchange System): is this VAT number registered?

The one network call of the VAT number checks, kept in one small function so that the
tests replace exactly this and nothing else. It is asked only when ``VAT_VIES_CHECK`` is
on (default off): VIES is an online service with outages and rate limits, and a number
that passes the offline checks (format and check digit) is usable without it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10


class ViesUnreachable(Exception):
    """VIES did not answer (down, slow, the member state's own register down, no SOAP
    library installed): the number stays as the offline checks left it."""


@dataclass(frozen=True)
class ViesAnswer:
    valid: bool
    checked_on: date
    name: str | None = None


def ask_vies(number: str) -> ViesAnswer:
    """VIES's answer for ``number`` (compact, with its country prefix)."""
    from stdnum.eu import vat

    try:
        answer = vat.check_vies(number, timeout=TIMEOUT_SECONDS)
        request_date = answer["requestDate"]
        checked_on = request_date if isinstance(request_date, date) else date.today()
        return ViesAnswer(valid=bool(answer["valid"]), checked_on=checked_on, name=_field(answer, "name"))
    except Exception as error:  # any failure of the network, the service or the SOAP client
        log.warning("VIES could not be reached for %s: %s", number[:2], error)
        raise ViesUnreachable(str(error)) from error


def _field(answer: object, name: str) -> str | None:
    """A field of VIES's answer (a SOAP object that reads like a dict), or None."""
    try:
        value = answer[name]  # type: ignore[index]
    except (KeyError, TypeError, AttributeError):
        return None
    return str(value) if value not in (None, "", "---") else None
