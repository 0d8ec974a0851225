"""Every dispute (chargeback) of a subscription's charge, newest opened first: one Query
of the ``DISPUTES`` partition, each linked to its account's billing page and receipt."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.text import slugify
from django.utils.translation import gettext

from billing import access
from billing.staff.common import account_url
from core.staff import render_staff


def disputes(request: HttpRequest) -> HttpResponse:
    entries = access.list_disputes()
    return render_staff(request, "staff/disputes.html", gettext("Disputes"), {
        "rows": [{"entry": e, "url": f"{account_url(e.AccountId)}#{receipt_anchor(e.ReceiptSK)}"} for e in entries],
        "full": len(entries) >= access.DISPUTES_PAGE_SIZE,
        "page_size": access.DISPUTES_PAGE_SIZE,
    })


def receipt_anchor(receipt_sk: str) -> str:
    """The id of a receipt's row on the account page (its key holds '#', a URL fragment's end)."""
    return "receipt-" + slugify(receipt_sk)
