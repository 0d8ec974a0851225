"""What the shop's discount codes and billing's coupons share on their staff forms: the
limit on uses and the validity days (both included), as staff set them when making a
code and change them later."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _


class DiscountCodeTerms(forms.Form):
    """A code's limit and dates, as staff set them when making it and change them later
    (the kind and size of the discount stay: a code customers were given keeps meaning
    what it meant)."""

    max_uses = forms.IntegerField(label=_("Limit on uses (optional)"), min_value=1, max_value=10**9, required=False)
    valid_from = forms.DateField(label=_("Valid from (optional)"), required=False,
                                 widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
                                 help_text=_("The first day it may be used (UTC)."))
    valid_until = forms.DateField(label=_("Valid until (optional)"), required=False,
                                  widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
                                  help_text=_("The last day it may be used (UTC), included."))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        first, last = data.get("valid_from"), data.get("valid_until")
        if first and last and last < first:
            self.add_error("valid_until", _("The last valid day is before the first."))
        return data
