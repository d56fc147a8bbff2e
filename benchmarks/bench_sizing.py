"""Speed of ``perfmodel.size`` (issue 7): one workload over every catalog platform and SMT mode.

Target: under 1 s. Baseline in the same run: the same search as one ``predict``
call per (platform, SMT mode, node count).
"""

from __future__ import annotations

import time

import perfmodel
from perfmodel.sizing import DEFAULT_PLATFORMS, size


def main(argv=None):
    w = perfmodel.Workload(
        operation="mixed",
        read_fraction=0.8,
        object_bytes=1024,
        dataset_bytes=500 * 2**30,
        clients=1,
        replication_factor=3,
        consistency="QUORUM",
    )
    size(w, target_ops_s=1e6, slo_p99_ms=20, system="scylla", interval=None)  # warm caches
    best = min(_timed(lambda: size(w, target_ops_s=1e6, slo_p99_ms=20, system="scylla")) for _ in range(3))
    candidates = sum(len(perfmodel.load_platform(p).smt_modes) for p in DEFAULT_PLATFORMS)
    print(
        f"perfmodel.size: {candidates} platform x SMT candidates x 128 node counts (+ bands): {best:.3f} s "
        f"target < 1 s: {'PASS' if best < 1 else 'FAIL'}"
    )
    open_w = w.__class__(**{**w.__dict__, "clients": None, "arrival_rate": 1e6})
    t0 = time.perf_counter()
    for n in range(4, 14):
        perfmodel.predict("x86-dl380-e5-2630v4", open_w, nodes=n, system="scylla", threads_per_core=2)
    per_call = (time.perf_counter() - t0) / 10
    loop = per_call * candidates * 128
    print(
        f"baseline: one predict call per (candidate, node count), extrapolated {loop:.1f} s "
        f"-> ratio {loop / best:.0f}x"
    )


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
