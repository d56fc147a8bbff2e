"""Cache hit ratio: closed forms, Che against an exact LRU simulation, the Zipf tail treatment."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, optimize

from perfmodel.mechanisms.cache import (
    che_characteristic_time,
    hit_ratio,
    lru_hit_ratio_che,
    uniform_hit_ratio,
    zipf_hit_ratio,
)


def zipf_popularity(n: int, s: float) -> np.ndarray:
    p = np.arange(1, n + 1, dtype=np.float64) ** -s
    return p / p.sum()


def simulate_lru(popularity: np.ndarray, capacity: int, requests: int, warmup: int, seed: int):
    """Exact LRU under the independent reference model; returns per-request hit flags after warm-up."""
    rng = np.random.default_rng(seed)
    keys = rng.choice(popularity.size, size=requests + warmup, p=popularity)
    cache: OrderedDict[int, None] = OrderedDict()
    hits = np.zeros(keys.size, dtype=bool)
    for t, key in enumerate(keys.tolist()):
        if key in cache:
            cache.move_to_end(key)
            hits[t] = True
        else:
            cache[key] = None
            if len(cache) > capacity:
                cache.popitem(last=False)
    return hits[warmup:]


# ----------------------------------------------------------------------------- uniform


def test_uniform_is_cache_over_dataset():
    assert_array_equal(uniform_hit_ratio([0, 25, 50, 100, 150], 100), [0.0, 0.25, 0.5, 1.0, 1.0])
    assert uniform_hit_ratio(3, 7) == pytest.approx(3 / 7, rel=1e-15)


def test_uniform_empty_dataset_hits():
    assert uniform_hit_ratio(0, 0) == 1.0


def test_uniform_broadcasts():
    h = uniform_hit_ratio(np.array([10.0, 20.0])[:, None], np.array([40.0, 80.0, 160.0]))
    assert h.shape == (2, 3)
    assert_allclose(h, [[0.25, 0.125, 0.0625], [0.5, 0.25, 0.125]], rtol=1e-15)


def test_che_uniform_popularity_is_exact():
    # Che with equal p_i = 1/N: N (1 - exp(-T/N)) = C, so T = -N ln(1 - C/N) and h = C/N.
    n = 500
    c = np.array([1.0, 50.0, 250.0, 499.0])
    p = np.full(n, 1.0 / n)
    assert_allclose(lru_hit_ratio_che(c, p), c / n, rtol=1e-12)
    assert_allclose(che_characteristic_time(c, p), -n * np.log1p(-c / n), rtol=1e-10)


# ----------------------------------------------------------------------------- Che


def test_che_characteristic_time_solves_its_equation():
    p = zipf_popularity(2000, 0.9)
    c = np.array([1.0, 17.5, 300.0, 1999.0])
    t = che_characteristic_time(c, p)
    residual = (-np.expm1(-np.outer(t, p))).sum(axis=1) - c
    assert_allclose(residual, 0.0, atol=1e-9)
    h = lru_hit_ratio_che(c, p)
    assert_allclose(h, (p * -np.expm1(-np.outer(t, p))).sum(axis=1), rtol=1e-13)


def test_che_limits_and_unrequested_items():
    p = np.array([0.5, 0.3, 0.2, 0.0, 0.0])  # two items are never requested
    assert lru_hit_ratio_che(0, p) == 0.0
    assert che_characteristic_time(0, p) == 0.0
    assert lru_hit_ratio_che(3, p) == 1.0  # all requested items fit
    assert np.isinf(che_characteristic_time(3, p))
    assert lru_hit_ratio_che(2.5, p) < 1.0


def test_che_keeps_shape_of_cache_items():
    p = zipf_popularity(100, 1.0)
    c = np.array([[1.0, 5.0, 5.0], [10.0, 0.0, 200.0]])
    h = lru_hit_ratio_che(c, p)
    assert h.shape == (2, 3)
    assert h[0, 1] == h[0, 2]
    assert h[1, 1] == 0.0 and h[1, 2] == 1.0


@pytest.mark.parametrize("capacity", [10, 100, 500])
def test_che_matches_exact_lru_simulation(capacity):
    # N = 1000 items, Zipf s = 0.8, 200k measured requests after 20k warm-up.
    # LRU hit flags are serially correlated, so the standard error comes from 20
    # batch means (never smaller than the binomial sqrt(h(1-h)/n), ~0.001 here).
    # Che's approximation itself is not exact: Fricker, Robert & Roberts (2012)
    # find it within ~1 % absolute for Zipf popularity with N in the hundreds or more
    # (our own runs: < 0.1 %). Tolerance = 4 standard errors + 0.01 approximation error.
    # A wrong model would miss by far more: uniform gives C/N = 0.01 / 0.1 / 0.5
    # against simulated 0.08 / 0.38 / 0.77.
    p = zipf_popularity(1000, 0.8)
    hits = simulate_lru(p, capacity, requests=200_000, warmup=20_000, seed=2024 + capacity)
    measured = hits.mean()
    batches = hits.reshape(20, -1).mean(axis=1)
    se = max(batches.std(ddof=1) / np.sqrt(batches.size), np.sqrt(measured * (1 - measured) / hits.size))
    che = lru_hit_ratio_che(capacity, p)
    assert abs(che - measured) <= 4 * se + 0.01, (capacity, che, measured, se)
    assert abs(zipf_hit_ratio(capacity, 1000, 0.8) - che) < 1e-12


# ----------------------------------------------------------------------------- Zipf


@pytest.mark.parametrize("n", [100, 300, 10_000, 1_000_000])
def test_zipf_matches_exact_che_sum(n):
    # Ranks above 256 are integrated (Euler-Maclaurin + Gauss-Legendre); measured
    # difference from the exact sum is ~1e-13 at N = 1e6, the docstring promises 1e-9.
    c = np.array([1.0, 20.0, 0.01 * n, 0.3 * n, 0.95 * n])
    for s in (0.5, 0.99, 1.0, 1.4, 3.0):
        exact = lru_hit_ratio_che(c, zipf_popularity(n, s))
        assert_allclose(zipf_hit_ratio(c, n, s), exact, atol=1e-9, rtol=0)


def test_zipf_s_zero_is_uniform_exactly():
    c = np.array([0.0, 1.0, 33.3, 99.0, 1e6, 3e9])
    for n in (7.0, 100.0, 1234.5, 1e10):
        assert_array_equal(zipf_hit_ratio(c, n, 0.0), uniform_hit_ratio(c, n))


def test_zipf_limits():
    assert zipf_hit_ratio(0, 1e10, 0.99) == 0.0
    assert zipf_hit_ratio(1e10, 1e10, 0.99) == 1.0
    assert zipf_hit_ratio(2e10, 1e10, 1.5) == 1.0
    assert zipf_hit_ratio(5, 0, 0.8) == 1.0


def test_zipf_non_integer_items_is_continuous():
    # N = floor(N) items plus a last item of weight N - floor(N): continuous in N,
    # in the exactly summed head (N < 257) and across the switch to the integrated tail.
    for n0 in (50, 257):
        n = np.array([n0 - 1e-9, n0, n0 + 1e-9])
        h = zipf_hit_ratio(20.0, n, 0.8)
        assert_allclose(h, h[1], atol=1e-8)
    assert zipf_hit_ratio(20.0, 50.0, 0.8) == pytest.approx(
        lru_hit_ratio_che(20.0, zipf_popularity(50, 0.8)), abs=1e-14
    )
    # a fractional item lies strictly between the two integer populations
    assert zipf_hit_ratio(20.0, 51.0, 0.8) < zipf_hit_ratio(20.0, 50.5, 0.8) < zipf_hit_ratio(20.0, 50.0, 0.8)


def _continuum_hit_ratio(fraction: float, s: float) -> float:
    """N -> inf limit for s < 1: ranks i = N v, p(v) = (1 - s) v^-s on (0, 1).

    Occupancy / N = int_0^1 (1 - exp(-tau v^-s)) dv = C / N; hit ratio =
    int_0^1 (1 - s) v^-s (1 - exp(-tau v^-s)) dv, written with w = v^(1 - s)
    (dw = (1 - s) v^-s dv) as int_0^1 (1 - exp(-tau w^(-s / (1 - s)))) dw, which has
    no singularity for quad to trip on.
    """

    def occupancy(tau):
        return integrate.quad(lambda v: -np.expm1(-tau * v**-s), 0, 1, limit=200)[0] - fraction

    tau = optimize.brentq(occupancy, 1e-12, 1e6, xtol=1e-14, rtol=1e-14)
    return integrate.quad(lambda w: -np.expm1(-tau * w ** (-s / (1 - s))), 0, 1, limit=200)[0]


@pytest.mark.parametrize("s", [0.3, 0.6])
def test_zipf_ten_billion_items_matches_continuum_limit(s):
    # At N = 1e10 the discrete sum differs from its continuum limit by O(N^(s-1))
    # (measured: 9e-8 at s = 0.3, 8e-5 at s = 0.6): an independent check of the
    # large-N path, sharing no code with the Che sums. Tolerance 3 N^(s-1).
    n = 1e10
    for fraction in (0.001, 0.1, 0.5):
        expected = _continuum_hit_ratio(fraction, s)
        assert zipf_hit_ratio(fraction * n, n, s) == pytest.approx(expected, abs=3 * n ** (s - 1))


def test_zipf_broadcasts_over_all_arguments():
    c = np.array([1e3, 1e6])[:, None, None]
    n = np.array([1e7, 1e9])[None, :, None]
    s = np.array([0.7, 1.0, 1.3])
    h = zipf_hit_ratio(c, n, s)
    assert h.shape == (2, 2, 3)
    assert h[0, 1, 2] == zipf_hit_ratio(1e3, 1e9, 1.3)


def test_a_zipf_grid_with_few_distinct_triples_equals_each_one_alone():
    """The grid is solved once per distinct (cache, items, s); its speed is measured in
    benchmarks/bench_cache.py, not here (correctness tests stay untimed)."""
    rng = np.random.default_rng(7)
    cache = np.logspace(2, 9, 10)[rng.integers(0, 10, 100_000)]
    items = np.logspace(6, 10, 5)[rng.integers(0, 5, 100_000)]
    s = np.array([0.6, 0.8, 0.99, 1.1, 1.3, 1.5])[rng.integers(0, 6, 100_000)]
    h = zipf_hit_ratio(cache, items, s)
    assert h.shape == (100_000,)
    i = 12345
    assert h[i] == zipf_hit_ratio(cache[i], items[i], s[i])


# ----------------------------------------------------------------------------- bytes


def test_hit_ratio_converts_bytes_to_items():
    gib = 2.0**30
    cache, dataset, obj = 4 * gib, 400 * gib, 4096.0
    assert hit_ratio(cache, dataset, obj) == pytest.approx(0.01, rel=1e-14)
    assert hit_ratio(cache, dataset, obj, distribution="zipf", zipf_s=1.1) == zipf_hit_ratio(
        cache / obj, dataset / obj, 1.1
    )
    assert hit_ratio(cache, dataset, obj, distribution="ZIPF", zipf_s=0.0) == pytest.approx(0.01, rel=1e-14)


def test_hit_ratio_limits_and_broadcasting():
    cache = np.array([0.0, 1e9, 3e9, 5e9])[:, None]
    dataset = np.array([3e9, 1e12])
    for dist in ("uniform", "zipf"):
        h = hit_ratio(cache, dataset, 1000.0, distribution=dist)
        assert h.shape == (4, 2)
        assert_array_equal(h[0], 0.0)
        assert h[2, 0] == 1.0 and h[3, 0] == 1.0
        assert 0.0 < h[1, 1] < h[2, 1] < h[3, 1] < 1.0
    # Zipf beats uniform on the same sizes (Chebyshev's sum inequality)
    assert hit_ratio(1e9, 1e12, 1000.0, distribution="zipf") > hit_ratio(1e9, 1e12, 1000.0)


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: uniform_hit_ratio(-1, 10), "cache_items"),
        (lambda: uniform_hit_ratio(1, np.nan), "n_items"),
        (lambda: zipf_hit_ratio(1, 10, -0.5), "s"),
        (lambda: zipf_hit_ratio([1, 2], [10, 20, 30], 0.9), "cache_items, n_items, s"),
        (lambda: lru_hit_ratio_che(1, [0.5, 0.4]), "popularity"),
        (lambda: lru_hit_ratio_che(1, [[0.5, 0.5]]), "popularity"),
        (lambda: lru_hit_ratio_che(1, [1.5, -0.5]), "popularity"),
        (lambda: lru_hit_ratio_che(np.nan, [1.0]), "cache_items"),
        (lambda: che_characteristic_time(1, []), "popularity"),
        (lambda: hit_ratio(1e9, 1e10, 0.0), "object_bytes"),
        (lambda: hit_ratio(1e9, -1e10, 10.0), "dataset_bytes"),
        (lambda: hit_ratio(np.inf, 1e10, 10.0), "cache_bytes"),
        (lambda: hit_ratio(1e9, 1e10, 10.0, distribution="pareto"), "distribution"),
        (lambda: hit_ratio(1e9, 1e10, 10.0, distribution="zipf", zipf_s=np.nan), "zipf_s"),
        (lambda: hit_ratio([1e9, 2e9], [1e10, 2e10, 3e10], 10.0), "cache_bytes, dataset_bytes"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        call()


def test_unknown_distribution_lists_valid_ones():
    with pytest.raises(ValueError, match="uniform, zipf"):
        hit_ratio(1, 10, 1, distribution="lfu")
