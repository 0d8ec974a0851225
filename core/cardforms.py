"""Card entry shared by the portal (subscribe, the wallet) and the shop's checkout: the
card fields, and their exchange for a gateway token on the server; the card number goes
no further. The widgets never render a submitted value back, so a card number is never
echoed in the page after a validation error.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.debug import sensitive_variables

from core.payments.errors import CardError, GatewayError
from core.payments.gateway import CardToken, get_gateway, luhn_valid, normalize_card_number


# All variables: cleaned_data holds the number and CVC, and every frame below (the
# gateway, its helpers) inherits this list in Django's error reports.
@sensitive_variables()
def tokenize_card_form(form: Any) -> CardToken | None:
    """Exchange a valid card form's card for a token on the server; gateway refusals
    become field errors on the form (and None is returned)."""
    data = form.cleaned_data
    try:
        return get_gateway().tokenize_card(data["card_number"], data["exp_month"], data["exp_year"], data["cvc"])
    except CardError as error:
        form.add_error(error.field if error.field in form.fields else "card_number",
                       ValidationError(str(error), code="card_refused"))
        return None
    except GatewayError:
        form.add_error(None, ValidationError(
            gettext("Our payment provider could not be reached, so your card was not saved. "
              "Nothing was charged: please try again in a minute."), code="gateway_unreachable"))
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

    def __init__(self, *args: Any, today: date, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["exp_year"].choices = _year_choices(today)
        self.today = today
        # The first choice of each list (01 / this year) has already passed for most of
        # the year: the form opens on the month after this one, the first that has not.
        month, year = default_expiry(today)
        self.initial.setdefault("exp_month", month)
        self.initial.setdefault("exp_year", year)

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
        month, year = data.get("exp_month"), data.get("exp_year")
        if month and year and (year, month) < (self.today.year, self.today.month):
            self.add_error("exp_month", ValidationError(_("This card has expired."), code="card_expired"))
        return data

    def billing_address_text(self) -> str | None:
        parts = [self.cleaned_data.get("cardholder", "").strip(),
                 self.cleaned_data.get("billing_address", "").strip()]
        return "\n".join(p for p in parts if p) or None
