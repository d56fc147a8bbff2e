"""Prediction bands calibrated over labs: how far a new lab's figure may fall from the prediction.

A planner's lab is one the model has not seen. The band that should come with an answer is
therefore not "90% of the figures the fit saw" but "90% of a new lab's figures", and labs differ
more than figures within a lab do: one lab's load generator, network or tuning moves all of its
figures together. This module calibrates the band on the project's held-out figures
(:func:`perfmodel.evidence.labs.held_out`: seed labs held out of the seed fit, corpus labs out of their
system's fit), each lab counted once.

Method: conformal prediction with the labs as the exchangeable units, by pooling the labs'
empirical distributions (Dunn, Wasserman & Ramdas 2023, *Distribution-free prediction sets for
two-layer hierarchical models*, JASA 118(544), sec. 3, "pooling CDFs"). A figure's score is its
absolute log error ``s = |log(y_hat / y)|``; lab ``k`` of ``K`` gives each of its ``n_k`` scores
the weight ``1 / (K n_k)``, so a lab with 300 figures counts as much as one with 3; the
level-``q`` half-width ``m_q`` is the weighted ``q``-quantile of the pooled scores, and the band is
``y_hat exp(+-m_q)``. The paper proves coverage of at least ``1 - 2 a`` for a new lab's figure
(``a = 1 - q``) and finds it close to ``q`` in practice; here it is measured.

Cells: a system family (:data:`FAMILY`) x metric group (:data:`perfmodel.evidence.discrepancy.GROUPS`)
where it holds at least :data:`MIN_LABS` labs, else the metric group over all families where it
holds :data:`MIN_GROUP_LABS`, else every figure pooled. :func:`evaluate` holds each lab out in
turn, calibrates on the other labs with that same rule, and reports per metric group the share of
figures and the mean share per lab inside the band, the median width (upper / lower) and the mean
interval score (Gneiting & Raftery 2007, *Strictly proper scoring rules, prediction, and
estimation*, JASA 102(477), eq. 43, in log units). The tests fail when a group with
:data:`MIN_GROUP_LABS` labs or more has figure coverage outside 80-97%, above as well as below.

A band wider than :data:`TOO_WIDE` from lower to upper decides nothing; :func:`band_note` says so
and the command line, the report and the planner print that sentence instead of the numbers.

The stored calibration is ``perfmodel/parameters/lab-bands.json``, regenerated from the stored
runs by ``python -m tools.lab_bands`` (a test refuses a stale one).
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pandas as pd

from perfmodel.evidence import labs
from perfmodel.evidence.labs import lab_medians
from perfmodel.model import caveats
from perfmodel.model.bands import (  # noqa: F401 - read at the answer, defined there
    ALL,
    FAMILY,
    LAB_BANDS_PATH,
    MIN_GROUP_LABS,
    MIN_LABS,
    TOO_WIDE,
    band_note,
    cell_for,
    column_half_width,
    half_width,
    lab_bands_stored,
    lab_cells,
    pooled_quantile,
    system_record,
)

__all__ = [
    "FAMILY",
    "MIN_GROUP_LABS",
    "MIN_LABS",
    "TOO_WIDE",
    "band_note",
    "calibrate",
    "evaluate",
    "half_width",
    "interval_score",
    "lab_cells",
    "pooled_quantile",
]

INFLATE = 0.0


def interval_score(lower, upper, y, level: float) -> np.ndarray:
    """Interval score of central level-``q`` bands ``[lower, upper]`` for observations ``y``, all in
    the same (log) units: ``(u - l) + (2 / a) (l - y)+ + (2 / a) (y - u)+`` with ``a = 1 - q``
    (Gneiting & Raftery 2007, eq. 43; lower is better, width plus a penalty per miss)."""
    lower, upper, y = (np.asarray(v, dtype=float) for v in (lower, upper, y))
    a = 1.0 - level
    return (upper - lower) + (2 / a) * np.clip(lower - y, 0, None) + (2 / a) * np.clip(y - upper, 0, None)


def _cells(table: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """``{(family, metric group): figures}`` with ``(all, group)`` and ``(all, all)`` as well."""
    fam = table["system"].map(FAMILY).fillna("other")
    out = {(ALL, ALL): table}
    for g, part in table.groupby("metric_group"):
        out[(ALL, str(g))] = part
    for (f, g), part in table.assign(family=fam).groupby(["family", "metric_group"]):
        out[(str(f), str(g))] = part
    return out


def calibrate(table: pd.DataFrame | None = None) -> dict:
    """The stored calibration: per cell ``labs``, ``figures`` and the ``scores`` with their ``lab``
    (sorted), from held-out figures ``table`` (``lab``, ``system``, ``metric_group``,
    ``factor_error``; default :func:`perfmodel.evidence.labs.held_out`)."""
    if table is None:
        table = labs.held_out()
    table = table[np.isfinite(table["factor_error"].to_numpy(float))]
    cells = {}
    for (f, g), part in _cells(table).items():
        s = np.log(part["factor_error"].to_numpy(float))
        order = np.argsort(s, kind="stable")
        cells[f"{f}|{g}"] = {
            "labs": int(part["lab"].nunique()),
            "figures": len(part),
            "scores": [round(float(x), 4) for x in s[order]],
            "lab": [str(x) for x in part["lab"].to_numpy()[order]],
        }

    systems = {
        f"{r.system}|{r.metric_group}": {
            "labs": int(r.labs), "figures": int(r.figures),
            "median_of_lab_medians": round(float(r.median_of_lab_medians), 4),
            "pooled_median": round(float(r.pooled_median), 4),
        }
        for r in lab_medians(table, ("system", "metric_group")).itertuples(index=False)
    }  # fmt: skip
    return {
        "method": "split conformal over labs, pooled lab CDFs (perfmodel.evidence.lab_bands)",
        "systems": systems,
        "held_out": "perfmodel.evidence.labs.held_out: seed labs from cv-group.json, corpus labs from "
        "corpus-run.json",
        "cells": cells,
    }


def evaluate(table: pd.DataFrame | None = None, level: float = 0.9) -> pd.DataFrame:
    """Leave-one-lab-out check of the bands as they are used: each lab's figures against the band
    of their cell (:func:`cell_for`) calibrated on the other labs alone. Per metric group (and
    ``all``): ``labs``, ``figures``, ``coverage`` (share of figures inside), ``lab_coverage`` (mean
    over labs of each lab's share), ``median_width`` (upper / lower, a factor, over figures) and
    ``interval_score`` (mean, log units)."""
    if table is None:
        table = labs.held_out()
    table = table[np.isfinite(table["factor_error"].to_numpy(float))].reset_index(drop=True)
    s = np.log(table["factor_error"].to_numpy(float))
    half = np.full(len(table), np.nan)
    for name in pd.unique(table["lab"]):
        mine = (table["lab"] == name).to_numpy()
        cells = calibrate(table[~mine])["cells"]
        for (system, group), idx in table[mine].groupby(["system", "metric_group"]).groups.items():
            key = cell_for(str(system), str(group), cells)
            cell = cells[key] if key else {"scores": [], "lab": []}
            half[np.asarray(idx)] = pooled_quantile(cell["scores"], cell["lab"], level)
    scored = table.assign(score=s, half=half, inside=s <= half,
                          interval=interval_score(-half, half, s, level))  # fmt: skip
    rows = []
    for group, part in [(ALL, scored), *scored.groupby("metric_group")]:
        rows.append({
            "metric_group": str(group), "labs": int(part["lab"].nunique()), "figures": len(part),
            "coverage": float(part["inside"].mean()),
            "lab_coverage": float(part.groupby("lab")["inside"].mean().mean()),
            "median_width": float(np.exp(2 * np.median(part["half"]))),
            "interval_score": float(part["interval"].mean()),
        })  # fmt: skip
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame | None = None, level: float = 0.9) -> str:
    """The evaluation as docs/validation.md prints it."""
    frame = evaluate(level=level) if frame is None else frame
    q = f"{level:.0%}"
    head = ["metric group", "labs", "figures", f"in {q} band (figures)", f"in {q} band (mean per lab)",
            "median width (upper / lower)", "interval score (log)"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in frame.itertuples(index=False):
        width = f"{r.median_width:,.1f}x" if math.isfinite(r.median_width) else "unbounded"
        score = f"{r.interval_score:.2f}" if math.isfinite(r.interval_score) else "inf"
        lines.append(f"| {r.metric_group} | {r.labs} | {r.figures} | {r.coverage:.0%} | "
                     f"{r.lab_coverage:.0%} | {width} | {score} |")  # fmt: skip
    return "\n".join(lines)


def docs_markdown(table: pd.DataFrame | None = None) -> str:
    """docs/validation.md's ``lab-bands`` block: the 90% and 50% evaluations."""
    if table is None:
        table = labs.held_out()
    return "\n\n".join(markdown(evaluate(table, q), q) for q in (0.9, 0.5))


def store(table: pd.DataFrame | None = None) -> pathlib.Path:
    """Store the calibration over labs from held-out figures ``table`` (``tools/lab_bands.py``)."""
    if table is None:
        table = labs.held_out()
    LAB_BANDS_PATH.write_text(json.dumps(calibrate(table), indent=1) + "\n", encoding="utf-8")
    lab_bands_stored.cache_clear()
    half_width.cache_clear()

    caveats.record.cache_clear()
    return LAB_BANDS_PATH
