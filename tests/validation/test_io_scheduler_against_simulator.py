"""A server with its own I/O scheduler (ScyllaDB's Seastar, spec ``io_latency_goal_ms``): a read
that meets a flush waits the scheduler's latency goal, in ``predict`` and in the simulator alike,
where the kernel's queue (Cassandra) makes it wait behind the flush's backlog.

ScyllaDB 80/20 on POWER8 S821LC nodes with one SATA drive each (one hardware queue, so every read
shares a flush's queue). The sizing step of tests/unit/test_sizing.py (1 M ops/s, 13 nodes) is
where a ~0.55 s backlog would set the p99; the simulator comparison runs a smaller cluster with a
16 MiB memtable (flushes every ~0.14 s, a 34 ms backlog) so that 200 k requests see hundreds of
flushes, and a 2 GiB cache so that most reads reach the drive.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import perfmodel
from perfmodel.inputs.params import load_parameters
from perfmodel.inputs.systems import load_system
from perfmodel.inputs.workload import load_workload_file
from perfmodel.model import chain
from perfmodel.sim.config import config_from_model
from perfmodel.sim.run import simulate_config

pytestmark = pytest.mark.slow

GOAL = 0.75e-3  # Seastar's default io_latency_goal_ms, 1.5 x task_quota_ms 0.5


def _model(nodes=13):
    spec = load_workload_file(
        str(Path(perfmodel.__file__).parents[1] / "data" / "workloads" / "scylla-read-heavy.yaml")
    )
    w = replace(spec["workload"], arrival_rate=1e6, clients=None)
    return chain.build("power8-s821lc-10c", w, nodes=nodes, system="scylla", threads_per_core=2,
                       device="sata-ssd-800gb")  # fmt: skip


def _simulate(cfg):
    out = simulate_config(cfg, requests=200_000, replications=2, seed=7, keep_records=False, workers=1)
    return out.summary.iloc[0]


def test_the_spec_carries_seastars_default_goal():
    assert load_system("scylla").io_latency_goal_s == pytest.approx(GOAL)
    assert load_system("cassandra").io_latency_goal_s == float("inf")
    m = _model()
    full = float(m.devices.bursts.queue_depth[0]) * 512 * 1024 / float(m.devices.data.seq_write[0])
    assert full > 100 * GOAL  # a flush's backlog on the SATA drive: hundreds of milliseconds
    assert float(m.devices.bursts.read_cap[0]) == pytest.approx(GOAL)
    assert float(m.net.burst_read_cap[0]) == pytest.approx(GOAL)


def test_reads_behind_the_scheduler_agree_with_the_simulator():
    params = load_parameters("calibrated").with_values(**{"memtable_bytes[scylla]": 16 * 2**20})
    spec = load_workload_file(
        str(Path(perfmodel.__file__).parents[1] / "data" / "workloads" / "scylla-read-heavy.yaml")
    )
    w = replace(spec["workload"], arrival_rate=1e5, clients=None)
    m = chain.build("power8-s821lc-10c", w, nodes=3, system="scylla", threads_per_core=2, params=params,
                    device="sata-ssd-800gb", cache_bytes=2 * 2**30)  # fmt: skip
    t = chain.tails(m, chain.solve(m))
    assert t.tail_event_share[0] > 0.05  # the p95 and p99 are in the reads that meet a flush
    cfg = config_from_model(m)
    assert cfg.flushes and cfg.flush_read_cap == pytest.approx(GOAL)
    sim = _simulate(cfg)
    assert t.mean_read[0] * 1e3 == pytest.approx(sim["read_latency_mean_ms"], rel=0.15)
    for level in ("p95", "p99"):
        assert t.quantiles[level][0][0] * 1e3 == pytest.approx(sim[f"read_latency_{level}_ms"], rel=0.15)
    # a write replica's sync write is held to the goal as well (Seastar fair-queues every class)
    assert t.mean_write[0] * 1e3 == pytest.approx(sim["write_latency_mean_ms"], rel=0.15)
    assert t.quantiles["p99"][1][0] * 1e3 == pytest.approx(sim["write_latency_p99_ms"], rel=0.25)
    # the same stations with the kernel's queue holding the whole flush: the tail is the backlog
    kernel = _simulate(replace(cfg, flush_read_cap=float("inf")))
    assert kernel["read_latency_p99_ms"] > 20 * sim["read_latency_p99_ms"]
