"""Operations: the probes, the metrics page, JSON logs, Sentry's scrubbing and the
batches' dead-man's switch."""

from __future__ import annotations

import http.server
import io
import json
import logging
import threading
from datetime import date, datetime
from io import StringIO

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from billing import access
from core.ops import health, logs, metrics, sentry
from devtools.localengine import free_port
from tests.builders import BILLING_COUNTRY, seed_due

pytestmark = pytest.mark.django_db

D = date(2027, 3, 15)
CARD = "4242 4242 4242 4242"


@pytest.fixture(autouse=True)
def fresh_caches():
    health.forget_readiness()
    metrics.BATCHES.forget()
    yield
    health.forget_readiness()
    metrics.BATCHES.forget()


# --- /healthz and /readyz -----------------------------------------------------------------


def test_healthz_answers_without_a_database_or_a_host_check(settings) -> None:
    settings.ALLOWED_HOSTS = ["rpay.example.com"]
    settings.SECURE_SSL_REDIRECT = True
    response = Client().get("/healthz", HTTP_HOST="10.1.2.3:8000")  # a kubelet probes the pod's IP
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_is_200_when_both_tables_are_active(moto_table, settings) -> None:
    from core.dynamo.table import ensure_table
    from shop.models import ShopItem

    ensure_table(model=ShopItem)
    response = Client().get("/readyz", HTTP_HOST="10.1.2.3:8000")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_names_a_missing_table(moto_table) -> None:
    response = Client().get("/readyz")  # the shop's table was never made on this engine
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable" and any(f.startswith("dynamodb ") for f in body["failed"])
    assert set(body) == {"status", "failed"}


def test_readiness_is_checked_at_most_once_per_few_seconds(moto_table, ddb_requests) -> None:
    health.readiness(now=100.0)
    first = ddb_requests.total
    assert first == 2  # one DescribeTable per table
    health.readiness(now=100.0 + health.READINESS_CACHE_SECONDS / 2)
    assert ddb_requests.total == first
    health.readiness(now=100.0 + health.READINESS_CACHE_SECONDS)
    assert ddb_requests.total == 2 * first


@pytest.mark.local_engine
def test_readyz_is_503_while_the_engine_is_stopped_and_200_once_it_is_back(tmp_path, settings) -> None:
    from core.dynamo.table import ensure_table
    from devtools.localengine import start_local_engine
    from shop.models import ShopItem
    from tests.billing.test_janitor_outage import REGION, configure

    port, data = free_port(), tmp_path / "ddb"
    data.mkdir()
    server = start_local_engine(port, data)
    try:
        settings.DYNAMODB_ENDPOINT = server.endpoint
        configure(table_name="rpay_ready", region=REGION, host=server.endpoint, max_retry_attempts=0,
                  connect_timeout_seconds=1, read_timeout_seconds=2)
        ensure_table()
        ensure_table(model=ShopItem)
        client = Client()
        assert client.get("/readyz").status_code == 200
        server.stop()
        health.forget_readiness()
        down = client.get("/readyz")
        assert down.status_code == 503 and "dynamodb rpay_ready: unavailable" in down.json()["failed"]
        server = start_local_engine(port, data)  # same data: the tables are still there
        health.forget_readiness()
        assert client.get("/readyz").status_code == 200  # the same process, not restarted
    finally:
        server.stop()


# --- /metrics -------------------------------------------------------------------------------


def test_metrics_are_refused_without_the_token_from_elsewhere(settings) -> None:
    settings.METRICS_TOKEN = "s3cret-token"
    client = Client(REMOTE_ADDR="203.0.113.9")
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 200


def test_metrics_with_no_token_set_answer_the_loopback_only(settings) -> None:
    settings.METRICS_TOKEN = ""
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="10.0.0.7").get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 403


def test_metrics_count_requests_by_view_and_show_the_last_payment_run(moto_table, settings) -> None:
    seed_due(3, due=D)
    with time_machine.travel(D, tick=False):
        call_command("process_payments", "--date", D.isoformat(), stdout=StringIO())
    client = Client(REMOTE_ADDR="127.0.0.1")
    client.get("/")  # the home page: a view with a URL name
    text = client.get("/metrics").content.decode()
    assert 'rpay_http_requests_total{method="GET",status="200",view="home"}' in text
    assert "rpay_http_request_duration_seconds_bucket" in text
    [run] = access.list_batch_runs("payments")
    [success] = [line for line in text.splitlines()
                 if line.startswith('rpay_batch_last_success_timestamp_seconds{kind="payments"}')]
    assert float(success.split()[-1]) == datetime.fromisoformat(run.FinishedAt).timestamp()
    assert 'rpay_batch_last_run_items{kind="payments",outcome="paid"} 3.0' in text
    assert 'rpay_batch_last_run_charged_minor_units{currency="USD",kind="payments"} 2997.0' in text
    assert 'rpay_batch_last_run_failed{kind="payments"} 0.0' in text
    assert 'rpay_batch_last_run_gateway_seconds{kind="payments"}' in text
    assert "rpay_batch_metrics_up 1.0" in text


def test_the_batch_metrics_cost_one_query_per_kind_and_are_cached(moto_table, ddb_requests) -> None:
    ddb_requests.reset()
    metrics.BATCHES.facts()
    metrics.BATCHES.facts()
    assert ddb_requests.by_name() == {"Query": 2}  # payments and reminders, once


# --- logs -----------------------------------------------------------------------------------


def json_lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


@pytest.fixture
def json_log():
    """The app loggers writing JSON lines to a buffer, as LOG_FORMAT=json configures them."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    handler.addFilter(logs.ContextFilter())
    loggers = [logging.getLogger(name) for name in ("billing", "core", "shop", "django")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    yield stream
    for lg, level in zip(loggers, levels, strict=True):
        lg.removeHandler(handler)
        lg.setLevel(level)


def test_log_format_json_is_the_settings_choice() -> None:
    config = logs.logging_config("json", "INFO")
    assert config["formatters"]["rpay"] == {"()": "core.ops.logs.JsonFormatter"}
    assert logs.logging_config("text", "INFO")["formatters"]["rpay"] == {"format": "%(message)s"}


def test_batch_log_lines_are_json_with_the_run_id_item_and_outcome(moto_table, json_log) -> None:
    seed_due(2, due=D)
    with time_machine.travel(D, tick=False):
        call_command("process_payments", "--date", D.isoformat(), stdout=StringIO())
    lines = json_log_lines = json_lines(json_log)
    [run] = access.list_batch_runs("payments")
    items = [line for line in lines if line.get("outcome") == "paid"]
    assert len(items) == 2 and all(line["run_id"] == run.RunId and "/" in line["item"] for line in items)
    assert all({"time", "level", "logger", "message"} <= set(line) for line in json_log_lines)


def test_a_request_id_is_given_echoed_and_on_every_line(json_log) -> None:
    response = Client().get("/no-such-page/", HTTP_X_REQUEST_ID="req-1234")
    assert response["X-Request-ID"] == "req-1234"
    made = Client().get("/", HTTP_X_REQUEST_ID="bad id with spaces")["X-Request-ID"]
    assert made != "bad id with spaces" and len(made) == 32
    warnings = [line for line in json_lines(json_log) if line["logger"] == "django.request"]
    assert warnings and warnings[0]["request_id"] == "req-1234"


def test_no_card_number_reaches_a_log_line(moto_table, json_log, customer, products) -> None:
    """A card number typed into every card form, refused and accepted, then a payment run:
    no log line holds it, in any format."""
    client = customer.client
    for number in ("4242424242424242", "4000000000000002", "4242424242424241"):
        client.post("/subscribe/", {"product": "NEWS-DAILY", "payment_day": 15, "card_number": number,
                                    "exp_month": 12, "exp_year": 2030, "cvc": "123", **BILLING_COUNTRY})
        client.post("/wallet/add/", {"card_number": number, "exp_month": 12, "exp_year": 2030, "cvc": "123"})
    with time_machine.travel(date.today(), tick=False):
        call_command("process_payments", stdout=StringIO(), stderr=StringIO())
    text = json_log.getvalue()
    for digits in ("4242424242424242", "4000000000000002", "4242424242424241", "4242 4242"):
        assert digits not in text


# --- Sentry -----------------------------------------------------------------------------------


class Recorder:
    """Stands in for sentry-sdk's transport: keeps the events instead of sending them."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def transport(self):
        from sentry_sdk.transport import Transport

        recorder = self

        class Recording(Transport):
            def capture_envelope(self, envelope) -> None:
                recorder.events += [item.payload.json for item in envelope.items if item.type == "event"]

        return Recording()


def test_sentry_events_carry_no_card_number_cvc_secret_or_session(settings, customer) -> None:
    import sentry_sdk

    recorder = Recorder()
    sentry.init_sentry("https://public@sentry.example.com/1", environment="test", transport=recorder.transport())
    try:
        def explode(*args, **kwargs):
            # Made at run time: the event's source lines show this test's code as written.
            card_number, cvc, api_key = "4242" * 4, "123", "sk_live_" + "abc"  # noqa: F841 - locals Sentry reads
            raise RuntimeError(f"gateway said no to {card_number} (cvc {cvc})")

        settings.DEBUG = False
        client = Client(raise_request_exception=False)
        client.force_login(get_user_model().objects.get(pk=customer.user_id))
        import core.cardforms

        original = core.cardforms.get_gateway
        core.cardforms.get_gateway = explode
        try:
            client.post("/subscribe/", {"product": "NEWS-DAILY", "payment_day": 15,
                                        "card_number": "4242424242424242", "exp_month": 12, "exp_year": 2030,
                                        "cvc": "123", **BILLING_COUNTRY})
        finally:
            core.cardforms.get_gateway = original
        sentry_sdk.flush()
    finally:
        sentry_sdk.init(dsn=None)
    assert recorder.events, "the error reached Sentry"
    text = json.dumps(recorder.events)
    assert "4242424242424242" not in text and "sk_live_abc" not in text
    assert "sessionid" not in text and "csrftoken" not in text
    assert sentry.SCRUBBED in text
    # No personal data: no user in the event, and not the customer's e-mail address, which
    # the account in the frames' local variables carries.
    user = get_user_model().objects.get(pk=customer.user_id)
    assert user.email not in text and all("user" not in event for event in recorder.events)


def test_the_scrubber_hides_card_numbers_anywhere_and_keeps_other_numbers() -> None:
    event = {"message": f"charge of {CARD} failed; order 123456 of 2027-03-15 for ann.oneil+x@mail.example.co.uk",
             "extra": {"card_number": "x", "nested": ["4000-0000-0000-0002", 42]},
             "request": {"data": {"cvc": "123"}, "cookies": {"sessionid": "s"}, "headers": {"Cookie": "s"}}}
    clean = sentry.scrub(event)
    assert CARD not in json.dumps(clean) and "4000-0000-0000-0002" not in json.dumps(clean)
    assert clean["message"].endswith(f"order 123456 of 2027-03-15 for {sentry.SCRUBBED}")
    assert clean["extra"]["card_number"] == sentry.SCRUBBED
    assert "data" not in clean["request"] and "cookies" not in clean["request"]
    assert clean["request"]["headers"]["Cookie"] == sentry.SCRUBBED


# --- the dead-man's switch -------------------------------------------------------------------


class PingServer:
    """A local HTTP server recording the pings (path and body) it receives."""

    def __init__(self) -> None:
        self.pings: list[tuple[str, str]] = []
        received = self.pings

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                received.append((self.path, body))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"OK")

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ping/rpay-{{kind}}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def ping_server():
    server = PingServer()
    yield server
    server.close()


def test_a_run_pings_start_then_success(moto_table, settings, ping_server) -> None:
    settings.BATCH_PING_URL = ping_server.url
    seed_due(1, due=D)
    with time_machine.travel(D, tick=False):
        call_command("process_payments", "--date", D.isoformat(), stdout=StringIO())
    assert [path for path, _ in ping_server.pings] == ["/ping/rpay-payments/start", "/ping/rpay-payments"]
    assert ping_server.pings[-1][1] == "exit status 0"


def test_a_failed_run_pings_fail_with_its_exit_status(moto_table, settings, ping_server, monkeypatch) -> None:
    settings.BATCH_PING_URL = ping_server.url
    seed_due(1, due=D)

    def lost(*args, **kwargs):
        raise RuntimeError("the receipt was lost")
    monkeypatch.setattr(access, "create_receipt", lost)
    with time_machine.travel(D, tick=False), pytest.raises(CommandError):
        call_command("process_payments", "--date", D.isoformat(), stdout=StringIO())
    assert [path for path, _ in ping_server.pings] == ["/ping/rpay-payments/start", "/ping/rpay-payments/fail"]
    assert ping_server.pings[-1][1].startswith("exit status 1: 1 item(s) failed")


def test_a_dead_ping_url_leaves_the_batch_as_it_was(moto_table, settings) -> None:
    settings.BATCH_PING_URL = f"http://127.0.0.1:{free_port()}/nobody-listens"
    seed_due(1, due=D)
    err = StringIO()
    with time_machine.travel(D, tick=False):
        call_command("send_reminders", "--date", D.isoformat(), stdout=StringIO(), stderr=err)  # exit 0
    lines = err.getvalue().splitlines()
    assert any(line.startswith("ping start to the batch monitor failed") for line in lines)
    assert any(line.startswith("ping success to the batch monitor failed") for line in lines)


def test_a_dry_run_does_not_ping(moto_table, settings, ping_server) -> None:
    settings.BATCH_PING_URL = ping_server.url
    with time_machine.travel(D, tick=False):
        call_command("process_payments", "--date", D.isoformat(), "--dry-run", stdout=StringIO())
    assert ping_server.pings == []
