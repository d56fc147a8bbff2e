"""The model's out-of-sample error counted by lab, seeds and corpus together.

A lab (benchmark column ``group``: sources sharing a testbed or an author series) is the unit a
planner's own measurements resemble, and one lab's many figures must not stand for the rest: the
seeds' leave-one-group-out headline of about 1.2x was one Ceph lab's 1.17x on 92 of 123 figures.
This module pools every held-out figure the project has a stored run for, with the lab it came
from -- the seed labs from the leave-one-group-out refits (``data/validation/cv-group.json``:
every seed lab held out of the fit), the corpus labs from the corpus run
(``perfmodel/parameters/corpus-run.json``: a corpus system's own lab held out of its fit, a seed
system's never in it) -- and reports per system and metric group the **median of lab medians**,
its 90th percentile over labs, and the pooled median beside it.

What this is not: the figures of a corpus lab still shaped the model's structure (its mechanisms
were built looking at them); the first-look record (:mod:`perfmodel.evidence.first_look`) is the measure of
that. Figures that are not out of sample (derived from, or from the fit's own lab) and refits
that did not converge are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfmodel.evidence import corpus
from perfmodel.evidence.recorded import load_benchmarks
from perfmodel.evidence.stored_runs import load_cv
from perfmodel.inputs.catalog import default_catalog
from perfmodel.model import caveats
from perfmodel.model.bands import load_first_look

__all__ = ["MECHANISMS", "held_out", "lab_medians", "markdown", "mechanism_labs", "mechanisms_markdown"]


def held_out() -> pd.DataFrame:
    """One row per held-out figure: ``lab``, ``system``, ``metric_group``, ``factor_error`` (>= 1),
    ``in_band90`` (1 / 0 / NaN) and ``origin`` (``seed cv-group`` or ``corpus``)."""

    systems = load_benchmarks().set_index("figure_id")["system"]
    seeds = load_cv("group")
    keep = (seeds["derived"] == "") & seeds["converged"].astype(bool) & np.isfinite(seeds["factor_error"])
    seeds = seeds[keep]
    seed_rows = pd.DataFrame({
        "lab": seeds["group"].to_numpy(),
        "system": systems.reindex(seeds["figure_id"]).to_numpy(),
        "metric_group": seeds["metric_group"].to_numpy(),
        "factor_error": seeds["factor_error"].to_numpy(float),
        "in_band90": seeds["in_band"].astype(float).to_numpy(),
        "origin": "seed cv-group",
    })  # fmt: skip
    table = corpus.load()
    table = table[(table["reason"] == "") & np.isfinite(table["loso_factor"])]
    groups = caveats.metric_groups(table["metric"], table["unit"])
    corpus_rows = pd.DataFrame({
        "lab": table["group"].to_numpy(),
        "system": table["system"].to_numpy(),
        "metric_group": groups,
        "factor_error": table["loso_factor"].to_numpy(float),
        "in_band90": table["loso_in_band90"].to_numpy(float),
        "origin": "corpus",
    })  # fmt: skip
    return pd.concat([seed_rows, corpus_rows], ignore_index=True)


def lab_medians(table: pd.DataFrame, by=("system",)) -> pd.DataFrame:
    """Per ``by``: ``labs``, ``figures``, the ``median_of_lab_medians`` and its ``p90_over_labs``
    (each lab's median factor error first, then their median and 90th percentile), the
    ``pooled_median`` over figures, and the 90% band's ``coverage`` (pooled)."""
    by = list(by)
    per_lab = table.groupby([*by, "lab"])["factor_error"].median().rename("lab_median").reset_index()
    if not by:
        return pd.DataFrame([{
            "labs": per_lab["lab"].nunique(), "figures": len(table),
            "median_of_lab_medians": per_lab["lab_median"].median(),
            "p90_over_labs": per_lab["lab_median"].quantile(0.9),
            "pooled_median": table["factor_error"].median(),
            "coverage": np.nanmean(table["in_band90"]),
        }])  # fmt: skip
    grouped = table.groupby(by)
    labs = per_lab.groupby(by)["lab_median"]
    return pd.DataFrame(
        {
            "labs": labs.size(),
            "figures": grouped.size(),
            "median_of_lab_medians": labs.median(),
            "p90_over_labs": labs.quantile(0.9),
            "pooled_median": grouped["factor_error"].median(),
            "coverage": grouped["in_band90"].mean(),
        }
    ).reset_index()


def markdown(table: pd.DataFrame | None = None) -> str:
    """docs/validation.md's lead: overall, by system, by metric group (factor errors; the bands'
    coverage over labs is :mod:`perfmodel.evidence.lab_bands`')."""
    table = held_out() if table is None else table

    def fmt(frame: pd.DataFrame, keys: list[str]) -> list[str]:
        head = [*keys, "labs", "figures", "median of lab medians", "p90 over labs", "pooled median"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in frame.itertuples(index=False):
            vals = [str(getattr(r, k)) for k in keys] + [
                str(r.labs), str(r.figures), f"{r.median_of_lab_medians:.2f}x", f"{r.p90_over_labs:.2f}x",
                f"{r.pooled_median:.2f}x",
            ]  # fmt: skip
            lines.append("| " + " | ".join(vals) + " |")
        return lines

    out = ["**All labs**", "", *fmt(lab_medians(table, ()), []), "",
           "**By system**", "", *fmt(lab_medians(table, ("system",)), ["system"]), "",
           "**By metric group**", "",
           *fmt(lab_medians(table, ("metric_group",)), ["metric_group"])]  # fmt: skip
    return "\n".join(out)


#: mechanisms the model switches on only where a figure's configuration or its hardware says so, each
#: with the test of a recorded figure (a row of ``load_benchmarks``, its platform and its network)
MECHANISMS = {
    "availability zones (round trips between zones)": lambda f, p, n: f.zones == f.zones and f.zones > 1,
    "read consistency above ONE (digest reads)": lambda f, p, n: f.read_consistency not in ("", "ONE"),
    "simple query protocol (a parse per statement)": lambda f, p, n: f.query_protocol == "simple",
    "load generator on the server's cores": lambda f, p, n: f.client_colocated is True,
    "VM exits per message": lambda f, p, n: p is not None and p.vm_exits_per_message > 0,
    "a transport cheaper than TCP (unix socket)": lambda f, p, n: n is not None and n.message_cost_share < 1,
    "erasure coding": lambda f, p, n: f.ec_profile != "",
    "virtualised servers": lambda f, p, n: f.virtualized is True,
    "throttled (open-loop) load": lambda f, p, n: f.target_rate == f.target_rate and f.target_rate > 0,
}


def mechanism_labs() -> pd.DataFrame:
    """Per mechanism of :data:`MECHANISMS`: the ``labs`` whose recorded figures switch it on (their
    count, ``which``), the ``figures``, ``first_looked`` (of those labs, the ones first predicted
    after the mechanism existed: the first-look record) and ``single_lab``."""

    looked = set(load_first_look()["group"])
    figures = load_benchmarks()
    catalog = default_catalog()
    rows = []
    for name, test in MECHANISMS.items():
        labs: dict[str, int] = {}
        for f in figures.itertuples(index=False):
            p = catalog.platforms.get(f.platform_id) if f.platform_id else None
            net_id = f.network_id or (p.network if p is not None else "")
            n = catalog.networks.get(net_id) if net_id else None
            with np.errstate(invalid="ignore"):
                on = test(f, p, n)
            if on:
                labs[f.group] = labs.get(f.group, 0) + 1
        rows.append({"mechanism": name, "labs": len(labs), "figures": sum(labs.values()),
                     "first_looked": len(set(labs) & looked),
                     "which": ", ".join(sorted(labs)), "single_lab": len(labs) <= 1})  # fmt: skip
    return pd.DataFrame(rows)


def mechanisms_markdown(frame: pd.DataFrame | None = None) -> str:
    """docs/validation.md's list of mechanisms by the labs whose figures switch them on."""
    frame = mechanism_labs() if frame is None else frame
    lines = ["| mechanism | labs | of them first-looked | figures | which labs |", "|---|---|---|---|---|"]
    for r in frame.sort_values(["labs", "mechanism"]).itertuples(index=False):
        flag = " **(one lab)**" if r.single_lab else ""
        lines.append(
            f"| {r.mechanism}{flag} | {r.labs} | {r.first_looked} | {r.figures} | {r.which or '-'} |"
        )
    return "\n".join(lines)
