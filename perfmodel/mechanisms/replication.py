"""Replication: work multiplied by the replication factor, latency of the k-th acknowledgement.

Glossary and units: ``replication_factor`` RF = n [count] (copies of each
item), ``consistency`` a level name or an integer k [count] (replica answers
the coordinator waits for), ``cdf_values`` F(t) [-] (per-replica response-time
CDF at a time t), ``q`` a probability level in (0, 1), ``mean`` [s].

A write is sent to all RF replicas and completes when k of them have answered,
so its latency is the k-th order statistic X_(k:n) of the n replica response
times (assumed iid; the coordinator's own replica, if any, is treated like the
others). With k = n (Cassandra ALL, Ceph primary-copy writes, which wait for
every replica) the tail grows with RF; with k = 1 (ONE) it shrinks. The
cluster executes RF copies of every write (device and network work), while a
read at ONE touches one replica and a read at QUORUM touches
floor(RF / 2) + 1 (one data read and digest reads, each a full local read).

References: David, H. A., Nagaraja, H. N. (2003). Order Statistics, 3rd ed.,
Wiley (sec. 2.1 distribution of X_(k:n); sec. 3.1 Renyi representation of
exponential order statistics). Apache Cassandra documentation, "Tunable
consistency" (consistency levels). Weil, S. A. et al. (2006). Ceph: a scalable,
high-performance distributed file system. Proc. OSDI (primary-copy replication).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from perfmodel.inputs._validate import as_array, broadcast
from perfmodel.inputs.consistency import CONSISTENCY_LEVELS, acks_required, counts  # noqa: F401

__all__ = [
    "CONSISTENCY_LEVELS",
    "acks_required",
    "exponential_kth_mean",
    "kth_order_cdf",
    "kth_order_level",
    "kth_order_quantile",
    "read_work",
    "replica_write_work",
]


def _order(k, n) -> tuple[np.ndarray, np.ndarray]:
    k = counts(k, "k")
    n = counts(n, "n")
    k, n = broadcast(k=k, n=n)
    if (k > n).any():
        raise ValueError("k: must be <= n (cannot wait for more answers than replicas)")
    return k, n


def replica_write_work(replication_factor) -> np.ndarray:
    """Copies of each write the cluster executes [writes per client write].

    Parameters
    ----------
    replication_factor : array_like
        Replication factor RF [count], integer >= 1.

    Returns
    -------
    numpy.ndarray
        RF [-] as float64: every replica applies every write (commit log or WAL,
        memtable, and later flush / compaction), whatever the consistency level,
        which only decides when the client is answered. Multiply per-write device
        and network demands by this factor when summing over the cluster.

    References
    ----------
    DeCandia, G. et al. (2007). Dynamo: Amazon's highly available key-value
    store. Proc. SOSP (N replicas, W acknowledgements); Apache Cassandra
    documentation, "Data replication".
    """
    return counts(replication_factor, "replication_factor").copy()


def read_work(consistency, replication_factor) -> np.ndarray:
    """Replica reads each client read causes [reads per client read].

    Parameters
    ----------
    consistency : str or array_like of int
        As for :func:`acks_required`.
    replication_factor : array_like
        Replication factor RF [count], integer >= 1.

    Returns
    -------
    numpy.ndarray
        k = :func:`acks_required` (consistency, RF) as float64: a read at ONE
        hits one replica; at QUORUM the coordinator asks k replicas, one for the
        data and k - 1 for digests. A digest is a hash of the full local read,
        so each of the k replicas does the same device and CPU work; only the
        network reply is smaller. Read repair and speculative retries are not
        counted.

    References
    ----------
    Apache Cassandra documentation, "Read path" / "Tunable consistency"
    (digest requests).
    """
    return acks_required(consistency, replication_factor).astype(np.float64)


def kth_order_cdf(cdf_values, k, n) -> np.ndarray:
    """CDF of the k-th smallest of n iid variables, from the per-variable CDF [-].

    Parameters
    ----------
    cdf_values : array_like
        F(t) [-], the per-replica CDF at the times of interest, in [0, 1].
    k : array_like
        Rank k [count], 1 <= k <= n (k = acks required).
    n : array_like
        Number of variables n [count] (replication factor), integer >= 1.

    Returns
    -------
    numpy.ndarray
        P(X_(k:n) <= t) = sum_{j=k}^{n} C(n, j) F^j (1 - F)^(n - j)
        = P(Binomial(n, F) >= k), computed as the regularized incomplete beta
        I_F(k, n - k + 1) (``scipy.special.betainc``); k = n gives F^n
        and k = 1 gives 1 - (1 - F)^n in closed form, so n = 1 returns F
        unchanged.

    References
    ----------
    David, H. A., Nagaraja, H. N. (2003). Order Statistics, 3rd ed., eq. 2.1.3.
    """
    f = as_array(cdf_values, "cdf_values")
    if ((f < 0) | (f > 1)).any():
        raise ValueError("cdf_values: must lie in [0, 1]")
    k, n = _order(k, n)
    f, k, n = broadcast(cdf_values=f, k=k, n=n)
    general = special.betainc(k, n - k + 1.0, f)
    with np.errstate(divide="ignore"):
        at_least_one = -np.expm1(n * np.log1p(-f))
    out = np.where(k == 1, at_least_one, general)
    return np.where(k == n, f**n, out)


def kth_order_level(q, k, n) -> np.ndarray:
    """Per-replica probability level whose quantile is the q-quantile of X_(k:n) [-].

    Parameters
    ----------
    q : array_like
        Probability level of the order statistic, in (0, 1).
    k : array_like
        Rank k [count], 1 <= k <= n.
    n : array_like
        Number of variables n [count], integer >= 1.

    Returns
    -------
    numpy.ndarray
        p solving I_p(k, n - k + 1) = q (``scipy.special.betaincinv``): since
        P(X_(k:n) <= t) is an increasing function of F(t),
        quantile_{X_(k:n)}(q) = F^{-1}(p) for any continuous F. So a model with
        its own quantile function gives the k-of-n latency by evaluating it at
        p. k = n gives q^(1/n); k = 1 gives 1 - (1 - q)^(1/n); n = 1 gives q.

    References
    ----------
    David & Nagaraja (2003), Order Statistics, sec. 2.1 (F(X_(k:n)) is
    Beta(k, n - k + 1) distributed).
    """
    qa = as_array(q, "q")
    if ((qa <= 0) | (qa >= 1)).any():
        raise ValueError("q: must lie strictly between 0 and 1")
    k, n = _order(k, n)
    qa, k, n = broadcast(q=qa, k=k, n=n)
    general = special.betaincinv(k, n - k + 1.0, qa)
    first = -np.expm1(np.log1p(-qa) / n)
    out = np.where(k == 1, first, general)
    return np.where(k == n, qa ** (1.0 / n), out)


def kth_order_quantile(
    q,
    k,
    n,
    cdf: Callable[[np.ndarray], np.ndarray],
    lower,
    upper,
    *,
    rtol: float = 1e-12,
) -> np.ndarray:
    """q-quantile of the k-th smallest of n iid variables with CDF ``cdf`` [same unit as t].

    Parameters
    ----------
    q : array_like
        Probability level in (0, 1).
    k, n : array_like
        Rank k and count n [count], 1 <= k <= n (acks required, replication
        factor).
    cdf : callable
        Vectorised per-replica CDF F(t) [-], non-decreasing; called with a
        float64 array of the broadcast shape of (q, k, n, lower, upper) and must
        return an array of that shape (close over per-element parameters by
        broadcasting them to that shape).
    lower, upper : array_like
        A bracket [t units] with F(lower) <= p <= F(upper), p = kth_order_level.
    rtol : float
        Relative tolerance on t (default 1e-12).

    Returns
    -------
    numpy.ndarray
        t with P(X_(k:n) <= t) = q: t = F^{-1}(p), p = I^{-1}(q; k, n - k + 1)
        (:func:`kth_order_level`), with F^{-1} found by vectorised bisection in
        pure numpy (about 45-100 halvings; stops when the bracket is within
        ``rtol`` relative, or 1e-300 absolute near 0).

    Raises
    ------
    ValueError
        If the bracket does not contain the quantile (the message names
        ``lower`` or ``upper``).

    References
    ----------
    David & Nagaraja (2003), Order Statistics, sec. 2.1; Press, W. H. et al.
    (2007). Numerical Recipes, 3rd ed., sec. 9.1 (bisection).
    """
    lo = as_array(lower, "lower")
    hi = as_array(upper, "upper")
    p = kth_order_level(q, k, n)
    p, lo, hi = broadcast(q=p, lower=lo, upper=hi)
    lo, hi = lo.astype(np.float64, copy=True), hi.astype(np.float64, copy=True)
    if (lo > hi).any():
        raise ValueError("lower: must be <= upper")
    if (np.asarray(cdf(lo), dtype=np.float64) > p).any():
        raise ValueError("lower: cdf(lower) exceeds the target level; lower the bracket")
    if (np.asarray(cdf(hi), dtype=np.float64) < p).any():
        raise ValueError("upper: cdf(upper) is below the target level; raise the bracket")
    for _ in range(2200):  # enough to reach adjacent floats from any finite bracket
        width = hi - lo
        if (width <= np.maximum(rtol * np.maximum(np.abs(lo), np.abs(hi)), 1e-300)).all():
            break
        mid = lo + 0.5 * width
        below = np.asarray(cdf(mid), dtype=np.float64) < p
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def exponential_kth_mean(k, n, mean) -> np.ndarray:
    """Mean of the k-th smallest of n iid exponential variables [s].

    Parameters
    ----------
    k : array_like
        Rank k [count], 1 <= k <= n.
    n : array_like
        Number of variables n [count], integer >= 1.
    mean : array_like
        Mean of one variable [s], >= 0.

    Returns
    -------
    numpy.ndarray
        E[X_(k:n)] = mean * sum_{i=n-k+1}^{n} 1 / i
        = mean * (psi(n + 1) - psi(n - k + 1)) with psi the digamma function
        (Renyi representation: the spacings X_(i:n) - X_(i-1:n) are independent
        exponentials of mean mean / (n - i + 1)). k = n = 1 gives ``mean``; the
        maximum of n (ALL) has mean * H_n.

    References
    ----------
    Renyi, A. (1953). On the theory of order statistics. Acta Math. Acad. Sci.
    Hungar. 4, 191-231. David & Nagaraja (2003), Order Statistics, sec. 3.1.
    """
    k, n = _order(k, n)
    m = as_array(mean, "mean", nonnegative=True)
    k, n, m = broadcast(k=k, n=n, mean=m)
    return m * (special.digamma(n + 1.0) - special.digamma(n - k + 1.0))
