"""Cache hit ratio: uniform (exact), LRU under an explicit popularity (Che), LRU under Zipf.

Glossary and units: ``cache_items`` C [items] (objects the cache holds),
``n_items`` N [items] (objects in the data set), ``popularity`` p_i [-] (the
probability that a request is for item i; sums to 1), ``s`` the Zipf exponent
[-] (p_i proportional to i^-s over ranks i = 1..N), ``cache_bytes``,
``dataset_bytes``, ``object_bytes`` [B]. A hit ratio is a fraction of requests
[-] in [0, 1]. Requests follow the independent reference model (IRM): each
request picks item i with probability p_i, independently of the past.

Che's approximation (Che, Tung & Wang 2002; justified asymptotically by
Fricker, Robert & Roberts 2012) treats an LRU cache of C items as a TTL cache
with one *characteristic time* T [requests]: an item is in the cache if it was
requested within the last T requests, so

    sum_i (1 - exp(-p_i T)) = C,          hit ratio = sum_i p_i (1 - exp(-p_i T)).

Against exact LRU simulation it is typically within 1-2 % absolute (see the
unit tests, which measure it). For uniform popularity every policy that keeps C
of N equally likely items hits with probability C / N, exactly.

Zipf popularity over up to ~1e10 items (a table of billions of rows) is summed
as: ranks 1..256 exactly, ranks 257..N by the Euler-Maclaurin formula up to
the first derivative term, with the integral done by composite 8-point
Gauss-Legendre quadrature in log(rank). Against the exact Che sum over N = 1e6
items the difference is below 1e-9 absolute in the hit ratio (unit tests).

A non-integer N (``dataset_bytes / object_bytes``) is a population of floor(N)
whole items plus one item counted with weight N - floor(N) in every sum, so
results are continuous in N and s = 0 reproduces C / N exactly.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from perfmodel.inputs._validate import as_array, broadcast
from perfmodel.inputs.keys import HOT_DEFAULTS, KEY_DISTRIBUTIONS, SPECIAL_ITERATIONS, YCSB_RANKS

__all__ = [
    "che_characteristic_time",
    "hit_ratio",
    "hit_ratios",
    "key_classes",
    "lru_hit_ratio_che",
    "piecewise_hit_ratio",
    "scrambled_zipf_classes",
    "uniform_hit_ratio",
    "zipf_hit_ratio",
]

DISTRIBUTIONS = KEY_DISTRIBUTIONS

_HEAD = 256  # Zipf ranks summed exactly; ranks above go to Euler-Maclaurin
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)
_PANEL_WIDTH = 0.3  # width of one quadrature panel in log(rank), for s <= 3
_MAX_PANELS = 256
_CHUNK_ELEMS = 1 << 21  # rows x columns evaluated at once in the root solves
_POPULARITY_TOL = 1e-9
_LOG_BIG = 700.0  # exponents are clamped here: exp(-e^700) is 0 anyway, and nothing overflows


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------


def _items(value, name: str) -> np.ndarray:
    """A non-negative, finite item count or size (NaN, inf and negatives rejected)."""
    return as_array(value, name, nonnegative=True)


def _log_neg_log1p_neg(c: np.ndarray, n) -> np.ndarray:
    """log(-log(1 - c / n)) for 0 < c < n, also when c / n underflows (then ~ log c - log n)."""
    r = c / n
    with np.errstate(divide="ignore"):
        exact = np.log(-np.log1p(-np.maximum(r, 1e-300)))
    return np.where(r > 1e-300, exact, np.log(c) - np.log(n))


def _solve_log_root(occupancy, lo: np.ndarray, hi: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Solve occupancy(y) = target for y in [lo, hi], vectorised over rows.

    ``occupancy(y, rows)`` returns (value, d value / d y) for the rows selected by the
    integer index array ``rows``; the value increases with y. A safeguarded
    Newton iteration: a Newton step that leaves the current bracket is replaced
    by bisection, so it converges for every row (Press et al., Numerical
    Recipes, 3rd ed., sec. 9.4, ``rtsafe``).
    """
    lo, hi = lo.copy(), hi.copy()
    # widen any bracket the bounds got wrong (they are analytic bounds, so this is a guard)
    for _ in range(60):
        f_lo, _d = occupancy(lo, np.arange(lo.size))
        bad = f_lo > target
        if not bad.any():
            break
        lo[bad] -= 2.0
    for _ in range(60):
        f_hi, _d = occupancy(hi, np.arange(hi.size))
        bad = f_hi < target
        if not bad.any():
            break
        hi[bad] += 2.0
    y = 0.5 * (lo + hi)
    active = np.arange(y.size)
    for _ in range(200):
        if active.size == 0:
            break
        ya, la, ha, ta = y[active], lo[active], hi[active], target[active]
        f, d = occupancy(ya, active)
        f = f - ta
        la = np.where(f < 0, ya, la)
        ha = np.where(f > 0, ya, ha)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            step = f / d
        y_new = ya - step
        off = ~((y_new > la) & (y_new < ha))  # also catches NaN
        y_new = np.where(off, 0.5 * (la + ha), y_new)
        scale = 1.0 + np.abs(ya)
        done = (np.abs(f) <= 1e-13 * ta) | (ha - la <= 1e-14 * scale) | (np.abs(y_new - ya) <= 1e-15 * scale)
        y[active] = np.where(done, ya, y_new)
        lo[active], hi[active] = la, ha
        active = active[~done]
    return y


# ----------------------------------------------------------------------------
# uniform
# ----------------------------------------------------------------------------


def uniform_hit_ratio(cache_items, n_items) -> np.ndarray:
    """Hit ratio of a cache of C items over N equally popular items [-].

    Parameters
    ----------
    cache_items : array_like
        Cache capacity C [items], >= 0 (may be fractional).
    n_items : array_like
        Number of items N in the data set [items], >= 0.

    Returns
    -------
    numpy.ndarray
        h = min(1, C / N) [-]; 1 when N = 0 (nothing can miss). Exact for LRU,
        FIFO, RANDOM or any policy that keeps the cache full, under the
        independent reference model with uniform popularity: every item is
        requested with probability 1 / N and C of them are in the cache.

    References
    ----------
    King, W. F. (1971). Analysis of demand paging algorithms. IFIP Congress,
    pp. 485-490 (hit ratio of the IRM under uniform references).
    Che, H., Tung, Y., Wang, Z. (2002). Hierarchical Web caching systems:
    modeling, design and experimental results. IEEE JSAC 20(7), 1305-1314.
    """
    c = _items(cache_items, "cache_items")
    n = _items(n_items, "n_items")
    c, n = broadcast(cache_items=c, n_items=n)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        h = np.minimum(1.0, c / n)
    return np.where(c >= n, 1.0, h)


# ----------------------------------------------------------------------------
# Che's approximation with an explicit popularity vector
# ----------------------------------------------------------------------------


def _popularity(popularity) -> np.ndarray:
    p = as_array(popularity, "popularity", nonnegative=True)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"popularity: must be a non-empty 1-D array (got shape {p.shape})")
    total = p.sum()
    if abs(total - 1.0) > _POPULARITY_TOL:
        raise ValueError(f"popularity: probabilities must sum to 1 (got {total!r})")
    return p


def _che_solve(c: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T, hit ratio) for the distinct capacities ``c`` (1-D) and positive probabilities ``p``."""
    n_pos = p.size
    t_out = np.empty_like(c)
    h_out = np.empty_like(c)
    full = c >= n_pos
    zero = c <= 0
    t_out[full], h_out[full] = np.inf, 1.0
    t_out[zero & ~full], h_out[zero & ~full] = 0.0, 0.0
    todo = np.flatnonzero(~full & ~zero)
    if todo.size == 0:
        return t_out, h_out
    logp = np.log(p)
    rows = max(1, _CHUNK_ELEMS // n_pos)
    for start in range(0, todo.size, rows):
        idx = todo[start : start + rows]
        ci = c[idx]

        def occupancy(y, sel):  # every row shares p, so the row selection is not needed
            z = np.exp(np.minimum(y[:, None] + logp[None, :], _LOG_BIG))  # p_i T
            e = np.exp(-z)
            return (-np.expm1(-z)).sum(axis=1), (z * e).sum(axis=1)

        # sum_i (1 - e^{-p_i T}) <= T  gives T >= C; every term >= 1 - e^{-p_min T} bounds T above
        lo = np.log(ci)
        hi = _log_neg_log1p_neg(ci, n_pos) - logp.min()
        y = _solve_log_root(occupancy, lo, hi, ci)
        z = np.exp(np.minimum(y[:, None] + logp[None, :], _LOG_BIG))
        with np.errstate(over="ignore"):  # T beyond 1.8e308 requests is reported as inf
            t_out[idx] = np.exp(y)
        h_out[idx] = np.clip((p[None, :] * -np.expm1(-z)).sum(axis=1), 0.0, 1.0)
    return t_out, h_out


def _che(cache_items, popularity) -> tuple[np.ndarray, np.ndarray]:
    c = _items(cache_items, "cache_items")
    p = _popularity(popularity)
    p = p[p > 0]  # items never requested never enter the cache
    uniq, inverse = np.unique(c.ravel(), return_inverse=True)
    t, h = _che_solve(uniq, p)
    return t[inverse].reshape(c.shape), h[inverse].reshape(c.shape)


def che_characteristic_time(cache_items, popularity) -> np.ndarray:
    """Characteristic time T of an LRU cache under Che's approximation [requests].

    Parameters
    ----------
    cache_items : array_like
        Cache capacity C [items], >= 0; any shape (one T per element).
    popularity : array_like
        1-D request probabilities p_i [-] of the N items, >= 0, summing to 1
        (within 1e-9).

    Returns
    -------
    numpy.ndarray
        T [requests] solving sum_i (1 - exp(-p_i T)) = C: an item stays cached
        for T requests after its last request. Divide by the request rate
        [1/s] for T in seconds. T = 0 for C = 0 and T = inf when C is at least
        the number of items with p_i > 0 (everything requested fits).
        Solved by safeguarded Newton in log T to ~1e-14 relative.

    References
    ----------
    Che, H., Tung, Y., Wang, Z. (2002). Hierarchical Web caching systems:
    modeling, design and experimental results. IEEE JSAC 20(7), 1305-1314.
    Fricker, C., Robert, P., Roberts, J. (2012). A versatile and accurate
    approximation for LRU cache performance. Proc. ITC 24.
    """
    return _che(cache_items, popularity)[0]


def lru_hit_ratio_che(cache_items, popularity) -> np.ndarray:
    """LRU hit ratio for an explicit popularity vector, Che's approximation [-].

    Parameters
    ----------
    cache_items : array_like
        Cache capacity C [items], >= 0; any shape (one hit ratio per element).
    popularity : array_like
        1-D request probabilities p_i [-] of the N items, >= 0, summing to 1
        (within 1e-9).

    Returns
    -------
    numpy.ndarray
        h = sum_i p_i (1 - exp(-p_i T)) [-] with T from
        :func:`che_characteristic_time`; 0 for C = 0, 1 when C is at least the
        number of items with p_i > 0. Typically within 1-2 % absolute of exact
        LRU under the independent reference model.

    References
    ----------
    Che, Tung & Wang (2002), IEEE JSAC 20(7); Fricker, Robert & Roberts (2012),
    Proc. ITC 24 (accuracy and asymptotic justification).
    """
    return _che(cache_items, popularity)[1]


# ----------------------------------------------------------------------------
# Zipf popularity over up to ~1e10 items
# ----------------------------------------------------------------------------


def _zipf_layout(n: np.ndarray, s: np.ndarray):
    """Points (log rank) and weights representing sum over ranks 1..N for each row.

    sum_{i=1}^{N} g(i) ~= sum_j m_j g(u_j) + (g'(b) - g'(a)) / 12 with

    * head: ranks 1..min(N, _HEAD + 1), weight clip(N - i + 1, 0, 1) (the last,
      fractional item of a non-integer N has weight N - floor(N));
    * tail (N >= _HEAD + 1): Euler-Maclaurin over [a, b] = [_HEAD + 1, N],
      integral by Gauss-Legendre in log u (du = u d log u), endpoints weight 1/2.

    Returns (log_u, m, has_tail, log_a, log_b) with log_u, m of shape (rows, cols).
    """
    rows = n.size
    head = np.arange(1, _HEAD + 2, dtype=np.float64)
    has_tail = n >= _HEAD + 1
    m_head = np.clip(n[:, None] - (head - 1.0)[None, :], 0.0, 1.0)
    m_head[has_tail, _HEAD] = 0.0  # rank _HEAD + 1 belongs to the tail there
    log_a = np.full(rows, np.log(_HEAD + 1.0))
    log_b = np.log(np.maximum(n, _HEAD + 1.0))
    span = log_b - log_a
    width = _PANEL_WIDTH / np.maximum(1.0, s / 3.0)
    panels = np.where(has_tail, np.clip(np.ceil(span / width), 1, _MAX_PANELS), 0).astype(np.int64)
    n_panels = int(panels.max()) if rows else 0
    k = _GL_NODES.size
    if n_panels:
        h = np.where(panels > 0, span / np.maximum(panels, 1), 0.0)
        p_idx = np.arange(n_panels)
        # node positions: log_a + h * (panel + (x + 1) / 2)
        frac = p_idx[:, None] + 0.5 * (_GL_NODES[None, :] + 1.0)  # (panels, k)
        log_u_tail = log_a[:, None] + h[:, None] * frac.reshape(1, -1)
        w_tail = (0.5 * h[:, None] * np.tile(_GL_WEIGHTS, n_panels)[None, :]) * np.exp(log_u_tail)
        w_tail = np.where(np.repeat(p_idx, k)[None, :] < panels[:, None], w_tail, 0.0)
        log_u_tail = np.where(w_tail > 0, log_u_tail, 0.0)
    else:
        log_u_tail = np.zeros((rows, 0))
        w_tail = np.zeros((rows, 0))
    half = np.where(has_tail, 0.5, 0.0)[:, None]
    log_u = np.concatenate(
        [np.broadcast_to(np.log(head), (rows, head.size)), log_u_tail, log_a[:, None], log_b[:, None]], axis=1
    )
    m = np.concatenate([m_head, w_tail, half, half], axis=1)
    return log_u, m, has_tail, log_a, log_b


def _zipf_em_derivatives(y, s, log_u):
    """g'(u), h'(u), w'(u) at u = exp(log_u) for g = 1 - e^{-x w}, w = u^-s, h = w g, x = e^y."""
    w = np.exp(-s * log_u)
    z = np.exp(np.minimum(y - s * log_u, _LOG_BIG))  # x w
    g = -np.expm1(-z)
    inv_u = np.exp(-log_u)
    w_prime = -s * w * inv_u
    g_prime = -s * inv_u * z * np.exp(-z)  # d/du (1 - e^{-x w}) = x w' e^{-x w}, x w' = -s z / u
    h_prime = w_prime * g + w * g_prime
    return g_prime, h_prime, w_prime


def _zipf_solve(c: np.ndarray, n: np.ndarray, s: np.ndarray) -> np.ndarray:
    """LRU hit ratio (Che) under Zipf(s) for 1-D arrays with 0 < c < n, s > 0."""
    out = np.empty_like(c)
    if c.size == 0:
        return out
    cols = _HEAD + 3 + _MAX_PANELS * _GL_NODES.size
    rows = max(1, _CHUNK_ELEMS // cols)
    for start in range(0, c.size, rows):
        sl = slice(start, start + rows)
        ci, ni, si = c[sl], n[sl], s[sl]
        log_u, m, has_tail, log_a, log_b = _zipf_layout(ni, si)
        s_log_u = si[:, None] * log_u
        log_w = -s_log_u

        def occupancy(y, sel, s_log_u=s_log_u, m=m, si=si, log_a=log_a, log_b=log_b, has_tail=has_tail):
            z = np.exp(np.minimum(y[:, None] - s_log_u[sel], _LOG_BIG))
            e = np.exp(-z)
            occ = (m[sel] * -np.expm1(-z)).sum(axis=1)
            deriv = (m[sel] * z * e).sum(axis=1)
            sl_, ht = si[sel], has_tail[sel]
            ga = _zipf_em_derivatives(y, sl_, log_a[sel])[0]
            gb = _zipf_em_derivatives(y, sl_, log_b[sel])[0]
            occ = occ + np.where(ht, (gb - ga) / 12.0, 0.0)
            return occ, deriv

        # sum_i w_i (1 - e^{-x w_i}) ... with x = T / H: occupancy <= x H (1 - e^-z <= z),
        # and >= N (1 - e^{-x N^-s}) (every w_i >= N^-s); the solver widens these if needed.
        total_w = (m * np.exp(log_w)).sum(axis=1)
        lo = np.log(ci) - np.log(total_w) - 1.0
        hi = si * np.log(ni) + _log_neg_log1p_neg(ci, ni) + 1.0
        y = _solve_log_root(occupancy, lo, hi, ci)

        z = np.exp(np.minimum(y[:, None] - s_log_u, _LOG_BIG))
        w = np.exp(log_w)
        hits = (m * w * -np.expm1(-z)).sum(axis=1)
        _, ha, wa = _zipf_em_derivatives(y, si, log_a)
        _, hb, wb = _zipf_em_derivatives(y, si, log_b)
        hits += np.where(has_tail, (hb - ha) / 12.0, 0.0)
        total_w += np.where(has_tail, (wb - wa) / 12.0, 0.0)
        out[sl] = np.clip(hits / total_w, 0.0, 1.0)
    return out


def zipf_hit_ratio(cache_items, n_items, s) -> np.ndarray:
    """LRU hit ratio under Zipf(s) popularity over N items, Che's approximation [-].

    Parameters
    ----------
    cache_items : array_like
        Cache capacity C [items], >= 0.
    n_items : array_like
        Number of items N in the data set [items], >= 0; up to ~1e10 and
        beyond (ranks above 256 are integrated, not summed). A non-integer N
        adds a last item of weight N - floor(N).
    s : array_like
        Zipf exponent [-], >= 0; p_i = i^-s / H(N, s), H(N, s) = sum_{i<=N} i^-s.
        s = 0 is uniform; s > 1 is allowed.

    Returns
    -------
    numpy.ndarray
        Broadcast shape of the inputs. h = sum_i p_i (1 - exp(-p_i T)) with
        sum_i (1 - exp(-p_i T)) = C (Che). 1 when C >= N, 0 when C = 0, and
        exactly min(1, C / N) when s = 0. Ranks 1..256 are summed exactly, ranks
        257..N by Euler-Maclaurin (to the first-derivative term) with
        Gauss-Legendre quadrature in log rank: within 1e-9 absolute of the exact
        Che sum at N = 1e6 (see tests). Each distinct (C, N, s) is solved once,
        so a grid with few distinct triples costs little.

    References
    ----------
    Che, Tung & Wang (2002), IEEE JSAC 20(7); Fricker, Robert & Roberts (2012),
    Proc. ITC 24. Breslau, L., Cao, P., Fan, L., Phillips, G., Shenker, S.
    (1999). Web caching and Zipf-like distributions. Proc. IEEE INFOCOM.
    Abramowitz, M., Stegun, I. A. (1964). Handbook of Mathematical Functions,
    eq. 23.1.30 (Euler-Maclaurin summation).
    """
    c = _items(cache_items, "cache_items")
    n = _items(n_items, "n_items")
    s_arr = as_array(s, "s", nonnegative=True)
    c, n, s_arr = broadcast(cache_items=c, n_items=n, s=s_arr)
    out = uniform_hit_ratio(c, n)  # exact for s = 0, C >= N (1) and C = 0 (0)
    solve = (s_arr > 0) & (c > 0) & (c < n)
    if solve.any():
        triples = np.stack([c[solve], n[solve], s_arr[solve]], axis=1)
        uniq, inverse = np.unique(triples, axis=0, return_inverse=True)
        h = _zipf_solve(uniq[:, 0].copy(), uniq[:, 1].copy(), uniq[:, 2].copy())
        out = np.array(out, dtype=np.float64, copy=True)
        out[solve] = h[inverse.ravel()]
    return out


# ----------------------------------------------------------------------------
# popularity uniform within classes: a hot set (YCSB hotspot, sysbench special)
# ----------------------------------------------------------------------------


def piecewise_hit_ratio(cache_fraction, item_shares, request_shares) -> np.ndarray:
    """LRU hit ratio, Che's approximation, when keys fall into classes of equal popularity [-].

    Parameters
    ----------
    cache_fraction : array_like
        c = C / N, the share of the data set's items the cache holds [-], >= 0; shape (rows,).
    item_shares : array_like
        a_k, the share of the items in class k [-], shape (rows, K) (or (K,)); each row sums to 1.
    request_shares : array_like
        q_k, the share of requests that pick a key of class k (uniformly within it) [-], same
        shape; each row sums to 1.

    Returns
    -------
    numpy.ndarray
        h = sum_k q_k (1 - exp(-q_k x / a_k)) with x = T / N solving
        sum_k a_k (1 - exp(-q_k x / a_k)) = c: Che's sums over the N items, grouped by class
        (every one of the a_k N items of class k has popularity q_k / (a_k N)), so exact for
        Che at any N. 1 when c covers every requested class, 0 when c = 0; one class (K = 1)
        gives min(1, c).

    References
    ----------
    Che, Tung & Wang (2002), IEEE JSAC 20(7); Fricker, Robert & Roberts (2012), Proc. ITC 24.
    """
    c = np.atleast_1d(_items(cache_fraction, "cache_fraction"))
    a = np.atleast_2d(as_array(item_shares, "item_shares", nonnegative=True))
    q = np.atleast_2d(as_array(request_shares, "request_shares", nonnegative=True))
    a, q = np.broadcast_to(a, (c.size, a.shape[-1])), np.broadcast_to(q, (c.size, q.shape[-1]))
    for name, arr in (("item_shares", a), ("request_shares", q)):
        if (np.abs(arr.sum(axis=1) - 1.0) > 1e-9).any():
            raise ValueError(f"{name}: each row must sum to 1")
    if ((a == 0) & (q > 0)).any():
        raise ValueError("request_shares: a class with no items cannot be requested")
    asked = q > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_r = np.where(asked, np.log(q) - np.log(np.where(asked, a, 1.0)), -np.inf)  # q_k / a_k
    held = np.where(asked, a, 0.0).sum(axis=1)  # items ever requested [share]
    out = np.where(c >= held - 1e-12, 1.0, 0.0)
    todo = np.flatnonzero((c > 0) & (c < held - 1e-12))
    if todo.size:
        lr, ai, ci = log_r[todo], np.where(asked, a, 0.0)[todo], c[todo]

        def occupancy(y, sel):
            z = np.exp(np.minimum(y[:, None] + lr[sel], _LOG_BIG))  # q_k x / a_k
            return (ai[sel] * -np.expm1(-z)).sum(axis=1), (ai[sel] * z * np.exp(-z)).sum(axis=1)

        # 1 - e^-z <= z gives x >= c; every requested class holds at least a_k (1 - e^{-r_min x})
        lo = np.log(ci)
        hi = _log_neg_log1p_neg(ci, held[todo]) - np.where(np.isfinite(lr), lr, np.inf).min(axis=1)
        y = _solve_log_root(occupancy, lo, hi, ci)
        z = np.exp(np.minimum(y[:, None] + lr, _LOG_BIG))
        out[todo] = np.clip((q[todo] * -np.expm1(-z)).sum(axis=1), 0.0, 1.0)
    return out


def _irwin_hall_mean_cdf(u: np.ndarray, n: int) -> np.ndarray:
    """P(mean of n uniform(0, 1) numbers <= u): the Irwin-Hall CDF at n u [-].

    F(s) = (1 / n!) sum_{k=0}^{floor(s)} (-1)^k C(n, k) (s - k)^n, evaluated on the lower half
    and mirrored (F(s) = 1 - F(n - s)) to keep the alternating sum short. Johnson, Kotz &
    Balakrishnan (1995), Continuous Univariate Distributions vol. 2, ch. 26.
    """
    s = np.clip(np.asarray(u, dtype=float), 0.0, 1.0) * n
    low = np.minimum(s, n - s)
    total = np.zeros_like(low)
    for k in range(n // 2 + 1):
        total += np.where(low > k, (-1.0) ** k * math.comb(n, k) * (low - k) ** n, 0.0)
    cdf = total / math.factorial(n)
    return np.where(s <= n / 2, cdf, 1.0 - cdf)


def _frozen(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Arrays made read-only: a cached class table is shared by every caller."""
    for a in arrays:
        a.setflags(write=False)
    return arrays


@functools.lru_cache(maxsize=256)
def key_classes(distribution: str, hot_data_fraction: float, hot_op_fraction: float, bins: int = 400):
    """(item shares, request shares) of a hot-set key distribution's classes [-].

    ``hotspot`` (YCSB ``HotspotIntegerGenerator``): two classes, the hot keys and the rest.
    ``special`` (sysbench ``sb_rand_special``): the key range cut into ``bins`` equal slices plus
    the hot slice's edges; a slice's requests are ``hot_op_fraction`` x its overlap with the
    hot slice / that slice's width, plus ``1 - hot_op_fraction``
    x the mass the bell (the mean of :data:`~perfmodel.inputs.keys.SPECIAL_ITERATIONS` uniform
    numbers) puts on it. The hot slice is the upper ``hot_op_fraction`` of a central slice of width
    ``hot_data_fraction`` (0.75% of the keys at sysbench's defaults, not 1%): the code maps the
    uniform number that chose the hot branch, which lies in [1 - hot_op_fraction, 1), onto it.
    Within a slice keys are taken as equally popular: with 400 slices the
    hit ratio is within 1e-3 of the per-key sum (unit tests).
    """
    d, o = float(hot_data_fraction), float(hot_op_fraction)
    if not (0.0 < d < 1.0 and 0.0 <= o <= 1.0):
        raise ValueError(f"hot_data_fraction must be in (0, 1), hot_op_fraction in [0, 1]; got {d}, {o}")
    if distribution == "hotspot":
        return _frozen(np.array([d, 1.0 - d]), np.array([o, 1.0 - o]))
    if distribution != "special":
        raise ValueError(f"distribution: {distribution!r} has no hot set (hotspot, special)")
    # sb_rand_special maps the same uniform number that chose the hot branch (so in [1 - o, 1))
    # onto the slice: only its upper share o is ever picked, o x d of the key range
    lo_hot, hi_hot = 0.5 - d / 2.0 + (1.0 - o) * d, 0.5 + d / 2.0
    edges = np.unique(np.concatenate([np.linspace(0.0, 1.0, bins + 1), [lo_hot, hi_hot]]))
    width = np.diff(edges)
    bell = np.diff(_irwin_hall_mean_cdf(edges, SPECIAL_ITERATIONS))
    overlap = np.clip(np.minimum(edges[1:], hi_hot) - np.maximum(edges[:-1], lo_hot), 0.0, None)
    requests = (1.0 - o) * bell + o * overlap / max(hi_hot - lo_hot, 1e-300)
    return _frozen(width / width.sum(), requests / requests.sum())


_HEAD_RANKS = 64  # ranks of a scrambled Zipf's head kept as classes of their own
_RANK_BINS = 160  # log-spaced bins of the rest of its head


def _zipf_partial_sums(a: np.ndarray, b: np.ndarray, s: float) -> np.ndarray:
    """sum_{i=a}^{b} i^-s for whole a <= b: exact up to rank :data:`_HEAD_RANKS`, beyond by the midpoint
    integral F(b + 1/2) - F(a - 1/2), F(x) = x^(1-s) / (1-s) (log x at s = 1), whose error per term,
    about f''(i) / 24 = s (s+1) i^(-s-2) / 24, is under 2e-5 of the term from rank 65 on for s <= 1.5
    (the midpoint rule's error, Abramowitz & Stegun 25.4.2)."""

    def big_f(x):
        return np.log(x) if abs(s - 1.0) < 1e-12 else np.power(x, 1.0 - s) / (1.0 - s)

    exact = np.arange(1, _HEAD_RANKS + 1, dtype=float) ** -s
    cum = np.concatenate([[0.0], np.cumsum(exact)])
    head = np.clip(b, 0, _HEAD_RANKS)
    lo_exact = np.clip(a - 1, 0, _HEAD_RANKS)
    out = cum[head.astype(int)] - cum[np.minimum(lo_exact, head).astype(int)]
    a_tail = np.maximum(a, _HEAD_RANKS + 1)
    tail = b >= a_tail
    out = out + np.where(tail, big_f(b + 0.5) - big_f(np.where(tail, a_tail, b) - 0.5), 0.0)
    return out


@functools.lru_cache(maxsize=1024)
def scrambled_zipf_classes(n_items: float, s: float, ranks: float = YCSB_RANKS):
    """(item shares, request shares) of YCSB's scrambled Zipf over ``n_items`` keys [-].

    A rank r of Zipf(``s``) over ``ranks`` ranks is hashed onto the keys. The ``n_items`` most
    popular ranks are taken to land on distinct keys -- the head, cut into classes (the first
    :data:`_HEAD_RANKS` ranks one each, the rest in log-spaced bins); every rank beyond lands on a
    key at random, which gives every key an equal share of their mass ``u`` (the floor). The head's
    own hash collisions (about a third of its ranks share a key with another) and the floor's own
    unevenness are not modelled: with at least 100 ranks per key (YCSB up to 1e8 keys) the hit ratio
    is within 0.02 of Che's per-key sum over YCSB's own hashing (unit tests); at 10 ranks per key
    (1e9 keys) about 0.04 under it.
    """
    n = max(float(np.floor(n_items)), 1.0)
    total = float(_zipf_partial_sums(np.array([1.0]), np.array([float(ranks)]), s)[0])
    first = min(_HEAD_RANKS, n)
    log_edges = np.round(np.geomspace(first + 1, n + 1, _RANK_BINS))
    edges = np.unique(np.concatenate([np.arange(1, first + 1), log_edges]))
    edges = edges[edges <= n + 1]
    if edges[-1] < n + 1:
        edges = np.append(edges, n + 1)
    a, b = edges[:-1], edges[1:] - 1.0
    mass = _zipf_partial_sums(a, b, s) / total
    floor = max(1.0 - mass.sum(), 0.0)  # the ranks beyond the keys
    width = (b - a + 1.0) / n
    requests = mass + floor * width
    return _frozen(width / width.sum(), requests / requests.sum())


# ----------------------------------------------------------------------------
# convenience: bytes in, hit ratio out
# ----------------------------------------------------------------------------


def hit_ratio(
    cache_bytes,
    dataset_bytes,
    object_bytes,
    *,
    distribution: str = "uniform",
    zipf_s=0.99,
    hot_data_fraction: float | None = None,
    hot_op_fraction: float | None = None,
):
    """Hit ratio of a cache from sizes in bytes and a key distribution [-].

    Parameters
    ----------
    cache_bytes : array_like
        Cache capacity [B], >= 0.
    dataset_bytes : array_like
        Size of the data set that requests touch [B], >= 0.
    object_bytes : array_like
        Size of one cached object (row, block, onode) [B], > 0.
    distribution : {"uniform", "zipf", "latest", "hotspot", "special"}
        Key popularity (:mod:`perfmodel.inputs.keys`): uniform (any policy, exact), Zipf with
        exponent ``zipf_s`` (``latest`` the same, over recency), or a hot set (YCSB
        ``hotspot``, sysbench ``special``) under LRU, Che's approximation.
    zipf_s : array_like
        Zipf exponent s [-], >= 0 (used when ``distribution`` is ``zipf`` or ``latest``);
        YCSB's zipfian generator uses 0.99.
    hot_data_fraction, hot_op_fraction : float, optional
        The hot set's share of the keys and of the requests [-] (``hotspot``, ``special``);
        None: the generator's defaults (:data:`perfmodel.inputs.keys.HOT_DEFAULTS`).

    Returns
    -------
    numpy.ndarray
        With C = cache_bytes / object_bytes [items] and
        N = dataset_bytes / object_bytes [items]: :func:`uniform_hit_ratio` (C, N)
        or :func:`zipf_hit_ratio` (C, N, s). 1 when cache_bytes >= dataset_bytes
        (an empty data set counts as all hits), else 0 when cache_bytes = 0;
        these limits are decided on the byte sizes, before any division.

    References
    ----------
    See :func:`uniform_hit_ratio` and :func:`zipf_hit_ratio`. Cooper, B. F. et
    al. (2010). Benchmarking cloud serving systems with YCSB. Proc. SoCC
    (zipfian constant 0.99).
    """
    cb = _items(cache_bytes, "cache_bytes")
    db = _items(dataset_bytes, "dataset_bytes")
    ob = as_array(object_bytes, "object_bytes", positive=True)
    if not isinstance(distribution, str) or distribution.lower() not in DISTRIBUTIONS:
        raise ValueError(f"distribution: unknown {distribution!r}; valid: {', '.join(DISTRIBUTIONS)}")
    distribution = distribution.lower()
    if distribution == "uniform":
        cb, db, ob = broadcast(cache_bytes=cb, dataset_bytes=db, object_bytes=ob)
        out = uniform_hit_ratio(cb / ob, db / ob)
    elif distribution == "scrambled_zipf":
        s_arr = as_array(zipf_s, "zipf_s", nonnegative=True)
        cb, db, ob, s_arr = broadcast(cache_bytes=cb, dataset_bytes=db, object_bytes=ob, zipf_s=s_arr)
        out = _scrambled_hit_ratio(cb, db, ob, s_arr)
    elif distribution in HOT_DEFAULTS:
        default_d, default_o = HOT_DEFAULTS[distribution]
        shares = key_classes(
            distribution,
            float(default_d if hot_data_fraction is None else hot_data_fraction),
            float(default_o if hot_op_fraction is None else hot_op_fraction),
        )
        cb, db, ob = broadcast(cache_bytes=cb, dataset_bytes=db, object_bytes=ob)
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(db > 0, cb / np.where(db > 0, db, 1.0), 1.0)
        out = piecewise_hit_ratio(np.minimum(frac, 1.0).ravel(), *shares).reshape(frac.shape)
    else:
        s = as_array(zipf_s, "zipf_s", nonnegative=True)
        cb, db, ob, s = broadcast(cache_bytes=cb, dataset_bytes=db, object_bytes=ob, zipf_s=s)
        out = zipf_hit_ratio(cb / ob, db / ob, s)
    # decide the limits on the byte sizes, so rounding in the division cannot move them
    return np.where(cb >= db, 1.0, np.where(cb == 0, 0.0, out))


def hit_ratios(
    cache_bytes, dataset_bytes, object_bytes, distribution, *, zipf_s, hot_data_fraction, hot_op_fraction
):
    """:func:`hit_ratio` with a key distribution per element [-] (a sweep or a table of figures).

    ``distribution`` is an array of names (:data:`~perfmodel.inputs.keys.KEY_DISTRIBUTIONS`);
    ``zipf_s``, ``hot_data_fraction`` and ``hot_op_fraction`` arrays of the same shape (NaN
    shares: the generator's defaults). Each distinct distribution (and pair of hot-set shares)
    is solved once, over its elements.
    """
    names = np.asarray(distribution, dtype=object)
    shape = names.shape
    cb, db, ob = (
        np.broadcast_to(np.asarray(x, dtype=float), shape) for x in (cache_bytes, dataset_bytes, object_bytes)
    )
    if (names == "uniform").all():
        return hit_ratio(cb, db, ob)
    zs = np.broadcast_to(np.asarray(zipf_s, dtype=float), shape)
    hot_d = np.nan_to_num(np.broadcast_to(np.asarray(hot_data_fraction, dtype=float), shape), nan=-1.0)
    hot_o = np.nan_to_num(np.broadcast_to(np.asarray(hot_op_fraction, dtype=float), shape), nan=-1.0)
    out = np.empty(shape)
    for name in np.unique(names):
        sel = names == name
        if name in HOT_DEFAULTS:  # a hot set: one solve per distinct pair of shares (-1: unset)
            for d, o in np.unique(np.stack([hot_d[sel], hot_o[sel]], axis=1), axis=0):
                same = sel & (hot_d == d) & (hot_o == o)
                out[same] = hit_ratio(
                    cb[same], db[same], ob[same], distribution=str(name),
                    hot_data_fraction=None if d < 0 else d, hot_op_fraction=None if o < 0 else o,
                )  # fmt: skip
        else:  # latest is Zipf over recency (perfmodel.inputs.keys)
            kind = "zipf" if name == "latest" else str(name)
            out[sel] = hit_ratio(cb[sel], db[sel], ob[sel], distribution=kind, zipf_s=zs[sel])
    return out


def _scrambled_hit_ratio(cb: np.ndarray, db: np.ndarray, ob: np.ndarray, s: np.ndarray) -> np.ndarray:
    """:func:`piecewise_hit_ratio` over :func:`scrambled_zipf_classes`, one class build per distinct
    (key count, exponent)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(ob > 0, db / ob, 0.0)
        frac = np.where(db > 0, np.minimum(cb / np.where(db > 0, db, 1.0), 1.0), 1.0)
    out = np.empty(np.shape(frac))
    keys = np.stack([np.floor(np.ravel(n)), np.ravel(s)], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    flat_frac, flat_out = np.ravel(frac), out.reshape(-1)
    for k, (items, exponent) in enumerate(uniq):
        sel = inverse.ravel() == k
        flat_out[sel] = piecewise_hit_ratio(
            flat_frac[sel], *scrambled_zipf_classes(float(items), float(exponent))
        )
    return out
