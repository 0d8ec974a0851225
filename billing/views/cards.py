"""Card entry shared by subscribe and replace-card: the card number goes to the gateway
for a token, on the server, and never further.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.views.decorators.debug import sensitive_variables

from billing.gateway import CardError, CardToken, get_gateway


# All variables: cleaned_data holds the number and CVC, and every frame below (the
# gateway, its helpers) inherits this list in Django's error reports.
@sensitive_variables()
def _tokenize(form: Any) -> CardToken | None:
    """Exchange the card for a token on the server; gateway refusals become field errors."""
    data = form.cleaned_data
    try:
        return get_gateway().tokenize_card(data["card_number"], data["exp_month"], data["exp_year"], data["cvc"])
    except CardError as error:
        form.add_error(error.field if error.field in form.fields else "card_number",
                       ValidationError(str(error), code="card_refused"))
        return None
