"""Free trials: the one-trial-per-account-and-product marker (``TrialUse``), written by
``create_subscription`` in the subscription's own transaction, and read by the confirm
page (one GetItem, only for a product that has a trial)."""

from __future__ import annotations

from datetime import date

from pynamodb.exceptions import DoesNotExist

from billing.access._common import absent_if_invalid, iso_now
from billing.access.outbox import subscription_event, transact_update
from billing.exceptions import ConditionFailed
from billing.models import MerchantEventType, Subscription, TrialUse


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


def record_trial_will_end(sub: Subscription) -> bool:
    """The merchant's ``subscription.trial_will_end`` for ``sub`` (a full item, read by
    key), once: in one transaction with ``EndNoticeAt`` set on the account's trial marker,
    only if the marker is this subscription's and has no notice yet. The marker's key is
    the account and product, so a re-run (or a second run at once) writes nothing: False.
    """
    marker = TrialUse(TrialUse.pk(account_id=sub.account_id), TrialUse.sk(sku=sub.key_sku))
    notice = subscription_event(MerchantEventType.SUBSCRIPTION_TRIAL_WILL_END, sub)
    try:
        transact_update(marker, [TrialUse.EndNoticeAt.set(notice.CreatedAt)],
                        (TrialUse.SubId == sub.sub_id) & TrialUse.EndNoticeAt.does_not_exist(), items=[notice])
    except ConditionFailed:
        return False
    return True
