"""Model discrepancy: how wrong the model is beyond its parameters' uncertainty.

A prediction misses a recorded figure for two reasons: the fitted parameters
are uncertain, and the model lacks mechanisms (heavy-tailed stalls, write
paths it simplifies). Parameter uncertainty alone gives bands that hold a
third of the truth. Following Kennedy & O'Hagan (2001, *Bayesian calibration
of computer models*, JRSS B 63(3), sec. 4.3: reality = model + discrepancy),
perfmodel writes a figure ``y`` as

    log y = log y_hat + e_param + delta,   e_param ~ N(0, s_p^2),   delta ~ N(0, s_g^2)

with ``s_p`` the parameter uncertainty of that prediction (delta method or
parameter draws) and ``delta`` a multiplicative log-normal model error whose
scale ``s_g`` depends only on the figure's metric group (:data:`GROUPS`).
``s_g`` is estimated by maximum likelihood from **out-of-sample** residuals
``r_i = log(y_hat_i / y_i)`` -- each predicted by a refit that never saw it --
as ``argmax_s sum_i log N(r_i; 0, s_p,i^2 + s^2)``
(:func:`fit_discrepancy_scale`).

The model's misses are heavy-tailed (most figures within 1.3x, a few tail
latencies off by 8-10x where a mechanism is missing), so a normal quantile
``z`` under-covers at 90% and over-covers at 50%. The band's width is
therefore calibrated by normalized split-conformal prediction (Lei, G'Sell,
Rinaldo, Tibshirani & Wasserman 2018, *Distribution-free predictive inference
for regression*, JASA 113(523), sec. 5.2; Papadopoulos et al. 2008): the
scores ``|r_i| / sqrt(s_p,i^2 + s_g^2)`` of the out-of-sample figures are
kept, and a level-``q`` band is ``y_hat * exp(+-m_q sqrt(s_p^2 + s_g^2))``
with ``m_q`` the ``ceil((n + 1) q)``-th smallest of the ``n`` scores
(:func:`band_multiplier`; beyond the data's resolution, ``q > n / (n + 1)``,
the larger of the normal ``z`` and the largest score). For exchangeable
figures this covers at least ``q`` of new figures whatever the shape of the
errors; the log-normal scale carries how uncertain each prediction's
parameters are. :func:`widen_band` adds the discrepancy to an asymmetric band
from parameter draws, each side in quadrature.

The validation report states the empirical coverage of the 50% and 90%
bands per group, each figure's band built without its own residual
(jackknife+, Barber, Candes, Ramdas & Tibshirani 2021, Ann. Statist. 49(1);
:func:`perfmodel.evidence.validation.validate`).
"""

from __future__ import annotations

import math

import numpy as np

from perfmodel.model.bands import (  # noqa: F401 - read at the answer, defined there
    CLIENT_GROUPS,
    COLUMN_GROUPS,
    band_multiplier,
    load_discrepancy,
    log_normal_band,
    widen_band,
    z_score,
)

#: metric groups that get their own discrepancy scale
GROUPS = ("throughput", "mean latency", "tail latency", "ratios", "device-level")

#: fewest out-of-sample figures for a group's own scale; smaller groups use the pooled one
MIN_FIGURES = 8


def metric_group(metric: str, relative: bool, level: str) -> str:
    """The discrepancy group of a recorded figure: ratios, device-level, or by client metric."""
    if relative:
        return "ratios"
    if level != "client":
        return "device-level"
    return CLIENT_GROUPS.get(metric, "device-level")


def fit_discrepancy_scale(residuals, param_sd=None) -> float:
    """Maximum-likelihood scale ``s`` of ``r_i ~ N(0, s_p,i^2 + s^2)`` [log units].

    ``residuals``: out-of-sample log residuals; ``param_sd``: each one's
    parameter standard deviation (0 when not known). Returns 0 when the
    parameter uncertainty alone explains the spread.
    """
    from scipy import optimize

    r = np.asarray(residuals, dtype=float)
    sp = np.zeros_like(r) if param_sd is None else np.nan_to_num(np.asarray(param_sd, float), nan=0.0)
    keep = np.isfinite(r)
    r, sp = r[keep], sp[keep]
    if len(r) == 0:
        return math.nan

    def nll(s):
        var = sp**2 + s**2
        return 0.5 * float(np.sum(np.log(var) + r**2 / var))

    rms = float(np.sqrt(np.mean(r**2)))
    if not np.any(sp > 0):
        return rms  # the closed form: s^2 = mean(r^2)
    best = optimize.minimize_scalar(nll, bounds=(1e-6, rms + 1e-9), method="bounded", options={"xatol": 1e-6})
    return float(best.x) if nll(best.x) < nll(1e-6) else 0.0


def conformal_scores(residuals, param_sd, sigma) -> np.ndarray:
    """Sorted normalized scores ``|r_i| / sqrt(s_p,i^2 + sigma^2)`` of finite residuals [-]."""
    r = np.asarray(residuals, dtype=float)
    sp = np.zeros_like(r) if param_sd is None else np.nan_to_num(np.asarray(param_sd, float), nan=0.0)
    keep = np.isfinite(r)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.abs(r[keep]) / np.sqrt(sp[keep] ** 2 + sigma**2)
    return np.sort(np.where(np.isfinite(scores), scores, np.inf))


def group_discrepancy(residuals, param_sd=None) -> dict:
    """One group's discrepancy: ``sigma_log`` (ML scale), ``figures`` and sorted conformal ``scores``."""
    sigma = fit_discrepancy_scale(residuals, param_sd)
    scores = conformal_scores(residuals, param_sd, sigma) if np.isfinite(sigma) else np.array([])
    return {"sigma_log": float(sigma), "figures": len(scores), "scores": scores}


def estimate_discrepancy(groups, residuals, param_sd=None, min_figures: int = MIN_FIGURES) -> dict:
    """Per-group discrepancies from out-of-sample residuals: ``{group: group_discrepancy(...)}``.

    A group with fewer than ``min_figures`` finite residuals takes the
    discrepancy of all groups pooled (``"pooled": True``).
    """
    groups = np.asarray(groups, dtype=object)
    r = np.asarray(residuals, dtype=float)
    sp = np.zeros_like(r) if param_sd is None else np.asarray(param_sd, dtype=float)
    ok = np.isfinite(r)
    pooled = group_discrepancy(r[ok], sp[ok])
    out = {}
    for group in GROUPS:
        mask = ok & (groups == group)
        own = int(mask.sum()) >= min_figures
        entry = group_discrepancy(r[mask], sp[mask]) if own else dict(pooled)
        out[group] = {**entry, "figures": int(mask.sum()), "pooled": not own}
    return out


def discrepancy_json(estimate: dict, cv: str) -> dict:
    """The block stored in a parameter set file (scores rounded to 4 digits)."""
    return {
        "method": "log-normal scale by maximum likelihood, normalized split-conformal multipliers "
        "(perfmodel.evidence.discrepancy)",
        "cv": cv,
        "groups": {
            g: {
                "sigma_log": round(float(e["sigma_log"]), 6),
                "figures": int(e["figures"]),
                "pooled": bool(e["pooled"]),
                "scores": [round(float(x), 4) for x in e["scores"]],
            }
            for g, e in estimate.items()
        },
    }
