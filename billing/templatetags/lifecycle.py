"""``{% sub_state sub as state %}``: a subscription's state as the customer sees it today
(active, past due, cancelling, paused, cancelled; ``billing.rules.lifecycle.state_of``)."""

from __future__ import annotations

from django import template

from billing.models import Subscription
from billing.rules.lifecycle import SubState, state_of
from core.pages import today

register = template.Library()


@register.simple_tag
def sub_state(sub: Subscription) -> SubState:
    return state_of(sub, today())
