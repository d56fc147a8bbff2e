"""Universal Scalability Law and Amdahl's law: throughput versus concurrency.

USL (Gunther 1993, 2007):  X(n) = lam n / (1 + sigma (n - 1) + kappa n (n - 1))
Amdahl (1967; Gunther's form): X(n) = lam n / (1 + sigma (n - 1))

n: concurrency (clients, threads, nodes) [count]; lam: throughput at n = 1
[1/s]; sigma: contention (serial fraction) [-]; kappa: coherency (crosstalk)
[-]. With kappa > 0 throughput peaks at n* = sqrt((1 - sigma) / kappa).

The fitting helpers use non-linear least squares (scipy.optimize.curve_fit,
trust-region reflective with sigma, kappa >= 0) and report standard errors
from the estimated covariance, R^2 and the residual standard deviation, in
the style of lmfit / the R ``usl`` package.

References
----------
Gunther, N. J. (2007). Guerrilla Capacity Planning, Springer, ch. 4-6.
Amdahl, G. M. (1967). Validity of the single processor approach to achieving
large scale computing capabilities. AFIPS Conf. Proc. 30, 483-485.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from perfmodel.queueing._validate import as_array, broadcast

__all__ = [
    "ScalabilityFit",
    "amdahl_throughput",
    "fit_amdahl",
    "fit_usl",
    "usl_peak_concurrency",
    "usl_throughput",
]


def usl_throughput(n, lam, sigma, kappa) -> np.ndarray:
    """Universal Scalability Law throughput [1/s].

    X(n) = lam n / (1 + sigma (n - 1) + kappa n (n - 1)).

    Parameters
    ----------
    n : array_like
        Concurrency [count], >= 0 (real values allowed).
    lam : array_like
        Throughput at n = 1 [1/s], >= 0.
    sigma : array_like
        Contention coefficient [-], >= 0.
    kappa : array_like
        Coherency coefficient [-], >= 0.

    References
    ----------
    Gunther, N. J. (2007). Guerrilla Capacity Planning, eq. (4.31).
    """
    n = as_array(n, "n", nonnegative=True)
    lam = as_array(lam, "lam", nonnegative=True)
    sigma = as_array(sigma, "sigma", nonnegative=True)
    kappa = as_array(kappa, "kappa", nonnegative=True)
    n, lam, sigma, kappa = broadcast(n=n, lam=lam, sigma=sigma, kappa=kappa)
    return _usl(n, lam, sigma, kappa)


def _usl(n, lam, sigma, kappa):
    return lam * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def amdahl_throughput(n, lam, sigma) -> np.ndarray:
    """Amdahl's-law throughput [1/s]: X(n) = lam n / (1 + sigma (n - 1)).

    The USL with kappa = 0; X -> lam / sigma as n -> inf.

    Parameters
    ----------
    n : array_like
        Concurrency [count], >= 0.
    lam : array_like
        Throughput at n = 1 [1/s], >= 0.
    sigma : array_like
        Serial fraction [-], >= 0.

    References
    ----------
    Amdahl, G. M. (1967). AFIPS Conf. Proc. 30, 483-485.
    Gunther, N. J. (2007). Guerrilla Capacity Planning, eq. (4.15).
    """
    return usl_throughput(n, lam, sigma, 0.0)


def usl_peak_concurrency(sigma, kappa) -> np.ndarray:
    """Concurrency of peak USL throughput n* = sqrt((1 - sigma) / kappa) [count].

    ``inf`` when kappa = 0 (no retrograde region).

    References
    ----------
    Gunther, N. J. (2007). Guerrilla Capacity Planning, eq. (4.33).
    """
    sigma = as_array(sigma, "sigma", nonnegative=True)
    kappa = as_array(kappa, "kappa", nonnegative=True)
    sigma, kappa = broadcast(sigma=sigma, kappa=kappa)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.sqrt(np.maximum(1.0 - sigma, 0.0) / kappa)
    return np.where(kappa == 0.0, np.inf, n)


@dataclass(frozen=True)
class ScalabilityFit:
    """Result of :func:`fit_usl` / :func:`fit_amdahl` (fitted values end in ``_``).

    Attributes
    ----------
    model : str
        "usl" or "amdahl".
    params_ : dict
        Best-fit ``lam`` [1/s], ``sigma`` [-] and (USL) ``kappa`` [-].
    stderr_ : dict
        Standard errors of the parameters (sqrt of the covariance diagonal).
    covariance_ : numpy.ndarray
        Estimated parameter covariance.
    r_squared_ : float
        1 - SS_res / SS_tot [-].
    residual_std_ : float
        sqrt(SS_res / (n_obs - n_params)) [1/s].
    n_obs : int
        Number of observations.
    """

    model: str
    params_: dict
    stderr_: dict
    covariance_: np.ndarray = field(repr=False)
    r_squared_: float
    residual_std_: float
    n_obs: int

    def predict(self, n) -> np.ndarray:
        """Fitted throughput at concurrency n [1/s]."""
        p = self.params_
        return usl_throughput(n, p["lam"], p["sigma"], p.get("kappa", 0.0))

    @property
    def peak_concurrency_(self) -> float:
        """n* = sqrt((1 - sigma) / kappa) [count]; inf for Amdahl."""
        return float(usl_peak_concurrency(self.params_["sigma"], self.params_.get("kappa", 0.0)))


def _fit(n, throughput, model: str, sigma_weights=None) -> ScalabilityFit:
    n = as_array(n, "n", positive=True)
    x = as_array(throughput, "throughput", nonnegative=True)
    if n.ndim != 1 or n.shape != x.shape:
        raise ValueError(f"n, throughput: need two 1-d arrays of equal length ({n.shape}, {x.shape})")
    names = ["lam", "sigma"] + (["kappa"] if model == "usl" else [])
    if n.size <= len(names):
        raise ValueError(f"n: need more than {len(names)} observations to fit {model}")
    w = None
    if sigma_weights is not None:
        w = as_array(sigma_weights, "sigma_weights", positive=True)
        if w.shape != n.shape:
            raise ValueError("sigma_weights: must have the shape of n")
    lam0 = float(np.max(x / n)) if n.min() > 1 else float(x[np.argmin(n)] / n.min())
    lam0 = max(lam0, 1e-12)
    if model == "usl":

        def f(nn, lam, sigma, kappa):
            return _usl(nn, lam, sigma, kappa)

        p0 = [lam0, 0.01, 1e-4]
    else:

        def f(nn, lam, sigma):
            return _usl(nn, lam, sigma, 0.0)

        p0 = [lam0, 0.01]
    from scipy import optimize  # here: importing it costs worker processes ~0.1 s at start

    popt, pcov = optimize.curve_fit(
        f,
        n,
        x,
        p0=p0,
        sigma=w,
        absolute_sigma=False,
        bounds=(np.zeros(len(names)), np.full(len(names), np.inf)),
        method="trf",
        x_scale="jac",
        max_nfev=10_000,
    )
    resid = x - f(n, *popt)
    ss_res = float(resid @ resid)
    ss_tot = float(((x - x.mean()) ** 2).sum())
    dof = n.size - len(names)
    stderr = np.sqrt(np.clip(np.diag(pcov), 0.0, np.inf))
    return ScalabilityFit(
        model=model,
        params_=dict(zip(names, map(float, popt), strict=True)),
        stderr_=dict(zip(names, map(float, stderr), strict=True)),
        covariance_=pcov,
        r_squared_=1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0,
        residual_std_=float(np.sqrt(ss_res / dof)),
        n_obs=int(n.size),
    )


def fit_usl(n, throughput, *, sigma_weights=None) -> ScalabilityFit:
    """Fit the Universal Scalability Law to measured throughput.

    Least squares of X_i - lam n_i / (1 + sigma (n_i - 1) + kappa n_i (n_i - 1))
    with lam, sigma, kappa >= 0 (scipy.optimize.curve_fit, "trf").

    Parameters
    ----------
    n : array_like, shape (M,)
        Concurrency of each measurement [count], > 0.
    throughput : array_like, shape (M,)
        Measured throughput [1/s].
    sigma_weights : array_like, shape (M,), optional
        Relative standard deviation of each measurement (curve_fit ``sigma``).

    Returns
    -------
    ScalabilityFit
        ``params_`` {lam, sigma, kappa}, ``stderr_``, ``covariance_``,
        ``r_squared_``, ``residual_std_``, ``predict(n)``, ``peak_concurrency_``.

    References
    ----------
    Gunther, N. J. (2007). Guerrilla Capacity Planning, ch. 5.
    """
    return _fit(n, throughput, "usl", sigma_weights)


def fit_amdahl(n, throughput, *, sigma_weights=None) -> ScalabilityFit:
    """Fit Amdahl's law X(n) = lam n / (1 + sigma (n - 1)); see :func:`fit_usl`.

    References
    ----------
    Gunther, N. J. (2007). Guerrilla Capacity Planning, ch. 4.
    """
    return _fit(n, throughput, "amdahl", sigma_weights)
