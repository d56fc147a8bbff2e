"""Exact closed networks: MVA and log-domain convolution.

* Against a brute-force CTMC: enumerate every state of a small cyclic network,
  build the generator matrix and solve pi Q = 0 with numpy.
* The stable load-dependent MVA against the extended-precision log-domain
  convolution at N = 20,000 with an 80- and a 1024-server station.
* The textbook load-dependent MVA (p(0|n) = 1 - sum p(j|n)) is shown to fail
  on the same network, so the comparison is not vacuous.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from perfmodel import queueing as qn
from perfmodel.queueing import closed as closed_mod


def compositions(n: int, k: int):
    for cut in itertools.combinations(range(n + k - 1), k - 1):
        parts, prev = [], -1
        for c in cut + (n + k - 1,):
            parts.append(c - prev - 1)
            prev = c
        yield tuple(parts)


def ctmc_closed(demands, rates, think, n):
    """Cyclic network think -> 1 -> ... -> K -> think solved as a CTMC.

    ``rates[k](j)`` is the completion-rate multiplier alpha_k(j) of station k
    (j present); station k completes at alpha_k(j) / D_k. The think station
    completes at j / Z. Returns throughput and mean queue lengths.
    """
    k = len(demands)
    states = list(compositions(n, k + 1))  # index 0: thinking
    index = {s: i for i, s in enumerate(states)}
    gen = np.zeros((len(states), len(states)))

    def out_rate(st, pos):
        j = st[pos]
        if j == 0:
            return 0.0
        if pos == 0:
            return j / think
        return rates[pos - 1](j) / demands[pos - 1]

    for s in states:
        for pos in range(k + 1):
            r = out_rate(s, pos)
            if r == 0.0:
                continue
            t = list(s)
            t[pos] -= 1
            t[(pos + 1) % (k + 1)] += 1
            gen[index[s], index[tuple(t)]] += r
            gen[index[s], index[s]] -= r
    a = np.vstack([gen.T, np.ones(len(states))])
    b = np.zeros(len(states) + 1)
    b[-1] = 1.0
    pi = np.linalg.lstsq(a, b, rcond=None)[0]
    arr = np.array(states, dtype=float)
    x = float(sum(p * out_rate(s, 0) for p, s in zip(pi, states, strict=True)))
    return x, (pi[:, None] * arr).sum(axis=0)


def test_mva_matches_ctmc_with_multiserver_and_load_dependent_stations():
    sat = qn.LoadDependentRate.saturating(peak=3.0, half=1.5, plateau=4)
    demands = [0.2, 0.5, 1.1, 0.3, 0.7]
    servers = [1, 3, sat, np.inf, 2]
    think = 1.5
    rates = [
        lambda j: 1.0,
        lambda j: float(min(j, 3)),
        lambda j: float(sat.rate(j)),
        lambda j: float(j),
        lambda j: float(min(j, 2)),
    ]
    n_max = 6
    res = qn.closed_network(demands, servers, think, n_max)
    conv = qn.closed_network(demands, servers, think, n_max, method="convolution")
    for n in range(1, n_max + 1):
        x, q = ctmc_closed(demands, rates, think, n)
        for r in (res, conv):
            assert r.throughput[n - 1] == pytest.approx(x, rel=1e-10)
            np.testing.assert_allclose(r.queue_length[n - 1], q[1:], rtol=1e-9, atol=1e-12)
            assert r.think_queue[n - 1] == pytest.approx(q[0], rel=1e-10)
    # residence times obey Little at every station
    np.testing.assert_allclose(res.queue_length, res.throughput[:, None] * res.residence_time, rtol=1e-12)


def test_single_server_mva_matches_ctmc():
    demands, think = [0.05, 0.2, 0.1], 0.0
    res = qn.closed_network(demands, 1, think, 5)
    for n in range(1, 6):
        x, q = ctmc_closed_no_think(demands, n)  # Z = 0: cyclic network, no think station
        assert res.throughput[n - 1] == pytest.approx(x, rel=1e-10)
        np.testing.assert_allclose(res.queue_length[n - 1], q, rtol=1e-9)


def ctmc_closed_no_think(demands, n):
    k = len(demands)
    states = list(compositions(n, k))
    index = {s: i for i, s in enumerate(states)}
    gen = np.zeros((len(states), len(states)))
    for s in states:
        for pos in range(k):
            if s[pos] == 0:
                continue
            t = list(s)
            t[pos] -= 1
            t[(pos + 1) % k] += 1
            gen[index[s], index[tuple(t)]] += 1 / demands[pos]
            gen[index[s], index[s]] -= 1 / demands[pos]
    a = np.vstack([gen.T, np.ones(len(states))])
    b = np.zeros(len(states) + 1)
    b[-1] = 1
    pi = np.linalg.lstsq(a, b, rcond=None)[0]
    arr = np.array(states, dtype=float)
    x = float(sum(p * (s[0] > 0) / demands[0] for p, s in zip(pi, states, strict=True)))
    return x, (pi[:, None] * arr).sum(axis=0)


def test_balanced_network_closed_form():
    # K identical single servers, Z = 0: X(n) = n / (D (K + n - 1)) (Lazowska et al. 1984, 5.4)
    k, d, n_max = 4, 0.25, 200
    res = qn.closed_network([d] * k, 1, 0.0, n_max)
    n = np.arange(1, n_max + 1)
    np.testing.assert_allclose(res.throughput, n / (d * (k + n - 1)), rtol=1e-13)


# network of the issue: 4 stations + delay, an 80-server and a 1024-server station
BIG_D = [0.010, 0.008, 1.6, 10.0]
BIG_S = [1, 1, 80, 1024]
BIG_Z = 5.0


@pytest.fixture(scope="module")
def big_solutions():
    n_max = 20_000
    mva = qn.closed_network(BIG_D, BIG_S, BIG_Z, n_max, method="mva")
    conv = qn.closed_network(BIG_D, BIG_S, BIG_Z, n_max, method="convolution")
    return mva, conv


def test_multiserver_mva_matches_log_domain_convolution_at_20000(big_solutions):
    mva, conv = big_solutions
    np.testing.assert_allclose(mva.throughput, conv.throughput, rtol=1e-9)
    np.testing.assert_allclose(mva.response_time, conv.response_time, rtol=1e-9)
    np.testing.assert_allclose(mva.queue_length, conv.queue_length, rtol=1e-9, atol=1e-12)
    # the network is really in the regime where the textbook recursion breaks:
    # the 80-server station saturates and the 1024-server one holds ~500 busy servers
    assert mva.utilization[-1, 2] == pytest.approx(1.0, rel=1e-9)
    assert 400 < mva.queue_length[-1, 3] < 600
    assert mva.throughput[-1] == pytest.approx(80 / 1.6, rel=1e-12)


def textbook_ld_mva(demands, servers, think, n_max):
    """Textbook load-dependent MVA (Lazowska 1984 ch. 8), p(0|n) by subtraction."""
    k = len(demands)
    p = [np.zeros(n_max + 1) for _ in range(k)]
    for pk in p:
        pk[0] = 1.0
    xs = np.zeros(n_max)
    for n in range(1, n_max + 1):
        r = np.zeros(k)
        j = np.arange(1, n + 1)
        for i in range(k):
            alpha = np.minimum(j, servers[i])
            r[i] = (j * demands[i] / alpha * p[i][:n]).sum()
        x = n / (think + r.sum())
        xs[n - 1] = x
        for i in range(k):
            alpha = np.minimum(j, servers[i])
            new = np.zeros(n_max + 1)
            new[1 : n + 1] = x * demands[i] / alpha * p[i][:n]
            new[0] = 1.0 - new[1:].sum()
            p[i] = new
    return xs


def test_textbook_recursion_fails_where_ours_does_not(big_solutions):
    mva, conv = big_solutions
    n_max = 2000
    naive = textbook_ld_mva([0.010, 0.008, 1.6], [1, 1, 80], BIG_Z, n_max)
    ours = qn.closed_network([0.010, 0.008, 1.6], [1, 1, 80], BIG_Z, n_max)
    ref = qn.closed_network([0.010, 0.008, 1.6], [1, 1, 80], BIG_Z, n_max, method="convolution")
    np.testing.assert_allclose(ours.throughput, ref.throughput, rtol=1e-11)
    err = np.abs(naive / ref.throughput - 1)
    assert err[:50].max() < 1e-9  # fine at small populations...
    assert not np.all(err < 1e-3)  # ...and badly wrong (or NaN) later on


@pytest.mark.skipif(not qn.HAVE_NUMBA, reason="numba not installed")
def test_numpy_kernel_matches_numba_kernel():
    net = closed_mod._Net(np.array(BIG_D), BIG_S, BIG_Z)
    a = closed_mod._run_mva(net, 3000, (0, 1), {}, closed_mod._mva_numpy)
    b = closed_mod._run_mva(net, 3000, (0, 1), {}, closed_mod._mva_kernel())
    for u, v in zip(a, b, strict=True):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-300)


def test_result_fields_and_delay_and_zero_demand_stations():
    res = qn.closed_network([0.1, 0.0, 0.3, 0.2], [1, 1, np.inf, 4], 2.0, 10)
    assert res.population.tolist() == list(range(1, 11))
    for f in ("residence_time", "queue_length", "utilization"):
        assert getattr(res, f).shape == (10, 4)
    assert (res.residence_time[:, 1] == 0).all() and (res.utilization[:, 1] == 0).all()
    np.testing.assert_allclose(res.residence_time[:, 2], 0.3)  # delay: no queueing
    np.testing.assert_allclose(res.utilization[:, 3], res.throughput * 0.2 / 4)
    n = res.population
    np.testing.assert_allclose(n, res.throughput * (2.0 + res.response_time), rtol=1e-12)
    # a delay station in the list is equivalent to extra think time
    alt = qn.closed_network([0.1, 0.2], [1, 4], 2.3, 10)
    np.testing.assert_allclose(res.throughput, alt.throughput, rtol=1e-13)


def test_batch_of_networks():
    d = np.array([[0.1, 0.2], [0.2, 0.1], [0.05, 0.5]])
    z = np.array([1.0, 2.0, 0.5])
    res = qn.closed_network(d, [1, 2], z, 30)
    assert res.throughput.shape == (3, 30) and res.queue_length.shape == (3, 30, 2)
    for i in range(3):
        one = qn.closed_network(d[i], [1, 2], z[i], 30)
        np.testing.assert_allclose(res.throughput[i], one.throughput, rtol=0)


def test_load_dependent_constant_rate_equals_faster_single_server():
    fast = qn.LoadDependentRate.from_values([2.0])
    a = qn.closed_network([0.4, 0.1], [fast, 1], 1.0, 50)
    b = qn.closed_network([0.2, 0.1], [1, 1], 1.0, 50)
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=1e-14)
    np.testing.assert_allclose(a.utilization[:, 0], b.utilization[:, 0], rtol=1e-14)


def test_only_load_dependent_station_no_think():
    # one c-server station alone: X(n) = min(n, c) / D
    res = qn.closed_network([2.0], [4], 0.0, 10)
    n = np.arange(1, 11)
    np.testing.assert_allclose(res.throughput, np.minimum(n, 4) / 2.0, rtol=1e-13)
    conv = qn.closed_network([2.0], [4], 0.0, 10, method="convolution")
    np.testing.assert_allclose(conv.throughput, res.throughput, rtol=1e-13)
