"""Authentication backends: log-in throttling (django-axes) and the e-mail log-in.

Customers log in with their e-mail, which sign-up stores lowercased as the username;
staff users made with ``createsuperuser`` may have any username. Log-in therefore
matches the username case-insensitively, and the throttle counts failures under the
same lowercased name, so changing the case of an e-mail neither fails a log-in nor
escapes a lock-out.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.base_user import AbstractBaseUser
from django.http import HttpRequest
from django.views.decorators.debug import sensitive_variables


def login_name(username: str | None) -> str:
    """The form of a typed log-in name that failures are counted under."""
    return (username or "").strip().lower()


def throttle_username(request: HttpRequest, credentials: dict[str, Any] | None) -> str:
    """AXES_USERNAME_CALLABLE: the lowercased name from the credentials or the posted form."""
    if credentials and credentials.get("username") is not None:
        return login_name(credentials["username"])
    return login_name(request.POST.get("username"))


def client_address(request: HttpRequest) -> str | None:
    """AXES_CLIENT_IP_CALLABLE: the address failures are counted by.

    Behind ``TRUSTED_PROXY_COUNT`` proxies, REMOTE_ADDR is the nearest proxy's address;
    each proxy appends the address it was reached from to X-Forwarded-For, so the
    client is the entry the outermost trusted proxy added: ``TRUSTED_PROXY_COUNT`` from
    the right. Entries further left are whatever the client sent and are ignored.
    """
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
        if len(forwarded) >= proxies:
            return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR")


class LoginThrottleBackend(AxesStandaloneBackend):
    """django-axes' lock-out check, for log-ins made through a web request.

    ``authenticate()`` without a request (Django's test client ``login()``, a shell)
    has no address to count failures by; axes would raise, so it is let through to the
    next backend, which checks the password as usual.
    """

    @sensitive_variables("password")
    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


class EmailLoginBackend(ModelBackend):
    """Django's ModelBackend with a case-insensitive username look-up.

    When two old usernames differ only in case (sign-up never creates such a pair), the
    exact spelling is required, as Django's own backend would.
    """

    @sensitive_variables("password")
    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> AbstractBaseUser | None:
        user_model = get_user_model()
        if username is None:
            username = kwargs.get(user_model.USERNAME_FIELD)
        if username is None or password is None:
            return None
        users = user_model._default_manager
        matches = list(users.filter(**{f"{user_model.USERNAME_FIELD}__iexact": username.strip()})[:2])
        if len(matches) > 1:
            matches = list(users.filter(**{user_model.USERNAME_FIELD: username}))
        if len(matches) != 1:
            # Run the hasher once anyway, so a missing user answers as slowly as a wrong
            # password (Django's ModelBackend does the same).
            user_model().set_password(password)
            return None
        user = matches[0]
        if user.check_password(password) and self.user_can_authenticate(user):
            return user
        return None
