"""Single stations: M/M/1, M/M/c (Erlang B/C), M/G/1 and G/G/c means.

Glossary and units: ``arrival_rate`` lambda [1/s], ``service_rate`` mu [1/s],
``service_time`` E[S] = 1/mu [s], ``servers`` c [count], ``offered_load``
a = lambda/mu [Erlang], utilisation rho = lambda/(c mu) [-], squared
coefficients of variation ``arrival_scv`` c_a^2 and ``service_scv`` c_s^2 [-].

Every function broadcasts its arguments as numpy arrays and returns float64
arrays (0-d for scalar input). A station with rho >= 1 is unstable: waiting
and response times are reported as ``inf``, never as a finite number.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from perfmodel.queueing._validate import as_array, as_servers, broadcast

__all__ = [
    "erlang_b",
    "erlang_c",
    "ggc_response_time",
    "ggc_waiting_time",
    "mg1_response_time",
    "mg1_waiting_time",
    "mm1_response_time",
    "mm1_waiting_time",
    "mmc_number_in_system",
    "mmc_response_time",
    "mmc_waiting_time",
    "utilization",
]


def _erlang_ratio(c: np.ndarray, a: np.ndarray) -> np.ndarray:
    """r = P(N = c) / P(N <= c - 1) for N ~ Poisson(a), computed without overflow.

    Uses log P(N = c) = c ln a - a - ln c! and P(N <= c - 1) = Q(c, a), the
    regularized upper incomplete gamma function (``scipy.special.gammaincc``),
    which is accurate for c in the thousands where a^c / c! overflows.
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_pmf = np.asarray(special.xlogy(c, a))
        log_pmf -= a
        log_pmf -= special.gammaln(c + 1.0)
        np.exp(log_pmf, out=log_pmf)
        log_pmf /= special.gammaincc(c, a)
    return log_pmf


def erlang_b(servers, offered_load) -> np.ndarray:
    """Erlang B blocking probability of an M/M/c/c loss system [-].

    Parameters
    ----------
    servers : array_like
        Number of servers c [count], integer >= 1.
    offered_load : array_like
        Offered load a = lambda / mu [Erlang], >= 0.

    Returns
    -------
    numpy.ndarray
        B(c, a) = (a^c / c!) / sum_{k=0}^{c} a^k / k!  [-], evaluated stably as
        r / (1 + r) with r = P(N = c) / P(N <= c - 1), N ~ Poisson(a), through
        the regularized incomplete gamma function (no overflow for large c).

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, sec. 3.7.
    Gross, D., Harris, C. M. (1998). Fundamentals of Queueing Theory, 3rd ed.,
    sec. 2.5.
    """
    c = as_servers(servers, "servers")
    a = as_array(offered_load, "offered_load", nonnegative=True)
    c, a = broadcast(servers=c, offered_load=a)
    r = _erlang_ratio(c, a)
    return r / (1.0 + r)


def erlang_c(servers, offered_load) -> np.ndarray:
    """Erlang C probability that an arrival waits in an M/M/c queue [-].

    Parameters
    ----------
    servers : array_like
        Number of servers c [count], integer >= 1.
    offered_load : array_like
        Offered load a = lambda / mu [Erlang], >= 0.

    Returns
    -------
    numpy.ndarray
        C(c, a) = (a^c / c!) (c / (c - a)) /
        [sum_{k=0}^{c-1} a^k / k! + (a^c / c!) (c / (c - a))]  [-] for a < c,
        evaluated as C = r / (r + 1 - rho) with rho = a / c and
        r = P(N = c) / P(N <= c - 1), N ~ Poisson(a) (stable for c >= 1024).
        For a >= c (unstable queue) every arrival waits: C = 1.

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (3.40).
    Gross, D., Harris, C. M. (1998). Fundamentals of Queueing Theory, 3rd ed.,
    sec. 2.3.
    """
    c = as_servers(servers, "servers")
    a = as_array(offered_load, "offered_load", nonnegative=True)
    c, a = broadcast(servers=c, offered_load=a)
    return erlang_c_unchecked(c, a)


def erlang_c_unchecked(c: np.ndarray, a: np.ndarray) -> np.ndarray:
    """:func:`erlang_c` for already-validated, broadcast float arrays (the network solver's hot path).

    ``c`` [count] may hold ``inf`` where the caller masks the result (delay
    stations); no input is checked. Same formula and reference as :func:`erlang_c`.
    """
    r = _erlang_ratio(c, a)
    rho = a / c
    denom = 1.0 - rho
    denom += r
    with np.errstate(invalid="ignore", divide="ignore"):
        r /= denom
    return np.where(rho >= 1.0, 1.0, r)


def utilization(arrival_rate, service_rate, servers=1) -> np.ndarray:
    """Server utilisation rho = lambda / (c mu) [-].

    Parameters
    ----------
    arrival_rate : array_like
        Arrival rate lambda [1/s], >= 0.
    service_rate : array_like
        Service rate of one server mu [1/s], > 0.
    servers : array_like
        Number of servers c [count], integer >= 1.

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (2.29).
    """
    lam = as_array(arrival_rate, "arrival_rate", nonnegative=True)
    mu = as_array(service_rate, "service_rate", positive=True)
    c = as_servers(servers, "servers")
    lam, mu, c = broadcast(arrival_rate=lam, service_rate=mu, servers=c)
    return lam / (c * mu)


def _mm1_checked(arrival_rate, service_rate):
    lam = as_array(arrival_rate, "arrival_rate", nonnegative=True)
    mu = as_array(service_rate, "service_rate", positive=True)
    return broadcast(arrival_rate=lam, service_rate=mu)


def mm1_waiting_time(arrival_rate, service_rate) -> np.ndarray:
    """Mean waiting time in queue of an M/M/1 station [s].

    W_q = rho / (mu - lambda) with rho = lambda / mu; ``inf`` when rho >= 1.

    Parameters
    ----------
    arrival_rate : array_like
        Arrival rate lambda [1/s], >= 0.
    service_rate : array_like
        Service rate mu [1/s], > 0.

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (3.25).
    """
    lam, mu = _mm1_checked(arrival_rate, service_rate)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = (lam / mu) / (mu - lam)
    return np.where(lam >= mu, np.inf, w)


def mm1_response_time(arrival_rate, service_rate) -> np.ndarray:
    """Mean response (sojourn) time of an M/M/1 station [s].

    T = 1 / (mu - lambda); ``inf`` when lambda >= mu.

    Parameters
    ----------
    arrival_rate : array_like
        Arrival rate lambda [1/s], >= 0.
    service_rate : array_like
        Service rate mu [1/s], > 0.

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (3.26).
    """
    lam, mu = _mm1_checked(arrival_rate, service_rate)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = 1.0 / (mu - lam)
    return np.where(lam >= mu, np.inf, t)


def _mmc_checked(arrival_rate, service_rate, servers):
    lam = as_array(arrival_rate, "arrival_rate", nonnegative=True)
    mu = as_array(service_rate, "service_rate", positive=True)
    c = as_servers(servers, "servers")
    return broadcast(arrival_rate=lam, service_rate=mu, servers=c)


def _mmc_wait(lam: np.ndarray, mu: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Mean M/M/c waiting time for already-validated, broadcast arrays [s]."""
    a = lam / mu
    pw = erlang_c_unchecked(c, a)
    gap = c * mu
    gap -= lam
    with np.errstate(divide="ignore", invalid="ignore"):
        pw /= gap
    return np.where(gap <= 0.0, np.inf, pw)


def mmc_waiting_time(arrival_rate, service_rate, servers) -> np.ndarray:
    """Mean waiting time in queue of an M/M/c station [s].

    W_q = C(c, a) / (c mu - lambda), a = lambda / mu, C the Erlang C formula;
    ``inf`` when lambda >= c mu.

    Parameters
    ----------
    arrival_rate : array_like
        Arrival rate lambda [1/s], >= 0.
    service_rate : array_like
        Service rate of one server mu [1/s], > 0.
    servers : array_like
        Number of servers c [count], integer >= 1.

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (3.43).
    """
    lam, mu, c = _mmc_checked(arrival_rate, service_rate, servers)
    return _mmc_wait(lam, mu, c)


def mmc_response_time(arrival_rate, service_rate, servers) -> np.ndarray:
    """Mean response (sojourn) time of an M/M/c station [s].

    T = C(c, a) / (c mu - lambda) + 1 / mu, a = lambda / mu, C the Erlang C
    formula (stable for c >= 1024); ``inf`` when lambda >= c mu.

    Parameters
    ----------
    arrival_rate : array_like
        Arrival rate lambda [1/s], >= 0.
    service_rate : array_like
        Service rate of one server mu [1/s], > 0.
    servers : array_like
        Number of servers c [count], integer >= 1.

    Returns
    -------
    numpy.ndarray
        Mean response time [s], broadcast shape of the inputs.

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (3.43).
    Gross, D., Harris, C. M. (1998). Fundamentals of Queueing Theory, sec. 2.3.
    """
    lam, mu, c = _mmc_checked(arrival_rate, service_rate, servers)
    w = _mmc_wait(lam, mu, c)
    w += 1.0 / mu
    return w


def mmc_number_in_system(arrival_rate, service_rate, servers) -> np.ndarray:
    """Mean number in an M/M/c station (queue plus service) [count].

    L = lambda T (Little's law) with T from :func:`mmc_response_time`;
    ``inf`` when lambda >= c mu.

    References
    ----------
    Little, J. D. C. (1961). A proof for the queuing formula L = lambda W.
    Operations Research 9(3), 383-387.
    """
    lam, mu, c = _mmc_checked(arrival_rate, service_rate, servers)
    t = _mmc_wait(lam, mu, c) + 1.0 / mu
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(t), np.inf, lam * t)


def mg1_waiting_time(arrival_rate, service_time, service_scv) -> np.ndarray:
    """Mean waiting time of an M/G/1 FCFS station, Pollaczek-Khinchine [s].

    W_q = rho E[S] (1 + c_s^2) / (2 (1 - rho)) = lambda E[S^2] / (2 (1 - rho)),
    rho = lambda E[S]; ``inf`` when rho >= 1.

    Parameters
    ----------
    arrival_rate : array_like
        Poisson arrival rate lambda [1/s], >= 0.
    service_time : array_like
        Mean service time E[S] [s], > 0.
    service_scv : array_like
        Squared coefficient of variation of the service time c_s^2 [-], >= 0
        (0 deterministic, 1 exponential).

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (5.72).
    """
    lam = as_array(arrival_rate, "arrival_rate", nonnegative=True)
    s = as_array(service_time, "service_time", positive=True)
    cs2 = as_array(service_scv, "service_scv", nonnegative=True)
    lam, s, cs2 = broadcast(arrival_rate=lam, service_time=s, service_scv=cs2)
    rho = lam * s
    with np.errstate(divide="ignore", invalid="ignore"):
        w = rho * s * (1.0 + cs2) / (2.0 * (1.0 - rho))
    return np.where(rho >= 1.0, np.inf, w)


def mg1_response_time(arrival_rate, service_time, service_scv) -> np.ndarray:
    """Mean response time of an M/G/1 FCFS station [s].

    T = E[S] + W_q with W_q from :func:`mg1_waiting_time`
    (Pollaczek-Khinchine mean-value formula); ``inf`` when rho >= 1.

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (5.73).
    """
    w = mg1_waiting_time(arrival_rate, service_time, service_scv)
    return w + np.asarray(service_time, dtype=np.float64)


def ggc_waiting_time(arrival_rate, service_time, servers, arrival_scv=1.0, service_scv=1.0) -> np.ndarray:
    """Mean waiting time of a G/G/c station, Allen-Cunneen approximation [s].

    W_q ~= W_q(M/M/c) (c_a^2 + c_s^2) / 2, where W_q(M/M/c) =
    C(c, a) E[S] / (c (1 - rho)), a = lambda E[S], rho = a / c. Exact for
    M/M/c (c_a^2 = c_s^2 = 1) and for M/G/1 (Pollaczek-Khinchine); for c = 1
    it is Kingman's heavy-traffic formula. Typical error a few percent for
    c_a^2, c_s^2 <= 2 and moderate-to-high load; ``inf`` when rho >= 1.

    Parameters
    ----------
    arrival_rate : array_like
        Arrival rate lambda [1/s], >= 0.
    service_time : array_like
        Mean service time E[S] [s], > 0.
    servers : array_like
        Number of servers c [count], integer >= 1.
    arrival_scv, service_scv : array_like
        Squared coefficients of variation of inter-arrival and service times
        [-], >= 0.

    References
    ----------
    Allen, A. O. (1990). Probability, Statistics, and Queueing Theory, 2nd ed.,
    sec. 6.5 (Allen-Cunneen).
    Kingman, J. F. C. (1961). The single server queue in heavy traffic. Proc.
    Cambridge Philos. Soc. 57, 902-904.
    Bolch, G. et al. (2006). Queueing Networks and Markov Chains, 2nd ed.,
    sec. 6.3.4.
    """
    lam = as_array(arrival_rate, "arrival_rate", nonnegative=True)
    s = as_array(service_time, "service_time", positive=True)
    c = as_servers(servers, "servers")
    ca2 = as_array(arrival_scv, "arrival_scv", nonnegative=True)
    cs2 = as_array(service_scv, "service_scv", nonnegative=True)
    lam, s, c, ca2, cs2 = broadcast(
        arrival_rate=lam, service_time=s, servers=c, arrival_scv=ca2, service_scv=cs2
    )
    w = _mmc_wait(lam, 1.0 / s, c)
    return w * (ca2 + cs2) / 2.0


def ggc_response_time(arrival_rate, service_time, servers, arrival_scv=1.0, service_scv=1.0) -> np.ndarray:
    """Mean response time of a G/G/c station, Allen-Cunneen approximation [s].

    T ~= E[S] + W_q with W_q from :func:`ggc_waiting_time`; ``inf`` when
    rho >= 1.

    References
    ----------
    Allen, A. O. (1990). Probability, Statistics, and Queueing Theory, 2nd ed.,
    sec. 6.5.
    """
    w = ggc_waiting_time(arrival_rate, service_time, servers, arrival_scv, service_scv)
    return w + np.asarray(service_time, dtype=np.float64)
