"""Hypothesis properties of perfmodel.predict across random valid configurations."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.inputs.workload import Workload

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
PLATFORMS = st.sampled_from(["power8-s821lc-10c", "x86-dl380-e5-2630v4", "kunpeng-r722", "x86-epyc-7351p"])
SYSTEMS = st.sampled_from(["scylla", "cassandra", "rocksdb", "dm8", "ceph"])


@st.composite
def workloads(draw, closed=True):
    kwargs = dict(
        read_fraction=draw(st.sampled_from([0.0, 0.3, 0.8, 1.0])),
        object_bytes=draw(st.sampled_from([300.0, 1024.0, 4096.0, 65536.0])),
        dataset_bytes=draw(st.sampled_from([1e9, 1e11, 1e12])),
        think_time_s=draw(st.sampled_from([0.0, 1e-3])),
    )
    if closed:
        kwargs["clients"] = draw(st.integers(1, 2000))
    else:
        kwargs["arrival_rate"] = draw(st.floats(10.0, 1e6))
    return Workload(**kwargs)


@SETTINGS
@given(PLATFORMS, SYSTEMS, workloads(), st.data())
def test_more_cores_never_lower_throughput(platform, system, workload, data):
    """Everything else fixed (memory unbound across NUMA nodes, as by default), at a fixed clock.
    With turbo, more busy cores run slower (chain.core_clock), and the closed loop's busy threads
    are an upper bound, so an I/O-bound loop spread over more cores may lose at most the clock's
    fall from turbo to the all-core clock -- never more."""
    plat = perfmodel.load_platform(platform)
    c1, c2 = sorted(data.draw(st.lists(st.integers(1, plat.cores), min_size=2, max_size=2)))
    flat = dataclasses.replace(plat, turbo_hz=math.nan, all_core_hz=math.nan)
    low, high = perfmodel.predict(flat, workload, system=system, cores=[c1, c2]).throughput_ops_s
    assert high >= low * (1 - 1e-6)
    low, high = perfmodel.predict(plat, workload, system=system, cores=[c1, c2]).throughput_ops_s
    all_core = plat.base_hz if math.isnan(plat.all_core_hz) else plat.all_core_hz
    turbo = plat.base_hz if math.isnan(plat.turbo_hz) else plat.turbo_hz
    assert high >= low * all_core / turbo * (1 - 1e-6)


@SETTINGS
@given(PLATFORMS, st.sampled_from(["scylla", "cassandra", "ceph"]), st.integers(1, 500), st.data())
def test_higher_replication_never_raises_write_throughput(platform, system, clients, data):
    """At consistency ALL every replica is waited for, so more replicas never help. At ONE a
    write waits for the fastest replica, which more replicas make faster at light load (and
    more replicas spread a ring's ranges more evenly), so there the property is the capacity:
    a saturated open load completes no more writes with more copies to make."""
    nodes = 5
    rf = np.array(sorted(data.draw(st.lists(st.integers(1, nodes), min_size=2, max_size=2))))
    consistency = data.draw(st.sampled_from(["ONE", "ALL"]))
    load = {"clients": clients} if consistency == "ALL" else {"arrival_rate": 1e11}
    w = Workload(
        operation="write",
        read_fraction=0.0,
        object_bytes=1024.0,
        replication_factor=rf,
        consistency=consistency,
        **load,
    )
    frame = perfmodel.predict(platform, w, nodes=nodes, system=system)
    assert frame.throughput_ops_s.iloc[1] <= frame.throughput_ops_s.iloc[0] * (1 + 1e-6)


@SETTINGS
@given(PLATFORMS, SYSTEMS, workloads())
def test_latencies_finite_positive_and_ordered(platform, system, workload):
    row = perfmodel.predict(platform, workload, system=system).iloc[0]
    latencies = [row.latency_p50_ms, row.latency_p95_ms, row.latency_p99_ms]
    assert all(np.isfinite(latencies)) and latencies[0] > 0
    assert latencies[0] <= latencies[1] * (1 + 1e-9) and latencies[1] <= latencies[2] * (1 + 1e-9)
    for cls in ("read", "write"):
        values = [row[f"{cls}_latency_{p}_ms"] for p in ("p50", "p95", "p99")]
        if np.isfinite(values).all():
            assert values[0] <= values[1] * (1 + 1e-9) <= values[2] * (1 + 1e-9)
    # no station runs above capacity in a closed loop
    utils = [row[c] for c in row.index if c.startswith("util_")]
    assert max(utils) <= 1 + 1e-6


@SETTINGS
@given(PLATFORMS, SYSTEMS, workloads(closed=False))
def test_open_loop_is_either_stable_and_finite_or_flagged(platform, system, workload):
    row = perfmodel.predict(platform, workload, system=system).iloc[0]
    if row.saturated:
        assert np.isinf(row.latency_p99_ms)
    else:
        assert np.isfinite(row.latency_p99_ms) and row.latency_p99_ms > 0
        assert row.throughput_ops_s == workload.arrival_rate


@SETTINGS
@given(PLATFORMS, st.sampled_from(["scylla", "cassandra", "rocksdb", "dm8"]), workloads(), st.data())
def test_larger_cache_never_lowers_hit_ratio(platform, system, workload, data):
    sizes = sorted(data.draw(st.lists(st.floats(1e8, 2e12), min_size=2, max_size=2)))
    frame = perfmodel.predict(platform, workload, system=system, cache_bytes=sizes)
    assert frame.cache_hit_ratio.iloc[1] >= frame.cache_hit_ratio.iloc[0]
