"""Finish or roll back what a crash left half-way (``manage.py reconcile_checkouts``).

Every checkout that still has a card to charge, and every cancellation or refund that
still has a card refund to make, has a journal entry (``PendingAction``) written in the
same transaction as the order change. This walks the entries older than a grace period
(so it does not race a checkout in progress) and settles each: the card is charged or
refunded under the same idempotency key as the first attempt, so nothing happens twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from shop.access.checkout_writes import get_pending_actions
from shop.checkout import settle
from shop.clock import iso, utc_now
from shop.data_rights import erase_settled_order
from shop.errors import CardDeclined, PaymentPending, ShopError


@dataclass
class ReconcileSummary:
    finished: list[str] = field(default_factory=list)
    rolled_back: list[str] = field(default_factory=list)
    still_pending: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        return ([f"finished {o}" for o in self.finished] + [f"rolled back {o}" for o in self.rolled_back]
                + [f"still pending {o}" for o in self.still_pending] + [f"failed {o}" for o in self.failed])


def reconcile(older_than: timedelta = timedelta(minutes=5)) -> ReconcileSummary:
    from shop.fulfilment import finish_refund  # refunds and cancellations

    summary = ReconcileSummary()
    # '~' sorts after every "<at>#<orderId>" key of that second: older_than=0 takes all.
    for entry in get_pending_actions(iso(utc_now() - older_than) + "~"):
        label = f"{entry.Kind} {entry.OrderId}"
        try:
            if entry.Kind == "checkout":
                settle(entry.OrderId)
                erase_settled_order(entry.OrderId)  # its account closed while it waited
            else:
                finish_refund(entry.OrderId, entry.Kind)
            summary.finished.append(label)
        except CardDeclined:
            erase_settled_order(entry.OrderId)
            summary.rolled_back.append(label)
        except PaymentPending:
            summary.still_pending.append(label)
        except ShopError as error:
            summary.failed.append(f"{label}: {error}")
    return summary
