"""Finding a customer: by part of an e-mail or name (from Django's users), by account id,
or by subscription id alone; and the user admin's link to a user's billing page.

One match goes straight to the billing page; several are listed (at most
``MAX_MATCHES``, with a note when there were more).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _

from billing import access
from billing.staff.common import account_url
from billing.staff.forms import LookupForm
from core.staff import render_staff

MAX_MATCHES = 25


def matching_users(text: str) -> QuerySet:
    """Users whose e-mail, user name, first or last name holds every word of ``text``
    (case-insensitive), exact e-mail matches first."""
    query = Q()
    for word in text.split():
        query &= (Q(email__icontains=word) | Q(username__icontains=word)
                  | Q(first_name__icontains=word) | Q(last_name__icontains=word))
    return get_user_model().objects.filter(query).order_by("email", "pk")


def find_customers(text: str) -> tuple[list[dict], bool]:
    """Customers (users with a billing account) matching ``text``, and whether more users
    matched than were looked at. An exact e-mail match alone is the only result."""
    users = list(matching_users(text)[:MAX_MATCHES + 1])
    more = len(users) > MAX_MATCHES
    users = users[:MAX_MATCHES]
    accounts = access.get_account_ids_for_users([u.pk for u in users])
    matches = [{"user": u, "account_id": accounts[u.pk]} for u in users if u.pk in accounts]
    exact = [m for m in matches if text.strip().lower() in (m["user"].email.lower(), m["user"].username.lower())]
    return (exact if len(exact) == 1 else matches), more


def index(request: HttpRequest) -> HttpResponse:
    """The look-up form; a query naming one customer goes straight to their page."""
    form = LookupForm(request.GET or None)
    matches: list[dict] = []
    more = False
    if form.is_valid():
        data = form.cleaned_data
        account_id, sub_id = data["account_id"], data["sub_id"]
        if sub_id and not account_id:
            account_id = access.get_account_id_for_subscription(sub_id)
            if account_id is None:
                form.add_error("sub_id", _("No subscription with that id."))
        elif account_id and access.get_account(account_id) is None:
            form.add_error("account_id", _("No account with that id."))
            account_id = None
        if account_id and sub_id:
            if access.get_subscription(account_id, sub_id) is None:
                form.add_error("sub_id", _("That account has no subscription with that id."))
            else:
                return redirect(account_url(account_id) + f"#sub-{sub_id}")
        elif account_id:
            return redirect(account_url(account_id))
        elif data["email"] and not form.errors:
            matches, more = find_customers(data["email"])
            if len(matches) == 1:
                return redirect(account_url(matches[0]["account_id"]))
            if not matches:
                form.add_error("email", _("No customer with a billing account has that e-mail or name."))
    return render_staff(request, "staff/index.html", _("Billing"), {
        "form": form, "matches": matches, "more": more, "max_matches": MAX_MATCHES,
    })


def user_billing(request: HttpRequest, user_id: int) -> HttpResponse:
    """From the user admin: that user's billing page."""
    account_id = access.get_account_id_for_user(user_id)
    if account_id is None:
        user = get_user_model().objects.filter(pk=user_id).first()
        return render_staff(request, "staff/no_account.html", _("No billing account"), {"user_obj": user}, status=404)
    return redirect(account_url(account_id))
