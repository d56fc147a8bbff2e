"""Sweeps, simulation replications and the CLI on a real Dask cluster equal the local run exactly;
a worker killed mid-run loses nothing and duplicates nothing."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cluster_tasks import logged_square, read_log

import perfmodel
from perfmodel.cli import main
from perfmodel.run.execution import map_tasks

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = perfmodel.Workload(
    read_fraction=0.8,
    object_bytes=1024,
    dataset_bytes=50e9,
    clients=np.array([20, 80]),
    replication_factor=3,
    consistency="QUORUM",
)


def test_map_tasks_on_the_cluster_in_task_order(dask_cluster, tmp_path):
    tasks = [(x, str(tmp_path / "log"), 0.0) for x in range(50)]
    out = map_tasks(logged_square, tasks, scheduler=dask_cluster.address, chunk_size=3, progress=False)
    assert out == [x * x for x in range(50)]
    pids = {pid for _, _, pid in read_log(tmp_path / "log")}
    workers = set().union(*(dask_cluster.worker_pids(w) for w in dask_cluster.workers))
    assert pids <= workers and len(pids) == 2  # ran on the cluster's two workers, not here


def test_sweep_predict_on_the_cluster_equals_the_local_run(dask_cluster):
    kwargs = dict(
        system="scylla", nodes=np.array([[3], [6]]), cores=np.arange(1, 11)[:, None, None], chunk_size=7
    )
    local = perfmodel.sweep("power8-s821lc-10c", WORKLOAD, workers=1, **kwargs)
    remote = perfmodel.sweep("power8-s821lc-10c", WORKLOAD, scheduler=dask_cluster.address, **kwargs)
    assert len(local) == 40
    pd.testing.assert_frame_equal(local, remote, check_exact=True)


def test_simulate_replications_on_the_cluster_equal_the_local_run(dask_cluster):
    kwargs = dict(system="scylla", nodes=3, requests=4000, replications=4, seed=5, progress=False)
    local = perfmodel.simulate("x86-dl380-e5-2630v4", WORKLOAD, workers=1, **kwargs)
    remote = perfmodel.simulate("x86-dl380-e5-2630v4", WORKLOAD, scheduler=dask_cluster.address, **kwargs)
    pd.testing.assert_frame_equal(local.summary, remote.summary, check_exact=True)
    pd.testing.assert_frame_equal(local.replication_metrics, remote.replication_metrics, check_exact=True)
    pd.testing.assert_frame_equal(local.records, remote.records, check_exact=True)


def test_the_same_command_runs_locally_and_on_the_cluster(dask_cluster, capsys):
    wl = str(ROOT / "data" / "workloads" / "scylla-read-heavy.yaml")
    for verb, extra in [("predict", []), ("simulate", ["--requests", "3000", "--replications", "2"])]:
        argv = [verb, wl, "--platform", "power8-s821lc-10c", *extra, "--format", "csv"]
        assert main(argv) == 0
        local = capsys.readouterr().out
        assert main([*argv, "--scheduler", dask_cluster.address]) == 0
        assert capsys.readouterr().out == local


def test_notebook_batch_on_the_cluster_equals_the_local_run(dask_cluster, tmp_path, tiny_notebook):
    """`perfmodel notebooks run --scheduler`: the same runs, results and summary as on this machine,
    a failing run recorded on the cluster as locally."""
    from perfmodel.run import batch

    path = tiny_notebook(tmp_path)
    summaries = {}
    for where, kwargs in (("local", {"workers": 1}), ("cluster", {"scheduler": dask_cluster.address})):
        out = tmp_path / where
        jobs = batch.plan_jobs([path], batch.expand({"x": [1, 2, 3]}, {"fail_on": 2}), out, html=False)
        records = batch.run_batch(jobs, out, progress=False, **kwargs)
        assert [r["status"] for r in records] == ["ok", "failed", "ok"]
        summary = pd.read_csv(out / batch.SUMMARY_CSV)
        summaries[where] = summary.drop(columns=[c for c in summary if c in ("duration_s", "output_dir")])
    pd.testing.assert_frame_equal(summaries["local"], summaries["cluster"], check_exact=True)
    assert list(summaries["cluster"]["double"].dropna()) == [2, 6]


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(fresh_cluster, tmp_path):
    log = tmp_path / "log"
    tasks = [(x, str(log), 0.2) for x in range(20)]  # 2 s on two workers, 4 s on one
    victim = fresh_cluster.workers[1]
    victim_pids = fresh_cluster.worker_pids(victim)
    killed: dict = {}

    def kill_when_busy():
        """Kill the victim once it has finished two tasks and is running a third."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            events = read_log(log)
            ended = {x for e, x, pid in events if e == "end" and pid in victim_pids}
            running = {x for e, x, pid in events if e == "start" and pid in victim_pids} - ended
            if len(ended) >= 2 and running:
                fresh_cluster.kill(victim)
                killed["running"] = running
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_when_busy)
    killer.start()
    try:
        out = map_tasks(logged_square, tasks, scheduler=fresh_cluster.address, chunk_size=1, progress=False)
    finally:
        killer.join(timeout=70)
    assert killed, "the victim never got busy"
    assert victim.poll() is not None
    assert out == [x * x for x in range(20)]  # every result, once, in order
    events = read_log(log)
    lost = killed["running"]
    for x in lost:  # the task that was running on the lost worker was run again elsewhere
        reruns = [pid for e, y, pid in events if e == "end" and y == x]
        assert reruns and not set(reruns) & victim_pids
    with __import__("distributed").Client(fresh_cluster.address, timeout="10s") as client:
        assert len(client.scheduler_info()["workers"]) == 1


def test_a_throwaway_local_dask_cluster_prints_where_it_runs(capsys, tmp_path):
    tasks = [(x, str(tmp_path / "log"), 0.0) for x in range(10)]
    out = map_tasks(logged_square, tasks, scheduler="local", workers=2, progress=True, desc="squares")
    assert out == [x * x for x in range(10)]
    err = capsys.readouterr().err
    assert "Dask cluster tcp://127.0.0.1:" in err and "2 workers, dashboard" in err
