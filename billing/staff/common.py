"""What every staff page shares: rendering inside the admin's own layout, the confirm
page, and the account page's URL. (Permissions: ``permissions``, checked in ``urls``.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from billing import access
from billing.models import Receipt, Subscription
from core.payments.errors import GatewayError
from core.staff import render_staff

T = TypeVar("T")
StrOrPromise = str | Promise

# What a staff form drawn from an item that changed since says (the portal's own words).
CHANGED_MESSAGE = _("This changed since you opened the page.")
# What a change refused by its condition says: another change came first.
CHANGED_MEANWHILE = _("The subscription changed meanwhile; nothing was done. Look again.")


def posted_version(request: HttpRequest) -> int | None:
    """The subscription's Version the posted confirm page was drawn from (None: not said)."""
    try:
        return int(request.POST["version"])
    except (KeyError, ValueError):
        return None


def drawn_from_older(request: HttpRequest, sub: Subscription) -> bool:
    """The posted form was drawn from an older version of ``sub`` (another tab, another
    staff member, the customer)."""
    version = posted_version(request)
    return version is not None and version != sub.Version


def changed_since(request: HttpRequest, page: Callable[[], HttpResponse]) -> HttpResponse:
    """The answer to a form drawn from an item that changed since: nothing done, the page
    again drawn from the item as it is now (``page``), the message, 409."""
    messages.warning(request, gettext("%(changed)s Nothing was done: here it is as it is now.")
                     % {"changed": CHANGED_MESSAGE})
    response = page()
    response.status_code = 409
    return response


def account_url(account_id: str) -> str:
    return reverse("admin:staff_account", args=[account_id])


def back_to_account(request: HttpRequest, account_id: str, why: StrOrPromise) -> HttpResponse:
    """Back to the account page, saying why nothing was done."""
    messages.error(request, why)
    return redirect(account_url(account_id))


def confirm_page(request: HttpRequest, account_id: str, title: str, question: str, *,
                 sub: Subscription | None = None, receipt: Receipt | None = None, form=None,
                 button: str | None = None, danger: bool = False, can_confirm: bool = True) -> HttpResponse:
    """The page that asks staff to confirm an action on an account before it is taken
    (``can_confirm`` False: it only shows the item, as it is now, with no button)."""
    return render_staff(request, "staff/confirm.html", title, {
        "account_id": account_id, "question": question, "sub": sub, "receipt": receipt,
        "form": form, "button": button or gettext("Confirm"), "danger": danger, "back": account_url(account_id),
        "view_only": not can_confirm,
    })


def change_page(request: HttpRequest, account_id: str, sub: Subscription, *, title: str, question: str,
                button: str, change: Callable[[], str | None], form: forms.Form | None = None,
                drawn_again: Callable[[], forms.Form] | None = None, danger: bool = False) -> HttpResponse:
    """A staff change of a subscription, asked on its confirm page (with ``form`` when it
    has choices). On a POST, its form valid, ``change`` makes it and returns what staff are
    told on the account page, or None having put on the form why it was refused (the page
    again). A POST drawn from an older version of ``sub`` changes nothing: the page again,
    409, with the form ``drawn_again`` gives (default: as posted); a change whose condition
    failed meanwhile, the account page with ``CHANGED_MEANWHILE``."""

    def page(shown: forms.Form | None = form) -> HttpResponse:
        return confirm_page(request, account_id, title, question, sub=sub, form=shown, button=button, danger=danger)

    if request.method != "POST":
        return page()
    if drawn_from_older(request, sub):
        return changed_since(request, lambda: page(drawn_again() if drawn_again else form))
    if form is not None and not form.is_valid():
        return page()
    try:
        done = change()
    except access.ConditionFailed:
        return back_to_account(request, account_id, CHANGED_MEANWHILE)
    if done is None:
        return page()
    messages.success(request, done)
    return redirect(account_url(account_id))


# --- the catalogue's objects (products, coupons, webhook endpoints) -----------------------


def add_page(request: HttpRequest, form: forms.Form, title: str, back: str,
             add: Callable[[dict[str, Any]], HttpResponse], *, taken: tuple[str, str] | None = None) -> HttpResponse:
    """The page that adds an object of a list (staff/object_form.html; ``back``: the list's
    URL name): the form, and on a valid POST ``add`` of its data, which answers. ``taken``:
    the field and the error to show when its key exists already (``access.AlreadyExists``)."""
    if request.method == "POST" and form.is_valid():
        try:
            return add(form.cleaned_data)
        except access.AlreadyExists:
            if taken is None:
                raise
            form.add_error(*taken)
    return render_staff(request, "staff/object_form.html", title, {"back": back, "form": form})


def end_page(request: HttpRequest, *, ended: bool, back: str, title: str, question: str, button: str,
             end: Callable[[], bool], done: str, already: str) -> HttpResponse:
    """The page that ends an object of a list for good (retires a product, ends a coupon):
    asked on GET; on POST ``end`` (False: it had ended meanwhile), then the list (``back``:
    its URL name) with ``done``, or ``already`` when it had ended before."""
    if not ended and request.method == "GET":
        return render_staff(request, "staff/confirm.html", title, {
            "question": question, "button": button, "danger": True, "back": reverse(back)})
    if ended or not end():
        messages.info(request, already)
    else:
        messages.success(request, done)
    return redirect(back)


@dataclass(frozen=True)
class PaidChangeWords:
    """What a staff change that charges or refunds the card (seats, a switch) says when it
    is not made: declined (``%(reason)s``), changed meanwhile, the processor unreachable."""

    declined: StrOrPromise
    changed: StrOrPromise
    unreachable: StrOrPromise


def attempt_paid_change(request: HttpRequest, step: Callable[[], T], *, refused: type[Exception],
                        declined: type[Exception], words: PaidChangeWords) -> T | None:
    """``step()``'s result, or None once the reason it was not made is told as the page's
    error: its rule's refusal (``refused``, in its own words), the card declined, the
    subscription changed meanwhile (any amount taken is refunded), the processor unreachable."""
    try:
        return step()
    except refused as error:
        messages.error(request, str(error))
    except declined as error:
        messages.error(request, words.declined % {"reason": error})
    except access.ConditionFailed:
        messages.error(request, words.changed)
    except GatewayError:
        messages.error(request, words.unreachable)
    return None
