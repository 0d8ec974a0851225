"""The demo's metered subscription cancelled at its period's end (docs/USAGE.md "What the
customer is told"): a demo customer of its own, ``ending@example.com`` (log-in password as
the demo customer's), subscribed today to the ``API-ACCESS`` metered price alone, with
1,500 calls today, then cancelled at the end of its period. Its page shows no next payment
but its last usage charge, the day after its last day, as it stands (500 calls above the
free 1,000: about $1.00), and the API's upcoming payment is that charge. Runs after the
usage-alone part (its name sorts after it). Safe to run twice: its subscription, live or
ending, is left as it is, and the calls' identifiers are fixed."""

from __future__ import annotations

from datetime import date

from billing.actions import lifecycle
from billing.management.demo.usage_alone import subscribed_alone

EMAIL = "ending@example.com"
CALLS = ((3, 900), (11, 600))  # (hour, calls) today: 1,500 in all


def seed(today: date) -> list[str]:
    lines, sub = subscribed_alone(today, EMAIL, CALLS, "ending", "usage ending")
    if sub is not None and sub.is_live:
        lifecycle.cancel_at_period_end(sub, today=today, actor=EMAIL, reason="not_using")
        lines.append(f"usage ending: {EMAIL}'s subscription cancelled at its period's end, {sub.PaidThroughDate}: "
                     "its last usage is charged the day after")
    return lines
