"""Customer-portal forms (rendered with crispy-forms / Bootstrap 5).

Card forms take the number and CVC only to hand them to the gateway on the server:
their widgets never render a submitted value back, so a card number is never echoed
in the page after a validation error.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import SetPasswordMixin
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.utils.translation import gettext, gettext_lazy
from django.utils.translation import gettext_lazy as _
from django.views.decorators.debug import sensitive_variables

from billing.gateway import luhn_valid, normalize_card_number
from billing.localformat import local_date
from billing.models import Product
from billing.money import format_with_symbol
from billing.schedule import MAX_PAYMENT_DAY, MIN_PAYMENT_DAY

PAYMENT_DAY_HELP = _(
    "The day of the month you pay. On months with fewer days you pay on the last day "
    "(for example day 31 is paid on 30 April and 28 February)."
)


def username_max_length() -> int:
    """The user table's username column: the e-mail is stored there, so it must fit."""
    return get_user_model()._meta.get_field(get_user_model().USERNAME_FIELD).max_length


class SignUpForm(SetPasswordMixin, forms.Form):
    """E-mail and password twice; the password checks are Django's own (SetPasswordMixin).

    The e-mail becomes the username, lowercased. One longer than the username column
    (150 characters) is refused with a form error rather than shortened: a stored name
    that differs from the typed e-mail could not be logged in with, and real addresses
    that long do not occur in practice.
    """

    error_messages = {
        **SetPasswordMixin.error_messages,
        "password_mismatch": _("The two passwords do not match."),
        "duplicate_email": _("An account with this e-mail already exists. Log in instead."),
    }

    email = forms.EmailField(
        label=_("E-mail"), widget=forms.EmailInput(attrs={"autocomplete": "email"}),
        error_messages={"max_length": _("This e-mail is longer than the %(limit_value)d characters rpay "
                                        "can keep. Please use a shorter address.")},
    )
    password1, password2 = SetPasswordMixin.create_password_fields(label1=_("Password"), label2=_("Password again"))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        email = self.fields["email"]
        email.max_length = username_max_length()
        email.validators.append(MaxLengthValidator(email.max_length))
        email.widget.attrs["maxlength"] = str(email.max_length)

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip().lower()
        if get_user_model().objects.filter(username__iexact=email).exists():
            raise ValidationError(self.error_messages["duplicate_email"], code="duplicate_email")
        return email

    @sensitive_variables("data")
    def clean(self) -> dict[str, Any]:
        data = super().clean()
        self.validate_passwords()
        if not self.has_error("password2"):
            email = data.get("email") or ""
            # Errors stay on the first password field, where the rules are shown.
            self.validate_password_for_user(get_user_model()(username=email, email=email), "password1")
        return data


class SecretInput(forms.TextInput):
    """A text input that never renders the submitted value (card number, CVC)."""

    def get_context(self, name: str, value: Any, attrs: dict | None) -> dict:
        return super().get_context(name, None, attrs)


def day_choices(dates: dict[int, date] | None) -> list[tuple[int, str]]:
    """Days 1-31, each labelled with the date of the next payment it leads to when known,
    so the customer sees the effect of the month-end rule before choosing."""
    days = range(MIN_PAYMENT_DAY, MAX_PAYMENT_DAY + 1)
    if not dates:
        return [(d, str(d)) for d in days]
    return [(d, gettext("{day} — next payment {date}").format(day=d, date=local_date(dates[d], "j M Y")))
            for d in days]


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


class VersionedForm(forms.Form):
    """Carries the subscription's Version as read when the page was shown, so a form
    submitted from a stale tab is refused instead of overwriting a newer change."""

    version = forms.IntegerField(widget=forms.HiddenInput, required=False)


NEW_CARD = "new"
CARD_NUMBER_FIELDS = ("card_number", "exp_month", "exp_year", "cvc")


class SubscribeForm(CardFields):
    product = forms.ChoiceField(label=_("Product"), widget=forms.RadioSelect)
    payment_day = forms.TypedChoiceField(
        label=_("Payment day"), coerce=int, help_text=PAYMENT_DAY_HELP,
        choices=[(d, str(d)) for d in range(MIN_PAYMENT_DAY, MAX_PAYMENT_DAY + 1)],
    )
    # A wallet card (issue 14), or NEW_CARD for the card fields; only offered when the
    # wallet has cards, and a post without it means a new card.
    saved_card = forms.ChoiceField(label=gettext_lazy("Pay with"), widget=forms.RadioSelect, required=False)

    field_order = ["product", "payment_day", "saved_card", "card_number", "exp_month", "exp_year", "cvc",
                   "cardholder", "billing_address"]

    def __init__(self, *args: Any, products: list[Product], first_dates: dict[int, date] | None = None,
                 cards: list[tuple[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["payment_day"].choices = day_choices(first_dates)
        # Only the active catalog is offered; a retired SKU posted by hand is invalid.
        self.fields["product"].choices = [
            (p.SKU, gettext("{name} — {price} a month").format(
                name=p.Name, price=format_with_symbol(p.PaymentAmount, p.Currency))) for p in products
        ]
        if cards:
            self.fields["saved_card"].choices = [*cards, (NEW_CARD, gettext_lazy("A new card (below)"))]
        else:
            del self.fields["saved_card"]
        if self.saved_card_id:
            for name in CARD_NUMBER_FIELDS:  # the wallet card is used: the card fields are ignored
                self.fields[name].required = False
        self.order_fields(self.field_order)

    @property
    def saved_card_id(self) -> str | None:
        """The wallet card chosen in the posted data, if any (valid or not: clean() says)."""
        if "saved_card" not in self.fields or not self.is_bound:
            return None
        chosen = self.data.get("saved_card") or NEW_CARD
        return None if chosen == NEW_CARD else chosen

    @sensitive_variables()
    def clean_card_number(self) -> str:
        return "" if self.saved_card_id else super().clean_card_number()

    @sensitive_variables()
    def clean_cvc(self) -> str:
        return "" if self.saved_card_id else super().clean_cvc()

    @sensitive_variables()
    def clean(self) -> dict[str, Any]:
        if self.saved_card_id:
            return forms.Form.clean(self)  # no expiry to check: the wallet card's was
        return super().clean()


class ChangeDayForm(VersionedForm):
    payment_day = forms.TypedChoiceField(
        label=_("New payment day"), coerce=int, help_text=PAYMENT_DAY_HELP,
        choices=[(d, str(d)) for d in range(MIN_PAYMENT_DAY, MAX_PAYMENT_DAY + 1)],
    )

    def __init__(self, *args: Any, next_dates: dict[int, date] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["payment_day"].choices = day_choices(next_dates)


class ReplaceCardForm(CardFields, VersionedForm):
    pass


class WalletCardForm(CardFields):
    """A card for the wallet (add one, or new details for one: the billing address is
    filled in with the stored one, so it is kept unless changed)."""

    make_default = forms.BooleanField(label=gettext_lazy("Make this my default card"), required=False)

    def __init__(self, *args: Any, offer_default: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not offer_default:
            del self.fields["make_default"]


class ChooseCardForm(VersionedForm):
    """Which wallet card a subscription pays with."""

    card = forms.ChoiceField(label=gettext_lazy("Pay with"), widget=forms.RadioSelect)

    def __init__(self, *args: Any, cards: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["card"].choices = cards


class ConfirmForm(forms.Form):
    """The confirm step posts the signed quote the customer saw (price, currency, day,
    first charge and its date); the card and address are in the session."""

    quote = forms.CharField(widget=forms.HiddenInput, max_length=2000)
    # Shown only when the customer already has a live subscription to the product (issue 14).
    again = forms.BooleanField(label=gettext_lazy("Yes, subscribe again"), required=False)

    def __init__(self, *args: Any, already: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if already:
            self.fields["again"].required = True
            self.fields["again"].error_messages["required"] = gettext_lazy(
                "You already have this product. Tick the box to subscribe to it a second time.")
        else:
            del self.fields["again"]
