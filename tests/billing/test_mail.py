"""Every customer e-mail goes through core.mail: text + HTML, a subject that cannot
break the header (a line break in a product name was a BadHeaderError that lost the
e-mail), and a failure reported, never raised."""

from __future__ import annotations

from datetime import date

import pytest
from django.core import mail

from billing import batches
from core.mail import SUBJECT_MAX_LENGTH, email_subject, send_customer_email
from tests.builders import seed_due

pytestmark = pytest.mark.django_db


def test_subject_loses_control_characters_and_length() -> None:
    assert email_subject("Receipt: News\r\nBcc: everyone@example.com") == "Receipt: News Bcc: everyone@example.com"
    assert email_subject("a\x00b\tc") == "a b c"
    assert len(email_subject("x" * 1000)) == SUBJECT_MAX_LENGTH


def test_a_product_name_with_a_line_break_still_gets_its_receipt_mail(moto_table) -> None:
    [sub] = seed_due(1, due=date(2027, 3, 15), product_name="News\r\nBcc: everyone@example.com")
    summary = batches.run_payments(run_date=date(2027, 3, 15), catch_up_days=0)
    assert summary.counts["paid"] == 1 and summary.counts["mail_errors"] == 0
    [message] = mail.outbox
    assert message.to == [sub.Email] and "\n" not in message.subject and "Bcc" in message.subject
    assert message.alternatives and "text/html" in message.alternatives[0][1]


def test_a_mail_failure_is_reported_not_raised(moto_table, monkeypatch) -> None:
    def smtp_down(*args, **kwargs):
        raise OSError("connection refused")

    monkeypatch.setattr("core.mail.send_mail", smtp_down)
    failure = send_customer_email("reminder", "pat@example.com", "Upcoming payment", {"product": "News"})
    assert failure.startswith("mail: OSError") and "\n" not in failure
