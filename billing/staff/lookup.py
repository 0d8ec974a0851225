"""Finding a customer: by account id, subscription id or e-mail (from Django's users),
and the user admin's link to a user's billing page.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from billing import access

from .common import account_url, render_staff
from .forms import LookupForm


def index(request: HttpRequest) -> HttpResponse:
    """The look-up form; with a query, go straight to the account it names."""
    form = LookupForm(request.GET or None)
    matches: list[dict] = []
    if form.is_valid():
        data = form.cleaned_data
        if data["account_id"]:
            if access.get_account(data["account_id"]) is None:
                form.add_error("account_id", "No account with that id.")
            elif data["sub_id"]:
                if access.get_subscription(data["account_id"], data["sub_id"]) is None:
                    form.add_error("sub_id", "That account has no subscription with that id.")
                else:
                    return redirect(account_url(data["account_id"]) + f"#sub-{data['sub_id']}")
            else:
                return redirect(account_url(data["account_id"]))
        else:
            # E-mails live in Django's users; the billing account is one GetItem per user.
            email = data["email"]
            users = get_user_model().objects.filter(Q(email__iexact=email) | Q(username__iexact=email))
            for user in users[:10]:
                account_id = access.get_account_id_for_user(user.pk)
                if account_id:
                    matches.append({"user": user, "account_id": account_id})
            if len(matches) == 1:
                return redirect(account_url(matches[0]["account_id"]))
            if not matches:
                form.add_error("email", "No customer with a billing account has that e-mail.")
    return render_staff(request, "staff/index.html", "Billing", {"form": form, "matches": matches})


def user_billing(request: HttpRequest, user_id: int) -> HttpResponse:
    """From the user admin: that user's billing page."""
    account_id = access.get_account_id_for_user(user_id)
    if account_id is None:
        user = get_user_model().objects.filter(pk=user_id).first()
        return render_staff(request, "staff/no_account.html", "No billing account", {"user_obj": user}, status=404)
    return redirect(account_url(account_id))
