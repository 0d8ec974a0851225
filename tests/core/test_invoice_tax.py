"""The invoice tax attributes declared once (core/dynamo/invoice_tax.py) are stored by each
model that lists them as a base exactly as a declaration of its own was: same names, same
types, items written before read back unchanged, the table and keys untouched."""

from __future__ import annotations

import pytest
from pynamodb.attributes import UnicodeAttribute

from billing.models import BillingItem, CreditNote, Receipt
from core.dynamo.invoice_tax import InvoiceTaxAttributes
from shop.models import Invoice, ShopItem

SHARED = ("TaxRate", "TaxTreatment", "BuyerCountry", "BuyerVatNumber")


@pytest.mark.parametrize("model", [Receipt, CreditNote, Invoice])
def test_each_invoice_model_stores_the_shared_attributes_under_their_names(model):
    assert issubclass(model, InvoiceTaxAttributes)
    for name in SHARED:
        attribute = model._attributes[name]
        assert isinstance(attribute, UnicodeAttribute)
        assert attribute.attr_name == name
        assert attribute.null is True
        assert model._dynamo_to_python_attrs.get(name, name) == name


@pytest.mark.parametrize(("model", "base"), [(Receipt, BillingItem), (CreditNote, BillingItem), (Invoice, ShopItem)])
def test_the_models_keep_their_table_and_keys(model, base):
    assert model.Meta is base.Meta
    assert (model._hash_keyname, model._range_keyname) == ("PK", "SK")
    assert set(model._indexes) == set(base._indexes)


def test_a_receipt_serializes_and_reads_back_the_shared_attributes():
    receipt = Receipt(PK="ACC#a1", SK="REC#2026-03-01#SKU#S#SUB#s1", TaxRate="22", TaxTreatment="standard",
                      BuyerCountry="IT", BuyerVatNumber="IT00743110157")
    raw = receipt.serialize(null_check=False)
    assert {name: raw[name] for name in SHARED} == {
        "TaxRate": {"S": "22"}, "TaxTreatment": {"S": "standard"},
        "BuyerCountry": {"S": "IT"}, "BuyerVatNumber": {"S": "IT00743110157"},
    }
    back = Receipt.from_raw_data(raw)
    assert (back.TaxRate, back.TaxTreatment, back.BuyerCountry, back.BuyerVatNumber) == (
        "22", "standard", "IT", "IT00743110157")


def test_one_models_values_are_not_anothers():
    # The attribute objects are shared between the models; the values live on each item.
    invoice = Invoice(PK="o#1", SK="i#1", TaxRate="19")
    note = CreditNote(PK="ACC#a1", SK="CRN#x", TaxRate="22")
    assert (invoice.TaxRate, note.TaxRate) == ("19", "22")
    assert Invoice(PK="o#2", SK="i#2").TaxRate is None
