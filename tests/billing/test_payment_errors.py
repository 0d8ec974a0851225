"""One PaymentError hierarchy, handled at every gateway call site (django-oscar's model):
a card error is a form error, an unreachable gateway a message and an audit event,
never a 500 (defect 7)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from billing import access
from core.payments.errors import CardError, GatewayError, PaymentError, RefundRefused
from core.payments.gateway import get_gateway
from tests.builders import GOOD_CARD, make_customer_with_history, make_user, subscribe

pytestmark = pytest.mark.django_db


def test_every_payment_failure_is_a_payment_error() -> None:
    for error in (CardError("bad number"), GatewayError("timeout"), RefundRefused("exceeds")):
        assert isinstance(error, PaymentError)
    # The older catch sites keep working: a card error is still a ValueError, an
    # unreachable gateway still a RuntimeError.
    assert isinstance(CardError("x"), ValueError) and isinstance(GatewayError("x"), RuntimeError)


def unreachable(*args, **kwargs):
    raise GatewayError("connection reset by peer")


@pytest.mark.parametrize("path", ["/subscribe/", "card"])
def test_an_unreachable_gateway_while_saving_a_card_is_a_form_error(customer, monkeypatch, path) -> None:
    if path == "card":
        path = f"/subscriptions/{subscribe(customer).sub_id}/card/"
    monkeypatch.setattr(type(get_gateway()), "tokenize_card", unreachable)
    response = customer.client.post(path, {"product": "NEWS-DAILY", "payment_day": "3", **GOOD_CARD})
    assert response.status_code == 200
    assert "payment provider could not be reached" in response.content.decode()


def test_retry_now_with_an_unreachable_gateway_is_a_message_and_an_event(client, moto_table, monkeypatch) -> None:
    customer = make_customer_with_history()
    client.force_login(make_user("money@rpay.localhost", staff=True, money=True))
    monkeypatch.setattr(type(get_gateway()), "charge", unreachable)
    monkeypatch.setattr("billing.operations.payments.time.sleep", lambda seconds: None)
    url = reverse("admin:staff_retry", args=[customer.account_id, customer.past_due.sub_id])
    response = client.post(url, follow=True)
    assert response.status_code == 200
    assert "could not be reached" in response.content.decode()
    [event] = [e for e in access.get_events_by_account(customer.account_id) if e.Action == "staff.retry_payment_failed"]
    assert "connection reset" in event.Note
    after = access.get_subscription(customer.account_id, customer.past_due.sub_id)
    assert after.Status == "past_due" and after.RetryCount == customer.past_due.RetryCount


def test_a_bug_in_the_payment_run_is_logged_with_its_traceback_an_unreachable_gateway_without(
        moto_table, monkeypatch, caplog) -> None:
    """A bug's one line says what failed, its traceback where; a processor out of reach is
    an outage, its one line enough."""
    from datetime import date

    from billing import batches
    from tests.builders import seed_due

    day = date(2027, 3, 15)
    monkeypatch.setattr("billing.operations.payments.time.sleep", lambda seconds: None)
    seed_due(1, due=day, prefix="bug")
    monkeypatch.setattr(type(get_gateway()), "charge", lambda *args, **kwargs: {}["no such key"])
    assert batches.run_payments(run_date=day, workers=1, catch_up_days=0).counts["errors"] == 1
    [bug] = [r for r in caplog.records if "failed" in r.getMessage()]
    assert bug.exc_info and bug.exc_info[0] is KeyError and "KeyError" in bug.getMessage()
    caplog.clear()
    seed_due(1, due=day, prefix="out")
    monkeypatch.setattr(type(get_gateway()), "charge", unreachable)
    batches.run_payments(run_date=day, workers=1, catch_up_days=0)  # the first one is still due, too
    [outage] = [r for r in caplog.records if "out000000" in r.getMessage()]
    assert not outage.exc_info and "connection reset by peer" in outage.getMessage()
