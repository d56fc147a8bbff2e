"""End-to-end response-time quantiles along a path of stations.

A request crossing stations 1..K spends T = sum_k (W_k + S_k), the waiting
time W_k and service time S_k at each station. The approximation treats all
2K terms as independent (exact for a tandem of M/M/1 stations by Burke's and
Reich's theorems, an approximation for multi-server or non-exponential
stations; Burke 1969 shows the dependence in multi-server tandems) and
describes each station by

* W_k: 0 with probability 1 - P_k, else Exp(theta_k), where P_k is the Erlang C
  probability of waiting and 1/theta_k = E[W_k] / P_k (exact for M/M/c; for
  G/G/c the Allen-Cunneen mean and the Erlang C probability, the classic
  two-moment approximation of Tijms 1994 sec. 4.5 / Whitt 1993);
* S_k: a gamma distribution with the mean and squared coefficient of
  variation of the service time (exponential when c_s^2 = 1, deterministic
  when c_s^2 = 0).

Two evaluations of the quantile of T:

``"convolution"`` (default): every term is discretised on a common grid of
width h, bin masses P(i h < X <= (i+1) h), convolved with FFTs. If J is the
sum of the bin indices then J h <= T <= (J + n) h for n terms, so the
q-quantile is bracketed by [j_q h, (j_q + n) h]; the midpoint is returned and
h is chosen so that the half-width is <= ``rtol`` times the quantile. The only
error left is that of the independence / station approximations above.

``"gamma"``: a gamma distribution with the exact mean and variance of T
(two-moment matching). Cheap and vectorised; its error against the exact
hypoexponential of an M/M/1 tandem and against the convolution for M/M/c
paths is measured in docs/queueing.md (it is largest at p99.9).

The error of the independence assumption itself is measured against the
discrete-event simulator when it arrives (issue 5).

References
----------
Reich, E. (1957). Waiting times when queues are in tandem. Ann. Math. Stat.
28(3), 768-773.
Burke, P. J. (1956). The output of a queuing system. Oper. Res. 4(6), 699-704.
Burke, P. J. (1969). The dependence of service in tandem M/M/s queues. Oper.
Res. 17(4), 754-755.
Tijms, H. C. (1994). Stochastic Models: An Algorithmic Approach, ch. 4.
Whitt, W. (1993). Approximations for the GI/G/m queue. Production and
Operations Management 2(2), 114-161.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from perfmodel.queueing._validate import as_array, as_probability
from perfmodel.queueing.single import erlang_c_unchecked, ggc_waiting_time

__all__ = [
    "Sojourn",
    "gamma_quantile",
    "path_response_time_mean",
    "path_response_time_quantile",
    "sojourn_moments",
]


def sojourn_moments(wait_probability, mean_wait, service_time, service_scv=1.0):
    """Mean [s] and variance [s^2] of a sojourn W + S, vectorised over arrays.

    W is 0 with probability 1 - P and Exp with mean ``mean_wait / P`` otherwise
    (the Erlang C form, exact for M/M/c), S has mean ``service_time`` and
    squared coefficient of variation ``service_scv``; W and S independent:
    E = E[W] + E[S], Var = E[W]^2 (2 / P - 1) + c_s^2 E[S]^2
    (Tijms 1994, sec. 4.5). A station with ``mean_wait = inf`` has infinite
    moments.
    """
    p = as_array(wait_probability, "wait_probability", nonnegative=True)
    if (p > 1).any():
        raise ValueError("wait_probability: must lie in [0, 1]")
    w = as_array(mean_wait, "mean_wait", nonnegative=True, allow_inf=True)
    s = as_array(service_time, "service_time", nonnegative=True)
    cs2 = as_array(service_scv, "service_scv", nonnegative=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        var_w = np.where(w > 0, w * w * (2.0 / np.maximum(p, 1e-300) - 1.0), 0.0)
    var_w = np.where(np.isinf(w), np.inf, var_w)
    return w + s, var_w + cs2 * s * s


def gamma_quantile(q, mean, variance):
    """q-quantile [s] of the gamma distribution with this mean [s] and variance [s^2].

    Two-moment matching: shape = mean^2 / var, scale = var / mean. Infinite
    mean or variance give ``inf``; zero variance gives the mean.
    """
    q = as_probability(q, "q")
    m = as_array(mean, "mean", nonnegative=True, allow_inf=True)
    v = as_array(variance, "variance", nonnegative=True, allow_inf=True)
    q, m, v = np.broadcast_arrays(q, m, v)
    out = np.array(m, dtype=np.float64, copy=True)
    ok = np.isfinite(m) & np.isfinite(v) & (v > 0) & (m > 0)
    out[~(np.isfinite(m) & np.isfinite(v))] = np.inf
    # scipy.stats.gamma.ppf computes exactly this; scipy.special imports in a fraction of the time
    out[ok] = special.gammaincinv(m[ok] ** 2 / v[ok], q[ok]) * (v[ok] / m[ok])
    return out


def _positive_float(v, name: str, *, allow_zero: bool = False) -> float:
    x = float(as_array(v, name))
    if x < 0 or (x == 0 and not allow_zero):
        raise ValueError(f"{name}: must be {'>=' if allow_zero else '>'} 0")
    return x


@dataclass(frozen=True)
class Sojourn:
    """Sojourn time at one station as W + S (independent).

    Attributes
    ----------
    wait_probability : float
        P(W > 0) [-], in [0, 1].
    wait_rate : float
        theta [1/s]: W | W > 0 ~ Exp(theta); ``0`` marks a saturated station
        (infinite waiting).
    service_time : float
        E[S] [s], > 0.
    service_scv : float
        Squared coefficient of variation of S [-], >= 0.
    """

    wait_probability: float
    wait_rate: float
    service_time: float
    service_scv: float = 1.0

    def __post_init__(self) -> None:
        p = float(as_array(self.wait_probability, "wait_probability"))
        if not 0.0 <= p <= 1.0:
            raise ValueError("wait_probability: must lie in [0, 1]")
        _positive_float(self.wait_rate, "wait_rate", allow_zero=True)
        _positive_float(self.service_time, "service_time")
        _positive_float(self.service_scv, "service_scv", allow_zero=True)

    @property
    def saturated(self) -> bool:
        """True when the station has no steady state (infinite sojourn)."""
        return self.wait_rate == 0.0 and self.wait_probability > 0.0

    @classmethod
    def mmc(cls, arrival_rate: float, service_rate: float, servers: int = 1) -> Sojourn:
        """M/M/c station: P = Erlang C(c, lambda/mu), theta = c mu - lambda [1/s].

        Exact (Kleinrock 1975, eq. 3.44).
        """
        lam = _positive_float(arrival_rate, "arrival_rate", allow_zero=True)
        mu = _positive_float(service_rate, "service_rate")
        c = int(servers)
        if c != servers or c < 1:
            raise ValueError("servers: must be an integer >= 1")
        theta = c * mu - lam
        if theta <= 0:
            return cls(1.0, 0.0, 1.0 / mu, 1.0)
        pw = float(erlang_c_unchecked(np.float64(c), np.float64(lam / mu)))
        return cls(pw, theta, 1.0 / mu, 1.0)

    @classmethod
    def ggc(
        cls,
        arrival_rate: float,
        service_time: float,
        servers: int = 1,
        arrival_scv: float = 1.0,
        service_scv: float = 1.0,
    ) -> Sojourn:
        """G/G/c station: P = Erlang C, E[W] Allen-Cunneen, S gamma(c_s^2).

        theta = P / E[W], E[W] = C(c, a) E[S] / (c (1 - rho)) (c_a^2 + c_s^2) / 2
        (Allen 1990, sec. 6.5; Tijms 1994, sec. 4.5). For M/G/1 the
        waiting-time mean and P(W > 0) = rho are exact.
        """
        lam = _positive_float(arrival_rate, "arrival_rate", allow_zero=True)
        s = _positive_float(service_time, "service_time")
        c = int(servers)
        if c != servers or c < 1:
            raise ValueError("servers: must be an integer >= 1")
        cs2 = _positive_float(service_scv, "service_scv", allow_zero=True)
        w = float(ggc_waiting_time(lam, s, c, arrival_scv, service_scv))
        if np.isinf(w):
            return cls(1.0, 0.0, s, cs2)
        pw = float(erlang_c_unchecked(np.float64(c), np.float64(lam * s)))
        if pw == 0.0 or w == 0.0:
            return cls(0.0, 1.0, s, cs2)
        return cls(pw, pw / w, s, cs2)

    @classmethod
    def delay(cls, service_time: float, service_scv: float = 1.0) -> Sojourn:
        """A delay (infinite-server) station or a fixed latency: no waiting."""
        return cls(0.0, 1.0, service_time, service_scv)

    def mean(self) -> float:
        """E[W + S] = P / theta + E[S] [s]."""
        if self.saturated:
            return np.inf
        return self.wait_probability / self.wait_rate + self.service_time

    def variance(self) -> float:
        """Var[W + S] = (2 P - P^2) / theta^2 + c_s^2 E[S]^2 [s^2]."""
        if self.saturated:
            return np.inf
        p, th = self.wait_probability, self.wait_rate
        mean_wait = p / th if p > 0 else 0.0
        return float(sojourn_moments(p, mean_wait, self.service_time, self.service_scv)[1])

    # components used by the convolution: (sf, quantile) pairs
    def _components(self):
        comps = []
        p, th = self.wait_probability, self.wait_rate
        if p > 0.0:
            comps.append(
                (
                    lambda t, p=p, th=th: p * np.exp(-th * t),
                    lambda u, p=p, th=th: np.maximum(0.0, np.log(p / (1.0 - u)) / th),
                )
            )
        s, cs2 = self.service_time, self.service_scv
        if cs2 == 0.0:
            comps.append((lambda t, s=s: (t < s).astype(np.float64), lambda u, s=s: s + 0 * u))
        elif cs2 == 1.0:
            comps.append((lambda t, s=s: np.exp(-t / s), lambda u, s=s: -s * np.log1p(-u)))
        else:
            a, scale = 1.0 / cs2, s * cs2  # gamma(shape a, scale): sf and isf as scipy.stats.gamma's
            comps.append(
                (
                    lambda t, a=a, scale=scale: special.gammaincc(a, np.maximum(t, 0.0) / scale),
                    lambda u, a=a, scale=scale: special.gammainccinv(a, 1.0 - u) * scale,
                )
            )
        return comps


def path_response_time_mean(stations: Sequence[Sojourn]) -> float:
    """Mean end-to-end response time sum_k (P_k / theta_k + E[S_k]) [s].

    ``inf`` if any station is saturated.
    """
    return float(sum(s.mean() for s in _check_path(stations)))


def _check_path(stations) -> list[Sojourn]:
    stations = list(stations)
    if not stations or not all(isinstance(s, Sojourn) for s in stations):
        raise ValueError("stations: expected a non-empty sequence of Sojourn")
    return stations


def path_response_time_quantile(
    q,
    stations: Sequence[Sojourn],
    *,
    method: str = "convolution",
    rtol: float = 1e-3,
    max_bins: int = 1 << 22,
) -> np.ndarray:
    """q-quantile of the end-to-end response time along a path [s].

    Parameters
    ----------
    q : array_like
        Probability levels in (0, 1), e.g. ``[0.5, 0.95, 0.99, 0.999]``.
    stations : sequence of Sojourn
        The stations crossed, e.g. ``[Sojourn.mmc(800, 1000), Sojourn.ggc(...)]``.
    method : {"convolution", "gamma"}
        See the module docstring.
    rtol : float
        Convolution only: bound on the discretisation error relative to the
        quantile (the grid is refined until the bracket half-width is below
        rtol x quantile, unless that needs more than ``max_bins`` bins). The
        default 1e-3 is well below the error of the independence assumption;
        cost grows as 1 / rtol.
    max_bins : int
        Convolution only: largest grid.

    Returns
    -------
    numpy.ndarray
        Quantiles [s], shape of ``q``; ``inf`` if a station is saturated.

    Notes
    -----
    Convolution: T in [J h, (J + n) h] with J = sum of bin indices of the n
    independent terms, so the exact quantile of the modelled T lies within
    the returned value +- n h / 2. Gamma: shape = E[T]^2 / Var[T],
    scale = Var[T] / E[T], E and Var summed over stations.

    References
    ----------
    Reich (1957); Tijms (1994) ch. 4; see the module docstring.
    """
    q = as_probability(q, "q")
    stations = _check_path(stations)
    if method not in ("convolution", "gamma"):
        raise ValueError(f"method: expected 'convolution' or 'gamma', got {method!r}")
    if not (0 < rtol < 1):
        raise ValueError("rtol: must lie in (0, 1)")
    if any(s.saturated for s in stations):
        return np.full(q.shape, np.inf)
    if method == "gamma":
        mean = sum(s.mean() for s in stations)
        var = sum(s.variance() for s in stations)
        return gamma_quantile(q, mean, var)
    comps = [c for s in stations for c in s._components()]
    n = len(comps)
    q_lo, q_hi = float(q.min()), float(q.max())
    # a-priori bracket: T >= each term; union bound P(T > sum t_i) <= sum P(X_i > t_i)
    lo = max(float(qf(np.float64(q_lo))) for _, qf in comps)
    hi = sum(float(qf(np.float64(1.0 - (1.0 - q_hi) / n))) for _, qf in comps)
    if rtol < 1e-2:  # a coarse pass tightens the bracket, so the fine grid is smaller
        coarse_lo, coarse_hi = _convolved_bracket(q, comps, lo, hi, 1e-2, max_bins)
        lo, hi = max(lo, coarse_lo.min()), min(hi, coarse_hi.max())
    q_lower, q_upper = _convolved_bracket(q, comps, lo, hi, rtol, max_bins)
    return 0.5 * (q_lower + q_upper)


def _convolved_bracket(q, comps, t_lo, t_hi, rtol, max_bins):
    """Lower and upper bounds [j_q h, (j_q + n) h] of the quantiles of the sum."""
    n = len(comps)
    h = 2.0 * rtol * t_lo / n
    while True:
        bins = int(np.ceil(t_hi / h)) + n + 2
        if bins > max_bins:
            h = (t_hi + (n + 2) * h) / max_bins
            bins = max_bins
        edges = h * np.arange(bins + 1)
        size = 1 << int(np.ceil(np.log2(2 * bins)))
        pmf = None
        for sf, _ in comps:
            s_edges = np.asarray(sf(edges), dtype=np.float64)
            mass = s_edges[:-1] - s_edges[1:]
            mass[0] = 1.0 - s_edges[1]
            if pmf is None:
                pmf = mass
            else:  # linear convolution truncated to the grid (size >= 2 bins: no wrap-around)
                pmf = np.fft.irfft(np.fft.rfft(pmf, size) * np.fft.rfft(mass, size), size)[:bins]
        cdf = np.cumsum(pmf)
        j = np.searchsorted(cdf, q, side="left")
        if (j + n < bins).all():
            return h * j, h * (j + n)
        t_hi *= 2.0
