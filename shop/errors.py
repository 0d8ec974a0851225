"""What can go wrong in the shop, in words a page can show.

One base, ``ShopError``, whose message is meant for the customer or the staff member;
the subclasses carry the details a page or a test needs (which product, what balance).
"""

from __future__ import annotations

# Raised while a page is answered: the message is in that page's language.
from django.utils.translation import gettext as _

from core.localformat import local_date


def _day(value: str) -> str:
    """A code's validity day (stored as YYYY-MM-DD) in the page's language: English keeps
    the ISO date the staff typed; the others get CLDR's medium date ("3 apr 2026")."""
    return local_date(value, "Y-m-d") or value


class ShopError(Exception):
    """A business outcome the caller shows to a person; nothing half-written is left."""


class InvalidInput(ShopError):
    """An id, a quantity, a code or an address that cannot be used (nothing was written)."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class NotFound(InvalidInput):
    """The thing named does not exist (an unknown product, code or order)."""


class OutOfStock(ShopError):
    def __init__(self, product_id: str, name: str, available: int | None) -> None:
        self.product_id = product_id
        self.name = name
        self.available = available
        left = _("none left") if not available else _("only %(count)s left") % {"count": available}
        super().__init__(_("%(product)s is out of stock (%(left)s).") % {"product": name, "left": left})


class GiftCardBalanceTooLow(ShopError):
    def __init__(self, balance: int | None, currency: str = "") -> None:
        self.balance = balance
        self.currency = currency
        super().__init__(
            _("The gift card's balance is too low (now %(balance)s %(currency)s minor units).")
            % {"balance": balance, "currency": currency} if balance is not None
            else _("The gift card's balance is too low.")
        )


class DiscountCodeUsedUp(ShopError):
    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(_("The discount code %(code)s has been used as many times as it may be.") % {"code": code})


class DiscountCodeExpired(InvalidInput):
    def __init__(self, code: str, valid_until: str) -> None:
        self.code = code
        self.valid_until = valid_until
        super().__init__(_("This code expired on %(date)s: remove it to order without it.")
                         % {"date": _day(valid_until)}, field="discount code")


class DiscountCodeNotValidYet(InvalidInput):
    def __init__(self, code: str, valid_from: str) -> None:
        self.code = code
        self.valid_from = valid_from
        super().__init__(_("This code is not valid until %(date)s: remove it to order without it.")
                         % {"date": _day(valid_from)}, field="discount code")


class CardDeclined(ShopError):
    """The card was declined; the order was rolled back (stock, gift card, code)."""

    def __init__(self, order_id: str, decline_code: str | None) -> None:
        self.order_id = order_id
        self.decline_code = decline_code
        super().__init__(_("The card was declined (%(reason)s); nothing was charged.") % {
            "reason": decline_code or _("no reason given")})


class PaymentPending(ShopError):
    """The gateway did not answer: the order waits; the reconcile command finishes it."""

    def __init__(self, order_id: str) -> None:
        self.order_id = order_id
        super().__init__(_("The payment could not be confirmed yet; the order will be completed or cancelled shortly."))


class AuthenticationRequired(PaymentPending):
    """The bank asks the customer to confirm the card payment (3-D Secure): the order waits,
    its stock reserved, for the customer to confirm it with Stripe.js (``client_secret``)."""

    def __init__(self, order_id: str, charge_id: str, client_secret: str) -> None:
        super().__init__(order_id)
        self.charge_id = charge_id
        self.client_secret = client_secret


class OrderStateError(ShopError):
    """The order is not in a state that allows this (e.g. cancelling a shipped order)."""


class Busy(ShopError):
    """Other checkouts kept changing the same items; the customer may simply try again."""
