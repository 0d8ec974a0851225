"""The demo's revenue history (docs/ANALYTICS.md): eighteen months of customers who
subscribed, upgraded, paused, fell past due and paid again, left, and came back, so the
staff Revenue page shows real shapes (movements in every month, cohorts that decay, a
trial that converted, a failed payment recovered).

Written the way the figures read it: each subscription's audit events with the snapshot of
its state after each change, at the time the change happened (``billing.access.past``).
The customers still paying today subscribe through the portal's own path (a demo card, a
first payment today) and are then dated from their past; the ones who left are written as
ended subscriptions. Nothing changes today, so the month under way keeps the main demo's
movements. Safe to run twice: once the first history customer has an account, it stops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from django.contrib.auth import get_user_model

from billing import access
from billing.access.past import PastChange, ended_subscription, write_subscription_past
from billing.actions import subscriptions as subscribing
from billing.actions.accounts import payment_customer
from billing.management.commands.seed_demo import DEMO_CARDS, SEED_ACTOR, access_token
from billing.models import AuditAction
from billing.rules.schedule import add_months
from core.payments.demo_cards import demo_card
from core.payments.gateway import get_gateway

MONTHS = 18
EMAIL = "history-{:02d}@rpay.localhost"
PRODUCTS = {"BASIC": ("HISTORY-BASIC", "Studio Basic"), "PRO": ("HISTORY-PRO", "Studio Pro")}


@dataclass(frozen=True)
class Step:
    """A change ``months`` months and ``day`` days after the subscription started."""

    months: int
    kind: str  # upgrade, downgrade, pause, resume, past_due, recovered, cancel
    amount: int | None = None


@dataclass(frozen=True)
class Story:
    started: int  # months before today
    currency: str
    amount: int
    steps: tuple[Step, ...] = ()
    trial_days: int = 0
    comes_back: int | None = None  # months before today it came back (a second subscription, still paying)
    back_amount: int = 0
    live: bool = False  # still paying today (its last step leaves it active)


# Twelve customers over eighteen months, in three currencies.
STORIES = (
    Story(17, "USD", 1900, (Step(4, "upgrade", 4900),), live=True),
    Story(16, "USD", 1900, (Step(3, "cancel"),), comes_back=6, back_amount=1900),
    Story(15, "EUR", 2900, (Step(5, "pause"), Step(7, "resume")), live=True),
    Story(14, "USD", 4900, (Step(2, "past_due"), Step(2, "recovered"), Step(9, "downgrade", 1900)), live=True),
    Story(13, "GBP", 1500, (Step(6, "cancel"),)),
    Story(12, "EUR", 2900, (Step(1, "upgrade", 5900), Step(8, "cancel"))),
    Story(10, "USD", 1900, (), trial_days=14, live=True),
    Story(9, "USD", 4900, (Step(2, "past_due"), Step(3, "cancel"))),
    Story(8, "GBP", 1500, (Step(3, "upgrade", 3500),), live=True),
    Story(6, "EUR", 2900, (Step(2, "cancel"),), comes_back=2, back_amount=5900),
    Story(4, "USD", 1900, (Step(1, "upgrade", 4900),), live=True),
    Story(2, "GBP", 3500, (), live=True),
)


@dataclass
class Timeline:
    """A subscription's snapshots as they are built, one per change."""

    currency: str
    amount: int
    product: str
    changes: list[PastChange] = field(default_factory=list)
    state: dict = field(default_factory=dict)

    def snapshot(self, **fields: object) -> dict:
        self.state = {**self.state, **fields}
        return dict(self.state)

    def add(self, day: date, action: AuditAction, **fields: object) -> None:
        before = dict(self.state) or None
        self.changes.append(PastChange(noon(day), action, self.snapshot(**fields), before))


def noon(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 12, tzinfo=UTC)


def months_before(today: date, months: int, day: int = 5) -> date:
    year, month = add_months(today.year, today.month, -months)
    return date(year, month, min(day, 28))


def timeline(story: Story, start: date, today: date) -> tuple[Timeline, date | None]:
    """The changes of a story's first subscription, and the day it ended (None: live)."""
    product = PRODUCTS["PRO" if story.amount >= 4900 else "BASIC"][1]
    line = Timeline(story.currency, story.amount, product)
    trial_end = start + timedelta(days=story.trial_days - 1) if story.trial_days else None
    line.add(start, AuditAction.SUBSCRIPTION_CREATED, Status="active", PaymentAmount=story.amount,
             Currency=story.currency, ProductName=product, PaymentDay=start.day, PaidThroughDate=None,
             PausedFrom=None, PausedUntil=None, **({"TrialEnd": trial_end.isoformat()} if trial_end else {}))
    ended = None
    for step in story.steps:
        day = min(months_before(today, story.started - step.months, start.day + (3 if step.kind == "recovered" else 0)),
                  today - timedelta(days=1))
        if step.kind in ("upgrade", "downgrade"):
            line.add(day, AuditAction.SUBSCRIPTION_SWITCHED, PaymentAmount=step.amount)
        elif step.kind == "pause":
            line.add(day, AuditAction.SUBSCRIPTION_PAUSED, PausedFrom=day.isoformat(), PausedUntil=None)
        elif step.kind == "resume":
            line.add(day, AuditAction.SUBSCRIPTION_RESUMED, PausedFrom=None, PausedUntil=None)
        elif step.kind == "past_due":
            line.add(day, AuditAction.PAYMENT_DECLINED, Status="past_due")
        elif step.kind == "recovered":
            line.add(day, AuditAction.PAYMENT_SUCCEEDED, Status="active")
        elif step.kind == "cancel":
            line.add(day, AuditAction.SUBSCRIPTION_CANCELLED, Status="cancelled", PaidThroughDate=day.isoformat())
            ended = day
    return line, ended


def customer(n: int) -> access.Account:
    users = get_user_model().objects
    user = users.filter(email__iexact=EMAIL.format(n)).order_by("pk").first()
    if user is None:  # a customer of the history: nobody logs in as them (no usable password)
        user = users.create_user(EMAIL.format(n), email=EMAIL.format(n), password=None)
    return access.create_account(EMAIL.format(n), user_id=user.pk, name=f"History customer {n}")


def live_subscription(account: access.Account, line: Timeline, today: date):
    """Subscribed today through the portal's own path (a demo card, the first payment),
    at the amount the story ends on."""
    sku = next(s for s, name in PRODUCTS.values() if name == line.product)
    card = access.add_card(account.account_id, demo_card(get_gateway(), "visa", customer=payment_customer(account)),
                           DEMO_CARDS[0][1], actor=SEED_ACTOR)
    started = subscribing.subscribe(
        account, sku=sku, product_name=line.product, payment_day=today.day, amount=line.state["PaymentAmount"],
        currency=line.currency, card=access_token(card), today=today, actor=SEED_ACTOR,
        billing_address=card.Details.BillingAddress, card_id=card.card_id)
    return started.sub if started.started else None


def seed(today: date) -> list[str]:
    first = get_user_model().objects.filter(email__iexact=EMAIL.format(1)).order_by("pk").first()
    if first is not None and access.get_account_id_for_user(first.pk):
        return [f"revenue history: {len(STORIES)} customers over {MONTHS} months already there"]
    kept = 0
    for n, story in enumerate(STORIES, 1):
        account = customer(n)
        start = months_before(today, story.started, 3 + n)
        line, ended = timeline(story, start, today)
        sku = next(s for s, name in PRODUCTS.values() if name == line.product)
        if ended is not None or not story.live:
            end = ended or today - timedelta(days=1)
            sub = ended_subscription(account.account_id, f"hist{n:02d}a", sku=sku, product_name=line.product,
                                     email=account.Email, payment_day=start.day, amount=line.state["PaymentAmount"],
                                     currency=line.currency, created=noon(start), paid_through=end)
            write_subscription_past(sub, line.changes, actor=SEED_ACTOR, created=noon(start), item=True)
        else:
            sub = live_subscription(account, line, today)
            if sub is None:
                continue
            write_subscription_past(sub, line.changes, actor=SEED_ACTOR, created=noon(start))
            kept += 1
        if story.comes_back is not None:
            back = months_before(today, story.comes_back, 10)
            again = Timeline(line.currency, story.back_amount, line.product)
            again.add(back, AuditAction.SUBSCRIPTION_CREATED, Status="active", PaymentAmount=story.back_amount,
                      Currency=line.currency, ProductName=line.product, PaymentDay=back.day, PaidThroughDate=None,
                      PausedFrom=None, PausedUntil=None)
            sub = live_subscription(account, again, today)
            if sub is not None:
                write_subscription_past(sub, again.changes, actor=SEED_ACTOR, created=noon(back))
                kept += 1
    return [f"revenue history: {len(STORIES)} customers over {MONTHS} months ({kept} still paying), "
            f"{EMAIL.format(1)} to {EMAIL.format(len(STORIES))}"]
