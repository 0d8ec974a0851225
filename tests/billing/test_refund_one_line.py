"""A refund of one invoice line alone (Stripe's credit note ``lines``): the staff form and
the API let a refund credit one line of an invoice of several (the fee, the usage's
tiers), at most what that line still holds; its credit note has that line alone, its tax
the note's share as for any refund, and later refunds share what the lines still hold,
so every line is given back exactly once over all the notes."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from billing import access
from billing.actions import api_keys
from billing.management.demo import usage_refund
from billing.operations.refunds import refund_receipt
from billing.rules.credit_lines import InvoiceLine, Refunded, credit_lines, lines_left
from billing.rules.invoice_tax import refund_share
from core.payments.errors import RefundRefused
from core.payments.gateway import get_gateway
from tests.api.conftest import ApiClient, error_of
from tests.billing.demo_parts import seed_after_prices_and_usage
from tests.billing.test_credit_lines import invoice_lines
from tests.builders import make_user, paid_receipt

pytestmark = pytest.mark.django_db

TODAY = date(2027, 3, 10)


@st.composite
def refunds_of_lines(draw) -> tuple[list[InvoiceLine], list[Refunded]]:
    """An invoice and refunds of it, each shared over the lines or of one line alone (at
    most what that line still holds)."""
    lines = draw(invoice_lines())
    refunds: list[Refunded] = []
    while draw(st.booleans()):
        left = lines_left(lines, refunds)
        choices = [n for n, held in enumerate(left) if held]
        if not choices:
            break
        line = draw(st.sampled_from([None, *choices]))
        most = sum(left) if line is None else left[line]
        refunds.append(Refunded(draw(st.integers(min_value=1, max_value=most)), line))
    left = lines_left(lines, refunds)
    if sum(left) and draw(st.booleans()):
        refunds.append(Refunded(sum(left)))  # the rest
    return lines, refunds


@given(refunds_of_lines())
def test_a_line_refunded_alone_takes_the_note_s_share_on_that_line_only(case) -> None:
    lines, refunds = case
    gross, tax = sum(line.gross for line in lines), sum(line.tax for line in lines)
    notes = credit_lines(lines, refunds)
    for n, (note, refund) in enumerate(zip(notes, refunds, strict=True)):
        share = refund_share(tax=tax, gross=gross, earlier=[r.amount for r in refunds[:n]], refund=refund.amount)
        assert (sum(p.gross for p in note), sum(p.tax for p in note)) == (share.gross, share.tax)
        assert all(0 <= p.tax <= p.gross for p in note)
        if refund.line is not None:
            assert [i for i, p in enumerate(note) if p.gross] == [refund.line]
    for i, line in enumerate(lines):
        assert sum(note[i].gross for note in notes) <= line.gross
    if sum(r.amount for r in refunds) == gross:
        assert [sum(note[i].gross for note in notes) for i in range(len(lines))] == [line.gross for line in lines]
        assert sum(p.tax for note in notes for p in note) == tax


def test_more_than_a_line_holds_or_a_line_not_there_is_refused() -> None:
    lines = [InvoiceLine(500, 87), InvoiceLine(300, 52)]
    assert lines_left(lines, [Refunded(200, 1)]) == [500, 100]
    with pytest.raises(ValueError, match="^a refund of one line is at most what that line still holds$"):
        credit_lines(lines, [Refunded(200, 1), Refunded(101, 1)])
    with pytest.raises(ValueError, match="^a refund of one line is at most what that line still holds$"):
        credit_lines(lines, [Refunded(1, 2)])
    with pytest.raises(ValueError, match="^a refund of one line is at most what that line still holds$"):
        credit_lines(lines, [Refunded(1, -1)])
    # a line taken whole by a refund of it alone keeps its words
    [[fee, calls]] = credit_lines(lines, [Refunded(300, 1)])
    assert (fee.gross, calls.gross, calls.whole, fee.whole) == (0, 300, True, False)


@pytest.fixture
def half_refunded(moto_table):
    """The demo's invoice of a $5.00 fee, 1,000 free calls and 1,500 at $0.002, half of it
    refunded shared over the lines: $2.50 of the fee and $1.50 of the calls left."""
    with time_machine.travel(datetime(2027, 3, 10, 12, tzinfo=UTC), tick=False):
        seed_after_prices_and_usage(usage_refund, "usage refund", TODAY)
        _, receipt = usage_refund.paid_then_half_refunded(TODAY)
        yield receipt


def _form(page: str) -> dict[str, str]:
    return {name: re.search(rf'name="{name}" value="(\w+)"', page).group(1) for name in ("request_id", "refunded")}


def test_staff_refund_the_calls_line_alone_then_the_rest(half_refunded, client) -> None:
    receipt = half_refunded
    assert access.refundable_lines(receipt) == [("Developer API access", 250), ("api_calls", 0), ("api_calls", 150)]
    client.force_login(make_user("money@rpay.localhost", staff=True, money=True))
    url = reverse("admin:staff_refund", args=[receipt.account_id, receipt.SK])
    page = client.get(url).content.decode()
    # the lines that hold something, what each holds; the free tier holds nothing
    assert "Every line, each its share" in page
    assert "Developer API access (2.50 USD left)" in page and "api_calls (1.50 USD left)" in page
    assert 'value="1"' not in page.split('name="line"')[1].split("</select>")[0]
    form = _form(page)

    # more than the line holds: the field says so, nothing is refunded
    refused = client.post(url, {"amount": "2.00", "line": "2", **form})
    assert refused.status_code == 200
    assert "That is more than what is left of this line (1.50 USD)." in refused.content.decode()
    assert access.get_receipt(receipt.account_id, receipt.SK).RefundedAmount == 400

    assert client.post(url, {"amount": "1.50", "line": "2", "reason": "meter fault", **form}).status_code == 302
    receipt = access.get_receipt(receipt.account_id, receipt.SK)
    assert (receipt.RefundedAmount, int(receipt.Refunds[-1].Line)) == (550, 2)
    note = _note_of(receipt, receipt.Refunds[-1])
    assert [(line.Description, int(line.Gross)) for line in note.TaxLines] == [("api_calls", -150)]
    assert sum(int(line.Tax) for line in note.TaxLines) == int(note.Tax)
    assert access.refundable_lines(receipt) == [("Developer API access", 250), ("api_calls", 0), ("api_calls", 0)]

    # the rest, shared: all of it is the fee's, and the three notes give each line back exactly
    page = client.get(url).content.decode()
    assert client.post(url, {"amount": "2.50", "line": "", **_form(page)}).status_code == 302
    receipt = access.get_receipt(receipt.account_id, receipt.SK)
    notes = access.credit_notes_of_receipt(receipt)
    assert len(notes) == 3 and receipt.RefundedAmount == receipt.ProcessedAmount
    for figure in ("Gross", "Tax", "Net"):
        assert sum(int(getattr(note, figure)) for note in notes) == -int(getattr(receipt, figure if figure != "Gross"
                                                                                     else "ProcessedAmount"))
    credited = {}
    for note in notes:
        for line in note.TaxLines:
            credited[line.Description] = credited.get(line.Description, 0) - int(line.Gross)
    assert credited == {"Developer API access": 500, "api_calls": 300}


def _note_of(receipt, refund):
    return next(n for n in access.credit_notes_of_receipt(receipt) if n.RefundId == refund.RefundId)


def test_the_api_refunds_one_line_names_it_and_refuses_what_it_cannot(half_refunded) -> None:
    receipt = half_refunded
    _, secret = api_keys.create_key("warehouse", "write", actor="test")
    api = ApiClient(secret, Client(enforce_csrf_checks=True))
    path = f"/customers/{receipt.account_id}/receipts/{receipt.url_id}/refund"
    for body, status, param, words in (
        ({"line": 5}, 400, "line", "This receipt has lines 0 to 2."),
        ({"line": 1}, 409, None, "Line 1 has been refunded in full."),
        ({"line": 2, "amount": 151}, 400, "amount", "At most 150 (minor units) is left to refund of line 2."),
        ({"line": -1}, 400, "line", None),
    ):
        response = api.post(path, body, key=f"k{body}")
        assert response.status_code == status, response.content
        error = error_of(response)
        assert error["param"] == param
        if words:
            assert error["message"] == words
    done = api.post(path, {"line": 2, "reason": "meter fault"}, key="calls")  # all that line holds
    assert done.status_code == 200, done.content
    assert [(r["amount"], r["line"]) for r in done.json()["refunds"]] == [(400, None), (150, 2)]
    assert done.json()["tax"]["lines"][2]["description"].startswith("api_calls")
    again = api.post(path, {"line": 2, "reason": "meter fault"}, key="calls")  # a retry: one refund
    assert again.json() == done.json()
    assert int(access.get_receipt(receipt.account_id, receipt.SK).RefundedAmount) == 550


def test_the_lines_to_choose_from(half_refunded) -> None:
    receipt = half_refunded
    fee, free, calls = receipt.TaxLines
    # two lines are a choice; a line without words is named by the product
    receipt.TaxLines = [fee, calls]
    calls.Description = None
    assert access.refundable_lines(receipt) == [("Developer API access", 250), ("Developer API access", 150)]
    # stored lines that do not add up to the receipt: its totals are its one line, no choice
    receipt.TaxLines = [fee, fee]
    assert access.refundable_lines(receipt) is None
    # a receipt of one line (a subscription without usage): no choice
    receipt.TaxLines = [fee]
    assert access.refundable_lines(receipt) is None
    # a receipt from before taxes: no choice, whatever lines it holds
    receipt.TaxLines, receipt.Net = [fee, free, calls], None
    assert access.refundable_lines(receipt) is None


def test_the_first_line_alone_and_a_line_not_there(half_refunded) -> None:
    receipt, _ = access.record_refund(half_refunded, refund_id="re_fee", amount=250, actor="staff:ann", line=0)
    assert receipt.Refunds[-1].Line == 0
    assert [(line.Description, int(line.Gross)) for line in _note_of(receipt, receipt.Refunds[-1]).TaxLines] == [
        ("Developer API access", -250)]
    # a line the invoice does not have (a caller that did not check): recorded, shared
    receipt, _ = access.record_refund(receipt, refund_id="re_none", amount=50, actor="staff:ann", line=3)
    assert receipt.Refunds[-1].Line is None


def test_a_line_taken_by_another_refund_meanwhile_is_recorded_shared(half_refunded) -> None:
    # The gateway made the refund: it is recorded all the same, its credit note shared over
    # what the lines hold (a line the check before the gateway saw is gone since).
    receipt = half_refunded
    receipt, _ = access.record_refund(receipt, refund_id="re_other", amount=100, actor="staff:bob", line=2)
    receipt, added = access.record_refund(receipt, refund_id="re_late", amount=100, actor="staff:ann", line=2)
    assert added and receipt.Refunds[-1].Line is None
    note = _note_of(receipt, receipt.Refunds[-1])
    assert [line.Description for line in note.TaxLines] == ["Developer API access", "api_calls"]


def test_the_refund_operation_checks_the_line_before_the_gateway(half_refunded) -> None:
    receipt = half_refunded
    for line, amount, words in ((3, 1, "this receipt has no line 3 to refund alone"),
                                (2, 151, "at most 150 (minor units) is left of line 2")):
        with pytest.raises(RefundRefused) as refused:
            refund_receipt(receipt, amount, request_id=f"r{line}", actor="staff:ann", line=line)
        assert refused.value.reason == words
    assert sum(r.amount for r in get_gateway().refunds_of(receipt.ChargeId)) == 400  # the half refund's alone
    done = refund_receipt(receipt, 250, request_id="fee", actor="staff:ann", line=0)
    assert (done.receipt.Refunds[-1].Line, done.receipt.RefundedAmount) == (0, 650)


def test_a_receipt_of_one_line_refuses_a_line_before_the_gateway(moto_table) -> None:
    receipt = paid_receipt()
    with pytest.raises(RefundRefused, match="this receipt has no line 0 to refund alone"):
        refund_receipt(receipt, 100, request_id="r", actor="staff:ann", line=0)
    assert get_gateway().refunds_of(receipt.ChargeId) == []
