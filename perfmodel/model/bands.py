"""The stored uncertainty, read at the answer: model discrepancy, bands over labs, the first-look record.

Three stored artefacts say how far to trust a prediction, and ``predict``, ``simulate`` and ``size``
read them here: the model discrepancy stored with a parameter set (estimated out of sample by
:mod:`perfmodel.evidence.discrepancy`), the bands calibrated over labs in
``perfmodel/parameters/lab-bands.json`` (:mod:`perfmodel.evidence.lab_bands`, which documents the
method) and the first-look record ``data/validation/first-look.csv``
(:mod:`perfmodel.evidence.first_look`). Writing and estimating them is evidence's job; this module
only reads and applies them, so the model does not depend on the evidence pipeline.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

from perfmodel.inputs._data import PARAMETERS_DIR, data_dir

CLIENT_GROUPS = {
    "throughput": "throughput",
    "iops": "throughput",
    "tpmc": "throughput",
    "bandwidth": "throughput",
    "time_per_op": "throughput",
    "thread_time_per_op": "throughput",
    "latency_mean": "mean latency",
    "latency_p50": "mean latency",
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
    "util_client": "throughput",
}


def z_score(level: float) -> float:
    """Standard normal quantile ``Phi^-1((1 + level) / 2)`` of a central band [-]."""
    if not 0 < level < 1:
        raise ValueError(f"interval: must lie in (0, 1), got {level}")
    return float(math.sqrt(2.0) * special.erfinv(level))


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


# --- bands calibrated over labs (perfmodel.evidence.lab_bands) ---

#: system -> family whose labs share one band (the engines that answer alike)
FAMILY = {
    "cassandra": "wide-column",
    "scylla": "wide-column",
    "redis": "key-value",
    "memcached": "key-value",
    "postgresql": "sql",
    "mysql": "sql",
    "opengauss": "sql",
    "dm8": "sql",
    "rocksdb": "storage",
    "ceph": "storage",
    "fio": "storage",
}


#: fewest labs for a cell's own band: a level-q quantile over K labs moves in steps of 1 / K, so a 90%
#: band needs about 10 (a family with fewer takes its metric group's band over all families)
MIN_LABS = 10


#: fewest labs for a metric group's own band over all families: below this the group borrows every
#: figure's band. Groups differ in kind -- a ratio cancels its lab's common factor, a device-level figure
#: has no client share -- so a group's own few labs are a better guide than all figures pooled (with the
#: pooled band, 5 labs' ratios sat 100% inside a band 80x wide); a held-out lab then calibrates on 2+
#: others, where the pooled-CDF guarantee (1 - 2a) still holds
MIN_GROUP_LABS = 3


#: a band wider than this factor from lower to upper is reported as too wide to act on
TOO_WIDE = 10.0


LAB_BANDS_PATH = PARAMETERS_DIR / "lab-bands.json"


ALL = "all"


def pooled_quantile(scores, labs, level: float) -> float:
    """Half-width ``m_q`` [log units] of the level-``q`` band from ``scores`` (>= 0) of the figures
    of ``labs`` (one label per score): each of the ``K`` labs' scores share the weight ``1 / K``, and
    ``m_q`` is the least score whose pooled weight reaches ``q``; ``inf`` with no scores."""
    if not 0 < level < 1:
        raise ValueError(f"level: must lie in (0, 1), got {level}")
    s = np.asarray(scores, dtype=float)
    labs = np.asarray(labs, dtype=object)
    keep = np.isfinite(s)
    s, labs = s[keep], labs[keep]
    if not len(s):
        return math.inf
    names, inverse, counts = np.unique(labs.astype(str), return_inverse=True, return_counts=True)
    k = len(names)
    target = level
    weights = 1.0 / (k * counts[inverse])
    order = np.argsort(s, kind="stable")
    cumulative = np.cumsum(weights[order])
    i = int(np.searchsorted(cumulative, target - 1e-12))
    return float(s[order][min(i, len(s) - 1)])


@functools.lru_cache(maxsize=1)
def lab_bands_stored() -> dict:
    if not LAB_BANDS_PATH.is_file():
        return {}
    return json.loads(LAB_BANDS_PATH.read_text(encoding="utf-8"))


def lab_cells() -> dict:
    """The stored calibration's cells (``{}`` when none is stored)."""
    return lab_bands_stored().get("cells", {})


def system_record() -> pd.DataFrame:
    """Per system and metric group, the held-out figures' ``labs``, ``figures``,
    ``median_of_lab_medians`` and ``pooled_median`` (factor errors) as stored with the bands."""
    rows = [{"system": k.split("|")[0], "group": k.split("|")[1], **v}
            for k, v in lab_bands_stored().get("systems", {}).items()]  # fmt: skip
    columns = ["system", "group", "labs", "figures", "median_of_lab_medians", "pooled_median"]
    return pd.DataFrame(rows, columns=columns)


def cell_for(system: str, group: str, cells: dict | None = None) -> str | None:
    """The cell whose band a ``system``'s ``group`` takes: its family's (:data:`MIN_LABS` labs), else
    the group's over all families (:data:`MIN_GROUP_LABS`), else all figures pooled (:data:`MIN_LABS`);
    None if none has enough labs."""
    cells = lab_cells() if cells is None else cells
    family = f"{FAMILY.get(system, 'other')}|{group}"
    for key, least in ((family, MIN_LABS), (f"{ALL}|{group}", MIN_GROUP_LABS), (f"{ALL}|{ALL}", MIN_LABS)):
        if key in cells and cells[key]["labs"] >= least:
            return key
    return None


@functools.lru_cache(maxsize=256)
def half_width(system: str, group: str, level: float = 0.9) -> float:
    """Half-width ``m_q`` [log units] of the level-``q`` band of ``system``'s ``group`` on a new lab
    (0 when nothing is stored: no lab band)."""
    key = cell_for(system, group)
    if key is None:
        return 0.0
    cell = lab_cells()[key]
    return pooled_quantile(cell["scores"], cell["lab"], level)


def column_half_width(system: str, column: str, level: float = 0.9, own_lab: bool = False) -> float:
    """:func:`half_width_for` of a ``predict`` output column's metric group."""
    return half_width_for(system, COLUMN_GROUPS[column], level, own_lab)


SPLIT_BANDS_PATH = PARAMETERS_DIR / "split-bands.json"


@functools.lru_cache(maxsize=1)
def split_record() -> pd.DataFrame:
    """The stored split cross-validation's held-out figures: ``group`` (the lab), ``system``,
    ``metric_group``, ``zero_shot_factor``, ``split_factor`` (empty when none is stored)."""
    if not SPLIT_BANDS_PATH.is_file():
        return pd.DataFrame(columns=["group", "system", "metric_group", "zero_shot_factor", "split_factor"])
    doc = json.loads(SPLIT_BANDS_PATH.read_text(encoding="utf-8"))
    return pd.DataFrame(doc["rows"], columns=doc["columns"])


@functools.lru_cache(maxsize=1)
def _split_cells() -> dict:
    """The stored split cross-validation's held-out figures by metric group (and ``all``): their scores
    ``log(factor error)``, labs and lab count (``{}`` when none is stored)."""
    rows = split_record()
    if rows.empty:
        return {}
    rows = rows[np.isfinite(rows["split_factor"].astype(float))]
    cells = {}
    for group, part in [(ALL, rows), *rows.groupby("metric_group")]:
        cells[str(group)] = {"labs": int(part["group"].nunique()), "lab": list(part["group"]),
                             "scores": list(np.log(part["split_factor"].astype(float)))}  # fmt: skip
    return cells


@functools.lru_cache(maxsize=64)
def own_lab_half_width(group: str, level: float = 0.9) -> float:
    """Half-width ``m_q`` [log units] of the level-``q`` band of a metric ``group`` for a lab whose
    parameters were fitted on its own runs: the held-out figures of the split cross-validation
    (:mod:`perfmodel.evidence.split_cv`, each lab fitted on a third), pooled with equal weight per lab;
    the group's own cell with :data:`MIN_GROUP_LABS` labs, else all groups'; 0 when none is stored."""
    cells = _split_cells()
    cell = cells.get(group) if cells.get(group, {}).get("labs", 0) >= MIN_GROUP_LABS else cells.get(ALL)
    if not cell:
        return 0.0
    return pooled_quantile(cell["scores"], cell["lab"], level)


def half_width_for(system: str, group: str, level: float = 0.9, own_lab: bool = False) -> float:
    """:func:`half_width` (a lab not seen); for a lab's own fit, :func:`own_lab_half_width` where it is
    narrower (the split cross-validation pools every system; a system's new-lab band may be its own
    family's, and a fit on the lab's runs starts from that model)."""
    new_lab = half_width(system, group, level)
    if not own_lab:
        return new_lab
    own = own_lab_half_width(group, level)
    return own if new_lab <= 0 else min(own, new_lab)


def band_note(
    system: str, groups=("throughput", "tail latency"), level: float = 0.9, own_lab: bool = False
) -> str:
    """ "" when the level-``q`` band of every one of ``groups`` on a new lab is narrower than
    :data:`TOO_WIDE` (upper / lower); else a sentence naming the groups whose band is wider, with
    its width and the labs it rests on, and what half of a new lab's figures did (the 50% band)."""
    wide, half = [], []
    for group in groups:
        m = half_width_for(system, group, level, own_lab)
        if m > 0 and 2 * m > math.log(TOO_WIDE):
            span = "unbounded" if not math.isfinite(m) else f"a factor of {math.exp(2 * m):,.0f} wide"
            labs = _split_cells().get(group, _split_cells().get(ALL, {})).get("labs") if own_lab else (
                lab_cells()[cell_for(system, group)]["labs"])  # fmt: skip
            wide.append(f"{group} {span} ({labs} labs)")
        m50 = half_width_for(system, group, 0.5, own_lab)
        if 0 < m50 < math.inf:
            half.append(f"{group} within {math.exp(m50):.2g}x")
    if not wide:
        return ""
    where = "for a lab fitted on its own runs" if own_lab else "on a lab it has not seen"
    text = (f"the model's {level:.0%} band {where} is too wide to act on, so no range is "
            f"given: {'; '.join(wide)}")  # fmt: skip
    if half:
        text += f"; half of such figures fell {', '.join(half)} of the prediction"
    source = "perfmodel.evidence.split_cv, each lab fitted on a third" if own_lab else (
        "perfmodel.evidence.lab_bands, leave-one-lab-out")  # fmt: skip
    return text + f" ({source})"


# --- the first-look record (perfmodel.evidence.first_look) ---

#: the record (append-only)
FIRST_LOOK_RECORD = data_dir() / "validation" / "first-look.csv"


#: ``value`` as recorded in ``unit``; ``value_si`` / ``predicted_si`` in SI (a ratio or percent as is)
FIRST_LOOK_COLUMNS = ["figure_id", "source_id", "group", "system", "platform_id", "metric", "metric_group",
                      "unit", "value", "value_si", "predicted_si", "factor_error", "in_band90", "params",
                      "commit", "recorded_on"]  # fmt: skip


def load_first_look(path: Path | None = None) -> pd.DataFrame:
    """The record, one row per figure (empty with :data:`COLUMNS` where none is recorded yet)."""
    path = Path(path or FIRST_LOOK_RECORD)
    if not path.exists() or not path.read_text(encoding="utf-8").strip():
        return pd.DataFrame(columns=FIRST_LOOK_COLUMNS)
    return pd.read_csv(path, dtype={"commit": str, "recorded_on": str})


def first_look_summary(table: pd.DataFrame, by: Sequence[str] = ("system", "metric_group")) -> pd.DataFrame:
    """Per ``by``: figures, sources, the median and 90th percentile of the factor error (>= 1) and the
    share of figures the 90% band held."""
    table = table.dropna(subset=["factor_error"])
    if table.empty:
        columns = [*by, "figures", "sources", "median_factor", "p90_factor", "band_coverage"]
        return pd.DataFrame(columns=columns)
    grouped = table.groupby(list(by))
    return pd.DataFrame(
        {
            "figures": grouped.size(),
            "sources": grouped["source_id"].nunique(),
            "median_factor": grouped["factor_error"].median(),
            "p90_factor": grouped["factor_error"].quantile(0.9),
            "band_coverage": grouped["in_band90"].mean(),
        }
    ).reset_index()
