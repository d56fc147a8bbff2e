"""The order a server takes its waiting requests in (spec field and knob ``wait_scv``) spreads their
wait without changing its mean: first come, first served is the least spread (a saturated closed
loop's wait is then almost fixed), random order of service the exponential's. Checked against the
variance formula of :func:`perfmodel.solve.network.class_moments`, for the invariance of every mean and the
throughput, for monotone percentiles, at light load, and in the spec's validation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.inputs.errors import DataError
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain
from perfmodel.solve import network as solve

PLATFORM = "arm-graviton4-c8g-8xlarge"


def _workload(read_fraction=1.0, iodepth=1, clients=256):
    op = {1.0: "read", 0.0: "write"}.get(read_fraction, "mixed")
    return Workload(operation=op, read_fraction=read_fraction, object_bytes=64, dataset_bytes=1e9,
                    clients=clients, iodepth=iodepth, replication_factor=1)  # fmt: skip


def _predict(system="memcached", **kw):
    w = _workload(**{k: kw.pop(k) for k in list(kw) if k in ("read_fraction", "iodepth", "clients")})
    return perfmodel.predict(PLATFORM, w, system=system, params="default", thread_cap=4, **kw).iloc[0]


def test_the_event_loop_stores_spread_their_waits_and_the_others_do_not():
    assert perfmodel.load_system("memcached").wait_scv == 0.30
    assert perfmodel.load_system("redis").wait_scv == 0.30
    for name in ("scylla", "cassandra", "mysql", "postgresql", "ceph", "rocksdb"):
        assert perfmodel.load_system(name).wait_scv == 0.0, name
    m = chain.build(PLATFORM, _workload(), system="memcached", params="default")
    assert np.all(m.net.wait_scv == 0.30)
    m = chain.build(PLATFORM, _workload(), system="memcached", params="default", wait_scv=0.0)
    assert np.all(m.net.wait_scv == 0.0)


@pytest.mark.parametrize("floor", [0.0, 0.3, 1.0])
def test_the_wait_variance_is_the_larger_of_the_capped_one_and_the_floor(floor):
    """Per station ``max(min(w^2 (2 / P - 1), cap), c w^2) + scv d^2``; the means do not move."""
    m = chain.build(PLATFORM, _workload(), system="memcached", params="default")
    sol = chain.solve(m)
    net = replace(m.net, wait_scv=np.full(m.inputs.size, floor))
    mean_r, var_r, mean_w, var_w = solve.class_moments(net, sol)
    base = solve.class_moments(replace(m.net, wait_scv=0.0), sol)
    w, d = sol.w_read[0], np.where(sol.r_read[0] > 0, m.net.d_read[0], 0.0)
    p = np.maximum(sol.wait_probability[0], 1e-12)
    capped = np.minimum(np.where(w > 0, w * w * (2 / p - 1), 0.0), sol.wait_var_cap_read[0])
    expected = (np.maximum(capped, floor * w * w) + m.net.scv[0] * d * d).sum()
    assert var_r[0] == pytest.approx(expected, rel=1e-12)
    assert mean_r[0] == base[0][0] and mean_w[0] == base[2][0]  # the order of service moves no mean
    assert var_r[0] >= base[1][0]
    # 256 clients on four threads: the wait is most of a read's time
    assert w.sum() > 0.5 * mean_r[0]
    if floor > 0:
        assert var_r[0] >= floor * (w * w).sum()


def _floored(w, p, cap, floor):
    """Per station ``max(min(w^2 (2 / P - 1), cap), c w^2)``, written out."""
    capped = np.where(w > 0, w * w * (2 / np.maximum(p, 1e-12) - 1), 0.0)
    capped = capped if cap is None else np.minimum(capped, cap)
    return np.maximum(capped, floor * w * w)


def test_a_replicated_writes_wait_is_floored_on_each_replica_before_the_ack_order():
    """A write waits for its acks: each replica's wait gets the floor, then the order statistic of
    the replicas' waits scales the variance (``ack_var``); the work itself is not spread."""
    w = Workload(operation="write", read_fraction=0.0, object_bytes=1000, dataset_bytes=1e10,
                 clients=2048, replication_factor=3)  # fmt: skip
    m = chain.build("x86-dl380-e5-2630v4", w, nodes=3, system="scylla", params="default", wait_scv=5.0)
    sol = chain.solve(m)
    _, _, mean_w, var_w = solve.class_moments(m.net, sol)
    base = solve.class_moments(replace(m.net, wait_scv=0.0), sol)
    p = sol.wait_probability if sol.wait_probability_write is None else sol.wait_probability_write
    cap = None if sol.wait_var_cap_write is None else sol.wait_var_cap_write[0]
    d = np.where(sol.r_write[0] > 0, m.net.d_write[0], 0.0)
    waits = _floored(sol.w_write[0], p[0], cap, 5.0).sum()
    expected = (m.net.scv[0] * d * d).sum() + m.net.ack_var[0] * waits
    assert var_w[0] == pytest.approx(expected, rel=1e-12)
    assert var_w[0] > base[3][0]  # a floor above the exponential's binds wherever a write waits
    assert mean_w[0] == base[2][0]


def test_each_configuration_of_a_grid_gets_its_own_floor():
    m = chain.build(PLATFORM, _workload(), system="memcached", params="default", wait_scv=[0.0, 0.3, 1.0])
    assert m.net.wait_scv.tolist() == [0.0, 0.3, 1.0]
    sol = chain.solve(m)
    mean_r, var_r, _, _ = solve.class_moments(m.net, sol)
    for i, floor in enumerate([0.0, 0.3, 1.0]):
        d = np.where(sol.r_read[i] > 0, m.net.d_read[i], 0.0)
        w, p = sol.w_read[i], sol.wait_probability[i]
        expected = (_floored(w, p, sol.wait_var_cap_read[i], floor) + m.net.scv[i] * d * d).sum()
        assert var_r[i] == pytest.approx(expected, rel=1e-12)
    assert var_r[0] < var_r[1] < var_r[2] and mean_r[0] == mean_r[1] == mean_r[2]


@settings(max_examples=20, deadline=None)
@given(
    f=st.sampled_from([0.0, 0.5, 1.0]),
    clients=st.sampled_from([4, 64, 1024]),
    iodepth=st.sampled_from([1, 16]),
    system=st.sampled_from(["memcached", "redis"]),
    low=st.sampled_from([0.0, 0.1, 0.3]),
    step=st.sampled_from([0.2, 0.7]),
)
def test_spreading_the_wait_moves_no_mean_nor_lowers_a_percentile(f, clients, iodepth, system, low, step):
    a = _predict(system, read_fraction=f, clients=clients, iodepth=iodepth, wait_scv=low)
    b = _predict(system, read_fraction=f, clients=clients, iodepth=iodepth, wait_scv=low + step)
    assert b["throughput_ops_s"] == pytest.approx(a["throughput_ops_s"], rel=1e-12)
    assert b["latency_mean_ms"] == pytest.approx(a["latency_mean_ms"], rel=1e-12)
    for q in ("latency_p95_ms", "latency_p99_ms", "latency_p999_ms"):
        assert b[q] >= a[q] * (1 - 1e-9), q


def test_a_saturated_loop_with_random_order_has_an_exponential_like_tail():
    """At saturation FCFS leaves the p99 near the mean; with SCV 1 (random order of service) the
    wait is a gamma of shape 1, whose p99 is ln(100) = 4.6 of its mean."""
    fcfs = _predict(clients=4096, iodepth=8, wait_scv=0.0)
    ros = _predict(clients=4096, iodepth=8, wait_scv=1.0)
    assert fcfs["latency_p99_ms"] < 1.2 * fcfs["latency_mean_ms"]
    assert ros["latency_p99_ms"] / ros["latency_mean_ms"] == pytest.approx(np.log(100), rel=0.05)


def test_a_lone_request_has_no_wait_to_spread():
    """One client, one request in flight: nothing waits, so the order of service changes nothing."""
    a, b = _predict(clients=1, wait_scv=0.0), _predict(clients=1, wait_scv=1.0)
    assert b["latency_p99_ms"] == pytest.approx(a["latency_p99_ms"], rel=1e-9)


@pytest.mark.parametrize("value", [-0.1, 101, "high"])
def test_a_bad_wait_scv_in_a_spec_is_named(tmp_path, value):
    text = Path(perfmodel.load_system("memcached").path).read_text(encoding="utf-8")
    spec = tmp_path / "mc.yaml"
    spec.write_text(text.replace("\nwait_scv: 0.30", f"\nwait_scv: {value}", 1))
    with pytest.raises(DataError) as info:
        perfmodel.load_system(str(spec))
    assert "wait_scv" in str(info.value)


def test_the_simulator_says_it_does_not_spread_the_waits():
    """The simulator serves first come, first served; a row whose model spreads its waits says so."""
    w = Workload(read_fraction=1.0, object_bytes=512, dataset_bytes=1e9, clients=64)
    kw = dict(system="redis", params="default", requests=2000, replications=1, progress=False)
    spread = perfmodel.simulate("x86-dl380-e5-2630v4", w, **kw).summary.iloc[0]
    fcfs = perfmodel.simulate("x86-dl380-e5-2630v4", w, wait_scv=0.0, **kw).summary.iloc[0]
    assert "wait_scv 0.3" in spread["replication_warning"]
    assert "wait_scv" not in fcfs["replication_warning"]
