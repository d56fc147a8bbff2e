"""Stored cross-validation runs: the numbers behind docs/validation.md and the accuracy guard tests.

A leave-one-out run refits the model about 120 times (minutes on two cores),
too slow for the test suite. ``python -m tools.refit`` runs the
shipped fit, then the leave-one-group-out and leave-one-out cross-validation
(:func:`regenerate`), and stores each run's raw outputs -- per figure the
fold, the out-of-sample prediction, its parameter standard deviation, the
refit's convergence and the in-sample prediction -- in
``data/validation/cv-<scheme>.json`` with a fingerprint of their inputs
(recorded figures, catalog, priors, cross-validation code, refit settings);
the model itself is checked by what it computes (the shipped fit's check,
:func:`perfmodel.evidence.calibration.stale_reasons`). :func:`load_cv` rebuilds the full
validation table from them with today's scoring code and refuses a stale run.
The same command stores the model discrepancy estimated from the
leave-one-group-out run in the calibrated set and rewrites the generated
tables of ``docs/validation.md``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from perfmodel.evidence import discrepancy as disc
from perfmodel.evidence import validation as val
from perfmodel.evidence.calibration import (
    DEFAULT_FREE,
    _code_digest,
    fingerprint,
    stale_reasons,
    usable_figures,
)
from perfmodel.evidence.recorded import calibration_benchmarks
from perfmodel.inputs._data import PACKAGE_DIR, data_dir
from perfmodel.inputs.params import load_parameters

#: the schemes stored and documented
STORED = ("group", "loo")
#: the scheme the shipped discrepancy is estimated from
DISCREPANCY_CV = "group"
#: the accuracy goals of the validation issue: (scheme, statistic, limit)
GOALS = (
    ("loo", "median_abs_rel_error", 0.10),
    ("loo", "p90_abs_rel_error", 0.25),
    ("group", "median_factor_error", 1.25),
)

_ROOT = PACKAGE_DIR


class StaleRunError(RuntimeError):
    """A stored run no longer matches the figures, catalog, priors or code."""


def run_path(cv: str) -> Path:
    """Where the stored run of scheme ``cv`` lives."""
    return data_dir() / "validation" / f"cv-{cv}.json"


def run_fingerprint(cv: str) -> str:
    """SHA-256 of what a stored run depends on (see module doc)."""
    digest = hashlib.sha256(fingerprint().encode())
    for fn in (val.linked_clusters, val.cv_folds, val.log_prediction_jacobian, val.parameter_sd,
               val._refit_fold, val._raw_table, val.validate):  # fmt: skip
        digest.update(_code_digest(inspect.getsource(fn)))
    digest.update(json.dumps([cv, val.REFIT_TOL, val.REFIT_MAX_NFEV, list(DEFAULT_FREE)]).encode())
    return digest.hexdigest()


def save_cv(table: pd.DataFrame, wall_seconds: float, workers: int | None, path: Path | None = None) -> Path:
    """Store a cross-validation run's raw outputs (not its scores: those are recomputed on load)."""
    cv = table.attrs["cv"]
    path = run_path(cv) if path is None else Path(path)
    raw = table[["figure_id", "fold", "predicted", "param_sd", "converged", "in_sample"]]
    doc = {
        "cv": cv,
        "fingerprint": run_fingerprint(cv),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "wall_seconds": round(float(wall_seconds), 1),
        "machine": {
            "cores": os.cpu_count(),
            "workers": workers or os.cpu_count(),
            "python": platform.python_version(),
            "processor": platform.machine(),
        },
        "refits": table.attrs["refits"],
        "figures": json.loads(raw.to_json(orient="records", double_precision=15)),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=0) + "\n", encoding="utf-8")
    return path


def load_cv(cv: str, *, check: bool = True) -> pd.DataFrame:
    """The stored run of scheme ``cv`` as a full validation table
    (:func:`perfmodel.evidence.validation.validate`).

    Raises :class:`StaleRunError` when ``check`` and the run's fingerprint no
    longer matches (regenerate with ``python -m tools.refit``).
    """
    path = run_path(cv)
    if not path.is_file():
        raise FileNotFoundError(f"no stored run for cv={cv!r} at {path}; run `python -m tools.refit`")
    doc = json.loads(path.read_text(encoding="utf-8"))
    if check:
        reasons = (
            []
            if doc["fingerprint"] == run_fingerprint(cv)
            else ["the recorded figures, catalog, priors or cross-validation code changed"]
        )
        reasons += stale_reasons()  # the model's predictions at the shipped optimum
        if reasons:
            raise StaleRunError(
                f"{path} is stale ({'; '.join(reasons)}); regenerate with `python -m tools.refit`"
            )
    start = load_parameters("default")
    used, excluded = usable_figures(calibration_benchmarks(), start, ("measured",))
    raw = pd.DataFrame(doc["figures"]).set_index("figure_id").reindex(used["figure_id"]).reset_index()
    table = val.score(raw, used, start)
    table.attrs.update(
        cv=cv,
        free_parameters=len(DEFAULT_FREE),
        excluded=excluded.to_dict("records"),
        refits=doc["refits"],
        wall_seconds=doc["wall_seconds"],
        machine=doc["machine"],
        when=doc["when"],
    )
    return table


def shipped_discrepancy(table: pd.DataFrame) -> dict:
    """The discrepancy ``predict`` uses: the *total* out-of-sample error of a run's counted figures.

    A planner predicts a cluster the fit has not seen; the leave-one-group-out
    residual is the measured analog of that error, parameter error included.
    So the refits' parameter uncertainty is not subtracted here: for a held-out
    system it is a prior's width, which the shipped fit no longer has, and
    crediting it would leave bands too narrow to hold their level even in
    sample. ``predict`` adds the shipped fit's own parameter uncertainty on
    top (small where the figures pin a parameter down).
    """
    keep = val._summarised(table) & (table["bound"] == "").to_numpy()
    part = table[keep]
    return disc.estimate_discrepancy(part["metric_group"], part["log_error"])


def store_discrepancy(table: pd.DataFrame, path: Path | None = None) -> dict:
    """Write :func:`shipped_discrepancy` into the calibrated set file (key ``discrepancy``)."""
    path = _ROOT / "parameters" / "calibrated.json" if path is None else Path(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["discrepancy"] = disc.discrepancy_json(shipped_discrepancy(table), table.attrs["cv"])
    path.write_text(json.dumps(doc, indent=1, default=float) + "\n", encoding="utf-8")
    return doc["discrepancy"]


def regenerate(workers: int | None = None, progress: bool | None = None) -> None:
    """Run and store every documented cross-validation and the shipped discrepancy (``tools/refit.py``)."""
    for cv in STORED:
        started = time.perf_counter()
        table = val.validate(cv=cv, workers=workers, progress=progress)
        wall = time.perf_counter() - started
        print(f"cv={cv}: {len(table.attrs['refits'])} refits in {wall:.0f} s", flush=True)
        save_cv(table, wall, workers)
    store_discrepancy(load_cv(DISCREPANCY_CV))
    print(f"wrote {run_path('group').parent}/cv-*.json and the discrepancy in calibrated.json")


# ---------------------------------------------------------------------------------------
# docs/validation.md: generated tables
# ---------------------------------------------------------------------------------------


def _pct(x) -> str:
    return f"{x:.1%}" if np.isfinite(x) else "-"


def _fac(x) -> str:
    return f"{x:.2f}x" if np.isfinite(x) else "-"


def _md(frame: pd.DataFrame) -> str:
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


#: the stored runs' names in the docs
_CV_NAMES = {"in-sample": "in-sample", "group": "leave-one-group-out", "loo": "leave-one-out"}


def docs_blocks(runs: dict[str, pd.DataFrame] | None = None) -> dict[str, str]:
    """The generated Markdown blocks of docs/validation.md, from the stored runs."""
    runs = runs or {cv: load_cv(cv) for cv in STORED}
    tables = {"in-sample": val.validate(), **runs}
    derived = runs["group"][runs["group"]["derived"] != ""]
    return {
        "summary": _summary_block(tables),
        "goals": _goals_block(runs),
        "by-group": _scope_table(runs, "group", coverage=True),
        "by-source": _scope_table(runs, "source"),
        "by-metric": _scope_table(runs, "metric", coverage=True),
        "skill": _skill_block(tables),
        "timing": _timing_block(runs),
        "gaps": _gaps_block(runs),
        "derived": _md(pd.DataFrame({"figure": derived["figure_id"], "derived from it": derived["derived"]})),
        "flags": _flags_block(),
        "discrepancy": _discrepancy_block(),
    }


def _summary_block(tables: dict[str, pd.DataFrame]) -> str:
    """In sample and each stored run: errors, band coverage and bounds."""
    names = _CV_NAMES
    rows = []
    for key, table in tables.items():
        s = val.summarize(table).iloc[0]
        rows.append(
            {
                "": names[key],
                "figures": int(s["figures"]),
                "median \\|rel\\|": _pct(s["median_abs_rel_error"]),
                "p90 \\|rel\\|": _pct(s["p90_abs_rel_error"]),
                "median factor": _fac(s["median_factor_error"]),
                "p90 factor": _fac(s["p90_factor_error"]),
                "beyond 2x": int(s["beyond_2x"]),
                "50% band holds": _pct(s["coverage_50"]),
                "90% band holds": _pct(s["coverage_90"]),
                "bounds violated": f"{int(s['bounds_violated'])} of {int(s['bounds'])}",
            }
        )
    return _md(pd.DataFrame(rows))


def _goals_block(runs: dict[str, pd.DataFrame]) -> str:
    """The stored runs against :data:`GOALS`."""
    names = _CV_NAMES
    goals = []
    for cv, stat, limit in GOALS:
        value = float(val.summarize(runs[cv]).iloc[0][stat])
        shown = _fac(value) if "factor" in stat else _pct(value)
        limit_shown = _fac(limit) if "factor" in stat else _pct(limit)
        goals.append(
            {
                "goal": f"{names[cv]} {stat.replace('_', ' ')} <= {limit_shown}",
                "today": shown,
                "met": "yes" if value <= limit else "**no**",
            }
        )
    return _md(pd.DataFrame(goals))


def _skill_block(tables: dict[str, pd.DataFrame]) -> str:
    """Relative figures: the model's skill against predicting no change."""
    names = _CV_NAMES
    skill = []
    for key, table in tables.items():
        part = table if key == "in-sample" else table[val._summarised(table)]
        k = val.skill_vs_no_change(part)
        skill.append(
            {
                "": names[key],
                "ratio figures": k["figures"],
                "skill vs no change": f"{k['skill']:.2f}",
                "median factor, model": _fac(k["median_factor_error"]),
                "median factor, no change": _fac(k["no_change_median_factor_error"]),
                "direction right": f"{k['right_direction']} of {k['changes']}",
            }
        )
    return _md(pd.DataFrame(skill))


def _timing_block(runs: dict[str, pd.DataFrame]) -> str:
    """Each stored run's refits, convergence and wall time."""
    names = _CV_NAMES
    timing = []
    for cv, table in runs.items():
        refits = table.attrs["refits"]
        m = table.attrs["machine"]
        timing.append(
            {
                "": names[cv],
                "refits": len(refits),
                "converged": sum(r["converged"] for r in refits),
                "optimiser steps (median)": int(np.median([r["evaluations"] for r in refits])),
                "seconds per refit (median)": f"{np.median([r['seconds'] for r in refits]):.1f}",
                "wall time": f"{table.attrs['wall_seconds']:.0f} s",
                "on": f"{m['workers']} worker processes, {m['cores']} cores, Python {m['python']}, "
                f"{m['processor']} ({table.attrs['when'][:10]})",
            }
        )
    return _md(pd.DataFrame(timing))


def _gaps_block(runs: dict[str, pd.DataFrame]) -> str:
    """Figures the leave-one-out run misses, grouped by the gap that explains them."""
    gaps = val.gap_report(runs["loo"])
    return _md(
        pd.DataFrame(
            {
                "gap": gaps["gap"],
                "figures": gaps["figures"],
                "median factor": [_fac(x) for x in gaps["median_factor_error"]],
                "missing mechanism": gaps["mechanism"],
                "recorded vs predicted (leave-one-out)": gaps["figures_quoted"],
            }
        )
    )


def _flags_block() -> str:
    """The shipped fit's flagged parameters."""
    fit_rows = json.loads((_ROOT / "parameters" / "calibrated.json").read_text(encoding="utf-8"))["fit"][
        "fit"
    ]
    flagged = [r for r in fit_rows if r.get("flag")]
    return f"{len(flagged)} of {len(fit_rows)} free parameters are flagged by the shipped fit:\n\n" + _md(
        pd.DataFrame({"parameter": [r["parameter"] for r in flagged], "why": [r["flag"] for r in flagged]})
    )


def _discrepancy_block() -> str:
    """The shipped discrepancy per metric group: scale and conformal multipliers."""
    stored = disc.load_discrepancy()
    return _md(
        pd.DataFrame(
            [
                {
                    "metric group": g,
                    "figures": e["figures"],
                    "scale (log sd)": f"{e['sigma_log']:.3f}" + (" (pooled)" if e.get("pooled") else ""),
                    "50% multiplier": f"{disc.band_multiplier(e['scores'], 0.5):.2f}",
                    "90% multiplier": f"{disc.band_multiplier(e['scores'], 0.9):.2f}",
                }
                for g, e in (stored or {}).items()
            ]
        )
    )


def _scope_table(runs: dict[str, pd.DataFrame], scope: str, coverage: bool = False) -> str:
    names = {"group": "group", "loo": "LOO"}
    merged = None
    for cv, table in runs.items():
        s = val.summarize(table)
        s = s[s["scope"] == scope].set_index("name")
        cols = {
            f"{names[cv]} n": s["figures"].astype(int),
            f"{names[cv]} median \\|rel\\|": s["median_abs_rel_error"].map(_pct),
            f"{names[cv]} median factor": s["median_factor_error"].map(_fac),
            f"{names[cv]} p90 factor": s["p90_factor_error"].map(_fac),
        }
        if coverage:
            cols[f"{names[cv]} 50% / 90% band holds"] = [
                f"{_pct(a)} / {_pct(b)}" for a, b in zip(s["coverage_50"], s["coverage_90"], strict=True)
            ]
        part = pd.DataFrame(cols)
        merged = part if merged is None else merged.join(part, how="outer")
    merged = merged.reset_index().rename(columns={"name": scope})
    return _md(merged.fillna("-"))


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with the block between ``<!-- generated:name -->`` and ``<!-- /generated:name -->`` set."""
    begin, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
    if begin not in text or end not in text:
        raise ValueError(f"docs: no {begin} ... {end} block")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def read_block(text: str, name: str) -> str:
    """The body of a generated block (as :func:`replace_block` writes it)."""
    begin, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")
