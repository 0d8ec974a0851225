"""Churn rates of a month and the retention cohorts (docs/ANALYTICS.md), from the MRR
steps of ``mrr.steps``. Pure: no I/O."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from billing.analytics.mrr import Movements, Step, levels_at, paying_customers

ONE_PLACE = Decimal("0.1")


def percent(part: int, whole: int) -> Decimal | None:
    """``part`` of ``whole`` in percent, to one decimal (None: nothing to divide by)."""
    if not whole:
        return None
    return (Decimal(part) * 100 / Decimal(whole)).quantize(ONE_PLACE, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class CustomerChurn:
    """Customers paying at the month's opening, and those of them not paying at its close
    (a customer who left and came back within the month is not lost)."""

    at_start: int
    lost: int

    @property
    def rate(self) -> Decimal | None:
        return percent(self.lost, self.at_start)


def customer_churn(steps: Sequence[Step], opening_day: date, closing_day: date) -> CustomerChurn:
    start = paying_customers(steps, opening_day)
    end = paying_customers(steps, closing_day)
    return CustomerChurn(len(start), len(start - end))


@dataclass(frozen=True)
class RevenueChurn:
    """One currency's MRR lost in the month over its opening MRR: gross (churn and
    contraction) and net (less expansion and reactivation: negative when the customers
    there at the start grew more than they shrank; new customers never count)."""

    currency: str
    opening: int
    lost: int
    regained: int

    @property
    def gross_rate(self) -> Decimal | None:
        return percent(self.lost, self.opening)

    @property
    def net_rate(self) -> Decimal | None:
        return percent(self.lost - self.regained, self.opening)


def revenue_churn(moved: dict[str, Movements]) -> list[RevenueChurn]:
    return [RevenueChurn(m.currency, m.opening, m.churn + m.contraction, m.expansion + m.reactivation)
            for m in moved.values()]


# --- cohorts -------------------------------------------------------------------------------


def month_of(day: date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


@dataclass(frozen=True)
class Cohort:
    """The customers whose first paying day fell in ``month``, and how many of them pay
    at the close of each month since: ``retained[0]`` is that month's own close."""

    month: str
    size: int
    retained: tuple[int, ...]
    # a cohort of one currency's first payments: its MRR in that currency at the same closes
    mrr: tuple[int, ...] | None = None

    @property
    def shares(self) -> tuple[Decimal | None, ...]:
        return tuple(percent(n, self.size) for n in self.retained)

    @property
    def mrr_shares(self) -> tuple[Decimal | None, ...]:
        """The cohort's MRR at each close as a share of its MRR at its own month's close
        (+0): its net MRR retention, expansion in it (over 100 % when it grew)."""
        if self.mrr is None:
            return ()
        return tuple(percent(amount, self.mrr[0]) for amount in self.mrr)


def first_paying_days(steps: Sequence[Step]) -> dict[str, date]:
    first: dict[str, date] = {}
    for step in steps:  # in order of day
        if step.after and step.customer not in first:
            first[step.customer] = step.day
    return first


def cohorts(steps: Sequence[Step], month_closes: Sequence[tuple[str, date]],
            label: Callable[[date], str] = month_of, *, with_mrr: bool = False) -> list[Cohort]:
    """One cohort per month of ``month_closes`` (months in order, each with the day its
    figures close on: its last day, or today for the current month). Another period (a
    quarter, a year, a day) when ``label`` names a day's period as ``month_closes`` does.
    ``with_mrr`` (the steps of one currency): each cohort's MRR at the same closes too."""
    members: dict[str, set[str]] = defaultdict(set)
    for customer, day in first_paying_days(steps).items():
        members[label(day)].add(customer)
    paying = {month: paying_customers(steps, close) for month, close in month_closes}
    levels = {month: customer_levels(steps, close) for month, close in month_closes} if with_mrr else {}
    months = [month for month, _ in month_closes]
    result = []
    for n, month in enumerate(months):
        group = members.get(month, set())
        mrr = tuple(sum(levels[later].get(c, 0) for c in group) for later in months[n:]) if with_mrr else None
        result.append(Cohort(month, len(group), tuple(len(group & paying[later]) for later in months[n:]), mrr))
    return result


def customer_levels(steps: Sequence[Step], day: date) -> dict[str, int]:
    """Each customer's MRR at the close of ``day`` (the steps of one currency: their sum)."""
    found: dict[str, int] = defaultdict(int)
    for (customer, _), amount in levels_at(steps, day).items():
        found[customer] += amount
    return dict(found)
