"""Properties of the k-of-n replica wait over random valid inputs (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.mechanisms.replication import (
    acks_required,
    exponential_kth_mean,
    kth_order_cdf,
    kth_order_quantile,
)

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

levels = st.floats(min_value=1e-6, max_value=1 - 1e-6)
sizes = st.integers(min_value=1, max_value=9)


def weibull_cdf(scale: float, shape: float):
    """Replica response time with a Weibull distribution [s]; shape < 1 is heavy-ish tailed."""
    return lambda t: -np.expm1(-((np.maximum(t, 0.0) / scale) ** shape))


@SETTINGS
@given(q=levels, n=sizes, data=st.data(), scale=st.floats(1e-4, 1e-1), shape=st.floats(0.3, 4.0))
def test_quantile_non_decreasing_in_k(q, n, data, scale, shape):
    k1 = data.draw(st.integers(1, n))
    k2 = data.draw(st.integers(k1, n))
    cdf = weibull_cdf(scale, shape)
    t1 = kth_order_quantile(q, k1, n, cdf, 0.0, 1e6)
    t2 = kth_order_quantile(q, k2, n, cdf, 0.0, 1e6)
    assert t1 <= t2 * (1 + 1e-11)


@SETTINGS
@given(q=levels, n1=sizes, n2=sizes, scale=st.floats(1e-4, 1e-1), shape=st.floats(0.3, 4.0))
def test_all_quantile_non_decreasing_in_replication_factor(q, n1, n2, scale, shape):
    # consistency ALL (Ceph primary-copy writes): the tail grows with RF
    small, large = sorted((n1, n2))
    cdf = weibull_cdf(scale, shape)
    t_small = kth_order_quantile(q, acks_required("ALL", small), small, cdf, 0.0, 1e6)
    t_large = kth_order_quantile(q, acks_required("ALL", large), large, cdf, 0.0, 1e6)
    assert t_small <= t_large * (1 + 1e-11)


@SETTINGS
@given(f1=st.floats(0.0, 1.0), f2=st.floats(0.0, 1.0), n=sizes, data=st.data())
def test_kth_cdf_is_a_cdf_and_ordered(f1, f2, n, data):
    k1 = data.draw(st.integers(1, n))
    k2 = data.draw(st.integers(k1, n))
    lo, hi = sorted((f1, f2))
    g = kth_order_cdf(np.array([lo, hi]), np.array([[k1], [k2]]), n)
    assert ((g >= 0) & (g <= 1)).all()
    assert (g[:, 0] <= g[:, 1] + 1e-15).all()  # non-decreasing in F(t)
    assert (g[1] <= g[0] + 1e-15).all()  # waiting for more answers never finishes sooner
    if n == 1:
        assert g[0, 0] == lo and g[0, 1] == hi


@SETTINGS
@given(n=sizes, data=st.data(), mean=st.floats(1e-6, 1.0))
def test_exponential_mean_ordered(n, data, mean):
    k = data.draw(st.integers(1, n))
    m = exponential_kth_mean(k, n, mean)
    assert 0 < m
    if k < n:
        assert m < exponential_kth_mean(k + 1, n, mean)
    # QUORUM of RF waits no longer on average than ALL, and ONE no longer than one replica
    rf = n
    assert exponential_kth_mean(acks_required("QUORUM", rf), rf, mean) <= exponential_kth_mean(rf, rf, mean)
    assert exponential_kth_mean(1, rf, mean) <= mean * (1 + 1e-15)
