"""M/M/1 and M/M/c response-time distributions and quantiles to 1e-9.

The M/M/c truth is built without the library's closed form: the stationary
distribution of a truncated birth-death chain gives the number an arrival
finds (PASTA); with n >= c found, the wait is Erlang(n - c + 1, c mu); the
response-time CDF is the numerical integral (scipy.integrate.quad) of that
waiting density against the exponential service time, and the quantile is the
root of CDF = q (brentq).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from perfmodel import queueing as qn

QS = [0.5, 0.95, 0.99, 0.999]


@pytest.mark.parametrize("lam, mu", [(0.1, 1.0), (0.9, 1.0), (990.0, 1000.0), (0.0, 3.0)])
def test_mm1_response_quantile_closed_form(lam, mu):
    q = np.array(QS)
    want = -np.log(1.0 - q) / (mu - lam)
    np.testing.assert_allclose(qn.mm1_response_time_quantile(q, lam, mu), want, rtol=1e-12)
    # the M/M/c root finder with c = 1 must land on the same numbers
    np.testing.assert_allclose(qn.mmc_response_time_quantile(q, lam, mu, 1), want, rtol=1e-9)


def test_mm1_waiting_quantile_closed_form():
    lam, mu = 0.8, 1.0
    # P(W > t) = rho e^{-(mu - lam) t}; q <= 1 - rho gives 0
    assert qn.mm1_waiting_time_quantile(0.1, lam, mu) == 0.0
    want = np.log(0.8 / 0.01) / 0.2
    assert float(qn.mm1_waiting_time_quantile(0.99, lam, mu)) == pytest.approx(want, rel=1e-13)


class BruteForceMMc:
    """Response-time CDF of an M/M/c station from the chain and quadrature."""

    def __init__(self, lam, mu, c):
        self.lam, self.mu, self.c = lam, mu, c
        cap = 100
        while True:
            j = np.arange(1, cap + 1)
            log_pi = np.concatenate([[0.0], np.cumsum(np.log(lam / (np.minimum(j, c) * mu)))])
            pi = np.exp(log_pi - log_pi.max())
            pi /= pi.sum()
            if pi[-1] < 1e-22 * pi.max():
                break
            cap *= 2
        self.pi = pi
        self.p_nowait = pi[:c].sum()
        self.k = np.arange(cap + 1 - c) + 1  # Erlang orders for n = c .. cap
        self.w_pi = pi[c:]

    def wait_density(self, x):
        return float((self.w_pi * stats.gamma.pdf(x, a=self.k, scale=1.0 / (self.c * self.mu))).sum())

    def cdf(self, t):
        mu = self.mu
        no_wait = self.p_nowait * -np.expm1(-mu * t)
        waited, _ = integrate.quad(
            lambda x: self.wait_density(x) * -np.expm1(-mu * (t - x)),
            0.0,
            t,
            epsabs=1e-15,
            epsrel=1e-13,
            limit=400,
        )
        return no_wait + waited

    def quantile(self, q):
        hi = 1.0 / self.mu
        while self.cdf(hi) < q:
            hi *= 2
        return optimize.brentq(lambda t: self.cdf(t) - q, 0.0, hi, xtol=1e-15, rtol=1e-13)


CASES = [(1.5, 1.0, 2), (7.2, 1.0, 8), (3.9, 1.0, 4), (0.4, 1.0, 4), (18.0, 10.0, 2)]


@pytest.mark.parametrize("lam, mu, c", CASES)
def test_mmc_cdf_matches_quadrature(lam, mu, c):
    bf = BruteForceMMc(lam, mu, c)
    t = np.array([0.05, 0.5, 1.0, 3.0, 8.0]) / mu
    got = qn.mmc_response_time_cdf(t, lam, mu, c)
    want = np.array([bf.cdf(x) for x in t])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("lam, mu, c", CASES)
def test_mmc_quantiles_match_quadrature(lam, mu, c):
    bf = BruteForceMMc(lam, mu, c)
    got = qn.mmc_response_time_quantile(QS, lam, mu, c)
    want = np.array([bf.quantile(q) for q in QS])
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_mmc_quantile_hypoexponential_equal_rates():
    # theta = c mu - lambda = mu: waiting part is Erlang(2, mu); P(T > t) =
    # (1 - C) e^{-mu t} + C (1 + mu t) e^{-mu t}
    lam, mu, c = 1.0, 1.0, 2
    cw = float(qn.erlang_c(c, lam / mu))
    for q in QS:
        t = float(qn.mmc_response_time_quantile(q, lam, mu, c))
        sf = (1 - cw) * np.exp(-mu * t) + cw * (1 + mu * t) * np.exp(-mu * t)
        assert sf == pytest.approx(1 - q, rel=1e-12)


def test_mmc_quantile_large_c_and_heavy_load_is_finite_and_consistent():
    lam, mu, c = 1020.0, 1.0, 1024  # theta = 4 << c mu
    q = np.array(QS)
    t = qn.mmc_response_time_quantile(q, lam, mu, c)
    assert np.isfinite(t).all() and (np.diff(t) > 0).all()
    np.testing.assert_allclose(qn.mmc_response_time_sf(t, lam, mu, c), 1 - q, rtol=1e-11)


def test_mmc_waiting_quantile():
    lam, mu, c = 7.2, 1.0, 8
    cw = float(qn.erlang_c(c, lam / mu))
    w = float(qn.mmc_waiting_time_quantile(0.99, lam, mu, c))
    assert cw * np.exp(-(c * mu - lam) * w) == pytest.approx(0.01, rel=1e-12)


def test_quantiles_broadcast_grid_and_unstable_inf():
    q = np.array(QS)[:, None, None]
    lam = np.array([0.5, 0.9, 1.2])[None, :, None]
    c = np.array([1, 2])[None, None, :]
    out = qn.mmc_response_time_quantile(q, lam, 1.0, c)
    assert out.shape == (4, 3, 2)
    assert np.isinf(out[:, 2, 0]).all()  # lambda = 1.2 > mu on one server
    assert np.isfinite(out[:, :, 1]).all()
    for i, qq in enumerate(QS):
        assert out[i, 0, 1] == pytest.approx(float(qn.mmc_response_time_quantile(qq, 0.5, 1, 2)))
    assert (qn.mmc_response_time_sf([0.0, 1.0], 1.5, 1.0, 1) == 1.0).all()
