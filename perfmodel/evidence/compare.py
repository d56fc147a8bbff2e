"""Recorded vs predicted, written once: scales, bounds and log ratios.

A prediction is compared with a recorded figure on one scale: SI units for
absolute figures, ratios as printed, percent changes as the ratio
``1 + p/100`` (a +50% that should have been +100% is a factor 1.33, not
"50 points"). The fit (:mod:`perfmodel.evidence.calibration`), the validation
(:mod:`perfmodel.evidence.validation`) and the per-source tables
(:mod:`perfmodel.plan.studies`) all use these functions.

A recorded "more than" / "less than" (``relation`` gt / lt), and a
device-, network- or CPU-level maximum or minimum over a run, is a *bound*:
the model's run mean must lie on its side, and its error is zero there.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfmodel.inputs.units import RELATIVE_DIMENSIONS, UNITS


def relative(table: pd.DataFrame) -> np.ndarray:
    """Figures recorded relative to a baseline (ratio or percent change)."""
    return table["unit"].map(lambda u: UNITS[u].dimension in RELATIVE_DIMENSIONS).to_numpy(bool)


def percent(table: pd.DataFrame) -> np.ndarray:
    """Figures recorded as a percent change."""
    return (table["unit"] == "pct_change").to_numpy()


def recorded_values(table: pd.DataFrame) -> np.ndarray:
    """Recorded values on the scale predictions use: SI for absolute figures, as printed for relative ones."""
    return np.where(relative(table), table["value"], table["value_si"]).astype(float)


def bound_sides(table: pd.DataFrame) -> np.ndarray:
    """Which side of the recorded value the truth lies on: ``"gt"``, ``"lt"`` or ``""`` (a value).

    ``relation`` gt / lt say so directly. A device-, network- or CPU-level
    maximum over a run bounds the run's mean from above (``lt``) and a
    minimum bounds it from below (``gt``): the model predicts the mean, which
    must lie inside the recorded range. (A client-level maximum is a
    configuration's best result, compared as a value.)
    """
    relation = table["relation"].fillna("").to_numpy(object)
    aggregate = table["aggregate"].fillna("").to_numpy(object) if "aggregate" in table else relation
    level = table["level"].fillna("").to_numpy(object) if "level" in table else relation
    run_stat = level != "client"
    side = np.where(np.isin(relation, ["gt", "lt"]), relation, "")
    side = np.where((side == "") & run_stat & (aggregate == "max"), "lt", side)
    side = np.where((side == "") & run_stat & (aggregate == "min"), "gt", side)
    return side.astype(str)


def log_scale(values, pct) -> np.ndarray:
    """``log`` of values on the comparison scale (percent changes as ``1 + p/100``)."""
    values = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pct, np.log1p(values / 100.0), np.log(values))


def from_log_scale(logs, pct) -> np.ndarray:
    """The inverse of :func:`log_scale`: back to the figure's own values."""
    with np.errstate(over="ignore"):
        return np.where(pct, 100.0 * np.expm1(logs), np.exp(logs))


def one_sided(log_error, sides) -> np.ndarray:
    """Zero a log error on the right side of a bound (``gt``: predicted above; ``lt``: below)."""
    r = np.where(sides == "gt", np.minimum(log_error, 0.0), log_error)
    return np.where(sides == "lt", np.maximum(r, 0.0), r)


def log_residuals(predicted, recorded, pct, sides) -> np.ndarray:
    """``log(predicted / recorded)`` (percent changes as ``1 + p/100``), zero inside a bound."""
    return one_sided(log_scale(predicted, pct) - log_scale(recorded, pct), sides)
