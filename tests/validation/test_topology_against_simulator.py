"""Each deployment topology's sizing answer against the discrete-event simulator.

``size`` maps a count of servers onto the model's inputs (``perfmodel.inputs.topology``): instances on
a slice of a server, a primary's per-server load, an embedded engine's share. The simulator runs
the same mapped configuration -- the stations ``predict`` solves -- with its own random arrivals
and service times; at the answer the analytic throughput, mean and p99 must agree with it, so a
count ``size`` gives is one the simulator would give too.
"""

from __future__ import annotations

import numpy as np
import pytest

import perfmodel
from perfmodel.inputs import topology
from perfmodel.inputs.systems import load_system
from perfmodel.model import chain
from perfmodel.plan.sizing import size
from perfmodel.sim.config import config_from_model
from perfmodel.sim.run import simulate_config

pytestmark = pytest.mark.slow


def _answer_and_simulation(w, system, platform, target, slo, **kw):
    row = size(w, target_ops_s=target, slo_p99_ms=slo, system=system, platforms=[platform],
               interval=None, **kw).iloc[0]  # fmt: skip
    assert row.feasible, row.reason
    spec = load_system(system)
    server = perfmodel.load_platform(platform)
    unit = topology.instance_slice(server, int(row.instances_per_server))
    surviving = int(row.nodes) - 1
    from dataclasses import replace

    lay = topology.layout(spec.topology, replace(w, clients=None, arrival_rate=target), [surviving],
                          int(row.instances_per_server), kw.get("sync_replicas", 0))  # fmt: skip
    model = chain.build([unit], lay.workload, nodes=lay.nodes, system=system,
                        threads_per_core=np.array([row.threads_per_core]),
                        device=np.array([row.device], dtype=object))  # fmt: skip
    t = chain.tails(model, chain.solve(model))
    sim = simulate_config(config_from_model(model), requests=60_000, replications=2, seed=11,
                          keep_records=False, workers=1).summary.iloc[0]  # fmt: skip
    return row, model, t, sim


@pytest.mark.parametrize(
    "system, platform, workload, target, slo",
    [
        # instances: Redis at 2 M ops/s on a two-socket EPYC (16 instances, each a 1/16 slice) and at
        # 20 M (191 instances, a core each but the one left to the OS)
        ("redis", "x86-epyc-9654-2s",
         dict(operation="mixed", read_fraction=0.9, object_bytes=100, dataset_bytes=50 * 2**30), 2e6, 1.0),
        ("redis", "x86-epyc-9654-2s",
         dict(operation="mixed", read_fraction=0.9, object_bytes=100, dataset_bytes=50 * 2**30), 2e7, 1.0),
        # a primary with replicas: PostgreSQL, read-heavy, 300 k ops/s: a primary and 2 replicas set by
        # throughput, each server carrying every write and a third of the reads
        ("postgresql", "x86-dl380-e5-2630v4",
         dict(operation="mixed", read_fraction=0.95, object_bytes=1024, dataset_bytes=20e9), 3e5, 50.0),
        # the same with every commit waiting for one replica: 3 nodes holding every write, 2 answers
        ("postgresql-sync", "x86-dl380-e5-2630v4",
         dict(operation="mixed", read_fraction=0.95, object_bytes=1024, dataset_bytes=20e9), 3e5, 50.0),
        # embedded: RocksDB, each of 5 servers its own fifth of 2 M ops/s and of the data
        ("rocksdb", "x86-dl380-e5-2630v4",
         dict(operation="mixed", read_fraction=0.5, object_bytes=1024, dataset_bytes=200e9), 2e6, 50.0),
    ],
)  # fmt: skip
def test_the_answer_holds_in_the_simulator(system, platform, workload, target, slo):
    w = perfmodel.Workload(clients=1, **workload)
    sync = {"sync_replicas": 1} if system == "postgresql-sync" else {}
    system = system.removesuffix("-sync")
    row, model, t, sim = _answer_and_simulation(w, system, platform, target, slo, **sync)
    assert system == "redis" or "throughput" in row.binding  # a loaded answer, not the floor
    offered = float(np.asarray(model.inputs.cfg.arrival_rate)[0])
    assert sim["throughput_ops_s"] == pytest.approx(offered, rel=0.03)  # an open loop: what is offered
    assert sim["latency_p99_ms"] <= slo  # the SLO holds in the simulation too
    assert sim["latency_mean_ms"] == pytest.approx(t.mean[0] * 1e3, rel=0.1)
    assert sim["latency_p99_ms"] == pytest.approx(t.quantiles["p99"][2][0] * 1e3, rel=0.15)
