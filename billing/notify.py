"""How billing tells a customer about a change: the e-mail, in the customer's language
whoever acts (a staff member's page language is not the customer's), and what every
subscription e-mail shows. A mail failure is logged, never raised: the change is made
whatever the mail server says."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils.functional import lazy
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.models import Account, CreditNote, Subscription
from billing.rules.cadence_words import amount_per_period
from billing.rules.invoice import credit_note_of
from billing.rules.schedule import cadence_of
from billing.rules.switch import usage_only
from core.mail import money_text, send_customer_email

log = logging.getLogger("billing")


def subscription_context(sub: Subscription) -> dict[str, Any]:
    """What every subscription e-mail shows: product, amount, card (brand and last four)."""
    card = sub.PaymentDetails
    amount, cadence = money_text(sub.PaymentAmount, sub.Currency), cadence_of(sub)
    return {
        "product": sub.ProductName or sub.SKU,
        "amount": amount,
        # Another cadence than monthly: the amount per its period ("$99.00 a year"), in the
        # e-mail's language (lazy: the mail is rendered in the customer's); "" when monthly.
        "per_period": _("No fixed fee: you pay for your usage") if usage_only(sub)
        else "" if cadence.is_monthly else lazy(amount_per_period, str)(amount, cadence),
        "usage_only": usage_only(sub),
        # Its usage is billed in arrears, so a cancellation still charges the usage up to
        # its last day: the cancel e-mails say so.
        "metered": bool(sub.MeteredPriceId),
        "card": format_lazy(_("{brand} ending {last4}"), brand=card.Brand, last4=card.Last4) if card
        else _("your card on file"),
        "last4": card.Last4 if card else "",
        "sub_id": sub.sub_id,
        "payment_day": sub.PaymentDay,
        # In a free trial that paid nothing (``PaidThroughDate`` is still ``TrialEnd``: the
        # first payment moves it on), never "You have paid for it up to".
        "free_trial": bool(sub.TrialEnd and sub.TrialEnd == sub.PaidThroughDate),
    }


def _send(template: str, to: str, subject: object, context: dict[str, Any], language: str | None, key: str) -> str:
    failure = send_customer_email(template, to, subject, context, language=language)
    if failure:
        log.warning("%s mail for %s not sent: %s", template, key, failure)
    return failure


def tell(template: str, sub: Subscription, subject: object, **context: object) -> str:
    """E-mail the subscription's customer (in the subscription's copy of their language);
    "" or the failure, already logged."""
    return _send(template, sub.Email, subject, {**subscription_context(sub), **context}, sub.Language, sub.SK)


def tell_account(template: str, account: Account, subject: object, **context: object) -> str:
    """E-mail the account's owner about a change to the account (its wallet)."""
    return _send(template, account.Email, subject, {"product": "", **context}, account.Language, account.PK)


def manage_url(sub: Subscription, page: str = "") -> str:
    """The absolute link an e-mail gives to the subscription's page (``page``: "card/" for
    its replace-card page); the portal's URLs (billing/urls.py) are under ``SITE_URL``."""
    return settings.SITE_URL.rstrip("/") + f"/subscriptions/{sub.sub_id}/{page}"


def send_credit_note(credit_note: CreditNote, *, email: str | None = None) -> str:
    """E-mail a credit note when it is issued (the refund that issues it calls this), in
    the language of the invoice it corrects, to ``email`` (the receipt's) or else the
    account's address (one GetItem); "" or the failure, already logged."""
    language = credit_note.Language
    if email is None:
        account = access.get_account(credit_note.account_id)
        if account is None:
            return "no account"
        email, language = account.Email, language or account.Language
    subject = format_lazy(_("Credit note {number} (invoice {invoice})"), number=credit_note.Number,
                          invoice=credit_note.InvoiceNumber or "")
    context = credit_note_context(credit_note)
    return _send("credit_note", email, subject, {"product": context["doc"].lines[0].description
                                                 if context["doc"].lines else "", **context}, language, credit_note.SK)


def credit_note_context(credit_note: CreditNote) -> dict[str, Any]:
    """What an e-mail shows of a credit note: the document and its page's path."""
    return {"doc": credit_note_of(credit_note), "credit_note_path": reverse("credit_note", args=[credit_note.Number])}
