"""Open product-form networks, saturation flags, open load-dependent stations."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel import queueing as qn


def test_single_station_networks_match_station_formulas():
    lam = np.array([1.0, 5.0, 9.0])
    one = qn.open_network(lam, [1.0], [0.1], 1)
    np.testing.assert_allclose(one.response_time, 1 / (10.0 - lam), rtol=1e-13)
    four = qn.open_network(lam, [1.0], [0.4], 4)
    np.testing.assert_allclose(four.response_time, qn.mmc_response_time(lam, 2.5, 4), rtol=1e-13)
    np.testing.assert_allclose(four.queue_length[:, 0], lam * four.response_time, rtol=1e-13)
    np.testing.assert_allclose(four.utilization[:, 0], lam * 0.4 / 4, rtol=1e-14)


def test_visits_multiply_residence_time():
    # V = 3 visits of S = 0.01 s on one server: R = 3 / (1/S - 3 lambda)
    res = qn.open_network(20.0, [3.0, 1.0], [0.01, 0.002], [1, np.inf])
    assert res.residence_time[0] == pytest.approx(3 / (100.0 - 60.0), rel=1e-13)
    assert res.residence_time[1] == pytest.approx(0.002, rel=1e-14)
    assert res.response_time == pytest.approx(3 / 40 + 0.002, rel=1e-13)


def test_saturation_is_flagged_and_infinite():
    lam = np.array([50.0, 99.9, 100.0, 150.0])
    res = qn.open_network(lam, [1.0, 1.0], [0.01, 0.001], [1, 1])
    assert res.saturated[:, 0].tolist() == [False, False, True, True]
    assert res.any_saturated.tolist() == [False, False, True, True]
    assert np.isinf(res.response_time[2:]).all() and np.isfinite(res.response_time[:2]).all()
    assert np.isinf(res.residence_time[2:, 0]).all() and np.isinf(res.queue_length[2:, 0]).all()
    assert (res.residence_time[:, 1] > 0).all() and np.isfinite(res.residence_time[:, 1]).all()
    assert res.utilization[3, 0] == pytest.approx(1.5)  # reported, not clipped


def test_traffic_equations():
    gamma = np.array([10.0, 0.0, 0.0])
    p = np.array([[0.0, 0.7, 0.3], [0.0, 0.0, 1.0], [0.2, 0.0, 0.0]])
    lam = qn.traffic_equations(gamma, p)
    np.testing.assert_allclose(lam, gamma + lam @ p, rtol=1e-13)
    # station 1 sees 10 + 0.2 lam3; lam3 = 0.3 lam1 + 0.7 lam1 = lam1 -> lam1 = 12.5
    np.testing.assert_allclose(lam, [12.5, 8.75, 12.5], rtol=1e-13)
    with pytest.raises(ValueError, match="routing"):
        qn.traffic_equations(gamma, np.eye(3))


@pytest.mark.parametrize("c", [1, 2, 7, 64])
def test_open_ld_station_multiserver_equals_mmc(c):
    lam = np.array([0.0, 0.3 * c, 0.9 * c, 0.99 * c])
    got = qn.ld_station_response_time(lam, 1.0, qn.LoadDependentRate.multi_server(c))
    np.testing.assert_allclose(got, qn.mmc_response_time(lam, 1.0, c), rtol=1e-11)


def test_open_ld_station_birth_death_truth():
    sat = qn.LoadDependentRate.saturating(peak=4.0, half=2.0, plateau=12)
    lam, s = 2.5, 1.0
    # direct truncated birth-death sum
    n = np.arange(0, 4000)
    alpha = sat.rate(np.maximum(n[1:], 1))
    log_pi = np.concatenate([[0.0], np.cumsum(np.log(lam * s / alpha))])
    pi = np.exp(log_pi - log_pi.max())
    pi /= pi.sum()
    want = (n * pi).sum()
    assert float(qn.ld_station_number_in_system(lam, s, sat)) == pytest.approx(want, rel=1e-11)
    assert np.isinf(qn.ld_station_number_in_system(4.0, 1.0, sat))
    res = qn.open_network([2.5, 4.5], [1.0], [1.0], [sat])
    assert res.queue_length[0, 0] == pytest.approx(want, rel=1e-11)
    assert res.saturated[1, 0] and np.isinf(res.response_time[1])
