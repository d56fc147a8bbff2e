"""Speed of the vectorised ``perfmodel.predict`` (issues 4 and 14).

Target: a grid of 100,000 node configurations (platform x SMT x cores x cache
x RF x clients) in under 1 s on an idle 2-core machine and under 1 GiB of
memory. Two baselines are measured in the same run: a *fixed numpy workload*
(the same 100,000-element vector operations a prediction is made of --
incomplete gamma functions, logs and exponentials, reductions -- always the
same amount of work), so runs on different or loaded machines compare by the
ratio predict / baseline; and the same configurations evaluated one
``predict`` call at a time (a Python loop over a sample, extrapolated).
"""

from __future__ import annotations

import resource
import time

import numpy as np
from scipy import special

from perfmodel.inputs.workload import Workload
from perfmodel.model.predict import grid, predict

PLATFORMS = ["power8-s821lc-10c", "x86-dl380-e5-2630v4"]


def build_grid():
    g = grid(
        platform_index=np.arange(len(PLATFORMS)),
        threads_per_core=[1, 2],
        cores=[2, 4, 6, 8, 10],
        cache_bytes=np.linspace(1e9, 100e9, 50),
        replication_factor=[1, 2, 3],
        clients=np.arange(1, 1001, 30)[:34],
    )
    return g


def run_grid(g):
    plats = np.array(PLATFORMS, dtype=object)[g["platform_index"]]
    w = Workload(
        read_fraction=0.8,
        object_bytes=310,
        dataset_bytes=200e9,
        clients=g["clients"],
        threads_per_client=10,
        replication_factor=g["replication_factor"],
        consistency="QUORUM",
    )
    return predict(
        plats,
        w,
        nodes=3,
        system="scylla",
        threads_per_core=g["threads_per_core"],
        cores=g["cores"],
        cache_bytes=g["cache_bytes"],
    )


def numpy_baseline(size: int, rounds: int = 40) -> float:
    """Seconds for a fixed amount of vector work on ``size`` elements (best of 3)."""
    rng = np.random.default_rng(0)
    x, k = rng.uniform(0.1, 10.0, size), rng.uniform(0.2, 20.0, size)
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        acc = np.zeros(size)
        for _ in range(rounds):
            acc += special.gammainc(k, x) + np.exp((k - 1.0) * np.log(x) - x)
            acc = np.where(acc > 1e6, 0.0, acc)
        float(acc.sum())
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None):
    g = build_grid()
    size = len(g["clients"])
    run_grid({k: v[:100] for k, v in g.items()})  # warm caches (catalog, numba, tables)
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        frame = run_grid(g)
        best = min(best, time.perf_counter() - t0)
    rss_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    base = numpy_baseline(size)
    print(
        f"perfmodel.predict over {size:,} configurations: {best:.3f} s "
        f"({size / best / 1e3:,.0f} k configs/s)  target < 1 s: {'PASS' if best < 1 else 'FAIL'}"
    )
    print(
        f"fixed numpy baseline (this machine, this run): {base:.3f} s; predict = {best / base:.2f} x baseline"
        f"  target <= 5x (issue 38): {'PASS' if best / base <= 5 else 'FAIL'}"
    )
    print(f"peak resident memory {rss_gib:.2f} GiB  target < 1 GiB: {'PASS' if rss_gib < 1 else 'FAIL'}")
    sample = {k: v[:200] for k, v in g.items()}
    t0 = time.perf_counter()
    for i in range(200):
        run_grid({k: v[i : i + 1] for k, v in sample.items()})
    loop = (time.perf_counter() - t0) / 200 * size
    print(
        f"baseline: one predict call per configuration (extrapolated) {loop:.1f} s "
        f"-> ratio {loop / best:.0f}x"
    )
    assert len(frame) == size
    stream_million(base)


#: the streamed grid: build_grid's with 490 cache sizes instead of 50 (999,600 configurations)
MILLION_CACHES = 490

_STREAM = """
import resource, sys, time
import numpy as np
from benchmarks.bench_predict import PLATFORMS, MILLION_CACHES
from perfmodel.inputs.workload import Workload
from perfmodel.model.predict import grid
from perfmodel.plan.sweeps import iter_sweep
g = grid(platform_index=np.arange(len(PLATFORMS)), threads_per_core=[1, 2], cores=[2, 4, 6, 8, 10],
         cache_bytes=np.linspace(1e9, 100e9, MILLION_CACHES), replication_factor=[1, 2, 3],
         clients=np.arange(1, 1001, 30)[:34])
w = Workload(read_fraction=0.8, object_bytes=310, dataset_bytes=200e9, clients=g.pop("clients"),
             threads_per_client=10, replication_factor=g.pop("replication_factor"), consistency="QUORUM")
plats = np.array(PLATFORMS, dtype=object)[g.pop("platform_index")]
t0, rows, best = time.perf_counter(), 0, 0.0
for chunk in iter_sweep(plats, w, system="scylla", nodes=3, **g):
    rows += len(chunk)
    best = max(best, float(np.nanmax(chunk["throughput_ops_s"])))
print(rows, time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20)
"""


def stream_million(base: float) -> None:
    """1,000,000 configurations streamed in chunks (:func:`perfmodel.plan.sweeps.iter_sweep`) in a
    fresh process: its peak memory and time per configuration against the 100k baseline."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", _STREAM], cwd=root, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    rows, seconds, rss_gib = (float(v) for v in out.stdout.split())
    ratio = seconds / (rows / 1e5) / base
    print(
        f"streamed {rows:,.0f} configurations in chunks: {seconds:.1f} s ({ratio:.2f} x baseline per 100k), "
        f"peak resident memory {rss_gib:.2f} GiB  target < 2 GiB: {'PASS' if rss_gib < 2 else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
