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

from perfmodel.evidence.recorded import parse_baseline
from perfmodel.inputs import knobs as settings
from perfmodel.inputs.catalog import Catalog
from perfmodel.inputs.knobs import COLUMN_KNOBS
from perfmodel.inputs.load_generators import client_time_s
from perfmodel.inputs.params import ParameterSet, load_parameters
from perfmodel.inputs.systems import load_system
from perfmodel.inputs.units import UNITS
from perfmodel.inputs.workload import Workload
from perfmodel.model.chain import placement_error
from perfmodel.model.predict import predict, write_consistency

#: metric (at client level) -> predict column, with the operation class chosen by io_type/operation
_CLIENT_METRICS = {
    "throughput": "throughput_ops_s",
    "iops": "throughput_ops_s",
    "tpmc": "tpmc",
    "latency_mean": "latency_mean_ms",
    "latency_p50": "latency_p50_ms",
    "latency_p95": "latency_p95_ms",
    "latency_p99": "latency_p99_ms",
    "latency_p999": "latency_p999_ms",
}
_DEVICE_METRICS = {"iops", "bandwidth", "queue_depth", "utilization"}


def _blank(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def _true(value: Any) -> bool:
    """A bool column's value: parsed (True) or as the file's text ("true"); blank is false."""
    return value is True or value == "true"


def missing_load(row: Mapping[str, Any]) -> str:
    """Why a client-level figure cannot be predicted for lack of a recorded load ('' if it can).

    Throughput and latency depend on how many requests are outstanding; a figure
    whose source gives no clients (or TPC-C terminals) is not guessed at.
    """
    if row.get("level") != "client" or row.get("metric") not in (
        "throughput",
        "iops",
        "tpmc",
        "bandwidth",
        "latency_mean",
        "latency_p50",
        "latency_p95",
        "latency_p99",
        "latency_p999",
        "time_per_op",
        "thread_time_per_op",
    ):
        return ""
    if _blank(row.get("clients")) and _blank(row.get("terminals")) and _blank(row.get("target_rate")):
        return "the load (clients or terminals) is not recorded"
    return ""


def thread_time_per_op(row: Mapping[str, Any], throughput_ops_s: float) -> float:
    """A closed loop's thread-seconds per operation [s]: ``threads / X``.

    db_bench's ``micros/op`` is the sum of its threads' running seconds over
    the operations done (RocksDB from 6.0, facebook/rocksdb d9c9f3c "db_bench:
    fix micros/op reporting", #4949, 2019-02-05, and LevelDB), which is
    ``threads / X`` when every thread runs the whole time; between 2013-06
    (4985a9f) and 6.0 it printed the wall time per operation, ``1 / X``
    (metric ``time_per_op``). ``threads`` = clients x threads per client.
    """
    threads = 1.0
    for column in ("clients", "threads_per_client"):
        if not _blank(row.get(column)):
            threads *= float(row[column])
    return threads / throughput_ops_s


def _figure_knobs(row: Mapping[str, Any], get) -> dict[str, Any]:
    """The knobs a figure's columns set (blank columns: the model's defaults)."""
    # the columns that set a knob as they are (knobs.Knob.column), numbers scaled to the knob's unit
    knobs: dict[str, Any] = {
        knob.name: str(row[col]) if knob.kind in ("choice", "id") else float(row[col]) * knob.column_scale
        for col, knob in COLUMN_KNOBS.items()
        if not _blank(row.get(col))
    }
    wal = row.get("wal_device_id")
    if wal is not None and not (isinstance(wal, float) and math.isnan(wal)):
        if wal != "" or row.get("_wal_explicit"):
            knobs["wal_device"] = str(wal)
    if get("read_source"):  # disk: a cold cache, every read misses; cache: every read hits
        knobs["cache_state"] = "cold" if get("read_source") == "disk" else "resident"
    if not _blank(row.get("numa_binding")):
        knobs["numa_binding"] = row["numa_binding"] == "bound"
    if get("ec_profile"):  # k+m: an erasure-coded pool (perfmodel.model.chain._erasure_coding)
        k, _, m = str(get("ec_profile")).partition("+")
        knobs["ec_k"], knobs["ec_m"] = float(k), float(m)
    protocol = get("query_protocol")
    if protocol:  # SQL text is parsed and planned per statement (cpu_cycles_parse)
        knobs["prepared"] = 1.0 if protocol == "prepared" else 0.0
    tool_time = client_time_s(str(get("load_generator"))) if get("load_generator") else None
    if tool_time is not None:  # the tool's measured CPU per request
        knobs["client_time"] = tool_time
    return knobs


def figure_config(row: Mapping[str, Any], catalog: Catalog | None = None) -> dict[str, Any]:
    """The ``predict`` arguments for a recorded figure's configuration.

    Returns a dict with ``platform``, ``workload``, ``system``, ``nodes`` and
    the knobs; missing knobs fall back to the platform's defaults. With a
    ``catalog`` (e.g. the shipped one extended by a user's platform YAML) the
    platform is resolved there; storage devices must be catalog devices.
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
    level = get("consistency")
    workload = replace(workload, consistency=str(level) if level else write_consistency(str(system)))
    read_level = get("read_consistency")
    if read_level:  # replicas a read waits for (blank: one)
        workload = replace(workload, read_consistency=str(read_level))
    knobs = _figure_knobs(row, get)
    if operation == "tpcc":  # the statements of the system's TPC-C mix, unless the figure says
        spec = load_system(str(system))
        if spec.tpcc_statements != 1:
            knobs.setdefault("statements_per_op", spec.tpcc_statements)
        if spec.tpcc_statements_scv > 0:  # the transaction mix: 2 to 70 statements
            knobs["statements_scv"] = spec.tpcc_statements_scv
    if _true(row.get("client_colocated")):  # the load generator shares the server's cores
        knobs["client_colocated"] = True
    if _true(row.get("virtualized")):
        knobs["virtualization"] = "boost" if "boost" in str(get("variant", "")) else "untuned"
        # hyper-converged storage keeps its replicas below the VM: the database itself runs
        # once, and the replicated write is part of the VM's I/O path (virt_io_overhead_s)
        workload = replace(workload, replication_factor=1, consistency="ONE", read_consistency="ONE")
    loop = _throttled_loop(row, workload, get)
    platform_id = str(row["platform_id"])
    nodes = float(get("nodes", 1))
    ec = (knobs.get("ec_k", math.nan), knobs.get("ec_m", math.nan))
    why = placement_error(nodes, workload.replication_factor, *ec, knobs.get("copies_per_node", 1.0))
    if why:  # refused here, not in FigurePlan's vectorised call (which would then go row by row)
        raise ValueError(why)
    return {
        "platform": catalog.platform(platform_id) if catalog is not None else platform_id,
        "workload": workload,
        "system": system,
        "nodes": nodes,
        **knobs,
        **({"_loop": loop} if loop is not None else {}),
    }


def _throttled_loop(row: Mapping[str, Any], workload: Workload, get) -> Workload | None:
    """A throttled run's clients running flat out (None: not throttled, its clients not recorded,
    or its latency measured from each request's intended start)."""
    clients = get("terminals") or get("clients")
    if workload.closed or clients is None or get("latency_start") == "intended":
        return None
    threads, depth = int(get("threads_per_client", 1)), int(get("iodepth", 1))
    return replace(
        workload, arrival_rate=None, clients=int(clients), threads_per_client=threads, iodepth=depth
    )


def throttled(at_target: Mapping[str, Any], flat_out: Mapping[str, Any], target: float) -> Mapping[str, Any]:
    """What a throttled run of a fixed number of clients shows [a predict row].

    A load generator throttled to ``target`` [1/s] with ``N`` clients (YCSB ``-target``,
    cassandra-stress ``throttle=``) is a closed loop whose clients wait between requests: it
    runs at ``min(target, X)``, ``X`` the loop's rate flat out (``flat_out``, no wait).

    - If the clients cannot reach the target (``X <= target``, or the open-arrival prediction
      ``at_target`` saturates), the run is the loop flat out.
    - Else it runs at the target, and its latencies are at most both the open-arrival
      prediction at that rate (Poisson arrivals from an endless population wait at least as
      long as ``N`` clients at the same rate: the finite-source queue, Kleinrock 1975, ch. 3)
      and the flat-out loop's (its clients waiting between requests only lighten the load):
      the smaller of the two, a bound where ``N`` is small.

    Latency here is counted from the request's actual start (YCSB's default
    ``measurement.interval=op``); a run counted from the intended start (column
    ``latency_start``) is not passed here and keeps the open prediction.
    """
    if bool(at_target["saturated"]) or float(flat_out["throughput_ops_s"]) <= target:
        return flat_out
    out = dict(at_target)
    for key, value in at_target.items():
        if "latency" in key:
            out[key] = min(float(value), float(flat_out[key]))
    return out


def _predict_row(config: dict[str, Any], params: ParameterSet) -> dict[str, Any]:
    """One configuration's predict row (a throttled run's: :func:`throttled`)."""
    config = dict(config)
    loop = config.pop("_loop", None)
    row = predict(params=params, **config).iloc[0].to_dict()
    if loop is None:
        return row
    flat = predict(params=params, **{**config, "workload": loop}).iloc[0].to_dict()
    return dict(throttled(row, flat, float(config["workload"].arrival_rate)))


def _with_baseline(row: Mapping[str, Any]) -> dict[str, Any]:
    base = dict(row)
    changes = parse_baseline(str(row["baseline"]))
    base.update(changes)
    if "wal_device_id" in changes:
        base["_wal_explicit"] = True
    return base


def _value(out: Mapping[str, Any], row: Mapping[str, Any]) -> tuple[float, str]:
    """The predicted number in the figure's metric and SI unit, or NaN and why.

    ``out`` is one row of :func:`perfmodel.predict`'s output. For a device-level
    maximum or minimum over a run this is the model's run mean, which the
    recorded extreme bounds (:func:`perfmodel.evidence.calibration.bound_sides`).
    """
    metric, level = row["metric"], row["level"]
    io_type = row.get("io_type") or ""
    op = row.get("operation")
    if level == "client":
        if metric in ("latency_mean", "latency_p50", "latency_p95", "latency_p99", "latency_p999"):
            column = _CLIENT_METRICS[metric]
            if op == "read":
                column = "read_" + column
            elif op == "write":
                column = "write_" + column
            return float(out[column]) * UNITS["ms"].to_si, ""
        if metric in ("throughput", "iops", "tpmc"):
            column = "tpmc" if metric == "tpmc" else "throughput_ops_s"
            value = float(out[column])
            return (value * UNITS["tpm"].to_si if metric == "tpmc" else value), ""
        if metric == "bandwidth":
            io = row.get("io_bytes")
            io = row.get("object_bytes") if _blank(io) else io
            return float(out["throughput_ops_s"]) * float(io), ""
        if metric == "time_per_op":
            return 1.0 / float(out["throughput_ops_s"]), ""
        if metric == "thread_time_per_op":
            return thread_time_per_op(row, float(out["throughput_ops_s"])), ""
        return math.nan, f"no model output for client {metric}"
    if level == "device" and metric in _DEVICE_METRICS:
        if metric == "queue_depth":
            return float(out["device_queue_depth"]), ""
        if metric == "utilization":
            return float(out["util_device"]), ""
        if metric == "bandwidth" and io_type not in ("read", "write"):
            return float(out["device_read_bytes_s"] + out["device_write_bytes_s"]), ""
        kind = "iops" if metric == "iops" else "bytes_s"
        return float(out[f"device_{io_type or 'read'}_{kind}"]), ""
    if level == "cpu" and metric == "cpu_utilization":
        return float(out["util_cpu"]), ""
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
    missing = missing_load(row)
    if missing:
        return math.nan, missing
    try:
        out = _predict_row(figure_config(row), params)
    except (ValueError, KeyError) as exc:
        return math.nan, f"configuration cannot be built: {exc}"
    value, reason = _value(out, row)
    if reason or UNITS[row["unit"]].dimension not in ("ratio", "pct_change"):
        return value, reason
    base = _with_baseline(row)
    try:
        base_out = _predict_row(figure_config(base), params)
    except (ValueError, KeyError) as exc:
        return math.nan, f"baseline configuration cannot be built: {exc}"
    base_value, reason = _value(base_out, base)
    if reason:
        return math.nan, reason
    ratio = value / base_value
    return (ratio if row["unit"] == "ratio" else 100.0 * (ratio - 1.0)), ""


_WORKLOAD_ARRAYS = (
    "read_fraction",
    "object_bytes",
    "io_bytes",
    "message_bytes",
    "dataset_bytes",
    "clients",
    "threads_per_client",
    "iodepth",
    "think_time_s",
    "replication_factor",
    "zipf_s",
    "hot_data_fraction",
    "hot_op_fraction",
)


class FigurePlan:
    """Recorded figures compiled once into a vectorised ``predict`` call.

    Building a figure's configuration (catalog lookups, workload checks) does
    not depend on the parameters, so a fit that predicts the same figures
    hundreds of times compiles them once: :meth:`evaluate` is one
    :func:`perfmodel.predict` call plus array arithmetic. ``reasons`` says why
    a figure has no prediction ("" when it has one).
    """

    def __init__(self, frame: pd.DataFrame, catalog: Catalog | None = None):
        self.records = frame.to_dict("records")
        self.catalog = catalog
        configs: list[dict[str, Any]] = []
        self._rows: list[tuple[int | None, int | None]] = []
        self.reasons: list[str] = []
        for rec in self.records:
            index = base = None
            reason = "vendor claim without a measured configuration" if rec.get("role") == "claim" else ""
            reason = reason or missing_load(rec)
            if not reason:
                try:
                    configs.append(figure_config(rec, catalog))
                    index = len(configs) - 1
                    if UNITS[rec["unit"]].dimension in ("ratio", "pct_change"):
                        configs.append(figure_config(_with_baseline(rec), catalog))
                        base = len(configs) - 1
                except (ValueError, KeyError) as exc:
                    which = "baseline configuration" if index is not None else "configuration"
                    reason = f"{which} cannot be built: {exc}"
                    index = base = None  # a figure whose baseline cannot be built has no prediction
            self._rows.append((index, base))
            self.reasons.append(reason)
        # a throttled run whose clients may not keep up: its closed loop too (``throttled``)
        self._loops: dict[int, int] = {}
        for i in range(len(configs)):
            loop = configs[i].pop("_loop", None)
            if loop is not None:
                configs.append({**configs[i], "workload": loop})
                self._loops[i] = len(configs) - 1
        self._configs = configs
        # one vectorised call per kind of load (closed loops, throttled open-loop runs)
        self._groups = []
        for closed in (True, False):
            members = [i for i, c in enumerate(configs) if c["workload"].closed == closed]
            if members:
                self._groups.append((np.array(members), _vector_call([configs[i] for i in members])))
        self._call = self._groups[0][1] if self._groups else None

    def __len__(self) -> int:
        return len(self.records)

    def evaluate(self, params: ParameterSet | str | None = None) -> tuple[np.ndarray, list[str]]:
        """Predicted value of every figure (SI; relative figures as ratio or percent) and why not."""
        params = load_parameters(params)
        if self._call is None:
            return np.full(len(self.records), math.nan), list(self.reasons)
        try:
            table: list = [None] * len(self._configs)
            for members, call in self._groups:
                for i, row in zip(members, predict(params=params, **call).to_dict("records"), strict=True):
                    table[i] = row
            for i, j in self._loops.items():
                table[i] = throttled(table[i], table[j], float(self._configs[i]["workload"].arrival_rate))
        except (ValueError, KeyError):  # one configuration cannot be built: fall back row by row
            results = [predict_figure(rec, params) for rec in self.records]
            return np.array([r[0] for r in results], dtype=float), [r[1] for r in results]
        predicted = np.full(len(self.records), math.nan)
        reasons = list(self.reasons)
        for i, (rec, (index, base)) in enumerate(zip(self.records, self._rows, strict=True)):
            if index is None:
                continue
            value, why = _value(table[index], rec)
            if not why and base is not None:
                base_value, why = _value(table[base], _with_baseline(rec))
                ratio = value / base_value
                value = ratio if rec["unit"] == "ratio" else 100.0 * (ratio - 1.0)
            predicted[i] = math.nan if why else value
            reasons[i] = why
        return predicted, reasons


def _vector_call(configs: list[dict[str, Any]]) -> dict[str, Any]:
    """The keyword arguments of one :func:`perfmodel.predict` call for many configurations."""
    fields = {
        name: np.array([getattr(c["workload"], name) for c in configs], dtype=float)
        for name in _WORKLOAD_ARRAYS
    }
    for name in ("key_distribution", "access_pattern"):
        fields[name] = np.array([getattr(c["workload"], name) for c in configs], dtype=object)
    acks = np.array([float(c["workload"].acks) for c in configs])
    fields["read_consistency"] = np.array([float(c["workload"].read_acks) for c in configs]).astype(int)
    if configs[0]["workload"].closed:
        workload = Workload(operation="mixed", consistency=acks.astype(int), **fields)
    else:  # throttled runs: open arrivals (no clients / threads / iodepth)
        for name in ("clients", "threads_per_client", "iodepth", "think_time_s"):
            fields.pop(name)
        rate = np.array([c["workload"].arrival_rate for c in configs], dtype=float)
        workload = Workload(operation="mixed", consistency=acks.astype(int), arrival_rate=rate, **fields)
    knobs = {}
    for key in sorted(set().union(*configs) & set(settings.KNOBS)):  # the knobs some figure sets
        knob = settings.KNOBS[key]
        # a figure that does not set the knob leaves it unset (the default, and no refusal where
        # the knob does not apply to its system: settings.check_applies)
        unset = False if knob.kind == "bool" else None if knob.kind in ("id", "choice") else math.nan
        dtype = {"count": float, "number": float, "bool": bool}.get(knob.kind, object)
        knobs[key] = np.array([c.get(key, unset) for c in configs], dtype=dtype)
    return {
        "platform": [c["platform"] for c in configs],
        "workload": workload,
        "nodes": np.array([c["nodes"] for c in configs]),
        "system": np.array([c["system"] for c in configs], dtype=object),
        **knobs,
    }


def predict_figures(
    frame: pd.DataFrame, params: ParameterSet | str | None = None, catalog: Catalog | None = None
) -> pd.DataFrame:
    """Predictions for a table of recorded figures (a ``load_benchmarks`` frame).

    Adds ``predicted`` (same unit as ``value_si``; relative figures as ratio
    or percent change like ``value``) and ``reason`` (empty when predicted).
    Every configuration (and every baseline) is evaluated in one vectorised
    ``predict`` call (:class:`FigurePlan`; compile it once to predict the same
    figures with many parameter sets).
    """
    predicted, reasons = FigurePlan(frame, catalog).evaluate(params)
    out = frame.copy()
    out["predicted"] = predicted
    out["reason"] = reasons
    return out
