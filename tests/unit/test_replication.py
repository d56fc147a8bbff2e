"""Replication: consistency levels, order statistics of replica response times, work factors."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, stats

from perfmodel.mechanisms.replication import (
    CONSISTENCY_LEVELS,
    acks_required,
    exponential_kth_mean,
    kth_order_cdf,
    kth_order_level,
    kth_order_quantile,
    read_work,
    replica_write_work,
)

F = np.linspace(0.0, 1.0, 101)


def exp_cdf(mean):
    return lambda t: -np.expm1(-t / mean)


# ----------------------------------------------------------------------------- consistency


@pytest.mark.parametrize(
    ("level", "rf", "k"),
    [
        ("ONE", 3, 1),
        ("TWO", 3, 2),
        ("THREE", 3, 3),
        ("QUORUM", 1, 1),
        ("QUORUM", 2, 2),
        ("QUORUM", 3, 2),
        ("QUORUM", 4, 3),
        ("QUORUM", 5, 3),
        ("ALL", 5, 5),
        ("local_quorum", 3, 2),
        ("local_one", 3, 1),
        (" all ", 2, 2),
        (2, 3, 2),
        (np.int64(3), 3, 3),
    ],
)
def test_acks_required(level, rf, k):
    got = acks_required(level, rf)
    assert got == k
    assert got.dtype == np.int64


def test_acks_required_broadcasts_over_replication_factor():
    assert_array_equal(acks_required("QUORUM", [1, 2, 3, 4, 5, 6, 7]), [1, 2, 2, 3, 3, 4, 4])
    assert_array_equal(acks_required("ALL", np.array([[1], [3]])), [[1], [3]])
    assert_array_equal(acks_required([1, 2], [2, 3]), [1, 2])


@pytest.mark.parametrize(
    ("level", "rf", "match"),
    [
        ("EACH_QUORUM", 3, "ONE, TWO, THREE, QUORUM, ALL"),
        ("", 3, "valid"),
        ("THREE", 2, "replication_factor is 2"),
        (4, 3, "needs 4 answers"),
        (0, 3, "^consistency"),
        (1.5, 3, "^consistency: must be integers"),
        (True, 3, "^consistency"),
        ("ONE", 0, "^replication_factor"),
        ("ONE", 2.5, "^replication_factor"),
        ("ONE", np.nan, "^replication_factor"),
        ([1, 2], [1, 2, 3], "^consistency, replication_factor"),
    ],
)
def test_acks_required_rejects_bad_input(level, rf, match):
    with pytest.raises(ValueError, match=match):
        acks_required(level, rf)


def test_level_list_is_complete():
    assert set(CONSISTENCY_LEVELS) >= {"ONE", "TWO", "THREE", "QUORUM", "ALL"}


# ----------------------------------------------------------------------------- work


def test_write_work_is_replication_factor():
    assert_array_equal(replica_write_work([1, 2, 3, 5]), [1.0, 2.0, 3.0, 5.0])
    # seed 004 measured 3 vs 2 replicas: the cluster's devices take 1.5x the write work
    assert replica_write_work(3) / replica_write_work(2) == 1.5
    with pytest.raises(ValueError, match="^replication_factor"):
        replica_write_work(0)


def test_read_work_follows_consistency():
    assert read_work("ONE", 3) == 1.0
    assert read_work("QUORUM", 3) == 2.0
    assert read_work("ALL", 3) == 3.0
    assert_array_equal(read_work("ONE", [1, 2, 3]), [1.0, 1.0, 1.0])  # reads at ONE unchanged by RF


# ----------------------------------------------------------------------------- order statistics: CDF


@pytest.mark.parametrize("n", [1, 2, 3, 5, 12])
def test_kth_cdf_all_is_power(n):
    assert_allclose(kth_order_cdf(F, n, n), F**n, rtol=1e-15, atol=0)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 12])
def test_kth_cdf_one_is_first_answer(n):
    assert_allclose(kth_order_cdf(F, 1, n), 1 - (1 - F) ** n, rtol=1e-13, atol=1e-16)


def test_kth_cdf_one_accurate_for_tiny_f():
    # 1 - (1 - F)^n loses everything at F = 1e-18; the closed form must not.
    assert kth_order_cdf(1e-18, 1, 3) == pytest.approx(3e-18, rel=1e-12)


@pytest.mark.parametrize(("k", "n"), [(2, 3), (3, 5), (2, 7), (4, 6)])
def test_kth_cdf_equals_binomial_sum(k, n):
    explicit = sum(comb(n, j) * F**j * (1 - F) ** (n - j) for j in range(k, n + 1))
    assert_allclose(kth_order_cdf(F, k, n), explicit, rtol=1e-12, atol=1e-15)


def test_single_replica_returns_base_distribution_exactly():
    # RF = 1 with consistency ONE adds no replica wait.
    k = acks_required("ONE", 1)
    assert_array_equal(kth_order_cdf(F, k, 1), F)
    assert_array_equal(kth_order_level(np.array([0.5, 0.9, 0.99]), k, 1), [0.5, 0.9, 0.99])
    assert exponential_kth_mean(k, 1, 2.5e-3) == 2.5e-3
    q = np.array([0.5, 0.95, 0.99])
    base = -2e-3 * np.log1p(-q)
    assert_allclose(kth_order_quantile(q, k, 1, exp_cdf(2e-3), 0.0, 1.0), base, rtol=1e-12)


def test_kth_cdf_broadcasts():
    out = kth_order_cdf(np.array([0.1, 0.5, 0.9])[:, None], np.array([1, 2, 3]), 3)
    assert out.shape == (3, 3)
    assert out[1, 1] == pytest.approx(0.5)  # median of 3 at F = 1/2, by symmetry


# ----------------------------------------------------------------------------- level and quantile


@pytest.mark.parametrize(("k", "n"), [(1, 1), (1, 3), (2, 3), (3, 3), (2, 5), (5, 9)])
def test_level_inverts_cdf(k, n):
    q = np.array([1e-6, 0.1, 0.5, 0.9, 0.99, 0.999999])
    assert_allclose(kth_order_cdf(kth_order_level(q, k, n), k, n), q, rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_quantile_of_max_of_exponentials(n):
    mean = 1.5e-3  # [s]
    q = np.array([0.5, 0.9, 0.95, 0.99, 0.999])
    closed = -mean * np.log1p(-(q ** (1.0 / n)))
    got = kth_order_quantile(q, n, n, exp_cdf(mean), 0.0, 1.0)
    assert_allclose(got, closed, rtol=1e-11)


def test_quantile_with_per_element_parameters():
    # a vectorised cdf closing over an array of medians (log-normal replica latency)
    median = np.array([1e-3, 2e-3, 5e-3])
    sigma = 0.6
    dist = stats.lognorm(s=sigma, scale=median)
    q, k, n = 0.99, np.array([1, 2, 3]), 3
    t = kth_order_quantile(q, k, n, dist.cdf, 0.0, 1.0)
    assert_allclose(kth_order_cdf(dist.cdf(t), k, n), q, rtol=1e-10)
    assert_allclose(t, dist.ppf(kth_order_level(q, k, n)), rtol=1e-10)


def test_quantile_bracket_errors():
    with pytest.raises(ValueError, match="^upper"):
        kth_order_quantile(0.99, 3, 3, exp_cdf(1.0), 0.0, 1.0)
    with pytest.raises(ValueError, match="^lower"):
        kth_order_quantile(0.5, 1, 3, exp_cdf(1.0), 5.0, 10.0)
    with pytest.raises(ValueError, match="^lower"):
        kth_order_quantile(0.5, 1, 3, exp_cdf(1.0), 10.0, 5.0)
    with pytest.raises(ValueError, match="^q"):
        kth_order_quantile(1.0, 1, 3, exp_cdf(1.0), 0.0, 5.0)


# ----------------------------------------------------------------------------- exponential mean


@pytest.mark.parametrize(("k", "n"), [(1, 1), (1, 3), (2, 3), (3, 3), (3, 5), (5, 5)])
def test_exponential_mean_matches_integrated_survival(k, n):
    # E[X] = int_0^inf P(X_(k:n) > t) dt, integrated numerically from kth_order_cdf
    mean = 4e-3
    expected, _ = integrate.quad(
        lambda t: 1.0 - kth_order_cdf(exp_cdf(mean)(t), k, n), 0, np.inf, epsabs=0, epsrel=1e-11
    )
    assert exponential_kth_mean(k, n, mean) == pytest.approx(expected, rel=1e-9)
    assert exponential_kth_mean(k, n, mean) == pytest.approx(
        mean * sum(1.0 / i for i in range(n - k + 1, n + 1)), rel=1e-13
    )


@pytest.mark.parametrize(("k", "n"), [(1, 3), (2, 3), (3, 3), (2, 5)])
def test_exponential_mean_matches_monte_carlo(k, n):
    rng = np.random.default_rng(1000 * k + n)
    mean = 2e-3
    samples = np.sort(rng.exponential(mean, size=(200_000, n)), axis=1)[:, k - 1]
    se = samples.std(ddof=1) / np.sqrt(samples.size)
    # 4.4 standard errors: a false failure has probability ~1e-5 per case
    assert abs(samples.mean() - exponential_kth_mean(k, n, mean)) < 4.4 * se
    # and the test can tell neighbours apart: k +- 1 is many standard errors away
    for other in (k - 1, k + 1):
        if 1 <= other <= n:
            assert abs(samples.mean() - exponential_kth_mean(other, n, mean)) > 20 * se


def test_exponential_mean_broadcasts_and_tail_grows_with_rf():
    m = exponential_kth_mean(np.arange(1, 4), 3, 1.0)
    assert_allclose(m, [1 / 3, 1 / 3 + 1 / 2, 1 / 3 + 1 / 2 + 1], rtol=1e-14)
    all_means = exponential_kth_mean([1, 2, 3], [1, 2, 3], 1.0)  # ALL over RF = 1, 2, 3
    assert_allclose(all_means, [1.0, 1.5, 1.5 + 1 / 3], rtol=1e-14)


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: kth_order_cdf(1.1, 1, 3), "^cdf_values"),
        (lambda: kth_order_cdf(np.nan, 1, 3), "^cdf_values"),
        (lambda: kth_order_cdf(0.5, 4, 3), "^k"),
        (lambda: kth_order_cdf(0.5, 0, 3), "^k"),
        (lambda: kth_order_cdf(0.5, 1, 2.5), "^n"),
        (lambda: kth_order_cdf([0.1, 0.2], [1, 2, 3], 3), "^cdf_values, k, n"),
        (lambda: kth_order_level(0.0, 1, 3), "^q"),
        (lambda: kth_order_level(0.5, 2, [1, 3]), "^k"),
        (lambda: exponential_kth_mean(1, 3, -1.0), "^mean"),
        (lambda: exponential_kth_mean(2, 1, 1.0), "^k"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
