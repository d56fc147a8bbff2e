"""Universal Scalability Law and Amdahl: formulas and fits on known parameters."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel import queueing as qn


def test_usl_formula_values():
    # X(n) = lam n / (1 + sigma (n-1) + kappa n (n-1))
    assert float(qn.usl_throughput(1, 500.0, 0.1, 0.01)) == pytest.approx(500.0)
    assert float(qn.usl_throughput(10, 500.0, 0.1, 0.01)) == pytest.approx(
        5000.0 / (1 + 0.9 + 0.9), rel=1e-15
    )
    assert float(qn.amdahl_throughput(1e9, 100.0, 0.05)) == pytest.approx(100 / 0.05, rel=1e-6)
    grid = qn.usl_throughput(np.arange(1, 5)[:, None], 1.0, np.array([0.0, 0.5]), 0.0)
    np.testing.assert_allclose(grid[:, 0], np.arange(1, 5))


def test_usl_peak_is_maximum():
    sigma, kappa = 0.03, 0.0004
    n_star = float(qn.usl_peak_concurrency(sigma, kappa))
    assert n_star == pytest.approx(np.sqrt(0.97 / 0.0004))
    n = np.linspace(1, 200, 20001)
    x = qn.usl_throughput(n, 1.0, sigma, kappa)
    assert n[np.argmax(x)] == pytest.approx(n_star, abs=0.02)
    assert qn.usl_peak_concurrency(0.1, 0.0) == np.inf


def test_fit_usl_recovers_known_parameters():
    rng = np.random.default_rng(42)
    n = np.array([1, 2, 4, 8, 12, 16, 24, 32, 48, 64], dtype=float)
    truth = dict(lam=1200.0, sigma=0.04, kappa=0.0008)
    x = qn.usl_throughput(n, **truth)
    exact = qn.fit_usl(n, x)
    for k, v in truth.items():
        assert exact.params_[k] == pytest.approx(v, rel=1e-6)
    noisy = x * (1 + 0.01 * rng.standard_normal(n.size))
    fit = qn.fit_usl(n, noisy)
    for k, v in truth.items():
        assert abs(fit.params_[k] - v) < 4 * fit.stderr_[k], k
        assert fit.stderr_[k] > 0
    assert fit.r_squared_ > 0.99
    np.testing.assert_allclose(fit.predict(n), qn.usl_throughput(n, **fit.params_))
    assert fit.peak_concurrency_ == pytest.approx(np.sqrt((1 - fit.params_["sigma"]) / fit.params_["kappa"]))


def test_fit_amdahl_recovers_known_parameters():
    n = np.arange(1, 30, dtype=float)
    x = qn.amdahl_throughput(n, 80.0, 0.07)
    fit = qn.fit_amdahl(n, x * (1 + 0.002 * np.sin(n)))
    assert fit.params_["lam"] == pytest.approx(80.0, rel=1e-2)
    assert fit.params_["sigma"] == pytest.approx(0.07, rel=5e-2)
    assert "kappa" not in fit.params_ and fit.peak_concurrency_ == np.inf


def test_fit_rejects_too_few_points():
    with pytest.raises(ValueError, match="n"):
        qn.fit_usl([1, 2, 3], [1, 2, 3])
