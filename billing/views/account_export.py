"""The "Download my data" file (docs/PORTAL.md, "Your data"): one ZIP, written while it is sent.

``data.json`` holds every item of the account's partition (one paginated Query, never a
Scan; cards without their processor token) and what other apps registered hold
(``billing.account_data.AccountData``: the shop's customer and orders); ``receipts/`` each
receipt's PDF (the portal's own renderer), ``credit-notes/`` each refund's credit note's;
``README.txt`` says, in the customer's
language, what each file is. ``zipfile`` writes into a sink the generator empties after
every piece, so a large account is never held in memory: one page of items, one PDF.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from billing import access
from billing.access import usage as metered
from billing.account_data import account_data_sources
from billing.views.receipt_pdf import render_credit_note_pdf, render_receipt_pdf


class _Sink:
    """A write-only file that keeps what was written until taken (no ``tell``/``seek``:
    zipfile then writes each member's sizes after its data, as streaming needs)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


def readme(account_id: str, exported_at: str) -> str:
    lines = [
        _("Your data at rpay"),
        "",
        _("Account %(account)s, copied on %(date)s (UTC).") % {"account": account_id, "date": exported_at},
        "",
        _("data.json: everything rpay holds about your account, as JSON. \"items\" lists each record "
          "of your account by its kind (\"EntityType\"): Account (your profile), Subscription (each "
          "subscription and its schedule), Card (your cards: brand, last four digits and expiry only), "
          "Receipt (each payment, with its refunds), TrialUse (free trials you had), Event (the history "
          "of every change to your account: subscriptions, payments, cards, coupons). \"shop\" lists your "
          "shop customer record and your orders."),
        "",
        _("\"usage\" in data.json: your metered usage, each meter's figure day by day."),
        "",
        _("receipts/: each receipt as a PDF, named by its number."),
        "",
        _("credit-notes/: each credit note (what a refund corrected on its invoice) as a PDF, named by its "
          "number."),
        "",
        _("README.txt: this file."),
    ]
    return "\n".join(lines) + "\n"


def _receipt_name(receipt: object) -> str:
    number = getattr(receipt, "Number", None)
    if number:
        return f"receipts/{number}.pdf"
    return "receipts/" + "".join(c if c.isalnum() or c in "-_" else "_" for c in receipt.SK) + ".pdf"


def _usage(account_id: str) -> list[dict]:
    """Each meter the customer has used, its figure day by day (each day's own aggregation,
    as the usage page shows it; a decimal string, as the API's usage), outside the
    account's partition: its own items."""
    return [{"meter": meter.EventName, "name": meter.Name, "aggregation": meter.Aggregation,
             "days": {day.isoformat(): str(value) for day, value in days.items()}}
            for meter, days in metered.account_usage(account_id)]


def export_zip(account_id: str, *, language: str | None) -> Iterator[bytes]:
    """The ZIP's bytes, piece by piece (a ``StreamingHttpResponse``'s content)."""
    sink = _Sink()
    exported_at = datetime.now(UTC).replace(microsecond=0).isoformat()
    with zipfile.ZipFile(sink, mode="w", compression=zipfile.ZIP_DEFLATED) as archive:  # type: ignore[arg-type]
        with archive.open("data.json", mode="w") as member:
            head = {"format": "rpay-account-data/1", "account_id": account_id, "exported_at": exported_at}
            member.write(json.dumps(head, ensure_ascii=False)[:-1].encode() + b', "items": [')
            for n, item in enumerate(access.account_items(account_id)):
                member.write((", " if n else "\n") .encode() + json.dumps(
                    access.item_data(item), ensure_ascii=False, sort_keys=True).encode())
                yield sink.take()
            member.write(b"\n]")
            member.write(b', "usage": ' + json.dumps(_usage(account_id), ensure_ascii=False).encode())
            yield sink.take()
            for source in account_data_sources():
                member.write(f", {json.dumps(source.name)}: ".encode()
                             + json.dumps(source.export(account_id), ensure_ascii=False, default=str).encode())
                yield sink.take()
            member.write(b"}\n")
        yield sink.take()
        with translation.override(language or settings.LANGUAGE_CODE):
            for receipt in access.account_receipts(account_id):
                archive.writestr(_receipt_name(receipt), render_receipt_pdf(receipt, settings.RPAY_SELLER))
                yield sink.take()
            for note in access.get_credit_notes_by_account(account_id):  # the refunds' credit notes
                archive.writestr(f"credit-notes/{note.Number}.pdf", render_credit_note_pdf(note))
                yield sink.take()
            archive.writestr("README.txt", readme(account_id, exported_at))
    yield sink.take()


def export_filename(account_id: str) -> str:
    return f"rpay-data-{account_id}-{datetime.now(UTC):%Y%m%d}.zip"
