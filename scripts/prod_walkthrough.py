"""The production walk-through, run for real on one machine (docs: deployment).

    .venv/bin/python scripts/prod_walkthrough.py

Starts PostgreSQL (Debian's postgresql package), DynamoDB Local and localstripe in
temporary folders on free ports, then does what an operator does: ``check --deploy`` with
the production environment, ``migrate``, ``setup_dynamodb``, ``createsuperuser``, gunicorn
with DJANGO_DEBUG=0; and what people do on the site: the staff member logs in and adds a
product, a customer signs up, subscribes with a card (Stripe.js's calls to localstripe, as
the browser makes them), and downloads the receipt's PDF. Each step prints one line; the
first that fails stops the walk with what it saw (exit 1). Everything it started is
stopped and its folders removed at the end.

Plain HTTP on 127.0.0.1: the site is served with the HTTPS redirect and Secure cookies
off (a TLS proxy is in front in production); ``check --deploy`` runs with them on.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.payments.demo_cards import DEMO_NUMBERS  # noqa: E402
from devtools.localengine import free_port, start_local_engine  # noqa: E402
from devtools.localpostgres import start_local_postgres  # noqa: E402
from devtools.localstripe import TEST_PUBLISHABLE_KEY, start_localstripe  # noqa: E402
from devtools.prodsite import Visitor, mailed_link, manage, production_env, start_gunicorn  # noqa: E402

STAFF = ("staff@example.com", "Staff-walk-through-2026")
CUSTOMER = ("pat@example.com", "Customer-walk-through-2026")
PLAIN_HTTP = ("DJANGO_SECURE_SSL_REDIRECT", "DJANGO_SESSION_COOKIE_SECURE", "DJANGO_CSRF_COOKIE_SECURE",
              "DJANGO_SECURE_HSTS_SECONDS")


class WalkFailed(RuntimeError):
    pass


def step(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def expect(condition: bool, what: str, seen: object = "") -> None:
    if not condition:
        raise WalkFailed(f"{what}{f': {str(seen)[:1500]}' if seen else ''}")


def confirm_card_setup(stripe_url: str, client_secret: str, number: str = DEMO_NUMBERS["visa"]) -> dict:
    """What Stripe.js's confirmCardSetup sends from the customer's browser: the card goes
    to Stripe (here localstripe), never to rpay."""
    intent = client_secret.split("_secret_")[0]
    body = json.dumps({"key": TEST_PUBLISHABLE_KEY, "use_stripe_sdk": True, "client_secret": client_secret,
                       "payment_method_data": {"type": "card", "card": {
                           "number": number, "exp_month": "12", "exp_year": "2034", "cvc": "123"}}}).encode()
    request = urllib.request.Request(f"{stripe_url}/v1/setup_intents/{intent}/confirm", data=body, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def walk(folder: Path) -> None:
    with contextlib.ExitStack() as stack:
        step("starting PostgreSQL, DynamoDB Local and localstripe")
        postgres = start_local_postgres()
        stack.callback(postgres.stop)
        postgres.create_database("rpay")
        engine = start_local_engine(free_port(), None, log_file=folder / "dynamodb.log")
        stack.callback(engine.stop)
        stripe = start_localstripe(free_port(), None, log_file=folder / "localstripe.log")
        stack.callback(stripe.stop)

        env = production_env(database_url=postgres.url("rpay"), dynamodb_endpoint=engine.endpoint,
                             table="RecurringPayments", folder=folder, **stripe.settings())
        deploy_env = {k: v for k, v in env.items() if k not in PLAIN_HTTP}
        out = manage(deploy_env, "check", "--deploy", "--fail-level", "WARNING")
        expect("no issues" in out, "check --deploy is not clean", out)
        step("manage.py check --deploy: no issues (DJANGO_DEBUG=0, PostgreSQL, HTTPS settings on)")
        manage(env, "migrate", "--no-input")
        step("manage.py migrate: Django's tables on PostgreSQL")
        manage(env, "setup_dynamodb")
        step("manage.py setup_dynamodb: the billing and shop tables")
        manage({**env, "DJANGO_SUPERUSER_PASSWORD": STAFF[1]}, "createsuperuser", "--no-input",
               "--username", STAFF[0], "--email", STAFF[0])
        step(f"manage.py createsuperuser: {STAFF[0]}")

        web = start_gunicorn(env, folder / "gunicorn.log", workers=2)
        stack.callback(web.stop)
        site = web.url
        step(f"gunicorn serving {site} (2 workers, DJANGO_DEBUG=0)")

        staff = Visitor()
        answer = staff.post(f"{site}/login/", {"username": STAFF[0], "password": STAFF[1]})
        expect(answer.status == 302 and answer.location.endswith("/admin/"), "staff log-in", answer.status)
        expect(staff.get(f"{site}/admin/staff/").status == 200, "the staff pages after log-in")
        answer = staff.post(f"{site}/admin/staff/products/add/", {
            "sku": "NEWS-DAILY", "name": "Daily News", "description": "", "price": "9.99", "currency": "USD",
            "trial_days": "0"})
        expect(answer.status == 302, "adding a product on the staff pages", answer.text)
        step("staff logged in and added NEWS-DAILY (9.99 USD a month)")

        pat = Visitor()
        answer = pat.post(f"{site}/signup/", {"email": CUSTOMER[0]})
        expect(answer.status == 200, "sign-up: check your e-mail", answer.text)
        # the link the e-mail carries: the password is chosen there, and the account opens
        answer = pat.post(site + mailed_link(env, CUSTOMER[0]), {"password1": CUSTOMER[1], "password2": CUSTOMER[1]})
        expect(answer.status == 302 and answer.location.endswith("/subscribe/"), "sign-up", answer.text)
        step(f"{CUSTOMER[0]} signed up")

        page = pat.get(f"{site}/subscribe/")
        secret = re.search(r'data-client-secret="([^"]+)"', page.text)
        expect(page.status == 200 and secret is not None, "the subscribe page's card entry", page.text)
        confirmed = confirm_card_setup(stripe.url, secret.group(1))
        expect(confirmed.get("status") == "succeeded", "the card's SetupIntent at localstripe", confirmed)
        today = datetime.now(UTC).day
        answer = pat.post(f"{site}/subscribe/", {"product": "NEWS-DAILY", "payment_day": str(today),
                                                 "setup_intent": secret.group(1).split("_secret_")[0],
                                                 "billing_country": "IT"})
        expect(answer.status == 302 and answer.location.endswith("/subscribe/confirm/"), "the subscribe form",
               answer.text)
        confirm = pat.get(f"{site}/subscribe/confirm/")
        quote = re.search(r'name="quote" value="([^"]+)"', confirm.text)
        expect(quote is not None, "the confirmation page", confirm.text)
        answer = pat.post(f"{site}/subscribe/confirm/", {"quote": quote.group(1)},
                          form_page=f"{site}/subscribe/confirm/")
        expect(answer.status == 302, "confirming the subscription", answer.text)
        step(f"subscribed to NEWS-DAILY on day {today}, first payment charged through localstripe")

        receipts = pat.get(f"{site}/receipts/")
        link = re.search(r'href="(/receipts/(?!export)[^"/]+/)"', receipts.text)
        expect(receipts.status == 200 and link is not None, "a receipt on the receipts page",
               re.sub(r"\s+", " ", receipts.text.split("<main", 1)[-1]))
        receipt = pat.get(f"{site}{link.group(1)}")
        pdf_link = re.search(r'href="(/receipts/[^"/]+/pdf/)"', receipt.text)
        expect(receipt.status == 200 and pdf_link is not None, "the receipt's page and its PDF link", receipt.status)
        pdf = pat.get(f"{site}{pdf_link.group(1)}")
        expect(pdf.status == 200 and pdf.body.startswith(b"%PDF"), "the receipt's PDF", pdf.status)
        step(f"receipt PDF downloaded ({len(pdf.body)} bytes)")

        expect(web.stop() == 0, "gunicorn's exit on SIGTERM")
        step("gunicorn stopped on SIGTERM (exit 0)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rpay-walk-") as folder:
        try:
            walk(Path(folder))
        except WalkFailed as error:
            print(f"walk-through FAILED at: {error}", file=sys.stderr)
            for log in sorted(Path(folder).glob("*.log")):
                print(f"--- {log.name} (last lines)\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:]),
                      file=sys.stderr)
            return 1
    print("walk-through done: sign-up, subscription, receipt PDF and staff log-in on the production settings")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
