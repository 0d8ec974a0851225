"""scripts/capacity.py: the peak-day capacity model's arithmetic, its shard
recommendation, monotonicity in the shard count, and the CLI's --json output."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("capacity", ROOT / "scripts" / "capacity.py")
capacity = importlib.util.module_from_spec(_spec)
sys.modules["capacity"] = capacity  # dataclasses look their module up by name
_spec.loader.exec_module(capacity)

# round sizes so the units are easy to check by hand
SIZES = {"subscription": 800, "receipt": 500, "audit_event": 500, "receipt_number_lookup": 200,
         "receipt_counter": 100, "gsi1_entry": 600, "gsi2_entry": 600}


def test_hand_computed_small_case():
    # 3,000 subscriptions, a third on the 1st: 1,000 payments on the 1st; the other
    # 2,000 spread over days 2..31 (66.7 a day; February's 28th gets days 28-31: 266.7)
    result = capacity.model(3_000, 1, rate=500, latency_ms=96, ddb_ms=0, cpu_ms=4, sizes=SIZES)
    assert (result.peak_day, result.peak_payments) == (1, 1_000)
    # receipt + event + number look-up in a transaction: 2 x 1 WCU each; the UpdateItem
    # 1 WCU; the counter's one update per block of 100 numbers: 0.01 WCU
    assert result.units_per_payment["table_wcu"] == pytest.approx(7.01)
    assert result.table_wcu == pytest.approx(3_505)
    counter = result.partitions[-1]
    assert counter.name.startswith("table RCPTSEQ#")
    assert counter.wcu == pytest.approx(5)  # 500 payments/s / 100 numbers a block
    # the account's key: the transaction and the UpdateItem, not the counter
    assert result.partitions[-2].wcu == pytest.approx(7)
    paid_key = result.partitions[0]
    assert paid_key.name.startswith("GSI-2 <paid date>")
    assert paid_key.wcu == 500  # one index delete per payment, all under one key
    # Query: 600 bytes / 4 KB, eventually consistent (half): 500/s -> 36.6 RCU/s
    assert paid_key.rcu == pytest.approx(500 * 600 / 4096 / 2)
    assert paid_key.share_of_limit == pytest.approx(0.5)
    # a process: 250/s of CPU (4 ms); 100 ms per payment -> 25 threads to reach it
    assert (result.workers_per_process, result.process_rate, result.processes) == (25, 250, 2)
    assert result.rate == 500
    assert result.wall_hours == pytest.approx(1_000 / 500 / 3600)
    assert result.min_shards == 1
    assert result.over_limit == []


def test_hot_partition_binds_and_shards_release_it():
    result = capacity.model(3_000, 1, rate=1_500, latency_ms=96, ddb_ms=0, cpu_ms=4, sizes=SIZES)
    assert result.binding == "hot GSI partition"
    assert result.partition_cap_rate == pytest.approx(1_000)
    assert result.rate == pytest.approx(1_000)
    assert any(name.startswith("GSI-2 <paid date>") for name in result.over_limit)
    # 2 shards: 750/s each, times the hottest-shard margin for 500 items a shard
    # (1 + 3 * sqrt(500 * 0.5) / 500 = 1.095): 821 WCU/s, under 1,000
    assert result.min_shards == 2
    two = capacity.model(3_000, 2, rate=1_500, latency_ms=96, ddb_ms=0, cpu_ms=4, sizes=SIZES)
    assert two.partitions[0].wcu == pytest.approx(750 * (1 + 3 * math.sqrt(250) / 500))
    assert two.over_limit == []
    assert two.binding.startswith("target rate")


def test_receipt_counter_binds_when_numbers_are_reserved_one_at_a_time():
    # block 1: one counter update per payment, all on one key, whatever the shards
    result = capacity.model(3_000, 100, rate=1_500, latency_ms=96, ddb_ms=0, cpu_ms=4, sizes=SIZES,
                            receipt_block=1)
    assert result.units_per_payment["table_wcu"] == pytest.approx(8)
    assert result.partitions[-1].wcu == pytest.approx(1_500)
    assert result.binding == "hot receipt counter"
    assert result.partition_cap_rate == pytest.approx(1_000)
    assert result.rate == pytest.approx(1_000)
    assert any(name.startswith("table RCPTSEQ#") for name in result.over_limit)
    # the default block of 100: 15 updates/s
    blocks = capacity.model(3_000, 100, rate=1_500, latency_ms=96, ddb_ms=0, cpu_ms=4, sizes=SIZES)
    assert blocks.partitions[-1].wcu == pytest.approx(15)
    assert blocks.binding.startswith("target rate")
    with pytest.raises(ValueError):
        capacity.units_per_payment(SIZES, receipt_block=0)


def test_gateway_latency_binds_a_fixed_fleet():
    # 32 threads at 300 ms reach 106/s, under the 263/s of CPU a process has
    result = capacity.model(10_000_000, 100, rate=2_000, latency_ms=300, ddb_ms=0, cpu_ms=3.8,
                            workers_per_process=32, processes=4)
    assert result.process_limit == "gateway latency"
    assert result.binding == "gateway latency"
    assert result.rate == pytest.approx(4 * 32 / 0.3038)


def test_month_end_clamp_makes_the_28th_the_peak_without_a_heavy_1st():
    # evenly spread: February's 28th carries days 28, 29, 30 and 31
    result = capacity.model(31_000, 1, rate=10, first_share=1 / 31, sizes=SIZES)
    assert (result.peak_month_days, result.peak_day, result.peak_payments) == (28, 28, 4_000)


@settings(max_examples=60, deadline=None)
@given(subscriptions=st.integers(10_000, 50_000_000), first_share=st.floats(0.05, 0.9),
       rate=st.floats(100, 20_000))
def test_recommended_shards_keep_every_partition_under_its_limit(subscriptions, first_share, rate):
    shards = capacity.min_shards(subscriptions, rate=rate, first_share=first_share)
    result = capacity.model(subscriptions, shards, rate=rate, first_share=first_share)
    assert all(p.wcu < capacity.PARTITION_WCU and p.rcu < capacity.PARTITION_RCU for p in result.partitions)
    assert result.binding != "hot GSI partition"
    if shards > 1:  # and it is the smallest such count
        fewer = capacity.model(subscriptions, shards - 1, rate=rate, first_share=first_share)
        assert any(p.share_of_limit >= 1 for p in fewer.partitions)


@settings(max_examples=100, deadline=None)
@given(subscriptions=st.integers(0, 50_000_000), rate=st.floats(1, 50_000), fewer=st.integers(1, 500),
       more=st.integers(0, 500))
def test_more_shards_never_raise_the_per_partition_rate(subscriptions, rate, fewer, more):
    low = capacity.model(subscriptions, fewer, rate=rate)
    high = capacity.model(subscriptions, fewer + more, rate=rate)
    for a, b in zip(low.partitions, high.partitions, strict=True):
        assert b.wcu <= a.wcu * (1 + 1e-12)
        assert b.rcu <= a.rcu * (1 + 1e-12)


def test_cli_json_parses():
    done = subprocess.run(
        [sys.executable, "scripts/capacity.py", "--subscriptions", "10000000", "--shards", "1", "10",
         "--latency-ms", "300", "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    )
    data = json.loads(done.stdout)
    assert [r["shards"] for r in data] == [1, 10]
    assert data[0]["peak_payments"] == 3_333_333
    assert data[0]["binding"] == "hot GSI partition"
    assert data[0]["partitions"][0]["wcu"] > data[1]["partitions"][0]["wcu"]
    assert data[1]["min_shards"] == data[0]["min_shards"] >= 2


def test_metered_items_add_mark_billed_and_their_query():
    # One metered item per payment: mark_billed moves 16 watermark copies (1 unit each) and
    # the month's Query reads 16 shards x 31 days x 120 bytes strongly consistent.
    plain = capacity.model(10_000_000, 16, rate=2_000, sizes=SIZES)
    metered = capacity.model(10_000_000, 16, rate=2_000, sizes=SIZES, metered=1)
    assert metered.units_per_payment["usage_wcu"] == 16
    assert math.isclose(metered.table_wcu, plain.table_wcu + 2_000 * 16)
    assert math.isclose(metered.units_per_payment["usage_query_rcu"], 16 * 31 * 120 / 4096)
    assert plain.units_per_payment["usage_wcu"] == 0
    assert any("default quota" in o for o in metered.over_limit)
