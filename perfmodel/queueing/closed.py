"""Exact solution of single-class closed product-form networks.

A closed network holds N customers that cycle between a think (delay) station
with mean think time Z [s] and K service stations. Station k has service
demand D_k = V_k S_k [s] (visits per cycle x mean service time per visit) and
one of three service laws:

* single server (``servers`` 1): queueing, FCFS exponential or PS;
* delay (``servers`` ``inf``): no queueing, residence time D_k;
* load dependent: c servers (``servers`` c > 1) or any
  :class:`~perfmodel.queueing.stations.LoadDependentRate` alpha(n), completing
  work at rate alpha(n) / D_k [1/s] with n present.

:func:`closed_network` returns throughput X(n) [1/s], response time R(n) [s]
and per-station residence times, queue lengths and utilisations for every
population n = 1 .. N.

Methods
-------
``"mva"`` (exact mean value analysis; Reiser & Lavenberg 1980). Single-server
stations use R_k(n) = D_k (1 + Q_k(n-1)) and X(n) = n / (Z + sum_k R_k(n)).
A load-dependent station with alpha(j) = alpha(m) for j >= m uses the exact
identity (sum over j of j D / alpha(j) p(j-1 | n-1), split at m)

    R(n) = D [ sum_{i=0}^{m-2} (i+1) (1/alpha(i+1) - 1/alpha(m)) p(i | n-1)
               + (Q(n-1) + 1) / alpha(m) ],

which for c servers is Bolch et al. (2006) eq. (8.40):
R = D/c [1 + Q(n-1) + sum_{i=0}^{c-2} (c-1-i) p(i | n-1)]. The marginal
probabilities are kept stable: p(j | n) = X(n) D / alpha(j) p(j-1 | n-1) for
j >= 1 (products of positive numbers), and, instead of the textbook
p(0 | n) = 1 - sum_{j>=1} p(j | n) whose cancellation makes the recursion
blow up (with an 80-server station it is off by > 1e-6 from n ~ 150 in the
benchmark network, and negative later), the exact ratio

    p(0 | n) = p(0 | n-1) X(n) / X_{-k}(n),

where X_{-k} is the throughput of the same network without station k. It
follows from p_k(0 | n) = G_{-k}(n) / G(n) and X(n) = G(n-1) / G(n), the
normalising-constant form of the marginal (Buzen 1973; Bruell & Balbo 1980). The
complement networks are solved the same way, memoised, so a network with L
load-dependent stations costs 2^L solutions of O(N (K + sum m)) each.

``"convolution"`` (log-domain convolution; Buzen 1973, Reiser & Kobayashi
1975): the normalising constant G(n) = sum over states of prod_k f_k(n_k),
f_k(j) = D_k^j / prod_{i<=j} alpha_k(i), f_delay(j) = Z^j / j!, computed as
log G in extended precision (numpy ``longdouble``) with demands scaled by the
largest D_k / alpha_k(m); X(n) = G(n-1) / G(n). Convolving a station whose
alpha is constant beyond m costs O(N m) because its tail is geometric. Used as
the independent reference for the MVA and for networks with many
load-dependent stations.

References
----------
Reiser, M., Lavenberg, S. S. (1980). Mean-value analysis of closed multichain
queuing networks. JACM 27(2), 313-322.
Lazowska, E. D. et al. (1984). Quantitative System Performance, ch. 6 and 8.
Bolch, G. et al. (2006). Queueing Networks and Markov Chains, 2nd ed., ch. 8.
Buzen, J. P. (1973). Computational algorithms for closed queueing networks
with exponential servers. CACM 16(9), 527-531.
Reiser, M., Kobayashi, H. (1975). Queuing networks with multiple closed chains:
theory and computational algorithms. IBM J. Res. Dev. 19(3), 283-294.
Bruell, S. C., Balbo, G. (1980). Computational Algorithms for Closed Queueing
Networks. North-Holland.
"""

from __future__ import annotations

import functools
import importlib.util
from typing import NamedTuple

import numpy as np

from perfmodel.queueing._validate import as_array
from perfmodel.queueing.stations import LoadDependentRate

__all__ = ["ClosedNetworkResult", "closed_network", "parse_stations", "HAVE_NUMBA"]

# numba is optional: the numpy kernel below gives the same numbers
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

# flush marginal probabilities below this to zero (their weight is < 1e-290 of
# any residence time) so that subnormal arithmetic cannot slow the loop down
_TINY = 1e-290


class ClosedNetworkResult(NamedTuple):
    """Solution of a closed network for every population 1 .. N.

    Attributes
    ----------
    population : numpy.ndarray, shape (N,)
        n = 1 .. N [count].
    throughput : numpy.ndarray, shape (N,)
        System throughput X(n) [1/s] (cycles through the think station per s).
    response_time : numpy.ndarray, shape (N,)
        Mean response time R(n) = sum_k R_k(n) [s], think time excluded;
        n / X(n) = Z + R(n) (Little's law).
    residence_time : numpy.ndarray, shape (N, K)
        Mean time per cycle spent at each station, queueing included [s].
    queue_length : numpy.ndarray, shape (N, K)
        Mean number present at each station, in service included [count].
    utilization : numpy.ndarray, shape (N, K)
        X(n) D_k / alpha_k(m): fraction of the station's peak rate in use [-]
        (per-server utilisation for c servers; 0 for delay stations).
    think_queue : numpy.ndarray, shape (N,)
        Mean number of customers thinking, X(n) Z [count].
    """

    population: np.ndarray
    throughput: np.ndarray
    response_time: np.ndarray
    residence_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    think_queue: np.ndarray


# ----------------------------------------------------------------------------
# station description
# ----------------------------------------------------------------------------


def parse_stations(servers, n_stations: int) -> list:
    """Normalise a ``servers`` specification to a list of station laws.

    Each entry of the result is ``1`` (single server), ``np.inf`` (delay) or a
    :class:`LoadDependentRate` (c > 1 servers become
    ``LoadDependentRate.multi_server(c)``).

    Raises
    ------
    ValueError
        Naming ``servers`` when the length does not match the demands or an
        entry is not an integer >= 1, ``inf`` or a LoadDependentRate.
    """
    if isinstance(servers, LoadDependentRate):
        servers = [servers]
    elif np.ndim(servers) == 0 and not isinstance(servers, list | tuple):
        servers = [servers] * n_stations
    servers = list(servers)
    if len(servers) != n_stations:
        raise ValueError(f"servers: {len(servers)} entries for {n_stations} stations (demands)")
    out: list = []
    for i, s in enumerate(servers):
        if isinstance(s, LoadDependentRate):
            out.append(s)
            continue
        try:
            v = float(s)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"servers: entry {i} must be a count >= 1, inf or a LoadDependentRate") from exc
        if np.isnan(v) or v < 1 or (np.isfinite(v) and v != np.floor(v)):
            raise ValueError(f"servers: entry {i} must be an integer >= 1 or inf (got {s!r})")
        if np.isinf(v):
            out.append(np.inf)
        elif v == 1:
            out.append(1)
        else:
            out.append(LoadDependentRate.multi_server(int(v)))
    return out


# ----------------------------------------------------------------------------
# MVA kernels (numba and numpy give the same numbers)
# ----------------------------------------------------------------------------


def _mva_loop(n_max, z, dq, dl, alpha, m, inv_peak, w, xcomp, comp_empty, x, r, q):
    """Exact MVA with stable marginals, explicit loops (compiled by numba)."""
    kq = dq.shape[0]
    nl = dl.shape[0]
    k_all = kq + nl
    width = alpha.shape[1] if nl > 0 else 1
    p = np.zeros((max(nl, 1), max(width, 1)))
    for ll in range(nl):
        p[ll, 0] = 1.0
    for n in range(1, n_max + 1):
        total = z
        for k in range(kq):
            rk = dq[k] * (1.0 + q[n - 1, k])
            r[n, k] = rk
            total += rk
        for ll in range(nl):
            s = (q[n - 1, kq + ll] + 1.0) * inv_peak[ll]
            top = min(m[ll] - 1, n)
            for i in range(top):
                s += w[ll, i] * p[ll, i]
            rk = dl[ll] * s
            r[n, kq + ll] = rk
            total += rk
        xn = n / total
        x[n] = xn
        for k in range(k_all):
            q[n, k] = xn * r[n, k]
        for ll in range(nl):
            top = min(m[ll] - 2, n)
            f = xn * dl[ll]
            for i in range(top, 0, -1):
                v = f / alpha[ll, i - 1] * p[ll, i - 1]
                if v < _TINY:
                    v = 0.0
                p[ll, i] = v
            if comp_empty[ll]:
                p[ll, 0] = 0.0
            else:
                v = p[ll, 0] * (xn / xcomp[ll, n])
                if v < _TINY:
                    v = 0.0
                p[ll, 0] = v


def _mva_numpy(n_max, z, dq, dl, alpha, m, inv_peak, w, xcomp, comp_empty, x, r, q):
    """Same recursion as :func:`_mva_loop`, vectorised over stations with numpy."""
    kq = dq.shape[0]
    nl = dl.shape[0]
    width = alpha.shape[1] if nl > 0 else 1
    p = np.zeros((nl, width))
    p[:, 0] = 1.0
    ratio = dl[:, None] / alpha if nl else np.zeros((0, width))
    # entries of p beyond m_l - 2 are never used: keep them at zero
    keep = (np.arange(width)[None, :] <= (m[:, None] - 2)) | (np.arange(width)[None, :] == 0)
    ok = ~comp_empty
    rk = np.empty(kq + nl)
    qprev = np.zeros(kq + nl)
    for n in range(1, n_max + 1):
        rk[:kq] = dq * (1.0 + qprev[:kq])
        if nl:
            rk[kq:] = dl * ((qprev[kq:] + 1.0) * inv_peak + (w * p).sum(axis=1))
        xn = n / (z + rk.sum())
        x[n] = xn
        r[n] = rk
        qprev = xn * rk
        q[n] = qprev
        if nl:
            p0 = np.where(ok, p[:, 0] * (xn / np.where(ok, xcomp[:, n], 1.0)), 0.0)
            p[:, 1:] = (xn * ratio[:, :-1]) * p[:, :-1]
            p[:, 0] = p0
            p[(p < _TINY) | ~keep] = 0.0


@functools.cache
def _mva_kernel():
    """The MVA loop compiled by numba, else the numpy kernel.

    numba is imported on first use, not with perfmodel: it costs ~0.1 s, which
    every process would pay (worker processes, the command line) even when no
    network is solved by exact MVA.
    """
    if not HAVE_NUMBA:  # pragma: no cover
        return _mva_numpy
    import numba

    return numba.njit(cache=True, nogil=True)(_mva_loop)


class _Net:
    """Validated network with zero-demand stations and delays separated out."""

    def __init__(self, demands, servers, think_time):
        d = as_array(demands, "demands", nonnegative=True)
        if d.ndim != 1 or d.size == 0:
            raise ValueError("demands: expected a non-empty 1-d array (one per station)")
        z = float(as_array(think_time, "think_time", nonnegative=True))
        laws = parse_stations(servers, d.size)
        self.k = d.size
        self.demands = d
        self.laws = laws
        self.z_user = z
        z_total = z
        self.q_idx: list[int] = []
        self.ld_idx: list[int] = []
        self.delay_idx: list[int] = []
        for i, (di, law) in enumerate(zip(d, laws, strict=True)):
            if law is np.inf:
                self.delay_idx.append(i)
                z_total += di
            elif di == 0.0:
                continue
            elif law == 1:
                self.q_idx.append(i)
            elif law.plateau == 1:  # constant rate: a single server of demand D / alpha
                self.q_idx.append(i)
            else:
                self.ld_idx.append(i)
        self.z = z_total
        if z_total == 0.0 and not self.q_idx and not self.ld_idx:
            raise ValueError("demands: all demands and think_time are zero (infinite throughput)")
        self.dq = np.array(
            [d[i] / (1.0 if self.laws[i] == 1 else self.laws[i].peak) for i in self.q_idx],
            dtype=np.float64,
        )
        self.dl = np.array([d[i] for i in self.ld_idx], dtype=np.float64)
        nl = len(self.ld_idx)
        width = max([self.laws[i].plateau for i in self.ld_idx], default=1)
        self.alpha = np.ones((nl, width))
        self.m = np.ones(nl, dtype=np.int64)
        for j, i in enumerate(self.ld_idx):
            a = self.laws[i].multipliers
            self.alpha[j, : a.size] = a
            self.alpha[j, a.size :] = a[-1]
            self.m[j] = a.size
        self.inv_peak = 1.0 / self.alpha[np.arange(nl), self.m - 1] if nl else np.zeros(0)
        # w[l, i] = (i + 1) (1 / alpha(i + 1) - 1 / alpha(m)) for i <= m - 2, else 0
        idx = np.arange(width)
        self.w = (idx + 1.0)[None, :] * (1.0 / self.alpha - self.inv_peak[:, None])
        self.w[idx[None, :] > (self.m[:, None] - 2)] = 0.0

    def peak_of(self, i: int) -> float:
        law = self.laws[i]
        if law is np.inf:
            return np.inf
        if law == 1:
            return 1.0
        return law.peak


def _run_mva(net: _Net, n_max: int, subset: tuple[int, ...], memo: dict, backend):
    """Solve the network with LD stations ``subset`` (positions in net.ld_idx)."""
    nl = len(subset)
    xcomp = np.ones((nl, n_max + 1))
    comp_empty = np.zeros(nl, dtype=np.bool_)
    for j, ll in enumerate(subset):
        rest = tuple(s for s in subset if s != ll)
        if net.z == 0.0 and net.dq.size == 0 and not rest:
            comp_empty[j] = True
            continue
        if rest not in memo:
            memo[rest] = _run_mva(net, n_max, rest, memo, backend)[0]
        xcomp[j] = memo[rest]
    sel = list(subset)
    k_all = net.dq.size + nl
    x = np.zeros(n_max + 1)
    r = np.zeros((n_max + 1, k_all))
    q = np.zeros((n_max + 1, k_all))
    backend(
        n_max,
        net.z,
        net.dq,
        net.dl[sel],
        np.ascontiguousarray(net.alpha[sel]) if nl else np.ones((0, 1)),
        net.m[sel],
        net.inv_peak[sel],
        np.ascontiguousarray(net.w[sel]) if nl else np.zeros((0, 1)),
        xcomp,
        comp_empty,
        x,
        r,
        q,
    )
    return x, r, q


# ----------------------------------------------------------------------------
# log-domain convolution (extended precision)
# ----------------------------------------------------------------------------

_LD = np.longdouble


def _logcumsumexp(v: np.ndarray) -> np.ndarray:
    return np.logaddexp.accumulate(v)


def _convolve_station(lg_old: np.ndarray, d: float, alpha: np.ndarray | None) -> np.ndarray:
    """log of G_new(n) = sum_j f(j) G_old(n - j) for one station, all n.

    ``alpha`` None means a single server (alpha = 1). ``d`` is the scaled demand.
    """
    n_max = lg_old.size - 1
    if alpha is None:
        alpha = np.ones(1)
    alpha = np.asarray(alpha, dtype=_LD)
    m = alpha.size
    log_d = np.log(_LD(d))
    # log f(j) for j = 0 .. m
    log_f = np.zeros(m + 1, dtype=_LD)
    log_f[1:] = np.cumsum(log_d - np.log(alpha))
    log_r = log_d - np.log(alpha[-1])
    # tail: B(n) = f(m) r^{n-m} sum_{u=0}^{n-m} r^{-u} G_old(u), n >= m
    out = np.full(n_max + 1, -np.inf, dtype=_LD)
    if n_max >= m:
        u = np.arange(n_max - m + 1, dtype=_LD)
        c = _logcumsumexp(lg_old[: n_max - m + 1] - u * log_r)
        out[m:] = log_f[m] + u * log_r + c
    # head: A(n) = sum_{j=0}^{min(n, m-1)} f(j) G_old(n - j)
    width = m  # j = 0 .. m-1
    padded = np.concatenate([np.full(width - 1, -np.inf, dtype=_LD), lg_old])
    head = np.empty(n_max + 1, dtype=_LD)
    chunk = max(1, 2_000_000 // width)
    lf = log_f[:width][::-1]  # aligned with window positions (oldest first)
    for start in range(0, n_max + 1, chunk):
        stop = min(n_max + 1, start + chunk)
        win = np.lib.stride_tricks.sliding_window_view(padded[start : stop + width - 1], width)
        terms = win + lf[None, :]
        mx = terms.max(axis=1)
        mx_safe = np.where(np.isfinite(mx), mx, 0)
        with np.errstate(divide="ignore"):
            head[start:stop] = mx_safe + np.log(np.exp(terms - mx_safe[:, None]).sum(axis=1))
    return np.logaddexp(out, head)


def _log_g(net: _Net, n_max: int, scale: float, skip: int | None = None) -> np.ndarray:
    """log G(n), n = 0..N, of the scaled network, optionally without LD station ``skip``."""
    n = np.arange(n_max + 1, dtype=_LD)
    if net.z > 0:
        log_fact = np.concatenate([[_LD(0)], np.cumsum(np.log(n[1:]))])
        lg = n * np.log(_LD(net.z) / _LD(scale)) - log_fact
    else:
        lg = np.full(n_max + 1, -np.inf, dtype=_LD)
        lg[0] = 0
    for d in net.dq:
        lg = _convolve_station(lg, d / scale, None)
    for j in range(len(net.ld_idx)):
        if j == skip:
            continue
        lg = _convolve_station(lg, net.dl[j] / scale, net.alpha[j, : net.m[j]])
    return lg


def _scale_of(net: _Net) -> float:
    cands = list(net.dq) + [net.dl[j] * net.inv_peak[j] for j in range(len(net.ld_idx))]
    s = max(cands, default=0.0)
    return s if s > 0 else max(net.z, 1.0)


def _run_convolution(net: _Net, n_max: int):
    scale = _scale_of(net)
    lg = _log_g(net, n_max, scale)
    x = np.zeros(n_max + 1)
    x[1:] = (np.exp(lg[:-1] - lg[1:]) / _LD(scale)).astype(np.float64)
    nq, nl = net.dq.size, len(net.ld_idx)
    r = np.zeros((n_max + 1, nq + nl))
    q = np.zeros((n_max + 1, nq + nl))
    for k in range(nq):  # exact MVA identity Q_k(n) = X(n) D_k (1 + Q_k(n-1))
        for n in range(1, n_max + 1):
            r[n, k] = net.dq[k] * (1.0 + q[n - 1, k])
            q[n, k] = x[n] * r[n, k]
    for j in range(nl):
        lg_minus = _log_g(net, n_max, scale, skip=j)
        m = int(net.m[j])
        d = net.dl[j] / scale
        alpha = net.alpha[j, :m].astype(_LD)
        log_f = np.zeros(max(m - 1, 1), dtype=_LD)
        if m > 1:
            log_f[1:] = np.cumsum(np.log(_LD(d)) - np.log(alpha[: m - 2]))[: m - 2]
        w = net.w[j, : m - 1]
        # sum_i w_i p(i | n-1), p(i | n) = f(i) G_{-j}(n - i) / G(n)
        acc = np.zeros(n_max + 1)
        chunk = max(1, 2_000_000 // max(m, 1))
        for start in range(0, n_max, chunk):
            stop = min(n_max, start + chunk)  # populations n-1 = start .. stop-1
            nn = np.arange(start, stop)
            ii = np.arange(m - 1)
            idx = nn[:, None] - ii[None, :]
            valid = idx >= 0
            lgm = np.where(valid, lg_minus[np.maximum(idx, 0)], -np.inf)
            logp = lgm + log_f[None, : m - 1] - lg[nn][:, None]
            with np.errstate(under="ignore"):
                p = np.exp(logp).astype(np.float64)
            acc[start + 1 : stop + 1] = p @ w
        for n in range(1, n_max + 1):
            r[n, nq + j] = net.dl[j] * ((q[n - 1, nq + j] + 1.0) * net.inv_peak[j] + acc[n])
            q[n, nq + j] = x[n] * r[n, nq + j]
    return x, r, q


# ----------------------------------------------------------------------------
# public entry point
# ----------------------------------------------------------------------------


def _closed_inputs(demands, population, think_time, method: str):
    """``(population, demands, think times)`` checked: a whole population >= 1, demands >= 0 with
    stations on the last axis, think times broadcast to the batch."""
    if method not in ("auto", "mva", "convolution"):
        raise ValueError(f"method: expected 'auto', 'mva' or 'convolution', got {method!r}")
    try:
        n_max = int(population)
    except (TypeError, ValueError) as exc:
        raise ValueError("population: must be an integer >= 1") from exc
    if n_max != population or n_max < 1:
        raise ValueError(f"population: must be an integer >= 1 (got {population!r})")
    d = as_array(demands, "demands", nonnegative=True)
    if d.ndim == 0:
        d = d.reshape(1)
    z = as_array(think_time, "think_time", nonnegative=True)
    try:
        z = np.broadcast_to(z, d.shape[:-1])
    except ValueError as exc:
        raise ValueError(
            f"think_time, demands: shapes do not broadcast (think_time {z.shape}, "
            f"demands {d.shape} with stations on the last axis)"
        ) from exc
    return n_max, d, z


def closed_network(
    demands,
    servers,
    think_time,
    population,
    *,
    method: str = "auto",
) -> ClosedNetworkResult:
    """Exact solution of a single-class closed network for populations 1 .. N.

    Parameters
    ----------
    demands : array_like, shape (K,) or (..., K)
        Service demand per cycle D_k = V_k S_k of each station [s], >= 0. For a
        load-dependent station D_k is the demand at unit rate: it is served
        at rate alpha_k(n) / D_k [1/s] with n present. Leading dimensions are
        a batch of networks solved one after the other.
    servers : int, float or sequence, length K
        Per station: 1 (single server), an integer c > 1 (c servers,
        alpha(n) = min(n, c)), ``inf`` (delay / infinite server) or a
        :class:`LoadDependentRate`. A scalar applies to every station.
    think_time : float or array_like broadcasting with demands[..., 0]
        Mean think time Z of the client (delay) station [s], >= 0.
    population : int
        Largest population N [count], >= 1; results cover n = 1 .. N.
    method : {"auto", "mva", "convolution"}
        "mva": exact MVA with stable marginals (compiled with numba when it
        is installed); "convolution": log-domain convolution in extended
        precision, the independent reference; "auto": "mva" unless the
        network has more than 8 multi-server / load-dependent stations.

    Returns
    -------
    ClosedNetworkResult
        Arrays for n = 1 .. N (batch dimensions first): ``population``,
        ``throughput`` X(n) [1/s], ``response_time`` R(n) [s] (think time
        excluded, n = X(n) (Z + R(n))), ``residence_time`` [s],
        ``queue_length`` [count] and ``utilization`` [-] of each station
        (last axis K), and ``think_queue`` X(n) Z [count].

    Notes
    -----
    MVA (Reiser & Lavenberg 1980):
    R_k(n) = D_k (1 + Q_k(n-1)) for a single server, R_k(n) = D_k for a delay,
    R_k(n) = D_k [sum_{i<=m-2} (i+1)(1/alpha(i+1) - 1/alpha(m)) p_k(i|n-1)
    + (Q_k(n-1) + 1)/alpha(m)] for a load-dependent station,
    X(n) = n / (Z + sum_k R_k(n)), Q_k(n) = X(n) R_k(n),
    p_k(j|n) = X(n) D_k / alpha(j) p_k(j-1|n-1) and
    p_k(0|n) = p_k(0|n-1) X(n) / X_{-k}(n) (complement network without k).
    See the module docstring for the convolution method.

    References
    ----------
    Reiser, M., Lavenberg, S. S. (1980). JACM 27(2), 313-322.
    Lazowska, E. D. et al. (1984). Quantitative System Performance, ch. 6, 8.
    Bolch, G. et al. (2006). Queueing Networks and Markov Chains, sec. 8.2.
    """
    n_max, d, z = _closed_inputs(demands, population, think_time, method)
    batch = d.shape[:-1]
    if batch:
        parts = [_solve_one(d[idx], servers, float(z[idx]), n_max, method) for idx in np.ndindex(*batch)]
        fields = [
            np.stack([p[f] for p in parts]).reshape(batch + parts[0][f].shape)
            for f in range(len(ClosedNetworkResult._fields))
        ]
        return ClosedNetworkResult(*fields)
    return _solve_one(d, servers, float(z), n_max, method)


def _solve_one(d, servers, z, n_max, method) -> ClosedNetworkResult:
    net = _Net(d, servers, z)
    nl = len(net.ld_idx)
    if method == "auto":
        method = "mva" if nl <= 8 else "convolution"
    if method == "mva":
        x, r, q = _run_mva(net, n_max, tuple(range(nl)), {}, _mva_kernel())
    else:
        x, r, q = _run_convolution(net, n_max)
    x = x[1:]
    k = net.k
    res = np.zeros((n_max, k))
    ql = np.zeros((n_max, k))
    util = np.zeros((n_max, k))
    cols = net.q_idx + net.ld_idx
    res[:, cols] = r[1:]
    ql[:, cols] = q[1:]
    for i in cols:
        util[:, i] = x * net.demands[i] / net.peak_of(i)
    for i in net.delay_idx:
        res[:, i] = net.demands[i]
        ql[:, i] = x * net.demands[i]
    return ClosedNetworkResult(
        population=np.arange(1, n_max + 1),
        throughput=x,
        response_time=res.sum(axis=1),
        residence_time=res,
        queue_length=ql,
        utilization=util,
        think_queue=x * net.z_user,
    )
