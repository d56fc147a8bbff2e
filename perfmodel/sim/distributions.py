"""Service-time distributions by mean and squared coefficient of variation (SCV).

Each distribution exposes its analytic ``mean`` [s], ``variance`` [s^2] and
``scv`` [-] and a vectorised ``sample(rng, size)`` that draws from a
:class:`numpy.random.Generator`. :func:`from_moments` picks one by the first
two moments, the way the station network describes a station (mean demand and
SCV): SCV 0 is deterministic, SCV 1 exponential, anything else a gamma (or a
lognormal) with that mean and SCV. :meth:`Distribution.scaled` keeps the shape
and changes the mean, so a user's measured samples (:class:`Empirical`) can
stand in for a station's service law at the model's mean demand.

References: Law, A. M. (2015). Simulation Modeling and Analysis, 5th ed.,
ch. 6 (choosing input distributions, moment matching); numpy
``Generator.gamma`` / ``Generator.lognormal``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

FAMILIES = ("gamma", "lognormal")


class Distribution:
    """Base class: a non-negative service-time law with known moments."""

    mean: float

    @property
    def variance(self) -> float:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    @property
    def scv(self) -> float:
        """Squared coefficient of variation variance / mean^2 [-]."""
        return self.variance / self.mean**2 if self.mean > 0 else 0.0

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def scaled(self, mean: float) -> Distribution:
        """The same shape (SCV) with another mean [s]."""
        return from_moments(mean, self.scv, family="lognormal" if isinstance(self, Lognormal) else "gamma")


@dataclass(frozen=True)
class Deterministic(Distribution):
    """Constant service time ``mean`` [s] (SCV 0)."""

    mean: float

    @property
    def variance(self) -> float:
        return 0.0

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.full(size, float(self.mean))

    def scaled(self, mean: float) -> Distribution:
        return Deterministic(mean)


@dataclass(frozen=True)
class Exponential(Distribution):
    """Exponential service time with mean ``mean`` [s] (SCV 1)."""

    mean: float

    @property
    def variance(self) -> float:
        return self.mean**2

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.exponential(self.mean, size)

    def scaled(self, mean: float) -> Distribution:
        return Exponential(mean)


@dataclass(frozen=True)
class Gamma(Distribution):
    """Gamma with mean ``mean`` [s] and SCV ``cv2`` [-]: shape 1 / cv2, scale mean cv2."""

    mean: float
    cv2: float

    def __post_init__(self) -> None:
        if not self.cv2 > 0:
            raise ValueError(f"cv2: a gamma needs a positive SCV, got {self.cv2!r}")

    @property
    def variance(self) -> float:
        return self.cv2 * self.mean**2

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.gamma(1.0 / self.cv2, self.mean * self.cv2, size)


@dataclass(frozen=True)
class Lognormal(Distribution):
    """Lognormal with mean ``mean`` [s] and SCV ``cv2`` [-].

    sigma^2 = ln(1 + cv2), mu = ln(mean) - sigma^2 / 2 (Law 2015, sec. 6.2.2).
    """

    mean: float
    cv2: float

    def __post_init__(self) -> None:
        if not self.cv2 > 0:
            raise ValueError(f"cv2: a lognormal needs a positive SCV, got {self.cv2!r}")

    @property
    def variance(self) -> float:
        return self.cv2 * self.mean**2

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        s2 = math.log1p(self.cv2)
        return rng.lognormal(math.log(self.mean) - s2 / 2, math.sqrt(s2), size)


class Empirical(Distribution):
    """Resampling (with replacement) from a user's measured service times [s].

    The analytic mean and variance are those of the samples (population
    variance, ``ddof=0``: the moments of the distribution actually sampled).
    """

    def __init__(self, samples) -> None:
        values = np.asarray(samples, dtype=float).ravel()
        if values.size == 0 or not np.isfinite(values).all() or (values < 0).any():
            raise ValueError("samples: need at least one finite, non-negative service time")
        self.values = values
        self.mean = float(values.mean())

    @property
    def variance(self) -> float:
        return float(self.values.var())

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.values[rng.integers(0, self.values.size, size)]

    def scaled(self, mean: float) -> Distribution:
        """The same empirical shape rescaled to ``mean`` [s]."""
        if self.mean == 0:
            return Deterministic(mean)
        return Empirical(self.values * (mean / self.mean))

    def __repr__(self) -> str:
        return f"Empirical(n={self.values.size}, mean={self.mean:g}, scv={self.scv:g})"


def from_moments(mean: float, scv: float, *, family: str = "gamma") -> Distribution:
    """A distribution with this mean [s] and SCV [-].

    SCV 0 gives :class:`Deterministic`, SCV 1 :class:`Exponential` (for the
    gamma family, of which it is the shape-1 member); otherwise ``family``
    (``gamma`` or ``lognormal``) matched to both moments.
    """
    if family not in FAMILIES:
        raise ValueError(f"family: must be one of {', '.join(FAMILIES)}, got {family!r}")
    mean, scv = float(mean), float(scv)
    if not (np.isfinite(mean) and mean >= 0):
        raise ValueError(f"mean: must be finite and >= 0, got {mean!r}")
    if not (np.isfinite(scv) and scv >= 0):
        raise ValueError(f"scv: must be finite and >= 0, got {scv!r}")
    if scv == 0 or mean == 0:
        return Deterministic(mean)
    if family == "gamma":
        return Exponential(mean) if scv == 1 else Gamma(mean, scv)
    return Lognormal(mean, scv)
