"""The demo's invoices (``seed_demo``): a business in Italy selling to consumers across the
EU and to businesses, as the tax rules describe (billing/rules/tax.py):

* an Italian consumer: Italian VAT, 22%, included in the price (``domestic``);
* a German business with a valid VAT number: no VAT, reverse charged (``reverse_charge``);
* a French consumer: French VAT, 20%, through the One-Stop Shop (``oss``);
* a refund of the Italian consumer's latest invoice, and its credit note.

The figures are worked out by ``billing.rules.tax`` from each receipt's amount and date,
as the payment run works them out: none is typed here.
"""

from __future__ import annotations

from datetime import date, timedelta

from billing import access
from billing.actions.refunds import refund_receipt
from billing.models import Subscription
from billing.rules.tax import Buyer, Seller

# The demo business (a seller in Italy, registered for the OSS, prices including VAT).
DEMO_BUSINESS = Seller(country="IT", vat_number="IT00743110157", oss_registered=True, prices_include_tax=True)
DEMO_BUSINESS_NAME = "rpay Abbonamenti S.r.l."
DEMO_BUSINESS_ADDRESS = "Via Monte Napoleone 8\n20121 Milano MI"

# e-mail: (the card's billing address, name first; the customer's country and VAT number)
TAX_CUSTOMERS: dict[str, tuple[str, Buyer]] = {
    "giulia@example.it": ("Giulia Bianchi\nVia Giuseppe Verdi 3\n00184 Roma RM", Buyer("IT")),
    "buchhaltung@example.de": ("Beispiel Software GmbH\nFriedrichstraße 100\n10117 Berlin",
                               Buyer("DE", "DE136695976")),
    "camille@example.fr": ("Camille Martin\n12 rue de Rivoli\n75004 Paris", Buyer("FR")),
}
REFUNDED_CUSTOMER = "giulia@example.it"
STAFF_ACTOR = "staff@rpay.localhost"


def give_invoices(email: str, subs: dict[str, Subscription], today: date) -> None:
    """Every receipt of the account's subscriptions becomes an invoice (its tax figures
    for the customer's country); the Italian consumer's latest is then partly refunded,
    with its credit note."""
    address, buyer = TAX_CUSTOMERS[email]
    name = address.splitlines()[0]
    for sub in subs.values():
        receipts = [r for r in access.get_receipts_by_account(sub.account_id, today - timedelta(days=400), today)
                    if r.sub_id == sub.sub_id]
        for receipt in receipts:
            access.record_demo_tax_figures(receipt, seller=DEMO_BUSINESS, seller_name=DEMO_BUSINESS_NAME,
                                           seller_address=DEMO_BUSINESS_ADDRESS, buyer=buyer, buyer_name=name)
        if email == REFUNDED_CUSTOMER and receipts:
            refund_with_credit_note(receipts[0].account_id, receipts[0].SK)


def refund_with_credit_note(account_id: str, receipt_sk: str) -> None:
    """A staff refund of half an invoice, through the refund action; its credit note is
    the refund's own where the refund issues one, else issued here from the refund."""
    receipt = access.get_receipt(account_id, receipt_sk)
    if receipt is None or receipt.RefundedAmount or not receipt.ChargeId:
        return
    done = refund_receipt(receipt, int(receipt.ProcessedAmount) // 2, request_id="demo-credit-note",
                          actor=STAFF_ACTOR, reason="Service interrupted for two weeks")
    refund = next(r for r in done.receipt.Refunds or [] if r.RefundId == done.refund_id)
    access.issue_demo_credit_note(done.receipt, refund)
