"""End-to-end path quantiles against exact results.

Tandem M/M/1: by Burke's and Reich's theorems the sojourn times are
independent exponentials with rates mu_k - lambda, so the end-to-end time is
hypoexponential, whose survival function is
sum_i prod_{j != i} r_j / (r_j - r_i) e^{-r_i t} (distinct rates).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from perfmodel import queueing as qn

QS = np.array([0.5, 0.95, 0.99, 0.999])


def hypoexp_quantile(rates, q):
    rates = np.asarray(rates, dtype=float)

    def sf(t):
        return sum(
            np.prod([rj / (rj - ri) for j, rj in enumerate(rates) if j != i]) * np.exp(-ri * t)
            for i, ri in enumerate(rates)
        )

    return optimize.brentq(lambda t: sf(t) - (1 - q), 0.0, 100.0 / rates.min(), xtol=1e-15, rtol=1e-14)


TANDEM = [(800.0, [1000.0, 1200.0, 900.0]), (50.0, [100.0, 75.0]), (1.0, [3.0, 2.0, 5.0, 1.5])]


@pytest.mark.parametrize("lam, mus", TANDEM)
def test_tandem_mm1_convolution_within_its_bracket(lam, mus):
    stations = [qn.Sojourn.mmc(lam, mu) for mu in mus]
    want = np.array([hypoexp_quantile([mu - lam for mu in mus], q) for q in QS])
    got = qn.path_response_time_quantile(QS, stations, rtol=1e-4)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    # the error shrinks with the grid: not a coincidence of one grid
    fine = qn.path_response_time_quantile(QS[:2], stations, rtol=1e-5)
    np.testing.assert_allclose(fine, want[:2], rtol=1e-5)
    assert qn.path_response_time_mean(stations) == pytest.approx(sum(1 / (mu - lam) for mu in mus), rel=1e-13)


def test_gamma_moment_matching_error_on_tandem_is_as_documented():
    lam, mus = TANDEM[0]
    stations = [qn.Sojourn.mmc(lam, mu) for mu in mus]
    want = np.array([hypoexp_quantile([mu - lam for mu in mus], q) for q in QS])
    got = qn.path_response_time_quantile(QS, stations, method="gamma")
    err = np.abs(got / want - 1)
    assert err.max() < 0.06 and err.max() > 1e-3  # documented: a few percent, worst at p99.9


@pytest.mark.parametrize("lam, mu, c", [(7.2, 1.0, 8), (1.5, 1.0, 2), (60.0, 1.0, 64)])
def test_single_mmc_station_path_equals_exact_quantile(lam, mu, c):
    got = qn.path_response_time_quantile(QS, [qn.Sojourn.mmc(lam, mu, c)], rtol=1e-5)
    np.testing.assert_allclose(got, qn.mmc_response_time_quantile(QS, lam, mu, c), rtol=1e-5)


def test_deterministic_and_delay_components():
    # a fixed 2 ms latency plus an M/M/1: quantiles shift by exactly 2 ms
    base = qn.path_response_time_quantile(QS, [qn.Sojourn.mmc(50.0, 100.0)], rtol=1e-5)
    shifted = qn.path_response_time_quantile(
        QS, [qn.Sojourn.mmc(50.0, 100.0), qn.Sojourn.delay(0.002, 0.0)], rtol=1e-5
    )
    np.testing.assert_allclose(shifted - base, 0.002, rtol=2e-2)
    np.testing.assert_allclose(base, qn.mm1_response_time_quantile(QS, 50.0, 100.0), rtol=1e-5)


def test_ggc_sojourn_reduces_to_mmc_and_saturation():
    a = qn.Sojourn.ggc(7.2, 1.0, 8, 1.0, 1.0)
    b = qn.Sojourn.mmc(7.2, 1.0, 8)
    assert a.wait_probability == pytest.approx(b.wait_probability, rel=1e-14)
    assert a.wait_rate == pytest.approx(b.wait_rate, rel=1e-12)
    sat = qn.Sojourn.mmc(10.0, 1.0, 8)
    assert sat.saturated
    assert np.isinf(qn.path_response_time_quantile(QS, [b, sat])).all()
    assert np.isinf(qn.path_response_time_mean([b, sat]))
