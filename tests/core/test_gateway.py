"""The simulated gateway: idempotency keys, decline replay, charges_made, across connections."""

from __future__ import annotations

import threading

import pytest

from core.payments.errors import CardError
from core.payments.simulated import AUTHENTICATING_TEST_CARD, SimulatedGateway
from tests.builders import at_once


@pytest.fixture
def gateway(tmp_path) -> SimulatedGateway:
    return SimulatedGateway(ledger_path=str(tmp_path / "ledger.sqlite3"))


def test_a_repeated_key_replays_the_first_result(gateway) -> None:
    tok = gateway.tokenize_card("4242 4242 4242 4242", 12, 2030, "123")
    first = gateway.charge(tok.token, 999, "usd", "sub1:2027-03-15", {"sub_id": "sub1", "billing_date": "2027-03-15"})
    again = gateway.charge(tok.token, 999, "USD", "sub1:2027-03-15", {"sub_id": "sub1", "billing_date": "2027-03-15"})
    assert first.succeeded and again == first
    assert len(gateway.charges_made(sub_id="sub1", billing_date="2027-03-15")) == 1
    assert gateway.charges_made(sub_id="other") == []


def test_a_decline_is_replayed_for_its_key_so_a_retry_needs_a_new_key(gateway) -> None:
    bad = gateway.tokenize_card("4000000000000002", 12, 2030, "123")
    good = gateway.tokenize_card("4242424242424242", 12, 2030, "123")
    declined = gateway.charge(bad.token, 500, "EUR", "s:2027-01-15")
    assert not declined.succeeded and declined.decline_code == "card_declined"
    # The card was replaced, but the same key replays the decline:
    assert gateway.charge(good.token, 500, "EUR", "s:2027-01-15") == declined
    assert gateway.charge(good.token, 500, "EUR", "s:2027-01-15:retry1").succeeded


def test_two_processes_racing_on_a_key_make_one_charge(tmp_path) -> None:
    path = str(tmp_path / "shared.sqlite3")
    gateways = [SimulatedGateway(ledger_path=path) for _ in range(2)]
    tok = gateways[0].tokenize_card("4242424242424242", 12, 2030, "123")
    results = []

    def charge(g: SimulatedGateway) -> None:
        for n in range(100):
            results.append(g.charge(tok.token, 100, "USD", f"k{n}", {"sub_id": f"s{n}"}))

    threads = [threading.Thread(target=charge, args=(g,)) for g in gateways for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(gateways[1].charges_made()) == 100
    assert len({r.charge_id for r in results}) == 100


def test_many_connections_opening_a_new_ledger_at_once_all_get_in(tmp_path) -> None:
    # Turning a new ledger to WAL needs an exclusive lock that SQLite's busy timeout does
    # not wait for: threads of one gateway, and of two (two processes), open it together.
    for attempt in range(15):
        path = str(tmp_path / f"new-{attempt}.sqlite3")
        turns = iter([SimulatedGateway(ledger_path=path) for _ in range(2)] * 4)  # each thread takes one
        tokens = at_once(lambda turns=turns: next(turns).tokenize_card("4242424242424242", 12, 2030, "123"), 8)
        assert len(tokens) == 8


def test_a_threads_first_call_may_be_one_that_writes_under_the_lock(gateway) -> None:
    # A web request runs in a new thread: its first gateway call may be a cancel or the
    # bank's answer, which open the thread's connection while they hold the write lock.
    token = gateway.tokenize_card(AUTHENTICATING_TEST_CARD, 12, 2030, "123")
    waiting = gateway.charge(token.token, 500, "EUR", "s:2027-01-15")
    answered: list = []
    thread = threading.Thread(target=lambda: answered.append(gateway.cancel_charge(waiting.charge_id)), daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the thread waits for a lock it holds"
    assert answered[0].decline_code == "canceled"


def test_card_numbers_are_checked(gateway) -> None:
    with pytest.raises(CardError):
        gateway.tokenize_card("4242424242424241", 12, 2030, "123")
    tok = gateway.tokenize_card("4000000000009995", 1, 2031, "999")
    assert (tok.brand, tok.last4) == ("Visa", "9995")
    assert gateway.charge(tok.token, 100, "USD", "x").decline_code == "insufficient_funds"
