"""The simulated gateway: a card processor on a SQLite ledger, for development, tests and
the crash-injection proofs of exactly-once payments."""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar

from django.views.decorators.debug import sensitive_variables

from core.payments.errors import CardError, GatewayError
from core.payments.gateway import (
    CardEntry,
    CardToken,
    ChargeResult,
    PaymentGateway,
    RefundResult,
    card_brand,
    luhn_valid,
    normalize_card_number,
)

# In the manner of the well-known processor test cards: these numbers tokenize but
# are declined when charged, with the decline code given.
DECLINING_TEST_CARDS = {
    "4000000000000002": "card_declined",
    "4000000000009995": "insufficient_funds",
    "4000000000000069": "expired_card",
    "4000000000000341": "card_declined",
}

# Like Stripe's "authentication required" test card (4000 0027 6000 3184): its bank asks
# the cardholder to confirm every charge (3-D Secure), on-session (a first payment, a
# shop checkout) as off-session (a renewal); the charge waits (``requires_action``) until
# ``authenticate`` answers for them: the simulated bank's page.
AUTHENTICATING_TEST_CARD = "4000002760003184"
AUTHENTICATION_REQUIRED = "authentication_required"

# The issuing country of the test cards, as Stripe's test mode gives ``card.country``
# (its "cards by country" list: 4000 00 + the ISO 3166 numeric code): the tax evidence
# beside the customer's declared billing country. A number not listed has none.
TEST_CARD_COUNTRIES = {
    "4242424242424242": "US", "4000056655665556": "US", "5555555555554444": "US",
    "2223003122003222": "US", "5200828282828210": "US", "378282246310005": "US",
    "4000000000000002": "US", "4000000000009995": "US", "4000000000000069": "US",
    "4000000000000341": "US",
    "4000002760003184": "DE",  # the 3-D Secure card is a German one
    "4000000400000008": "AT", "4000000560000004": "BE", "4000002080000001": "DK",
    "4000002460000001": "FI", "4000002500000003": "FR", "4000002760000016": "DE",
    "4000003720000005": "IE", "4000003800000008": "IT", "4000004420000006": "LU",
    "4000005280000002": "NL", "4000006200000007": "PT", "4000007240000007": "ES",
    "4000007520000008": "SE", "4000007560000009": "CH", "4000008260000000": "GB",
    "4000005780000007": "NO", "4000001240000000": "CA", "4000003920000003": "JP",
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    token TEXT PRIMARY KEY, brand TEXT NOT NULL, last4 TEXT NOT NULL,
    exp_month INTEGER NOT NULL, exp_year INTEGER NOT NULL, decline_code TEXT
);
CREATE TABLE IF NOT EXISTS charges (
    idempotency_key TEXT PRIMARY KEY, charge_id TEXT NOT NULL UNIQUE, token TEXT NOT NULL,
    amount INTEGER NOT NULL, currency TEXT NOT NULL, status TEXT NOT NULL,
    decline_code TEXT, metadata TEXT NOT NULL, created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS refunds (
    idempotency_key TEXT PRIMARY KEY, refund_id TEXT NOT NULL UNIQUE,
    charge_id TEXT NOT NULL, amount INTEGER NOT NULL, status TEXT NOT NULL,
    reason TEXT, created TEXT NOT NULL
);
"""


def _with_busy_retry(statement: Callable[[], object], *, seconds: float = 30) -> None:
    """Run ``statement``, again while another connection holds the lock it needs."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            statement()
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@dataclass
class SimulatedGateway(PaymentGateway):
    """A card processor simulated on a SQLite ledger.

    The ledger is a file, so idempotency holds across process restarts and between
    two batch processes running at once: the same key returns the recorded result
    and charges nothing more. ``latency_ms`` adds a delay per charge or refund, to
    benchmark the batch against a realistic processor: half on the request's way and half
    on the answer's, so money has moved while its answer is still on its way (the window
    the payment run's reconciliation exists for, as with a real processor).
    """

    ledger_path: str
    latency_ms: int = 0
    keeps_ledger: ClassVar[bool] = True  # get_gateway gives it the ledger's path and latency
    collects_card_in_browser: ClassVar[bool] = False  # rpay's own card fields (core/cardforms.py)
    _local: threading.local = field(default_factory=threading.local, repr=False)
    # SQLite lets one writer in at a time; a writer that finds the lock taken sleeps in
    # growing steps (1, 2, 5, 10 ms...). Threads of one process queue on this lock
    # instead, so a batch with many workers does not stall on the ledger. Between
    # processes SQLite's own locking (busy timeout) still decides.
    _write_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Threads opening the ledger take turns (see _db). A lock of its own: _db may be
    # called while _write_lock is held, by a thread's first write.
    _open_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self.ledger_path != ":memory:":
                Path(self.ledger_path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.ledger_path, timeout=60, isolation_level=None)
            # Switching a new ledger to WAL takes an exclusive lock that SQLite's busy
            # timeout does not wait for: threads opening the ledger together take turns
            # (the open lock), and another process doing the same is waited for here.
            with self._open_lock:
                _with_busy_retry(lambda: conn.execute("PRAGMA journal_mode=WAL"))
                # A simulator: it must survive a killed process (WAL does), not a power cut,
                # so no fsync, which would stall every worker behind one checkpoint.
                conn.execute("PRAGMA synchronous=OFF")
                _with_busy_retry(lambda: conn.executescript(_SCHEMA))
            self._local.conn = conn
        return conn

    def _charge_by_key(self, idempotency_key: str) -> ChargeResult | None:
        row = self._db().execute(
            f"SELECT {_CHARGE_COLUMNS} FROM charges WHERE idempotency_key = ?", (idempotency_key,),
        ).fetchone()
        return _charge_result(row) if row else None

    def _refund_by_key(self, idempotency_key: str) -> RefundResult | None:
        row = self._db().execute(
            "SELECT refund_id, charge_id, amount, status, reason FROM refunds "
            "WHERE idempotency_key = ?", (idempotency_key,),
        ).fetchone()
        return _refund_result(row) if row else None

    def _sleep(self) -> None:
        """One way of a round trip: half the latency."""
        if self.latency_ms:
            time.sleep(self.latency_ms / 2000)

    # All variables, in this frame and (in Django's error reports) the helpers below it.
    @sensitive_variables()
    def tokenize_card(self, number: str, exp_month: int, exp_year: int, cvc: str, *, customer: str = "") -> CardToken:
        number = normalize_card_number(number)
        if not luhn_valid(number):
            raise CardError("That card number is not valid.")
        now = datetime.now(tz=UTC)
        if not 1 <= int(exp_month) <= 12:
            raise CardError("The expiry month must be 1-12.", field="exp_month")
        if (int(exp_year), int(exp_month)) < (now.year, now.month):
            raise CardError("This card has expired.", field="exp_year")
        cvc_len = 4 if card_brand(number) == "American Express" else 3
        if not (str(cvc).isdigit() and len(str(cvc)) == cvc_len):
            raise CardError(f"The security code must be {cvc_len} digits.", field="cvc")
        token = CardToken(
            token="tok_sim_" + secrets.token_hex(12),
            brand=card_brand(number),
            last4=number[-4:],
            exp_month=int(exp_month),
            exp_year=int(exp_year),
            country=TEST_CARD_COUNTRIES.get(number),
        )
        self._db().execute(
            "INSERT INTO tokens VALUES (?, ?, ?, ?, ?, ?)",
            (token.token, token.brand, token.last4, token.exp_month, token.exp_year,
             AUTHENTICATION_REQUIRED if number == AUTHENTICATING_TEST_CARD else DECLINING_TEST_CARDS.get(number)),
        )
        return token

    def place_charge(self, token: str, amount: int, currency: str, idempotency_key: str,
                     metadata: dict[str, str] | None, *, off_session: bool) -> ChargeResult:
        db = self._db()
        if existing := self._charge_by_key(idempotency_key):
            return existing
        self._sleep()
        row = db.execute("SELECT decline_code FROM tokens WHERE token = ?", (token,)).fetchone()
        decline_code = "invalid_token" if row is None else row[0]
        status = "declined" if decline_code else "succeeded"
        if decline_code == AUTHENTICATION_REQUIRED:
            status = "requires_action"
        created = datetime.now(tz=UTC).isoformat(timespec="seconds")
        charge_id = "ch_sim_" + secrets.token_hex(12)
        # INSERT OR IGNORE + re-read: two processes racing on one key both get the
        # first writer's result, and only one charge exists.
        with self._write_lock:
            db.execute(
                "INSERT OR IGNORE INTO charges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (idempotency_key, charge_id, token, amount, currency.upper(), status,
                 decline_code, json.dumps(metadata or {}, sort_keys=True), created),
            )
        stored = self._charge_by_key(idempotency_key)
        assert stored is not None  # inserted above, by us or by the racer that won
        self._sleep()  # the answer's way back
        return stored

    def cancel_charge(self, charge_id: str) -> ChargeResult:
        """A charge waiting for the cardholder is cancelled (declined, ``canceled``); any
        other stays as it is."""
        self._answer_waiting(charge_id, "declined", "canceled")
        return self.charge_status(charge_id)

    def authenticate(self, charge_id: str, *, approve: bool) -> ChargeResult:
        """The simulated bank's page: the cardholder confirms (or refuses) a charge that
        waits for them; the charge as it is after (a replay changes nothing)."""
        if approve:
            self._answer_waiting(charge_id, "succeeded", None)
        else:
            self._answer_waiting(charge_id, "declined", "authentication_failed")
        return self.charge_status(charge_id)

    def _answer_waiting(self, charge_id: str, status: str, decline_code: str | None) -> None:
        with self._write_lock:
            self._db().execute("UPDATE charges SET status = ?, decline_code = ? "
                               "WHERE charge_id = ? AND status = 'requires_action'", (status, decline_code, charge_id))

    def charge_status(self, charge_id: str) -> ChargeResult:
        row = self._db().execute(f"SELECT {_CHARGE_COLUMNS} FROM charges WHERE charge_id = ?", (charge_id,)).fetchone()
        if row is None:
            raise GatewayError(f"no such charge {charge_id}")
        return _charge_result(row)

    # Cards are entered in rpay's own fields and tokenized here: no processor customer, no
    # browser step (``collects_card_in_browser`` is False, so the pages never ask).
    def create_customer(self, account_id: str, email: str) -> str:
        return ""

    def start_card_entry(self, customer: str) -> CardEntry:
        raise NotImplementedError("the simulated gateway takes cards in rpay's own form")

    def saved_card(self, customer: str, setup_intent_id: str) -> CardToken:
        raise NotImplementedError("the simulated gateway takes cards in rpay's own form")

    def forget_card(self, token: str) -> None:
        """Nothing to detach: a token is only a row of the ledger."""

    def delete_customer(self, customer: str) -> None:
        """No customers here (``create_customer`` answers "")."""

    def customer_account(self, customer: str) -> str:
        """No customers here (``create_customer`` answers ""), so none is any account's."""
        return ""

    def refund(
        self, charge_id: str, amount: int, idempotency_key: str, reason: str = ""
    ) -> RefundResult:
        db = self._db()
        if existing := self._refund_by_key(idempotency_key):
            return existing
        self._sleep()
        charge = db.execute(
            "SELECT amount, status FROM charges WHERE charge_id = ?", (charge_id,)
        ).fetchone()
        refunded = db.execute(
            "SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE charge_id = ? AND status = 'succeeded'",
            (charge_id,),
        ).fetchone()[0]
        if charge is None or charge[1] != "succeeded":
            status, why = "failed", "no such successful charge"
        elif amount <= 0 or refunded + amount > charge[0]:
            status, why = "failed", "refund exceeds the amount charged"
        else:
            status, why = "succeeded", reason or None
        refund_id = "re_sim_" + secrets.token_hex(12)
        db.execute(
            "INSERT OR IGNORE INTO refunds VALUES (?, ?, ?, ?, ?, ?, ?)",
            (idempotency_key, refund_id, charge_id, amount, status, why,
             datetime.now(tz=UTC).isoformat(timespec="seconds")),
        )
        stored = self._refund_by_key(idempotency_key)
        assert stored is not None
        self._sleep()
        return stored

    def refunds_of(self, charge_id: str) -> list[RefundResult]:
        rows = self._db().execute(
            "SELECT refund_id, charge_id, amount, status, reason FROM refunds WHERE charge_id = ? AND status = 'succeeded'",
            (charge_id,)).fetchall()
        return [_refund_result(row) for row in rows]

    def list_charges(self, created_from: date, created_to: date, **metadata: str) -> list[ChargeResult]:
        rows = self._db().execute(
            f"SELECT {_CHARGE_COLUMNS} FROM charges WHERE substr(created, 1, 10) BETWEEN ? AND ? "
            "ORDER BY created, charge_id", (created_from.isoformat(), created_to.isoformat()),
        ).fetchall()
        refunded = dict(self._db().execute(
            "SELECT charge_id, SUM(amount) FROM refunds WHERE status = 'succeeded' GROUP BY charge_id").fetchall())
        charges = [replace(_charge_result(row), refunded=refunded.get(row[0], 0)) for row in rows]
        return [c for c in charges if all(c.metadata.get(k) == v for k, v in metadata.items())]

    # --- for tests and benchmarks ---------------------------------------------------

    def charges_made(self, **metadata: str) -> list[dict[str, Any]]:
        """Every charge really made whose metadata contains all the given pairs."""
        rows = self._db().execute(
            "SELECT idempotency_key, charge_id, amount, currency, status, metadata FROM charges"
        ).fetchall()
        out = []
        for key, charge_id, amount, currency, status, meta in rows:
            meta = json.loads(meta)
            if all(meta.get(k) == v for k, v in metadata.items()):
                out.append({"idempotency_key": key, "charge_id": charge_id, "amount": amount,
                            "currency": currency, "status": status, "metadata": meta})
        return out


    def refunds_made(self, charge_id: str | None = None) -> list[dict[str, Any]]:
        """Every successful refund (of one charge, if given), with its idempotency key."""
        rows = self._db().execute(
            "SELECT idempotency_key, refund_id, charge_id, amount FROM refunds WHERE status = 'succeeded'"
        ).fetchall()
        return [{"idempotency_key": key, "refund_id": refund_id, "charge_id": charge, "amount": amount}
                for key, refund_id, charge, amount in rows if charge_id in (None, charge)]

def _refund_result(row: tuple) -> RefundResult:
    refund_id, charge_id, amount, status, reason = row
    return RefundResult(status=status, refund_id=refund_id, charge_id=charge_id, amount=amount, reason=reason)


_CHARGE_COLUMNS = "charge_id, amount, currency, status, decline_code, created, metadata"


def _charge_result(row: tuple) -> ChargeResult:
    charge_id, amount, currency, status, decline_code, created, metadata = row
    # The secret a page would hand the bank's confirmation (never a card detail).
    secret = f"{charge_id}_secret_sim" if status == "requires_action" else ""
    return ChargeResult(status=status, charge_id=charge_id, amount=amount, currency=currency,
                        decline_code=decline_code, created=created, metadata=json.loads(metadata),
                        client_secret=secret)
