"""Recorded figures as model configurations: what a benchmark row asks ``predict``.

A row of :func:`perfmodel.load_benchmarks` names a platform, a device, a
workload and the knobs the source varied. :func:`figure_config` turns it into
the arguments of :func:`perfmodel.predict` -- from the catalog and the row
alone -- and :func:`predict_figures` evaluates every figure in the row's own
metric: an absolute figure is compared with the prediction in the same unit;
a relative figure (ratio, percent change) with the ratio of two predictions,
the row's configuration over its baseline configuration.

Figures the model has no output for (a maximum over a run, volumes written,
workload shares, vendor claims) are returned with ``predicted`` NaN and a
``reason``; they are listed, never dropped silently.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from perfmodel.benchmarks import parse_baseline
from perfmodel.node import SYSTEMS, predict
from perfmodel.params import ParameterSet, load_parameters
from perfmodel.units import UNITS
from perfmodel.workload import Workload

#: metric (at client level) -> predict column, with the operation class chosen by io_type/operation
_CLIENT_METRICS = {
    "throughput": "throughput_ops_s",
    "iops": "throughput_ops_s",
    "tpmc": "tpmc",
    "latency_mean": "latency_mean_ms",
    "latency_p95": "latency_p95_ms",
    "latency_p99": "latency_p99_ms",
}
_DEVICE_METRICS = {"iops", "bandwidth", "queue_depth", "utilization"}


def _blank(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def figure_config(row: Mapping[str, Any]) -> dict[str, Any]:
    """The ``predict`` arguments for a recorded figure's configuration.

    Returns a dict with ``platform``, ``workload``, ``system``, ``nodes`` and
    the knobs; missing knobs fall back to the platform's defaults.
    """

    def get(key, default=None):
        value = row.get(key, default)
        return default if _blank(value) else value

    system = get("system")
    operation = get("operation", "mixed")
    fields = dict(row)
    if operation == "tpcc":
        warehouses = float(get("warehouses", 100))
        fields.update(
            read_fraction=get("read_fraction", 0.08),
            object_bytes=8192.0,
            io_bytes=get("io_bytes", 8192.0),
            dataset_gb=warehouses * 0.1,
        )
    workload = Workload.from_benchmark(fields)
    profile = SYSTEMS.get(str(system))
    if profile is not None:
        workload = replace(workload, consistency=profile.write_consistency)
    knobs: dict[str, Any] = {}
    if not _blank(row.get("threads_per_core")):
        knobs["threads_per_core"] = float(row["threads_per_core"])
    if not _blank(row.get("cores_used")):
        knobs["cores"] = float(row["cores_used"])
    if not _blank(row.get("device_id")):
        knobs["device"] = str(row["device_id"])
    if (
        "wal_device_id" in row
        and row["wal_device_id"] is not None
        and not (isinstance(row["wal_device_id"], float) and math.isnan(row["wal_device_id"]))
    ):
        if row["wal_device_id"] != "" or row.get("_wal_explicit"):
            knobs["wal_device"] = str(row["wal_device_id"])
    if not _blank(row.get("cache_gb")):
        knobs["cache_bytes"] = float(row["cache_gb"]) * 1e9
    if get("read_source") == "disk":
        knobs["cache_state"] = "cold"
    if not _blank(row.get("numa_binding")):
        knobs["numa_binding"] = row["numa_binding"] == "bound"
    if not _blank(row.get("client_link_gbps")):
        knobs["client_link_gbps"] = float(row["client_link_gbps"])
    for key in ("osds_per_device", "cores_per_device", "log_files"):
        if not _blank(row.get(key)):
            knobs[key] = float(row[key])
    virtualized = row.get("virtualized")
    if virtualized is True or virtualized == "true":
        knobs["virtualization"] = "boost" if "boost" in str(get("variant", "")) else "untuned"
        # hyper-converged storage keeps its replicas below the VM: the database itself runs
        # once, and the replicated write is part of the VM's I/O path (virt_io_overhead_s)
        workload = replace(workload, replication_factor=1, consistency="ONE")
    return {
        "platform": str(row["platform_id"]),
        "workload": workload,
        "system": system,
        "nodes": float(get("nodes", 1)),
        **knobs,
    }


def _with_baseline(row: Mapping[str, Any]) -> dict[str, Any]:
    base = dict(row)
    changes = parse_baseline(str(row["baseline"]))
    base.update(changes)
    if "wal_device_id" in changes:
        base["_wal_explicit"] = True
    return base


def _value(frame: pd.DataFrame, row: Mapping[str, Any]) -> tuple[float, str]:
    """The predicted number in the figure's metric and SI unit, or NaN and why."""
    metric, level = row["metric"], row["level"]
    io_type = row.get("io_type") or ""
    op = row.get("operation")
    if level == "client":
        if metric in ("latency_mean", "latency_p95", "latency_p99"):
            column = _CLIENT_METRICS[metric]
            if op == "read":
                column = "read_" + column
            elif op == "write":
                column = "write_" + column
            return float(frame[column].iloc[0]) * 1e-3, ""
        if metric in ("throughput", "iops", "tpmc"):
            column = "tpmc" if metric == "tpmc" else "throughput_ops_s"
            value = float(frame[column].iloc[0])
            return (value / 60.0 if metric == "tpmc" else value), ""
        if metric == "bandwidth":
            io = row.get("io_bytes")
            io = row.get("object_bytes") if _blank(io) else io
            return float(frame["throughput_ops_s"].iloc[0]) * float(io), ""
        if metric == "time_per_op":
            return 1.0 / float(frame["throughput_ops_s"].iloc[0]), ""
        return math.nan, f"no model output for client {metric}"
    if level == "device" and metric in _DEVICE_METRICS:
        if metric == "queue_depth":
            return float(frame["device_queue_depth"].iloc[0]), ""
        if metric == "utilization":
            return float(frame["util_device"].iloc[0]), ""
        column = {
            ("iops", "read"): "device_read_iops",
            ("iops", "write"): "device_write_iops",
            ("bandwidth", "read"): "device_read_bytes_s",
            ("bandwidth", "write"): "device_write_bytes_s",
        }.get((metric, io_type))
        if column is None:
            column = "device_read_bytes_s" if metric == "bandwidth" else "device_read_iops"
            if metric == "bandwidth":
                return float(frame["device_read_bytes_s"].iloc[0] + frame["device_write_bytes_s"].iloc[0]), ""
        return float(frame[column].iloc[0]), ""
    if level == "cpu" and metric == "cpu_utilization":
        return float(frame["util_cpu"].iloc[0]), ""
    return math.nan, f"no model output for {level} {metric}"


def predict_figure(row: Mapping[str, Any], params: ParameterSet | str | None = None) -> tuple[float, str]:
    """Predict one recorded figure in its own unit's SI form (``value_si``).

    Returns ``(predicted, reason)``: ``reason`` is empty when the model
    predicts the figure, else why it cannot (``predicted`` is then NaN).
    Relative figures return a ratio (``unit`` ratio) or a percent change.
    """
    params = load_parameters(params)
    if row.get("role") == "claim":
        return math.nan, "vendor claim without a measured configuration"
    try:
        frame = predict(params=params, **figure_config(row))
    except (ValueError, KeyError) as exc:
        return math.nan, f"configuration cannot be built: {exc}"
    value, reason = _value(frame, row)
    if reason or UNITS[row["unit"]].dimension not in ("ratio", "pct_change"):
        return value, reason
    base = _with_baseline(row)
    try:
        base_frame = predict(params=params, **figure_config(base))
    except (ValueError, KeyError) as exc:
        return math.nan, f"baseline configuration cannot be built: {exc}"
    base_value, reason = _value(base_frame, base)
    if reason:
        return math.nan, reason
    ratio = value / base_value
    return (ratio if row["unit"] == "ratio" else 100.0 * (ratio - 1.0)), ""


def predict_figures(frame: pd.DataFrame, params: ParameterSet | str | None = None) -> pd.DataFrame:
    """Predictions for a table of recorded figures (a ``load_benchmarks`` frame).

    Adds ``predicted`` (same unit as ``value_si``; relative figures as ratio
    or percent change like ``value``) and ``reason`` (empty when predicted).
    """
    params = load_parameters(params)
    out = frame.copy()
    results = [predict_figure(rec, params) for rec in frame.to_dict("records")]
    out["predicted"] = np.array([r[0] for r in results], dtype=float)
    out["reason"] = [r[1] for r in results]
    return out
