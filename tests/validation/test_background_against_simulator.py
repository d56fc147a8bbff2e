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
from perfmodel import chain
from perfmodel._data import data_dir
from perfmodel.sim.config import config_from_model
from perfmodel.sim.run import simulate_config
from perfmodel.solve import STATIONS
from perfmodel.workload import load_workload_file

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
