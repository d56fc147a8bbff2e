"""Speed of the execution layer (issue 8), as ratios in one run.

Run from the repository root::

    python -m benchmarks bench_execution      # ~1 min on 2 cores

Figures:
1. A sweep of 400 simulator runs (80 configurations x 5 replications, small
   ScyllaDB runs on the SimPy engine): wall time with 2 local workers over the
   wall time with 1 (in this process, the baseline). Target <= 0.6. The
   2-worker time includes the pool's start, with the session's fork server
   started from cold.
2. Scheduling overhead per task: 2,000 no-op tasks, one per scheduled unit,
   in this process, on the local pool (2 workers) and on a Dask LocalCluster
   (2 worker processes, scheduler in this process); target < 5 ms.
3. Start-up: the first local pool of a session (fork server importing
   perfmodel), a later one, and a Dask LocalCluster (start and close).
4. A predict sweep of 100,000 configurations in 10 chunks on 2 workers, over
   one vectorised predict call.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

import perfmodel
from perfmodel.run.execution import map_tasks

NOOP_TASKS = 2_000


def noop(x):
    return x


def _timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _sim_sweep(workers: int):
    w = perfmodel.Workload(
        read_fraction=0.8,
        object_bytes=1024,
        dataset_bytes=50 * 2**30,
        clients=np.array([10, 20, 40, 80]),
        replication_factor=3,
        consistency="QUORUM",
    )
    cores = np.arange(1, 11)[:, None, None]
    nodes = np.array([3, 6])[:, None]
    return perfmodel.sweep(
        "power8-s821lc-10c",
        w,
        system="scylla",
        nodes=nodes,
        cores=cores,
        method="simulate",
        requests=3_000,
        replications=5,
        seed=1,
        workers=workers,
        progress=False,
    )


def simulate_sweep() -> None:
    print(f"load average before (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())} on "
          f"{os.cpu_count()} cores (other work on the machine makes the speed-up smaller)")  # fmt: skip
    cpu0 = time.process_time()
    serial_s, serial = _timed(lambda: _sim_sweep(1))
    share = (time.process_time() - cpu0) / serial_s
    runs = int(serial["replications"].sum())
    cold_s, cold = _timed(lambda: _sim_sweep(2))
    warm_s, _ = _timed(lambda: _sim_sweep(2))
    same = cold.equals(serial)
    print(
        f"baseline: sweep of {runs} simulator runs, 1 worker (this process): {serial_s:.2f} s "
        f"({share:.0%} of a core was ours)"
    )
    print(
        f"same sweep, 2 local workers, pool started cold: {cold_s:.2f} s -> ratio {cold_s / serial_s:.2f} "
        f"(target <= 0.6: {'PASS' if cold_s <= 0.6 * serial_s else 'FAIL'}); identical results: {same}"
    )
    print(f"same sweep, 2 local workers, fork server already up: {warm_s:.2f} s -> {warm_s / serial_s:.2f}")


def overheads() -> None:
    from distributed import Client, LocalCluster

    tasks = list(range(NOOP_TASKS))
    serial_s, _ = _timed(lambda: map_tasks(noop, tasks, workers=1, progress=False))
    pool_s, out = _timed(lambda: map_tasks(noop, tasks, workers=2, chunk_size=1, progress=False))
    assert out == tasks
    start_s, cluster = _timed(
        lambda: LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    )
    client = Client(cluster)
    map_tasks(noop, [0, 1], scheduler=client, chunk_size=1, progress=False)  # warm the workers
    dask_s, out = _timed(lambda: map_tasks(noop, tasks, scheduler=client, chunk_size=1, progress=False))
    assert out == tasks
    grouped_s, _ = _timed(lambda: map_tasks(noop, tasks, scheduler=client, progress=False))
    close_s, _ = _timed(lambda: (client.close(), cluster.close()))
    later_s, _ = _timed(lambda: map_tasks(noop, [0, 1], workers=2, progress=False))
    per = {
        name: 1e3 * t / NOOP_TASKS for name, t in [("serial", serial_s), ("pool", pool_s), ("dask", dask_s)]
    }
    print(f"overhead per task, {NOOP_TASKS} no-op tasks one per unit (ms):")
    print(f"  in this process {per['serial']:.4f}")
    print(f"  local pool, 2 workers (pool start included) {per['pool']:.3f}")
    print(
        f"  Dask LocalCluster, 2 workers {per['dask']:.3f} "
        f"(target < 5 ms: {'PASS' if per['dask'] < 5 else 'FAIL'}); "
        f"{per['dask'] / per['pool']:.0f}x the local pool's"
    )
    print(f"  Dask, default grouping (about 4 units per worker): {1e3 * grouped_s / NOOP_TASKS:.3f}")
    print(f"start-up: a later local pool {later_s:.3f} s; Dask LocalCluster start {start_s:.2f} s, "
          f"close {close_s:.2f} s")  # fmt: skip


def burn(seconds: float) -> tuple[float, float]:
    """Busy-loop for ``seconds`` of CPU time [s]; returns (CPU time, wall time) [s]."""
    t0, c0 = time.perf_counter(), time.process_time()
    while time.process_time() - c0 < seconds:
        pass
    return time.process_time() - c0, time.perf_counter() - t0


def cpu_share() -> None:
    """How much of a core each of 2 workers gets right now (1.0 on an idle 2-core machine)."""
    out = map_tasks(burn, [0.25] * 8, workers=2, chunk_size=1, progress=False)
    share = sum(c for c, _ in out) / sum(w for _, w in out)
    print(f"CPU share of each of 2 busy workers now: {share:.2f} of a core (1.00 when the machine is idle; "
          f"the speed-up above is bounded by 2 x this)")  # fmt: skip


def first_pool() -> None:
    """The first local pool of a fresh session: the fork server imports perfmodel once."""
    code = (
        "import time, perfmodel; from perfmodel.run.execution import map_tasks; "
        "from benchmarks.bench_execution import noop; t = time.perf_counter(); "
        "map_tasks(noop, [0, 1], workers=2, progress=False); "
        "print(time.perf_counter() - t)"
    )
    cold_s = float(
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    )
    print(f"start-up: the first local pool of a session (fork server importing perfmodel) {cold_s:.2f} s")


def predict_sweep() -> None:
    g = perfmodel.grid(
        cores=np.arange(1, 11),
        threads_per_core=[1, 2, 4, 8],
        cache_bytes=np.linspace(1, 64, 50) * 2**30,
        nodes=np.arange(3, 53),
    )
    nodes = g.pop("nodes")
    w = perfmodel.Workload(
        read_fraction=0.8,
        object_bytes=1024,
        dataset_bytes=500 * 2**30,
        clients=800,
        replication_factor=3,
        consistency="QUORUM",
    )
    n = len(nodes)
    run = dict(system="scylla", nodes=nodes, **g)
    one_s, one = _timed(lambda: perfmodel.predict("power8-s821lc-10c", w, **run))
    sweep_s, table = _timed(lambda: perfmodel.sweep("power8-s821lc-10c", w, workers=2, progress=False, **run))
    numbers = one.select_dtypes("number").columns
    a, b = one[numbers].to_numpy(float), table[numbers].to_numpy(float)
    finite = np.isfinite(a) & (a != 0)
    worst = float(np.max(np.abs(a - b)[finite] / np.abs(a[finite])))
    print(f"baseline: one predict call, {n:,} configurations: {one_s:.2f} s")
    print(
        f"sweep, {n // 10_000} chunks on 2 local workers: {sweep_s:.2f} s -> ratio {sweep_s / one_s:.2f}; "
        f"largest relative difference to the single call {worst:.1e} (the solver stops per batch)"
    )


def main(argv=None) -> None:
    simulate_sweep()  # first: its 2-worker run starts the session's fork server
    cpu_share()
    overheads()
    predict_sweep()
    first_pool()


if __name__ == "__main__":
    main()
