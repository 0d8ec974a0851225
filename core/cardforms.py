"""Card entry shared by the portal (subscribe, the wallet) and the shop's checkout.

Two ways, by the gateway (``collects_card_in_browser``):

* **Stripe**: the card is typed into Stripe.js Elements and saved by a SetupIntent the
  browser confirms (static/js/card-entry.js); the form carries only the SetupIntent's id
  (``setup_intent``), which the server checks is this customer's before it stores brand,
  last four and expiry. The card number never reaches rpay (invariant 3, PCI SAQ A).
* **The simulated gateway**: rpay's own card fields, exchanged for a token on the server;
  the card number goes no further. The widgets never render a submitted value back, so
  a card number is never echoed in the page after a validation error.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import cached_property
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _
from django.views.decorators.debug import sensitive_variables

from core.payments.errors import CardError, GatewayError
from core.payments.gateway import (
    CardEntry,
    CardToken,
    cards_entered_in_browser,
    get_gateway,
    luhn_valid,
    normalize_card_number,
)

CARD_NUMBER_FIELDS = ("card_number", "exp_month", "exp_year", "cvc")
NEW_CARD = "new"  # the "Pay with" choice of the card fields, beside the wallet's cards
CARD_REFUSED = _("Your card could not be saved. Please enter it again.")
UNREACHABLE = _("Our payment provider could not be reached, so your card was not saved. "
                "Nothing was charged: please try again in a minute.")


# All variables: cleaned_data holds the number and CVC, and every frame below (the
# gateway, its helpers) inherits this list in Django's error reports.
@sensitive_variables()
def tokenize_card_form(form: Any) -> CardToken | None:
    """Exchange a valid card form's card for a token (the SetupIntent the browser
    confirmed, or the card fields); gateway refusals become form errors (and None is
    returned)."""
    data = form.cleaned_data
    gateway = get_gateway()
    try:
        if form.in_browser:
            return gateway.saved_card(form.customer(), data["setup_intent"])
        return gateway.tokenize_card(data["card_number"], data["exp_month"], data["exp_year"], data["cvc"])
    except CardError as error:
        if form.in_browser:  # the SetupIntent is spent or not this customer's: enter the card again
            form.data = form.data.copy()
            form.data["setup_intent"] = ""
            form.add_error(None, ValidationError(CARD_REFUSED, code="card_refused"))
        else:
            form.add_error(error.field if error.field in form.fields else "card_number",
                           ValidationError(str(error), code="card_refused"))
        return None
    except GatewayError:
        form.add_error(None, ValidationError(UNREACHABLE, code="gateway_unreachable"))
        return None


class SecretInput(forms.TextInput):
    """A text input that never renders the submitted value (card number, CVC)."""

    def get_context(self, name: str, value: Any, attrs: dict | None) -> dict:
        return super().get_context(name, None, attrs)



def _year_choices(today: date) -> list[tuple[int, str]]:
    return [(y, str(y)) for y in range(today.year, today.year + 16)]


MONTH_CHOICES = [(m, f"{m:02d}") for m in range(1, 13)]


def default_expiry(today: date) -> tuple[int, int]:
    """The expiry a card form opens on: next month (month, year), never a past one."""
    return (1, today.year + 1) if today.month == 12 else (today.month + 1, today.year)



class CardFields(forms.Form):
    """Card number, expiry, CVC and optional name/address: tokenized by the view."""

    card_number = forms.CharField(
        label=_("Card number"), max_length=30,
        widget=SecretInput(attrs={"autocomplete": "cc-number", "inputmode": "numeric",
                                  "placeholder": "1234 1234 1234 1234"}),
    )
    exp_month = forms.TypedChoiceField(label=_("Expiry month"), coerce=int, choices=MONTH_CHOICES,
                                       widget=forms.Select(attrs={"autocomplete": "cc-exp-month"}))
    exp_year = forms.TypedChoiceField(label=_("Expiry year"), coerce=int, choices=[],
                                      widget=forms.Select(attrs={"autocomplete": "cc-exp-year"}))
    cvc = forms.CharField(
        label=_("Security code (CVC)"), max_length=4, min_length=3,
        widget=SecretInput(attrs={"autocomplete": "cc-csc", "inputmode": "numeric", "size": 4}),
    )
    cardholder = forms.CharField(label=_("Name on card (optional)"), max_length=100, required=False,
                                 widget=forms.TextInput(attrs={"autocomplete": "cc-name"}))
    billing_address = forms.CharField(
        label=_("Billing address (optional)"), max_length=300, required=False,
        widget=forms.Textarea(attrs={"rows": 2, "autocomplete": "street-address"}),
    )

    def __init__(self, *args: Any, today: date, customer: Callable[[], str] | None = None,
                 **kwargs: Any) -> None:
        """``customer``: the gateway's customer of the account paying (asked only when the
        card is entered in the browser: Stripe saves it to that customer)."""
        super().__init__(*args, **kwargs)
        self.today = today
        self.in_browser = cards_entered_in_browser()
        self._customer = customer
        if self.in_browser:
            for name in CARD_NUMBER_FIELDS:
                del self.fields[name]
            self.fields["setup_intent"] = forms.CharField(
                widget=forms.HiddenInput, max_length=255,
                error_messages={"required": _("Enter your card's details.")})
            return
        self.fields["exp_year"].choices = _year_choices(today)
        # The first choice of each list (01 / this year) has already passed for most of
        # the year: the form opens on the month after this one, the first that has not.
        month, year = default_expiry(today)
        self.initial.setdefault("exp_month", month)
        self.initial.setdefault("exp_year", year)

    def customer(self) -> str:
        if self._customer is None:
            raise ValueError("a card entered in the browser needs the paying account's customer")
        return self._customer()

    @property
    def saved_card_id(self) -> str | None:
        """The wallet card chosen in the posted data (a form with a ``saved_card`` choice:
        subscribe, the shop's checkout), if any, valid or not (clean() says)."""
        if "saved_card" not in self.fields or not self.is_bound:
            return None
        chosen = self.data.get("saved_card") or NEW_CARD
        return None if chosen == NEW_CARD else chosen

    def card_optional(self) -> None:
        """The new card may be left out (a wallet card or a gift card pays instead)."""
        for name in (*CARD_NUMBER_FIELDS, "setup_intent"):
            if name in self.fields:
                self.fields[name].required = False

    def card_given(self) -> bool:
        """Whether the posted data holds a new card (a saved SetupIntent, or a number)."""
        return bool((self.data.get("setup_intent" if self.in_browser else "card_number") or "").strip())

    @cached_property
    def card_entry(self) -> CardEntry | None:
        """The SetupIntent the page's card fields confirm (Stripe.js): made when the page
        is drawn; None when the gateway cannot be reached (the page says so, the form keeps
        what was typed)."""
        if not self.in_browser:
            return None
        try:
            return get_gateway().start_card_entry(self.customer())
        except GatewayError:
            return None

    # Every frame below these methods inherits their list in Django's error reports, so
    # they hide all local variables: a helper may hold the number under any name.
    @sensitive_variables()
    def clean_card_number(self) -> str:
        number = normalize_card_number(self.cleaned_data["card_number"])
        if not luhn_valid(number):
            raise ValidationError(_("That card number is not valid. Check the digits and try again."),
                                  code="invalid_card_number")
        return number

    @sensitive_variables()
    def clean_cvc(self) -> str:
        cvc = self.cleaned_data["cvc"].strip()
        if not cvc.isdigit():
            raise ValidationError(_("The security code is the 3 or 4 digits on the back of the card."),
                                  code="invalid_cvc")
        return cvc

    @sensitive_variables()
    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.in_browser:  # Stripe.js checked the expiry
            return data
        month, year = data.get("exp_month"), data.get("exp_year")
        if month and year and (year, month) < (self.today.year, self.today.month):
            self.add_error("exp_month", ValidationError(_("This card has expired."), code="card_expired"))
        return data

    def billing_address_text(self) -> str | None:
        parts = [self.cleaned_data.get("cardholder", "").strip(),
                 self.cleaned_data.get("billing_address", "").strip()]
        return "\n".join(p for p in parts if p) or None
