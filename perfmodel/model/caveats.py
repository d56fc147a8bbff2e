"""What the project's own record says about trusting an answer, printed beside it.

For a system and the metric groups an answer rests on (a sizing: throughput and tail
latency), :func:`caveat` gives two measured numbers per group:

- **on labs not seen**: the median over labs of each lab's median factor error, every lab held
  out of the fit it is predicted by (seeds and corpus together, :mod:`perfmodel.evidence.labs`, stored with
  the bands in ``perfmodel/parameters/lab-bands.json``);
- **first look**: the median factor error of the sources added after the model was frozen
  (:mod:`perfmodel.evidence.first_look`), the honest measure of what the next lab will see.

Where either exceeds :data:`THRESHOLD` the line starts with a warning naming the worst. Numbers
are factor errors (>= 1), so a 10x miss never reads as 90%.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from perfmodel.inputs.units import UNITS
from perfmodel.model import bands

__all__ = ["THRESHOLD", "caveat", "record"]

#: a median factor error above this earns a caveat
THRESHOLD = 1.5
#: recorded metric -> metric group: perfmodel.evidence.discrepancy's client groups, and p99.9 as a tail too
GROUP_OF = {**bands.CLIENT_GROUPS, "latency_p999": "tail latency"}


def metric_groups(metrics, units) -> list[str]:
    """Each corpus figure's metric group (every corpus figure is client-level): ``ratios`` for a
    figure given relative to a baseline, else :data:`GROUP_OF` (``device-level`` for the rest)."""

    return ["ratios" if UNITS[u].dimension in ("ratio", "pct_change") else GROUP_OF.get(m, "device-level")
            for m, u in zip(metrics, units, strict=True)]  # fmt: skip


@functools.lru_cache(maxsize=1)
def record() -> pd.DataFrame:
    """Per system and metric group: ``labs``, ``figures``, ``median_factor`` (median of lab medians
    on held-out labs) and the first look's ``first_look_figures``, ``first_look_sources`` and
    ``first_look_median`` (NaN where no source was added since)."""
    held = bands.system_record().rename(columns={"median_of_lab_medians": "median_factor"})
    try:
        looked = bands.first_look_summary(bands.load_first_look(), ("system", "metric_group"))
    except FileNotFoundError:
        looked = pd.DataFrame(columns=["system", "metric_group", "figures", "sources", "median_factor"])
    looked = looked.rename(
        columns={
            "metric_group": "group",
            "figures": "first_look_figures",
            "sources": "first_look_sources",
            "median_factor": "first_look_median",
        }
    )
    looked = looked[["system", "group", "first_look_figures", "first_look_sources", "first_look_median"]]
    return held.merge(looked, on=["system", "group"], how="outer")  # fmt: skip


def _count(n: float, noun: str) -> str:
    return f"{n:.0f} {noun}" + ("" if n == 1 else "s")


#: caveat lines already written, by (the record's identity, system, groups), each kept with its record
#: (so the identity is not reused): predict() asks on every call
_LINES: dict[tuple, tuple[pd.DataFrame, str]] = {}


def caveat(system: str, groups=("throughput", "tail latency")) -> str:
    """One line on how far to trust an answer about ``system``'s ``groups`` (module doc): per group
    the median factor error on labs not seen and on the first look, and a warning first where one
    exceeds :data:`THRESHOLD`."""
    rec = record()
    key = (id(rec), str(system), tuple(groups))
    if key not in _LINES:
        _LINES[key] = (rec, _line(rec, str(system), tuple(groups)))
    return _LINES[key][1]


def _line(rec: pd.DataFrame, system: str, groups: tuple[str, ...]) -> str:
    mine = rec[(rec["system"] == system) & rec["group"].isin(groups)]
    if mine.empty:
        return (f"no published figures of {system} from other labs are scored yet: treat the answer as a "
                "first estimate and benchmark a candidate")  # fmt: skip
    parts, worst = [], (0.0, "")
    for r in mine.itertuples():
        bits = []
        if np.isfinite(r.median_factor):
            bits.append(f"{r.median_factor:.2f}x over {_count(r.labs, 'lab')} held out")
            worst = max(worst, (float(r.median_factor), f"{r.group} on labs held out"))
        if np.isfinite(r.first_look_median):
            bits.append(f"first look {r.first_look_median:.2f}x ({_count(r.first_look_figures, 'figure')} of "
                        f"{_count(r.first_look_sources, 'new source')})")  # fmt: skip
            worst = max(worst, (float(r.first_look_median), f"{r.group} on first look"))
        parts.append(f"{r.group} {', '.join(bits)}")
    text = (f"the model's median factor error on {system} figures from labs it was not fitted on: "
            f"{'; '.join(parts)}")  # fmt: skip
    if worst[0] > THRESHOLD:
        return f"{system}'s {worst[1]} is {worst[0]:.1f}x off -- benchmark a candidate before buying ({text})"
    return text


def own_lab_caveat(system: str, groups=("throughput", "tail latency")) -> str:
    """The caveat for a parameter set fitted on the user's own runs (``scope: lab``): per group, the
    median of lab medians of ``system``'s held-out figures when each lab was fitted on a third of its
    own (:mod:`perfmodel.evidence.split_cv`), and a warning first where one exceeds :data:`THRESHOLD`."""
    rows = bands.split_record()
    mine = rows[(rows["system"] == system) & rows["metric_group"].isin(groups)]
    if mine.empty:
        return (f"fitted on your own runs; no lab of {system} has been scored fitted on its own runs yet: "
                "check the fit's figures (perfmodel validate --data) before buying")  # fmt: skip
    parts, worst = [], (0.0, "")
    for group, part in mine.groupby("metric_group"):
        median = float(part.groupby("group")["split_factor"].median().median())
        parts.append(f"{group} {median:.2f}x over {_count(part['group'].nunique(), 'lab')}")
        worst = max(worst, (median, str(group)))
    text = (f"fitted on your own runs: on labs fitted on a third of their own figures, {system}'s other "
            f"figures missed by a median of {'; '.join(parts)} (perfmodel validate --cv split)")  # fmt: skip
    if worst[0] > THRESHOLD:
        return f"{system}'s {worst[1]} is {worst[0]:.1f}x off even fitted on a lab's own runs ({text})"
    return text
