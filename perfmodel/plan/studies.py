"""The analyses behind the notebooks, as library calls (no model code lives in a notebook).

Each function returns a tidy DataFrame (or a plain dict / text) that a
notebook displays, plots with seaborn and writes to its ``output_dir``:

=============================  ===============================================
function                       used by
=============================  ===============================================
:func:`figures_vs_model`       every notebook that puts a seed next to the model
:func:`fit_table`              01-calibration (shipped set's fit, with intervals)
:func:`scaling_sweep`          02-shard-per-core-scaling
:func:`queue_depth_sweep`      03-queue-depth (closed-loop fio on a raw device)
:func:`flush_burst_table`      03-queue-depth (burst backlog at recorded QDs)
:func:`size_workload`          05-sizing, 06-interactive-planner
:func:`sizing_summary`         05, 06: the flat key results of a sizing table
:func:`sizing_conclusion`      05, 06: the sizing table in a few sentences
:func:`plot_sizing`            05, 06: nodes and p99 per platform and SMT mode
=============================  ===============================================

SI units inside; columns carry their unit (``latency_p99_ms``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from perfmodel.evidence import compare
from perfmodel.evidence.figure_plan import figure_config, predict_figures
from perfmodel.evidence.recorded import load_benchmarks
from perfmodel.inputs._data import PARAMETERS_DIR
from perfmodel.inputs.catalog import load_device, load_platform
from perfmodel.inputs.params import ParameterSet
from perfmodel.inputs.units import GIB, UNITS
from perfmodel.inputs.workload import Workload
from perfmodel.mechanisms.bursts import FLUSH_IO_BYTES, burst_profile
from perfmodel.model.predict import grid, predict
from perfmodel.plan import sizing_view
from perfmodel.plan.sizing import size
from perfmodel.plan.sizing_view import band_text, binding_text, deploy_cell


def figures_vs_model(
    source_id: str | Sequence[str],
    *,
    params: ParameterSet | str | None = None,
    benchmarks: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """A source's recorded figures next to the model's prediction of each.

    Parameters
    ----------
    source_id : one ``source_id`` of :func:`perfmodel.load_benchmarks` (e.g.
        ``"seed000"``) or several.
    params : parameter set (default: the shipped calibrated set).
    benchmarks : the figures to pick from (default: every recorded figure).

    Returns
    -------
    DataFrame, one row per figure: ``figure_id``, ``locator``, the
    configuration columns (``platform_id``, ``device_id``, ``operation``,
    ``threads_per_core``, ``shards``, ``baseline``), ``metric``, ``unit``,
    ``recorded`` and ``predicted`` **in the figure's own unit** (ratios as
    ratios, percent changes in percent), ``ratio`` = predicted / recorded on
    the ratio scale (percent changes compared as ``1 + p/100``), and
    ``reason`` (why the model has no prediction; empty when it has one).
    """

    ids = [source_id] if isinstance(source_id, str) else list(source_id)
    data = load_benchmarks() if benchmarks is None else benchmarks
    rows = data[data["source_id"].isin(ids)].reset_index(drop=True)
    if rows.empty:
        known = ", ".join(sorted(data["source_id"].unique()))
        raise ValueError(f"source_id: no figures for {ids}; known sources: {known}")
    table = predict_figures(rows, params)
    factor = np.array([UNITS[u].to_si for u in table["unit"]], dtype=float)
    predicted_si = table["predicted"].to_numpy(float)
    predicted = np.where(compare.relative(table), predicted_si, predicted_si / factor)
    recorded = table["value"].to_numpy(float)
    pct = compare.percent(table)
    ratio = np.exp(compare.log_scale(predicted, pct) - compare.log_scale(recorded, pct))
    cols = [
        "figure_id",
        "locator",
        "platform_id",
        "device_id",
        "operation",
        "threads_per_core",
        "shards",
        "baseline",
        "metric",
        "unit",
    ]
    out = table[cols].copy()
    out["recorded"] = recorded
    out["predicted"] = predicted
    out["ratio"] = ratio
    out["reason"] = table["reason"].fillna("").to_numpy()
    return out


def fit_table(params: str | Path = "calibrated") -> pd.DataFrame:
    """The free parameters of a saved fit with their 95% intervals.

    ``params``: a shipped set's name or the path of a JSON file written by
    :func:`perfmodel.evidence.calibration.save_parameter_set` (it keeps the fit's
    uncertainty). Returns ``parameter, value, stderr, ci_low, ci_high, unit,
    flag`` -- the columns of :meth:`CalibrationResult.table`.
    """

    text = str(params)
    path = Path(text) if text.endswith(".json") or "/" in text else PARAMETERS_DIR / (text + ".json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    if "fit" not in doc:
        raise ValueError(f"params: {path} holds no fit (priors only); refit with perfmodel calibrate")
    table = pd.DataFrame(doc["fit"]["fit"])
    for col in ("value", "stderr", "ci_low", "ci_high"):
        table[col] = pd.to_numeric(table[col], errors="coerce")
    return table[["parameter", "value", "stderr", "ci_low", "ci_high", "unit", "flag"]]


def scaling_sweep(
    platforms: Sequence[str],
    workload: Workload,
    *,
    system: str,
    cores: Sequence[int],
    nodes: int = 1,
    params: ParameterSet | str | None = None,
    **knobs,
) -> pd.DataFrame:
    """Throughput and latency by cores used and SMT mode, per platform.

    Every platform is predicted at each of its SMT modes x each entry of
    ``cores`` [count] that it has (larger counts are dropped, and the
    platform's full core count is always included), so ``shards`` = cores x
    threads per core for a shard-per-thread system. Returns
    :func:`perfmodel.predict`'s columns, one row per configuration.
    """
    frames = []
    for platform_id in platforms:
        platform = load_platform(platform_id)
        used = sorted({int(c) for c in cores if 0 < c <= platform.cores} | {platform.cores})
        axes = grid(threads_per_core=list(platform.smt_modes), cores=used)
        frames.append(predict(platform, workload, nodes=nodes, system=system, params=params, **axes, **knobs))
    return pd.concat(frames, ignore_index=True)


def config_sweep(
    figure_id: str,
    *,
    params: ParameterSet | str | None = None,
    benchmarks: pd.DataFrame | None = None,
    **axes,
) -> pd.DataFrame:
    """Predict a recorded figure's configuration over a grid of changes.

    The configuration is the one :func:`perfmodel.evidence.figure_plan.figure_config`
    builds from the figure's row (platform, workload, system, nodes, knobs).
    Each axis (a list of values) is a :class:`~perfmodel.Workload` field
    (``replication_factor``, ``read_fraction``, ``clients``, ...), ``nodes``,
    or a knob of :func:`perfmodel.predict` (``cache_bytes``, ``cores``,
    ``numa_binding``, ...); the grid is their cartesian product. Returns
    predict's columns, one row per combination, with the axes as the first
    columns (under their own names, prefixed ``axis_`` when predict has a
    column of that name) and ``figure_id``.
    """
    from dataclasses import fields as dc_fields

    data = load_benchmarks() if benchmarks is None else benchmarks
    match = data[data["figure_id"] == figure_id]
    if match.empty:
        raise ValueError(f"figure_id: no recorded figure {figure_id!r}")
    config = figure_config(match.iloc[0].to_dict())
    platform, workload, system = config.pop("platform"), config.pop("workload"), config.pop("system")
    nodes = config.pop("nodes")
    flat = grid(**axes) if axes else {}
    workload_fields = {f.name for f in dc_fields(Workload) if f.init}
    changes = {k: np.asarray(v, dtype=float) for k, v in flat.items() if k in workload_fields}
    if "nodes" in flat:
        nodes = np.asarray(flat["nodes"], dtype=float)
    knobs = {**config, **{k: v for k, v in flat.items() if k not in workload_fields and k != "nodes"}}
    if changes:
        workload = workload.with_changes(**changes)  # a new object size: a new message size
    frame = predict(platform, workload, nodes=nodes, system=system, params=params, **knobs)
    for position, (name, values) in enumerate(flat.items()):
        column = f"axis_{name}" if name in frame.columns else name
        frame.insert(position, column, values)
    frame.insert(0, "figure_id", figure_id)
    return frame


def queue_depth_sweep(
    devices: Sequence[str],
    queue_depths: Sequence[int],
    *,
    read_fraction: float = 1.0,
    io_bytes: float = 4096.0,
    host: str = "x86-epyc-7351p",
    params: ParameterSet | str | None = None,
) -> pd.DataFrame:
    """A device's throughput and latency against outstanding I/O (fio-like closed loop).

    Each device is predicted as the data device of ``host`` with the raw-device
    system ``fio``: one job keeping ``queue_depth`` random I/Os of
    ``io_bytes`` [B] outstanding, ``read_fraction`` [-] of them reads.
    Returns predict's columns plus ``queue_depth`` [count] and ``interface``.
    """
    qd = np.asarray(queue_depths, dtype=float)
    w = Workload(
        operation="read" if read_fraction == 1 else "write" if read_fraction == 0 else "mixed",
        read_fraction=read_fraction,
        object_bytes=io_bytes,
        dataset_bytes=1e11,
        clients=1,
        iodepth=qd,
    )
    frames = []
    for device_id in devices:
        frame = predict(host, w, system="fio", device=device_id, params=params)
        frame.insert(0, "queue_depth", qd)
        frame.insert(1, "interface", load_device(device_id).interface)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def flush_burst_table(
    device_id: str, burst_queue_depths: Sequence[float], burst_bandwidths_bytes_s: Sequence[float] = ()
) -> pd.DataFrame:
    """Read delay behind a flush burst at given burst queue depths and drain rates.

    A burst keeps ``QD`` 512 KiB writes outstanding and drains at a bandwidth
    [B/s] (default: the device's sequential write bandwidth); a read arriving
    during it on the flush's hardware queue waits on average half the backlog and at most all
    of it (:func:`perfmodel.mechanisms.bursts.burst_profile`; reads on the device's other queues do not:
    :func:`perfmodel.mechanisms.bursts.flush_queue_share`). Returns ``burst_queue_depth``
    [count], ``burst_bandwidth_gb_s`` [GB/s], ``read_delay_mean_ms`` and
    ``read_delay_max_ms`` [ms], one row per (QD, bandwidth).
    """
    device = load_device(device_id)
    bws = list(burst_bandwidths_bytes_s) or [device.seq_write_bytes_s]
    qd, bw = np.meshgrid(np.asarray(burst_queue_depths, float), np.asarray(bws, float), indexing="ij")
    _, mean_delay, max_delay = burst_profile(0.0, bw.ravel(), qd.ravel(), FLUSH_IO_BYTES)
    return pd.DataFrame(
        {
            "device": device_id,
            "burst_queue_depth": qd.ravel(),
            "burst_bandwidth_gb_s": bw.ravel() / 1e9,
            "read_delay_mean_ms": np.asarray(mean_delay) * 1e3,
            "read_delay_max_ms": np.asarray(max_delay) * 1e3,
        }
    )


def workload_for(
    *,
    read_fraction: float = 0.8,
    object_bytes: float = 1024.0,
    dataset_gib: float = 500.0,
    replication_factor: int = 3,
    consistency: str = "QUORUM",
    key_distribution: str = "uniform",
    zipf_s: float = 0.0,
) -> Workload:
    """The workload :func:`size_workload` sizes, from its plain numbers (``object_bytes`` [B],
    ``dataset_gib`` [GiB] before replication); its one client is replaced by the target's open
    arrivals."""
    operation = "read" if read_fraction == 1 else "write" if read_fraction == 0 else "mixed"
    return Workload(operation=operation, read_fraction=read_fraction, object_bytes=object_bytes,
                    dataset_bytes=dataset_gib * GIB, clients=1, replication_factor=replication_factor,
                    consistency=consistency, key_distribution=key_distribution, zipf_s=zipf_s)  # fmt: skip


def size_workload(
    *,
    platforms: Sequence[str],
    target_ops_s: float,
    slo_p99_ms: float,
    system: str = "scylla",
    read_fraction: float = 0.8,
    object_bytes: float = 1024.0,
    dataset_gib: float = 500.0,
    replication_factor: int = 3,
    consistency: str = "QUORUM",
    failure_tolerance: int = 1,
    max_utilization: float = 0.7,
    key_distribution: str = "uniform",
    zipf_s: float = 0.0,
    interval: float | None = 0.9,
    params: ParameterSet | str | None = None,
    **knobs,
) -> pd.DataFrame:
    """:func:`perfmodel.size` for a workload given by its plain numbers.

    ``target_ops_s`` [1/s], ``slo_p99_ms`` [ms], ``read_fraction`` [-],
    ``object_bytes`` [B], ``dataset_gib`` [GiB] before replication,
    ``replication_factor`` [count], ``failure_tolerance`` [nodes that may be
    down]. Returns the sizing table (one row per platform x SMT mode).
    """

    w = workload_for(read_fraction=read_fraction, object_bytes=object_bytes, dataset_gib=dataset_gib,
                     replication_factor=replication_factor, consistency=consistency,
                     key_distribution=key_distribution, zipf_s=zipf_s)  # fmt: skip
    return size(
        w,
        target_ops_s=target_ops_s,
        slo_p99_ms=slo_p99_ms,
        system=system,
        platforms=list(platforms),
        failure_tolerance=failure_tolerance,
        max_utilization=max_utilization,
        interval=interval,
        params=params,
        **knobs,
    )


def best_per_platform(table: pd.DataFrame) -> pd.DataFrame:
    """The best SMT mode of each platform in a sizing table (fewest nodes, then lowest p99).

    Infeasible platforms keep one row (``nodes`` 0, ``feasible`` False): the mode whose best p99 at
    any size came nearest (where the table says).
    """
    keys = ["platform", "_inf", "nodes", "latency_p99_ms"]
    keys += ["latency_p99_ms_best"] if "latency_p99_ms_best" in table else []  # infeasible: the nearest miss
    order = table.assign(_inf=~table["feasible"]).sort_values(keys, kind="stable")
    return order.groupby("platform", sort=False).head(1).drop(columns="_inf").reset_index(drop=True)


def sizing_summary(table: pd.DataFrame) -> dict:
    """The flat key results of a sizing table (what a batch summary aggregates).

    Keys: ``candidates``, ``feasible_candidates``, ``best_platform``,
    ``best_threads_per_core``, ``best_nodes``, ``best_latency_p99_ms``,
    ``best_binding`` (empty / NaN when nothing is feasible) and, per platform,
    ``nodes_<platform>`` (its fewest nodes over SMT modes; 0 if infeasible).
    """
    best = best_per_platform(table)
    feasible = table[table["feasible"]].sort_values(["nodes", "latency_p99_ms"], kind="stable")
    out: dict = {"candidates": int(len(table)), "feasible_candidates": int(len(feasible))}
    if len(feasible):
        top = feasible.iloc[0]
        out.update(
            best_platform=str(top.platform),
            best_threads_per_core=int(top.threads_per_core),
            best_nodes=int(top.nodes),
            best_latency_p99_ms=float(top.latency_p99_ms),
            best_binding=str(top.binding),
        )
    else:
        out.update(
            best_platform="",
            best_threads_per_core=0,
            best_nodes=0,
            best_latency_p99_ms=math.nan,
            best_binding="",
        )
    for row in best.itertuples():
        out[f"nodes_{row.platform}"] = int(row.nodes)
    return out


def sizing_conclusion(table: pd.DataFrame, *, target_ops_s: float, slo_p99_ms: float) -> str:
    """The sizing table in a few sentences (the notebook prints it and writes it to a file): per
    platform its best SMT mode, the node count and range, what sets it (what goes wrong with one
    node fewer, :func:`perfmodel.plan.sizing_view.binding_text`), the p99 and its band; then the answer,
    naming any tie and how it was broken."""

    best = best_per_platform(table)
    level = table.attrs.get("interval", 0.9)
    max_util = table.attrs.get("max_utilization")
    unit = table.attrs.get("target_unit", "ops/s")
    goal = f"{target_ops_s:,.0f} ops/s"
    if unit != "ops/s":
        goal = f"{table.attrs['target']:,.6g} {unit} ({goal})"
    lines = [f"Sizing for {goal} at p99 <= {slo_p99_ms:g} ms:"]
    if table.attrs.get("terms"):
        lines[0] += f" ({table.attrs['terms']})"
    for _, row in best.iterrows():
        if row["feasible"]:
            why = binding_text(row, slo_p99_ms=slo_p99_ms, max_utilization=max_util)
            why = why or (f"binding: {row['binding']}" if row.get("binding") else "")
            if row.get("tail_regime") == "bursts":
                why += "; the p99 is a flush-burst wait"
            deploy = deploy_cell(row)
            lines.append(
                f"- {row['platform']}: {nodes_text(row, level)}{', ' + deploy if deploy else ''} at "
                f"SMT{int(row['threads_per_core'])} on {row.get('network', '')}"
                f" ({why}; predicted p99 {band_text(row, level)}; bottleneck {row['bottleneck']})."
            )
        else:
            lines.append(f"- {row['platform']}: infeasible ({row['reason']}).")
    feasible = table[table["feasible"]].sort_values(["nodes", "latency_p99_ms"], kind="stable")
    if len(feasible):
        top = feasible.iloc[0]
        others = feasible[feasible["nodes"] == top.nodes].iloc[1:]
        names = [f"{r.platform} SMT{int(r.threads_per_core)}" for r in others.itertuples()]
        named = ", ".join(names[:3]) + (f" and {len(names) - 3} others" if len(names) > 3 else "")
        tie = (f" (a tie at {_count(int(top.nodes), 'node')} with {named}; broken by the lower predicted p99)"
               if len(others) else "")  # fmt: skip
        deploy = deploy_cell(top._asdict() if hasattr(top, "_asdict") else top)
        where = f" ({deploy})" if deploy else ""
        smt = int(top.threads_per_core)
        lines.append(f"Fewest nodes: {nodes_text(top, level)} x {top.platform}{where} at SMT{smt}{tie}.")
    else:
        lines.append("No candidate meets every constraint; " + _advice(table) + ".")
    return "\n".join(lines)


def _advice(table: pd.DataFrame) -> str:
    """What to change when nothing is feasible: only the constraints that actually fail, each with
    the way out that applies (a search that stopped at ``max_nodes`` says so first)."""
    top = table.attrs.get("max_nodes")

    def missed(name: str) -> bool:
        col = f"nodes_for_{name}"
        return col in table and bool(table[col].isna().all())

    if missed("replication"):
        return (f"RF plus the failures tolerated need more than {top} servers: raise max_nodes, or lower "
                "the replication factor or the failure tolerance")  # fmt: skip
    advice = []
    if missed("capacity"):
        advice.append("the data set does not fit: larger drives, more drives per server, more servers "
                      "(max_nodes) or a smaller data set")  # fmt: skip
    if table.get("topology", pd.Series(dtype=str)).eq("primary_replicas").any() and missed("throughput"):
        advice.append("no single primary carries the writes: shard over several primaries (not modelled "
                      "here), a larger server, or a lower target")  # fmt: skip
    elif missed("throughput"):
        advice.append(f"lower the target, raise the utilisation cap or allow more than {top} servers")
    if missed("slo"):
        best = table.get("latency_p99_ms_best", pd.Series(dtype=float)).min()
        floor = f" (the lowest p99 any candidate reaches is {best:.4g} ms)" if np.isfinite(best) else ""
        advice.append("relax the p99 SLO" + floor)
    return "; ".join(advice) or "no single size meets them all at once: relax the SLO or the target"


def _count(n: int, noun: str) -> str:
    """``1 node``, ``12 nodes``."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def nodes_text(row, level: float = 0.9) -> str:
    """``12 nodes (90% range 10-14)``, the range from ``nodes_lower`` / ``nodes_upper`` when known
    (none when both ends are the count itself)."""
    nodes = int(row.nodes)
    lo, hi = getattr(row, "nodes_lower", math.nan), getattr(row, "nodes_upper", math.nan)
    if not np.isfinite(lo) or (lo == nodes and hi == nodes):
        return _count(nodes, "node")
    if not np.isfinite(hi):
        return f"{_count(nodes, 'node')} ({level:.0%} range {int(lo)} to more than the largest size tried)"
    return f"{_count(nodes, 'node')} ({level:.0%} range {int(lo)}-{int(hi)})"


def plot_sizing(table: pd.DataFrame, *, slo_p99_ms: float | None = None, axes=None, width_in: float = 11.0):
    """Nodes needed and predicted p99 per platform and SMT mode:
    :func:`perfmodel.plan.sizing_view.plot_sizing`
    (fixed colours per SMT mode, p99 on a log axis with band and SLO, infeasible rows in words)."""

    return sizing_view.plot_sizing(table, slo_p99_ms=slo_p99_ms, axes=axes, width_in=width_in)
