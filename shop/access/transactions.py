"""A TransactWrite that remembers what each of its items is, so that a cancelled
transaction can say which condition failed (CancellationReasons are positional)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pynamodb.exceptions import CancellationReason, TransactWriteError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action
from pynamodb.transactions import TransactWrite

from core.dynamo import engine
from shop.models import ShopItem

Label = tuple[str, ...]


@dataclass
class Failure:
    """One item's reason for a cancelled transaction."""

    label: Label
    code: str  # ConditionalCheckFailed | TransactionConflict | ...
    item: dict[str, Any] | None  # the item as it was (ReturnValuesOnConditionCheckFailure=ALL_OLD)

    def number(self, attr: str) -> int | None:
        value = (self.item or {}).get(attr, {}).get("N")
        return int(value) if value is not None else None

    def text(self, attr: str) -> str | None:
        return (self.item or {}).get(attr, {}).get("S")


class Cancelled(Exception):
    """The transaction was cancelled; ``failures`` names each item that caused it."""

    def __init__(self, failures: list[Failure], idempotent_mismatch: bool = False) -> None:
        super().__init__(", ".join(f"{'/'.join(f.label)}: {f.code}" for f in failures) or "cancelled")
        self.failures = failures
        # The ClientRequestToken was used before with other parameters: the same checkout,
        # submitted again later (its timestamp differs), so it has been placed already.
        self.idempotent_mismatch = idempotent_mismatch

    def failed(self, kind: str) -> list[Failure]:
        return [f for f in self.failures if f.label[0] == kind and f.code == "ConditionalCheckFailed"]

    @property
    def conflict(self) -> bool:
        return any(f.code == "TransactionConflict" for f in self.failures)


class LabelledWrite:
    """Collect puts, updates and deletes with a label each; ``commit`` sends one
    TransactWriteItems and turns a cancellation into ``Cancelled``."""

    def __init__(self, client_request_token: str | None = None) -> None:
        self.token = client_request_token
        # PynamoDB sends condition checks, deletes, puts, then updates: keep that order.
        self._ops: dict[str, list[tuple[Label, Callable[[TransactWrite], None]]]] = {
            "check": [], "delete": [], "put": [], "update": []}

    def __len__(self) -> int:
        return sum(len(ops) for ops in self._ops.values())

    def check(self, label: Label, item: ShopItem, condition: Condition) -> None:
        self._ops["check"].append((label, lambda tx: tx.condition_check(type(item), item.PK, item.SK, condition)))

    def put(self, label: Label, item: ShopItem, condition: Condition | None = None) -> None:
        self._ops["put"].append((label, lambda tx: tx.save(item, condition=condition, return_values="ALL_OLD")))

    def update(self, label: Label, item: ShopItem, actions: list[Action], condition: Condition | None = None) -> None:
        self._ops["update"].append((label, lambda tx: tx.update(item, actions, condition=condition,
                                                               return_values="ALL_OLD")))

    def delete(self, label: Label, item: ShopItem, condition: Condition | None = None) -> None:
        self._ops["delete"].append((label, lambda tx: tx.delete(item, condition=condition)))

    def labels(self) -> list[Label]:
        return [label for kind in ("check", "delete", "put", "update") for label, _ in self._ops[kind]]

    def commit(self) -> None:
        connection = engine.engine()
        try:
            with TransactWrite(connection=connection, client_request_token=self.token) as tx:
                for kind in ("check", "delete", "put", "update"):
                    for _, add in self._ops[kind]:
                        add(tx)
        except TransactWriteError as error:
            code = error.cause_response_code
            if code == "IdempotentParameterMismatchException":
                raise Cancelled([], idempotent_mismatch=True) from error
            if code == "TransactionInProgressException":
                # The same ClientRequestToken is being written right now (a double submit).
                raise Cancelled([Failure(("transaction",), "TransactionConflict", None)]) from error
            if code != "TransactionCanceledException":
                raise
            failures = [
                Failure(label, reason.code, reason.raw_item)
                for label, reason in zip(self.labels(), error.cancellation_reasons, strict=False)
                if isinstance(reason, CancellationReason)
            ]
            raise Cancelled(failures) from error
