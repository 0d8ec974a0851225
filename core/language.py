"""The customer's language on the web: kept in the session from log-in, activated on
each request of a logged-in customer, changed by the header's switcher.

Django's LocaleMiddleware picks the browser's language (the switcher's cookie, else
Accept-Language); for a logged-in customer this middleware then activates the language
stored on their account (``Account.Language``, read with the user link at log-in, so
it costs no request per page).
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation

SESSION_LANGUAGE = "account_language"


def supported(language: str | None) -> str:
    """``language`` when it is one of settings.LANGUAGES, else the site's default."""
    codes = {code for code, _ in settings.LANGUAGES}
    return language if language in codes else settings.LANGUAGE_CODE


def remember_language(request: HttpRequest, language: str | None) -> None:
    """Keep the account's language in the session (a customer who never chose one keeps
    the browser's)."""
    if language in {code for code, _ in settings.LANGUAGES}:
        request.session[SESSION_LANGUAGE] = language


class AccountLanguageMiddleware:
    """After LocaleMiddleware: a logged-in customer's own language wins over the browser's."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session = getattr(request, "session", None)
        language = session.get(SESSION_LANGUAGE) if session is not None else None
        if language:
            translation.activate(supported(language))
            request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)
