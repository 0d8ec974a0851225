"""The batches' metrics sum one billing day's runs (the date they billed, ``LastDate``),
every host's, not the runs started on one UTC date: in Tokyo (UTC+9) a day's runs may start
on two UTC dates, and one UTC date holds the runs of two billing days."""

from __future__ import annotations

from billing.batches.metrics import facts_of
from billing.models import BatchKind, BatchRun, RunOutcome

NOW = "2027-03-15T01:00:00.000000+00:00"


def _run(run_id: str, billed: str, started: str, finished: str, paid: int) -> BatchRun:
    return BatchRun(BatchRun.pk(kind=BatchKind.PAYMENTS), BatchRun.sk(started=started, run_id=run_id),
                    Kind=str(BatchKind.PAYMENTS), RunId=run_id, StartedAt=started, FinishedAt=finished,
                    FirstDate=billed, LastDate=billed, Outcome=RunOutcome.COMPLETED,
                    Counts={"paid": paid, "charged:JPY": paid * 1000})


def test_the_newest_billing_days_runs_are_summed_over_two_utc_dates_and_no_other_day() -> None:
    runs = [  # newest first, as the Query reads them
        _run("b", "2027-03-15", "2027-03-15T00:10:00+00:00", "2027-03-15T00:20:00+00:00", 7),  # 09:10 in Tokyo
        _run("a", "2027-03-15", "2027-03-14T23:50:00+00:00", "2027-03-15T00:05:00+00:00", 5),  # 08:50 in Tokyo
        _run("y", "2027-03-14", "2027-03-14T00:30:00+00:00", "2027-03-14T00:40:00+00:00", 100),  # the 14th's
    ]
    facts = facts_of(BatchKind.PAYMENTS, runs, NOW)
    assert facts.items == {"paid": 12}
    assert facts.charged == {"JPY": 12_000}
    assert facts.duration == 15 * 60  # the day's longest run


def test_one_utc_date_holding_two_billing_days_counts_the_newest_alone() -> None:
    runs = [
        _run("t", "2027-03-15", "2027-03-14T16:00:00+00:00", "2027-03-14T16:10:00+00:00", 3),  # the 15th, 01:00 in Tokyo
        _run("y", "2027-03-14", "2027-03-14T00:30:00+00:00", "2027-03-14T00:50:00+00:00", 100),
    ]
    facts = facts_of(BatchKind.PAYMENTS, runs, NOW)
    assert facts.items == {"paid": 3} and facts.duration == 10 * 60
