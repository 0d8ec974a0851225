"""The batches' e-mails go out in the customer's language (the subscription's
copy of Account.Language, read from the GSIs), with amounts and dates in its formats."""

from __future__ import annotations

from datetime import date

import pytest
from django.core import mail

from billing import access, batches
from billing.models import GSI1_PROJECTION, GSI2_PROJECTION
from tests.builders import fresh, make_account, make_subscription, seed_due

pytestmark = pytest.mark.django_db(databases=[])

R = date(2027, 3, 8)  # reminders for payments on 2027-03-15
PAY = date(2027, 3, 15)

# language: (reminder subject start, a phrase of the reminder body, the amount 1,234.56 EUR
# as the language's pages write it, the payment date, a phrase of the receipt body)
EXPECTED = {
    "it": ("Prossimo pagamento: Daily News il 15 marzo 2027", "si avvicina", "1.234,56\xa0€",
           "15 marzo 2027", "abbiamo ricevuto il tuo pagamento"),
    "ko": ("결제 예정: Daily News, 2027년 3월 15일", "결제일이 다가오고 있습니다", "€1,234.56",
           "2027년 3월 15일", "결제가 완료되었습니다"),
    "zh-hans": ("即将付款：Daily News，2027年3月15日", "付款即将到期", "€1,234.56",
                "2027年3月15日", "我们已收到您"),
}
ENGLISH = ("Upcoming payment", "is coming up", "Hello,", "Thank you: we received", "Amount:")


def test_the_language_is_projected_into_both_batch_indexes() -> None:
    assert "Language" in GSI1_PROJECTION and "Language" in GSI2_PROJECTION


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_reminder_and_receipt_in_the_subscriptions_language(local_table, language) -> None:
    # DynamoDB Local enforces the GSIs' projections: the language must come through them.
    subject, phrase, amount, day, receipt_phrase = EXPECTED[language]
    seed_due(1, due=PAY, amount=123456, currency="EUR", language=language)
    assert batches.run_reminders(run_date=R).counts["sent"] == 1
    [reminder] = mail.outbox
    assert reminder.subject.startswith(subject)
    for text in (reminder.body, reminder.alternatives[0][0]):
        assert phrase in text and amount in text and day in text
        assert not any(english in text for english in ENGLISH)
    assert f'lang="{language}"' in reminder.alternatives[0][0]

    mail.outbox.clear()
    assert batches.run_payments(run_date=PAY).counts["paid"] == 1
    [receipt] = mail.outbox
    for text in (receipt.body, receipt.alternatives[0][0]):
        assert receipt_phrase in text and amount in text and day in text
        assert not any(english in text for english in ENGLISH)


def test_without_a_language_the_mail_stays_english(moto_table) -> None:
    seed_due(1, due=PAY, amount=123456, currency="EUR")
    batches.run_reminders(run_date=R)
    [message] = mail.outbox
    assert message.subject.startswith("Upcoming payment: Daily News on 15 March 2027")
    assert "€1,234.56" in message.body and "15 March 2027" in message.body


def test_the_accounts_language_reaches_its_subscriptions_and_their_mail(moto_table) -> None:
    account = make_account()
    sub = make_subscription(account, today=date(2027, 1, 10))
    assert fresh(sub).Language is None
    assert access.set_account_language(account.account_id, "ko") == 1
    assert access.get_account(account.account_id).Language == "ko"
    assert fresh(sub).Language == "ko"
    # A subscription made afterwards copies the account's language at once.
    later = make_subscription(access.get_account(account.account_id), sku="TEA", today=date(2027, 1, 10))
    assert fresh(later).Language == "ko"
    due = date.fromisoformat(fresh(sub).NextReminderDate)
    batches.run_reminders(run_date=due)
    assert mail.outbox and all("결제 예정" in m.subject for m in mail.outbox)


def test_a_staff_action_mails_the_customer_in_the_customers_language(moto_table) -> None:
    # A staff member works in English; the cancel they make, and the card they add to the
    # customer's wallet, are announced in the customer's language, dates and amounts too.
    from django.utils import translation

    from billing.actions import lifecycle as lifecycle_actions
    from billing.actions import wallet
    from core.payments.gateway import CardToken

    account = make_account()
    access.set_account_language(account.account_id, "it")
    account = access.get_account(account.account_id)
    sub = fresh(make_subscription(account, today=date(2027, 1, 10)))
    access.set_schedule(sub, next_payment=date(2027, 2, 15), last_payment=date(2027, 1, 15),
                        next_reminder=date(2027, 2, 8), last_reminder=date(2027, 1, 8))
    with translation.override("en"):
        lifecycle_actions.cancel_at_period_end(fresh(sub), today=date(2027, 1, 20), actor="staff:ann",
                                               reason="other")
        visa = CardToken(token="tok_x", brand="Visa", last4="4242", exp_month=12, exp_year=2030)
        added = wallet.add_card(account, visa, actor="staff:ann")
        wallet.set_default_card(account, added, actor="staff:ann")
    cancelled, card_added, default = mail.outbox
    assert cancelled.subject == "Il tuo abbonamento News-Daily termina il 14 febbraio 2027"
    assert "Cancellation" not in cancelled.body and "14 febbraio 2027" in cancelled.body
    assert "Visa che termina con 4242 (12/2030)" in card_added.body
    assert default.subject == "La tua carta predefinita è ora Visa che termina con 4242 (12/2030)"


def test_every_e_mail_writes_its_dates_as_the_pages_do() -> None:
    """One way to write a date in every e-mail: the pages' ``|local_date:"j F Y"`` (never
    Django's ``|date``, never another format such as the refund's old "2027-03-15")."""
    import re
    from pathlib import Path

    from django.conf import settings

    found = {}
    for template in sorted(Path(settings.BASE_DIR, "templates/billing/email").glob("*.*")):
        text = template.read_text()
        formats = set(re.findall(r'\|local_date:"([^"]*)"', text)) | set(re.findall(r"\|date:", text))
        if formats - {"j F Y"}:
            found[template.name] = sorted(formats)
    assert found == {}


def test_a_confirmation_made_in_english_writes_its_amounts_in_the_customers_language(moto_table) -> None:
    # Staff (or a page in English) subscribes an Italian customer: the confirmation's amounts
    # are formatted when the e-mail is written, in Italian as the customer's pages write them
    # ("12,34 €"), not in the caller's English ("€12.34").
    from django.utils import translation

    from billing.actions import subscriptions
    from core.money import format_with_symbol
    from tests.builders import card

    account = make_account()
    access.set_account_language(account.account_id, "it")
    account = access.get_account(account.account_id)
    with translation.override("en"):
        started = subscriptions.subscribe(account, sku="NEWS-DAILY", product_name="Daily News", payment_day=15,
                                          amount=1234, currency="EUR", card=card(), today=date(2027, 1, 15),
                                          actor="staff:ann")
    assert started.started
    [confirmed] = [m for m in mail.outbox if "News" in m.subject and "Fattura" not in m.subject]
    with translation.override("it"):
        italian = format_with_symbol(1234, "EUR")
    assert italian == "12,34\xa0€"
    for text in (confirmed.body, confirmed.alternatives[0][0]):
        assert italian in text and "€12.34" not in text
