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
from django.contrib.auth.forms import AuthenticationForm, SetPasswordMixin
from django.core.validators import MaxLengthValidator
from django.utils.translation import gettext, gettext_lazy
from django.utils.translation import gettext_lazy as _
from django.views.decorators.debug import sensitive_variables

from billing.models import Account, Product
from billing.rules.coupons import MAX_CODE_LENGTH, CouponRefusal
from billing.rules.lifecycle import CANCEL_REASONS, MAX_PAUSE_PAYMENTS, CancelMode
from billing.rules.schedule import MAX_PAYMENT_DAY, MIN_PAYMENT_DAY
from billing.rules.seats import quantity_of
from billing.rules.vat_numbers import VatCheck, VatProblem, compact, vat_number_problem
from core.cardforms import NEW_CARD, CardFields
from core.countries import country_choices, country_name
from core.localformat import local_date
from core.money import format_with_symbol

PAYMENT_DAY_HELP = _(
    "The day of the month you pay. On months with fewer days you pay on the last day "
    "(for example day 31 is paid on 30 April and 28 February)."
)


class EmailLoginForm(AuthenticationForm):
    """Django's log-in form, asking for what rpay's users log in with: their e-mail (the
    username column holds it; rpay_site/auth_backends.py matches it case-insensitively).
    The field keeps its name, ``username``, that the admin and password managers use."""

    # Django's says "a correct username", its user model's word: the form asks for an e-mail.
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": _("Please enter a correct e-mail and password. Note that the password is case-sensitive."),
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["username"]
        field.label = _("E-mail")
        field.widget.input_type = "email"
        field.widget.attrs.update({"autocomplete": "email", "inputmode": "email"})


def username_max_length() -> int:
    """The user table's username column: the e-mail is stored there, so it must fit."""
    return get_user_model()._meta.get_field(get_user_model().USERNAME_FIELD).max_length


class SignUpForm(forms.Form):
    """The e-mail to open an account with, lowercased (it becomes the username). The
    password is chosen after the address is confirmed (``ConfirmSignUpForm``), on the page
    its e-mail links to: nobody can set one for an address they cannot read.

    An e-mail longer than the username column (150 characters) is refused with a form error
    rather than shortened: a stored name that differs from the typed e-mail could not be
    logged in with, and real addresses that long do not occur in practice.
    """

    email = forms.EmailField(
        label=_("E-mail"), widget=forms.EmailInput(attrs={"autocomplete": "email"}),
        error_messages={"max_length": _("This e-mail is longer than the %(limit_value)d characters rpay "
                                        "can keep. Please use a shorter address.")},
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        email = self.fields["email"]
        email.max_length = username_max_length()
        email.validators.append(MaxLengthValidator(email.max_length))
        email.widget.attrs["maxlength"] = str(email.max_length)

    def clean_email(self) -> str:
        # An address that has an account already is not refused here: the page would tell
        # anyone which addresses have accounts. The sign-up page mails its owner instead.
        return self.cleaned_data["email"].strip().lower()


class ConfirmSignUpForm(SetPasswordMixin, forms.Form):
    """The password, twice, of an address its owner confirmed; the checks are Django's own
    (SetPasswordMixin), for a user of that e-mail."""

    error_messages = {
        **SetPasswordMixin.error_messages,
        "password_mismatch": _("The two passwords do not match."),
    }

    password1, password2 = SetPasswordMixin.create_password_fields(label1=_("Password"), label2=_("Password again"))

    def __init__(self, *args: Any, email: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.email = email

    @sensitive_variables("data")
    def clean(self) -> dict[str, Any]:
        data = super().clean()
        self.validate_passwords()
        if not self.has_error("password2"):
            # Errors stay on the first password field, where the rules are shown.
            self.validate_password_for_user(get_user_model()(username=self.email, email=self.email), "password1")
        return data


def day_choices(dates: dict[int, date] | None) -> list[tuple[int, str]]:
    """Days 1-31, each labelled with the date of the next payment it leads to when known,
    so the customer sees the effect of the month-end rule before choosing."""
    days = range(MIN_PAYMENT_DAY, MAX_PAYMENT_DAY + 1)
    if not dates:
        return [(d, str(d)) for d in days]
    return [(d, gettext("{day} — next payment {date}").format(day=d, date=local_date(dates[d], "j M Y")))
            for d in days]


class VersionedForm(forms.Form):
    """Carries the subscription's Version as read when the page was shown, so a form
    submitted from a stale tab is refused instead of overwriting a newer change."""

    version = forms.IntegerField(widget=forms.HiddenInput, required=False)




class SeatsFields(forms.Form):
    """The number of seats of ``sub``: a whole number within its price's ``bounds`` (low,
    high), and not the number it has. The customer's page and the staff's page share it;
    each says "already" in its own voice (``already_held``)."""

    quantity = forms.IntegerField(label=gettext_lazy("Number of seats"))
    already_held = gettext_lazy("You have %(n)s seats already.")
    sub: Any
    bounds: tuple[int, int]

    def clean_quantity(self) -> int:
        quantity = self.cleaned_data["quantity"]
        low, high = self.bounds
        if not low <= quantity <= high:
            raise forms.ValidationError(gettext("Choose between %(low)s and %(high)s seats.") % {"low": low, "high": high},
                                        code="out_of_bounds")
        if quantity == quantity_of(self.sub):
            raise forms.ValidationError(self.already_held % {"n": quantity}, code="unchanged")
        return quantity


class CountryChoiceField(forms.ChoiceField):
    """A country from the list (ISO 3166 alpha-2), named in the customer's language."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("choices", lambda: [("", gettext("Choose a country")), *country_choices()])
        kwargs.setdefault("widget", forms.Select(attrs={"autocomplete": "country"}))
        super().__init__(**kwargs)


class TaxIdentityFields(forms.Form):
    """The customer's billing country (required: the VAT of each invoice follows it) and
    VAT number (optional: a business's, checked by format and check digit here; VIES, when
    on, is asked by the page after)."""

    billing_country = CountryChoiceField(
        label=_("Billing country"), help_text=_("The country you live in, or your business is established in: "
                                                "the VAT on your invoices follows it."),
        error_messages={"required": _("Choose your billing country.")})
    vat_number = forms.CharField(
        label=_("VAT number (businesses, optional)"), max_length=30, required=False,
        help_text=_("With its country prefix, for example IT00743110157."),
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}))

    def clean_vat_number(self) -> str:
        return compact(self.cleaned_data.get("vat_number") or "")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        number, country = data.get("vat_number"), data.get("billing_country")
        if number and "vat_number" not in self.errors:
            problem = vat_number_problem(number, country)
            if problem == VatProblem.INVALID:
                self.add_error("vat_number", forms.ValidationError(
                    _("This is not a valid EU VAT number: check its country prefix and digits."),
                    code="invalid_vat_number"))
            elif problem == VatProblem.COUNTRY:
                self.add_error("vat_number", forms.ValidationError(
                    _("This VAT number is not of your billing country (%(country)s)."),
                    code="vat_number_country", params={"country": country_name(country)}))
        return data


class TaxIdentityForm(TaxIdentityFields):
    """The account page's billing country and VAT number."""


def vat_status(account: Account) -> str:
    """How far the account's VAT number was checked, in words."""
    if not account.VatNumber:
        return ""
    if account.VatNumberCheck == VatCheck.VIES and account.VatCheckedAt:
        return gettext("confirmed by VIES on %(date)s") % {"date": local_date(account.VatCheckedAt, "j F Y")}
    return gettext("format valid")


def vies_refused_error() -> str:
    return gettext("The EU's VIES service says this VAT number is not registered. Check it, or leave it empty.")


def product_label(product: Product) -> str:
    """A product as the subscribe page offers it: name, monthly price, and its free trial."""
    label = gettext("{name} — {price} a month").format(
        name=product.Name, price=format_with_symbol(product.PaymentAmount, product.Currency))
    if product.trial_days:
        label += " · " + gettext("{days}-day free trial").format(days=product.trial_days)
    return label


class SubscribeForm(CardFields, TaxIdentityFields):
    product = forms.ChoiceField(label=_("Product"), widget=forms.RadioSelect)
    payment_day = forms.TypedChoiceField(
        label=_("Payment day"), coerce=int, help_text=PAYMENT_DAY_HELP,
        choices=[(d, str(d)) for d in range(MIN_PAYMENT_DAY, MAX_PAYMENT_DAY + 1)],
    )
    # A wallet card, or NEW_CARD for the card fields; only offered when the
    # wallet has cards, and a post without it means a new card.
    saved_card = forms.ChoiceField(label=gettext_lazy("Pay with"), widget=forms.RadioSelect, required=False)
    # Checked against the chosen product's currency by the page (one GetItem), which adds
    # the field's error (``coupon_error``).
    coupon = forms.CharField(label=_("Coupon code (optional)"), required=False, max_length=MAX_CODE_LENGTH + 8)
    # The chosen product's prices in words (``prices``), offered when it has more than its
    # monthly default; the seats for a price sold by the seat (checked against the price's
    # bounds by the page: ``rules.price_choice``).
    price = forms.ChoiceField(label=_("Price"), widget=forms.RadioSelect, required=False)
    quantity = forms.IntegerField(label=_("Seats"), required=False, min_value=1, max_value=10**9,
                                  help_text=_("For a price by the seat: how many seats."))

    field_order = ["product", "price", "quantity", "payment_day", "coupon", "saved_card", "card_number", "exp_month", "exp_year", "cvc",
                   "cardholder", "billing_address", "billing_country", "vat_number"]

    def __init__(self, *args: Any, products: list[Product], first_dates: dict[int, date] | None = None,
                 cards: list[tuple[str, str]] | None = None, prices: list[tuple[str, str, bool]] | None = None,
                 usage: dict[str, str] | None = None, **kwargs: Any) -> None:
        """``prices``: the chosen product's prices (id, words, sold by the seat). ``usage``:
        by SKU, the words of a product's metered price, shown beside its fixed price."""
        super().__init__(*args, **kwargs)
        self.fields["payment_day"].choices = day_choices(first_dates)
        if prices and len(prices) > 1:
            self.fields["price"].choices = [(price_id, words) for price_id, words, _seat in prices]
            if not any(seat for *_rest, seat in prices):
                del self.fields["quantity"]
        else:
            del self.fields["price"], self.fields["quantity"]
        # Only the active catalog is offered; a retired SKU posted by hand is invalid.
        self.fields["product"].choices = [
            (p.SKU, " · ".join([product_label(p), *([usage[p.SKU]] if usage and p.SKU in usage else [])]))
            for p in products]
        if cards:
            self.fields["saved_card"].choices = [*cards, (NEW_CARD, gettext_lazy("A new card (below)"))]
        else:
            del self.fields["saved_card"]
        if self.saved_card_id:
            self.card_optional()  # the wallet card is used: the card fields are ignored
        self.order_fields(self.field_order)

    @sensitive_variables()
    def clean_card_number(self) -> str:
        return "" if self.saved_card_id else super().clean_card_number()

    @sensitive_variables()
    def clean_cvc(self) -> str:
        return "" if self.saved_card_id else super().clean_cvc()

    @sensitive_variables()
    def clean(self) -> dict[str, Any]:
        if self.saved_card_id:
            # No expiry to check (the wallet card's was): the tax identity's checks only.
            return TaxIdentityFields.clean(self)
        return super().clean()


def coupon_error(code: str, reason: str | None) -> str:
    """The field error for a coupon that cannot be used (``access.CouponRefused.reason``)."""
    messages = {
        None: _("There is no coupon %(code)s."),
        CouponRefusal.ENDED: _("The coupon %(code)s has ended."),
        CouponRefusal.NOT_YET: _("The coupon %(code)s is not valid yet."),
        CouponRefusal.EXPIRED: _("The coupon %(code)s has expired."),
        CouponRefusal.USED_UP: _("The coupon %(code)s has been used as many times as it may be."),
        CouponRefusal.CURRENCY: _("The coupon %(code)s is for another currency than this product's."),
        CouponRefusal.NO_FIXED_FEE: _("The coupon %(code)s discounts a fixed fee: this subscription has none, "
                                      "only its usage."),
    }
    message = messages.get(reason, _("The coupon %(code)s changed just now: please try again."))
    return str(message) % {"code": code}


class ChangeDayForm(VersionedForm):
    payment_day = forms.TypedChoiceField(
        label=_("New payment day"), coerce=int, help_text=PAYMENT_DAY_HELP,
        choices=[(d, str(d)) for d in range(MIN_PAYMENT_DAY, MAX_PAYMENT_DAY + 1)],
    )

    def __init__(self, *args: Any, options: list[tuple[int, str]] | None = None, **kwargs: Any) -> None:
        """``options``: the days offered (every day but the current one), each labelled
        with the payment it leads to; none chosen until the customer picks one."""
        super().__init__(*args, **kwargs)
        if options is not None:
            self.fields["payment_day"].choices = [("", gettext_lazy("Choose a day")), *options]


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
    # Shown only when the customer already has a live subscription to the product.
    again = forms.BooleanField(label=gettext_lazy("Yes, subscribe again"), required=False)

    def __init__(self, *args: Any, already: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if already:
            self.fields["again"].required = True
            self.fields["again"].error_messages["required"] = gettext_lazy(
                "You already have this product. Tick the box to subscribe to it a second time.")
        else:
            del self.fields["again"]


# --- cancelling and pausing (portal and staff); the dates they lead to are rules/lifecycle's

COMMENT_MAX_LENGTH = 1000


class CancelChoiceForm(VersionedForm):
    when = forms.ChoiceField(label=_("When should it end?"), widget=forms.RadioSelect, initial=CancelMode.PERIOD_END)
    reason = forms.ChoiceField(label=_("Why are you cancelling?"), choices=CANCEL_REASONS, widget=forms.RadioSelect)
    comment = forms.CharField(label=_("Anything you would like to tell us (optional)"), required=False,
                              max_length=COMMENT_MAX_LENGTH, widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args: Any, period_end_label: str | None, now_label: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Without days paid ahead (past due, paused), "at period end" is today: one choice.
        choices = [(CancelMode.NOW, now_label)]
        if period_end_label:
            choices.insert(0, (CancelMode.PERIOD_END, period_end_label))
        self.fields["when"].choices = choices
        self.fields["when"].initial = choices[0][0]


class PauseForm(VersionedForm):
    SKIP, UNTIL, OPEN = "skip", "until", "open"
    how = forms.ChoiceField(label=_("Pause"), widget=forms.RadioSelect, initial=SKIP, choices=[
        (SKIP, _("for a number of payments")),
        (UNTIL, _("until a date")),
        (OPEN, _("until I resume it")),
    ])
    payments = forms.TypedChoiceField(label=_("Payments to skip"), coerce=int, required=False, initial=1,
                                      choices=[(n, str(n)) for n in range(1, MAX_PAUSE_PAYMENTS + 1)])
    until = forms.DateField(label=_("Resume on or after"), required=False,
                            widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("how") == self.UNTIL and not data.get("until"):
            self.add_error("until", _("Choose the date to resume on."))
        if data.get("how") == self.SKIP and not data.get("payments"):
            self.add_error("payments", _("Choose how many payments to skip."))
        return data

    def pause_kwargs(self) -> dict[str, int | date | None]:
        """The keywords of ``lifecycle.pause_end`` for the choice made."""
        how = self.cleaned_data["how"]
        if how == self.SKIP:
            return {"payments": self.cleaned_data["payments"]}
        if how == self.UNTIL:
            return {"until": self.cleaned_data["until"]}
        return {}


class SwitchProductForm(forms.Form):
    """Another product for a subscription (billing/rules/switch.py): the live products of
    its currency, each with its monthly price and whether it is an upgrade (paid now, for
    the days already paid) or a downgrade (from the next payment)."""

    sku = forms.ChoiceField(label=gettext_lazy("Switch to"), widget=forms.RadioSelect)

    def __init__(self, *args: Any, choices: list[tuple[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["sku"].choices = choices or []
