"""Single-station means: Erlang B/C, M/M/1, M/M/c, M/G/1, G/G/c.

Truth is computed independently of the library: Erlang's finite sums in exact
rational arithmetic (fractions) for small c, the Erlang B forward recursion for
c = 1024 and 2048, and the stationary distribution of a truncated birth-death
chain (numpy linear solve) for M/M/c means.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from perfmodel import queueing as qn


def erlang_c_exact(c: int, a: Fraction) -> Fraction:
    """C(c, a) from its defining sums, in exact rational arithmetic."""
    term_c = a**c / math.factorial(c) * Fraction(c) / (c - a)
    head = sum(a**k / math.factorial(k) for k in range(c))
    return term_c / (head + term_c)


def erlang_b_recursion(c: int, a: float) -> float:
    """B(k, a) = a B(k-1, a) / (k + a B(k-1, a)), B(0, a) = 1 (stable)."""
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


@pytest.mark.parametrize("c", [1, 2, 3, 5, 8, 13, 20, 40])
@pytest.mark.parametrize("rho", ["1/100", "1/3", "7/10", "9/10", "99/100"])
def test_erlang_c_matches_exact_rational_sum(c, rho):
    a = Fraction(rho) * c
    want = float(erlang_c_exact(c, a))
    got = float(qn.erlang_c(c, float(a)))
    assert got == pytest.approx(want, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("c", [1, 4, 30])
def test_erlang_b_matches_exact_rational_sum(c):
    for a in (Fraction(1, 2), Fraction(7, 3) * c, Fraction(3) * c):
        want = (a**c / math.factorial(c)) / sum(a**k / math.factorial(k) for k in range(c + 1))
        assert float(qn.erlang_b(c, float(a))) == pytest.approx(float(want), rel=1e-12)


@pytest.mark.parametrize("c", [1024, 2048])
@pytest.mark.parametrize("rho", [0.5, 0.9, 0.97, 0.999])
def test_erlang_c_stable_for_large_c(c, rho):
    a = rho * c
    b = erlang_b_recursion(c, a)
    want = c * b / (c - a * (1.0 - b))  # C from B (Gross & Harris eq. 2.43)
    got = float(qn.erlang_c(c, a))
    assert np.isfinite(got)
    assert got == pytest.approx(want, rel=1e-10)


def test_erlang_c_limits():
    assert qn.erlang_c(10, 0.0) == 0.0
    assert qn.erlang_c(10, 10.0) == 1.0
    assert qn.erlang_c(10, 25.0) == 1.0
    # deep light load underflows to 0 without warnings (the true value is ~1e-1600)
    assert qn.erlang_c(1024, 10.0) == 0.0


def test_erlang_c_broadcasts_a_grid():
    c = np.arange(1, 6)[:, None]
    a = np.linspace(0.1, 0.9, 7)[None, :]
    got = qn.erlang_c(c, a * c)
    assert got.shape == (5, 7)
    for i in range(5):
        for j in range(7):
            want = erlang_c_exact(i + 1, Fraction(float(a[0, j] * (i + 1))))
            assert got[i, j] == pytest.approx(float(want), rel=1e-11)


def birth_death_mmc_mean(lam: float, mu: float, c: int, cap: int = 20000) -> float:
    """Mean number in an M/M/c from a truncated birth-death chain solved with numpy."""
    n = np.arange(cap + 1)
    # log pi_n = sum_{j=1}^{n} log(lam / (min(j, c) mu)), normalised
    steps = np.log(lam) - np.log(np.minimum(np.arange(1, cap + 1), c) * mu)
    log_pi = np.concatenate([[0.0], np.cumsum(steps)])
    pi = np.exp(log_pi - log_pi.max())
    pi /= pi.sum()
    assert pi[-1] < 1e-30  # truncation is negligible
    return float((n * pi).sum())


@pytest.mark.parametrize(
    "lam, mu, c",
    [(0.5, 1.0, 1), (0.95, 1.0, 1), (7.0, 1.0, 8), (75.0, 1.0, 80), (3.0, 2.5, 2), (900, 1, 1000)],
)
def test_mmc_mean_response_matches_birth_death_chain(lam, mu, c):
    want = birth_death_mmc_mean(lam, mu, c) / lam  # Little
    assert float(qn.mmc_response_time(lam, mu, c)) == pytest.approx(want, rel=1e-9)
    assert float(qn.mmc_number_in_system(lam, mu, c)) == pytest.approx(want * lam, rel=1e-9)
    assert float(qn.mmc_waiting_time(lam, mu, c)) == pytest.approx(want - 1 / mu, rel=1e-9)


def test_mm1_closed_forms():
    lam, mu = np.array([0.0, 1.0, 9.0, 9.99]), 10.0
    np.testing.assert_allclose(qn.mm1_response_time(lam, mu), 1.0 / (mu - lam), rtol=1e-15)
    np.testing.assert_allclose(qn.mm1_waiting_time(lam, mu), lam / mu / (mu - lam), rtol=1e-15)
    np.testing.assert_allclose(qn.mmc_response_time(lam, mu, 1), 1.0 / (mu - lam), rtol=1e-12)


def test_unstable_stations_are_infinite_not_finite():
    assert qn.mm1_response_time(10.0, 10.0) == np.inf
    assert qn.mmc_response_time(20.0, 1.0, 20) == np.inf
    assert qn.mmc_response_time(25.0, 1.0, 20) == np.inf
    assert qn.mg1_response_time(2.0, 0.5, 0.3) == np.inf
    assert qn.ggc_response_time(50.0, 0.1, 4, 2.0, 0.5) == np.inf
    assert qn.mmc_number_in_system(30.0, 1.0, 20) == np.inf


def test_mg1_pollaczek_khinchine():
    lam, s = 0.8, 1.0
    # M/D/1: W = rho S / (2 (1 - rho)); M/M/1: W = rho S / (1 - rho)
    assert float(qn.mg1_waiting_time(lam, s, 0.0)) == pytest.approx(0.8 / (2 * 0.2), rel=1e-14)
    assert float(qn.mg1_waiting_time(lam, s, 1.0)) == pytest.approx(
        float(qn.mm1_waiting_time(lam, 1 / s)), rel=1e-14
    )
    # hyperexponential-like scv 4: lambda E[S^2] / (2 (1 - rho)), E[S^2] = (1 + 4) S^2
    assert float(qn.mg1_response_time(lam, s, 4.0)) == pytest.approx(
        s + lam * 5.0 * s**2 / (2 * 0.2), rel=1e-14
    )


def test_allen_cunneen_reduces_to_exact_cases():
    lam, s, c = np.array([1.0, 5.0, 7.5]), 1.0, 8
    np.testing.assert_allclose(
        qn.ggc_waiting_time(lam, s, c, 1.0, 1.0), qn.mmc_waiting_time(lam, 1 / s, c), rtol=1e-14
    )
    # c = 1, Poisson arrivals: Pollaczek-Khinchine exactly
    np.testing.assert_allclose(
        qn.ggc_waiting_time(0.6, 1.0, 1, 1.0, 0.25), qn.mg1_waiting_time(0.6, 1.0, 0.25), rtol=1e-14
    )
    # Kingman: G/G/1 W = rho/(1-rho) (ca2 + cs2)/2 S
    assert float(qn.ggc_waiting_time(0.9, 1.0, 1, 0.5, 2.0)) == pytest.approx(0.9 / 0.1 * 1.25, rel=1e-13)


def test_utilization():
    assert float(qn.utilization(30.0, 4.0, 10)) == pytest.approx(0.75)
