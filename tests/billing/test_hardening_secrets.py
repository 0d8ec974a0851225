"""Card numbers and CVCs never reach Django's technical error report (the e-mail to
ADMINS, Sentry-style reporters): every frame that holds one is marked
``@sensitive_variables`` (the card views, the card form's clean methods, the view's
tokenizing helper, the gateway's ``tokenize_card``), and the views mark the posted
fields ``@sensitive_post_parameters``.

Each case makes something fail *inside* one of those frames, by replacing a helper it
calls with one that raises, and renders the report Django would send.
"""

from __future__ import annotations

import html
import sys
from collections.abc import Iterator

import pytest
from django import forms
from django.core.signals import got_request_exception
from django.views.debug import ExceptionReporter

from core.payments import simulated as gateway_module
from core.payments.gateway import get_gateway
from tests.builders import BILLING_COUNTRY, subscribe

pytestmark = pytest.mark.django_db

NUMBER = "4111111111111111"
TYPED = "4111 1111 1111 1111"
CVC = "837"
CARD = {"card_number": TYPED, "exp_month": "12", "exp_year": "2031", "cvc": CVC}


class Boom(RuntimeError):
    pass


def explode(*args: object, **kwargs: object) -> None:
    """Stands in for a helper a card frame calls: it holds the card in its arguments."""
    raise Boom("failure inside a card frame")


@pytest.fixture
def reports() -> Iterator[list[str]]:
    """The technical report (text and HTML, unescaped) of every request that fails."""
    made: list[str] = []

    def capture(sender: object, request: object, **kwargs: object) -> None:
        reporter = ExceptionReporter(request, *sys.exc_info())
        made.append(reporter.get_traceback_text() + html.unescape(reporter.get_traceback_html()))

    got_request_exception.connect(capture)
    yield made
    got_request_exception.disconnect(capture)


def assert_no_card(report: str, frame: str) -> None:
    assert "failure inside a card frame" in report and frame in report  # the frame is in the report
    assert "********************" in report  # ... with its variables hidden
    for secret in (NUMBER, TYPED, "4111-1111", f"'{CVC}'", f'"{CVC}"'):
        assert secret not in report, (frame, secret)


def post_failing(client, path: str, data: dict, reports: list[str]) -> str:
    with pytest.raises(Boom):
        client.post(path, data)
    assert len(reports) == 1
    return reports[0]


SUBSCRIBE = {"product": "NEWS-DAILY", "payment_day": "15", **CARD, **BILLING_COUNTRY}


@pytest.mark.parametrize(("target", "frame"), [
    ("core.cardforms.luhn_valid", "clean_card_number"),  # the form's card-number check
    ("core.cardforms.normalize_card_number", "clean_card_number"),
    ("core.cardforms.get_gateway", "tokenize_card_form"),  # the view's helper holding cleaned_data
    ("core.payments.simulated.card_brand", "tokenize_card"),  # the gateway, after normalizing
    ("core.payments.simulated.luhn_valid", "tokenize_card"),
])
def test_subscribe_failure_reports_hold_no_card(customer, reports, monkeypatch, target: str, frame: str) -> None:
    monkeypatch.setattr(target, explode)
    report = post_failing(customer.client, "/subscribe/", SUBSCRIBE, reports)
    assert_no_card(report, frame)


def test_failure_in_the_forms_clean_holds_no_card(customer, reports, monkeypatch) -> None:
    # CardFields.clean() holds every cleaned field (number and CVC) when Form.clean fails
    monkeypatch.setattr(forms.BaseForm, "clean", explode)
    assert_no_card(post_failing(customer.client, "/subscribe/", SUBSCRIBE, reports), "in clean\n")


def test_failure_in_djangos_field_cleaning_holds_no_card(customer, reports, monkeypatch) -> None:
    # Django's own frames (Form._clean_fields holds the value) are below the view, whose
    # decorator covers them: the first CharField cleaned is the card number.
    monkeypatch.setattr(forms.CharField, "to_python", explode)
    assert_no_card(post_failing(customer.client, "/subscribe/", SUBSCRIBE, reports), "_clean_fields")


@pytest.mark.parametrize("target", ["core.cardforms.luhn_valid", "core.payments.simulated.card_brand"])
def test_replace_card_failure_reports_hold_no_card(customer, reports, monkeypatch, target: str) -> None:
    sub = subscribe(customer)
    monkeypatch.setattr(target, explode)
    report = post_failing(customer.client, f"/subscriptions/{sub.sub_id}/card/",
                          {**CARD, "version": str(sub.Version)}, reports)
    assert_no_card(report, "replace_card")


def test_the_gateway_outside_a_view_hides_the_card(monkeypatch, gateway_ledger) -> None:
    """seed_demo and any other caller: the gateway's own frame is enough."""
    monkeypatch.setattr(gateway_module, "card_brand", explode)
    try:
        get_gateway().tokenize_card(NUMBER, 12, 2031, CVC)
    except Boom:
        reporter = ExceptionReporter(None, *sys.exc_info())
        report = reporter.get_traceback_text() + html.unescape(reporter.get_traceback_html())
    assert_no_card(report, "tokenize_card")


def test_without_the_decorators_the_report_would_hold_the_card(customer, reports, monkeypatch) -> None:
    """The check above can fail: the same report with the filter off shows the number."""
    monkeypatch.setattr("core.cardforms.luhn_valid", explode)
    monkeypatch.setattr("django.views.debug.SafeExceptionReporterFilter.is_active", lambda self, request: False)
    report = post_failing(customer.client, "/subscribe/", SUBSCRIBE, reports)
    assert NUMBER in report
