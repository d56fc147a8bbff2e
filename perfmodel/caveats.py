"""What the project's own record says about trusting an answer, printed beside it.

For a system and the metric groups an answer rests on (a sizing: throughput and tail
latency), :func:`caveat` gives the median factor error of the model on other labs' published
figures of that system, each source held out of the fit (the public corpus's stored
leave-one-source-out run, :mod:`perfmodel.corpus`), and how often the 90% band held them. Where a
group misses by more than :data:`THRESHOLD` the line says so plainly.

Leave-one-source-out holds out a source's figures from the fitted parameters, not from the model's
structure, which was built looking at the corpus: the first-look error of sources added later is
the honest measure, and is larger (issue 37). The line names what it is.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from perfmodel import discrepancy

__all__ = ["THRESHOLD", "caveat", "record"]

#: a median factor error above this earns a caveat
THRESHOLD = 1.5
#: recorded metric -> metric group: perfmodel.discrepancy's client groups, and p99.9 as a tail too
GROUP_OF = {**discrepancy._CLIENT_GROUPS, "latency_p999": "tail latency"}


def metric_groups(metrics, units) -> list[str]:
    """Each corpus figure's metric group (every corpus figure is client-level): ``ratios`` for a
    figure given relative to a baseline, else :data:`GROUP_OF` (``device-level`` for the rest)."""
    from perfmodel.units import UNITS

    return ["ratios" if UNITS[u].dimension in ("ratio", "pct_change") else GROUP_OF.get(m, "device-level")
            for m, u in zip(metrics, units, strict=True)]  # fmt: skip


@functools.lru_cache(maxsize=1)
def record() -> pd.DataFrame:
    """Per system and metric group: ``figures``, ``sources``, ``median_factor`` (leave-one-source-out
    factor error, >= 1) and ``band_coverage`` (share inside the 90% band) of the stored corpus run;
    empty where no run is stored."""
    from perfmodel import corpus

    try:
        table = corpus.load()
    except FileNotFoundError:
        columns = ["system", "group", "figures", "sources", "median_factor", "band_coverage"]
        return pd.DataFrame(columns=columns)
    table = table[table["reason"] == ""]  # predicted and out of sample (corpus.not_out_of_sample)
    table = table.assign(group=metric_groups(table["metric"], table["unit"])).dropna(subset=["loso_factor"])
    grouped = table.groupby(["system", "group"])
    return pd.DataFrame(
        {
            "figures": grouped.size(),
            "sources": grouped["source_id"].nunique(),
            "median_factor": grouped["loso_factor"].median(),
            "band_coverage": grouped["loso_in_band90"].mean(),
        }
    ).reset_index()


def caveat(system: str, groups=("throughput", "tail latency")) -> str:
    """One line on how far to trust an answer about ``system``'s ``groups`` (module doc): the median
    factor error per group on other labs' figures with each source held out, the 90% band's coverage,
    and a warning first where a group misses by more than :data:`THRESHOLD`."""
    rec = record()
    mine = rec[(rec["system"] == system) & rec["group"].isin(groups)]
    if mine.empty:
        return (f"no published figures of {system} from other labs are scored yet: treat the answer as a "
                "first estimate and benchmark a candidate")  # fmt: skip
    parts = [f"{r.group} {r.median_factor:.2f}x ({r.figures} figures, {r.sources} sources)"
             for r in mine.itertuples()]  # fmt: skip
    coverage = float(np.average(mine["band_coverage"], weights=mine["figures"]))
    text = (f"the model's median factor error on other labs' published {system} figures, each source "
            f"held out of the fit: {'; '.join(parts)}; its 90% band held {coverage:.0%} of them")  # fmt: skip
    worst = mine.loc[mine["median_factor"].idxmax()]
    if worst.median_factor > THRESHOLD:
        return (f"{system}'s {worst.group} is {worst.median_factor:.1f}x off on other labs' figures -- "
                f"benchmark a candidate before buying ({text})")  # fmt: skip
    return text
