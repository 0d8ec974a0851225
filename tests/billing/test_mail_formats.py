"""Every e-mail writes money and dates as the pages do, in every language: each template
of templates/billing/email/ (billing's and the shop's, text and HTML) is sent through
``send_customer_email`` in English, Italian, Korean and Chinese, with its amounts made as
the senders make them (``core.mail.money_text``) and its dates as the senders hand them
(dates, or ``date_text``), and each amount must read as ``format_with_symbol`` (the
pages' ``|money_symbol``) and each date as the pages' ``|local_date:"j F Y"``; never the
currency code's format ("1.234,56 EUR", "1,234.56 EUR") nor another date format."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core import mail
from django.utils import translation

from billing.models import CreditNote, SellerMap, TaxLineMap
from billing.rules.invoice import credit_note_of
from core.localformat import LocalDate, local_date
from core.mail import date_text, money_text, send_customer_email
from core.money import format_with_code, format_with_symbol

pytestmark = pytest.mark.django_db(databases=[])

LANGUAGES = ("en", "it", "ko", "zh-hans")
CURRENCIES = ("EUR", "JPY", "KWD", "USD")  # 2, 0 and 3 decimals; a symbol, a code

# What the senders put in an e-mail's context as money (billing/operations/payments.py,
# refunds.py, notify.py, batches/reminders.py, actions/*, shop/views/emails.py).
AMOUNTS = ("amount", "next_amount", "charged", "refunded", "next_discount", "gift_card", "discount",
           "first_charge", "total", "unit_price", "credited", "credit", "charge", "price", "subtotal",
           "refunded_total", "net", "vat")
# ... and as days: date objects the templates format with |local_date.
DATES = ("billing_date", "trial_end", "paid_through", "next_payment", "period_start", "period_end", "next_date",
         "resume", "ended_on", "effective", "payment_date", "paused_from", "retry_on")
NUMBERS = {"receipts_kept": 2, "coupon_payments": 3, "retention_years": 10, "days": 5, "payment_day": 15,
           "old_day": 10, "quantity": 3}
DOCUMENT_GROSS, DOCUMENT_ISSUED = -4880, date(2027, 2, 21)


def document(currency: str):
    """A credit note's document (the invoice's shape: billing/rules/invoice.py), in ``currency``."""
    return credit_note_of(CreditNote(
        Number="CN-2027-S01-000001", InvoiceNumber="R-2027-S01-000001", IssuedAt="2027-02-21T10:00:00+00:00",
        Currency=currency, Net=-4000, Tax=-880, Gross=DOCUMENT_GROSS, TaxRate="22", TaxCountry="IT",
        TaxTreatment="domestic", Reason="goodwill", BuyerCountry="IT",
        TaxLines=[TaxLineMap(Description="Daily News", PeriodStart="2027-02-01", PeriodEnd="2027-02-28", Net=-4000,
                             TaxRate="22", Tax=-880, Gross=DOCUMENT_GROSS)],
        Seller=SellerMap(Name="Rpay S.r.l.", Address="Via Roma 1", Country="IT", VatNumber="IT00743110157")))


def templates() -> list[str]:
    folder = Path(settings.BASE_DIR, "templates/billing/email")
    # password_reset is Django's own form's (no amount, no date); partials are included.
    return sorted(p.stem for p in folder.glob("*.txt") if not p.stem.startswith(("_", "password_reset")))


def source(template: str) -> str:
    folder = Path(settings.BASE_DIR, "templates/billing/email")
    return "".join((folder / f"{template}.{ext}").read_text() for ext in ("txt", "html"))


def context(template: str, currency: str, *, truthy: bool,
            dated: bool = True) -> tuple[dict[str, Any], dict[str, int], dict[str, date]]:
    """Every name the e-mails use: amounts distinct per name, days distinct per name (or
    none, not ``dated``); the other names all set (``truthy``) or all empty, so both sides
    of each ``if`` are seen."""
    amounts = {name: 123456 + 1000 * i for i, name in enumerate(AMOUNTS)}
    if template.startswith("shop_"):
        amounts["card"] = 99000  # the shop's "paid by card" is an amount
    days = {name: date(2027, 1, 3 + i) for i, name in enumerate(DATES)}
    kept_day = date(2027, 2, 20)
    values: dict[str, Any] = {name: money_text(amount, currency) for name, amount in amounts.items()}
    values |= days if dated else dict.fromkeys(days)
    values |= {name: (number if truthy else 0) for name, number in NUMBERS.items()}
    if not truthy:
        values["coupon_payments"] = None
    flags = ("reminder", "coupon", "past_due", "free_trial", "nothing_charged", "upgrade", "refund_pending",
             "can_keep", "default", "seller", "seller_vat", "vat_rate", "tracking_number", "carrier", "what",
             "receipt_number", "charge_id", "old_card", "old_product", "card_last", "card_expires", "per_period")
    values |= {name: (f"<{name}>" if truthy else "") for name in flags if name not in values}
    values |= {"product": "Daily News", "card": values.get("card", "Visa ending in 4242"), "email": "pat@example.com",
               "order_id": "o-1", "doc": document(currency), "receipt_path": "/receipts/R-1/", "credit_note_path": "/cn/",
               "manage_url": "http://x/manage/", "change_card_url": "http://x/card/", "confirm_url": "http://x/c/",
               "login_url": "http://x/login/", "order_path": "/o/", "name": "Pat",
               "subscriptions": ["Daily News"] if truthy else [], "invoice": None,
               "kept_until": date_text(kept_day)}
    values["kept"] = [{"number": "R-1", "date": date_text(kept_day), "amount": money_text(555000, currency)}]
    values["kept_notes"] = [{"number": "CN-1", "date": date_text(kept_day), "amount": money_text(-5000, currency)}]
    values["lines"] = [{"name": "Album", "quantity": 2, "total": money_text(777000, currency)}]
    amounts |= {"kept": 555000, "kept_notes": -5000, "lines": 777000, "_document": DOCUMENT_GROSS}
    return values, amounts, days | {"kept_until": kept_day, "_document": DOCUMENT_ISSUED}


def shown(name: str, text: str) -> bool:
    """Whether ``text`` (a template's source) prints ``name``: ``{{ name }}``, ``x=name``, or
    a loop over it."""
    if name == "_document":  # the invoice's or credit note's shape, included
        return "billing/email/_document" in text
    word = re.escape(name)
    return bool(re.search(r"\{\{\s*" + word + r"\s*[|}]|=" + word + r"\b|for \w+ in " + word + r"\b", text))


def sent(template: str, language: str, currency: str, truthy: bool, dated: bool) -> tuple[str, list[str]]:
    values, amounts, days = context(template, currency, truthy=truthy, dated=dated)
    mail.outbox = []
    assert send_customer_email(template, "pat@example.com", "subject", values, language=language) == ""
    [message] = mail.outbox
    return message.body, [message.body, message.alternatives[0][0]]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("template", templates())
def test_every_e_mail_writes_amounts_and_dates_as_the_pages_do(template: str, language: str) -> None:
    text = source(template)
    for currency in CURRENCIES:
        parts = [part for truthy, dated in ((True, True), (False, True), (False, False))
                 for part in sent(template, language, currency, truthy, dated)[1]]
        values, amounts, days = context(template, currency, truthy=True)
        with translation.override(language):
            for name, amount in amounts.items():
                if not shown(name, text):
                    continue
                page, code = format_with_symbol(amount, currency), format_with_code(amount, currency)
                # As the pages write it (HTML may escape nothing here: no & < > in amounts).
                assert any(page in part for part in parts), (template, language, name, page)
                if code != page:
                    assert not any(code in part for part in parts), (template, language, name, code)
            for name, day in days.items():
                if not shown(name, text):
                    continue
                page = local_date(day, "j F Y")
                assert any(page in part for part in parts), (template, language, name, page)
                others = {day.isoformat(), local_date(day, "d M Y"), local_date(day, "j M Y")} - {page}
                for other in others:
                    assert not any(other in part for part in parts), (template, language, name, other)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_subject_writes_its_date_as_the_body_and_the_pages_do(language: str) -> None:
    day = date(2027, 3, 5)
    with translation.override(language):
        assert str(LocalDate(day)) == local_date(day, "j F Y")
        assert f"{LocalDate(day)}" == local_date(day, "j F Y")


def test_every_template_of_the_list_is_rendered() -> None:
    # The list is the folder: a new e-mail is in the test above without being named here.
    names = templates()
    assert {"receipt", "reminder", "refund", "credit_note", "payment_declined", "account_closed",
            "subscription_switched", "shop_order_confirmation", "shop_refund"} <= set(names)
    assert len(names) >= 28
