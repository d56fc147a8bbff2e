"""Background writes (DM8's checkpoints): ``predict`` against the simulator on the same stations.

A database's checkpoint (or page cleaner) writes dirty pages behind the
transactions: a commit waits for its redo log, not for the pages. ``predict``
keeps that work as device load no request waits for (``net.load_write``); the
simulator submits it as jobs of their own when each write completes
(``SimConfig.background``). Both must then give the same write tail; when the
simulator put that work on the write (as it did before), the simulated p99
sat 1.5 ms above predict's whatever the load.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import perfmodel
from perfmodel.inputs._data import data_dir
from perfmodel.inputs.workload import load_workload_file
from perfmodel.model import chain
from perfmodel.sim.config import config_from_model
from perfmodel.sim.run import simulate_config
from perfmodel.solve.network import STATIONS

pytestmark = pytest.mark.slow

DEV = STATIONS.index("device")


def _dm8(nodes: int, **changes):
    spec = load_workload_file(str(data_dir() / "workloads" / "dm8-tpcc.yaml"))
    w = replace(spec["workload"], arrival_rate=1.5e5, clients=None, **changes)
    args = dict(nodes=nodes, system=spec["system"], cores=48, numa_binding=True)
    return w, args


def test_dm8_checkpoints_are_jobs_of_their_own_not_part_of_the_write():
    w, args = _dm8(12)
    model = chain.build("kunpeng-r722", w, params=None, **args)
    cfg = config_from_model(model)
    assert model.net.d_write[0, DEV] == 0 and cfg.d_write[DEV] == 0  # a transaction does not wait for pages
    assert cfg.background[DEV] == pytest.approx(model.net.load_write[0, DEV] - cfg.destage[DEV])
    assert cfg.background[DEV] > 0 and not cfg.flushes


@pytest.mark.parametrize("nodes", [10, 16])
def test_dm8_write_tail_agrees_with_the_simulator(nodes):
    w, args = _dm8(nodes)
    row = perfmodel.predict("kunpeng-r722", w, **args).iloc[0]
    cfg = config_from_model(chain.build("kunpeng-r722", w, params=None, **args))
    sim = simulate_config(cfg, requests=200_000, replications=3, seed=3, keep_records=False, workers=1)
    sim = sim.summary.iloc[0]
    for col in ("write_latency_mean_ms", "write_latency_p99_ms", "latency_p99_ms"):
        assert row[col] == pytest.approx(sim[col], rel=0.05), col
    # the device carries the checkpoints in both: the same utilisation
    assert np.isclose(cfg.offered_utilization()[DEV], sim["util_device"], rtol=0.05)


def _reads_behind_background(population):
    """Reads (0.2 ms at the device, then 1 ms elsewhere) and writes (1 ms elsewhere), each write
    leaving a 0.4 ms background job on the device; ``population`` clients, no think time."""
    from perfmodel.sim import config_from_network
    from perfmodel.solve.network import StationNetwork, solve_closed

    k = len(STATIONS)
    fixed = STATIONS.index("fixed")
    d_read, d_write, load = np.zeros((1, k)), np.zeros((1, k)), np.zeros((1, k))
    d_read[0, DEV], d_read[0, fixed], d_write[0, fixed], load[0, DEV] = 200e-6, 1e-3, 1e-3, 400e-6
    servers, scv = np.ones((1, k)), np.ones((1, k))
    servers[0, fixed], scv[0, fixed] = np.inf, 0.0
    net = StationNetwork(d_read, d_write, servers, np.ones((1, k)), scv, np.array([0.6]), np.array([1]),
                  np.array([1]), load_write=load)  # fmt: skip
    sol = solve_closed(net, np.array([float(population)]), np.array([0.0]))
    cfg = config_from_network(net, population=population)
    assert cfg.background[DEV] == pytest.approx(400e-6)
    sim = simulate_config(cfg, requests=200_000, replications=2, seed=1, keep_records=False, workers=1)
    return sol, sim.summary.iloc[0]


def test_a_closed_loops_reads_wait_for_the_background_jobs_they_find():
    """32 clients: the device is the bottleneck, and a read waits for every job it finds there,
    background jobs at their own 0.4 ms: 13.0 ms simulated. Charging each job found the read's
    own 0.2 ms, as the closed solver did, gave 6.2 ms."""
    sol, sim = _reads_behind_background(32)
    assert sol.throughput[0] == pytest.approx(sim["throughput_ops_s"], rel=0.02)
    wait_sim = sim["read_latency_mean_ms"] * 1e-3 - 1.2e-3
    assert sol.w_read[0, DEV] == pytest.approx(wait_sim, rel=0.05)


@pytest.mark.xfail(
    strict=True,
    reason="known gap (docs/simulator.md): at light load a client's own background job sits ahead of "
    "its next read, which the arrival theorem cannot see (0.15 ms against 0.26 simulated at 2 clients)",
)
def test_a_light_closed_loops_reads_wait_behind_their_own_background_jobs():
    sol, sim = _reads_behind_background(2)
    wait_sim = sim["read_latency_mean_ms"] * 1e-3 - 1.2e-3
    assert sol.w_read[0, DEV] == pytest.approx(wait_sim, rel=0.15)
