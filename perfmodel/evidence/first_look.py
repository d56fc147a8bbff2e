"""The first-look record: each new source's figures as the model predicted them before any change.

When a source enters the corpus, :func:`take` predicts its figures with the model exactly as it is
at that commit (the shipped ``calibrated`` set, no refit) and :func:`append` adds one row per figure
to :data:`RECORD` -- the commit, the date, the recorded value, the prediction, its factor error and
whether the 90% band held it. The file is append-only: rows are never edited or removed
(``tests/unit/test_first_look.py`` checks every earlier committed version is a prefix of today's).

Model progress is the first-look error of sources added *after* a change, never the corpus's
leave-one-source-out score of figures a mechanism was designed on (docs/validation.md). ``perfmodel
validate --first-look`` reports the record by system, metric group and date; ``perfmodel
first-look --take SOURCE_ID`` records a new source.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from perfmodel.evidence import corpus, discrepancy
from perfmodel.evidence.recorded import load_benchmarks
from perfmodel.inputs._data import PACKAGE_DIR
from perfmodel.inputs.params import load_parameters
from perfmodel.inputs.units import UNITS
from perfmodel.model import bands
from perfmodel.model.bands import FIRST_LOOK_COLUMNS as COLUMNS
from perfmodel.model.bands import FIRST_LOOK_RECORD as RECORD
from perfmodel.model.bands import first_look_summary as summary
from perfmodel.model.bands import load_first_look as load

__all__ = ["COLUMNS", "RECORD", "append", "load", "markdown", "summary", "take"]

#: what must not differ from the commit a first look names: the model, its data and its parameters
MODEL_PATHS = ("perfmodel", "data/systems", "data/hardware", "data/microarchitectures.yaml")


def _git(*args: str) -> str:
    root = PACKAGE_DIR.parent
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def current_commit() -> str:
    """HEAD's commit, refusing a work tree whose model differs from it (:data:`MODEL_PATHS`, tracked
    files): the record must name the model that made the predictions. A new source's own files (its
    corpus CSV, new hardware files) may be untracked."""
    changed = _git("status", "--porcelain", "--untracked-files=no", "--", *MODEL_PATHS).strip()
    if changed:
        raise ValueError(
            f"first look: the model differs from HEAD (commit or stash first): {' '.join(changed.split())}"
        )
    return _git("rev-parse", "HEAD").strip()


def take(source_ids: Sequence[str], *, commit: str | None = None, today: str | None = None,
         record: pd.DataFrame | None = None) -> pd.DataFrame:  # fmt: skip
    """The first-look rows of ``source_ids``: their recorded figures predicted by the shipped
    ``calibrated`` set as it is now. Refuses a source already in the record or not in the corpus."""

    record = load() if record is None else record
    again = sorted(set(source_ids) & set(record["source_id"]))
    if again:
        raise ValueError(
            f"source_id: {', '.join(again)} already has a first look (the record is append-only)"
        )
    figures = load_benchmarks()
    rows = figures[figures["source_id"].isin(source_ids)]
    missing = sorted(set(source_ids) - set(rows["source_id"]))
    if missing:
        raise ValueError(f"source_id: {', '.join(missing)} has no recorded figures (data/benchmarks/*.csv)")
    commit = commit or current_commit()
    params = load_parameters("calibrated")
    out = corpus._predict(rows, params)
    out["factor_error"] = corpus._errors(out)
    out["value_si"] = rows["value_si"].to_numpy()
    out["predicted_si"] = out["predicted"]
    out["metric_group"] = [
        discrepancy.metric_group(m, UNITS[u].dimension in ("ratio", "pct_change"), lv)
        for m, u, lv in zip(out["metric"], out["unit"], out["level"], strict=True)
    ]
    # the 90% band predict gives: the shipped discrepancy's, and at least the band a new lab fell in

    lab_half = np.array([bands.half_width(s, g, 0.9) for s, g in zip(out["system"], out["metric_group"],
                                                                          strict=True)])  # fmt: skip
    inside = np.log(out["factor_error"].to_numpy(float)) <= lab_half
    out["in_band90"] = np.where(np.isfinite(out["factor_error"].to_numpy(float)),
                                np.fmax(corpus._in_band(out, "predicted", 0.9), inside), np.nan)  # fmt: skip
    out["params"] = params.name
    out["commit"] = commit
    out["recorded_on"] = today or dt.date.today().isoformat()
    return out[COLUMNS].reset_index(drop=True)


def append(rows: pd.DataFrame, path: Path | None = None) -> Path:
    """Add ``rows`` at the end of the record (never rewriting a row before them)."""
    path = Path(path or RECORD)
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or not path.read_text(encoding="utf-8").strip()
    with path.open("a", encoding="utf-8", newline="") as fh:
        rows[COLUMNS].to_csv(fh, header=new, index=False, float_format="%.10g")
    return path


def report_lines(table: pd.DataFrame) -> list[str]:
    """The record in words: totals, then by system and metric group, then by date."""
    if table.empty:
        return ["first look: no source recorded yet (perfmodel first-look --take SOURCE_ID)"]
    scored = table.dropna(subset=["factor_error"])
    lines = [f"first look: {len(table)} figures of {table['source_id'].nunique()} sources "
             f"({len(scored)} predicted), median factor {np.median(scored['factor_error']):.2f}x, "
             f"p90 {np.quantile(scored['factor_error'], 0.9):.2f}x, "
             f"90% band held {scored['in_band90'].mean():.0%}"]  # fmt: skip
    for by in (("system", "metric_group"), ("recorded_on",)):
        part = summary(table, by)
        for r in part.itertuples(index=False):
            key = " / ".join(str(getattr(r, b)) for b in by)
            lines.append(f"  {key}: {r.figures} figures, {r.sources} sources, median {r.median_factor:.2f}x, "
                         f"p90 {r.p90_factor:.2f}x, band held {r.band_coverage:.0%}")  # fmt: skip
    return lines


def markdown(table: pd.DataFrame | None = None) -> str:
    """docs/validation.md's first-look table: one row per source in the order recorded (a source
    none of whose figures the model could predict shows dashes), then the pooled line and the median
    of lab medians (factor errors; band = the 90% band of that commit)."""
    table = load() if table is None else table
    if table.empty:
        return "No first look recorded yet."
    scored = table.dropna(subset=["factor_error"])
    lines = ["| recorded | commit | source | lab | system | figures predicted | median | p90 | in 90% band |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for source, part in table.groupby("source_id", sort=False):
        f = part["factor_error"].dropna()
        counts = f"{len(f)}" if len(f) == len(part) else f"{len(f)} of {len(part)}"
        stats = (f"{f.median():.2f}x | {f.quantile(0.9):.2f}x | {part.loc[f.index, 'in_band90'].mean():.0%}"
                 if len(f) else "- | - | -")  # fmt: skip
        lines.append(
            f"| {part['recorded_on'].iloc[0]} | {str(part['commit'].iloc[0])[:7]} | {source} | "
            f"{part['group'].iloc[0]} | {', '.join(sorted(set(part['system'])))} | {counts} | {stats} |"
        )
    labs = scored.groupby("group")["factor_error"].median()
    f = scored["factor_error"]
    lines += ["", f"All {len(scored)} figures of {scored['source_id'].nunique()} sources from {len(labs)} "
              f"labs: median {f.median():.2f}x (p90 {f.quantile(0.9):.2f}x); median of lab medians "
              f"{labs.median():.2f}x (p90 over labs {labs.quantile(0.9):.2f}x); the 90% band held "
              f"{scored['in_band90'].mean():.0%}."]  # fmt: skip
    return "\n".join(lines)
