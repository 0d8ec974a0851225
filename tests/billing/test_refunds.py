"""Refunds (money rule M5): the key per charge and request, the e-mail in the receipt's
language, the refusals and their audit, and the refunds recorded on the receipt adding up
to at most the charge."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.core import mail

from billing import access
from billing.access import receipts as receipts_module
from billing.actions import lifecycle
from billing.models import AuditAction, Receipt
from billing.operations import payments, refunds
from core import mail as billing_mail
from core.payments.errors import GatewayError, RefundRefused
from core.payments.gateway import get_gateway
from tests.builders import paid_receipt, receipts_of, seed_due

pytestmark = pytest.mark.django_db(databases=[])

D = date(2027, 3, 15)


def refund_events(receipt) -> list:
    """The receipt's ``staff.refund`` events, oldest first."""
    return sorted((e for e in access.get_events_by_account(receipt.account_id) if e.Action == "staff.refund"),
                  key=lambda e: e.SK)


def test_a_refund_is_keyed_by_charge_and_request_and_mailed(moto_table) -> None:
    receipt = paid_receipt()
    assert refunds.refund_key(receipt, "req1") == f"refund:{receipt.ChargeId}:req1"
    done = refunds.refund_receipt(receipt, 300, request_id="req1", actor="staff:ann", reason="late")
    assert done.amount == 300 and done.refund_id and done.mail_error == ""
    assert done.receipt.RefundedAmount == 300
    [message] = mail.outbox
    assert message.subject == f"Refund: {receipt.ProductName or receipt.SKU}"
    assert "Refunded now:     $3.00" in message.body
    assert "Refunded in all:  $3.00 of $9.99" in message.body
    assert f"Reference:        {done.refund_id}" in message.body
    assert f"your payment for {receipt.ProductName or receipt.SKU} of 15 March 2027." in message.body
    [refund] = done.receipt.Refunds
    assert refund.RefundId == done.refund_id and refund.Reason == "late" and refund.Actor == "staff:ann"
    again = refunds.refund_receipt(receipt, 300, request_id="req1", actor="staff:ann")  # a double click
    assert (again.refund_id, again.amount) == (done.refund_id, 300) and len(mail.outbox) == 1


def test_a_refund_whose_mail_fails_says_so(moto_table, monkeypatch) -> None:
    receipt = paid_receipt()

    def smtp_down(*args, **kwargs):
        raise ConnectionError("smtp down")

    monkeypatch.setattr(billing_mail, "send_mail", smtp_down)
    done = refunds.refund_receipt(receipt, 100, request_id="r1", actor="staff:ann")
    assert done.mail_error == "mail: ConnectionError: smtp down" and done.receipt.RefundedAmount == 100


def test_a_receipt_without_a_charge_is_refused_with_a_reason(moto_table) -> None:
    receipt = paid_receipt()
    receipt.ChargeId = None
    with pytest.raises(RefundRefused, match="^this receipt has no charge to refund$"):
        refunds.refund_receipt(receipt, 100, request_id="r", actor="staff:ann")


def test_a_refused_refund_says_why_and_leaves_an_audit_event(moto_table) -> None:
    receipt = paid_receipt()
    with pytest.raises(RefundRefused, match="^refund exceeds the amount charged$"):
        refunds.refund_receipt(receipt, 5000, request_id="r", actor="staff:ann")
    [event] = [e for e in access.get_events_by_account(receipt.account_id) if e.Action == "staff.refund_failed"]
    assert event.Actor == "staff:ann" and event.Subject == receipt.SK
    assert event.Note == "refund exceeds the amount charged" and event.Before == event.After
    assert event.Before == {"BillingDate": "2027-03-15", "ProcessedAmount": 999, "Currency": "USD", "Status": "paid",
                            "RefundedAmount": 0, "Refunds": []}
    assert mail.outbox == []


def test_an_unreachable_gateway_on_refund_is_audited_and_raised(moto_table) -> None:
    receipt = paid_receipt()

    class Down:
        def refund(self, *args, **kwargs):
            raise GatewayError("connection reset")

    with pytest.raises(GatewayError):
        refunds.refund_receipt(receipt, 100, request_id="r", actor="staff:ann", gateway=Down())
    [event] = [e for e in access.get_events_by_account(receipt.account_id) if e.Action == "staff.refund_failed"]
    assert event.Note == "gateway unreachable: connection reset"
    assert event.Before == event.After and event.Before["RefundedAmount"] == 0  # the receipt as it was


def test_a_refund_without_a_reason_tells_the_gateway_it_is_a_staff_refund_and_records_none(moto_table) -> None:
    receipt = paid_receipt()
    real, asked = get_gateway(), []

    class Recording:
        def refund(self, *args, **kwargs):
            asked.append(kwargs)
            return real.refund(*args, **kwargs)

    done = refunds.refund_receipt(receipt, 100, request_id="r1", actor="staff:ann", gateway=Recording())
    assert asked == [{"idempotency_key": f"refund:{receipt.ChargeId}:r1", "reason": "staff refund"}]
    [entry] = done.receipt.Refunds
    assert entry.Reason is None
    [event] = [e for e in access.get_events_by_account(receipt.account_id) if e.Action == "staff.refund"]
    assert event.Note is None


def test_a_long_failure_is_audited_in_its_first_500_characters(moto_table) -> None:
    receipt = paid_receipt()

    class Down:
        def refund(self, *args, **kwargs):
            raise GatewayError("x" * 600)

    with pytest.raises(GatewayError):
        refunds.refund_receipt(receipt, 100, request_id="r", actor="staff:ann", gateway=Down())
    [event] = [e for e in access.get_events_by_account(receipt.account_id) if e.Action == "staff.refund_failed"]
    assert event.Note == ("gateway unreachable: " + "x" * 600)[:500]


def test_refunds_add_up_to_the_charge_and_each_is_audited_before_and_after(moto_table) -> None:
    receipt = paid_receipt()  # 9.99 USD
    with time_machine.travel(datetime(2027, 3, 20, 10, 0, 0, 500000, tzinfo=UTC), tick=False):
        part, added = access.record_refund(receipt, refund_id="re_1", amount=300, actor="staff:ann", reason="late")
    assert added and (part.Status, part.RefundedAmount) == ("partially_refunded", 300)
    [entry] = part.Refunds
    assert (entry.RefundId, entry.Amount, entry.At, entry.Actor, entry.Reason) == (
        "re_1", 300, "2027-03-20T10:00:00+00:00", "staff:ann", "late")
    with time_machine.travel(datetime(2027, 3, 21, tzinfo=UTC), tick=False):  # exactly what is left
        full, added = access.record_refund(part, refund_id="re_2", amount=699, actor="staff:bob")
    assert added and (full.Status, full.RefundedAmount) == ("refunded", 999)
    stored = access.get_receipt(receipt.account_id, receipt.SK)
    assert (stored.Status, stored.RefundedAmount) == ("refunded", 999)
    assert [(r.RefundId, r.Amount, r.Reason) for r in stored.Refunds] == [("re_1", 300, "late"), ("re_2", 699, None)]
    first, second = refund_events(receipt)
    snapshot = {"BillingDate": "2027-03-15", "ProcessedAmount": 999, "Currency": "USD"}
    assert (first.Actor, first.Subject, first.Note) == ("staff:ann", receipt.SK, "late")
    assert first.Before == {**snapshot, "Status": "paid", "RefundedAmount": 0, "Refunds": []}
    assert first.After == {**snapshot, "Status": "partially_refunded", "RefundedAmount": 300, "Refunds": ["re_1"]}
    assert (second.Actor, second.Note) == ("staff:bob", None)
    assert second.After == {**snapshot, "Status": "refunded", "RefundedAmount": 999, "Refunds": ["re_1", "re_2"]}
    with pytest.raises(ValueError, match="^refund exceeds the amount charged$"):
        access.record_refund(full, refund_id="re_3", amount=1, actor="staff:ann")


@pytest.mark.parametrize("amount", [0, -1, 1.5, "1"])
def test_a_refund_of_no_whole_positive_amount_is_refused(moto_table, amount) -> None:
    receipt = paid_receipt()
    with pytest.raises(ValueError, match="^amount must be a positive integer number of minor units$"):
        access.record_refund(receipt, refund_id="re_1", amount=amount, actor="staff:ann")
    assert access.get_receipt(receipt.account_id, receipt.SK).RefundedAmount == 0


def test_the_smallest_refund_is_one_minor_unit(moto_table) -> None:
    receipt = paid_receipt()
    done, added = access.record_refund(receipt, refund_id="re_1", amount=1, actor="staff:ann")
    assert added and done.RefundedAmount == 1


def test_a_refund_refused_on_every_attempt_gives_up_after_three_reads(moto_table, monkeypatch) -> None:
    receipt = paid_receipt()
    stale = access.get_receipt(receipt.account_id, receipt.SK)
    access.record_refund(receipt, refund_id="re_1", amount=100, actor="staff:ann")
    reads = []

    def stale_read(account_id, receipt_sk):  # another refund lands before each retry
        reads.append(receipt_sk)
        return stale

    monkeypatch.setattr(receipts_module, "get_receipt", stale_read)
    with pytest.raises(access.ConditionFailed, match=receipt.SK):  # the refusal names the receipt
        access.record_refund(stale, refund_id="re_2", amount=100, actor="staff:bob")
    assert reads == [receipt.SK] * 3
    assert access.get_receipt(receipt.account_id, receipt.SK).RefundedAmount == 100


def test_a_refund_of_a_receipt_that_is_gone_is_refused(moto_table) -> None:
    receipt = paid_receipt()
    access.get_receipt(receipt.account_id, receipt.SK).delete()
    with pytest.raises(access.ConditionFailed, match=receipt.SK):
        access.record_refund(receipt, refund_id="re_1", amount=100, actor="staff:ann")


def test_a_receipt_stored_without_a_refunded_amount_takes_its_first_refund(moto_table) -> None:
    # receipts written before RefundedAmount existed have no such attribute
    receipt = paid_receipt()
    receipt.update(actions=[Receipt.RefundedAmount.remove()])
    old = access.get_receipt(receipt.account_id, receipt.SK)
    old.RefundedAmount = None
    done, added = access.record_refund(old, refund_id="re_1", amount=100, actor="staff:ann")
    assert added and access.get_receipt(receipt.account_id, receipt.SK).RefundedAmount == 100


def test_a_refund_is_mailed_in_the_language_of_its_receipt(moto_table) -> None:
    from django.utils import translation

    [sub] = seed_due(1, due=D, language="it")
    payments.take_payment(sub, run_date=D)
    [receipt] = receipts_of(sub)
    assert receipt.Language == "it"
    mail.outbox.clear()
    refunds.refund_receipt(receipt, 100, request_id="r", actor="staff:ann")
    with translation.override("it"):
        subject = translation.gettext("Refund: {product}").format(product=receipt.ProductName)
    [message] = mail.outbox
    assert message.subject == subject and subject != f"Refund: {receipt.ProductName}"


def test_a_refund_drawn_from_an_older_refunded_amount_is_refused_before_the_gateway(table) -> None:
    receipt = paid_receipt()
    refunds.refund_receipt(receipt, 300, request_id="tab1", actor="staff:ann", expected_refunded=0)
    with pytest.raises(access.RefundedMeanwhile) as meanwhile:
        refunds.refund_receipt(receipt, 300, request_id="tab2", actor="staff:bob", expected_refunded=0)
    assert meanwhile.value.receipt.RefundedAmount == 300 and not meanwhile.value.in_progress
    again = refunds.refund_receipt(receipt, 300, request_id="tab1", actor="staff:ann", expected_refunded=0)
    assert again.receipt.RefundedAmount == 300 and len(mail.outbox) == 1  # the same form twice: one refund
    stored = access.get_receipt(receipt.account_id, receipt.SK)
    assert [r.RequestId for r in stored.Refunds] == ["tab1"] and stored.RefundClaim is None


def test_a_claimed_receipt_is_refused_to_another_request_until_the_claim_is_released(table) -> None:
    receipt = paid_receipt()
    access.claim_refund(receipt, expected_refunded=0, request_id="tab1")
    with pytest.raises(access.RefundedMeanwhile) as meanwhile:
        refunds.refund_receipt(paid_receipt_again(receipt), 100, request_id="tab2", actor="b", expected_refunded=0)
    assert meanwhile.value.in_progress
    # a refusal by the gateway releases the claim: nothing moved
    with pytest.raises(RefundRefused):
        refunds.refund_receipt(receipt, 5000, request_id="tab1", actor="a", expected_refunded=0)
    assert access.get_receipt(receipt.account_id, receipt.SK).RefundClaim is None
    assert refunds.refund_receipt(receipt, 100, request_id="tab2", actor="b", expected_refunded=0).amount == 100


def test_a_claim_left_by_a_request_that_died_is_taken_over_after_its_lifetime(table) -> None:
    receipt = paid_receipt()
    access.claim_refund(receipt, expected_refunded=0, request_id="died",
                        now=datetime.now(tz=UTC) - receipts_module.REFUND_CLAIM_LIFETIME - receipts_module.timedelta(1))
    assert access.claim_refund(receipt, expected_refunded=0, request_id="next").RefundClaim == "next"


def paid_receipt_again(receipt: Receipt) -> Receipt:
    return access.get_receipt(receipt.account_id, receipt.SK)


def test_a_refund_of_an_invoice_keeps_its_credit_note_tells_the_merchant_and_mails_the_note(moto_table) -> None:
    receipt = paid_receipt()  # every charge is an invoice: each refund issues a credit note
    first = refunds.refund_receipt(receipt, 300, request_id="tab1", actor="staff:ann", expected_refunded=0)
    assert (first.receipt.RefundClaim, first.receipt.RefundClaimAt) == (None, None)  # released with the refund
    second = refunds.refund_receipt(first.receipt, 200, request_id="tab2", actor="staff:ann", expected_refunded=300)
    notes = {n.RefundId: n.Number for n in access.credit_notes_of_receipt(second.receipt)}
    assert len(set(notes.values())) == 2
    stored = access.get_receipt(receipt.account_id, receipt.SK)
    assert [(r.RefundId, r.CreditNoteNumber) for r in stored.Refunds] == [
        (first.refund_id, notes[first.refund_id]), (second.refund_id, notes[second.refund_id])]
    # each refund's e-mail carries its own credit note, not the other's
    for message, done, other in zip(mail.outbox, (first, second), (second, first), strict=True):
        assert notes[done.refund_id] in message.body and notes[other.refund_id] not in message.body
    made, _ = access.events_after(None, limit=1000)
    created = [(e.ObjectType, e.ObjectId) for e in made if e.Type == "refund.created"]
    assert created == [("refund", first.refund_id), ("refund", second.refund_id)]


def test_a_refund_made_at_the_processor_leaves_a_staff_refunds_claim_alone(table) -> None:
    receipt = paid_receipt()
    access.claim_refund(receipt, expected_refunded=0, request_id="tab1")
    assert refunds.record_processor_refund(paid_receipt_again(receipt), "re_dash", 100, actor="stripe")
    stored = paid_receipt_again(receipt)
    assert (stored.RefundedAmount, stored.RefundClaim) == (100, "tab1")


def test_a_claim_is_released_only_by_the_request_that_holds_it(table) -> None:
    receipt = paid_receipt()
    long_ago = datetime.now(tz=UTC) - receipts_module.REFUND_CLAIM_LIFETIME - receipts_module.timedelta(1)
    access.claim_refund(receipt, expected_refunded=0, request_id="slow", now=long_ago)
    access.claim_refund(receipt, expected_refunded=0, request_id="next")  # took the slow one's claim over
    access.release_refund_claim(receipt, "slow")  # the slow one's gateway refused at last
    assert paid_receipt_again(receipt).RefundClaim == "next"
    access.release_refund_claim(receipt, "next")
    assert paid_receipt_again(receipt).RefundClaim is None


def test_a_claim_is_taken_over_only_once_its_lifetime_has_passed(table) -> None:
    receipt = paid_receipt()
    claimed = datetime.now(tz=UTC).replace(microsecond=0) - receipts_module.timedelta(hours=1)
    access.claim_refund(receipt, expected_refunded=0, request_id="died", now=claimed)
    ends = claimed + receipts_module.REFUND_CLAIM_LIFETIME
    with pytest.raises(access.RefundedMeanwhile) as meanwhile:  # at its very end, still alive
        access.claim_refund(receipt, expected_refunded=0, request_id="next", now=ends)
    assert meanwhile.value.in_progress
    later = ends + receipts_module.timedelta(seconds=1)
    assert access.claim_refund(receipt, expected_refunded=0, request_id="next", now=later).RefundClaim == "next"


def test_a_receipt_stored_without_a_refunded_amount_is_claimed_for_its_first_refund(table) -> None:
    # receipts written before RefundedAmount existed have no such attribute (read as 0): the form shows 0
    receipt = paid_receipt()
    receipt.update(actions=[Receipt.RefundedAmount.remove()])
    old = paid_receipt_again(receipt)
    assert access.claim_refund(old, expected_refunded=0, request_id="tab1").RefundClaim == "tab1"


def test_a_claim_on_a_receipt_that_is_gone_is_refused_naming_it(table) -> None:
    receipt = paid_receipt()
    paid_receipt_again(receipt).delete()
    with pytest.raises(access.ConditionFailed, match=f"^{receipt.SK}$") as refused:
        access.claim_refund(receipt, expected_refunded=0, request_id="tab1")
    assert type(refused.value) is access.ConditionFailed  # not RefundedMeanwhile: there is nothing to show


def test_a_refund_of_a_receipt_without_an_e_mail_address_is_mailed_to_no_one(moto_table) -> None:
    # receipts written before Email was kept have none: the refund is made, its e-mail reaches no address
    receipt = paid_receipt()
    receipt.update(actions=[Receipt.Email.remove()])
    old = paid_receipt_again(receipt)
    assert old.Email is None
    done = refunds.refund_receipt(old, 100, request_id="r1", actor="staff:ann")
    assert done.receipt.RefundedAmount == 100 and done.mail_error == ""
    assert mail.outbox == []  # a message without recipients is not sent (EmailMessage.send)


@pytest.mark.parametrize("cancel_action, refund_action", [
    (AuditAction.SUBSCRIPTION_CANCELLED, "subscription.cancel_refund"), (AuditAction.STAFF_CANCEL, "staff.refund")])
def test_a_cancel_now_refund_is_audited_as_the_cancels_own(moto_table, cancel_action, refund_action) -> None:
    """The customer's own cancel now refunds them the unused days: audited as theirs (their
    actor, a customer's action), never as a staff refund; staff's cancel now stays one."""
    receipt = paid_receipt()
    sub = access.get_subscription(receipt.account_id, receipt.sub_id)
    day = date.fromisoformat(receipt.PeriodStart or receipt.BillingDate) + timedelta(days=3)
    with time_machine.travel(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), tick=False):
        done = lifecycle.cancel_now(sub, today=day, actor="ann@example.com", reason="switching",
                                    action=cancel_action)
    assert done.refunded > 0
    [event] = [e for e in access.get_events_by_account(receipt.account_id) if "refund" in e.Action]
    assert (event.Action, event.Actor) == (refund_action, "ann@example.com")
