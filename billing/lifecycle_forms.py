"""The forms of cancelling and pausing (portal and staff): what the customer chooses,
checked; the dates they lead to are ``billing.rules.lifecycle``'s."""

from __future__ import annotations

from datetime import date
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from billing.forms import VersionedForm
from billing.rules.lifecycle import CANCEL_REASONS, MAX_PAUSE_PAYMENTS, CancelMode

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
                            widget=forms.DateInput(attrs={"type": "date"}))

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
