"""Speed of ``perfmodel.size`` and of one planner update (issue 36, point 4).

Targets, on an idle 2-core machine:

* ``size`` with ``max_nodes`` 100,000 (one candidate platform, both SMT modes, no bands) under 2 s;
* the README's sizing (the five default candidates, 15 platform x SMT rows, with 90% bands) under 2 s;
* one planner update at notebook 06's defaults (bands included) under 1 s of CPU;
* 48 sizings of notebook 07's candidates (``size_uncertain``'s samples) searched together by
  ``size_many`` at least 3x faster than 48 ``size`` calls (the same answers, checked here).

Each is reported with its ratio to a fixed numpy workload measured in the same run
(:func:`benchmarks.bench_predict.numpy_baseline`, 100,000 elements), so runs on loaded or other
machines compare by the ratio; the old linear scan (every node count predicted) is timed on the
same request as a second baseline.
"""

from __future__ import annotations

import time

import numpy as np

import perfmodel
from benchmarks.bench_predict import numpy_baseline
from perfmodel.plan.sizing import size

PLANNER_DEFAULTS = dict(
    platforms=["power8-s821lc-10c", "x86-dl380-e5-2630v4", "kunpeng-r722"], system="scylla",
    target_ops_s=1e6, read_fraction=0.8, object_bytes=1024, key_distribution="zipf", zipf_s=0.9,
    dataset_gib=500.0, replication_factor=3, consistency="QUORUM", slo_p99_ms=20.0, failure_tolerance=1,
    max_utilization=0.7,
)  # fmt: skip


def _best(fn, clock=time.perf_counter, repeats: int = 3) -> float:
    best = np.inf
    for _ in range(repeats):
        t0 = clock()
        fn()
        best = min(best, clock() - t0)
    return best


def main(argv=None):
    from perfmodel.inputs.workload import load_workload_file
    from perfmodel.plan import planner

    base = numpy_baseline(100_000)
    spec = load_workload_file(str(perfmodel.__path__[0] + "/../data/workloads/scylla-read-heavy.yaml"))
    w = spec["workload"]
    big = dict(target_ops_s=1e6, slo_p99_ms=20, system="scylla", platforms=["x86-dl380-e5-2630v4"],
               interval=None, max_nodes=100_000)  # fmt: skip
    size(w, **{**big, "max_nodes": 128})  # warm caches
    figures = []
    t = _best(lambda: size(w, **big))
    figures.append(("size, max_nodes 100,000, 2 candidates", t, 2.0))
    t = _best(lambda: size(w, target_ops_s=5e5, slo_p99_ms=10, system="scylla"), repeats=2)
    figures.append(("size, the README's 5 platforms (15 candidates) with bands", t, 2.0))
    planner.run_plan(**PLANNER_DEFAULTS)
    t = _best(lambda: planner.run_plan(**{**PLANNER_DEFAULTS, "target_ops_s": 1.2e6}),
              clock=time.process_time, repeats=2)  # fmt: skip
    figures.append(("one planner update at its defaults [CPU s]", t, 1.0))
    print(f"numpy baseline (100,000 elements, fixed work): {base:.3f} s")
    for name, seconds, target in figures:
        verdict = "PASS" if seconds < target else "FAIL"
        print(f"{name}: {seconds:.3f} s, {seconds / base:.1f}x the baseline; target < {target:g} s: "
              f"{verdict}")  # fmt: skip
    many_vs_loop()
    open_w = w.with_changes(clients=None, arrival_rate=1e6)
    counts = np.arange(3, 131, dtype=float)
    t0 = time.perf_counter()
    perfmodel.predict("x86-dl380-e5-2630v4", open_w, nodes=counts, system="scylla", threads_per_core=2)
    scan = (time.perf_counter() - t0) * 2  # both SMT modes, 128 counts each: the linear scan
    search = _best(lambda: size(w, **{**big, "max_nodes": 128}))
    print(f"linear scan of 128 counts x 2 candidates {scan:.3f} s; the search {search:.3f} s "
          f"-> {scan / search:.1f}x")  # fmt: skip


def many_vs_loop(count: int = 48) -> None:
    """``count`` sizings one ``size`` call each against one ``size_many`` call, same answers."""
    from perfmodel.plan.sizing import size_many

    rng = np.random.default_rng(0)
    w = perfmodel.Workload(read_fraction=0.8, object_bytes=1024, replication_factor=3, consistency="QUORUM",
                           arrival_rate=1.0)  # fmt: skip
    platforms = ["x86-aws-i3-4xlarge", "aws-i3-8xlarge", "x86-dl380-e5-2630v4", "power8-s822lc-16c-prod",
                 "kunpeng-r722"]  # fmt: skip
    requests = [{"target_ops_s": float(t), "slo_p99_ms": float(s), "dataset_gib": float(d)}
                for t, s, d in zip(10 ** rng.uniform(5.5, 6.5, count), 10 ** rng.uniform(0, 1.5, count),
                                   rng.uniform(300, 600, count), strict=True)]  # fmt: skip
    common = dict(system="scylla", platforms=platforms, interval=None)
    t0 = time.perf_counter()
    loop = [size(w, **r, **common) for r in requests]
    t_loop = time.perf_counter() - t0
    t0 = time.perf_counter()
    many = size_many(w, requests, **common)
    t_many = time.perf_counter() - t0
    same = all(a.nodes.tolist() == b.nodes.tolist() for a, b in zip(loop, many, strict=True))
    ratio = t_loop / t_many
    print(f"{count} sizings (5 platforms, 15 candidates): size one by one {t_loop:.2f} s, size_many "
          f"{t_many:.2f} s -> {ratio:.1f}x; same counts: {same}; target >= 3x: "
          f"{'PASS' if ratio >= 3 and same else 'FAIL'}")  # fmt: skip


if __name__ == "__main__":
    main()
