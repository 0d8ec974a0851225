"""Forms of the staff pages (the customer portal's forms live in billing/forms.py)."""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from decimal import Decimal

from django import forms
from django.utils.translation import gettext_lazy as _
from stdnum import get_cc_module

from billing.forms import CountryChoiceField
from billing.models import MAX_TRIAL_DAYS
from billing.rules.coupons import MAX_CODE_LENGTH, MAX_REPEATING_PAYMENTS, CouponDuration, normalize_code
from billing.rules.tax import is_eu
from billing.rules.vat_numbers import compact, vat_number_problem
from core.countries import is_country
from core.discountforms import DiscountCodeTerms
from core.money import exponent, format_with_code, is_payable_currency, minor_units

SKU_RE = re.compile(r"^[A-Z0-9][A-Z0-9-]{1,39}$")


class LookupForm(forms.Form):
    """Find a customer by part of their e-mail or name (Django's users hold both), by
    account id, or by subscription id alone (its ``SUBID#`` look-up item names the
    account). The field keeps the name ``email`` that links and bookmarks use."""

    email = forms.CharField(required=False, max_length=254, label=_("E-mail or name"),
                            help_text=_("All or part of it; several words must all match."))
    account_id = forms.CharField(required=False, max_length=64, label=_("Account id"))
    sub_id = forms.CharField(required=False, max_length=64, label=_("Subscription id"))

    def clean(self) -> dict:
        data = super().clean()
        for name in ("account_id", "sub_id"):
            if "#" in (data.get(name) or ""):
                self.add_error(name, forms.ValidationError(_("Ids never contain '#'."), code="invalid_id"))
        if not (data.get("email") or data.get("account_id") or data.get("sub_id")):
            raise forms.ValidationError(_("Give an e-mail or name, an account id or a subscription id."),
                                        code="empty")
        return data


class PaymentDayForm(forms.Form):
    payment_day = forms.IntegerField(min_value=1, max_value=31, label=_("New payment day (1-31)"))


class MoneyField(forms.DecimalField):
    """A price typed as a decimal (12.99): parsed as Decimal, never as a float. Up to four
    decimals, ISO 4217's most (CLF, UYW); the form checks them against its currency's own
    exponent (``amount_in_minor_units``)."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("max_digits", 14)
        kwargs.setdefault("decimal_places", 4)
        kwargs.setdefault("min_value", Decimal("0.0001"))
        super().__init__(**kwargs)


class RefundForm(forms.Form):
    amount = MoneyField(label=_("Amount to refund"))
    reason = forms.CharField(max_length=200, required=False, label=_("Reason"))
    # Fixed when the form is shown: the refund's idempotency key, so a double submit
    # refunds once while a later refund of the same charge is a refund of its own.
    request_id = forms.RegexField(regex=r"^[0-9a-f]{16}$", widget=forms.HiddenInput)
    # The receipt's refunded amount (minor units) as the form showed it: its version. The
    # refund is made only while it is still that (billing/access/receipts.py claim_refund).
    refunded = forms.IntegerField(min_value=0, widget=forms.HiddenInput)

    # An invoice of several lines (a fee, seats, usage tiers): the refund may credit one of
    # them alone, as Stripe's credit note lines (billing/rules/credit_lines.py).
    line = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label=_("Lines credited"))

    def __init__(self, *args, currency: str, refundable: int, lines: list[tuple[str, int]] | None = None,
                 **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.currency = currency
        self.refundable = refundable
        self.lines = lines or []
        if lines is None:
            del self.fields["line"]
        else:
            self.fields["line"].choices = [("", _("Every line, each its share"))] + [
                (str(n), _("%(line)s (%(left)s left)") % {"line": name, "left": format_with_code(left, currency)})
                for n, (name, left) in enumerate(lines) if left > 0]

    def clean_amount(self) -> int:
        amount = amount_in_minor_units(self.cleaned_data["amount"], self.currency)
        if amount > self.refundable:
            raise forms.ValidationError(_("That is more than what is left to refund on this receipt."))
        return amount

    def clean(self) -> dict:
        data = super().clean()
        line, amount = data.get("line"), data.get("amount")
        if line is not None and amount is not None and amount > self.lines[line][1]:
            self.add_error("amount", _("That is more than what is left of this line (%(left)s).") % {
                "left": format_with_code(self.lines[line][1], self.currency)})
        return data


def amount_in_minor_units(amount: Decimal, currency: str) -> int:
    """``money.minor_units``, its refusal as a form error in the page's language."""
    try:
        return minor_units(amount, currency)
    except ValueError as error:
        raise forms.ValidationError(
            _("%(currency)s has %(places)d decimal places at most.") % {
                "currency": currency.upper(), "places": exponent(currency)}, code="decimal_places") from error


# Control characters (line breaks, tabs, NUL...) and Unicode line/paragraph separators.
LINE_BREAKING_CATEGORIES = {"Cc", "Zl", "Zp"}


def no_control_characters(value: str) -> None:
    """A product's name and description are one line of text: they go into e-mail
    subjects, page titles and CSV cells, where a line break is a 500 or a lost e-mail."""
    if any(unicodedata.category(ch) in LINE_BREAKING_CATEGORIES for ch in value):
        raise forms.ValidationError(_("Use one line of text: no line breaks, tabs or other control characters."),
                                    code="control_characters")


class ProductForm(forms.Form):
    sku = forms.CharField(max_length=40, label=_("SKU"), help_text=_("Capitals, digits and '-', e.g. NEWS-DAILY"))
    name = forms.CharField(max_length=100, validators=[no_control_characters], label=_("Name"))
    description = forms.CharField(max_length=300, required=False, validators=[no_control_characters],
                                  label=_("Description"))
    price = MoneyField(label=_("Monthly price"))
    currency = forms.CharField(min_length=3, max_length=3, label=_("Currency"), help_text=_("ISO 4217, e.g. USD"))
    trial_days = forms.IntegerField(
        min_value=0, max_value=MAX_TRIAL_DAYS, required=False, label=_("Free trial (days)"),
        help_text=_("0 or empty: no trial. New subscriptions are free for this many days, once per customer; "
                    "their first payment is the day after."),
        error_messages={"min_value": _("A trial cannot be negative: give 0 for none."),
                        "max_value": _("A trial lasts at most %(limit_value)s days."),
                        "invalid": _("Give a whole number of days.")},
    )

    add_on = forms.BooleanField(
        required=False, label=_("Sold as an add-on"),
        help_text=_("Offered to the subscribers of other products from their next payment: a price of it in "
                    "their currency and on their billing period."))

    def clean_trial_days(self) -> int:
        return self.cleaned_data.get("trial_days") or 0

    def __init__(self, *args, editing: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if editing:
            # The SKU is part of the key: it cannot change once created.
            self.fields["sku"].disabled = True

    def clean_sku(self) -> str:
        sku = self.cleaned_data["sku"].strip().upper()
        if not SKU_RE.match(sku):
            raise forms.ValidationError(_("Use 2-40 capitals, digits or '-'."))
        return sku

    def clean_currency(self) -> str:
        currency = self.cleaned_data["currency"].strip().upper()
        if not currency.isalpha():
            raise forms.ValidationError(_("A three-letter ISO 4217 code."))
        if not is_payable_currency(currency):
            raise forms.ValidationError(_("%(code)s is not an ISO 4217 currency that can be paid in (e.g. USD, EUR, "
                                          "JPY).") % {"code": currency}, code="unknown_currency")
        return currency

    def clean(self) -> dict:
        data = super().clean()
        if "price" in data and "currency" in data:
            try:
                data["amount"] = amount_in_minor_units(data["price"], data["currency"])
            except forms.ValidationError as error:
                self.add_error("price", error)
        return data


class DayForm(forms.Form):
    """A day typed in a URL (``?day=2026-11-21``, ISO only): the webhook events page."""

    # A sane window: a day outside it is a typo, and its neighbours must be days too.
    FIRST, LAST = date(2000, 1, 1), date(2999, 12, 31)

    day = forms.DateField(input_formats=["%Y-%m-%d"], label=_("Day (UTC)"),
                          error_messages={"invalid": _("Give a day as YYYY-MM-DD, e.g. 2026-11-21.")})

    def clean_day(self) -> date:
        day = self.cleaned_data["day"]
        if not self.FIRST <= day <= self.LAST:
            raise forms.ValidationError(_("Give a day between %(first)s and %(last)s."), code="out_of_range",
                                        params={"first": self.FIRST.isoformat(), "last": self.LAST.isoformat()})
        return day


class StaffSwitchForm(forms.Form):
    """The product a staff member switches a subscription to; once the amounts were shown,
    they travel back hidden, so the switch charges only what was confirmed."""

    sku = forms.ChoiceField(label=_("Switch to"))
    step = forms.CharField(widget=forms.HiddenInput, required=False)
    upgrade = forms.CharField(widget=forms.HiddenInput, required=False)
    charge = forms.IntegerField(widget=forms.HiddenInput, required=False)
    credit = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args: object, choices: list[tuple[str, str]] | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["sku"].choices = choices or []


class CouponForm(DiscountCodeTerms):
    """A new coupon: its code, a percentage or an amount off (typed as a decimal, in a
    currency), how many payments it lasts, and the shared limit and dates."""

    code = forms.CharField(max_length=MAX_CODE_LENGTH, label=_("Code"),
                           help_text=_("Letters, digits and '-', at most 32; stored in capitals."))
    percent_off = forms.IntegerField(label=_("Percent off"), min_value=1, max_value=100, required=False)
    amount_off = MoneyField(label=_("Amount off"), required=False)
    currency = forms.CharField(min_length=3, max_length=3, required=False, label=_("Currency (for an amount)"))
    duration = forms.ChoiceField(label=_("Lasts"), choices=[
        (CouponDuration.ONCE, _("once: the first payment after it is applied")),
        (CouponDuration.REPEATING, _("a number of payments")),
        (CouponDuration.FOREVER, _("forever: every payment")),
    ])
    duration_payments = forms.IntegerField(label=_("Payments (for a number of payments)"), min_value=1,
                                           max_value=MAX_REPEATING_PAYMENTS, required=False)

    field_order = ["code", "percent_off", "amount_off", "currency", "duration", "duration_payments", "max_uses",
                   "valid_from", "valid_until"]

    def clean_code(self) -> str:
        code = normalize_code(self.cleaned_data["code"])
        if code is None:
            raise forms.ValidationError(_("Use letters, digits or '-', at most 32."), code="invalid_code")
        return code

    def clean_currency(self) -> str:
        currency = (self.cleaned_data.get("currency") or "").strip().upper()
        if currency and not is_payable_currency(currency):
            raise forms.ValidationError(_("%(code)s is not an ISO 4217 currency that can be paid in (e.g. USD, EUR, "
                                          "JPY).") % {"code": currency}, code="unknown_currency")
        return currency

    def clean(self) -> dict:
        data = super().clean()
        if (data.get("percent_off") is None) == (data.get("amount_off") is None):
            raise forms.ValidationError(_("Give either a percentage or an amount off."), code="one_of")
        if data.get("amount_off") is not None:
            if not data.get("currency"):
                self.add_error("currency", _("An amount off needs a currency."))
            else:
                try:
                    data["amount_off"] = amount_in_minor_units(data["amount_off"], data["currency"])
                except forms.ValidationError as error:
                    self.add_error("amount_off", error)
        if data.get("duration") == CouponDuration.REPEATING and not data.get("duration_payments"):
            self.add_error("duration_payments", _("How many payments does it last?"))
        return data


class ApplyCouponForm(forms.Form):
    code = forms.CharField(max_length=MAX_CODE_LENGTH + 8, label=_("Coupon code"))


class SellerProfileForm(forms.Form):
    """The seller's business and tax profile ("Business & tax"). The VAT number is checked
    with python-stdnum: an EU one by ``stdnum.eu.vat`` and its prefix against the country,
    another country's by that country's own module where stdnum has one."""

    legal_name = forms.CharField(label=_("Legal name"), max_length=200, validators=[no_control_characters])
    address = forms.CharField(label=_("Address"), max_length=500, required=False,
                              widget=forms.Textarea(attrs={"rows": 3}))
    country = CountryChoiceField(label=_("Country"))
    vat_number = forms.CharField(label=_("VAT number"), max_length=30, required=False,
                                 help_text=_("With its country prefix, for example IT00743110157."))
    oss_registered = forms.BooleanField(label=_("Registered for the One-Stop Shop (OSS)"), required=False)
    under_threshold = forms.BooleanField(
        label=_("Under the EUR 10,000 threshold: charge my own country's VAT to EU consumers"), required=False,
        help_text=_("Only while cross-border sales to EU consumers stay under EUR 10,000 a year (Article 59c)."))
    prices_include_tax = forms.BooleanField(label=_("Catalogue prices include VAT"), required=False)
    registrations = forms.CharField(
        label=_("Registrations outside the EU"), required=False, max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "GB 20\nKR 10"}),
        help_text=_("One a line: a country code and the rate in percent (GB 20). None: no VAT is charged "
                    "outside the EU."))

    def clean_vat_number(self) -> str:
        return compact(self.cleaned_data.get("vat_number") or "")

    def clean_registrations(self) -> dict[str, Decimal]:
        found: dict[str, Decimal] = {}
        for number, line in enumerate((self.cleaned_data.get("registrations") or "").splitlines(), start=1):
            if not line.strip():
                continue
            parts = line.replace(":", " ").replace("%", " ").split()
            try:
                country, percent = parts[0].upper(), Decimal(parts[1].replace(",", "."))
            except (IndexError, ArithmeticError):
                raise forms.ValidationError(_("Line %(line)s: write a country code and a rate, as GB 20."),
                                            code="registration", params={"line": number}) from None
            if len(parts) != 2 or not is_country(country) or not 0 <= percent <= 100:
                raise forms.ValidationError(_("Line %(line)s: write a country code and a rate, as GB 20."),
                                            code="registration", params={"line": number})
            if is_eu(country):
                raise forms.ValidationError(
                    _("Line %(line)s: %(country)s is in the EU, whose rates come from the EU's own data."),
                    code="registration_eu", params={"line": number, "country": country})
            found[country] = percent.normalize() if percent != percent.to_integral() else percent.quantize(Decimal(1))
        return found

    def clean(self) -> dict:
        data = super().clean()
        number, country = data.get("vat_number"), data.get("country")
        if number and country and "vat_number" not in self.errors:
            if is_eu(country):
                if vat_number_problem(number, country) is not None:
                    self.add_error("vat_number", forms.ValidationError(
                        _("This is not a valid VAT number of %(country)s."), code="invalid_vat_number",
                        params={"country": country}))
            elif (module := get_cc_module(country.lower(), "vat")) is not None:
                digits = number[2:] if number[:2] == country.upper() else number
                if not module.is_valid(digits):
                    self.add_error("vat_number", forms.ValidationError(
                        _("This is not a valid VAT number of %(country)s."), code="invalid_vat_number",
                        params={"country": country}))
        return data
