"""The usage a charge billed, as its metadata carries it (docs/USAGE.md "Billing a
period"): what the receipt records whoever records the charge (the run, a webhook, the
reconciliation), since a replayed key returns the first call's metadata."""

from __future__ import annotations

from billing.rules.projection import MeteredUsage

USAGE_KEYS = ("price", "meter", "quantity", "amount")
# A subscription's metered prices at most: a charge carries 4 metadata keys a price more
# than the first's 6 (``usage_metadata``), within the processor's 50 with the rest it
# carries, as Stripe's subscriptions hold 20 items.
MAX_METERED_PRICES = 5


def _prefix(n: int) -> str:
    """The metadata keys of the ``n``-th usage (from 0): ``usage_`` for the first (as
    every charge before several metered prices carried it), ``usage2_`` on."""
    return "usage_" if n == 0 else f"usage{n + 1}_"


def usage_metadata(usages: tuple[MeteredUsage, ...]) -> dict[str, str]:
    """The usage a charge carries in its metadata: recorded as charged (a replayed key
    returns the first call's). The days are the period's, from the first day any usage
    bills to the day after the last (a price removed now bills fewer of them), so each
    usage carries its price, meter, quantity and amount alone: 6 keys and 4 more a metered
    price (Stripe allows 50 keys: ``MAX_METERED_PRICES`` keeps within them)."""
    if not usages:
        return {}
    days = {"usage_start": min(u.start for u in usages).isoformat(),
            "usage_end": max(u.end for u in usages).isoformat()}
    return days | {f"{_prefix(n)}{key}": value for n, usage in enumerate(usages)
                   for key, value in zip(USAGE_KEYS, (usage.price_id, usage.meter, str(usage.quantity),
                                                      str(usage.amount)), strict=True)}


def usage_records(metadata: dict[str, str]) -> list[dict[str, str]]:
    """The usages a charge's metadata names, in order: each one's ``price``, ``meter``,
    ``quantity`` and ``amount`` (strings, as carried)."""
    found: list[dict[str, str]] = []
    while (prefix := _prefix(len(found))) + "price" in metadata:
        found.append({key: metadata[prefix + key] for key in USAGE_KEYS})
    return found


def usage_keys(metadata: dict[str, str]) -> dict[str, str] | None:
    """The keys of ``metadata`` that say what usage the charge billed (None: none)."""
    return {k: v for k, v in metadata.items() if k.startswith("usage")} or None
