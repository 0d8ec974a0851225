"""What a staff change that charges or refunds the card (seats, a switch) says when it is
not made (billing/staff/common.py ``attempt_paid_change``): each reason in its own words,
nothing returned, so the page goes back to the account with the error."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.contrib.messages.storage.fallback import FallbackStorage
from django.test import RequestFactory

from billing.actions.seats import SeatsDeclined
from billing.exceptions import ConditionFailed
from billing.rules.seats import SeatsRefused
from billing.staff import seats_pages, switch_pages
from billing.staff.common import attempt_paid_change
from core.payments.errors import GatewayError

pytestmark = pytest.mark.django_db(databases=[])


def _request():
    request = RequestFactory().post("/")
    request.session = {}
    request._messages = FallbackStorage(request)
    return request


def _raise(error: Exception):
    def step():
        raise error
    return step


@pytest.mark.parametrize(("error", "said"), [
    (SeatsRefused("Between 1 and 50 seats."), "Between 1 and 50 seats."),
    (SeatsDeclined("insufficient_funds"), "The card was declined (insufficient_funds): the seats are unchanged."),
    (ConditionFailed("SUB#1"), "The subscription changed meanwhile: nothing was changed (any amount taken is "
                               "refunded)."),
    (GatewayError("timeout"), "The payment provider could not be reached: nothing was changed."),
])
def test_a_seats_change_not_made_says_why(error: Exception, said: str) -> None:
    request = _request()
    assert attempt_paid_change(request, _raise(error), refused=SeatsRefused, declined=SeatsDeclined,
                               words=seats_pages._NOT_MADE) is None
    assert [str(m) for m in get_messages(request)] == [said]


def test_a_switch_not_made_says_so_in_its_words_and_a_made_change_is_returned() -> None:
    request = _request()
    assert attempt_paid_change(request, _raise(GatewayError("down")), refused=SeatsRefused, declined=SeatsDeclined,
                               words=switch_pages._NOT_MADE) is None
    assert attempt_paid_change(request, lambda: "done", refused=SeatsRefused, declined=SeatsDeclined,
                               words=switch_pages._NOT_MADE) == "done"
    assert [str(m) for m in get_messages(request)] == [
        "The payment provider could not be reached: nothing was switched."]


def test_an_error_it_does_not_know_is_not_swallowed() -> None:
    with pytest.raises(KeyError):
        attempt_paid_change(_request(), _raise(KeyError("bug")), refused=SeatsRefused, declined=SeatsDeclined,
                            words=seats_pages._NOT_MADE)
