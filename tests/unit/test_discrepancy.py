"""Model discrepancy: the ML scale, split-conformal multipliers and bands, against independent truth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.evidence import discrepancy as disc


def test_z_score_is_the_normal_quantile():
    # Phi(1.6449) = 0.95, Phi(0.6745) = 0.75 (standard normal tables)
    assert disc.z_score(0.9) == pytest.approx(1.644854, abs=1e-6)
    assert disc.z_score(0.5) == pytest.approx(0.674490, abs=1e-6)
    with pytest.raises(ValueError, match="interval"):
        disc.z_score(1.0)


def test_scale_without_parameter_uncertainty_is_the_root_mean_square():
    r = np.array([0.1, -0.3, 0.2, np.nan, -0.05])
    assert disc.fit_discrepancy_scale(r) == pytest.approx(math.sqrt(np.nanmean(r**2)), rel=1e-9)


def test_scale_recovers_the_discrepancy_beside_known_parameter_uncertainty():
    rng = np.random.default_rng(1)
    n, sigma = 4000, 0.3
    sp = rng.uniform(0.0, 0.5, n)
    r = rng.normal(0.0, np.sqrt(sp**2 + sigma**2))
    est = disc.fit_discrepancy_scale(r, sp)
    # ML standard error of a normal scale ~ sigma / sqrt(2 n) inflated by the parameter part; 5 se
    assert abs(est - sigma) < 5 * 0.02
    # and ignoring the parameter part overstates it
    assert disc.fit_discrepancy_scale(r) > est + 0.02


def test_scale_is_zero_when_parameter_uncertainty_explains_everything():
    rng = np.random.default_rng(2)
    sp = np.full(500, 0.5)
    r = rng.normal(0.0, 0.2, 500)  # tighter than the parameters alone would say
    assert disc.fit_discrepancy_scale(r, sp) == 0.0


def test_conformal_multiplier_is_the_right_order_statistic():
    scores = np.arange(1.0, 20.0)  # n = 19
    assert disc.band_multiplier(scores, 0.9) == 18.0  # ceil(20 * 0.9) = 18
    assert disc.band_multiplier(scores, 0.5) == 10.0  # ceil(20 * 0.5) = 10
    # beyond the resolution (q > n / (n + 1)): the larger of z and the largest score
    assert disc.band_multiplier(scores, 0.99) == 19.0
    assert disc.band_multiplier([0.1, 0.2], 0.99) == pytest.approx(disc.z_score(0.99))
    assert disc.band_multiplier([], 0.9) == pytest.approx(disc.z_score(0.9))


def test_conformal_bands_cover_heavy_tailed_errors_where_a_normal_band_does_not():
    """Split-conformal coverage lies in [q, q + 1/(n+1)] for exchangeable errors (Lei et al. 2018,
    Thm 2.2): Student t with 2 degrees of freedom, 40 calibration residuals, fresh ones, repeated."""
    rng = np.random.default_rng(3)
    hits = {"c50": [], "c90": [], "n50": []}
    for _ in range(400):
        calib = rng.standard_t(2, 40) * 0.3
        fresh = np.abs(rng.standard_t(2, 200) * 0.3)
        entry = disc.group_discrepancy(calib)
        for level in (0.5, 0.9):
            m = disc.band_multiplier(entry["scores"], level)
            hits[f"c{round(level * 100)}"].append(np.mean(fresh <= m * entry["sigma_log"]))
        hits["n50"].append(np.mean(fresh <= disc.z_score(0.5) * entry["sigma_log"]))
    for level in (0.5, 0.9):  # Monte Carlo error of the mean over 400 x 200 draws: < 0.01
        assert level - 0.01 <= np.mean(hits[f"c{round(level * 100)}"]) <= level + 1 / 41 + 0.01
    # a normal quantile of the ML scale over-covers badly at 50% on these errors
    assert np.mean(hits["n50"]) > 0.6


def test_small_groups_take_the_pooled_discrepancy():
    groups = ["throughput"] * 30 + ["device-level"] * 3
    r = np.r_[np.full(30, 0.1), np.full(3, 2.0)]
    est = disc.estimate_discrepancy(groups, r)
    assert not est["throughput"]["pooled"] and est["throughput"]["sigma_log"] == pytest.approx(0.1)
    assert est["device-level"]["pooled"] and est["device-level"]["figures"] == 3
    assert est["device-level"]["sigma_log"] == pytest.approx(math.sqrt(np.mean(r**2)))


def test_log_normal_band_is_symmetric_in_log_and_combines_in_quadrature():
    lo, hi = disc.log_normal_band(100.0, 0.3, 0.4, 2.0)
    assert math.log(100.0 / lo) == pytest.approx(1.0)  # 2 * sqrt(0.09 + 0.16)
    assert math.log(hi / 100.0) == pytest.approx(1.0)


def test_widen_band_keeps_a_parameter_only_band_when_there_is_no_discrepancy():
    z = disc.z_score(0.9)
    lo, hi = disc.widen_band(100.0, 80.0, 150.0, 0.0, z, z)
    assert lo == pytest.approx(80.0) and hi == pytest.approx(150.0)  # asymmetric sides kept
    lo2, hi2 = disc.widen_band(100.0, 80.0, 150.0, 0.2, z, z)
    assert lo2 < lo and hi2 > hi
    assert math.log(hi2 / 100.0) == pytest.approx(math.sqrt(math.log(1.5) ** 2 + (z * 0.2) ** 2))
    # a parameter draw that saturates keeps an infinite upper bound
    assert disc.widen_band(100.0, 80.0, np.inf, 0.2, z, z)[1] == np.inf


@settings(max_examples=60, deadline=None)
@given(
    center=st.floats(1e-6, 1e9),
    down=st.floats(0.0, 3.0),
    up=st.floats(0.0, 3.0),
    sigma=st.floats(0.0, 2.0),
    level=st.floats(0.05, 0.99),
)
def test_widen_band_contains_the_parameter_band_and_the_center(center, down, up, sigma, level):
    z = disc.z_score(level)
    m = disc.band_multiplier([], level)  # the normal multiplier
    lower, upper = center * math.exp(-down), center * math.exp(up)
    lo, hi = disc.widen_band(center, lower, upper, sigma, m, z)
    assert lo <= lower * (1 + 1e-9) and hi >= upper * (1 - 1e-9)
    assert lo <= center <= hi
