"""Open product-form (Jackson / BCMP) networks and load-dependent open stations.

Requests arrive from outside at rate lambda [1/s] and visit station k V_k times
on average, each visit needing mean service time S_k [s]. In a product-form
network each station behaves as if alone with Poisson input at rate
lambda_k = lambda V_k (Jackson 1963; Baskett et al. 1975), so

* utilisation rho_k = lambda V_k S_k / c_k [-];
* residence time per request R_k = V_k T_k, with T_k the M/M/c_k response
  time at arrival rate lambda_k (1/(1/S_k - lambda_k) for one server, S_k for
  a delay station, the birth-death solution for a load-dependent station);
* response time R = sum_k R_k, queue length L_k = lambda R_k (Little).

A station with rho_k >= 1 is saturated: it has no steady state. Its residence
time, queue length and the network response time are ``inf`` and it is
flagged in ``saturated``; no finite (wrong) number is returned.

References
----------
Jackson, J. R. (1963). Jobshop-like queueing systems. Management Science
10(1), 131-142.
Baskett, F., Chandy, K. M., Muntz, R. R., Palacios, F. G. (1975). Open, closed
and mixed networks of queues with different classes of customers. JACM 22(2).
Lazowska, E. D. et al. (1984). Quantitative System Performance, ch. 6.
Bolch, G. et al. (2006). Queueing Networks and Markov Chains, ch. 7.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import special

from perfmodel.queueing._validate import as_array, broadcast
from perfmodel.queueing.closed import parse_stations
from perfmodel.queueing.single import _mmc_wait
from perfmodel.queueing.stations import LoadDependentRate

__all__ = [
    "OpenNetworkResult",
    "ld_station_number_in_system",
    "ld_station_response_time",
    "open_network",
    "traffic_equations",
]


class OpenNetworkResult(NamedTuple):
    """Solution of an open network (batch dimensions of ``arrival_rate`` first).

    Attributes
    ----------
    utilization : numpy.ndarray, shape (..., K)
        rho_k = lambda V_k S_k / c_k [-] (0 for delay stations; for a
        load-dependent station lambda V_k S_k / alpha_k(m)). Reported even
        when >= 1.
    residence_time : numpy.ndarray, shape (..., K)
        R_k = V_k T_k [s]; ``inf`` where saturated.
    queue_length : numpy.ndarray, shape (..., K)
        L_k = lambda R_k [count]; ``inf`` where saturated.
    response_time : numpy.ndarray, shape (...)
        sum_k R_k [s]; ``inf`` when any station is saturated.
    saturated : numpy.ndarray of bool, shape (..., K)
        rho_k >= 1.
    any_saturated : numpy.ndarray of bool, shape (...)
        True when the network has no steady state.
    """

    utilization: np.ndarray
    residence_time: np.ndarray
    queue_length: np.ndarray
    response_time: np.ndarray
    saturated: np.ndarray
    any_saturated: np.ndarray


def traffic_equations(external_arrival_rates, routing) -> np.ndarray:
    """Per-station arrival rates of an open Jackson network [1/s].

    Solves lambda_k = gamma_k + sum_j lambda_j P_jk, i.e.
    lambda = gamma (I - P)^{-1}.

    Parameters
    ----------
    external_arrival_rates : array_like, shape (K,)
        gamma_k, arrivals from outside to station k [1/s], >= 0.
    routing : array_like, shape (K, K)
        P_jk, probability that a request leaving j goes to k [-]; rows sum to
        <= 1 (the rest leaves the network).

    Raises
    ------
    ValueError
        If ``routing`` is not a sub-stochastic square matrix or traps requests
        (I - P singular: some requests never leave).

    References
    ----------
    Jackson, J. R. (1963). Management Science 10(1), 131-142.
    """
    gamma = as_array(external_arrival_rates, "external_arrival_rates", nonnegative=True)
    p = as_array(routing, "routing", nonnegative=True)
    if gamma.ndim != 1:
        raise ValueError("external_arrival_rates: expected a 1-d array (one per station)")
    k = gamma.size
    if p.shape != (k, k):
        raise ValueError(f"routing: expected shape ({k}, {k}), got {p.shape}")
    if (p.sum(axis=1) > 1.0 + 1e-12).any():
        raise ValueError("routing: each row must sum to <= 1")
    a = np.eye(k) - p.T
    if np.linalg.matrix_rank(a) < k or np.max(np.abs(np.linalg.eigvals(p))) >= 1.0 - 1e-12:
        raise ValueError("routing: requests can never leave the network (I - P singular)")
    lam = np.linalg.solve(a, gamma)
    return np.maximum(lam, 0.0)


def _ld_log_terms(x: np.ndarray, rate: LoadDependentRate):
    """log pi_n (unnormalised), n = 0..m, for load x = lambda S [-], and tail ratio."""
    alpha = rate.multipliers
    m = alpha.size
    with np.errstate(divide="ignore"):
        logx = np.log(x)[..., None]
    steps = logx - np.log(alpha)  # (..., m): log(x / alpha(j)), j = 1..m
    log_pi = np.concatenate([np.zeros(x.shape + (1,)), np.cumsum(steps, axis=-1)], axis=-1)
    rho = x / alpha[-1]
    return log_pi, rho, m


def ld_station_number_in_system(arrival_rate, service_time, rate: LoadDependentRate):
    """Mean number at an open load-dependent station [count].

    Birth-death solution: pi_n = pi_0 prod_{j=1}^{n} lambda S / alpha(j), with
    alpha(j) = alpha(m) for j >= m, so beyond m the tail is geometric with
    ratio rho = lambda S / alpha(m):
    L = [sum_{n<m} n pi_n + pi_m (m / (1 - rho) + rho / (1 - rho)^2)] /
    [sum_{n<m} pi_n + pi_m / (1 - rho)], evaluated in log space. ``inf`` when
    rho >= 1. ``LoadDependentRate.multi_server(c)`` gives the M/M/c result.

    Parameters
    ----------
    arrival_rate : array_like
        lambda [1/s], >= 0.
    service_time : array_like
        S, mean service time at unit rate [s], > 0.
    rate : LoadDependentRate
        alpha(n) [-].

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, sec. 3.1 (birth-death).
    Bolch, G. et al. (2006). Queueing Networks and Markov Chains, sec. 7.1.3.
    """
    if not isinstance(rate, LoadDependentRate):
        raise ValueError("rate: expected a LoadDependentRate")
    lam = as_array(arrival_rate, "arrival_rate", nonnegative=True)
    s = as_array(service_time, "service_time", positive=True)
    lam, s = broadcast(arrival_rate=lam, service_time=s)
    x = lam * s
    log_pi, rho, m = _ld_log_terms(x, rate)
    stable = rho < 1.0
    rho_s = np.where(stable, rho, 0.5)
    n = np.arange(m + 1)
    head = log_pi[..., :m]
    log_tail_mass = log_pi[..., m] - np.log1p(-rho_s)
    log_norm = np.logaddexp(special.logsumexp(head, axis=-1), log_tail_mass)
    if m > 1:
        log_head_mean = special.logsumexp(head[..., 1:] + np.log(n[1:m]), axis=-1)
    else:
        log_head_mean = np.full(x.shape, -np.inf)
    tail_factor = m / (1.0 - rho_s) + rho_s / (1.0 - rho_s) ** 2
    log_tail_mean = log_pi[..., m] + np.log(tail_factor)
    mean = np.exp(np.logaddexp(log_head_mean, log_tail_mean) - log_norm)
    mean = np.where(x == 0.0, 0.0, mean)
    return np.where(stable, mean, np.inf)


def ld_station_response_time(arrival_rate, service_time, rate: LoadDependentRate):
    """Mean response time at an open load-dependent station [s].

    T = L / lambda (Little) with L from :func:`ld_station_number_in_system`;
    at lambda = 0, T = S / alpha(1). ``inf`` when lambda S >= alpha(m).

    References
    ----------
    Little, J. D. C. (1961). Operations Research 9(3), 383-387.
    """
    lam = as_array(arrival_rate, "arrival_rate", nonnegative=True)
    s = as_array(service_time, "service_time", positive=True)
    lam, s = broadcast(arrival_rate=lam, service_time=s)
    mean_n = ld_station_number_in_system(lam, s, rate)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean_n / lam
    return np.where(lam == 0.0, s / rate.multipliers[0], t)


def open_network(arrival_rate, visits, service_times, servers) -> OpenNetworkResult:
    """Mean-value solution of an open product-form network with saturation check.

    Parameters
    ----------
    arrival_rate : array_like
        External arrival rate lambda [1/s], >= 0; any shape (a sweep).
    visits : array_like, shape (K,)
        Mean visits per request V_k [-], >= 0 (e.g. from
        :func:`traffic_equations` divided by lambda).
    service_times : array_like, shape (K,)
        Mean service time per visit S_k [s], > 0 (at unit rate for a
        load-dependent station).
    servers : int, float or sequence of length K
        1, an integer c > 1, ``inf`` (delay) or a :class:`LoadDependentRate`.

    Returns
    -------
    OpenNetworkResult

    Notes
    -----
    rho_k = lambda V_k S_k / c_k; R_k = V_k T_k(lambda V_k) with
    T_k = C(c_k, a_k) / (c_k / S_k - lambda_k) + S_k (M/M/c, Erlang C),
    T_k = S_k (delay), birth-death mean for a load-dependent station;
    R = sum_k R_k; L_k = lambda R_k. Saturated (rho_k >= 1) stations give inf.

    References
    ----------
    Jackson, J. R. (1963). Management Science 10(1), 131-142.
    Lazowska, E. D. et al. (1984). Quantitative System Performance, sec. 6.4.
    """
    lam = as_array(arrival_rate, "arrival_rate", nonnegative=True)
    v = as_array(visits, "visits", nonnegative=True)
    s = as_array(service_times, "service_times", positive=True)
    if v.ndim != 1:
        raise ValueError("visits: expected a 1-d array (one per station)")
    if s.shape != v.shape:
        raise ValueError(f"visits, service_times: shapes differ ({v.shape} vs {s.shape})")
    laws = parse_stations(servers, v.size)
    lam_k = lam[..., None] * v  # (..., K)
    util = np.zeros(lam_k.shape)
    res = np.zeros(lam_k.shape)
    for k, law in enumerate(laws):
        lk = lam_k[..., k]
        if law is np.inf:
            res[..., k] = v[k] * s[k]
            continue
        if law == 1:
            peak, c = 1.0, 1.0
        elif law.multipliers.size == law.peak and np.array_equal(
            law.multipliers, np.arange(1.0, law.peak + 1.0)
        ):
            peak, c = law.peak, law.peak  # plain c-server station: Erlang C
        else:
            peak, c = law.peak, None
        util[..., k] = lk * s[k] / peak
        if c is not None:
            t = _mmc_wait(lk, np.full(lk.shape, 1.0 / s[k]), np.full(lk.shape, c)) + s[k]
        else:
            t = ld_station_response_time(lk, s[k], law)
        res[..., k] = np.where(v[k] > 0, v[k] * t, 0.0)
    saturated = util >= 1.0
    res = np.where(saturated, np.inf, res)
    with np.errstate(invalid="ignore"):
        ql = np.where(saturated, np.inf, lam[..., None] * res)
    any_sat = saturated.any(axis=-1)
    resp = np.where(any_sat, np.inf, res.sum(axis=-1))
    return OpenNetworkResult(util, res, ql, resp, saturated, any_sat)
