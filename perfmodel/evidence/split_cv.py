"""``perfmodel validate --cv split``: a planner's situation, lab by lab (issue 39 point 5).

A planner runs a few benchmarks on the candidate server and asks the model to carry them to the rest.
For every lab (a ``group`` of sources) with at least :data:`MIN_FIGURES` usable figures, a third of
its figures (:func:`split`) is the planner's runs: the parameters those figures can pin
(:func:`perfmodel.evidence.identify.choose_free`) are fitted on them, starting from the zero-shot
model (:func:`perfmodel.evidence.corpus.starting_set`: the seed fit, every corpus system at its
documented priors), and the other two thirds are predicted. The same two thirds predicted zero-shot
are the reference. Labs the shipped fit was fitted on (the seed documents' labs) are left out: their
zero-shot is not out of sample.

The fit is MAP with log-normal priors around the start (:func:`perfmodel.evidence.identify.priors`: a
factor of 10 for the lab's own share, 3 for the rest) and the corpus's robust loss
(:data:`perfmodel.evidence.corpus.ROBUST_SCALE`), as the corpus's own fits.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from perfmodel.evidence import corpus, identify
from perfmodel.evidence.calibration import calibrate, figure_residuals
from perfmodel.evidence.discrepancy import metric_group
from perfmodel.evidence.figure_plan import predict_figures
from perfmodel.evidence.recorded import calibration_benchmarks, load_benchmarks
from perfmodel.evidence.validation import linked_clusters
from perfmodel.inputs._data import PARAMETERS_DIR
from perfmodel.inputs.params import ParameterSet
from perfmodel.inputs.units import UNITS
from perfmodel.run.execution import map_tasks

__all__ = ["COLUMNS", "MIN_FIGURES", "load", "markdown", "run", "split", "store", "summary"]

#: fewest usable figures for a lab to be split (a third to fit, the rest to predict)
MIN_FIGURES = 6
#: one row per held-out figure
COLUMNS = ("figure_id", "source_id", "group", "system", "metric", "metric_group", "unit", "recorded",
           "zero_shot", "split", "zero_shot_factor", "split_factor", "train_figures", "free")  # fmt: skip


def split(figures: pd.DataFrame) -> np.ndarray:
    """Which of a lab's ``figures`` are the planner's runs (True): every third ``same_measurement``
    cluster within each metric group, in figure-id order, so each group is fitted and predicted and a
    restated measurement never sits on both sides."""
    clusters = linked_clusters(figures)
    groups = [_group(r) for r in figures.to_dict("records")]
    order = sorted(range(len(figures)), key=lambda i: (groups[i], str(figures["figure_id"].iloc[i])))
    train = np.zeros(len(figures), dtype=bool)
    seen: dict[str, list] = {}
    for i in order:
        members = seen.setdefault(groups[i], [])
        if clusters[i] not in members:
            members.append(clusters[i])
        train[i] = members.index(clusters[i]) % 3 == 0
    return train


def _group(row: dict) -> str:
    relative = UNITS[row["unit"]].dimension in ("ratio", "pct_change")
    return metric_group(row["metric"], relative, row["level"])


def _lab_task(task) -> dict:
    """Worker: choose and fit the lab's free parameters on its third, predict the rest."""
    train, test, start = task
    started = time.perf_counter()
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        choice = identify.choose_free(train, start)
        params = start
        if choice.free:
            begin = identify.fit_start(start, choice.free)
            fit = calibrate(train, params=begin, free=choice.free, priors=identify.priors(choice.free, begin),
                            loss="soft_l1", f_scale=corpus.ROBUST_SCALE)  # fmt: skip
            params = fit.params_
        predicted = predict_figures(test, params)["predicted"].to_numpy()
    return {"predicted": predicted, "free": ";".join(choice.free), "seconds": time.perf_counter() - started}


def run(
    figures: pd.DataFrame | None = None,
    *,
    start: ParameterSet | None = None,
    workers: int | None = None,
    scheduler=None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per held-out figure of every splittable lab (:data:`COLUMNS`).

    ``figures``: default every shipped figure. ``attrs['labs']`` lists each lab's counts and free
    parameters, ``attrs['skipped']`` the labs left out and why.
    """
    data = load_benchmarks() if figures is None else figures
    start = corpus.starting_set() if start is None else start
    data = data[data["role"] == "measured"].reset_index(drop=True)
    zero = predict_figures(data, start)
    r, _ = figure_residuals(zero)
    usable = (zero["reason"] == "") & np.isfinite(r)
    fitted_labs = set(calibration_benchmarks()["group"])
    tasks, labs, skipped = [], [], {}
    for lab in sorted(data["group"].unique()):
        rows = np.flatnonzero(usable & (data["group"] == lab).to_numpy())
        if lab in fitted_labs:
            skipped[lab] = "the shipped fit was fitted on this lab"
        elif len(rows) < MIN_FIGURES:
            skipped[lab] = f"{len(rows)} usable figures, fewer than {MIN_FIGURES}"
        else:
            part = data.iloc[rows].reset_index(drop=True)
            train = split(part)
            if train.sum() < 2 or (~train).sum() < 1:
                skipped[lab] = "too few figures on one side of the split"
                continue
            tasks.append((part[train].reset_index(drop=True), part[~train].reset_index(drop=True), start))
            labs.append((lab, rows[~train], int(train.sum())))
    results = map_tasks(_lab_task, tasks, scheduler=scheduler, workers=workers, chunk_size=1,
                        progress=progress, desc="labs (cv=split)", unit="lab")  # fmt: skip
    table = _table(data, zero, labs, results)
    table.attrs["labs"] = [
        {"group": lab, "train": n, "test": len(rows), "free": res["free"], "seconds": res["seconds"]}
        for (lab, rows, n), res in zip(labs, results, strict=True)
    ]
    table.attrs["skipped"] = skipped
    return table


def _table(data, zero, labs, results) -> pd.DataFrame:
    parts = []
    for (lab, rows, n_train), res in zip(labs, results, strict=True):
        part = zero.iloc[rows].reset_index(drop=True)
        factors = {}
        for name, values in (("zero_shot", part["predicted"].to_numpy()), ("split", res["predicted"])):
            r, _ = figure_residuals(part.assign(predicted=values))
            factors[name] = (values, np.exp(np.abs(r)))
        parts.append(
            pd.DataFrame(
                {
                    "figure_id": part["figure_id"], "source_id": part["source_id"], "group": lab,
                    "system": part["system"], "metric": part["metric"],
                    "metric_group": [_group(rec) for rec in part.to_dict("records")], "unit": part["unit"],
                    "recorded": part["value"], "zero_shot": factors["zero_shot"][0],
                    "split": factors["split"][0],
                    "zero_shot_factor": factors["zero_shot"][1], "split_factor": factors["split"][1],
                    "train_figures": n_train, "free": res["free"],
                }
            )
        )  # fmt: skip
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(COLUMNS))


def summary(table: pd.DataFrame, by: Sequence[str] = ("system", "metric_group")) -> pd.DataFrame:
    """Median of lab medians (and the pooled median) of the factor errors, zero-shot beside split."""
    rows = []
    keys = [list(by)] if by else [[]]
    for key in keys:
        grouped = table.groupby(key) if key else [((), table)]
        for name, part in grouped:
            per_lab = part.groupby("group")[["zero_shot_factor", "split_factor"]].median()
            label = dict(zip(key, name if isinstance(name, tuple) else (name,), strict=False))
            rows.append(
                {
                    **label, "labs": len(per_lab), "figures": len(part),
                    "zero_shot_lab_median": float(per_lab["zero_shot_factor"].median()),
                    "split_lab_median": float(per_lab["split_factor"].median()),
                    "zero_shot_pooled": float(part["zero_shot_factor"].median()),
                    "split_pooled": float(part["split_factor"].median()),
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


_HEADS = (
    "labs",
    "figures",
    "zero-shot (median of lab medians)",
    "split",
    "zero-shot (pooled)",
    "split (pooled)",
)
_VALUES = ("zero_shot_lab_median", "split_lab_median", "zero_shot_pooled", "split_pooled")


def markdown(table: pd.DataFrame) -> str:
    """The report: overall, by system and by metric group, then the labs' free parameters."""
    out = [
        f"Split cross-validation: {table['group'].nunique()} labs, {len(table)} held-out figures "
        "(each lab fitted on a third of its figures, the rest predicted).",
        "",
    ]
    for by, title in (((), "All"), (("system",), "By system"), (("metric_group",), "By metric group")):
        out += [f"**{title}**", "", "| " + " | ".join([*by, *_HEADS]) + " |", "|" + "---|" * (len(by) + 6)]
        for rec in summary(table, by).to_dict("records"):
            cells = [str(rec[k]) for k in (*by, "labs", "figures")] + [f"{rec[k]:.2f}x" for k in _VALUES]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


SPLIT_RUN_PATH = PARAMETERS_DIR / "split-bands.json"
#: the held-out table's columns kept in the stored run
_STORED = ("group", "system", "metric_group", "zero_shot_factor", "split_factor")


def store(table: pd.DataFrame | None = None, path=None):
    """Run (or take) the split cross-validation and store the held-out figures' errors (which
    :func:`perfmodel.model.bands.own_lab_half_width` pools into bands) with the corpus fingerprint it
    rests on."""
    table = run(progress=False) if table is None else table
    path = path or SPLIT_RUN_PATH
    doc = {
        "description": "perfmodel validate --cv split: each lab fitted on a third of its figures, the "
        "held-out figures' log factor errors by metric group (perfmodel.evidence.split_cv); regenerate with "
        "python -m tools.run_corpus",
        "fingerprint": corpus.fingerprint(),
        "columns": list(_STORED),
        "rows": [[_plain(v) for v in row] for row in table[list(_STORED)].itertuples(index=False)],
        "skipped": table.attrs.get("skipped", {}),
    }
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    return path


def _plain(value):
    return round(float(value), 5) if isinstance(value, float | np.floating) else str(value)


def load(path=None) -> pd.DataFrame:
    """The stored run's held-out table (``attrs['fingerprint']``, ``attrs['skipped']``)."""
    doc = json.loads((path or SPLIT_RUN_PATH).read_text(encoding="utf-8"))
    table = pd.DataFrame(doc["rows"], columns=doc["columns"])
    table.attrs.update(fingerprint=doc["fingerprint"], skipped=doc.get("skipped", {}))
    return table
