"""Load-dependent service: a station whose rate depends on how many are present.

A load-dependent station with n requests present completes work at rate
alpha(n) / D [1/s], where D is the service demand of one request at unit rate
[s] and alpha(n) > 0 is a dimensionless rate multiplier. alpha is given for
n = 1 .. m and held constant beyond (alpha(n) = alpha(m) for n >= m), so a
network solver needs only the first m values: the station behaves like a
single server of demand D / alpha(m) once m or more requests are present.

Examples (Bolch et al. 2006, sec. 7.1.3; Lazowska et al. 1984, ch. 8):

* c identical servers, or a storage device that serves up to k requests in
  parallel: alpha(n) = min(n, c)  (:meth:`LoadDependentRate.multi_server`,
  :meth:`LoadDependentRate.parallel_device`);
* a single-queue device (one request in service at a time): alpha(n) = 1
  (:meth:`LoadDependentRate.single_queue_device`);
* a saturating curve, e.g. a device whose throughput climbs with queue depth
  towards a peak: alpha(n) = peak n / (n + half) up to a plateau depth
  (:meth:`LoadDependentRate.saturating`);
* any measured curve: :meth:`LoadDependentRate.from_values`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["LoadDependentRate"]


@dataclass(frozen=True, eq=False)
class LoadDependentRate:
    """Rate multipliers alpha(1..m) of a load-dependent station [-].

    Attributes
    ----------
    multipliers : numpy.ndarray
        alpha(n) for n = 1 .. m, each finite and > 0 [-]; alpha(n) = alpha(m)
        for n > m. The station's service rate with n present is alpha(n) / D
        [1/s] for a demand D [s].
    """

    multipliers: np.ndarray

    def __post_init__(self) -> None:
        alpha = np.array(self.multipliers, dtype=np.float64, ndmin=1)
        if alpha.ndim != 1 or alpha.size == 0:
            raise ValueError("multipliers: need a non-empty 1-d sequence alpha(1..m)")
        if not np.isfinite(alpha).all() or (alpha <= 0).any():
            raise ValueError("multipliers: every alpha(n) must be finite and > 0")
        alpha.setflags(write=False)
        object.__setattr__(self, "multipliers", alpha)

    @property
    def plateau(self) -> int:
        """m: the population from which alpha(n) is constant [count]."""
        return int(self.multipliers.size)

    @property
    def peak(self) -> float:
        """alpha(m), the asymptotic rate multiplier [-] (capacity = alpha(m) / D)."""
        return float(self.multipliers[-1])

    def rate(self, n) -> np.ndarray:
        """alpha(n) for an array of populations n >= 1 [-]."""
        n = np.asarray(n)
        if (n < 1).any():
            raise ValueError("n: populations must be >= 1")
        idx = np.minimum(n.astype(np.int64), self.plateau) - 1
        return self.multipliers[idx]

    @classmethod
    def multi_server(cls, servers: int) -> LoadDependentRate:
        """c identical servers: alpha(n) = min(n, c) (Bolch et al. 2006, eq. 7.1.3)."""
        c = _positive_int(servers, "servers")
        return cls(np.arange(1, c + 1, dtype=np.float64))

    @classmethod
    def parallel_device(cls, parallelism: int) -> LoadDependentRate:
        """A device serving up to k requests at once: alpha(n) = min(n, k).

        Same law as :meth:`multi_server`; ``parallelism`` k [count] is, e.g.,
        the internal parallelism (channels x dies) an SSD exposes.
        """
        k = _positive_int(parallelism, "parallelism")
        return cls.multi_server(k)

    @classmethod
    def single_queue_device(cls) -> LoadDependentRate:
        """A device that serves one request at a time: alpha(n) = 1."""
        return cls(np.ones(1))

    @classmethod
    def saturating(cls, peak: float, half: float, plateau: int) -> LoadDependentRate:
        """A saturating curve alpha(n) = peak n / (n + half) for n <= plateau.

        Michaelis-Menten form used for device throughput versus queue depth:
        alpha(1) = peak / (1 + half) and alpha -> peak. The curve is held at
        alpha(plateau) beyond ``plateau`` [count]; the cost of a closed-network
        solution grows with ``plateau`` (O(N x plateau)).

        Parameters
        ----------
        peak : float
            Asymptotic multiplier [-], > 0.
        half : float
            Population at which alpha reaches peak / 2 [count], >= 0.
        plateau : int
            m [count], >= 1.
        """
        if not (np.isfinite(peak) and peak > 0):
            raise ValueError("peak: must be finite and > 0")
        if not (np.isfinite(half) and half >= 0):
            raise ValueError("half: must be finite and >= 0")
        m = _positive_int(plateau, "plateau")
        n = np.arange(1, m + 1, dtype=np.float64)
        return cls(peak * n / (n + half))

    @classmethod
    def from_values(cls, values) -> LoadDependentRate:
        """alpha(1..m) given as numbers (e.g. measured throughput / single-request rate)."""
        return cls(np.asarray(values, dtype=np.float64))

    @classmethod
    def from_function(cls, func: Callable[[np.ndarray], np.ndarray], plateau: int):
        """alpha(n) = func(n) for n = 1 .. plateau, constant beyond."""
        m = _positive_int(plateau, "plateau")
        return cls(np.asarray(func(np.arange(1, m + 1)), dtype=np.float64))

    def __repr__(self) -> str:
        a = self.multipliers
        head = ", ".join(f"{v:g}" for v in a[:4])
        return f"LoadDependentRate([{head}{', ...' if a.size > 4 else ''}], plateau={a.size})"


def _positive_int(value, name: str) -> int:
    try:
        v = int(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name}: must be an integer >= 1") from exc
    if v != value or v < 1:
        raise ValueError(f"{name}: must be an integer >= 1")
    return v
