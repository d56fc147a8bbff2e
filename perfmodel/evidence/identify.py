"""Which parameters a user's figures can pin: the free list of ``perfmodel calibrate --data`` (issue 39).

A planner's own runs differ from the shipped fit's labs in a few places: the system's CPU per request,
the lab's fixed time per round trip (the client's network stack and the network between client and
server), its drives' time per I/O under load against their catalog entries, the load generator's own
time per request outside the latency it measures, the socket work per
message (where the load generator shares the server's cores), the
clock and SMT yield of a platform family the fit has not seen. :func:`candidates` lists those the
figures could inform (the systems and families they name); :func:`choose_free` keeps the ones the
figures actually move and can tell apart, and says why it leaves each other one fixed.

The test is local and linear (Bates & Watts 1988, Nonlinear Regression Analysis, ch. 2): ``J``, the
derivative of each figure's log prediction with respect to each candidate's log value at the start,
is computed by finite differences. A candidate is *sensitive* when a doubling of it moves the
figures by at least ``min_effect`` in root mean square (``rms(J) log 2``); it is *distinguishable*
when its column is not (almost) a combination of those already kept: the cosine between the column
and its projection on their span stays below ``max_collinearity``. Candidates are taken greedily,
most sensitive first, and at most one per two usable figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from perfmodel.evidence.figure_plan import FigurePlan
from perfmodel.evidence.validation import log_prediction_jacobian
from perfmodel.inputs.catalog import default_catalog
from perfmodel.inputs.params import ParameterSet

__all__ = ["Choice", "candidates", "choose_free", "fit_start", "priors"]

#: per-system costs a lab's figures inform, by what differs between labs (issue 39 point 4)
SYSTEM_CANDIDATES = ("cpu_cycles_read", "cpu_cycles_write", "cpu_cycles_miss", "cpu_cycles_message")
#: the lab's own share: its fixed time per round trip (the client's network stack and the network up to
#: the server) and its drives' time per I/O against their catalog entries
LAB_CANDIDATES = ("net_stack_s", "device_time_factor", "client_time_s")
#: where a lab's fit starts a lab parameter the shipped sets leave at 0 (a log-space fit needs a value
#: above 0): the load generator's time per request, 20 us (default.json's source for client_time_s)
LAB_STARTS = {"client_time_s": 2e-5}
#: per platform family: what the shipped fit may not have seen
FAMILY_CANDIDATES = ("ghz_factor", "smt_alpha")
#: the log-normal prior of a lab's fit, a factor per standard deviation around the start: wide for the
#: lab's own share (a cloud network's round trip is ten times a rack's), the documented 3 elsewhere
LAB_PRIOR_FACTOR = 10.0
PRIOR_FACTOR = 3.0
#: a doubling must move the figures by this much (rms of log predictions) for a parameter to be fitted
MIN_EFFECT = 0.05
#: above this cosine with the span of the parameters already kept, the figures cannot tell it apart
MAX_COLLINEARITY = 0.95


@dataclass(frozen=True)
class Choice:
    """The parameters to fit and, for every other candidate, why it stays at its start.

    ``effect``: per candidate, the rms change of the figures' log predictions for a doubling [-].
    """

    free: tuple[str, ...]
    fixed: dict[str, str] = field(default_factory=dict)
    effect: dict[str, float] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The choice as report lines: what is fitted and what the figures cannot pin."""
        out = ["free (the figures move and can tell apart):"]
        out += [f"  {k}: a doubling moves them {self.effect[k]:.1%} (rms)" for k in self.free] or ["  none"]
        if self.fixed:
            out.append("left at the start (what these figures cannot pin):")
            out += [f"  {k}: {why}" for k, why in self.fixed.items()]
        return out


def candidates(figures: pd.DataFrame, params: ParameterSet, catalog=None) -> list[str]:
    """The parameters a lab's ``figures`` could inform, in :data:`SYSTEM_CANDIDATES` then
    :data:`LAB_CANDIDATES` then :data:`FAMILY_CANDIDATES` order, those present in ``params``."""
    catalog = catalog or default_catalog()
    systems = sorted({str(s) for s in figures["system"] if isinstance(s, str) and s})
    out = [f"{name}[{s}]" for s in systems for name in SYSTEM_CANDIDATES]
    out += list(LAB_CANDIDATES)
    families = set()
    for pid in sorted({str(p) for p in figures.get("platform_id", pd.Series(dtype=object)).dropna() if p}):
        try:
            families.add(catalog.platform(pid).family)
        except (KeyError, ValueError):
            continue
    out += [f"{name}[{fam}]" for fam in sorted(families) for name in FAMILY_CANDIDATES]
    return [k for k in out if k in params.values and (params[k] > 0 or k in LAB_STARTS)]


def fit_start(params: ParameterSet, free: Sequence[str] = tuple(LAB_STARTS)) -> ParameterSet:
    """``params`` with each lab parameter of ``free`` that is 0 there set to its :data:`LAB_STARTS`
    value: where a lab's fit starts. Parameters not freed keep their values, so a lab parameter the
    figures cannot pin stays out of the predictions."""
    starts = {k: v for k, v in LAB_STARTS.items() if k in free and k in params.values and params[k] == 0}
    return params.with_values(**starts) if starts else params


def choose_free(
    figures: pd.DataFrame,
    params: ParameterSet,
    pool: Sequence[str] | None = None,
    *,
    catalog=None,
    min_effect: float = MIN_EFFECT,
    max_collinearity: float = MAX_COLLINEARITY,
) -> Choice:
    """The candidates (``pool``; default :func:`candidates`) the ``figures`` can identify at ``params``.

    Figures without a prediction are left out of the test. Raises ValueError when no figure has one.
    """
    pool = list(candidates(figures, params, catalog) if pool is None else pool)
    plan = FigurePlan(figures.reset_index(drop=True), catalog)
    jac = log_prediction_jacobian(plan, fit_start(params, pool), pool)  # lab parameters at their starts
    movable = ~np.isnan(jac).all(axis=0)  # a parameter whose step leaves its bounds both ways
    rows = np.isfinite(jac[:, movable]).all(axis=1)
    if not rows.any():
        raise ValueError("figures: none has a prediction to fit; nothing can be identified")
    jac = np.nan_to_num(jac[rows])
    effect = {k: float(np.sqrt(np.mean(jac[:, j] ** 2)) * math.log(2.0)) for j, k in enumerate(pool)}
    cap = max(1, int(rows.sum()) // 2)
    free: list[str] = []
    fixed: dict[str, str] = {}
    for j in sorted(range(len(pool)), key=lambda j: -effect[pool[j]]):
        key = pool[j]
        if not movable[j]:
            fixed[key] = "its bounds leave no room to move it"
            continue
        if effect[key] < min_effect:
            fixed[key] = f"a doubling moves the figures {effect[key]:.1%} (rms), under {min_effect:.0%}"
            continue
        if len(free) >= cap:
            fixed[key] = f"{int(rows.sum())} figures fit at most {cap} parameters"
            continue
        cosine, nearest = _collinearity(jac, [pool.index(k) for k in free], j)
        if cosine > max_collinearity:
            fixed[key] = f"the figures cannot tell it from {free[nearest]} (cosine {cosine:.2f})"
            continue
        free.append(key)
    return Choice(tuple(free), fixed, effect)


def _collinearity(jac: np.ndarray, kept: list[int], j: int) -> tuple[float, int]:
    """Cosine between column ``j`` and its projection on the span of columns ``kept``, and the kept
    column (its position in ``kept``) most aligned with it; (0, -1) when nothing is kept."""
    if not kept:
        return 0.0, -1
    col = jac[:, j]
    norm = np.linalg.norm(col)
    if norm == 0:
        return 1.0, 0
    basis = jac[:, kept]
    coef, *_ = np.linalg.lstsq(basis, col, rcond=None)
    cosine = float(np.linalg.norm(basis @ coef) / norm)
    single = [
        abs(col @ basis[:, i]) / (norm * max(np.linalg.norm(basis[:, i]), 1e-300)) for i in range(len(kept))
    ]
    return min(cosine, 1.0), int(np.argmax(single))


def priors(free: Sequence[str], params: ParameterSet) -> dict[str, tuple[float, float]]:
    """``{key: (centre, factor)}`` for a lab's fit: the start, a factor of :data:`LAB_PRIOR_FACTOR` for
    the lab's own share (:data:`LAB_CANDIDATES`), :data:`PRIOR_FACTOR` for the rest."""
    return {k: (params[k], LAB_PRIOR_FACTOR if k in LAB_CANDIDATES else PRIOR_FACTOR) for k in free}
