"""Every e-mail rpay sends a customer goes out here: text + HTML from
``templates/billing/email/<name>.{txt,html}``, through Django's mail framework.

A send never raises: the write the e-mail announces (a payment, a claim, a new
subscription) is already made, and a mail failure must neither undo nor repeat it.
The caller gets back "" or one line saying what went wrong, to count or log.

Each e-mail is written in its customer's language: ``language`` (the subscription's or
account's copy of ``Account.Language``) is activated with ``translation.override`` while
the subject and both bodies are rendered, so the subject and the amounts may be lazy
(``format_lazy``, ``money_text``) and are formatted in that language, not the caller's.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.functional import Promise, lazy
from django.utils.translation import gettext

from core.language import supported
from core.localformat import local_date
from core.money import format_with_symbol

# An amount as the customer's pages write it ("$9.99", "9,99 €", "¥1,250"): the one
# format of money a customer reads, page, e-mail or PDF alike; formatted when the e-mail
# is rendered, so in the customer's language.
money_text = lazy(format_with_symbol, str)
# A date ("30 November 2026", "30 novembre 2026", "2026年11月30日"), likewise.
date_text = lazy(local_date, str)


def _message(message: str, params: dict[str, Any]) -> str:
    return gettext(message) % {key: str(value) if isinstance(value, Promise) else value
                               for key, value in params.items()}


_lazy_message = lazy(_message, str)


def lazy_message(message: str, **params: Any) -> str:
    """``gettext(message) % params``, worked out when the e-mail is rendered, so in the
    customer's language (lazy ``params`` too): for a subject or a line the caller builds.
    Mark ``message`` with ``gettext_noop`` where it is written, for makemessages."""
    return _lazy_message(message, params)

log = logging.getLogger(__name__)

SUBJECT_MAX_LENGTH = 200
# Control characters (line breaks above all) in a header are an injection; Django
# refuses them with BadHeaderError, which would lose the e-mail.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def email_subject(text: str) -> str:
    """A subject line that is always a valid header: control characters become one
    space and it is cut to ``SUBJECT_MAX_LENGTH`` characters."""
    return _CONTROL.sub(" ", str(text)).strip()[:SUBJECT_MAX_LENGTH]


def send_customer_email(template: str, to: str, subject: Any, context: dict[str, Any], *,
                        language: str | None = None) -> str:
    """Send one e-mail (text + HTML) in ``language`` (None: the active language, the
    page's when a page sends it); returns "" or what went wrong, in one line."""
    try:
        site = settings.SITE_URL.rstrip("/")
        context = {**context, "site_url": site, "portal_url": site + "/"}
        with translation.override(supported(language) if language else translation.get_language()):
            text = render_to_string(f"billing/email/{template}.txt", context)
            html = render_to_string(f"billing/email/{template}.html", context)
            subject_line = email_subject(str(subject))
        send_mail(subject_line, text, None, [to], html_message=html)
    except Exception as error:  # noqa: BLE001 - reported to the caller, never raised (see above)
        log.warning("e-mail %s failed: %s", template, error)
        return f"mail: {type(error).__name__}: {error}".splitlines()[0]
    return ""
