"""The staff look-up's reads: a subscription by its id alone (the ``SUBID#<SubId>`` item
written beside each new subscription, read back with one GetItem) and the accounts of
many users at once (BatchGetItem of their ``USER#`` links). No index, no Scan.
"""

from __future__ import annotations

from pynamodb.exceptions import DoesNotExist

from billing.access._common import absent_if_invalid
from billing.models import SubIdLookup, Subscription, UserLink


def record_subscription_id(sub: Subscription) -> SubIdLookup:
    """Write the look-up item of a new subscription (PutItem; ids are random and never
    reused, so writing it again writes the same thing)."""
    sub_id = sub.sub_id
    item = SubIdLookup(SubIdLookup.pk(sub_id=sub_id), SubIdLookup.sk(sub_id=sub_id),
                       AccountId=sub.account_id, SKU=sub.SKU)
    item.save()
    return item


@absent_if_invalid()
def get_account_id_for_subscription(sub_id: str) -> str | None:
    """The account a subscription belongs to, or None (unknown id, or a subscription
    made before look-up items were written). One GetItem."""
    try:
        item = SubIdLookup.get(SubIdLookup.pk(sub_id=sub_id), SubIdLookup.sk(sub_id=sub_id))
    except DoesNotExist:
        return None
    return item.AccountId


def get_account_ids_for_users(user_ids: list[int]) -> dict[int, str]:
    """Each user's account id, for the users that have one: one BatchGetItem per 100
    users (the staff look-up lists at most a few dozen), not a GetItem each."""
    keys = [(UserLink.pk(user_id=u), UserLink.sk(user_id=u)) for u in dict.fromkeys(user_ids)]
    found: dict[int, str] = {}
    if not keys:
        return found
    for link in UserLink.batch_get(keys):
        found[int(UserLink.pk_template.parse(link.PK)["user_id"])] = link.AccountId
    return found
