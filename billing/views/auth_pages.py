"""Log-in and sign-up: a new user gets their billing account at once."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from billing.actions import accounts
from billing.customers import SESSION_ACCOUNT, remember_account
from billing.forms import EmailLoginForm, SignUpForm
from core.language import remember_language, supported
from core.mail import send_customer_email
from core.pages import bound_data


def locked_out(request: HttpRequest, original_response: HttpResponse | None = None,
               credentials: dict[str, Any] | None = None) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: the lock-out page, in the look of the log-in page that was used."""
    context = {
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cooloff_minutes": int(settings.AXES_COOLOFF_TIME.total_seconds() // 60),
    }
    if request.path.startswith(reverse("admin:index")):
        context.update(admin.site.each_context(request))
        template = "admin/lockout.html"
    else:
        template = "portal/auth/lockout.html"
    return render(request, template, context, status=settings.AXES_HTTP_RESPONSE_CODE)


class LoginView(auth_views.LoginView):
    template_name = "portal/auth/login.html"
    redirect_authenticated_user = True
    authentication_form = EmailLoginForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        # Sent here by the shop's checkout: say why, so the visitor knows the cart waits.
        context["for_checkout"] = urlsplit(context.get("next") or "").path == reverse("shop:checkout")
        return context

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        if remember_account(self.request) is None and self.request.user.is_staff:
            return redirect("admin:index")
        return response


def safe_next(request: HttpRequest) -> str:
    """The ``next`` the page was asked to go on to (the shop's checkout sends a visitor
    here with its cart), when it is a page of this site; "" otherwise."""
    target = request.POST.get("next", request.GET.get("next", ""))
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return ""


def _login_of(email: str) -> Any:
    """The Django user that logs in with ``email`` (the username holds it), or None."""
    return get_user_model().objects.filter(username__iexact=email).first()


@sensitive_post_parameters("password1", "password2")
@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    next_page = safe_next(request)
    if request.user.is_authenticated:
        return redirect(next_page or "home")
    form = SignUpForm(bound_data(request))
    if request.method == "POST" and form.is_valid():
        email = form.cleaned_data["email"]
        # The language the sign-up page was shown in becomes the account's.
        language = supported(get_language())
        user = _login_of(email)
        if user is None:
            try:
                user = get_user_model().objects.create_user(email, email=email,
                                                            password=form.cleaned_data["password1"])
            except IntegrityError:  # the same e-mail signed up a moment ago (double submit)
                user = _login_of(email)
            else:
                # A crash from here on leaves a log-in without an account: the next sign-up
                # (below), or the first portal page after a log-in, finishes it.
                account = accounts.open_account(email, user_id=user.pk, language=language)
                return _signed_in(request, user, account.account_id, language, next_page)
        if user is not None and user.is_active and not user.is_staff and not accounts.user_has_account(user.pk):
            # A sign-up that stopped between the log-in and the account: finish it. The
            # password typed now is not used (anyone may type this address); the owner logs
            # in with theirs, or resets it, as the e-mail says.
            accounts.open_account(email, user_id=user.pk, language=language)
        return _already_signed_up(request, email, next_page)
    return render(request, "portal/auth/signup.html", {"form": form, "next": next_page})


def _signed_in(request: HttpRequest, user: Any, account_id: str, language: str, next_page: str) -> HttpResponse:
    login(request, user, backend="rpay_site.auth_backends.EmailLoginBackend")
    request.session[SESSION_ACCOUNT] = account_id
    remember_language(request, language)
    # login() cycled the session key and kept its data: a visitor's shop cart is still there.
    if next_page:
        messages.success(request, _("Welcome to rpay. Your account is ready."))
        return redirect(next_page)
    messages.success(request, _("Welcome to rpay. Your account is ready: subscribe to your first product below."))
    return redirect("subscribe")


def _already_signed_up(request: HttpRequest, email: str, next_page: str) -> HttpResponse:
    """A sign-up with an address that has a log-in: the page does not say so (it would
    tell anyone which addresses have accounts); it asks to check the e-mail, and the
    owner of the address is told there, with the ways to log in, as a password reset
    does. The password typed is not used."""
    site = settings.SITE_URL.rstrip("/")
    send_customer_email("account_exists", email, _("You already have an rpay account"), context={
        "email": email, "login_url": site + reverse("login"), "reset_url": site + reverse("password_reset")})
    return render(request, "portal/auth/signup_check_email.html", {"email": email, "next": next_page})
