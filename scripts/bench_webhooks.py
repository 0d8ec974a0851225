#!/usr/bin/env python
"""The outbound webhooks' section of ``make bench`` (called from scripts/bench.py); not a test.

On DynamoDB Local, it measures events delivered per second by the sender
(``billing.batches.Sender``: fan-out, claim, signed POST, outcome) to a receiver on the
loopback that answers 200 at once (its own process, so that it does not share the
sender's interpreter), for one endpoint (each event in order: one at a time) and for four
endpoints served at once (the sender's ``--workers``), and the DynamoDB requests per
delivery.

Alone: ``BENCH_SCALE=0.2 .venv/bin/python scripts/bench_webhooks.py`` (it starts its own
engine; the scale shrinks the counts).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchkit import SCALE  # noqa: E402  (scripts/ is on the path: this file's folder)

EVENTS = max(50, int(1000 * SCALE))
SHAPES = [(1, 1), (4, 4)]  # (endpoints, sender workers)

RECEIVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once (no delayed-ACK stall)
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a): pass
s = ThreadingHTTPServer(("127.0.0.1", 0), H); s.daemon_threads = True
print(s.server_address[1], flush=True); s.serve_forever()
"""


def start_receiver() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}/hooks"


def use_table(name: str, endpoint: str) -> None:
    from django.conf import settings

    from billing.models import configure
    from core.dynamo.table import ensure_table

    settings.DYNAMODB_TABLE = name
    configure(table_name=name, region="us-east-1", host=endpoint, max_pool_connections=64)
    ensure_table()


def one_shape(endpoint_url: str, engine: str, endpoints: int, workers: int) -> dict:
    from django.conf import settings

    from billing import access, batches
    from billing.actions import webhook_endpoints
    from core.dynamo.engine import dynamodb_client

    settings.WEBHOOKS_SETTLE_SECONDS = 0
    settings.WEBHOOKS_ALLOW_PRIVATE_URLS = True
    use_table(f"bench_webhooks_{endpoints}", engine)
    for _ in range(endpoints):
        webhook_endpoints.create_endpoint(endpoint_url, None, actor="bench")
    for n in range(EVENTS):
        access.new_merchant_event("payment.succeeded", account_id="bench", object_type="receipt",
                                  object_id=f"R-{n}", data={"object": "receipt", "id": f"R-{n}", "amount": 999}).save()
    ops: Counter = Counter()
    events = dynamodb_client().meta.events
    events.register("before-call.dynamodb", lambda model, **kw: ops.update([model.name]), unique_id="bench-wh")
    sender = batches.Sender(batches.SenderConfig.from_settings(workers=workers))
    started, cpu = time.monotonic(), time.process_time()
    delivered = 0
    while delivered < EVENTS * endpoints:
        delivered += sender.run_pass().counts["succeeded"]
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    events.unregister("before-call.dynamodb", unique_id="bench-wh")
    durations = sorted(d.LastDurationMs or 0 for e in access.list_endpoints() for d in access.delivery_log(e.EndpointId))
    return {"post_ms": durations[len(durations) // 2] if durations else None,"endpoints": endpoints, "workers": workers, "deliveries": delivered, "seconds": elapsed,
            "rate": delivered / elapsed, "cpu_ms": 1000 * cpu / delivered,
            "requests_per_delivery": sum(ops.values()) / delivered,
            "requests": dict(ops)}


def run(engine: str, say: Callable[[str], None] = print) -> dict:
    receiver, url = start_receiver()
    try:
        results = {"events": EVENTS, "shapes": []}
        for endpoints, workers in SHAPES:
            r = one_shape(url, engine, endpoints, workers)
            results["shapes"].append(r)
            say(f"webhooks {endpoints} endpoint(s), {workers} worker(s): {r['rate']:7.1f} deliveries/s, "
                f"{r['requests_per_delivery']:.2f} DynamoDB requests and {r['cpu_ms']:.2f} ms CPU per delivery, "
                f"median POST {r['post_ms']} ms")
        return results
    finally:
        receiver.terminate()
        receiver.wait(10)


def render(r: dict) -> str:
    lines = ["## Outbound webhooks", "",
             f"{r['events']} events delivered by `deliver_webhooks`' sender to a receiver on the loopback that "
             "answers 200 at once, on DynamoDB Local (each delivery: its fan-out PutItem, the claim's and the "
             "outcome's UpdateItems, the queue's Query shared by a page).", "",
             "| endpoints | workers | deliveries/s | DynamoDB requests per delivery | CPU ms per delivery | median POST ms |",
             "|---:|---:|---:|---:|---:|---:|"]
    for s in r["shapes"]:
        lines.append(f"| {s['endpoints']} | {s['workers']} | {s['rate']:.0f} | {s['requests_per_delivery']:.2f} | "
                     f"{s['cpu_ms']:.2f} | {s['post_ms']} |")
    lines += ["", "One endpoint's events go one at a time (oldest first, each after the one before it "
              "succeeded); several endpoints are served at once."]
    return "\n".join(lines)


def main() -> None:
    from devtools.benchsetup import bench_engine

    t0 = time.monotonic()
    with bench_engine("rpay-bench-webhooks-") as (endpoint, _):
        result = run(endpoint, lambda text: print(f"[{time.monotonic() - t0:6.0f}s] {text}", flush=True))
    print(render(result))


if __name__ == "__main__":
    main()
