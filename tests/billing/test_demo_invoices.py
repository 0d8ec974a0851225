"""The demo data shows invoices (``seed_demo``, billing/management/demo_tax.py): an Italian
consumer at 22% included, a German business reverse charged, a French consumer at 20%
through the OSS, and a refund with its credit note; every figure from the tax rules."""

from __future__ import annotations

from datetime import date
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.test import Client

from billing import access
from billing.management.commands.seed_demo import CUSTOMER_PASSWORD
from billing.rules.tax import REVERSE_CHARGE_NOTE, quarter_of

pytestmark = pytest.mark.django_db

EVER = (date(2000, 1, 1), date(2100, 1, 1))


def account_of(email: str) -> str:
    user = get_user_model().objects.get(username=email)
    account_id = access.get_account_id_for_user(user.pk)
    assert account_id
    return account_id


def test_the_demo_has_an_italian_a_german_business_and_a_french_invoice_and_a_credit_note(client, moto_table) -> None:
    call_command("seed_demo", stdout=StringIO())
    expected = {"giulia@example.it": ("22", "IT", "domestic"), "buchhaltung@example.de": ("0", "DE", "reverse_charge"),
                "camille@example.fr": ("20", "FR", "oss")}
    for email, (rate, country, treatment) in expected.items():
        receipts = access.get_receipts_by_account(account_of(email), *EVER)
        assert receipts, email
        for receipt in receipts:
            assert (receipt.TaxRate, receipt.TaxCountry, receipt.TaxTreatment) == (rate, country, treatment), email
            assert receipt.Net + receipt.Tax == receipt.ProcessedAmount and receipt.Seller.Country == "IT"
    german = access.get_receipts_by_account(account_of("buchhaltung@example.de"), *EVER)[0]  # the newest
    assert german.BuyerVatNumber == "DE136695976" and german.Tax == 0

    giulia = account_of("giulia@example.it")
    [note] = access.get_credit_notes_by_account(giulia)
    refunded = [r for r in access.get_receipts_by_account(giulia, *EVER) if r.RefundedAmount]
    assert len(refunded) == 1 and note.InvoiceNumber == refunded[0].Number
    assert note.Gross == -refunded[0].RefundedAmount and note.Net + note.Tax == note.Gross and note.Tax < 0

    # the refund's e-mail carries its credit note
    assert any(note.Number in m.body and m.to == ["giulia@example.it"] for m in mail.outbox)
    # the account declares its country and VAT number; the quarter's totals hold the invoices
    business = access.get_account(account_of("buchhaltung@example.de"))
    assert (business.BillingCountry, business.VatNumber) == ("DE", "DE136695976")
    # (the demo's Italian business keys its totals: SELLER#IT00743110157#<country>#<rate>...)
    keys = {"#".join(total.SK.removeprefix("SELLER#IT00743110157#").split("#")[:2]) for total in access.tax_totals(
        quarter_of(date.fromisoformat(german.BillingDate)))}
    assert {"IT#22", "FR#20", "DE#0", "RC#DE136695976"} <= keys

    client.post("/login/", {"username": "giulia@example.it", "password": CUSTOMER_PASSWORD})
    invoice = client.get(f"/receipts/{refunded[0].Number}/").content.decode()
    assert "Invoice" in invoice and "IT00743110157" in invoice and "22%" in invoice and note.Number in invoice
    assert client.get(f"/credit-notes/{note.Number}/").status_code == 200
    business = Client()
    business.post("/login/", {"username": "buchhaltung@example.de", "password": CUSTOMER_PASSWORD})
    assert REVERSE_CHARGE_NOTE in business.get(f"/receipts/{german.Number}/").content.decode()
