"""Reading what a metered subscription owes (``payments.owed_amount``, ``owed_period``: the
reminders', the pages' and the staff's upcoming payment) closes no day of its usage: only
the payment, on its day, closes the period it bills. Were a read to close the days up to
the payment, every event sent after a reminder would be refused as of a period billed."""

from __future__ import annotations

from datetime import date

import pytest

from billing.operations import payments
from tests.api.test_api_usage_reminders import PAY, REMIND, _metered
from tests.billing.test_final_usage_mutants import PERIOD_START, _on, _use_calls
from tests.builders import fresh

pytestmark = pytest.mark.django_db(databases=[])


def test_reading_what_is_owed_leaves_the_period_open_to_later_events(moto_table) -> None:
    sub = _metered()  # $9.99 a month and half a cent a call, paid 15 February to 14 March
    _use_calls(sub, date(2027, 3, 1), 1035)
    with _on(REMIND):
        assert payments.owed_amount(fresh(sub)) == 999 + 518  # 1,035 calls so far, rounded half up
        assert payments.owed_period(fresh(sub)) == (PAY, date(2027, 4, 14))
    _use_calls(sub, date(2027, 3, 10), 200)  # after the reminder, before the payment day: counted
    with _on(REMIND):
        assert payments.owed_amount(fresh(sub)) == 999 + 618
    assert PERIOD_START < date(2027, 3, 10) < PAY
