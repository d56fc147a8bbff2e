"""Calibration: fit the model's free parameters to recorded figures, with uncertainty.

``calibrate(benchmarks)`` fits the parameters named in ``free`` by
least squares on **log ratios** of predicted to recorded values
(``scipy.optimize.least_squares``, trust-region reflective, bounds from the
parameter set), so a 500 K ops/s figure and a 10 ms latency weigh alike:

* absolute figure: ``r = log(predicted / recorded)``;
* ratio: ``r = log(predicted ratio / recorded ratio)``;
* percent change: ``r = log((1 + predicted/100) / (1 + recorded/100))``;
* ``relation`` gt / lt: one-sided (zero when the inequality holds);
  ``approx``: residual scaled by 1/2 (a quarter of the weight in the sum of squares).

Parameters are fitted in log space (all free parameters are positive).
Uncertainty comes from the Jacobian at the optimum: without priors ``cov =
s^2 (J^T J)^-1`` with ``s^2`` the figures' residual variance (Seber & Wild,
*Nonlinear Regression*, 1989, sec. 2.1); with priors the posterior precision
``J_d^T J_d / s^2 + J_p^T J_p`` adds each prior's information (Gelman et al.,
*Bayesian Data Analysis*, sec. 4.1, normal approximation); 95% intervals are
``exp(log p +- 1.96 se)``. A parameter the
data cannot pin down is flagged (interval reaching a bound, a near-singular
Jacobian, or |correlation| > 0.95 with another) instead of reported with
false precision. Figures that cannot be used are listed with the reason,
never dropped silently.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize

from perfmodel._version import __version__
from perfmodel.evidence.compare import bound_sides, log_residuals, percent, recorded_values
from perfmodel.evidence.figure_plan import FigurePlan, predict_figures
from perfmodel.evidence.recorded import calibration_benchmarks, calibration_files, parse_baseline
from perfmodel.inputs._data import PACKAGE_DIR, PARAMETERS_DIR, data_dir
from perfmodel.inputs.catalog import default_catalog
from perfmodel.inputs.params import ParameterSet, load_parameters
from perfmodel.inputs.systems import list_systems, load_system
from perfmodel.inputs.units import UNITS

#: parameters fitted by default: per-architecture SMT and clock efficiency, per-system CPU
#: costs, the LSM background factor, Ceph's onode cache terms, the VM I/O path and NUMA
DEFAULT_FREE = (
    "smt_alpha[power8]",
    "smt_alpha[x86]",
    "ghz_factor[power8]",
    "ghz_factor[kunpeng]",
    "cpu_cycles_read[scylla]",
    "cpu_cycles_miss[scylla]",
    "cpu_cycles_write[scylla]",
    "cpu_cycles_read[cassandra]",
    "cpu_cycles_write[cassandra]",
    "cpu_cycles_read[rocksdb]",
    "cpu_cycles_write[rocksdb]",
    "background_write_factor[rocksdb]",
    "cpu_cycles_read[dm8]",
    "cpu_cycles_write[dm8]",
    "cpu_cycles_read[ceph]",
    "cpu_cycles_write[ceph]",
    "cpu_cycles_onode_miss[ceph]",
    "onode_bytes[ceph]",
    "virt_io_overhead_s[untuned]",
    "virt_io_overhead_s[boost]",
    "virt_cpu_efficiency[untuned]",
    "numa_cross_socket_penalty",
)


def _exp(x):
    with np.errstate(over="ignore"):
        return np.exp(x)


def figure_residuals(table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Log-ratio residuals and weights of predicted vs recorded figures (see module doc)."""
    r = log_residuals(table["predicted"], recorded_values(table), percent(table), bound_sides(table))
    weight = np.where(table["relation"].fillna("").to_numpy() == "approx", 0.5, 1.0)
    return r, weight


def usable_figures(
    benchmarks: pd.DataFrame, params: ParameterSet, roles: Sequence[str], catalog=None
) -> tuple:
    """Split figures into those a fit can use and those it cannot (with the reason)."""
    table = predict_figures(benchmarks, params, catalog)
    reason = table["reason"].copy()
    reason[~table["role"].isin(roles) & (reason == "")] = "role not fitted (" + table["role"] + ")"
    unit_dim = table["unit"].map(lambda u: UNITS[u].dimension)
    value = np.where(unit_dim.isin(["ratio", "pct_change"]), table["value"], table["value_si"])
    zero = (unit_dim != "pct_change") & (np.asarray(value, dtype=float) <= 0)
    reason[zero & (reason == "")] = "recorded value is zero: no log ratio"
    r, _ = figure_residuals(table)
    bad = ~np.isfinite(r) & (reason == "")
    reason[bad] = "prediction not finite at the starting parameters"
    used = reason == ""
    excluded = table.loc[~used, ["figure_id", "source_id", "metric", "value", "unit"]].assign(
        reason=reason[~used]
    )
    return benchmarks.loc[used.to_numpy()].reset_index(drop=True), excluded.reset_index(drop=True)


def _with_user_systems(params: ParameterSet, benchmarks: pd.DataFrame | None) -> ParameterSet:
    """The set plus the parameters of every system spec file the figures name (their defaults)."""
    if benchmarks is None or "system" not in benchmarks:
        return params

    for name in sorted(set(map(str, benchmarks["system"])) - set(list_systems())):
        params = load_system(name).with_parameters(params)
    return params


def lab_weights(labs) -> np.ndarray:
    """Per figure, the weight that gives each of ``K`` labs the same share of a least-squares fit:
    ``sqrt(N / (K n_lab))`` for ``N`` figures, ``n_lab`` of them the figure's lab's, so a lab's squared
    weights sum to ``N / K`` whatever its size and the figures' total (against the priors) stays ``N``."""
    labs = pd.Series(np.asarray(labs, dtype=object)).astype(str)
    if labs.empty:
        return np.ones(0)
    counts = labs.map(labs.value_counts()).to_numpy(float)
    return np.sqrt(len(labs) / (labs.nunique() * counts))


class FigureObjective:
    """The data part of the fit's objective: weighted log residuals of figures at log parameters.

    ``data_residuals(x)`` is ``log(predicted / recorded)`` per figure (zero
    inside a bound, ``approx`` figures at half weight, 10 for a configuration
    pushed past capacity) with ``exp(x)`` the values of ``free``. The figures'
    configurations are built once (:class:`perfmodel.evidence.figure_plan.FigurePlan`).
    """

    def __init__(
        self, used: pd.DataFrame, params: ParameterSet, free: Sequence[str], catalog=None, name=None
    ):
        self.params, self.free, self.name = params, list(free), name or params.name
        self.plan = FigurePlan(used, catalog)
        self.recorded, self.sides = recorded_values(used), bound_sides(used)
        self.pct = percent(used)
        self.weight = np.where(used["relation"].fillna("").to_numpy() == "approx", 0.5, 1.0)
        #: a figure's share of the objective (column ``fit_weight``, e.g. :func:`lab_weights`); 1 without
        self.fit_weight = used["fit_weight"].to_numpy(float) if "fit_weight" in used else np.ones(len(used))

    def params_at(self, x) -> ParameterSet:
        """The parameter set with ``free`` at ``exp(x)``."""
        return self.params.with_values(name=self.name, **dict(zip(self.free, np.exp(x), strict=True)))

    def data_residuals(self, x) -> np.ndarray:
        """Weighted log residuals of every figure at log parameters ``x``."""
        r = log_residuals(self.plan.evaluate(self.params_at(x))[0], self.recorded, self.pct, self.sides)
        return np.where(np.isfinite(r), r, 10.0) * self.weight


@dataclass
class CalibrationResult:
    """A fit: ``params_`` (the fitted set), uncertainty, residuals and what was left out."""

    params_: ParameterSet
    free_: list[str]
    values_: np.ndarray
    stderr_: np.ndarray
    ci_low_: np.ndarray
    ci_high_: np.ndarray
    correlation_: np.ndarray
    residuals_: pd.DataFrame
    excluded_: pd.DataFrame
    flags_: dict[str, str] = field(default_factory=dict)
    cost_: float = math.nan
    seconds_: float = math.nan
    provenance_: dict = field(default_factory=dict)
    #: the optimiser stopped on a convergence test (not on ``max_nfev`` or an error)
    converged_: bool = True

    def table(self) -> pd.DataFrame:
        """The free parameters with value, standard error, 95% interval and flags."""
        return pd.DataFrame(
            {
                "parameter": self.free_,
                "value": self.values_,
                "stderr": self.stderr_,
                "ci_low": self.ci_low_,
                "ci_high": self.ci_high_,
                "unit": [self.params_.info[k].unit if k in self.params_.info else "" for k in self.free_],
                "flag": [self.flags_.get(k, "") for k in self.free_],
            }
        )

    def report(self) -> str:
        """A printable summary: fit quality, parameters, what the data cannot pin down."""
        err = np.abs(self.residuals_["rel_error"])
        lines = [
            f"calibrated {len(self.free_)} parameters on {len(self.residuals_)} figures "
            f"({len(self.excluded_)} excluded) in {self.seconds_:.1f} s",
            f"optimiser: {self.provenance_.get('optimizer', '?')} after "
            f"{self.provenance_.get('evaluations', '?')} evaluations"
            + ("" if self.converged_ else " -- NOT CONVERGED: raise max_nfev; do not use this fit"),
            f"in-sample |relative error|: median {np.median(err):.1%}, 90th percentile "
            f"{np.percentile(err, 90):.1%}",
            "",
            self.table().to_string(index=False, float_format=lambda v: f"{v:.4g}"),
        ]
        if self.flags_:
            lines += ["", "not pinned down by the data:"] + [f"  {k}: {v}" for k, v in self.flags_.items()]
        return "\n".join(lines)

    def to_json(self) -> dict:
        """JSON-ready record of the fit (never pickle): set, uncertainty and provenance."""
        return {
            "parameter_set": self.params_.to_json(),
            "fit": self.table().replace({np.nan: None}).to_dict("records"),
            "correlation": np.round(self.correlation_, 6).tolist(),
            "figures": self.residuals_["figure_id"].tolist(),
            "excluded": self.excluded_.to_dict("records"),
            "provenance": self.provenance_,
        }

    def save(self, path: str | Path) -> None:
        """Write the result as JSON."""
        Path(path).write_text(json.dumps(self.to_json(), indent=1, default=float) + "\n", encoding="utf-8")


def calibrate(
    benchmarks: pd.DataFrame | None = None,
    *,
    params: ParameterSet | str | None = None,
    free: Sequence[str] = DEFAULT_FREE,
    bounds: dict[str, tuple[float, float]] | None = None,
    roles: Sequence[str] = ("measured",),
    name: str = "calibrated",
    max_nfev: int = 200,
    priors: dict[str, tuple[float, float]] | str | None = None,
    catalog=None,
    tol: float = 1e-10,
    loss: str = "linear",
    f_scale: float = 1.0,
) -> CalibrationResult:
    """Fit ``free`` parameters of ``params`` to recorded figures.

    Parameters
    ----------
    benchmarks : figures to fit (default: the seed documents and their context,
        :func:`perfmodel.evidence.recorded.calibration_benchmarks`); figures whose ``role`` is not in
        ``roles`` are reported but not fitted.
    params : the starting parameter set (name, path or set).
    free : parameter keys to fit; the others stay fixed.
    bounds : optional ``{key: (low, high)}`` overriding the set's bounds.
    priors : ``None`` (least squares only), ``"start"`` (a log-normal prior
        around each starting value, a factor of 3 for one standard deviation)
        or ``{key: (center, factor)}``. A prior adds the residual
        ``log(p / center) / log(factor)`` (maximum a posteriori): parameters
        the figures barely inform stay near their documented values instead of
        drifting to whatever absorbs a missing mechanism.
    max_nfev : cap on optimiser steps (each predicts every figure, plus one
        evaluation per free parameter for the Jacobian); a fit that reaches it
        has ``converged_`` False.
    catalog : a catalog with the user's own platforms (default: the shipped one).
    tol : ftol / xtol / gtol of the optimiser.
    loss, f_scale : ``soft_l1`` makes the figures' residuals quadratic below ``f_scale``
        (a log ratio) and linear beyond (the priors stay quadratic); ``linear`` (default)
        is least squares.

    Raises
    ------
    ValueError : an unknown or non-positive free parameter, or fewer usable
        figures than free parameters.
    """
    started = time.perf_counter()
    params = _with_user_systems(load_parameters(params), benchmarks)
    benchmarks = calibration_benchmarks() if benchmarks is None else benchmarks
    free = list(free)
    lows, highs = _log_bounds(params, free, bounds)
    used, excluded = usable_figures(benchmarks, params, roles, catalog)
    if len(used) <= len(free):
        raise ValueError(f"benchmarks: {len(used)} usable figures for {len(free)} free parameters")
    x0 = np.clip(np.log([params[k] for k in free]), lows + 1e-9, highs - 1e-9)
    priors, prior_center, prior_width = _priors(params, free, priors)

    objective = FigureObjective(used, params, free, catalog, name)
    if loss not in ("linear", "soft_l1"):
        raise ValueError(f"loss: must be linear or soft_l1, got {loss!r}")

    def residuals(x):
        data = _robust(objective.data_residuals(x), loss, f_scale) * objective.fit_weight
        return np.concatenate([data, (x - prior_center) / prior_width])

    fit = optimize.least_squares(
        residuals,
        x0,
        bounds=(lows, highs),
        method="trf",
        x_scale="jac",
        max_nfev=max_nfev,
        diff_step=1e-3,
        ftol=tol,
        xtol=tol,
        gtol=tol,
    )
    n = len(used)
    se, corr = _posterior(fit, n)
    flags = _flags(free, fit.x, se, corr, np.linalg.norm(fit.jac[:n], axis=0), prior_width, lows, highs)
    return _result(fit, objective, used, excluded, se, corr, flags, started, params.name, priors)


def _result(fit, objective, used, excluded, se, corr, flags, started, start, priors) -> CalibrationResult:
    """The fit's parameters, intervals, residuals and provenance."""
    x, n, free = fit.x, len(used), objective.free
    fitted = objective.params_at(x)
    predicted = objective.plan.evaluate(fitted)[0]
    r = log_residuals(predicted, objective.recorded, objective.pct, objective.sides)
    residual_table = used[["figure_id", "source_id", "metric", "unit"]].assign(
        recorded=objective.recorded, predicted=predicted, log_residual=r, rel_error=np.expm1(r)
    )
    return CalibrationResult(
        params_=fitted,
        free_=free,
        values_=np.exp(x),
        stderr_=np.exp(x) * se,
        ci_low_=_exp(x - 1.96 * se),
        ci_high_=_exp(x + 1.96 * se),
        correlation_=corr,
        residuals_=residual_table,
        excluded_=excluded,
        flags_=flags,
        cost_=float(fit.cost),
        seconds_=time.perf_counter() - started,
        provenance_={
            "perfmodel": __version__,
            "start": start,
            "figures": int(n),
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "optimizer": fit.message,
            "status": int(fit.status),
            "evaluations": int(fit.nfev),
            "uncertainty": "Jacobian (Gauss-Newton covariance)",
            "priors": {k: list(v) for k, v in (priors or {}).items()},
        },
        converged_=bool(fit.status > 0),
    )


def _log_bounds(params: ParameterSet, free: list[str], bounds) -> tuple[np.ndarray, np.ndarray]:
    """Each free parameter's bounds in log space (a zero lower bound: 1/1000 of the start)."""
    for key in free:
        if key not in params.values:
            raise ValueError(f"free: {key!r} is not a parameter of set {params.name!r}")
    lows, highs = [], []
    for key in free:
        lo, hi = (bounds or {}).get(key, params.info[key].bounds if key in params.info else (0, np.inf))
        if not params[key] > 0:
            raise ValueError(f"free: {key!r} must be positive to be fitted in log space")
        lo = lo if lo > 0 else params[key] * 1e-3  # a zero bound becomes 1/1000 of the start
        lows.append(math.log(lo))
        highs.append(math.log(hi))
    return np.array(lows), np.array(highs)


def _priors(params: ParameterSet, free: list[str], priors):
    """``(priors, center, width)``: the priors as ``{key: (center, factor)}`` (``"start"``: a factor of 3
    around each starting value), and per free parameter its log centre and log width (inf: none)."""
    if priors == "start":
        priors = {k: (params[k], 3.0) for k in free}
    center = np.array([math.log((priors or {}).get(k, (1.0, 0.0))[0]) for k in free])
    width = np.array(
        [math.log(f) if f > 1 else np.inf for f in ((priors or {}).get(k, (1.0, 0.0))[1] for k in free)]
    )
    return priors, center, width


def _robust(r, loss: str, f_scale: float):
    """soft_l1 on the figures (not the priors): sqrt(rho(r)) with rho = 2 s^2 (sqrt(1 + (r/s)^2) - 1),
    quadratic below ``f_scale`` and linear beyond, so a figure a missing mechanism puts 10x off
    does not drag the fit (scipy's loss would also soften the priors); ``linear``: ``r`` itself."""
    if loss == "linear":
        return r
    z = np.nan_to_num(r / f_scale, nan=0.0, posinf=1e6, neginf=-1e6)
    return np.sign(z) * f_scale * np.sqrt(2.0 * (np.sqrt(1.0 + z * z) - 1.0))


def _posterior(fit, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Standard errors [log units] and correlations of the fitted parameters (Gauss-Newton).

    Posterior precision: the figures' information (their ``n`` Jacobian rows) scaled by their
    residual variance, plus the priors' (their residual rows already carry 1 / log(factor))."""
    jac_data, jac_prior = fit.jac[:n], fit.jac[n:]
    data_resid = fit.fun[:n]
    dof = max(n - jac_data.shape[1], 1)
    s2 = max(float(data_resid @ data_resid) / dof, 1e-12)  # residual variance of the figures only
    precision = jac_data.T @ jac_data / s2 + jac_prior.T @ jac_prior
    cov = np.linalg.pinv(precision, rcond=1e-12)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(se, se)
    return se, corr


def _flags(free, x, se, corr, sensitivity, prior_width, lows, highs) -> dict[str, str]:
    """What the figures could not pin, per parameter (``se`` set to inf, in place, where nothing
    informs a parameter without a prior)."""
    flags: dict[str, str] = {}
    has_prior = np.isfinite(prior_width)
    for i, key in enumerate(free):
        if sensitivity[i] < 1e-6:
            flags[key] = "no figure is sensitive to it" + (
                " (the prior alone sets it)" if has_prior[i] else ""
            )
            if not has_prior[i]:
                se[i] = np.inf
        elif has_prior[i] and se[i] > 0.8 * prior_width[i]:
            flags[key] = "the figures barely inform it: its interval is mostly the prior's"
        elif x[i] - 1.96 * se[i] <= lows[i] or x[i] + 1.96 * se[i] >= highs[i]:
            flags[key] = "95% interval reaches a bound"
        others = [(abs(corr[i, j]), free[j]) for j in range(len(free)) if j != i and np.isfinite(corr[i, j])]
        if others:
            c, other = max(others)
            if c > 0.95 and key not in flags:
                flags[key] = f"correlated with {other} (r = {c:.2f})"
    return flags


# ---------------------------------------------------------------------------------------
# The shipped calibrated set
# ---------------------------------------------------------------------------------------

SHIPPED_PRIORS = "start"
#: how far the objective at the shipped optimum may move before the fit is stale: log residuals
#: (abs) and their log-parameter Jacobian (abs, finite differences with step 1e-3)
CHECK_TOL = {"residuals": 1e-9, "jacobian": 1e-6}


def _code_digest(source: str) -> bytes:
    """The syntax tree of Python source without docstrings: layout, comments and docs do not count."""
    import ast

    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


def fingerprint(free: Sequence[str] = DEFAULT_FREE, priors: str = SHIPPED_PRIORS) -> str:
    """SHA-256 of a fit's inputs: recorded figures, starting set, the catalog entries they use, the
    cores' work per GHz, free list, priors.

    The model code is not hashed: :func:`fit_check` compares what the code
    *computes* (the objective at the optimum), so a refactor that moves no
    number does not stale the fit, and any change of a prediction does.
    """
    import hashlib

    digest = hashlib.sha256()
    for path in calibration_files():
        digest.update(path.name.encode() + path.read_bytes())
    here = PACKAGE_DIR
    digest.update((here / "parameters" / "default.json").read_bytes())
    for line in _catalog_entries_used():
        digest.update(line.encode())
    digest.update((data_dir() / "microarchitectures.yaml").read_bytes())
    digest.update(json.dumps([list(free), priors]).encode())
    return digest.hexdigest()


def _catalog_entries_used() -> list[str]:
    """The catalog entries the calibration figures resolve (their platforms, the devices and
    networks those hold, and every device or network a figure or its baseline names), one
    ``repr`` each in SI units: adding hardware no figure uses leaves the fit current."""

    catalog = default_catalog()
    frame = calibration_benchmarks()
    rows = frame.to_dict("records")
    rows += [{**r, **parse_baseline(str(r["baseline"]))} for r in rows if r["baseline"]]
    platforms = {str(r["platform_id"]) for r in rows if r.get("platform_id")}
    devices = {str(r[c]) for r in rows for c in ("device_id", "wal_device_id") if r.get(c)}
    networks = {str(r["network_id"]) for r in rows if r.get("network_id")}
    for pid in platforms:
        platform = catalog.platform(pid)
        devices |= {slot.device for slot in platform.storage}
        networks.add(str(platform.network))
    return sorted(
        [repr(catalog.platform(p)) for p in platforms]
        + [repr(catalog.device(d)) for d in devices]
        + [repr(catalog.network(n)) for n in networks]
    )


def fit_check(params: ParameterSet | str = "calibrated", free: Sequence[str] = DEFAULT_FREE) -> dict:
    """The shipped fit's objective at its optimum: figure ids, data residuals and their Jacobian.

    The optimum of a least-squares fit is fixed by its residuals and their
    derivatives there (the normal equations): when neither moved, refitting
    returns the same parameters. ``params`` gives the optimum (its ``free``
    values); the figures are those the ``default`` set can use.
    """
    params = load_parameters(params)
    start = load_parameters("default")
    used, _ = usable_figures(calibration_benchmarks(), start, ("measured",))
    objective = FigureObjective(used, start, free)
    x = np.log([params[k] for k in free])
    base = objective.data_residuals(x)
    jac = np.empty((len(base), len(free)))
    for j, key in enumerate(free):
        lo, hi = start.info[key].bounds
        h = 1e-3 if math.exp(x[j] + 1e-3) <= hi else -1e-3
        step = x.copy()
        step[j] += h
        jac[:, j] = (objective.data_residuals(step) - base) / h
    return {"figures": list(used["figure_id"]), "residuals": base.tolist(), "jacobian": jac.tolist()}


def check_changes(stored: dict, now: dict) -> list[str]:
    """What moved between two :func:`fit_check` records (empty: nothing beyond :data:`CHECK_TOL`)."""
    if stored.get("figures") != now["figures"]:
        return ["the set of usable figures changed"]
    out = []
    for key, tol in CHECK_TOL.items():
        a, b = np.asarray(stored[key], dtype=float), np.asarray(now[key], dtype=float)
        moved = np.abs(a - b) > tol
        if moved.any():
            i = np.unravel_index(int(np.argmax(np.abs(a - b))), a.shape)
            fid = now["figures"][i[0]]
            out.append(
                f"{key} of {int(moved.sum())} entries moved (largest: {fid}, {a[i]:.6g} -> {b[i]:.6g})"
            )
    return out


def stale_reasons(path: str | Path | None = None) -> list[str]:
    """Why the shipped calibrated set no longer matches figures, priors, catalog or model ([]: current)."""
    path = PARAMETERS_DIR / "calibrated.json" if path is None else Path(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    reasons = []
    if doc.get("fingerprint") != fingerprint():
        reasons.append("the recorded figures, the default set, the hardware catalog or the free list changed")
    if "check" not in doc:
        return reasons + ["the set has no fit check"]
    return reasons + check_changes(doc["check"], fit_check(path))


def fit_shipped(max_nfev: int = 200) -> CalibrationResult:
    """The fit behind the shipped ``calibrated`` set: every figure, default free list and priors."""
    return calibrate(params="default", free=DEFAULT_FREE, priors=SHIPPED_PRIORS, max_nfev=max_nfev)


def save_parameter_set(result: CalibrationResult, path: str | Path, lab: str = "") -> None:
    """Write ``result.params_`` as a loadable parameter set, with the fit and its fingerprint.

    ``lab``: for a user's own runs, what they are (the set's ``scope`` becomes ``lab``); blank for the
    shipped set."""
    doc = replace(result.params_, scope="lab" if lab else "").to_json()
    doc["description"] = (
        f"perfmodel calibrate on a lab's own runs ({lab}): {', '.join(result.free_)} fitted from the "
        "shipped set; see 'fit' for uncertainty"
        if lab
        else "perfmodel calibrated parameters: fitted on the seed documents and their context "
        "(perfmodel.evidence.calibration.fit_shipped), the corpus systems' own parameters then on the public "
        "corpus (perfmodel.evidence.corpus, 'corpus_fits'); see 'fit' for uncertainty"
    )
    doc["fingerprint"] = fingerprint()
    doc["check"] = fit_check(result.params_)
    doc["fit"] = {k: v for k, v in result.to_json().items() if k != "parameter_set"}
    path = Path(path)
    if path.is_file():  # keep the stored discrepancy until the cross-validation re-estimates it
        previous = json.loads(path.read_text(encoding="utf-8"))
        if "discrepancy" in previous:
            doc["discrepancy"] = previous["discrepancy"]
    Path(path).write_text(json.dumps(doc, indent=1, default=float) + "\n", encoding="utf-8")
