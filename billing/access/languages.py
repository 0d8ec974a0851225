"""The customer's language: on the account, mirrored where it is read without the account.

``Account.Language`` is the customer's choice. The user link carries a copy because
log-in reads only the link (one GetItem), and each subscription carries one because the
reminder and payment batches read subscriptions from the GSIs, which project it: so an
e-mail goes out in the customer's language with no extra request per item.
"""

from __future__ import annotations

from pynamodb.exceptions import DoesNotExist

from billing.access.subscriptions import get_subscriptions_by_account, update_subscription
from billing.models import Account, Subscription, UserLink


def get_user_link(user_id: int) -> UserLink | None:
    """The user's link to their account (account id and language): one GetItem."""
    try:
        return UserLink.get(UserLink.pk(user_id=user_id), UserLink.sk(user_id=user_id))
    except DoesNotExist:
        return None


def set_account_language(account_id: str, language: str, *, user_id: int | None = None) -> int:
    """Store ``language`` on the account, its user link and every subscription; returns
    how many subscriptions were updated.

    An UpdateItem each (a Query finds the subscriptions). The subscriptions' version is
    not checked: the language touches no money, so a concurrent portal form or batch
    write must not be refused because of it (nor refuse it).
    """
    Account(Account.pk(account_id=account_id), Account.sk(account_id=account_id)).update(
        actions=[Account.Language.set(language)], condition=Account.PK.exists(),
    )
    if user_id is not None:
        UserLink(UserLink.pk(user_id=user_id), UserLink.sk(user_id=user_id)).update(
            actions=[UserLink.Language.set(language)], condition=UserLink.PK.exists(),
        )
    subs = [s for s in get_subscriptions_by_account(account_id) if s.Language != language]
    for sub in subs:
        update_subscription(sub, [Subscription.Language.set(language)], Subscription.PK.exists(),
                            check_version=False)
    return len(subs)
