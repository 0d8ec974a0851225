"""The shop's forms: cart lines, checkout (address, codes, card), date ranges, gift-card
balance, and the staff's forms. Ids typed by a person are checked here (``shop.ids``),
so a bad one is a form error, never a key."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from core.cardforms import NEW_CARD, CardFields
from core.countries import country_choices
from core.discountforms import DiscountCodeTerms
from shop.errors import InvalidInput
from shop.ids import check_id
from shop.plan import MAX_QUANTITY

CARD_FIELDS = ("card_number", "exp_month", "exp_year", "cvc", "cardholder", "billing_address")
MAX_RANGE_DAYS = 366 * 3


def _id_field(label: object, **kwargs: Any) -> forms.CharField:
    return forms.CharField(label=label, max_length=64, **kwargs)


def clean_id(value: str, what: str) -> str:
    try:
        return check_id(value.strip(), what)
    except InvalidInput as error:
        raise ValidationError(str(error), code="invalid_id") from error


class AddToCartForm(forms.Form):
    quantity = forms.IntegerField(label=_("Quantity"), min_value=1, max_value=MAX_QUANTITY, initial=1)


class CartLineForm(forms.Form):
    """Change a line's quantity; 0 removes it."""

    product = _id_field(_("Product"))
    quantity = forms.IntegerField(label=_("Quantity"), min_value=0, max_value=MAX_QUANTITY)

    def clean_product(self) -> str:
        return clean_id(self.cleaned_data["product"], "product id")


class CheckoutForm(CardFields):
    """Shipping address, optional discount code and gift card, then the card for the rest.

    The card is optional here: a gift card may cover everything; checkout says so when a
    card is needed. ``token`` is the checkout token issued with the page (the order id)."""

    token = forms.CharField(widget=forms.HiddenInput, max_length=64)
    street = forms.CharField(label=_("Street"), max_length=200, widget=forms.TextInput(
        attrs={"autocomplete": "address-line1"}))
    number = forms.CharField(label=_("House number"), max_length=20, required=False)
    zip_code = forms.CharField(label=_("Postcode"), max_length=20, widget=forms.TextInput(
        attrs={"autocomplete": "postal-code"}))
    city = forms.CharField(label=_("City"), max_length=100, widget=forms.TextInput(
        attrs={"autocomplete": "address-level2"}))
    county = forms.CharField(label=_("County (optional)"), max_length=100, required=False)
    country = forms.CharField(label=_("Country"), max_length=100, widget=forms.TextInput(
        attrs={"autocomplete": "country-name"}))
    # The country the VAT of the order follows (an ISO code from the list, never typed): the
    # account's billing country from now on.
    billing_country = forms.ChoiceField(
        label=_("Billing country"), widget=forms.Select(attrs={"autocomplete": "country"}),
        choices=lambda: [("", gettext("Choose a country")), *country_choices()],
        error_messages={"required": _("Choose your billing country.")})
    save_address = forms.BooleanField(label=_("Keep this address for my next order"), required=False,
                                      initial=True)
    discount_code = forms.CharField(label=_("Discount code (optional)"), max_length=64, required=False)
    gift_card = forms.CharField(label=_("Gift card code (optional)"), max_length=64, required=False,
                                widget=forms.TextInput(attrs={"autocomplete": "off"}))

    # A wallet card, or NEW_CARD for the card fields; only offered when the wallet has cards.
    saved_card = forms.ChoiceField(label=_("Pay the rest with"), widget=forms.RadioSelect, required=False)

    field_order = ["token", "street", "number", "zip_code", "city", "county", "country", "billing_country",
                   "save_address",
                   "discount_code", "gift_card", "saved_card", *CARD_FIELDS]

    def __init__(self, *args: Any, cards: list[tuple[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if cards:
            self.fields["saved_card"].choices = [*cards, (NEW_CARD, _("A new card (below)"))]
        else:
            del self.fields["saved_card"]
        self.card_optional()
        if "card_number" in self.fields:
            self.fields["card_number"].help_text = _("Leave empty when a gift card pays the whole order.")
        self.order_fields(self.field_order)

    def has_card(self) -> bool:
        """A new card was given (a wallet card chosen leaves the card fields aside)."""
        return not self.saved_card_id and self.card_given()

    def clean_card_number(self) -> str:
        return super().clean_card_number() if self.has_card() else ""

    def clean_cvc(self) -> str:
        if not self.has_card():
            return ""
        cvc = (self.cleaned_data.get("cvc") or "").strip()
        if not cvc:
            raise ValidationError(_("Enter the card's security code."), code="required")
        return super().clean_cvc()

    def clean(self) -> dict[str, Any]:
        if not self.has_card() or self.in_browser:
            return forms.Form.clean(self)
        for name in ("exp_month", "exp_year"):
            if not self.cleaned_data.get(name) and name not in self.errors:
                self.add_error(name, _("Choose the card's expiry month and year."))
        return super().clean()

    def address(self) -> dict[str, str]:
        data = self.cleaned_data
        raw = {"Street": data["street"], "Number": data.get("number", ""), "ZipCode": data["zip_code"],
               "City": data["city"], "County": data.get("county", ""), "Country": data["country"]}
        return {k: v.strip() for k, v in raw.items() if v and v.strip()}


class DateRangeForm(forms.Form):
    """A date range including the whole of its last day (docs/SHOP.md, "Where the original
    design is wrong", 7)."""

    first = forms.DateField(label=_("From"), widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))
    last = forms.DateField(label=_("To"), widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        first, last = data.get("first"), data.get("last")
        if first and last:
            if last < first:
                self.add_error("last", _("The end of the range is before its start."))
            elif (last - first).days > MAX_RANGE_DAYS:
                self.add_error("first", _("A range of at most three years, please."))
        return data

    @classmethod
    def for_request(cls, params: Any, today: date, days: int = 90) -> DateRangeForm:
        """Bound to the query string, defaulting to the last ``days`` days."""
        data = {"first": params.get("first") or (today - timedelta(days=days)).isoformat(),
                "last": params.get("last") or today.isoformat()}
        return cls(data)


class GiftCardBalanceForm(forms.Form):
    code = forms.CharField(label=_("Gift card code"), max_length=64,
                           widget=forms.TextInput(attrs={"autocomplete": "off"}))


# --- staff -----------------------------------------------------------------------------


class ProductForm(forms.Form):
    """A new product. Its category is one of ``SHOP_CATEGORIES`` (passed in): the
    catalogue lists only those (there is no listing of categories without a Scan), so a
    product filed under any other would never be shown."""

    product_id = _id_field(_("Product id"))
    name = forms.CharField(label=_("Name"), max_length=200)
    description = forms.CharField(label=_("Description"), max_length=1000, required=False,
                                  widget=forms.Textarea(attrs={"rows": 2}))
    category = forms.ChoiceField(label=_("Category"), choices=())
    price = forms.IntegerField(label=_("Price (minor units)"), min_value=0, max_value=10**10,
                               help_text=_("In the currency's smallest unit: 10000 öre is 100 SEK."))
    currency = forms.RegexField(label=_("Currency"), regex=r"^[A-Z]{3}$", max_length=3,
                                error_messages={"invalid": _("Three capital letters, e.g. SEK.")})

    def __init__(self, *args: Any, categories: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["category"].choices = [(c, c.capitalize()) for c in categories]

    def clean_product_id(self) -> str:
        return clean_id(self.cleaned_data["product_id"], "product id")

    def clean_category(self) -> str:
        return clean_id(self.cleaned_data["category"], "category")


class WarehouseForm(forms.Form):
    warehouse_id = _id_field(_("Warehouse id"))
    name = forms.CharField(label=_("Name"), max_length=200)
    street = forms.CharField(label=_("Street"), max_length=200)
    number = forms.CharField(label=_("House number"), max_length=20, required=False)
    zip_code = forms.CharField(label=_("Postcode"), max_length=20)
    city = forms.CharField(label=_("City"), max_length=100)
    country = forms.CharField(label=_("Country"), max_length=100)

    def clean_warehouse_id(self) -> str:
        return clean_id(self.cleaned_data["warehouse_id"], "warehouse id")


class StockForm(forms.Form):
    """Stock a product in a warehouse (first time) or change it by a signed amount.
    On a product's page the product is fixed (hidden), on a warehouse's the warehouse."""

    product_id = _id_field(_("Product id"))
    warehouse_id = _id_field(_("Warehouse id"))
    change = forms.IntegerField(label=_("Change (+ received, − written off)"), min_value=-10**6, max_value=10**6)
    reason = forms.CharField(label=_("Reason"), max_length=300)

    def __init__(self, *args: Any, fixed: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if fixed:
            self.fields[fixed].widget = forms.HiddenInput()

    def clean_product_id(self) -> str:
        return clean_id(self.cleaned_data["product_id"], "product id")

    def clean_warehouse_id(self) -> str:
        return clean_id(self.cleaned_data["warehouse_id"], "warehouse id")

    def clean_change(self) -> int:
        if self.cleaned_data["change"] == 0:
            raise ValidationError(_("A change of zero changes nothing."), code="zero")
        return self.cleaned_data["change"]


class ShipForm(forms.Form):
    carrier = forms.CharField(label=_("Carrier"), max_length=100)
    tracking_number = forms.CharField(label=_("Tracking number"), max_length=100)


class FindForm(forms.Form):
    """Go to an order, a product, a warehouse or a customer by id."""

    KINDS = [("order", _("Order")), ("product", _("Product")), ("warehouse", _("Warehouse")), ("customer", _("Customer"))]
    kind = forms.ChoiceField(label=_("What"), choices=KINDS)
    ident = _id_field(_("Id"))

    def clean_ident(self) -> str:
        return clean_id(self.cleaned_data["ident"], "id")


class DiscountCodeForm(DiscountCodeTerms):
    code = _id_field(_("Code"))
    percent_off = forms.IntegerField(label=_("Percent off"), min_value=1, max_value=100, required=False)
    amount_off = forms.IntegerField(label=_("Amount off (minor units)"), min_value=1, max_value=10**10, required=False)
    currency = forms.RegexField(label=_("Currency (for an amount)"), regex=r"^[A-Z]{3}$", max_length=3, required=False)

    field_order = ["code", "percent_off", "amount_off", "currency", "max_uses", "valid_from", "valid_until"]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if (data.get("percent_off") is None) == (data.get("amount_off") is None):
            raise ValidationError(_("Give either a percentage or an amount off."), code="one_of")
        if data.get("amount_off") is not None and not data.get("currency"):
            self.add_error("currency", _("An amount off needs a currency."))
        return data


class GiftCardIssueForm(forms.Form):
    code = forms.RegexField(label=_("Code"), regex=r"^[A-Za-z0-9-]{8,64}$", max_length=64,
                            error_messages={"invalid": _("8-64 letters, digits or dashes.")})
    balance = forms.IntegerField(label=_("Balance (minor units)"), min_value=1, max_value=10**9)
    currency = forms.RegexField(label=_("Currency"), regex=r"^[A-Z]{3}$", max_length=3)
