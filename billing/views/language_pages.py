"""The header's language switcher: Django's ``set_language`` (a cookie), and for a
logged-in customer the account's language too (account, user link, subscriptions), so
that the batches' e-mails follow it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.translation import check_for_language
from django.views.decorators.http import require_POST
from django.views.i18n import set_language as django_set_language

from billing.actions import accounts
from billing.customers import SESSION_ACCOUNT
from core.language import remember_language, supported


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    response = django_set_language(request)
    language = request.POST.get("language")
    if language and check_for_language(language) and supported(language) == language:
        account_id = request.session.get(SESSION_ACCOUNT) if request.user.is_authenticated else None
        if account_id:
            accounts.choose_language(account_id, language, user_id=request.user.pk)
        if request.user.is_authenticated:
            remember_language(request, language)
    return response
