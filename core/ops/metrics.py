"""Prometheus metrics at ``/metrics``: HTTP requests and latencies by view, and the batches'
last runs, read at scrape time from what the apps register (billing's BatchRun records:
one Query per kind, cached for ``RUN_FACTS_CACHE_SECONDS``), so the web process can say
what the separate batch processes did without a Pushgateway.

``prometheus-client`` (the Prometheus project's own library) rather than
``django-prometheus``: we need a collector of our own for the batches anyway, and a
middleware of twenty lines gives the per-view request metrics without patching Django's
database and cache backends. Under gunicorn each worker counts its own requests (a
scrape reaches one of them); set ``PROMETHEUS_MULTIPROC_DIR`` for prometheus-client's
multiprocess mode to merge them.

The page is open only to the addresses in ``METRICS_ALLOWED_IPS`` (default the loopback)
or to a request bearing ``METRICS_TOKEN``; anyone else gets 403.
"""

from __future__ import annotations

import hmac
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

log = logging.getLogger(__name__)
T = TypeVar("T")
REGISTRY = CollectorRegistry()
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)

HTTP_REQUESTS = Counter("rpay_http_requests", "HTTP requests answered, by view, method and status",
                        ["view", "method", "status"], registry=REGISTRY)
HTTP_LATENCY = Histogram("rpay_http_request_duration_seconds", "Time to answer an HTTP request, by view",
                         ["view", "method"], registry=REGISTRY)


class MetricsMiddleware:
    """Counts and times every request by its view's URL name (never by its path: ids in
    paths would make a series per customer)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.view_name or "unnamed") if match else "unresolved"
        HTTP_LATENCY.labels(view, request.method).observe(time.perf_counter() - started)
        HTTP_REQUESTS.labels(view, request.method, str(response.status_code)).inc()
        return response


@dataclass
class RunFacts:
    """What the newest runs of one batch kind say (one day's runs, over every host)."""

    kind: str
    last_success: float | None = None  # epoch seconds the newest completed run finished
    last_started: float | None = None
    duration: float | None = None  # seconds, the newest finished day's longest run
    failed: bool = False  # the newest run failed or was abandoned
    items: dict[str, int] = field(default_factory=dict)  # outcome -> items of the newest day
    charged: dict[str, int] = field(default_factory=dict)  # currency -> minor units charged
    gateway_seconds: float | None = None  # mean gateway call of the newest day's runs


_sources: list[Callable[[], list[RunFacts]]] = []
RUN_FACTS_CACHE_SECONDS = 15.0


def register_run_source(source: Callable[[], list[RunFacts]]) -> None:
    """An app's batches, as ``RunFacts`` per kind (from its ``AppConfig.ready``)."""
    if source not in _sources:
        _sources.append(source)


class CachedReading(Generic[T]):
    """What a collector reads from the table, kept ``seconds`` so that scrapes every few
    seconds, from several Prometheus servers, cost one read; None when the read failed
    (logged: a scrape never fails for it). Thread-safe: one read at a time."""

    def __init__(self, read: Callable[[], T], *, what: str, seconds: float) -> None:
        self._read, self._what, self._seconds = read, what, seconds
        self._cached: tuple[float, T | None] = (-1e9, None)
        self._lock = threading.Lock()

    def get(self) -> T | None:
        with self._lock:
            at, value = self._cached
            if time.monotonic() - at >= self._seconds:
                try:
                    value = self._read()
                except Exception as error:  # noqa: BLE001 - a scrape never fails for it
                    log.warning("%s unavailable: %s", self._what, type(error).__name__)
                    value = None
                self._cached = (time.monotonic(), value)
            return value

    def forget(self) -> None:
        with self._lock:
            self._cached = (-1e9, None)


class CachedCollector(Generic[T]):
    """A collector of facts read at scrape time through a ``CachedReading``: ``facts``
    (None when the read failed), ``forget`` (the next scrape reads again), and the
    ``up`` gauge named ``up_name`` that says whether the read worked, so a scrape still
    answers, and shows the failure, when the table cannot be read."""

    def __init__(self, read: Callable[[], T], *, what: str, seconds: float, up_name: str, up_help: str) -> None:
        self._reading = CachedReading(read, what=what, seconds=seconds)
        self._up_name, self._up_help = up_name, up_help

    def facts(self) -> T | None:
        return self._reading.get()

    def forget(self) -> None:
        self._reading.forget()

    def up(self, facts: T | None) -> GaugeMetricFamily:
        """1 when ``facts`` were read, 0 when the read failed."""
        gauge = GaugeMetricFamily(self._up_name, self._up_help)
        gauge.add_metric([], 0 if facts is None else 1)
        return gauge


class BatchCollector(CachedCollector[list[RunFacts]]):
    """The batches' gauges, computed at scrape time from the registered sources."""

    def __init__(self) -> None:
        super().__init__(lambda: [fact for source in _sources for fact in source()],
                         what="batch metrics", seconds=RUN_FACTS_CACHE_SECONDS,
                         up_name="rpay_batch_metrics_up", up_help="1 when the batch run records could be read")

    def collect(self) -> Iterator[Metric]:
        facts = self.facts()
        yield self.up(facts)
        if not facts:
            return
        success = GaugeMetricFamily("rpay_batch_last_success_timestamp_seconds",
                                    "When the newest completed run of the batch finished", labels=["kind"])
        started = GaugeMetricFamily("rpay_batch_last_run_start_timestamp_seconds",
                                    "When the newest run of the batch started", labels=["kind"])
        duration = GaugeMetricFamily("rpay_batch_last_run_duration_seconds",
                                     "How long the newest finished run took", labels=["kind"])
        failed = GaugeMetricFamily("rpay_batch_last_run_failed", "1 when the newest run failed or was abandoned",
                                   labels=["kind"])
        items = GaugeMetricFamily("rpay_batch_last_run_items", "Items of the newest day's runs, by outcome",
                                  labels=["kind", "outcome"])
        charged = GaugeMetricFamily("rpay_batch_last_run_charged_minor_units",
                                    "Amount charged by the newest day's runs, in minor units", labels=["kind", "currency"])
        gateway = GaugeMetricFamily("rpay_batch_last_run_gateway_seconds",
                                    "Mean gateway call time of the newest day's runs", labels=["kind"])
        for fact in facts:
            if fact.last_success is not None:
                success.add_metric([fact.kind], fact.last_success)
            if fact.last_started is not None:
                started.add_metric([fact.kind], fact.last_started)
            if fact.duration is not None:
                duration.add_metric([fact.kind], fact.duration)
            failed.add_metric([fact.kind], 1 if fact.failed else 0)
            for outcome, count in sorted(fact.items.items()):
                items.add_metric([fact.kind, outcome], count)
            for currency, amount in sorted(fact.charged.items()):
                charged.add_metric([fact.kind, currency], amount)
            if fact.gateway_seconds is not None:
                gateway.add_metric([fact.kind], fact.gateway_seconds)
        yield from (success, started, duration, failed, items, charged, gateway)


BATCHES = BatchCollector()
REGISTRY.register(BATCHES)
_collectors: list[object] = []


def register_collector(collector: object) -> None:
    """An app's own collector (a ``collect()`` yielding metric families, read at scrape
    time), from its ``AppConfig.ready``: registered once however often ``ready`` runs."""
    if any(type(c) is type(collector) for c in _collectors):
        return
    _collectors.append(collector)
    REGISTRY.register(collector)


def allowed(request: HttpRequest) -> bool:
    """The scraper: a loopback (or listed) address, or the bearer of ``METRICS_TOKEN``."""
    token = settings.METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[7:].encode(), token.encode()):
        return True
    return request.META.get("REMOTE_ADDR", "") in settings.METRICS_ALLOWED_IPS


def metrics(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        return HttpResponse("metrics: not for this address without the token\n", status=403,
                            content_type="text/plain")
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)
