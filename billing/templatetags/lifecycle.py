"""``{% sub_state sub as state %}``: a subscription's state as the customer sees it today
(active, past due, cancelling, paused, cancelled; ``billing.lifecycle.state_of``)."""

from __future__ import annotations

from django import template

from billing.lifecycle import SubState, state_of
from billing.models import Subscription
from billing.pages import today

register = template.Library()


@register.simple_tag
def sub_state(sub: Subscription) -> SubState:
    return state_of(sub, today())
