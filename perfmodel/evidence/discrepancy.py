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

import json
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from scipy import special

from perfmodel.inputs._data import PARAMETERS_DIR

#: metric groups that get their own discrepancy scale
GROUPS = ("throughput", "mean latency", "tail latency", "ratios", "device-level")

#: fewest out-of-sample figures for a group's own scale; smaller groups use the pooled one
MIN_FIGURES = 8

_CLIENT_GROUPS = {
    "throughput": "throughput",
    "iops": "throughput",
    "tpmc": "throughput",
    "bandwidth": "throughput",
    "time_per_op": "throughput",
    "latency_mean": "mean latency",
    "latency_p95": "tail latency",
    "latency_p99": "tail latency",
}

#: predict output column -> metric group of its discrepancy
COLUMN_GROUPS = {
    "throughput_ops_s": "throughput",
    "tpmc": "throughput",
    "latency_mean_ms": "mean latency",
    "latency_p50_ms": "mean latency",
    "read_latency_mean_ms": "mean latency",
    "write_latency_mean_ms": "mean latency",
    "latency_p95_ms": "tail latency",
    "latency_p99_ms": "tail latency",
    "read_latency_p99_ms": "tail latency",
    "write_latency_p99_ms": "tail latency",
    # a station's utilisation is demand over capacity: the model's capacity error is its throughput error
    "util_network": "throughput",
    "util_cpu": "throughput",
    "util_device": "throughput",
    "util_wal": "throughput",
    "util_log": "throughput",
    "util_client_link": "throughput",
}


def metric_group(metric: str, relative: bool, level: str) -> str:
    """The discrepancy group of a recorded figure: ratios, device-level, or by client metric."""
    if relative:
        return "ratios"
    if level != "client":
        return "device-level"
    return _CLIENT_GROUPS.get(metric, "device-level")


def z_score(level: float) -> float:
    """Standard normal quantile ``Phi^-1((1 + level) / 2)`` of a central band [-]."""
    if not 0 < level < 1:
        raise ValueError(f"interval: must lie in (0, 1), got {level}")
    return float(math.sqrt(2.0) * special.erfinv(level))


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


def band_multiplier(scores, level: float) -> float:
    """Split-conformal multiplier ``m_q`` of the scale for a level-``q`` band [-].

    The ``ceil((n + 1) q)``-th smallest score; when that exceeds ``n`` (too
    few figures for the level), the larger of the normal quantile and the
    largest score. With no scores, the normal quantile.
    """
    z = z_score(level)
    scores = np.sort(np.asarray(scores, dtype=float))
    n = len(scores)
    if n == 0:
        return z
    k = math.ceil((n + 1) * level)
    return float(scores[k - 1]) if k <= n else float(max(z, scores[-1]))


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


def log_normal_band(center, param_sd, sigma, multiplier):
    """``center * exp(+-multiplier * sqrt(param_sd^2 + sigma^2))``: lower and upper bounds."""
    sp = np.nan_to_num(np.asarray(param_sd, float), nan=0.0)
    half = np.asarray(multiplier, dtype=float) * np.sqrt(sp**2 + np.asarray(sigma, dtype=float) ** 2)
    center = np.asarray(center, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        return center * np.exp(-half), center * np.exp(half)


def widen_band(center, lower, upper, sigma, multiplier, z):
    """A level-``q`` band from a parameter band ``[lower, upper]`` (also level ``q``) plus discrepancy.

    Each side's parameter standard deviation is read off its log half-width
    ``h`` as ``h / z`` (``z`` the normal quantile of the parameter band's
    level), and the side becomes ``multiplier * sqrt((h / z)^2 + sigma^2)``,
    as :func:`log_normal_band`. An asymmetric band stays asymmetric and an
    infinite upper bound (a parameter draw that saturates) stays infinite.
    Values must be >= 0; a zero or non-finite ``center`` keeps the parameter
    band widened by ``multiplier * sigma`` (an infinite centre: an infinite upper bound).
    """
    center, lower, upper = (np.asarray(a, dtype=float) for a in (center, lower, upper))
    sigma = np.asarray(sigma, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        finite = np.isfinite(center) & (center > 0)
        down = np.where(finite & (lower > 0), np.log(center / lower), 0.0)
        up = np.where(finite & np.isfinite(upper) & (upper > 0), np.log(upper / center), 0.0)
        down = multiplier * np.sqrt((np.clip(down, 0, None) / z) ** 2 + sigma**2)
        up = multiplier * np.sqrt((np.clip(up, 0, None) / z) ** 2 + sigma**2)
        lo = np.where(finite, center * np.exp(-down), lower * np.exp(-multiplier * sigma))
        # a zero centre (an idle station) keeps its parameter band widened by the discrepancy alone
        other = np.where(np.isfinite(upper), upper * np.exp(multiplier * sigma), np.inf)
        hi = np.where(finite & np.isfinite(upper), center * np.exp(up), np.where(center == 0, other, np.inf))
    return lo, hi


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


def load_discrepancy(params=None) -> dict | None:
    """The discrepancy stored with a parameter set file, else the shipped calibrated set's.

    ``params``: a set name, a JSON path or None. Returns ``{group: {"sigma_log",
    "scores", ...}}`` or None when no discrepancy is stored.
    """
    here = PARAMETERS_DIR
    candidates = []
    if isinstance(params, str | Path):
        text = str(params)
        candidates.append(Path(text) if text.endswith(".json") or "/" in text else here / f"{text}.json")
    candidates.append(here / "calibrated.json")
    for path in candidates:
        if path.is_file():
            doc = json.loads(path.read_text(encoding="utf-8"))
            block = doc.get("discrepancy")
            if isinstance(block, Mapping) and "groups" in block:
                return {g: dict(v) for g, v in block["groups"].items()}
    return None
