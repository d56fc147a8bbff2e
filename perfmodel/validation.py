"""Validation: how well the model explains every recorded figure, in and out of sample.

``validate(cv=None)`` predicts every figure with a parameter set (in-sample
when that set was fitted on the same figures); ``cv="source"`` refits once per
source without that source's figures and predicts them (leave-one-source-out);
``cv="loo"`` refits once per figure without it (leave-one-out, warm-started
from the full fit, in parallel worker processes). Cross-validated error is the
headline: in-sample fit error alone is not a result.

Every figure gets ``figure_id, source, metric, recorded, predicted,
rel_error, in_band``: ``in_band`` says whether the recorded value lies inside
the 90% band of predictions obtained by sampling the fitted parameters from
their (log-normal) uncertainty. Summary lines give the median and
90th-percentile absolute relative error overall, per source and per metric
group, and the number of free parameters against the number of figures.

Figures the model misses by more than :data:`MISS_THRESHOLD` get a ``gap``:
the missing mechanism named for them in ``data/model_gaps.yaml``
(:func:`load_gaps`), or ``undiagnosed``.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfmodel._data import data_dir
from perfmodel.benchmarks import load_benchmarks
from perfmodel.calibration import DEFAULT_FREE, CalibrationResult, calibrate, usable_figures
from perfmodel.execution import map_tasks
from perfmodel.figures import predict_figures
from perfmodel.params import ParameterSet, load_parameters
from perfmodel.units import UNITS

#: |relative error| above which a figure counts as missed (the issue's p90 target) [-]
MISS_THRESHOLD = 0.25


def load_gaps(path=None) -> list[dict]:
    """The known model gaps: ``id``, ``mechanism``, ``evidence``, ``figures`` (wildcards)."""
    import yaml

    path = data_dir() / "model_gaps.yaml" if path is None else path
    with open(path, encoding="utf-8") as handle:
        gaps = yaml.safe_load(handle)["gaps"]
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


METRIC_GROUPS = {
    "throughput": "throughput",
    "iops": "throughput",
    "tpmc": "throughput",
    "bandwidth": "throughput",
    "time_per_op": "throughput",
    "latency_mean": "mean latency",
    "latency_p95": "tail latency",
    "latency_p99": "tail latency",
}


def _group(row) -> str:
    if UNITS[row["unit"]].dimension in ("ratio", "pct_change"):
        return "ratios"
    return METRIC_GROUPS.get(row["metric"], "device and other")


def _recorded(table: pd.DataFrame) -> np.ndarray:
    relative = table["unit"].map(lambda u: UNITS[u].dimension in ("ratio", "pct_change"))
    return np.where(relative, table["value"], table["value_si"]).astype(float)


def _rel_error(table: pd.DataFrame, predicted: np.ndarray) -> np.ndarray:
    """Relative error, on the ratio scale for percent changes (1 + p/100)."""
    rec = _recorded(table)
    pct = (table["unit"] == "pct_change").to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pct, (1 + predicted / 100) / (1 + rec / 100) - 1, predicted / rec - 1)


def prediction_band(
    figures: pd.DataFrame, fit: CalibrationResult, *, draws: int = 40, level: float = 0.9, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Band of each figure's prediction from the fit's parameter uncertainty.

    Draws parameter vectors from the log-normal implied by the fit's
    covariance (``log p ~ N(log p_hat, cov)``, correlations included) and
    predicts every figure with each; returns the ``(1 - level) / 2`` and
    ``(1 + level) / 2`` quantiles.
    """
    rng = np.random.default_rng(seed)
    log_center = np.log(fit.values_)
    se = np.where(np.isfinite(fit.stderr_ / fit.values_), fit.stderr_ / fit.values_, 0.0)
    corr = np.where(np.isfinite(fit.correlation_), fit.correlation_, 0.0)
    np.fill_diagonal(corr, 1.0)
    cov = corr * np.outer(se, se)
    samples = rng.multivariate_normal(log_center, cov, size=draws, method="svd")
    preds = []
    for row in samples:
        values = {}
        for key, value in zip(fit.free_, np.exp(row), strict=True):
            lo, hi = fit.params_.info[key].bounds if key in fit.params_.info else (-np.inf, np.inf)
            values[key] = float(np.clip(value, lo, hi))
        preds.append(predict_figures(figures, fit.params_.with_values(**values))["predicted"].to_numpy())
    preds = np.array(preds)
    return (np.nanquantile(preds, (1 - level) / 2, axis=0), np.nanquantile(preds, (1 + level) / 2, axis=0))


@dataclass
class ValidationReport:
    """Figure-by-figure predictions and their summary."""

    figures: pd.DataFrame
    excluded: pd.DataFrame
    cv: str
    free_parameters: int

    def summary(self) -> pd.DataFrame:
        """Median and 90th-percentile |relative error| overall, per source and per metric group."""
        table = self.figures.assign(abs_error=np.abs(self.figures["rel_error"]))
        rows = [("all", "all", table)]
        rows += [("source", key, part) for key, part in table.groupby("source_id")]
        rows += [("metric", key, part) for key, part in table.groupby("metric_group")]
        out = pd.DataFrame(
            [
                {
                    "scope": scope,
                    "name": name,
                    "figures": len(part),
                    "median_abs_rel_error": float(np.nanmedian(part["abs_error"])),
                    "p90_abs_rel_error": float(np.nanpercentile(part["abs_error"], 90)),
                    "in_band": float(np.mean(part["in_band"])) if part["in_band"].notna().any() else math.nan,
                }
                for scope, name, part in rows
            ]
        )
        return out

    def summary_lines(self) -> list[str]:
        """The summary as text lines (``#``-prefixed in CSV output)."""
        s = self.summary()
        overall = s.iloc[0]
        lines = [
            f"validation ({self.cv}): {len(self.figures)} figures, {self.free_parameters} free parameters, "
            f"{len(self.excluded)} figures excluded",
            f"all: median |rel error| {overall.median_abs_rel_error:.1%}, "
            f"90th percentile {overall.p90_abs_rel_error:.1%}",
        ]
        for _, r in s.iloc[1:].iterrows():
            lines.append(
                f"{r['scope']} {r['name']}: n={r['figures']}, median {r['median_abs_rel_error']:.1%}, "
                f"p90 {r['p90_abs_rel_error']:.1%}"
            )
        missed = self.missed()
        counts = missed["gap"].value_counts()
        lines.append(
            f"beyond {MISS_THRESHOLD:.0%}: {len(missed)} figures"
            + (": " + ", ".join(f"{gap} {n}" for gap, n in counts.items()) if len(missed) else "")
            + " (mechanisms: data/model_gaps.yaml, docs/validation.md)"
        )
        return lines

    def missed(self) -> pd.DataFrame:
        """Figures beyond :data:`MISS_THRESHOLD`, with the missing mechanism named for them."""
        table = self.figures[self.figures["gap"] != ""]
        return table.assign(_abs=table["rel_error"].abs()).sort_values(["gap", "_abs"]).drop(columns="_abs")


#: gap of a figure missed out of sample that the full fit explains: the parameters it
#: needs are identified by the held-out figures alone
OUT_OF_SAMPLE_ONLY = "out-of-sample-only"


def _columns(table: pd.DataFrame, predicted: np.ndarray, band=None, in_sample=None) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            "figure_id": table["figure_id"].to_numpy(),
            "source_id": table["source_id"].to_numpy(),
            "source": table["source"].to_numpy(),
            "metric": table["metric"].to_numpy(),
            "unit": table["unit"].to_numpy(),
            "recorded": _recorded(table),
            "predicted": predicted,
            "rel_error": _rel_error(table, predicted),
        }
    )
    out["metric_group"] = [_group(r) for r in table.to_dict("records")]
    gaps = load_gaps()
    miss = ~(np.abs(out["rel_error"].to_numpy()) <= MISS_THRESHOLD)  # NaN counts as a miss
    fits = np.zeros(len(out), dtype=bool)
    if in_sample is not None:
        fits = np.abs(_rel_error(table, in_sample)) <= MISS_THRESHOLD
    out["gap"] = [
        "" if not m else OUT_OF_SAMPLE_ONLY if ok else (gap_of(fid, gaps) or "undiagnosed")
        for fid, m, ok in zip(out["figure_id"], miss, fits, strict=True)
    ]
    if band is None:
        out["in_band"] = pd.NA
    else:
        lo, hi = band
        out["in_band"] = (out["recorded"] >= np.minimum(lo, hi)) & (out["recorded"] <= np.maximum(lo, hi))
    return out


def _refit_predict(args):
    """Worker: fit without the held-out figures, predict them (runs in a subprocess)."""
    train, test, params, free, priors, max_nfev = args
    fit = calibrate(train, params=params, free=free, priors=priors, max_nfev=max_nfev, tol=1e-8)
    return predict_figures(test, fit.params_)["predicted"].to_numpy()


def validate(
    benchmarks: pd.DataFrame | None = None,
    *,
    params: ParameterSet | str | None = None,
    cv: str | None = None,
    free: Sequence[str] = DEFAULT_FREE,
    priors="start",
    fit: CalibrationResult | None = None,
    workers: int | None = None,
    scheduler=None,
    max_nfev: int = 10,
    band_draws: int = 0,
    progress: bool = False,
) -> ValidationReport:
    """Predict every recorded figure; with ``cv`` ("loo" or "source") out of sample.

    ``params``: the set to validate (default: the shipped calibrated set). For
    ``cv``, each refit starts from ``params`` (or ``fit.params_``) -- the fit on
    every figure -- frees ``free`` with ``priors`` and takes at most
    ``max_nfev`` trust-region steps (each with a finite-difference Jacobian)
    to a tight tolerance, so that the held-out figures' influence is really
    removed (a loose stop leaves the refit at the full fit, which leaks).
    ``workers`` processes run the refits in parallel (default: the cores).
    ``band_draws > 0`` with a ``fit`` adds the uncertainty band (``in_band``).
    """
    if cv not in (None, "loo", "source"):
        raise ValueError(f"cv: must be None, 'loo' or 'source', got {cv!r}")
    params = fit.params_ if fit is not None else load_parameters(params)
    benchmarks = load_benchmarks() if benchmarks is None else benchmarks
    used, excluded = usable_figures(benchmarks, params, ("measured",))
    if cv is None:
        predicted = predict_figures(used, params)["predicted"].to_numpy()
        band = prediction_band(used, fit, draws=band_draws) if (fit is not None and band_draws) else None
        return ValidationReport(_columns(used, predicted, band), excluded, "in-sample", len(free))
    if cv == "source":
        folds = [np.flatnonzero(used["source_id"].to_numpy() == s) for s in used["source_id"].unique()]
    else:
        folds = [np.array([i]) for i in range(len(used))]
    if (
        priors == "start"
    ):  # centre the refits' priors on the documented values, not on a fit that saw the figure
        default = load_parameters("default")
        priors = {k: (default[k], 3.0) for k in free}
    jobs = [
        (
            used.drop(index=fold).reset_index(drop=True),
            used.iloc[fold].reset_index(drop=True),
            params,
            list(free),
            priors,
            max_nfev,
        )
        for fold in folds
    ]
    predicted = np.full(len(used), np.nan)
    refits = map_tasks(
        _refit_predict, jobs, scheduler=scheduler, workers=workers, chunk_size=1,
        progress=progress, desc="refits", unit="fit",
    )  # fmt: skip
    for fold, values in zip(folds, refits, strict=True):
        predicted[fold] = values
    in_sample = predict_figures(used, params)["predicted"].to_numpy()
    return ValidationReport(_columns(used, predicted, in_sample=in_sample), excluded, f"cv={cv}", len(free))


def plot_predicted_vs_recorded(report: ValidationReport, ax=None):
    """Predicted vs recorded on log axes, one colour per source, with the y = x line.

    Absolute figures are plotted in SI units, relative ones as ratios (percent
    changes as 1 + p/100), so everything shares one log scale. Returns the axes.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    table = report.figures.copy()
    pct = table["unit"] == "pct_change"
    table.loc[pct, "recorded"] = 1 + table.loc[pct, "recorded"] / 100
    table.loc[pct, "predicted"] = 1 + table.loc[pct, "predicted"] / 100
    table = table[(table["recorded"] > 0) & (table["predicted"] > 0)]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 6))
    sns.scatterplot(
        data=table, x="recorded", y="predicted", hue="source_id", style="metric_group", ax=ax, s=28
    )
    lo = float(min(table["recorded"].min(), table["predicted"].min())) / 1.5
    hi = float(max(table["recorded"].max(), table["predicted"].max())) * 1.5
    ax.plot([lo, hi], [lo, hi], color="0.3", lw=1, label="y = x")
    ax.fill_between(
        [lo, hi], [lo / 1.25, hi / 1.25], [lo * 1.25, hi * 1.25], color="0.85", zorder=0, label="+-25%"
    )
    ax.set(
        xscale="log",
        yscale="log",
        xlim=(lo, hi),
        ylim=(lo, hi),
        xlabel="recorded (SI units; ratios)",
        ylabel="predicted",
        title=f"perfmodel vs recorded figures ({report.cv})",
    )
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    return ax
