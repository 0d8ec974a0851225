"""The money rules when renewals may need the cardholder's bank (3-D Secure off-session)
and the processor's webhooks arrive late, twice or out of order: the money model
(tests/billing/test_money_model.py, every rule of it) with more steps.

Steps added: a card that wants its bank for every renewal; the customer answering the
bank late or never, approving or refusing, coming back to the portal or closing the page
after the bank's answer; refunds made in the processor's dashboard; the processor's
events (``payment_intent.succeeded``, ``payment_intent.payment_failed``,
``charge.refunded``) delivered in any order, any number of times, a failed delivery
(500) kept for the next.

Checks, after every step, on top of the model's M1-M4:
* M2: a charge waiting for the bank is not a payment (no receipt); once the bank approved
  it, it has exactly one receipt as soon as the customer's page, an event, a payment run
  or the reconciliation recorded it, and never two (the model's own check, which allows
  only the charges confirmed while the customer was away to wait);
* a charge waiting for the bank is never made twice for one period;
* M5: a receipt's refunds are refunds the gateway made, never more than the charge, their
  sum its ``RefundedAmount``; a refund made at the processor is missing from it only until
  its event or a reconciliation arrives; after the last step, none is missing.
"""

from __future__ import annotations

import secrets
from collections import Counter
from datetime import UTC, date, datetime

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule, run_state_machine_as_test

from billing import access
from billing.actions import subscriptions as actions
from billing.actions.webhooks import NotYetRecorded, receive_event
from billing.batches.reconcile import reconcile
from billing.models import SubscriptionStatus
from billing.operations.outcomes import PaymentStatus
from core.payments.gateway import get_gateway
from core.payments.simulated import AUTHENTICATING_TEST_CARD
from tests.billing import test_money_model as model
from tests.billing.test_money_model import START, MoneyMachine, act

pytestmark = pytest.mark.django_db(databases=[])


def _epoch(iso: str) -> int:
    return int(datetime.fromisoformat(iso).replace(tzinfo=datetime.fromisoformat(iso).tzinfo or UTC).timestamp())


class AuthenticationMachine(MoneyMachine):
    def __init__(self) -> None:
        super().__init__()
        self.confirmed_away: set[str] = set()  # approved at the bank, the customer never came back
        self.events: list[dict] = []  # what the processor has still to deliver (again)
        self.announced: set[str] = set()  # charges whose event was queued
        self.dashboard_refunds: set[str] = set()  # refunds made at the processor

    def awaiting_record(self) -> set[str]:
        return self.confirmed_away - self._receipt_charges()

    def _receipt_charges(self) -> set[str]:
        return {r.ChargeId for t in self.subs for r in self._receipts(t)}

    def _receipts(self, tracked) -> list:
        return [r for r in access.get_receipts_by_account(tracked.account_id, START, date(2100, 1, 1))
                if r.sub_id == tracked.sub_id]

    def teardown(self) -> None:
        try:
            for event in list(self.events):  # Stripe keeps trying: everything arrives in the end
                self._deliver(event)
            self._live_until(max(self.today, START + model.LIFETIME), skip=False)
            self._run_payments()
            reconcile(START, self.today, fix=True, today=self.today)
            self.lost_on = None
            self.confirmed_away.clear()
            self.ledger_matches()
            self.refunds_match(final=True)
        finally:
            self.clock.stop()

    # --- the processor's events -------------------------------------------------------

    def _announce(self) -> None:
        """Queue the events the processor would send for what happened to the charges."""
        gateway = get_gateway()
        for made in gateway.charges_made():
            if made["charge_id"] in self.announced or made["status"] == "requires_action":
                continue
            charge = gateway.charge_status(made["charge_id"])
            if charge.succeeded:
                kind = "payment_intent.succeeded"
            elif charge.decline_code == "authentication_failed":
                kind = "payment_intent.payment_failed"
            else:
                continue
            self.announced.add(charge.charge_id)
            self.events.append(self._event(kind, {
                "id": charge.charge_id, "object": "payment_intent", "status": "succeeded" if charge.succeeded else
                "requires_payment_method", "amount": charge.amount, "currency": charge.currency.lower(),
                "metadata": charge.metadata, "created": _epoch(charge.created),
                "last_payment_error": None if charge.succeeded else {"code": charge.decline_code}}))

    def _event(self, kind: str, obj: dict) -> dict:
        return {"id": "evt_" + secrets.token_hex(8), "object": "event", "type": kind,
                "created": int(datetime.now(tz=UTC).timestamp()), "data": {"object": obj}}

    def _deliver(self, event: dict) -> bool:
        """Deliver one event; False when the site answered 500 (the processor retries)."""
        try:
            receive_event(event, today=self.today)
        except NotYetRecorded:
            return False
        return True

    # --- rules -----------------------------------------------------------------------------

    @rule(data=st.data())
    @act
    def card_needs_its_bank(self, data: st.DataObject) -> None:
        """The customer's new card wants 3-D Secure for every renewal (a past-due period is
        retried with it at once, off-session: it then waits for the bank)."""
        live = self._live()
        if live:
            token = get_gateway().tokenize_card(AUTHENTICATING_TEST_CARD, 12, 2040, "123")
            actions.replace_card(data.draw(st.sampled_from(live)).read(), token, actor="customer", today=self.today)

    @rule(data=st.data(), approve=st.booleans(), comes_back=st.booleans())
    @act
    def customer_answers_the_bank(self, data: st.DataObject, approve: bool, comes_back: bool) -> None:
        waiting = [t for t in self.subs if (s := t.read()).Status == SubscriptionStatus.PAST_DUE
                   and s.PaymentDetails.AwaitingCharge]
        if not waiting:
            return
        sub = data.draw(st.sampled_from(waiting)).read()
        charge_id = sub.PaymentDetails.AwaitingCharge
        if comes_back:
            outcome = actions.confirm_renewal(sub, today=self.today, actor="customer", bank_answer=approve)
            assert outcome.status == (PaymentStatus.PAID if approve else PaymentStatus.DECLINED)
            assert charge_id in self._receipt_charges() if approve else True
        else:  # closed the page after the bank's answer: an event, a run or the reconciliation records it
            get_gateway().authenticate(charge_id, approve=approve)
            if approve:
                self.confirmed_away.add(charge_id)

    @rule(data=st.data(), share=st.integers(1, 100))
    @act
    def refund_in_the_processors_dashboard(self, data: st.DataObject, share: int) -> None:
        gateway = get_gateway()
        paid = [r for t in self.subs if not t.unstarted for r in self._receipts(t) if r.ChargeId]
        left = {r.ChargeId: r.ProcessedAmount - sum(x.amount for x in gateway.refunds_of(r.ChargeId)) for r in paid}
        paid = [r for r in paid if left[r.ChargeId] > 0]
        if not paid:
            return
        receipt = data.draw(st.sampled_from(paid))
        refund = gateway.refund(receipt.ChargeId, max(1, left[receipt.ChargeId] * share // 100),
                                "dashboard-" + secrets.token_hex(6), "requested_by_customer")
        assert refund.status == "succeeded"
        self.dashboard_refunds.add(refund.refund_id)
        self.events.append(self._event("charge.refunded", {"id": "ch_" + receipt.ChargeId, "object": "charge",
                                                           "payment_intent": receipt.ChargeId}))

    @rule(data=st.data(), again=st.booleans())
    @act
    def the_processor_delivers_an_event(self, data: st.DataObject, again: bool) -> None:
        """Any queued event, in any order; ``again``: it stays queued (a redelivery)."""
        self._announce()
        if not self.events:
            return
        event = data.draw(st.sampled_from(self.events))
        if self._deliver(event) and not again:
            self.events.remove(event)

    # --- checks -----------------------------------------------------------------------

    @invariant()
    def waiting_charges_are_made_once_per_period(self) -> None:
        periods = Counter((c["metadata"]["sub_id"], c["metadata"]["period_start"], c["metadata"]["attempt"])
                          for c in get_gateway().charges_made() if c["metadata"].get("kind") != "switch")
        assert max(periods.values(), default=1) == 1, "one attempt of one period charged twice"

    @invariant()
    def refunds_match(self, final: bool = False) -> None:
        gateway = get_gateway()
        for tracked in self.subs:
            for receipt in self._receipts(tracked):
                if not receipt.ChargeId:
                    continue
                made = {r.refund_id: r.amount for r in gateway.refunds_of(receipt.ChargeId)}
                recorded = {r.RefundId: int(r.Amount) for r in receipt.Refunds or []}
                assert receipt.RefundedAmount == sum(recorded.values()) <= receipt.ProcessedAmount  # M5
                assert recorded.items() <= made.items(), "a refund on the receipt the gateway never made"
                missing = made.keys() - recorded.keys()
                assert missing <= (set() if final else self.dashboard_refunds), "a refund rpay made, unrecorded"


def test_money_rules_hold_when_banks_ask_and_events_come_in_any_order(moto_table, tmp_path) -> None:
    model.LEDGER_DIR = str(tmp_path)
    run_state_machine_as_test(AuthenticationMachine, settings=model.settings.get_profile(model.PROFILE))
