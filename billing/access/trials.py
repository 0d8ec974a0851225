"""Free trials: the one-trial-per-account-and-product marker (``TrialUse``), written by
``create_subscription`` in the subscription's own transaction, and read by the confirm
page (one GetItem, only for a product that has a trial)."""

from __future__ import annotations

from datetime import date

from pynamodb.exceptions import DoesNotExist

from billing.access._common import absent_if_invalid, iso_now
from billing.models import TrialUse


def trial_use(account_id: str, sku: str, *, sub_id: str, trial_end: date) -> TrialUse:
    """The marker to put (on condition it is absent) with the subscription that gets the trial."""
    return TrialUse(TrialUse.pk(account_id=account_id), TrialUse.sk(sku=sku), SubId=sub_id,
                    TrialEnd=trial_end.isoformat(), CreatedDate=iso_now())


@absent_if_invalid(lambda: False)
def trial_used(account_id: str, sku: str) -> bool:
    """Whether the account has had the free trial of ``sku`` (one GetItem, consistent)."""
    try:
        TrialUse.get(TrialUse.pk(account_id=account_id), TrialUse.sk(sku=sku), consistent_read=True)
    except DoesNotExist:
        return False
    return True
