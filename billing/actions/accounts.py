"""A customer's own account: opening it at sign-up (or at the first portal page of a user
whose sign-up stopped half-way) and choosing its language. Neither moves money, so
neither is audited or e-mailed; they are here so that pages never write themselves."""

from __future__ import annotations

from billing import access
from billing.exceptions import AlreadyExists
from billing.models import Account
from core.payments.gateway import get_gateway


def open_account(email: str, *, user_id: int, language: str | None = None) -> Account:
    """The account of a Django user, linked to it: made with its link in one transaction,
    so it is safe to repeat after a crash at any point and to run twice at once (the
    second finds the first's). A link whose account is missing (nothing writes that state,
    but the account is what the user needs) gets its account under the linked id."""
    try:
        return access.create_user_account(email, user_id=user_id, language=language)
    except AlreadyExists:
        pass
    link = access.get_user_link(user_id)
    if link is None:  # the link was deleted meanwhile (the account closed): a new one
        return access.create_user_account(email, user_id=user_id, language=language)
    account = access.get_account(link.AccountId)
    if account is not None:
        return account
    try:
        return access.create_account(email, user_id=user_id, language=language, account_id=link.AccountId)
    except AlreadyExists:  # the same repair, beside this one, made it first
        made = access.get_account(link.AccountId)
        if made is None:
            raise
        return made


def user_has_account(user_id: int) -> bool:
    """Whether the Django user has finished signing up: a link to a billing account."""
    return access.get_user_link(user_id) is not None


def choose_language(account_id: str, language: str, *, user_id: int | None = None) -> None:
    """The customer's language, for pages and e-mails (copied onto the user link and the
    subscriptions, where log-in and the batches read it)."""
    access.set_account_language(account_id, language, user_id=user_id)


def payment_customer(account: Account) -> str:
    """The account's customer at the payment processor, made on first need (its first
    card): Stripe keeps the wallet's cards on it. "" for a gateway without customers."""
    if account.StripeCustomerId:
        return account.StripeCustomerId
    customer = get_gateway().create_customer(account.account_id, account.Email)
    return access.set_stripe_customer(account, customer) if customer else ""
