"""What every portal page shares: the session keys, the stale-form message and the
subscription look-up that answers 404 (the customer's account: ``billing.customers``).
"""

from __future__ import annotations

import logging

from django.utils.translation import gettext as gettext_now
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.models import Subscription
from core.pages import or_404

log = logging.getLogger("billing")

SESSION_PENDING = "pending_subscription"
# A subscription whose first charge the customer's bank asks them to confirm (3-D Secure).
SESSION_AUTHENTICATE = "authenticate_subscription"
RECEIPT_MONTHS = 6


STALE_MESSAGE = _(
    "This subscription was changed elsewhere (another tab or device) while you were looking "
    "at it. We have shown you the latest version: please check it and try again."
)


def subscription_or_404(account_id: str, sub_id: str) -> Subscription:
    """The account's subscription, or 404: another account's id is simply not found."""
    return or_404(access.get_subscription(account_id, sub_id), gettext_now("No such subscription"))
