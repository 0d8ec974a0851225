"""The staff form that adds a price to a product (docs/PRICING.md): the model, its amounts
typed in the currency (10.00, 0.002), its tiers one a line, its interval; every refusal
of the price models (billing/rules/pricing.py) shown on the field it is about."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from billing.rules.pricing import (
    MAX_INTERVAL_COUNT,
    BillingScheme,
    Interval,
    PriceTerms,
    Tier,
    TiersMode,
    decimal_amount,
)
from billing.rules.tax import TaxBehavior
from core.money import exponent, is_payable_currency

MODELS = [("per_unit", _("Per unit")), ("package", _("Package: per N units, rounded up")),
          ("graduated", _("Tiered, graduated: each tier prices its own units")),
          ("volume", _("Tiered, volume: the tier of the total prices every unit"))]
INTERVALS = [(Interval.DAY, _("Day")), (Interval.WEEK, _("Week")), (Interval.MONTH, _("Month")),
             (Interval.YEAR, _("Year"))]
TAX_BEHAVIORS = [(TaxBehavior.UNSPECIFIED, _("As the seller's profile says")),
                 (TaxBehavior.INCLUSIVE, _("Included in the amounts")),
                 (TaxBehavior.EXCLUSIVE, _("Added to the amounts"))]
LINE = _("Line %(line)s: %(problem)s")


def tax_behavior_words(stored: str | None) -> str:
    """A stored ``TaxBehavior`` in the staff's words ("Added to the amounts")."""
    return str(dict(TAX_BEHAVIORS)[stored or TaxBehavior.UNSPECIFIED])


def in_minor_units(amount: Decimal, currency: str) -> Decimal:
    """An amount typed in the currency (0.002 USD) in its minor units (0.2), possibly a fraction of one."""
    return (amount.scaleb(exponent(currency)) + 0).normalize()


class PriceForm(forms.Form):
    nickname = forms.CharField(max_length=100, required=False, label=_("Nickname"),
                               help_text=_("For staff and the API, e.g. Yearly"))
    model = forms.ChoiceField(choices=MODELS, label=_("Price model"))
    currency = forms.CharField(min_length=3, max_length=3, label=_("Currency"), help_text=_("ISO 4217, e.g. USD"))
    unit_price = forms.DecimalField(
        required=False, max_digits=28, decimal_places=16, min_value=0, label=_("Price of one unit"),
        help_text=_("Per unit or per package, in the currency: 10.00, or 0.002 for a fifth of a cent"))
    package_size = forms.IntegerField(required=False, min_value=2, max_value=10**9, label=_("Units in a package"))
    tiers = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), label=_("Tiers"),
        help_text=_("Tiered prices: one tier a line, its last unit (inf for the last tier), the price of one unit "
                    "and an optional flat fee, e.g. \"1000 0\" then \"inf 0.002\""))
    interval = forms.ChoiceField(choices=INTERVALS, initial=Interval.MONTH, label=_("Billed every"))
    interval_count = forms.IntegerField(min_value=1, max_value=max(MAX_INTERVAL_COUNT.values()), initial=1,
                                        label=_("Number of intervals"))
    unit_label = forms.CharField(max_length=40, required=False, label=_("What a unit is called"),
                                 help_text=_("e.g. seat or call"))
    trial_days = forms.IntegerField(required=False, min_value=0, max_value=365, label=_("Free trial (days)"))
    min_quantity = forms.IntegerField(required=False, min_value=0, max_value=10**9, label=_("Fewest units"))
    max_quantity = forms.IntegerField(required=False, min_value=1, max_value=10**9, label=_("Most units"))
    meter = forms.RegexField(regex=r"^[A-Za-z0-9_.:-]+$", max_length=100, required=False, label=_("Meter"),
                             help_text=_("A metered price: the event name of its meter, e.g. api_calls"))
    tax_behavior = forms.ChoiceField(
        choices=TAX_BEHAVIORS, initial=TaxBehavior.UNSPECIFIED, required=False, label=_("VAT"),
        help_text=_("Whether the amounts include VAT or have it added; it cannot change later. A subscription's "
                    "prices all charge it one way."))

    def clean_currency(self) -> str:
        currency = self.cleaned_data["currency"].strip().upper()
        if not is_payable_currency(currency):
            raise forms.ValidationError(gettext("%(code)s is not an ISO 4217 currency that can be paid in (e.g. USD, "
                                                "EUR, JPY).") % {"code": currency}, code="unknown_currency")
        return currency

    def _tiers(self, text: str, currency: str) -> tuple[Tier, ...] | None:
        tiers: list[Tier] = []
        for number, line in enumerate((row for row in text.splitlines() if row.strip()), start=1):
            parts = line.split()
            try:
                if len(parts) not in (2, 3):
                    raise ValueError(gettext("give the last unit, the price of one unit and an optional flat fee"))
                up_to = None if parts[0].lower() == "inf" else int(parts[0])
                unit = decimal_amount(in_minor_units(Decimal(parts[1]), currency), gettext("the price of one unit"))
                flat = decimal_amount(in_minor_units(Decimal(parts[2]), currency), gettext("the flat fee")) \
                    if len(parts) == 3 else Decimal(0)
                if flat != flat.to_integral_value():
                    raise ValueError(gettext("a flat fee is a whole number of the currency's smallest unit"))
                tiers.append(Tier(up_to, unit, int(flat)))
            except (ValueError, InvalidOperation) as problem:
                text_of = str(problem) if isinstance(problem, ValueError) and str(problem) else gettext("not a number")
                self.add_error("tiers", LINE % {"line": number, "problem": text_of})
                return None
        return tuple(tiers)

    def clean(self) -> dict:
        data = super().clean()
        currency, model = data.get("currency"), data.get("model")
        if not currency or not model or "interval_count" not in data or "interval" not in data:
            return data
        tiered = model in (TiersMode.GRADUATED, TiersMode.VOLUME)
        unit = None
        if not tiered:
            if data.get("unit_price") is None:
                self.add_error("unit_price", gettext("Give the price of one unit."))
                return data
            try:
                unit = decimal_amount(in_minor_units(data["unit_price"], currency))
            except ValueError as problem:
                self.add_error("unit_price", str(problem))
                return data
        if model == "package" and not data.get("package_size"):
            self.add_error("package_size", gettext("Give the number of units in a package."))
            return data
        tiers: tuple[Tier, ...] = ()
        if tiered:
            found = self._tiers(data.get("tiers") or "", currency)
            if found is None:
                return data
            tiers = found
        low, high = data.get("min_quantity"), data.get("max_quantity")
        if low is not None and high is not None and high < low:
            self.add_error("max_quantity", gettext("The most units are fewer than the fewest."))
            return data
        try:
            data["terms"] = PriceTerms(
                currency, BillingScheme.TIERED if tiered else BillingScheme.PER_UNIT, unit_amount=unit,
                tiers_mode=model if tiered else None, tiers=tiers,
                package_size=data.get("package_size") if model == "package" else None,
                interval=data["interval"], interval_count=data["interval_count"])
        except ValueError as problem:
            field = "tiers" if tiered and ("tier" in str(problem) or "up_to" in str(problem)) else (
                "interval_count" if "interval_count" in str(problem) else "unit_price")
            self.add_error(field, str(problem))
        return data
