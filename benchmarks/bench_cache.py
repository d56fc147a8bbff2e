"""Speed of the Zipf cache hit ratio over a grid of 100,000 configurations with few distinct
(cache, items, exponent) triples, against the fixed numpy baseline of bench_predict in the same run.
Target: under 0.5 s on an idle 2-core machine (it solves each distinct triple once)."""

from __future__ import annotations

import time

import numpy as np

from benchmarks.bench_predict import numpy_baseline
from perfmodel.mechanisms.cache import zipf_hit_ratio


def main(argv=None):
    rng = np.random.default_rng(7)
    n = 100_000
    cache = np.logspace(2, 9, 10)[rng.integers(0, 10, n)]
    items = np.logspace(6, 10, 5)[rng.integers(0, 5, n)]
    s = np.array([0.6, 0.8, 0.99, 1.1, 1.3, 1.5])[rng.integers(0, 6, n)]
    zipf_hit_ratio(cache[:10], items[:10], s[:10])  # warm caches (imports, leggauss)
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        zipf_hit_ratio(cache, items, s)
        best = min(best, time.perf_counter() - start)
    base = numpy_baseline(n)
    print(
        f"zipf_hit_ratio over {n:,} configurations (300 distinct): {best:.3f} s, {best / base:.2f} x the "
        f"numpy baseline  target < 0.5 s: {'PASS' if best < 0.5 else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
