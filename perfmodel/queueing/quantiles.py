"""Response- and waiting-time distributions and quantiles of M/M/1 and M/M/c.

For an M/M/c FCFS station with rates lambda [1/s] (arrivals) and mu [1/s] (one
server), an arrival waits with probability C = C(c, lambda/mu) (Erlang C) and,
if it waits, waits an exponential time of rate theta = c mu - lambda. Its own
service is exponential with rate mu and independent of the wait. So the
response time T = W + S is a mixture:

* with probability 1 - C: Exp(mu);
* with probability C: Exp(theta) + Exp(mu), a hypoexponential.

With a = min(mu, theta), b = max(mu, theta) the survival function is

    P(T > t) = (1 - C) e^{-mu t} + C e^{-a t} [1 + a t phi((b - a) t)],

phi(x) = (1 - e^{-x}) / x (phi(0) = 1), which is the usual hypoexponential
(theta e^{-mu t} - mu e^{-theta t}) / (theta - mu) written without the
cancellation at theta ~ mu and without overflow at theta << mu. Quantiles
solve P(T > t) = 1 - q by a bracketed, safeguarded Newton iteration on
log P(T > t), vectorised over the broadcast inputs, to ~1e-14 relative.

References: Kleinrock (1975), Queueing Systems Vol. 1, sec. 3.5 and
eq. (3.44); Gross & Harris (1998), Fundamentals of Queueing Theory, sec. 2.3.4.
"""

from __future__ import annotations

import numpy as np

from perfmodel.queueing._validate import as_array, as_probability, as_servers, broadcast
from perfmodel.queueing.single import erlang_c_unchecked

__all__ = [
    "mm1_response_time_quantile",
    "mm1_waiting_time_quantile",
    "mmc_response_time_cdf",
    "mmc_response_time_quantile",
    "mmc_response_time_sf",
    "mmc_waiting_time_quantile",
]


def _phi(x: np.ndarray) -> np.ndarray:
    """phi(x) = (1 - e^{-x}) / x for x >= 0, with phi(0) = 1."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -np.expm1(-x) / x
    return np.where(x == 0.0, 1.0, out)


def _mmc_params(arrival_rate, service_rate, servers):
    lam = as_array(arrival_rate, "arrival_rate", nonnegative=True)
    mu = as_array(service_rate, "service_rate", positive=True)
    c = as_servers(servers, "servers")
    return lam, mu, c


def _log_sf_and_hazard(t, pw, mu, theta):
    """log P(T > t) and the hazard f(t) / P(T > t) of the M/M/c response time."""
    a = np.minimum(mu, theta)
    b = np.maximum(mu, theta)
    ph = _phi((b - a) * t)
    with np.errstate(divide="ignore"):
        log_no_wait = np.log1p(-pw) - mu * t
        log_wait = np.log(pw) - a * t + np.log1p(a * t * ph)
        log_sf = np.logaddexp(log_no_wait, log_wait)
        # density: (1 - C) mu e^{-mu t} + C mu theta t e^{-a t} phi((b - a) t)
        log_f = np.logaddexp(
            log_no_wait + np.log(mu),
            np.log(pw) + np.log(mu * theta) + np.log(t) - a * t + np.log(ph),
        )
    return log_sf, np.exp(log_f - log_sf)


def _prepare(t_or_q, arrival_rate, service_rate, servers, name):
    lam, mu, c = _mmc_params(arrival_rate, service_rate, servers)
    x, lam, mu, c = broadcast(**{name: t_or_q}, arrival_rate=lam, service_rate=mu, servers=c)
    theta = c * mu - lam
    pw = erlang_c_unchecked(c, lam / mu)
    return x, mu, theta, pw


def mmc_response_time_sf(t, arrival_rate, service_rate, servers) -> np.ndarray:
    """Survival function P(T > t) of the M/M/c response time [-].

    P(T > t) = (1 - C) e^{-mu t} + C e^{-a t} [1 + a t phi((b - a) t)], with
    C = Erlang C, theta = c mu - lambda, a = min(mu, theta),
    b = max(mu, theta), phi(x) = (1 - e^{-x}) / x. Equal to 1 everywhere when
    the station is unstable (lambda >= c mu).

    Parameters
    ----------
    t : array_like
        Time [s], >= 0.
    arrival_rate : array_like
        Arrival rate lambda [1/s], >= 0.
    service_rate : array_like
        Service rate of one server mu [1/s], > 0.
    servers : array_like
        Number of servers c [count], integer >= 1.

    References
    ----------
    Gross, D., Harris, C. M. (1998). Fundamentals of Queueing Theory, 3rd ed.,
    sec. 2.3.4; Kleinrock (1975), Queueing Systems Vol. 1, sec. 3.5.
    """
    t = as_array(t, "t", nonnegative=True, allow_inf=True)
    t, mu, theta, pw = _prepare(t, arrival_rate, service_rate, servers, "t")
    unstable = theta <= 0.0
    theta = np.where(unstable, 1.0, theta)
    tt = np.where(np.isinf(t), 0.0, t)
    log_sf, _ = _log_sf_and_hazard(tt, pw, mu, theta)
    sf = np.exp(log_sf)
    sf = np.where(np.isinf(t), 0.0, sf)
    return np.where(unstable, 1.0, sf)


def mmc_response_time_cdf(t, arrival_rate, service_rate, servers) -> np.ndarray:
    """Distribution function P(T <= t) of the M/M/c response time [-].

    1 - :func:`mmc_response_time_sf`; 0 everywhere for an unstable station.

    References
    ----------
    Gross, D., Harris, C. M. (1998). Fundamentals of Queueing Theory, sec. 2.3.4.
    """
    return 1.0 - mmc_response_time_sf(t, arrival_rate, service_rate, servers)


def mmc_response_time_quantile(q, arrival_rate, service_rate, servers) -> np.ndarray:
    """q-quantile of the M/M/c FCFS response time [s], exact.

    Solves P(T > t) = 1 - q where T is the mixture (prob. 1 - C) Exp(mu) and
    (prob. C) Exp(c mu - lambda) + Exp(mu); see :func:`mmc_response_time_sf`.
    The root is bracketed by t_lo = -ln(1 - q) / mu (T >= S) and
    t_hi = ln(2 / (1 - q)) / mu + max(0, ln(2 C / (1 - q)) / theta) (union
    bound), then refined by safeguarded Newton steps on ln P(T > t) to a
    relative tolerance of 1e-14. ``inf`` when lambda >= c mu.

    Parameters
    ----------
    q : array_like
        Probability level, strictly inside (0, 1) (0.99 for p99).
    arrival_rate : array_like
        Arrival rate lambda [1/s], >= 0.
    service_rate : array_like
        Service rate of one server mu [1/s], > 0.
    servers : array_like
        Number of servers c [count], integer >= 1.

    Returns
    -------
    numpy.ndarray
        Response-time quantile [s], broadcast shape of the inputs.

    References
    ----------
    Gross, D., Harris, C. M. (1998). Fundamentals of Queueing Theory, 3rd ed.,
    sec. 2.3.4; Kleinrock (1975), Queueing Systems Vol. 1, eq. (3.44).
    """
    q = as_probability(q, "q")
    q, mu, theta, pw = _prepare(q, arrival_rate, service_rate, servers, "q")
    unstable = theta <= 0.0
    theta = np.where(unstable, 1.0, theta)
    target = np.log1p(-q)  # ln(1 - q)
    lo = -target / mu
    with np.errstate(divide="ignore"):
        tail_wait = np.maximum(0.0, (np.log(2.0 * pw) - np.log1p(-q)) / theta)
    hi = (np.log(2.0) - target) / mu + tail_wait
    t = 0.5 * (lo + hi)
    for _ in range(200):
        log_sf, hazard = _log_sf_and_hazard(t, pw, mu, theta)
        g = log_sf - target  # decreasing in t
        lo = np.where(g > 0.0, t, lo)
        hi = np.where(g <= 0.0, t, hi)
        step = g / hazard
        t_new = t + step
        outside = ~((t_new > lo) & (t_new < hi))
        t_new = np.where(outside, 0.5 * (lo + hi), t_new)
        done = np.abs(t_new - t) <= 1e-14 * t_new
        t = t_new
        if done.all():
            break
    return np.where(unstable, np.inf, t)


def mmc_waiting_time_quantile(q, arrival_rate, service_rate, servers) -> np.ndarray:
    """q-quantile of the M/M/c FCFS waiting time in queue [s], exact.

    P(W > t) = C e^{-(c mu - lambda) t}, so
    w_q = max(0, ln(C / (1 - q)) / (c mu - lambda)); ``inf`` when unstable.

    Parameters
    ----------
    q : array_like
        Probability level in (0, 1).
    arrival_rate, service_rate, servers : array_like
        lambda [1/s], mu [1/s], c [count] as in :func:`mmc_response_time`.

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (3.44).
    """
    q = as_probability(q, "q")
    q, mu, theta, pw = _prepare(q, arrival_rate, service_rate, servers, "q")
    unstable = theta <= 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.maximum(0.0, (np.log(pw) - np.log1p(-q)) / theta)
    return np.where(unstable, np.inf, w)


def mm1_response_time_quantile(q, arrival_rate, service_rate) -> np.ndarray:
    """q-quantile of the M/M/1 FCFS response time [s], exact.

    T ~ Exp(mu - lambda), so t_q = -ln(1 - q) / (mu - lambda); ``inf`` when
    lambda >= mu.

    Parameters
    ----------
    q : array_like
        Probability level in (0, 1).
    arrival_rate : array_like
        lambda [1/s], >= 0.
    service_rate : array_like
        mu [1/s], > 0.

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (3.27).
    """
    q = as_probability(q, "q")
    lam = as_array(arrival_rate, "arrival_rate", nonnegative=True)
    mu = as_array(service_rate, "service_rate", positive=True)
    q, lam, mu = broadcast(q=q, arrival_rate=lam, service_rate=mu)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = -np.log1p(-q) / (mu - lam)
    return np.where(lam >= mu, np.inf, t)


def mm1_waiting_time_quantile(q, arrival_rate, service_rate) -> np.ndarray:
    """q-quantile of the M/M/1 FCFS waiting time in queue [s], exact.

    P(W > t) = rho e^{-(mu - lambda) t}, so
    w_q = max(0, ln(rho / (1 - q)) / (mu - lambda)); ``inf`` when unstable.

    References
    ----------
    Kleinrock, L. (1975). Queueing Systems, Vol. 1, eq. (3.28).
    """
    return mmc_waiting_time_quantile(q, arrival_rate, service_rate, 1)
