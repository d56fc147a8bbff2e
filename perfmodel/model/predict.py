"""``perfmodel.predict``: a configuration grid through the model chain to a prediction table.

The model is built, solved and reported by the stages of :mod:`perfmodel.model.chain`
(inputs, cpu, cache, devices, paths, demands, network, solve, tails,
io_rates, report); systems are specs in ``data/systems/``
(:mod:`perfmodel.inputs.systems`) and knobs are defined once in
:mod:`perfmodel.inputs.knobs`. Each configuration is a network of stations:

============  ==============================================================
station       what it is
============  ==============================================================
network       each node's NIC: request / response bytes over the link
cpu           shards (one per hardware thread, SMT-yield rates, USL, NUMA,
              thread cap); *hashed* systems (ScyllaDB, Ceph PGs) route each
              request to one shard's own queue, *pooled* ones share a queue
device        the data devices: ``P`` parallel units each (queue depth),
              SATA capped at NCQ 32; flush / compaction load in the background
wal           a separate WAL / DB device (BlueStore on Optane), if any
log           a redo-log writer with ``log_files`` concurrent flushes (DM8)
client_link   a shared client-side link, when one is given
client        the load generator's cores, when the knob ``client_cores`` gives them
fixed         latencies nobody queues for: wire, kernel stack, VM I/O path
============  ==============================================================

Every argument may be an array; all broadcast to M configurations, and
nothing loops in Python per configuration.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from perfmodel.inputs import knobs as settings
from perfmodel.inputs.params import ParameterSet, load_parameters, parameter_draws, stack_parameters
from perfmodel.inputs.systems import list_systems, load_system
from perfmodel.inputs.workload import Workload
from perfmodel.model import bands, caveats, chain
from perfmodel.model.chain import NodeModel

__all__ = ["BAND_COLUMNS", "KNOBS", "OUTPUT_COLUMNS", "NodeModel", "build_model", "grid", "predict"]

#: the knobs ``predict`` takes (:data:`perfmodel.inputs.knobs.KNOBS`)
KNOBS = frozenset(settings.KNOBS)
VIRTUALIZATION = settings.KNOBS["virtualization"].choices


def system_ids() -> list[str]:
    """The shipped systems (``data/systems/``)."""
    return list_systems()


def write_consistency(system) -> str:
    """The replicas a system's writes wait for by default (its spec's ``write_consistency``)."""
    return load_system(system).write_consistency


OUTPUT_COLUMNS = (
    "platform",
    "system",
    "nodes",
    "cores",
    "threads_per_core",
    "shards",
    "device",
    "concurrency",
    "arrival_rate",
    "read_fraction",
    "cache_hit_ratio",
    "throughput_ops_s",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_p999_ms",
    "read_latency_mean_ms",
    "read_latency_p50_ms",
    "read_latency_p95_ms",
    "read_latency_p99_ms",
    "read_latency_p999_ms",
    "write_latency_mean_ms",
    "write_latency_p50_ms",
    "write_latency_p95_ms",
    "write_latency_p99_ms",
    "write_latency_p999_ms",
    "util_network",
    "util_cpu",
    "util_device",
    "util_wal",
    "util_log",
    "util_client_link",
    "util_client",
    "device_queue_depth",
    "device_read_iops",
    "device_write_iops",
    "device_read_bytes_s",
    "device_write_bytes_s",
    "burst_duty",
    "tail_event_share",
    "bottleneck",
    "saturated",
)


def grid(**axes) -> dict[str, np.ndarray]:
    """Cartesian product of the given axes, as flat arrays of equal length.

    >>> g = grid(threads_per_core=[1, 2, 4, 8], clients=[10, 100])
    >>> len(g["clients"])
    8
    """
    names = list(axes)
    values = [
        np.asarray(v, dtype=object if isinstance(v[0], str) else None).ravel()
        if np.ndim(v)
        else np.asarray([v])
        for v in axes.values()
    ]
    mesh = np.meshgrid(*values, indexing="ij")
    return {name: m.ravel() for name, m in zip(names, mesh, strict=True)}


def predict(
    platform, workload: Workload, *, nodes=1, params: ParameterSet | str | None = None, system, **knobs
) -> pd.DataFrame:
    """Predict throughput, latency percentiles, utilisations and bottleneck.

    Parameters
    ----------
    platform : a catalog id, a YAML path, a :class:`~perfmodel.Platform`, or a
        list / array of them (one per configuration).
    workload : a :class:`~perfmodel.Workload` (closed loop or open arrivals).
    nodes : server nodes in the cluster [count].
    params : a parameter set, its name or path (default: the shipped
        ``calibrated`` set), or a :class:`~perfmodel.evidence.calibration.CalibrationResult`.
    system : ``scylla``, ``cassandra``, ``rocksdb``, ``dm8`` or ``ceph``.
    **knobs : settings the seeds vary, each a scalar or an array:
        ``cores`` (cores used), ``threads_per_core`` (SMT mode), ``device``
        (data device id), ``devices`` (per node), ``wal_device`` (id or
        ``""``), ``cache_bytes`` (per node; per OSD for Ceph), ``cache_state``
        (``warm`` or ``cold``: after a restart every read misses),
        ``numa_binding`` (bool), ``osds_per_device``, ``cores_per_device``,
        ``log_files``, ``virtualization`` (``none``, ``untuned``, ``boost``),
        ``client_link_gbps`` (a shared client-side link); and ``interval``
        (e.g. 0.9): add ``<column>_lower`` / ``<column>_upper`` bands for
        throughput and latency percentiles: parameter uncertainty (parameter
        sets drawn from the given ``CalibrationResult``'s or set file's fit,
        else the shipped set's) widened by the model discrepancy estimated
        out of sample (:mod:`perfmodel.evidence.discrepancy`), and at least as wide as
        the band a lab the model has not seen fell in (:mod:`perfmodel.evidence.lab_bands`,
        calibrated over labs); ``attrs["band_note"]`` says when that band is
        too wide to act on (at 90%, today, for every system).

    ``attrs["caveat"]`` is the system's measured error on labs it was not fitted
    on (:func:`perfmodel.model.caveats.caveat`).

    Returns
    -------
    DataFrame with one row per configuration and the columns of
    :data:`OUTPUT_COLUMNS`: ``throughput_ops_s`` [1/s]; latencies in ms
    (overall and per read / write); ``util_*`` [-]; ``bottleneck`` (the most
    utilised station); ``saturated`` (open loop at or past capacity, or any
    load leaving no throughput or an infinite mean latency: latencies are
    ``inf``). For TPC-C, ``tpmc`` (NewOrder per minute) is added.
    """
    interval = knobs.pop("interval", None)
    # the fit whose uncertainty the band draws from: the set file's own (None: the shipped set's);
    # a ParameterSet object carries none, so its band is the model discrepancy alone
    fit = params if isinstance(params, str | Path) else False if isinstance(params, ParameterSet) else None
    if type(params).__name__ == "CalibrationResult":  # a fit: predict with its parameters
        fit, params = params, params.params_
    params = load_parameters(params)  # once: the chain, the band and the caveat read the same set
    own = params.scope == "lab"  # a lab's own fit: the band and caveat of labs fitted on their own runs
    frame = chain.run(
        chain.inputs(platform, workload, nodes=nodes, params=params, system=system, knobs=knobs)
    )
    if interval is not None:
        frame = _with_band(frame, platform, workload, nodes, system, knobs, fit, float(interval), own_lab=own)
    say = caveats.own_lab_caveat if own else caveats.caveat
    frame.attrs["caveat"] = " | ".join(
        say(s, ("throughput", "mean latency", "tail latency")) for s in pd.unique(frame["system"])
    )
    return frame


#: columns that get ``_lower`` / ``_upper`` bands with ``interval=``
BAND_COLUMNS = (
    "throughput_ops_s",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "read_latency_p99_ms",
    "write_latency_p99_ms",
    *(c for c in OUTPUT_COLUMNS if c.startswith("util_")),
)


def parameter_scope(params) -> str:
    """What a parameter set was fitted to (:attr:`ParameterSet.scope`; "" for the shipped sets)."""
    if params is None or (isinstance(params, str) and "/" not in params and not params.endswith(".json")):
        return ""  # a shipped set by name
    return getattr(load_parameters(params), "scope", "")


def _with_band(frame, platform, workload, nodes, system, knobs, fit, interval: float, draws: int = 40,
               own_lab: bool = False):  # fmt: skip
    """Add lower / upper bands: parameter uncertainty (draws from the fit) plus model discrepancy.

    The parameter band is the order statistics of predictions with parameter
    sets drawn from the fit's covariance; each side is then widened by the
    model discrepancy of the column's metric group (:mod:`perfmodel.evidence.discrepancy`:
    ``m_q sqrt(s_p^2 + s_g^2)`` with ``s_p`` read off the draws' side
    ``h / z_q``). The discrepancy is the parameter set file's own, else the
    shipped calibrated set's (a refit does not remove the model's missing
    mechanisms).
    """

    if not 0 < interval < 1:
        raise ValueError(f"interval: must lie in (0, 1), got {interval}")
    try:
        sets = [] if fit is False else parameter_draws(fit, draws=draws)
    except ValueError:  # a set file without a recorded fit: no parameter uncertainty
        sets = []
    stored = bands.load_discrepancy(fit if isinstance(fit, str | Path) else None) or {}
    center = frame[list(BAND_COLUMNS)].to_numpy(float)
    if sets:  # every draw in one run of the model: the grid stacked draws x configurations
        base = chain.inputs(platform, workload, nodes=nodes, params=sets[0], system=system, knobs=knobs)
        stacked = chain.run(base.repeat(len(sets), stack_parameters(sets, base.size)))
        shape = (len(sets), base.size, len(BAND_COLUMNS))
        samples = stacked[list(BAND_COLUMNS)].to_numpy(float).reshape(shape)
        # order statistics, not interpolation: a draw that saturates (inf) makes the upper bound inf;
        # a column with no value in any draw (write latencies of a read-only workload) stays NaN
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)
            lower = np.nanquantile(samples, (1 - interval) / 2, axis=0, method="lower")
            upper = np.nanquantile(samples, (1 + interval) / 2, axis=0, method="higher")
    else:
        lower, upper = center.copy(), center.copy()
    z = bands.z_score(interval)
    systems = frame["system"].astype(str).to_numpy()
    for j, col in enumerate(BAND_COLUMNS):
        entry = stored.get(bands.COLUMN_GROUPS[col], {"sigma_log": 0.0, "scores": []})
        lo, hi = bands.widen_band(
            center[:, j], lower[:, j], upper[:, j], entry["sigma_log"],
            bands.band_multiplier(entry["scores"], interval), z,
        )  # fmt: skip
        # at least the band a new lab's figures fall in (perfmodel.evidence.lab_bands: calibrated over labs)
        names, which = np.unique(systems, return_inverse=True)
        m = np.array([bands.column_half_width(s, col, interval, own_lab) for s in names])[which]
        with np.errstate(over="ignore", invalid="ignore"):
            c = center[:, j]
            lo = np.where(np.isfinite(c) & (c > 0), np.fmin(lo, c * np.exp(-m)), lo)
            hi = np.where(np.isfinite(c) & (c > 0), np.fmax(hi, c * np.exp(m)), hi)
        frame[f"{col}_lower"] = lo
        frame[f"{col}_upper"] = hi
    frame.attrs["band_note"] = "; ".join(
        n for n in (bands.band_note(s, level=interval, own_lab=own_lab) for s in np.unique(systems)) if n
    )
    return frame


def build_and_report(platform, workload, nodes, params, system, knobs) -> pd.DataFrame:
    """``predict`` without bands (one parameter set)."""
    model = chain.build(platform, workload, nodes=nodes, params=params, system=system, **knobs)
    return chain.report(model, chain.solve(model))


def build_model(
    platform, workload: Workload, *, nodes=1, params: ParameterSet | str | None = None, system, **knobs
) -> NodeModel:
    """The stations of every configuration, unsolved (same arguments as :func:`predict`).

    The discrete-event simulator runs these networks, so it simulates exactly
    the system :func:`predict` solves analytically (:func:`perfmodel.model.chain.build`).
    """
    return chain.build(platform, workload, nodes=nodes, params=params, system=system, **knobs)
