"""Properties of the cache hit ratio over random valid inputs (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.mechanisms.cache import hit_ratio, lru_hit_ratio_che, zipf_hit_ratio

# Results agree with the exact orderings up to rounding in sums of up to ~700 terms.
EPS = 1e-12

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

log_items = st.floats(min_value=0.0, max_value=10.0)  # N = 10^x items, up to 1e10
fractions = st.floats(min_value=0.0, max_value=1.2)
exponents = st.floats(min_value=0.0, max_value=4.0)


@SETTINGS
@given(log_n=log_items, frac=fractions, s=exponents)
def test_hit_ratio_is_a_probability(log_n, frac, s):
    n = 10.0**log_n
    h = zipf_hit_ratio(frac * n, n, s)
    assert 0.0 <= h <= 1.0
    if frac >= 1.0:
        assert h == 1.0
    if frac == 0.0:
        assert h == 0.0


@SETTINGS
@given(log_n=log_items, f1=fractions, f2=fractions, s=exponents)
def test_larger_cache_never_lowers_hit_ratio(log_n, f1, f2, s):
    n = 10.0**log_n
    small, large = sorted((f1 * n, f2 * n))
    assert zipf_hit_ratio(small, n, s) <= zipf_hit_ratio(large, n, s) + EPS


@SETTINGS
@given(
    log_c=st.floats(min_value=-1.0, max_value=9.0),
    g1=st.floats(0.0, 3.0),
    g2=st.floats(0.0, 3.0),
    s=exponents,
)
def test_larger_dataset_never_raises_hit_ratio(log_c, g1, g2, s):
    c = 10.0**log_c
    n_small, n_large = sorted((c * 10.0**g1, c * 10.0**g2))
    assert zipf_hit_ratio(c, n_large, s) <= zipf_hit_ratio(c, n_small, s) + EPS


@SETTINGS
@given(log_n=log_items, frac=st.floats(min_value=0.0, max_value=1.0), s1=exponents, s2=exponents)
def test_more_skew_never_lowers_hit_ratio(log_n, frac, s1, s2):
    # Fixed C and N: a larger Zipf exponent concentrates requests on the items LRU
    # keeps. Not a theorem we could cite for Che's approximation; checked here and on
    # a dense grid (s in 0..6 step 0.01, C/N in 0.001..0.999, N in 1..1e10): the largest
    # decrease seen was 5e-14, i.e. rounding. The s = 0 end is Chebyshev's sum
    # inequality: sum p_i g_i >= (1/N) sum p_i sum g_i = C/N for g_i increasing in p_i.
    n = 10.0**log_n
    lo, hi = sorted((s1, s2))
    assert zipf_hit_ratio(frac * n, n, lo) <= zipf_hit_ratio(frac * n, n, hi) + EPS


@SETTINGS
@given(
    weights=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=40),
    c1=st.floats(min_value=0.0, max_value=45.0),
    c2=st.floats(min_value=0.0, max_value=45.0),
)
def test_che_any_popularity_bounded_and_at_least_uniform(weights, c1, c2):
    w = np.asarray(weights)
    if w.sum() <= 0:
        w = np.ones_like(w)
    p = w / w.sum()
    p = p / p.sum()
    small, large = sorted((c1, c2))
    h_small, h_large = lru_hit_ratio_che([small, large], p)
    assert 0.0 <= h_small <= h_large + EPS <= 1.0 + EPS
    # Chebyshev's sum inequality: skew never makes LRU (Che) worse than uniform C/N
    assert h_small >= min(1.0, small / p.size) - 1e-9


@SETTINGS
@given(
    cache=st.floats(min_value=0.0, max_value=1e12),
    dataset=st.floats(min_value=0.0, max_value=1e12),
    obj=st.floats(min_value=1.0, max_value=1e6),
    s=exponents,
    zipf=st.booleans(),
)
def test_hit_ratio_bytes_bounded_with_limits(cache, dataset, obj, s, zipf):
    h = hit_ratio(cache, dataset, obj, distribution="zipf" if zipf else "uniform", zipf_s=s)
    assert 0.0 <= h <= 1.0
    if cache >= dataset:
        assert h == 1.0
    elif cache == 0.0:
        assert h == 0.0
