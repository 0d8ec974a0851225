"""Log-in and sign-up. A sign-up answers one page whatever the address ("check your
e-mail"): a new address is mailed a signed link that expires, where its owner chooses a
password and the account opens; an address with an account is mailed "you already have an
account". Nothing is made before the address is confirmed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.core import signing
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
from billing.forms import ConfirmSignUpForm, EmailLoginForm, SignUpForm
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
    # A page of this site is a path ("/shop/checkout/") or an absolute URL of this host: a
    # bare word ("0") is neither, and ``redirect`` would take it for a view's name.
    if "/" in target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                          require_https=request.is_secure()):
        return target
    return ""


def _login_of(email: str) -> Any:
    """The Django user that logs in with ``email`` (the username holds it), or None."""
    return get_user_model().objects.filter(username__iexact=email).first()


# The sign-up link: signed (with SECRET_KEY, under its own salt) and stamped, so it cannot
# be made for an address without its mailbox, and it ends.
SIGNUP_LINK_SALT = "rpay.signup.confirm"
SIGNUP_LINK_DAYS = 3


def signup_link_token(email: str, language: str, next_page: str) -> str:
    """What the confirmation link carries: the address, the page's language and where to go
    on. No password: it is chosen on the link's page, after the address is proved."""
    return signing.TimestampSigner(salt=SIGNUP_LINK_SALT).sign_object(
        {"email": email, "language": language, "next": next_page}, compress=True)


def read_signup_link(token: str) -> dict[str, str] | None:
    """The link's fields, or None when it was changed, made with another key, or is older
    than ``SIGNUP_LINK_DAYS``."""
    try:
        data = signing.TimestampSigner(salt=SIGNUP_LINK_SALT).unsign_object(
            token, max_age=timedelta(days=SIGNUP_LINK_DAYS))
    except (signing.BadSignature, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("email"), str):
        return None
    return {"email": data["email"], "language": str(data.get("language") or ""), "next": str(data.get("next") or "")}


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
            _send_signup_link(email, language, next_page)
        else:
            if _half_way(user):
                # A sign-up that stopped between the log-in and the account: finish it. The
                # owner logs in with their password, or resets it, as the e-mail says.
                accounts.open_account(email, user_id=user.pk, language=language)
            _send_account_exists(email)
        # One answer whatever the address: the page never tells which addresses are known.
        return render(request, "portal/auth/signup_check_email.html", {"email": email, "next": next_page})
    return render(request, "portal/auth/signup.html", {"form": form, "next": next_page})


def _half_way(user: Any) -> bool:
    """A customer's log-in without its billing account (staff belong in the admin)."""
    return user.is_active and not user.is_staff and not accounts.user_has_account(user.pk)


@sensitive_post_parameters("password1", "password2")
@require_http_methods(["GET", "POST"])
def signup_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """The link's page: the address is its owner's, who chooses a password; the log-in and
    the account are made and the customer logged in. Safe to repeat: a sign-up stopped
    between the log-in and the account is finished by the same link."""
    link = read_signup_link(token)
    if link is None:
        return render(request, "portal/auth/signup_link_invalid.html", {"days": SIGNUP_LINK_DAYS}, status=400)
    if request.user.is_authenticated:
        return redirect(link["next"] or "home")
    email, language = link["email"], supported(link["language"] or get_language())
    user = _login_of(email)
    if user is not None and not _half_way(user):
        # Used already (or the address has an account made another way): log in.
        messages.info(request, _("This address is confirmed already: log in."))
        return redirect(reverse("login") + (f"?{urlencode({'next': link['next']})}" if link["next"] else ""))
    form = ConfirmSignUpForm(bound_data(request), email=email)
    if request.method == "POST" and form.is_valid():
        password = form.cleaned_data["password1"]
        if user is None:
            try:
                user = get_user_model().objects.create_user(email, email=email, password=password)
            except IntegrityError:  # the same link submitted twice at once: the first one wins
                return redirect("login")
        else:  # the link proves the address: the half-way log-in gets the password chosen now
            user.set_password(password)
            user.save(update_fields=["password"])
        # A crash from here on leaves a log-in without an account: this link again, a sign-up
        # with the address, or the first portal page after a log-in finishes it.
        account = accounts.open_account(email, user_id=user.pk, language=language)
        return _signed_in(request, user, account.account_id, language, link["next"])
    return render(request, "portal/auth/signup_confirm.html", {"form": form, "email": email})


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


def _send_signup_link(email: str, language: str, next_page: str) -> None:
    site = settings.SITE_URL.rstrip("/")
    url = site + reverse("signup_confirm", args=[signup_link_token(email, language, next_page)])
    send_customer_email("confirm_signup", email, _("Confirm your e-mail to open your rpay account"),
                        context={"email": email, "confirm_url": url, "days": SIGNUP_LINK_DAYS})


def _send_account_exists(email: str) -> None:
    """The owner of a known address is told by e-mail, with the ways to log in, as a
    password reset does; the page says nothing of it, and the password is left as it is."""
    site = settings.SITE_URL.rstrip("/")
    send_customer_email("account_exists", email, _("You already have an rpay account"), context={
        "email": email, "login_url": site + reverse("login"), "reset_url": site + reverse("password_reset")})
