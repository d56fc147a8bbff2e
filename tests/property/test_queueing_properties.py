"""Hypothesis properties of the queueing engine over random inputs.

Closed networks: Little's law, the asymptotic bounds X(n) <= min_k c_k / D_k
and R(n) >= sum_k D_k (Lazowska et al. 1984, ch. 5), throughput
non-decreasing in the population, and MVA == log-domain convolution.
Single stations and open networks: response time rises with load, Erlang C is
a probability increasing in load, quantiles increase with q.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel import queueing as qn

SETTINGS = settings(max_examples=60, deadline=None)

demand = st.floats(min_value=1e-3, max_value=2.0)
server = st.sampled_from([1, 1, 2, 3, 8, 32, np.inf])


@st.composite
def networks(draw):
    k = draw(st.integers(1, 4))
    d = np.array(draw(st.lists(demand, min_size=k, max_size=k)))
    s = draw(st.lists(server, min_size=k, max_size=k))
    if all(np.isinf(v) for v in s):
        s[0] = 1
    z = draw(st.floats(min_value=0.0, max_value=10.0))
    n = draw(st.integers(1, 80))
    return d, s, z, n


@SETTINGS
@given(networks())
def test_closed_network_laws_and_bounds(net):
    d, s, z, n_max = net
    res = qn.closed_network(d, s, z, n_max)
    n = res.population
    x, r = res.throughput, res.response_time
    # Little's law for the whole loop and per station
    np.testing.assert_allclose(n, x * (z + r), rtol=1e-10)
    np.testing.assert_allclose(res.queue_length.sum(axis=1) + res.think_queue, n, rtol=1e-10)
    np.testing.assert_allclose(res.queue_length, x[:, None] * res.residence_time, rtol=1e-12)
    # bounds
    c = np.array([float(v) for v in s])
    queueing = np.isfinite(c)
    x_max = np.min(c[queueing] / d[queueing])
    assert (x <= x_max * (1 + 1e-10)).all()
    assert (r >= d.sum() * (1 - 1e-10)).all()
    assert (x <= n / (z + d.sum()) * (1 + 1e-10)).all()
    assert (res.utilization <= 1 + 1e-10).all()
    # monotone in population
    assert (np.diff(x) >= -1e-12 * x[1:]).all()
    assert (np.diff(r) >= -1e-12 * r[1:]).all()


@settings(max_examples=30, deadline=None)
@given(networks())
def test_mva_equals_convolution(net):
    d, s, z, n_max = net
    a = qn.closed_network(d, s, z, n_max, method="mva")
    b = qn.closed_network(d, s, z, n_max, method="convolution")
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=1e-10)
    np.testing.assert_allclose(a.queue_length, b.queue_length, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(
    st.integers(1, 1500),
    st.floats(min_value=0.0, max_value=0.999),
    st.floats(min_value=0.0, max_value=0.999),
)
def test_mmc_monotone_in_load(c, rho1, rho2):
    lo, hi = sorted((rho1, rho2))
    mu = 2.0
    t = qn.mmc_response_time([lo * c * mu, hi * c * mu], mu, c)
    assert t[0] <= t[1] * (1 + 1e-12) and t[0] >= 1 / mu * (1 - 1e-12)
    e = qn.erlang_c(c, [lo * c, hi * c])
    assert 0.0 <= e[0] <= e[1] * (1 + 1e-12) + 1e-300 and e[1] <= 1.0
    q = qn.mmc_response_time_quantile([0.5, 0.9, 0.99, 0.999], hi * c * mu, mu, c)
    assert (np.diff(q) > 0).all()
    q_lo = qn.mmc_response_time_quantile(0.99, lo * c * mu, mu, c)
    assert q_lo <= q[2] * (1 + 1e-12)


@SETTINGS
@given(
    st.lists(st.tuples(demand, st.sampled_from([1, 2, 4, np.inf])), min_size=1, max_size=4),
    st.floats(min_value=0.0, max_value=0.98),
    st.floats(min_value=0.0, max_value=0.98),
)
def test_open_network_response_rises_with_load(stations, f1, f2):
    s = np.array([t[0] for t in stations])
    c = [t[1] for t in stations]
    cap = min([ci / si for si, ci in zip(s, c, strict=True) if np.isfinite(ci)], default=1.0)
    lam = np.array(sorted((f1, f2))) * cap
    res = qn.open_network(lam, np.ones(s.size), s, c)
    assert not res.any_saturated.any()
    assert res.response_time[0] <= res.response_time[1] * (1 + 1e-12)
    assert res.response_time[0] >= s.sum() * (1 - 1e-12)
    over = qn.open_network(cap * 1.0001, np.ones(s.size), s, c)
    if np.isfinite(c).any():
        assert over.any_saturated and np.isinf(over.response_time)
