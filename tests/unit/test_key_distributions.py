"""Key distributions and the cache (perfmodel.inputs.keys, perfmodel.mechanisms.cache): the hot-set
hit ratios against Che's per-key sums and against the benchmark tools' own generators, and the
distribution flowing from a workload or a recorded figure into the prediction."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel as pm
from perfmodel.evidence.figure_plan import figure_config
from perfmodel.inputs.keys import HOT_DEFAULTS, KEY_DISTRIBUTIONS
from perfmodel.mechanisms import cache


def test_one_class_is_the_uniform_hit_ratio():
    c = np.array([0.0, 0.1, 0.5, 0.999, 1.0, 2.0])
    assert np.allclose(cache.piecewise_hit_ratio(c, [1.0], [1.0]), np.minimum(c, 1.0), atol=1e-12)


def test_hotspot_classes_equal_che_summed_key_by_key():
    """Two classes of equal popularity are Che's per-key sum grouped: the same number to 1e-9."""
    n, hot_d, hot_o = 10_000, 0.2, 0.8
    per_key = np.r_[np.full(2_000, hot_o / 2_000), np.full(8_000, (1 - hot_o) / 8_000)]
    shares = cache.key_classes("hotspot", hot_d, hot_o)
    for c_items in (10, 500, 1_999, 2_500, 7_000, 9_990):
        explicit = cache.lru_hit_ratio_che(c_items, per_key)
        assert math.isclose(cache.piecewise_hit_ratio(c_items / n, *shares)[0], explicit, abs_tol=1e-9)


def _sysbench_special(rng, size: int, n: int, pct: float = 1.0, res: float = 75.0, iters: int = 12):
    """Keys in [1, n] drawn as sysbench 1.0's sb_rand_special draws them (src/sb_rand.c), written
    out here independently of perfmodel's class model."""
    t = n - 1
    rnd = rng.random(size)
    bell = rnd * t * 100.0 / (100.0 - res) < t  # (100 - res)% of draws: the mean of `iters` uniforms
    out = np.empty(size)
    out[bell] = 1 + rng.random((int(bell.sum()), iters)).sum(axis=1) * t / iters
    # the rest: the same uniform number mapped onto the pct% slice moved to the range's centre
    out[~bell] = 1 + np.floor(rnd[~bell] * (t * pct / 100 + 1) + t / 2 - t * pct / 200)
    return out.astype(np.int64)


def test_special_matches_sysbench_generator_under_che():
    """The class model of sysbench's default distribution against the popularity of 2e7 keys drawn
    by sysbench's own algorithm, both under Che: within 0.01 at every cache size."""
    rng = np.random.default_rng(7)
    n = 40_000  # enough keys that the hot slice (0.75% of them) is not a handful
    counts = np.zeros(n + 1)
    for _ in range(5):
        counts += np.bincount(_sysbench_special(rng, 4_000_000, n), minlength=n + 1)
    popularity = counts[1:] / counts[1:].sum()
    shares = cache.key_classes("special", *HOT_DEFAULTS["special"])
    for frac in (0.004, 0.01, 0.05, 0.2, 0.45):
        drawn = cache.lru_hit_ratio_che(frac * n, popularity)
        assert abs(cache.piecewise_hit_ratio(frac, *shares)[0] - drawn) < 0.01, frac


def test_sysbench_default_keeps_most_reads_in_a_buffer_pool_under_half_the_table():
    """17 GB of buffer pool over a 38 GB sysbench table: uniform keys hit 45%, sysbench 1.0's
    default keys nearly all (the special distribution's bell sits inside the cached centre)."""
    uniform = cache.hit_ratio(17e9, 38e9, 200)
    special = cache.hit_ratio(17e9, 38e9, 200, distribution="special")
    assert math.isclose(uniform, 17 / 38) and special > 0.99


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["hotspot", "special"]),
    st.floats(0.001, 0.9),
    st.floats(0.0, 1.0),
    st.lists(st.floats(0.0, 1.0), min_size=2, max_size=6),
)
def test_hot_set_hit_ratio_grows_with_the_cache_and_beats_uniform(name, hot_d, hot_o, fracs):
    shares = cache.key_classes(name, hot_d, hot_o)
    c = np.sort(np.array(fracs))
    h = cache.piecewise_hit_ratio(c, *shares)
    assert (np.diff(h) >= -1e-9).all() and ((h >= 0) & (h <= 1)).all()
    if name == "hotspot" and hot_o >= hot_d:  # requests at least as concentrated as the keys
        assert (h >= np.minimum(c, 1.0) - 1e-9).all()


def test_bad_shares_are_refused():
    with pytest.raises(ValueError, match="item_shares"):
        cache.piecewise_hit_ratio(0.5, [0.5, 0.4], [0.5, 0.5])
    with pytest.raises(ValueError, match="hot_data_fraction"):
        cache.key_classes("hotspot", 1.5, 0.5)
    with pytest.raises(ValueError, match="key_distribution"):
        pm.Workload(clients=1, key_distribution="pareto")
    with pytest.raises(ValueError, match="hot_op_fraction"):
        pm.Workload(clients=1, key_distribution="hotspot", hot_op_fraction=2.0)


def _read_workload(**keys):
    return pm.Workload(
        operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=38e9, clients=16, **keys
    )


def test_a_vector_of_distributions_predicts_as_each_alone():
    platform = "x86-tencent-cdb-gp-8c32g"
    names = np.array(KEY_DISTRIBUTIONS, dtype=object)
    together = pm.predict(platform, _read_workload(key_distribution=names), system="mysql")
    for i, name in enumerate(KEY_DISTRIBUTIONS):
        alone = pm.predict(platform, _read_workload(key_distribution=name), system="mysql")
        for col in ("cache_hit_ratio", "throughput_ops_s", "latency_p99_ms"):
            assert math.isclose(together[col][i], alone[col][0], rel_tol=1e-9), (name, col)
    hits = dict(zip(KEY_DISTRIBUTIONS, together["cache_hit_ratio"], strict=True))
    assert hits["uniform"] < hits["hotspot"] < hits["zipf"] == hits["latest"] < hits["special"]


def _figure(**cols):
    row = {
        "system": "mysql", "platform_id": "x86-tencent-cdb-gp-8c32g", "device_id": "", "operation": "read",
        "read_fraction": 1.0, "object_bytes": 200.0, "dataset_gb": 38.0, "clients": 16, "unit": "ops/s",
    }  # fmt: skip
    row.update(cols)
    config = figure_config(row)
    return pm.predict(**config)["cache_hit_ratio"][0]


def test_figure_columns_reach_the_cache():
    # uniform keys: the buffer pool (its share of the platform's RAM) over the 38 GB data set
    pool = (
        pm.load_parameters()["cache_share_of_ram[mysql]"]
        * pm.load_platform("x86-tencent-cdb-gp-8c32g").ram_bytes
    )
    assert math.isclose(_figure(), min(pool / 38e9, 1.0), rel_tol=1e-9)
    assert _figure(key_distribution="special") > 0.99
    assert _figure(key_distribution="hotspot", hot_data_fraction=0.01, hot_op_fraction=0.99) > 0.99
    assert _figure(key_distribution="zipf", zipf_s=1.2) > _figure(key_distribution="zipf", zipf_s=0.6)
    assert _figure(read_source="cache") == 1.0  # the source shows every read came from memory
    assert _figure(read_source="disk") == 0.0


def _fnv64(values: np.ndarray) -> np.ndarray:
    """YCSB's Utils.fnvhash64 (64-bit FNV-1 over the value's 8 bytes, then Java's Math.abs)."""
    v = values.astype(np.uint64)
    h = np.full(v.shape, 0xCBF29CE484222325, dtype=np.uint64)
    for _ in range(8):
        h ^= v & np.uint64(0xFF)
        v >>= np.uint64(8)
        h *= np.uint64(1099511628211)
    return np.abs(h.view(np.int64)).astype(np.uint64)


@pytest.mark.parametrize("n_keys", [4_000, 40_000])
def test_scrambled_zipf_matches_ycsb_hashing_under_che(n_keys):
    """YCSB's zipfian: Zipf(0.99) over R ranks hashed onto N keys by FNV-64 (ScrambledZipfianGenerator),
    here with R = 4e6 ranks (100 and 1000 per key) so every key's popularity can be summed exactly;
    the class model (a head over a uniform floor) within 0.02 at every cache size, and far from plain
    Zipf over the keys."""
    ranks, s = 4_000_000, 0.99
    pmf = np.arange(1, ranks + 1, dtype=float) ** -s
    keys = (_fnv64(np.arange(ranks)) % np.uint64(n_keys)).astype(np.int64)
    popularity = np.bincount(keys, weights=pmf / pmf.sum(), minlength=n_keys)
    shares = cache.scrambled_zipf_classes(n_keys, s, ranks=ranks)
    for frac in (0.01, 0.05, 0.2, 0.5):
        exact = cache.lru_hit_ratio_che(frac * n_keys, popularity)
        assert abs(cache.piecewise_hit_ratio(frac, *shares)[0] - exact) < 0.02, frac
    assert (
        cache.zipf_hit_ratio(0.05 * n_keys, n_keys, s) - cache.lru_hit_ratio_che(0.05 * n_keys, popularity)
        > 0.1
    )


def test_zipf_partial_sums_against_summing_every_rank():
    """The head's and the floor's masses rest on sums of i^-s over rank ranges: exact to rank 64, the
    midpoint integral beyond, whose error per term is s (s+1) i^(-s-2) / 24, under 2e-5 of the term
    from rank 65 on; against summing all 1e7 ranks, within that."""
    pmf = np.arange(1, 10_000_001, dtype=float)
    for s in (0.6, 0.99, 1.0, 1.3):
        terms = pmf**-s
        cum = np.concatenate([[0.0], np.cumsum(terms)])
        a = np.array([1, 5, 64, 65, 100, 3_000, 1_000_000])
        b = np.array([10_000_000, 70, 64, 1_000, 99_999, 3_000, 10_000_000])
        exact = cum[b] - cum[a - 1]
        assert np.allclose(cache._zipf_partial_sums(a.astype(float), b.astype(float), s), exact, rtol=2e-5), s
