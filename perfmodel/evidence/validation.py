"""Validation: how well the model explains every recorded figure, in and out of sample.

``validate(cv=None)`` predicts every usable figure with a parameter set
(in-sample when that set was fitted on the same figures). With ``cv`` each
fold of figures is predicted by a refit that never saw it:

* ``"group"`` leaves out one *group* of sources at a time: sources that share
  a lab or derive from each other (the benchmark column ``group``) go
  together, so a fold is a lab the fit has not seen. This is the headline.
* ``"loo"`` leaves out one figure at a time, together with the figures that
  are the same measurement in another form (column ``same_measurement``: a
  ratio of two recorded absolutes, a time per operation of a throughput).
* ``"source"`` leaves out one source document at a time.

Every refit starts from the documented priors (``start``, the ``default``
set: not from a fit that saw the held-out figures), with log-normal priors
centred there, and runs to convergence (``max_nfev`` is a safety cap; a refit
that hits it is reported with ``converged`` False, never silently used). The
refits run on the execution layer (local worker processes or a Dask
``scheduler``) with a progress bar.

Each figure gets ``recorded``, ``predicted``, ``rel_error`` (signed,
``predicted / recorded - 1``; ratio scale for percent changes),
``factor_error`` (``exp(|ln(predicted / recorded)|)``, so a 10x miss reads
10x, never "90%"), a 50% and 90% band (``lower`` / ``upper``: parameter
uncertainty by the delta method plus the model discrepancy of
:mod:`perfmodel.evidence.discrepancy`, estimated from the other folds' residuals only)
and whether the recorded value lies inside (``in_band``, ``in_band_50``).
A recorded maximum or minimum over a run, and a "more than" / "less than"
statement, is a *bound*: its error is zero inside the bound and measured
from the bound outside it.

Figures a prior or a catalog number was derived from (``derived_from`` in
``perfmodel/parameters/default.json`` and ``data/hardware/``) are marked in
``derived`` and left out of out-of-sample summaries. Figures missed by more
than :data:`MISS_FACTOR` get a ``gap``: the missing mechanism named for them
in ``data/model_gaps.yaml``, ``out-of-sample-only`` (the fit on every figure
explains them), or ``undiagnosed``.
"""

from __future__ import annotations

import fnmatch
import math
import time
from collections.abc import Sequence

import numpy as np
import pandas as pd

from perfmodel.evidence import discrepancy as disc
from perfmodel.evidence.calibration import DEFAULT_FREE, CalibrationResult, calibrate, usable_figures
from perfmodel.evidence.compare import (
    bound_sides,
    from_log_scale,
    log_scale,
    one_sided,
    percent,
    recorded_values,
    relative,
)
from perfmodel.evidence.figure_plan import FigurePlan
from perfmodel.evidence.recorded import calibration_benchmarks
from perfmodel.inputs._data import data_dir, load_yaml
from perfmodel.inputs.catalog import default_catalog
from perfmodel.inputs.params import ParameterSet, fit_uncertainty, load_parameters
from perfmodel.inputs.units import UNITS
from perfmodel.run.execution import map_tasks

#: factor error above which a figure counts as missed (the issue's 25%, symmetric in log) [-]
MISS_FACTOR = 1.25
#: cross-validation schemes
CV_CHOICES = ("group", "loo", "source")
#: band levels every table reports
LEVELS = (0.5, 0.9)
#: optimiser settings of every refit (the shipped fit's)
REFIT_TOL = 1e-10
REFIT_MAX_NFEV = 200
#: gap of a figure missed out of sample that the fit on every figure explains
OUT_OF_SAMPLE_ONLY = "out-of-sample-only"

COLUMNS = (
    "figure_id",
    "source_id",
    "source",
    "group",
    "fold",
    "metric",
    "metric_group",
    "unit",
    "bound",
    "recorded",
    "predicted",
    "rel_error",
    "factor_error",
    "log_error",
    "param_sd",
    "sigma",
    "lower",
    "upper",
    "in_band",
    "lower_50",
    "upper_50",
    "in_band_50",
    "converged",
    "derived",
    "in_sample",
    "gap",
)


# ---------------------------------------------------------------------------------------
# Known gaps
# ---------------------------------------------------------------------------------------


def load_gaps(path=None) -> list[dict]:
    """The known model gaps: ``id``, ``mechanism``, ``evidence``, ``figures`` (wildcards)."""

    path = data_dir() / "model_gaps.yaml" if path is None else path
    with open(path, encoding="utf-8") as handle:
        gaps = load_yaml(handle)["gaps"]
    for gap in gaps:
        missing = {"id", "mechanism", "evidence", "figures"} - set(gap)
        if missing:
            raise ValueError(f"{path}: gap {gap.get('id', '?')!r} lacks {sorted(missing)}")
    return gaps


def gap_of(figure_id: str, gaps: Sequence[dict]) -> str:
    """The id of the first gap whose figure patterns match ``figure_id``, else ``""``."""
    for gap in gaps:
        if any(fnmatch.fnmatchcase(figure_id, pattern) for pattern in gap["figures"]):
            return gap["id"]
    return ""


# ---------------------------------------------------------------------------------------
# Folds and provenance
# ---------------------------------------------------------------------------------------


def linked_clusters(table: pd.DataFrame) -> np.ndarray:
    """Cluster label per figure: figures linked by ``same_measurement`` share one (union-find)."""
    ids = list(table["figure_id"])
    parent = list(range(len(ids)))
    index = {fid: i for i, fid in enumerate(ids)}

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    links = table["same_measurement"] if "same_measurement" in table else [""] * len(ids)
    for i, text in enumerate(links):
        for other in filter(None, str(text or "").split(";")):
            if other in index:
                parent[root(i)] = root(index[other])
    return np.array([root(i) for i in range(len(ids))])


def cv_folds(table: pd.DataFrame, cv: str) -> list[np.ndarray]:
    """Row indices of each fold: a group, a source, or one figure with its linked figures."""
    if cv not in CV_CHOICES:
        raise ValueError(f"cv: must be None or one of {', '.join(CV_CHOICES)}, got {cv!r}")
    clusters = linked_clusters(table)
    if cv == "loo":
        keys = clusters
    else:
        column = "group" if cv == "group" and "group" in table else "source_id"
        keys = table[column].to_numpy(object)
        # a linked pair that spans two sources is held out together
        label = {}
        for key, cluster in zip(keys, clusters, strict=True):
            label.setdefault(cluster, key)
        keys = np.array([label[c] for c in clusters], dtype=object)
    order = pd.unique(pd.Series(keys))
    return [np.flatnonzero(keys == k) for k in order]


def derived_figures(table: pd.DataFrame, params: ParameterSet, catalog=None) -> list[str]:
    """Per figure, what was derived from it ("" if nothing): priors and catalog numbers.

    Reads ``derived_from`` of the parameter set's entries and of every catalog
    platform, device and network; a figure linked to a derived one by
    ``same_measurement`` is derived too (it carries the same number).
    """

    catalog = catalog or default_catalog()
    sources: list[tuple[str, tuple[str, ...]]] = [
        (f"prior {key}", info.derived_from) for key, info in params.info.items() if info.derived_from
    ]
    for kind in ("platforms", "devices", "networks"):
        for item in getattr(catalog, kind).values():
            for field, ids in getattr(item, "derived_from", {}).items():
                sources.append((f"catalog {item.id}.{field}", ids))
    ids = list(table["figure_id"])
    found: list[list[str]] = [[] for _ in ids]
    for what, patterns in sources:
        for i, fid in enumerate(ids):
            if any(fnmatch.fnmatchcase(fid, p) for p in patterns):
                found[i].append(what)
    clusters = linked_clusters(table)
    by_cluster: dict[int, list[str]] = {}
    for c, what in zip(clusters, found, strict=True):
        by_cluster.setdefault(c, []).extend(what)
    return ["; ".join(sorted(set(by_cluster[c]))) for c in clusters]


# ---------------------------------------------------------------------------------------
# Refits
# ---------------------------------------------------------------------------------------


def log_prediction_jacobian(plan: FigurePlan, params: ParameterSet, free: Sequence[str], step=1e-3):
    """``d log(prediction) / d log(parameter)`` for every figure of ``plan`` (finite differences).

    Percent changes are taken on the ratio scale (``1 + p/100``). A step that
    would leave a parameter's bounds is taken backwards.
    """
    pct = np.array([rec["unit"] == "pct_change" for rec in plan.records])

    def logs(values):
        return log_scale(values, pct)

    base = logs(plan.evaluate(params)[0])
    jac = np.full((len(plan), len(free)), np.nan)
    for j, key in enumerate(free):
        lo, hi = params.info[key].bounds if key in params.info else (-np.inf, np.inf)
        h = step if params[key] * math.exp(step) <= hi else -step
        moved = params[key] * math.exp(h)
        if not lo <= moved <= hi:
            continue
        jac[:, j] = (logs(plan.evaluate(params.with_values(**{key: moved}))[0]) - base) / h
    return jac


def parameter_sd(plan: FigurePlan, fit) -> np.ndarray:
    """Standard deviation of each figure's log prediction from the fit's parameter covariance.

    Delta method: ``s_p^2 = g^T C g`` with ``g`` the log-log Jacobian and ``C``
    the fit's covariance of log parameters (Seber & Wild 1989, sec. 5.1).
    """
    base, free, _, cov = fit_uncertainty(fit)
    jac = log_prediction_jacobian(plan, base, free)
    jac = np.where(np.isfinite(jac), jac, 0.0)
    return np.sqrt(np.clip(np.einsum("ij,jk,ik->i", jac, cov, jac), 0, None))


def _refit_fold(task):
    """Worker: fit on ``train`` from the priors, predict ``test`` with its parameter sd."""
    train, test, start, free, priors, max_nfev, catalog = task
    started = time.perf_counter()
    fit = calibrate(train, params=start, free=free, priors=priors, max_nfev=max_nfev, tol=REFIT_TOL,
                    catalog=catalog)  # fmt: skip
    plan = FigurePlan(test, catalog)
    return {
        "predicted": plan.evaluate(fit.params_)[0],
        "param_sd": parameter_sd(plan, fit),
        "converged": fit.converged_,
        "status": fit.provenance_["status"],
        "message": fit.provenance_["optimizer"],
        "evaluations": fit.provenance_["evaluations"],
        "seconds": time.perf_counter() - started,
    }


# ---------------------------------------------------------------------------------------
# The validation table
# ---------------------------------------------------------------------------------------


def validate(
    benchmarks: pd.DataFrame | None = None,
    *,
    params: ParameterSet | str | None = None,
    cv: str | None = None,
    start: ParameterSet | str = "default",
    free: Sequence[str] = DEFAULT_FREE,
    fit: CalibrationResult | None = None,
    workers: int | None = None,
    scheduler=None,
    max_nfev: int = REFIT_MAX_NFEV,
    catalog=None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Predicted vs recorded for every usable figure; with ``cv`` out of sample.

    Parameters
    ----------
    benchmarks : figures (default: every shipped figure).
    params : the set validated in-sample (default: the shipped calibrated
        set); ignored with ``cv``, where every fold is refitted. Given by name
        or path, its recorded fit gives the parameter part of each band (a
        ``ParameterSet`` object carries none: pass ``fit=`` for that).
    cv : None (in-sample), ``"group"``, ``"loo"`` or ``"source"`` (module doc).
    start : the set every refit starts from and centres its priors on
        (default: ``default``, the documented priors -- as the shipped fit).
    free : parameters each refit frees.
    fit : in-sample only: a :class:`CalibrationResult` whose parameters and
        covariance give the prediction and its band.
    workers, scheduler : where the refits run (local processes, default one
        per core; or a Dask scheduler address).
    max_nfev : safety cap on each refit's optimiser steps.
    progress : a progress bar over refits (default: when stderr is a terminal).

    Returns
    -------
    DataFrame with the columns of :data:`COLUMNS`; ``attrs`` holds ``cv``,
    ``free_parameters``, ``excluded`` (figures that cannot be used, with the
    reason) and, with ``cv``, ``refits`` (one record per fold: figures,
    converged, optimiser message, evaluations, seconds).
    """
    if cv is not None and cv not in CV_CHOICES:
        raise ValueError(f"cv: must be None or one of {', '.join(CV_CHOICES)}, got {cv!r}")
    benchmarks = calibration_benchmarks() if benchmarks is None else benchmarks
    if cv is None:
        return _in_sample(benchmarks, params, fit, free, catalog)
    start = load_parameters(start)
    used, excluded = usable_figures(benchmarks, start, ("measured",), catalog)
    folds = cv_folds(used, cv)
    priors = {k: (start[k], 3.0) for k in free}
    tasks = [
        (used.drop(index=fold).reset_index(drop=True), used.iloc[fold].reset_index(drop=True), start,
         list(free), priors, max_nfev, catalog)
        for fold in folds
    ]  # fmt: skip
    tasks.append((used, used, start, list(free), priors, max_nfev, catalog))  # in-sample reference
    results = map_tasks(
        _refit_fold, tasks, scheduler=scheduler, workers=workers, chunk_size=1, progress=progress,
        desc=f"refits (cv={cv})", unit="fit",
    )  # fmt: skip
    raw = _raw_table(used, folds, results)
    table = score(raw, used, start, catalog)
    table.attrs.update(
        cv=cv,
        free_parameters=len(free),
        excluded=excluded.to_dict("records"),
        refits=[_refit_record(i, len(f), r) for i, (f, r) in enumerate(zip(folds, results, strict=False))]
        + [_refit_record("all", len(used), results[-1])],
    )
    return table


def _refit_record(fold, figures: int, result: dict) -> dict:
    keys = ("converged", "message", "evaluations", "seconds")
    return {"fold": fold, "figures": figures, **{k: result[k] for k in keys}}


def _raw_table(used: pd.DataFrame, folds, results) -> pd.DataFrame:
    """The refits' outputs per figure: fold, predicted, param_sd, converged, in-sample prediction."""
    n = len(used)
    raw = pd.DataFrame(
        {
            "figure_id": used["figure_id"].to_numpy(),
            "fold": np.zeros(n, dtype=int),
            "predicted": np.full(n, np.nan),
            "param_sd": np.full(n, np.nan),
            "converged": np.zeros(n, dtype=bool),
        }
    )
    for i, (fold, result) in enumerate(zip(folds, results, strict=False)):
        raw.loc[fold, "fold"] = i
        raw.loc[fold, "predicted"] = result["predicted"]
        raw.loc[fold, "param_sd"] = result["param_sd"]
        raw.loc[fold, "converged"] = result["converged"] and results[-1]["converged"]
    raw["in_sample"] = results[-1]["predicted"]
    return raw


def _in_sample(benchmarks, params, fit, free, catalog) -> pd.DataFrame:
    name = params
    params = fit.params_ if fit is not None else load_parameters(params)
    used, excluded = usable_figures(benchmarks, params, ("measured",), catalog)
    plan = FigurePlan(used, catalog)
    predicted = plan.evaluate(params)[0]
    try:
        sd = parameter_sd(plan, fit if fit is not None else name)
    except (ValueError, OSError, KeyError):  # a set without a recorded fit: no parameter uncertainty
        sd = np.zeros(len(used))
    raw = pd.DataFrame(
        {
            "figure_id": used["figure_id"].to_numpy(),
            "fold": -1,
            "predicted": predicted,
            "param_sd": sd,
            "converged": True,
            "in_sample": predicted,
        }
    )
    scales = disc.load_discrepancy(name if isinstance(name, str) else None) or {
        g: {"sigma_log": 0.0, "scores": []} for g in disc.GROUPS
    }
    table = score(raw, used, params, catalog, scales=scales)
    table.attrs.update(cv="in-sample", free_parameters=len(free), excluded=excluded.to_dict("records"))
    return table


def score(
    raw: pd.DataFrame, used: pd.DataFrame, params: ParameterSet, catalog=None, scales: dict | None = None
) -> pd.DataFrame:
    """Errors, bands, provenance and gaps from the refits' raw outputs (one row per figure of ``used``).

    ``scales``: fixed discrepancy scales per metric group (in-sample use);
    by default each fold's scales are estimated from the out-of-sample
    residuals of the *other* folds (so no figure widens its own band).
    """
    rel, pct = relative(used), percent(used)
    sides = bound_sides(used)
    recorded = recorded_values(used)
    predicted = raw["predicted"].to_numpy(float)
    table = pd.DataFrame(
        {
            "figure_id": used["figure_id"].to_numpy(),
            "source_id": used["source_id"].to_numpy(),
            "source": used["source"].to_numpy(),
            "group": (used["group"] if "group" in used else used["source_id"]).to_numpy(),
            "fold": raw["fold"].to_numpy(),
            "metric": used["metric"].to_numpy(),
            "metric_group": [
                disc.metric_group(m, r, lv)
                for m, r, lv in zip(used["metric"], rel, used["level"], strict=True)
            ],
            "unit": used["unit"].to_numpy(),
            "bound": sides,
            "recorded": recorded,
            "predicted": predicted,
        }
    )  # fmt: skip
    log_pred = log_scale(predicted, pct)
    log_rec = log_scale(recorded, pct)
    log_error = one_sided(log_pred - log_rec, sides)
    table["rel_error"] = np.expm1(log_error)
    table["factor_error"] = np.exp(np.abs(log_error))
    table["log_error"] = log_error
    table["param_sd"] = raw["param_sd"].to_numpy(float)
    table["converged"] = raw["converged"].to_numpy(bool)
    table["derived"] = derived_figures(used, params, catalog)
    table["in_sample"] = raw["in_sample"].to_numpy(float)
    sigma, multipliers = _discrepancies(table, scales)
    table["sigma"] = sigma
    for level in LEVELS:
        lo, hi = disc.log_normal_band(np.exp(log_pred), table["param_sd"], sigma, multipliers[level])
        lo, hi = from_log_scale(np.log(lo), pct), from_log_scale(np.log(hi), pct)
        inside = _inside(recorded, lo, hi, sides)
        suffix = "" if level == 0.9 else f"_{round(level * 100)}"
        table[f"lower{suffix}"], table[f"upper{suffix}"], table[f"in_band{suffix}"] = lo, hi, inside
    table["gap"] = _gaps(table, used, pct, sides)
    return table[list(COLUMNS)]


def _inside(recorded, lo, hi, sides):
    """The recorded value (or the side of a bound) meets the band; NaN bands give False."""
    ok = np.isfinite(lo) | np.isfinite(hi)
    inside = (recorded >= np.minimum(lo, hi)) & (recorded <= np.maximum(lo, hi))
    inside = np.where(sides == "gt", np.maximum(lo, hi) >= recorded, inside)
    inside = np.where(sides == "lt", np.minimum(lo, hi) <= recorded, inside)
    return inside & ok


def _discrepancies(table: pd.DataFrame, stored: dict | None):
    """Discrepancy scale and band multipliers (per level) of every figure.

    ``stored``: a parameter set's discrepancy (in-sample use). Otherwise a
    figure's come from the out-of-sample residuals of the *other folds* only
    -- for leave-one-group-out, other labs: a lab's own errors never calibrate
    its bands -- of its metric group, or of every group pooled when its group
    has fewer than :data:`perfmodel.evidence.discrepancy.MIN_FIGURES` figures there.
    (For leave-one-out a fold is a figure and its linked figures, and the
    coverage of split-conformal bands built that way is close to its level by
    construction; leave-one-group-out is the test.)
    """
    groups = table["metric_group"].to_numpy(object)
    n = len(table)
    sigma = np.full(n, np.nan)
    mult = {level: np.full(n, np.nan) for level in LEVELS}
    if stored is not None:
        for i, g in enumerate(groups):
            entry = stored.get(g)
            if entry is None:
                continue
            sigma[i] = entry["sigma_log"]
            for level in LEVELS:
                mult[level][i] = disc.band_multiplier(entry.get("scores", []), level)
        return sigma, mult
    usable = _summarised(table) & (table["bound"] == "").to_numpy()
    r, sp = table["log_error"].to_numpy(float), table["param_sd"].to_numpy(float)
    folds = table["fold"].to_numpy()
    for fold in np.unique(folds):
        rest = usable & (folds != fold)
        for group in np.unique(groups[folds == fold]):
            own = rest & (groups == group)
            pick = own if own.sum() >= disc.MIN_FIGURES else rest
            entry = disc.group_discrepancy(r[pick], sp[pick])
            mine = (folds == fold) & (groups == group)
            sigma[mine] = entry["sigma_log"]
            for level in LEVELS:
                mult[level][mine] = disc.band_multiplier(entry["scores"], level)
    return sigma, mult


def _summarised(table: pd.DataFrame) -> np.ndarray:
    """Figures an out-of-sample summary counts: not derived, converged, predicted."""
    return (
        (table["derived"] == "").to_numpy()
        & table["converged"].to_numpy(bool)
        & np.isfinite(table["log_error"].to_numpy(float))
    )


def _gaps(table, used, pct, sides) -> list[str]:
    gaps = load_gaps()
    in_log = one_sided(log_scale(table["in_sample"], pct) - log_scale(table["recorded"], pct), sides)
    limit = math.log(MISS_FACTOR)
    miss = ~(np.abs(table["log_error"].to_numpy(float)) <= limit)  # NaN counts as a miss
    fits = np.abs(in_log) <= limit
    return [
        "" if not m else OUT_OF_SAMPLE_ONLY if ok else (gap_of(fid, gaps) or "undiagnosed")
        for fid, m, ok in zip(table["figure_id"], miss, fits, strict=True)
    ]


# ---------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------


def _stats(part: pd.DataFrame) -> dict:
    values = part[part["bound"] == ""]
    abs_rel = np.abs(values["rel_error"].to_numpy(float))
    factor = values["factor_error"].to_numpy(float)
    bounds = part[part["bound"] != ""]

    def q(a, p):
        return float(np.nanpercentile(a, p)) if len(a) and np.isfinite(a).any() else math.nan

    return {
        "figures": len(values),
        "median_abs_rel_error": q(abs_rel, 50),
        "p90_abs_rel_error": q(abs_rel, 90),
        "median_factor_error": q(factor, 50),
        "p90_factor_error": q(factor, 90),
        "beyond_2x": int((factor > 2).sum()),
        "coverage_50": float(values["in_band_50"].mean()) if len(values) else math.nan,
        "coverage_90": float(values["in_band"].mean()) if len(values) else math.nan,
        "bounds": len(bounds),
        "bounds_violated": int((bounds["factor_error"] > 1).sum()),
    }


def skill_vs_no_change(table: pd.DataFrame) -> dict:
    """Ratio figures against the no-change forecast (every ratio 1.0x, every percent change 0).

    ``skill = 1 - sum(r_model^2) / sum(r_null^2)`` on log ratios (1: perfect,
    0: no better than predicting no change, < 0: worse), with both medians of
    the factor error, and of the ``changes`` (recorded ratio not 1) how many
    the model gives the ``right_direction``. Only value figures of the
    ``ratios`` group count.
    """
    part = table[(table["metric_group"] == "ratios") & (table["bound"] == "")]
    part = part[np.isfinite(part["log_error"])]
    pct = percent(part)
    null = -log_scale(part["recorded"].to_numpy(float), pct)
    model = part["log_error"].to_numpy(float)
    denom = float(np.sum(null**2))
    rec_log = -null
    pred_log = model + rec_log
    changed = np.abs(rec_log) > 1e-12
    return {
        "figures": len(part),
        "skill": 1 - float(np.sum(model**2)) / denom if denom > 0 else math.nan,
        "changes": int(changed.sum()),
        "right_direction": int((np.sign(pred_log[changed]) == np.sign(rec_log[changed])).sum()),
        "median_factor_error": float(np.median(np.exp(np.abs(model)))) if len(part) else math.nan,
        "no_change_median_factor_error": float(np.median(np.exp(np.abs(null)))) if len(part) else math.nan,
    }


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Median / p90 of |relative| and factor error, band coverage and bounds: overall, per group,
    source and metric group. Out of sample, derived and non-converged figures are left out."""
    cv = table.attrs.get("cv", "in-sample")
    part = table if cv == "in-sample" else table[_summarised(table)]
    rows = [("all", "all", part)]
    for scope, column in (("group", "group"), ("source", "source_id"), ("metric", "metric_group")):
        rows += [(scope, key, p) for key, p in part.groupby(column, sort=True)]
    return pd.DataFrame([{"scope": s, "name": n, **_stats(p)} for s, n, p in rows])


def summary_lines(table: pd.DataFrame) -> list[str]:
    """The summary as text lines (``#``-prefixed in CSV output)."""
    cv = table.attrs.get("cv", "in-sample")
    s = summarize(table)
    overall = s.iloc[0]
    counted = int(overall["figures"])
    left_out = ""
    if cv != "in-sample":
        derived = int((table["derived"] != "").sum())
        failed = int((~table["converged"]).sum())
        left_out = f"; {derived} derived from priors or catalog numbers and {failed} unconverged left out"
    lines = [
        f"validation ({cv if cv == 'in-sample' else 'cv=' + cv}): {len(table)} figures "
        f"({counted} values counted{left_out}), {table.attrs.get('free_parameters', '?')} free parameters, "
        f"{len(table.attrs.get('excluded', []))} figures excluded",
        _line("all", overall),
    ]
    for _, r in s.iloc[1:].iterrows():
        lines.append(_line(f"{r['scope']} {r['name']}", r))
    skill = skill_vs_no_change(table if cv == "in-sample" else table[_summarised(table)])
    lines.append(
        f"ratios vs no change (1.0x): skill {skill['skill']:.2f} on {skill['figures']} figures; "
        f"median factor {skill['median_factor_error']:.3f}x (model) vs "
        f"{skill['no_change_median_factor_error']:.3f}x (no change); "
        f"direction right for {skill['right_direction']} of {skill['changes']}"
    )
    refits = table.attrs.get("refits")
    if refits:
        bad = [r for r in refits if not r["converged"]]
        lines.append(
            f"refits: {len(refits)} from the priors, {len(refits) - len(bad)} converged"
            + (
                ""
                if not bad
                else " -- NOT CONVERGED: " + ", ".join(f"fold {r['fold']} ({r['message']})" for r in bad)
            )
        )
    missed = missed_figures(table)
    counts = missed["gap"].value_counts()
    lines.append(
        f"beyond {MISS_FACTOR:g}x: {len(missed)} figures"
        + (": " + ", ".join(f"{gap} {n}" for gap, n in counts.items()) if len(missed) else "")
        + " (mechanisms: data/model_gaps.yaml, docs/validation.md)"
    )
    return lines


def _line(name: str, r) -> str:
    text = (
        f"{name}: n={int(r['figures'])}, |rel error| median {r['median_abs_rel_error']:.1%} p90 "
        f"{r['p90_abs_rel_error']:.1%}, factor median {r['median_factor_error']:.3f}x p90 "
        f"{r['p90_factor_error']:.2f}x, beyond 2x {int(r['beyond_2x'])}, band coverage 50% "
        f"{r['coverage_50']:.0%} 90% {r['coverage_90']:.0%}"
    )
    if r["bounds"]:
        text += f", bounds {int(r['bounds_violated'])}/{int(r['bounds'])} violated"
    return text


def missed_figures(table: pd.DataFrame) -> pd.DataFrame:
    """Figures beyond :data:`MISS_FACTOR`, with the missing mechanism named for them."""
    part = table[table["gap"] != ""]
    return part.sort_values(["gap", "factor_error"], kind="stable")


def gap_report(table: pd.DataFrame) -> pd.DataFrame:
    """Per known gap: how many figures it explains here, their median factor error, and each
    figure's recorded and predicted value (computed now, never typed)."""
    gaps = {g["id"]: g for g in load_gaps()}
    rows = []
    for gap_id, part in missed_figures(table).groupby("gap", sort=False):
        quotes = [
            f"{r.figure_id}: {_fmt(r.recorded, r.unit)} recorded, {_fmt(r.predicted, r.unit)} predicted"
            + (f" ({r.bound} bound)" if r.bound else "")
            for r in part.itertuples()
        ]
        rows.append(
            {
                "gap": gap_id,
                "figures": len(part),
                "median_factor_error": float(part["factor_error"].median()),
                "mechanism": " ".join(gaps[gap_id]["mechanism"].split()) if gap_id in gaps else "",
                "figures_quoted": "; ".join(quotes),
            }
        )
    out = pd.DataFrame(rows, columns=["gap", "figures", "median_factor_error", "mechanism", "figures_quoted"])
    return out.sort_values("figures", ascending=False, kind="stable").reset_index(drop=True)


def _fmt(value: float, unit: str) -> str:
    """A value in the figure's own unit, 3 significant digits (SI in, source unit out)."""
    if not np.isfinite(value):
        return str(value)
    if unit in ("ratio",):
        return f"{value:.3g}x"
    if unit == "pct_change":
        return f"{value:+.3g}%"
    return f"{value / UNITS[unit].to_si:.3g} {unit}"


# ---------------------------------------------------------------------------------------
# Plot
# ---------------------------------------------------------------------------------------


def plot_predicted_vs_recorded(table: pd.DataFrame, ax=None):
    """Predicted vs recorded on log axes, one colour per source, with the y = x line.

    Absolute figures are plotted in SI units, relative ones as ratios (percent
    changes as 1 + p/100), so everything shares one log scale; the 90% band
    is drawn as a vertical bar. Returns the axes.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    table = table.copy()
    pct = table["unit"] == "pct_change"
    for col in ("recorded", "predicted", "lower", "upper"):
        table.loc[pct, col] = 1 + table.loc[pct, col] / 100
    table = table[(table["recorded"] > 0) & (table["predicted"] > 0)]
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 6))
    lo_err = np.clip(table["predicted"] - table["lower"], 0, None).fillna(0)
    hi_err = np.clip(table["upper"] - table["predicted"], 0, None).fillna(0)
    ax.errorbar(
        table["recorded"], table["predicted"], yerr=[lo_err, hi_err], fmt="none", ecolor="0.75", lw=0.7,
        zorder=1,
    )  # fmt: skip
    sns.scatterplot(
        data=table, x="recorded", y="predicted", hue="source_id", style="metric_group", ax=ax, s=28, zorder=2
    )
    lo = float(min(table["recorded"].min(), table["predicted"].min())) / 1.5
    hi = float(max(table["recorded"].max(), table["predicted"].max())) * 1.5
    ax.plot([lo, hi], [lo, hi], color="0.3", lw=1, label="y = x")
    ax.fill_between(
        [lo, hi], [lo / MISS_FACTOR, hi / MISS_FACTOR], [lo * MISS_FACTOR, hi * MISS_FACTOR], color="0.9",
        zorder=0, label=f"within {MISS_FACTOR:g}x",
    )  # fmt: skip
    cv = table.attrs.get("cv", "in-sample")
    ax.set(
        xscale="log",
        yscale="log",
        xlim=(lo, hi),
        ylim=(lo, hi),
        xlabel="recorded (SI units; ratios)",
        ylabel="predicted (bar: 90% band)",
        title=f"perfmodel vs recorded figures ({cv})",
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1)
    return ax
