"""Card entry shared by subscribe and replace-card: the card number goes to the gateway
for a token, on the server, and never further.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_variables

from billing.gateway import CardError, CardToken, GatewayError, get_gateway


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
            _("Our payment provider could not be reached, so your card was not saved. "
              "Nothing was charged: please try again in a minute."), code="gateway_unreachable"))
        return None
