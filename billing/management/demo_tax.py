"""The demo's invoices (``seed_demo``): a business in Italy selling cloud storage to
consumers across the EU and to businesses, as the tax rules describe (billing/rules/tax.py):

* an Italian consumer: Italian VAT, 22%, included in the price (``domestic``);
* a German business with a valid VAT number: no VAT, reverse charged (``reverse_charge``);
* a French consumer: French VAT, 20%, through the One-Stop Shop (``oss``);
* a staff refund of the Italian consumer's latest invoice, which issues its credit note.

Each customer declares a billing country (and the business its VAT number) as the
account page would; each charge carries its tax in its metadata and each receipt is
written with it, as the payment run does (``access.invoice_tax``: the figures from
``billing.rules.tax``, none typed here), so the quarter's tax totals hold them too.
"""

from __future__ import annotations

from datetime import date

from billing import access
from billing.actions.tax_identity import VatVerdict, change_tax_identity
from billing.models import Account, Subscription
from billing.operations.refunds import refund_receipt
from billing.rules.invoice_tax import tax_metadata
from billing.rules.tax import Buyer, Seller

# The demo business: a seller in Italy, registered for the OSS, prices including VAT.
# Its invoices carry it (their seller snapshot) whatever the business profile says.
DEMO_BUSINESS = access.InvoiceSeller(
    Seller(country="IT", vat_number="IT00743110157", oss_registered=True, prices_include_tax=True),
    "rpay Abbonamenti S.r.l.", "Via Monte Napoleone 8\n20121 Milano MI")

# e-mail: (the card's billing address, name first; the customer's country and VAT number)
TAX_CUSTOMERS: dict[str, tuple[str, Buyer]] = {
    "giulia@example.it": ("Giulia Bianchi\nVia Giuseppe Verdi 3\n00184 Roma RM", Buyer("IT")),
    "buchhaltung@example.de": ("Beispiel Software GmbH\nFriedrichstraße 100\n10117 Berlin",
                               Buyer("DE", "DE136695976")),
    "camille@example.fr": ("Camille Martin\n12 rue de Rivoli\n75004 Paris", Buyer("FR")),
}
REFUNDED_CUSTOMER = "giulia@example.it"
SEED_ACTOR = "seed_demo"
STAFF_ACTOR = "staff@rpay.localhost"


def declare_tax_identity(account: Account) -> None:
    """The customer's billing country and VAT number, before its subscriptions are made
    (each copies them, so its charges are taxed without a read)."""
    _, buyer = TAX_CUSTOMERS[account.Email]
    verdict = VatVerdict(buyer.vat_number) if buyer.vat_number else None
    change_tax_identity(account, buyer.country, verdict, actor=SEED_ACTOR, subscriptions=[])


def demo_invoice_tax(sub: Subscription, amount: int, billed: date) -> tuple[access.InvoiceTax, dict[str, str]]:
    """A demo charge's tax, and the metadata its charge carries (as the payment run's)."""
    tax = access.invoice_tax(sub, amount=amount, on=billed, seller=DEMO_BUSINESS)
    return tax, tax_metadata(tax.line, prices_include_tax=tax.prices_include_tax)


def refund_with_credit_note(subs: dict[str, Subscription], today: date) -> None:
    """A staff refund of half the latest invoice, through the refund action (whose write
    issues the credit note, and whose e-mails send it)."""
    for sub in subs.values():
        receipts = [r for r in access.get_receipts_by_account(sub.account_id, date(today.year - 1, 1, 1), today)
                    if r.sub_id == sub.sub_id and r.ChargeId and not r.RefundedAmount]
        if receipts:
            refund_receipt(receipts[0], int(receipts[0].ProcessedAmount) // 2, request_id="demo-credit-note",
                           actor=STAFF_ACTOR, reason="Service interrupted for two weeks")
            return
