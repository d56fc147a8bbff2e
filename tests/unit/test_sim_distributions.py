"""perfmodel.sim.distributions: analytic moments, sampling, choice by mean and SCV."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from perfmodel.sim.distributions import (
    Deterministic,
    Empirical,
    Exponential,
    Gamma,
    Lognormal,
    from_moments,
)

N = 200_000


@pytest.mark.parametrize(
    "dist",
    [Exponential(2e-3), Gamma(2e-3, 0.25), Gamma(2e-3, 4.0), Lognormal(2e-3, 0.5), Lognormal(2e-3, 3.0)],
)
def test_sample_mean_within_its_confidence_interval_of_the_analytic_mean(dist):
    x = dist.sample(np.random.default_rng(7), N)
    half = stats.norm.ppf(0.975) * np.sqrt(dist.variance / N)
    assert abs(x.mean() - dist.mean) <= half


def test_moments_match_the_parameters():
    assert Gamma(3.0, 0.5).variance == pytest.approx(4.5)
    assert Lognormal(3.0, 0.5).scv == pytest.approx(0.5)
    assert Exponential(3.0).scv == pytest.approx(1.0)
    assert Deterministic(3.0).variance == 0.0
    assert np.all(Deterministic(3.0).sample(np.random.default_rng(0), 5) == 3.0)


def test_from_moments_picks_the_law_by_scv():
    assert isinstance(from_moments(1e-3, 0.0), Deterministic)
    assert isinstance(from_moments(1e-3, 1.0), Exponential)
    assert isinstance(from_moments(1e-3, 2.0), Gamma)
    assert isinstance(from_moments(1e-3, 2.0, family="lognormal"), Lognormal)
    assert isinstance(from_moments(1e-3, 1.0, family="lognormal"), Lognormal)
    with pytest.raises(ValueError, match="family"):
        from_moments(1e-3, 1.0, family="weibull")
    with pytest.raises(ValueError, match="scv"):
        from_moments(1e-3, -1.0)


def test_empirical_moments_are_the_samples_and_scaling_keeps_the_shape():
    values = np.array([1.0, 2.0, 2.0, 7.0])
    d = Empirical(values)
    assert d.mean == pytest.approx(3.0) and d.variance == pytest.approx(values.var())
    draws = d.sample(np.random.default_rng(1), 1000)
    assert set(np.unique(draws)) <= set(values)
    scaled = d.scaled(6.0)
    assert scaled.mean == pytest.approx(6.0) and scaled.scv == pytest.approx(d.scv)
    assert Gamma(1.0, 0.3).scaled(5.0).scv == pytest.approx(0.3)
    with pytest.raises(ValueError, match="samples"):
        Empirical([])
    with pytest.raises(ValueError, match="cv2"):
        Gamma(1.0, 0.0)
