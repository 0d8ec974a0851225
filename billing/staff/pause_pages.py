"""Staff pause and resume a subscription's collection, with the customer's
own rules (``billing.rules.lifecycle``) and e-mails (``billing.actions.lifecycle``); each
leaves a ``staff.pause_subscription`` / ``staff.resume_subscription`` audit event."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from billing.actions import lifecycle as lifecycle_actions
from billing.exceptions import PauseRefused
from billing.forms import PauseForm
from billing.models import AuditAction
from billing.rules.lifecycle import check_pausable, pause_end, state_of
from billing.staff.common import back_to_account, change_page
from billing.templatetags.staff_pages import staff_date
from billing.views.common import subscription_or_404
from core.pages import actor, today


@require_http_methods(["GET", "POST"])
def staff_pause(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    day = today()
    try:
        check_pausable(sub, day)
    except PauseRefused as refused:
        return back_to_account(request, account_id, str(refused))
    form = PauseForm(request.POST or None, initial={"version": sub.Version})

    def pause() -> str | None:
        try:
            resume = pause_end(sub, day, **form.pause_kwargs())
            lifecycle_actions.pause(sub, resume=resume, today=day, actor=actor(request),
                                    action=AuditAction.STAFF_PAUSE)
        except PauseRefused as refused:
            form.add_error(None, str(refused))
            return None
        return _("Paused from %(start)s until %(end)s; the customer is e-mailed.") % {
            "start": staff_date(sub.PausedFrom), "end": staff_date(resume) if resume else _("resumed")}

    def drawn_again() -> PauseForm:
        # the choice kept, drawn again from the subscription as it is now
        again = request.POST.copy()
        again["version"] = str(sub.Version)
        return PauseForm(again)

    return change_page(
        request, account_id, sub, title=_("Pause payments"),
        question=_("Pause this subscription's payments? The days paid stay served; nothing is charged or reminded "
                   "while paused, nor for the paused days afterwards. A pause ends on the payment day."),
        button=_("Pause payments"), form=form, change=pause, drawn_again=drawn_again)


@require_http_methods(["GET", "POST"])
def staff_resume(request: HttpRequest, account_id: str, sub_id: str) -> HttpResponse:
    sub = subscription_or_404(account_id, sub_id)
    if state_of(sub, today()).kind != "paused":
        return back_to_account(request, account_id, _("This subscription is not paused."))

    def resume() -> str:
        lifecycle_actions.resume(sub, today=today(), actor=actor(request), action=AuditAction.STAFF_RESUME)
        return _("Resumed; next payment %(date)s.") % {"date": staff_date(sub.NextPaymentDate)}

    return change_page(request, account_id, sub, title=_("Resume payments"),
                       question=_("Resume this subscription's payments? The next payment is the day after the paid "
                                  "days while they run, else the next payment day."),
                       button=_("Resume"), change=resume)
