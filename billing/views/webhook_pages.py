"""``POST /webhooks/stripe/``: the payment processor's events (docs/STRIPE.md).

Who may call it: anyone can reach it, only Stripe can get past it: the body must carry a
valid ``Stripe-Signature`` made with ``STRIPE_WEBHOOK_SECRET`` less than five minutes
ago (else 400, nothing written). CSRF does not apply here (and only here): the signature
is the proof of origin. Each event is claimed once (its ``WEBHOOKS#<day>`` item, keyed
by its ``created`` time and id): a replay of one handled or ignored answers 200 and
changes nothing; one that failed is handled again. A handler that fails answers 500, so
that Stripe delivers it again later.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from billing.actions.webhooks import receive_event
from core.pages import today
from core.payments.stripe.webhooks import WebhookRefused, verified_event

log = logging.getLogger("billing")


@csrf_exempt
@require_POST
def stripe_webhook(request: HttpRequest) -> HttpResponse:
    try:
        event = verified_event(request.body, request.headers.get("Stripe-Signature"), settings.STRIPE_WEBHOOK_SECRET)
    except WebhookRefused as refused:
        log.warning("webhook refused: %s", refused)
        return JsonResponse({"error": "invalid signature or payload"}, status=400)
    try:
        status, outcome = receive_event(event, today=today())
    except Exception:  # every failure (an outage too): Stripe must retry, and we must know why
        log.exception("webhook %s (%s) failed", event["id"], event["type"])
        return JsonResponse({"status": "failed"}, status=500)
    return JsonResponse({"status": status, "outcome": outcome})
