"""Compose the sub-models into node and cluster predictions: ``perfmodel.predict``.

One call turns (platform, workload, system, knobs) into a network of stations
per configuration and solves every configuration at once (:mod:`perfmodel.solve`):

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
fixed         latencies nobody queues for: wire, kernel stack, VM I/O path
============  ==============================================================

Every argument may be an array; all broadcast to M configurations, and
nothing loops in Python per configuration.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from perfmodel import cache as _cache
from perfmodel import scaling, storage
from perfmodel.catalog import Platform, default_catalog, load_device, load_platform
from perfmodel.params import ParameterSet, load_parameters
from perfmodel.solve import (
    STATIONS,
    Network,
    burst_visits,
    class_moments,
    deterministic_part,
    gamma_ppf,
    mixture_quantile,
    solve_closed,
    solve_open,
)
from perfmodel.workload import Workload


@dataclass(frozen=True)
class SystemProfile:
    """Structural facts about a system (not fitted).

    ``dispatch``: ``hashed`` (each request goes to one shard's queue) or
    ``pooled`` (worker threads share a queue). ``thread_cap``: worker
    threads the software runs at most. ``data_cache``: reads can be served
    from memory. ``read_before_write``: a write reads its page first
    (B-tree). ``lsm``: memtable flushes and compactions write in bursts.
    ``write_consistency``: replicas a write waits for by default (the
    benchmark tools' default for Cassandra-like stores; every replica for
    primary-copy replication). ``remote``: clients reach it over the
    network (an embedded engine or a raw-device benchmark runs in-process).
    ``page_bytes`` [B]: the smallest I/O the system sends a device (a page,
    block or chunk): a 1 KiB object is read as a whole page.
    """

    dispatch: str
    thread_cap: float
    data_cache: bool
    read_before_write: bool
    lsm: bool
    write_consistency: str = "ONE"
    remote: bool = True
    page_bytes: float = 4096.0


SYSTEMS: dict[str, SystemProfile] = {
    # ScyllaDB: one shard per hardware thread (--smp), shared-nothing (ScyllaDB architecture docs)
    "scylla": SystemProfile("hashed", np.inf, True, False, True),
    # Cassandra: SEDA thread pools sharing queues
    "cassandra": SystemProfile("pooled", np.inf, True, False, True),
    # RocksDB db_bench: N client threads call into the shared engine
    "rocksdb": SystemProfile("pooled", np.inf, True, False, True, remote=False),
    # DM8: WORKER_THREADS at most 64 (seed 002, section 3.2.2); pages of 8 KiB (DM8's
    # default PAGE_SIZE, dminit)
    "dm8": SystemProfile("pooled", 64.0, True, True, False, "ALL", page_bytes=8192.0),
    # Ceph OSD: each PG is served by one OSD shard thread
    "ceph": SystemProfile("hashed", np.inf, False, False, False, "ALL"),
    # fio on a raw block device with direct I/O: every operation is one device I/O, down
    # to a 512 B logical sector
    "fio": SystemProfile("pooled", np.inf, False, False, False, remote=False, page_bytes=512.0),
}

VIRTUALIZATION = ("none", "untuned", "boost")


@dataclass(frozen=True)
class NodeModel:
    """A configuration grid as networks of stations, before solving.

    ``net`` holds the per-configuration stations (:class:`perfmodel.solve.Network`);
    ``context`` the per-configuration arrays the report needs (platform, device,
    burst profile, ...). :func:`build_model` returns one so that the simulator
    runs exactly the system :func:`predict` describes.
    """

    net: Network
    context: dict


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
    "read_latency_mean_ms",
    "read_latency_p50_ms",
    "read_latency_p95_ms",
    "read_latency_p99_ms",
    "write_latency_mean_ms",
    "write_latency_p50_ms",
    "write_latency_p95_ms",
    "write_latency_p99_ms",
    "util_network",
    "util_cpu",
    "util_device",
    "util_wal",
    "util_log",
    "util_client_link",
    "device_queue_depth",
    "device_read_iops",
    "device_write_iops",
    "device_read_bytes_s",
    "device_write_bytes_s",
    "burst_duty",
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


def _as_platforms(platform) -> tuple[list[Platform], np.ndarray | int]:
    """Distinct platforms and, per configuration, the index of its platform."""
    if not isinstance(platform, list | tuple | np.ndarray):
        return [platform if isinstance(platform, Platform) else load_platform(platform)], 0
    keys = [p.id if isinstance(p, Platform) else str(p) for p in platform]
    codes, uniques = pd.factorize(np.asarray(keys, dtype=object))
    first = {k: p for k, p in zip(keys, platform, strict=True)}
    loaded = [first[k] if isinstance(first[k], Platform) else load_platform(first[k]) for k in uniques]
    return loaded, codes


def _broadcast(values: dict[str, object]) -> tuple[int, dict[str, np.ndarray]]:
    arrays = {k: np.asarray(v) for k, v in values.items()}
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {a.shape}" for k, a in arrays.items() if a.ndim)
        raise ValueError(f"arguments do not broadcast: {shapes}") from None
    size = int(np.prod(shape)) if shape else 1
    return size, {k: np.broadcast_to(a, shape).ravel() for k, a in arrays.items()}


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
        ``calibrated`` set), or a :class:`~perfmodel.calibration.CalibrationResult`.
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
        out of sample (:mod:`perfmodel.discrepancy`), so that a 90% band holds
        about 90% of recorded figures it has not seen (docs/validation.md).

    Returns
    -------
    DataFrame with one row per configuration and the columns of
    :data:`OUTPUT_COLUMNS`: ``throughput_ops_s`` [1/s]; latencies in ms
    (overall and per read / write); ``util_*`` [-]; ``bottleneck`` (the most
    utilised station); ``saturated`` (open loop at or past capacity: latencies
    are ``inf``). For TPC-C, ``tpmc`` (NewOrder per minute) is added.
    """
    interval = knobs.pop("interval", None)
    # the fit whose uncertainty the band draws from: the set file's own (None: the shipped set's);
    # a ParameterSet object carries none, so its band is the model discrepancy alone
    fit = params if isinstance(params, str | Path) else False if isinstance(params, ParameterSet) else None
    if type(params).__name__ == "CalibrationResult":  # a fit: predict with its parameters
        fit, params = params, params.params_
    model = build_model(platform, workload, nodes=nodes, params=params, system=system, **knobs)
    frame = _report(model, _solve(model))
    if interval is not None:
        frame = _with_band(frame, platform, workload, nodes, system, knobs, fit, float(interval))
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
)


def _with_band(frame, platform, workload, nodes, system, knobs, fit, interval: float, draws: int = 40):
    """Add lower / upper bands: parameter uncertainty (draws from the fit) plus model discrepancy.

    The parameter band is the order statistics of predictions with parameter
    sets drawn from the fit's covariance; each side is then widened by the
    model discrepancy of the column's metric group (:mod:`perfmodel.discrepancy`:
    ``m_q sqrt(s_p^2 + s_g^2)`` with ``s_p`` read off the draws' side
    ``h / z_q``). The discrepancy is the parameter set file's own, else the
    shipped calibrated set's (a refit does not remove the model's missing
    mechanisms).
    """
    from perfmodel import discrepancy as disc
    from perfmodel.calibration import parameter_draws

    if not 0 < interval < 1:
        raise ValueError(f"interval: must lie in (0, 1), got {interval}")
    try:
        sets = [] if fit is False else parameter_draws(fit, draws=draws)
    except ValueError:  # a set file without a recorded fit: no parameter uncertainty
        sets = []
    stored = disc.load_discrepancy(fit if isinstance(fit, str | Path) else None) or {}
    center = frame[list(BAND_COLUMNS)].to_numpy(float)
    if sets:
        samples = np.stack(
            [
                build_and_report(platform, workload, nodes, draw, system, knobs)[list(BAND_COLUMNS)].to_numpy(
                    float
                )
                for draw in sets
            ]
        )
        # order statistics, not interpolation: a draw that saturates (inf) makes the upper bound inf;
        # a column with no value in any draw (write latencies of a read-only workload) stays NaN
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)
            lower = np.nanquantile(samples, (1 - interval) / 2, axis=0, method="lower")
            upper = np.nanquantile(samples, (1 + interval) / 2, axis=0, method="higher")
    else:
        lower, upper = center.copy(), center.copy()
    z = disc.z_score(interval)
    for j, col in enumerate(BAND_COLUMNS):
        entry = stored.get(disc.COLUMN_GROUPS[col], {"sigma_log": 0.0, "scores": []})
        lo, hi = disc.widen_band(
            center[:, j], lower[:, j], upper[:, j], entry["sigma_log"],
            disc.band_multiplier(entry["scores"], interval), z,
        )  # fmt: skip
        frame[f"{col}_lower"] = lo
        frame[f"{col}_upper"] = hi
    return frame


def build_and_report(platform, workload, nodes, params, system, knobs) -> pd.DataFrame:
    """``predict`` without bands (one parameter set)."""
    model = build_model(platform, workload, nodes=nodes, params=params, system=system, **knobs)
    return _report(model, _solve(model))


def build_model(
    platform, workload: Workload, *, nodes=1, params: ParameterSet | str | None = None, system, **knobs
) -> NodeModel:
    """The stations of every configuration, unsolved (same arguments as :func:`predict`).

    The discrete-event simulator runs these networks, so it simulates exactly
    the system :func:`predict` solves analytically.
    """
    params = load_parameters(params)
    unknown = set(knobs) - KNOBS
    if unknown:
        raise ValueError(f"{sorted(unknown)[0]}: unknown knob; valid knobs: {', '.join(sorted(KNOBS))}")
    platforms, platform_index = _as_platforms(platform)
    size, cfg = _broadcast(
        {
            "platform_index": platform_index,
            "system": system,
            "nodes": nodes,
            "read_fraction": workload.read_fraction,
            "object_bytes": workload.object_bytes,
            "io_bytes": workload.io_bytes,
            "dataset_bytes": workload.dataset_bytes,
            "zipf_s": workload.zipf_s,
            "think_time_s": workload.think_time_s,
            "population": workload.concurrency if workload.closed else 1.0,
            "arrival_rate": workload.arrival_rate if not workload.closed else np.nan,
            "replication_factor": workload.replication_factor,
            "acks": workload.acks,
            **{k: v for k, v in knobs.items()},
        }
    )
    return _build(platforms, workload, cfg, size, params)


KNOBS = {
    "cores",
    "threads_per_core",
    "device",
    "devices",
    "wal_device",
    "cache_bytes",
    "cache_state",
    "numa_binding",
    "osds_per_device",
    "cores_per_device",
    "log_files",
    "virtualization",
    "client_link_gbps",
    "thread_cap",
}


def _categorical(values) -> pd.Categorical:
    """A string column as a Categorical (fast to build, small, sorts by name)."""
    codes, names = pd.factorize(values)
    return pd.Categorical.from_codes(codes, [str(n) for n in names])


def _take(cfg, key, default):
    return cfg[key] if key in cfg else np.full(len(next(iter(cfg.values()))), default)


def _platform_arrays(platforms: list[Platform], index: np.ndarray) -> dict[str, np.ndarray]:
    def col(attr, fn=None):
        vals = np.array([fn(p) if fn else getattr(p, attr) for p in platforms], dtype=object)
        return vals[index]

    catalog = default_catalog()
    return {
        "id": col("id"),
        "arch": col("arch"),
        "cores": col("cores").astype(float),
        "threads_per_core": col("threads_per_core").astype(float),
        "sockets": col("sockets").astype(float),
        "numa_nodes": col("numa_nodes").astype(float),
        "base_hz": col("base_hz").astype(float),
        "ram_bytes": col("ram_bytes").astype(float),
        "net_bw": col("", lambda p: catalog.network(p.network).bandwidth_bytes_s).astype(float),
        "net_latency": col("", lambda p: catalog.network(p.network).latency_s).astype(float),
        "device": col("", lambda p: _data_slot(p)[0]),
        "devices": col("", lambda p: _data_slot(p)[1]).astype(float),
        "wal_device": col("", _wal_slot),
        "smt_modes": col("smt_modes"),
    }


def _data_slot(p: Platform) -> tuple[str, int]:
    """The platform's data devices: the largest slot that is not a small WAL device."""
    slots = sorted(p.storage, key=lambda s: -s.count * load_device(s.device).capacity_bytes)
    return slots[0].device, slots[0].count


def _wal_slot(p: Platform) -> str:
    data = _data_slot(p)[0]
    others = [s.device for s in p.storage if s.device != data]
    return others[0] if others else ""


def _device_arrays(ids: np.ndarray) -> dict[str, np.ndarray]:
    """Per-configuration device parameters (looked up once per distinct device)."""
    inv, uniq = pd.factorize(np.asarray(ids, dtype=object))
    rows = []
    for name in uniq:
        if name == "":
            rows.append((np.nan,) * 9)
            continue
        d = load_device(name)
        p_eff = storage.effective_parallelism(d.internal_parallelism, d.hardware_queues, d.queue_depth_limit)
        rows.append(
            (
                d.internal_parallelism,
                float(p_eff),
                d.read_iops_4k,
                d.write_iops_4k,
                d.seq_read_bytes_s,
                d.seq_write_bytes_s,
                d.write_latency_s,
                float(d.hardware_queues),
                1.0 if d.interface == "sata" else 0.0,
            )
        )
    table = np.array(rows, dtype=float).reshape(len(uniq), 9)[inv]
    keys = (
        "parallelism",
        "p_eff",
        "read_iops",
        "write_iops",
        "seq_read",
        "seq_write",
        "write_latency",
        "queues",
        "single_queue",
    )
    return dict(zip(keys, table.T, strict=True))


def _build(platforms, workload, cfg, size, params: ParameterSet) -> NodeModel:
    """The station network of every configuration, and what is needed to report on it."""
    plat = _platform_arrays(platforms, cfg["platform_index"].astype(int))
    sys_codes, sys_names = pd.factorize(cfg["system"])
    bad = sorted(set(map(str, sys_names)) - set(SYSTEMS))
    if bad:
        raise ValueError(f"system: unknown system {bad[0]!r}; valid: {', '.join(SYSTEMS)}")
    system = np.asarray(sys_names, dtype=object)[sys_codes]

    def per_system(base: str) -> np.ndarray:
        """Parameter ``base[system]`` for every configuration (one lookup per system)."""
        return np.array([params[f"{base}[{name}]"] for name in sys_names])[sys_codes]

    prof = {
        k: np.array([getattr(SYSTEMS[s], k) for s in sys_names])[sys_codes]
        for k in ("dispatch", "thread_cap", "data_cache", "read_before_write", "lsm", "remote", "page_bytes")
    }
    nodes = cfg["nodes"].astype(float)
    if (nodes < 1).any():
        raise ValueError("nodes: must be >= 1")
    rf = cfg["replication_factor"].astype(float)
    if (rf > nodes).any():
        i = int(np.argmax(rf > nodes))
        raise ValueError(f"replication_factor: {rf[i]:g} exceeds nodes ({nodes[i]:g})")
    f = cfg["read_fraction"].astype(float)
    io_bytes = cfg["io_bytes"].astype(float)
    obj = cfg["object_bytes"].astype(float)
    # what reaches the device: whole pages (ScyllaDB / Cassandra 4 KiB reads, seed 003's trace;
    # RocksDB block_size 4 KiB; BlueStore min_alloc_size 4 KiB; DM8 8 KiB pages)
    dev_io_bytes = np.maximum(io_bytes, prof["page_bytes"].astype(float))

    # ---- CPU --------------------------------------------------------------------------
    tpc = _take(cfg, "threads_per_core", None)
    tpc = np.where(pd.isna(tpc), plat["threads_per_core"], tpc).astype(float)
    # each distinct (platform, SMT mode) pair is checked once
    keys, first, inverse = np.unique(
        cfg["platform_index"].astype(int) * 1024 + tpc.astype(int), return_index=True, return_inverse=True
    )
    ok = np.array([tpc[i] in plat["smt_modes"][i] for i in first])[inverse.ravel()]
    if not ok.all():
        i = int(np.argmin(ok))
        raise ValueError(
            f"threads_per_core: {tpc[i]:g} is not an SMT mode of {plat['id'][i]} "
            f"(valid: {plat['smt_modes'][i]})"
        )
    cores = _take(cfg, "cores", None)
    cores = np.where(pd.isna(cores), plat["cores"], cores).astype(float)
    if (cores < 1).any() or (cores > plat["cores"]).any():
        i = int(np.argmax((cores < 1) | (cores > plat["cores"])))
        raise ValueError(f"cores: {cores[i]:g} is outside 1..{plat['cores'][i]:g} for {plat['id'][i]}")
    dev_ids = _take(cfg, "device", None)
    dev_ids = np.where(pd.isna(dev_ids), plat["device"], dev_ids)
    devices = _take(cfg, "devices", None)
    devices = np.where(pd.isna(devices), plat["devices"], devices).astype(float)
    wal_ids = _take(cfg, "wal_device", None)
    wal_ids = np.where(pd.isna(wal_ids), plat["wal_device"], wal_ids)
    osds = _take(cfg, "osds_per_device", 2.0).astype(float)
    is_ceph = system == "ceph"
    cores_per_device = _take(cfg, "cores_per_device", np.nan).astype(float)
    cores = np.where(np.isfinite(cores_per_device), np.minimum(cores, cores_per_device * devices), cores)
    idle = np.where(is_ceph, params["osd_idle_cores[ceph]"] * osds * devices, 0.0)
    cores_avail = np.maximum(cores - idle, 0.05)  # cores left for requests [count]
    cap = _take(cfg, "thread_cap", np.nan).astype(float)
    cap = np.where(np.isfinite(cap), cap, prof["thread_cap"].astype(float))
    threads = scaling.usable_threads(np.maximum(cores_avail, 1.0), tpc, cap)
    threads = np.maximum(np.floor(threads), 1.0)
    bound = _take(cfg, "numa_binding", False).astype(bool)
    cores_per_node = plat["cores"] / plat["numa_nodes"]
    spanned = scaling.numa_nodes_spanned(np.ceil(threads / tpc), cores_per_node, bound, plat["numa_nodes"])
    slowdown = scaling.numa_slowdown(
        spanned,
        np.maximum(plat["numa_nodes"] / plat["sockets"], 1.0),
        params["numa_same_socket_penalty"],
        params["numa_cross_socket_penalty"],
    )
    virt = _take(cfg, "virtualization", "none")
    bad = sorted(set(map(str, pd.unique(virt))) - set(VIRTUALIZATION))
    if bad:
        raise ValueError(f"virtualization: must be one of {', '.join(VIRTUALIZATION)}, got {bad[0]!r}")
    virt_eff = np.select(
        [virt == "untuned", virt == "boost"],
        [params["virt_cpu_efficiency[untuned]"], params["virt_cpu_efficiency[boost]"]],
        1.0,
    )
    alpha = params.lookup("smt_alpha", plat["arch"])
    hz = plat["base_hz"] * params.lookup("ghz_factor", plat["arch"])
    # USL terms are optional parameters (0 when the set has none)
    sigma = np.array([params.values.get(f"usl_sigma[{s}]", 0.0) for s in sys_names])[sys_codes]
    kappa = np.array([params.values.get(f"usl_kappa[{s}]", 0.0) for s in sys_names])[sys_codes]
    thread_hz = (
        hz
        * scaling.smt_yield(tpc, alpha)
        / tpc
        * scaling.usl_efficiency(threads, sigma, kappa)
        / slowdown
        * virt_eff
        * np.minimum(cores_avail, 1.0)  # a node whose OSDs' idle load leaves under one core
    )

    # ---- cache -----------------------------------------------------------------------
    dataset = cfg["dataset_bytes"].astype(float)
    share = per_system("cache_share_of_ram")
    cache_bytes = _take(cfg, "cache_bytes", np.nan).astype(float)
    osds_node = osds * devices
    cache_bytes = np.where(
        np.isfinite(cache_bytes), cache_bytes, share * plat["ram_bytes"] / np.where(is_ceph, osds_node, 1.0)
    )
    per_node_data = dataset * rf / nodes
    dist = workload.key_distribution
    zipf_s = cfg["zipf_s"].astype(float)

    def hit(cache_b, data_b, item_b):
        if dist == "zipf":
            return _cache.hit_ratio(cache_b, data_b, item_b, distribution="zipf", zipf_s=zipf_s)
        return _cache.hit_ratio(cache_b, data_b, item_b)

    data_hit = np.where(prof["data_cache"], hit(cache_bytes, per_node_data, obj), 0.0)
    cold = _take(cfg, "cache_state", "warm")
    states = set(map(str, pd.unique(cold)))
    if not states <= {"warm", "cold"}:
        raise ValueError(
            f"cache_state: must be 'warm' or 'cold', got {sorted(states - {'warm', 'cold'})[0]!r}"
        )
    data_hit = np.where(cold == "cold", 0.0, data_hit)
    miss = 1.0 - data_hit
    # Ceph: the onode (metadata) cache per OSD decides whether a request first reads metadata
    obj_size = params["rados_object_bytes[ceph]"]
    onode_b = params["onode_bytes[ceph]"]
    objects_per_osd = per_node_data / np.maximum(osds_node, 1.0) / obj_size
    onode_hit = np.where(is_ceph, hit(cache_bytes, objects_per_osd * onode_b, onode_b), 1.0)
    onode_reads = (1.0 - onode_hit) * params["onode_reads_per_miss[ceph]"]

    # ---- devices ---------------------------------------------------------------------
    dev = _device_arrays(dev_ids)
    wal = _device_arrays(wal_ids)
    has_wal = wal_ids != ""
    occ_r = storage.io_occupancy(dev_io_bytes, dev["parallelism"], dev["read_iops"], dev["seq_read"])
    occ_w = storage.io_occupancy(dev_io_bytes, dev["parallelism"], dev["write_iops"], dev["seq_write"])
    wal_par = np.where(has_wal, wal["parallelism"], 1.0)
    occ_wal = np.where(
        has_wal,
        storage.io_occupancy(
            4096.0,
            wal_par,
            np.where(has_wal, wal["write_iops"], 1.0),
            np.where(has_wal, wal["seq_write"], 1.0),
        ),
        0.0,
    )
    occ_wal_r = np.where(
        has_wal,
        storage.io_occupancy(
            4096.0, wal_par, np.where(has_wal, wal["read_iops"], 1.0), np.where(has_wal, wal["seq_read"], 1.0)
        ),
        0.0,
    )
    occ_meta_r = storage.io_occupancy(4096.0, dev["parallelism"], dev["read_iops"], dev["seq_read"])
    rpm = per_system("device_reads_per_miss")
    sync = per_system("sync_writes")
    reads_per_read = miss * rpm
    reads_per_write = np.where(prof["read_before_write"], miss * rpm, 0.0)
    # Ceph: one of the sync writes (WAL / deferred) goes to the WAL device when there is one
    sync_wal = np.where(has_wal & (sync > 0), 1.0, 0.0)
    sync_data = sync - sync_wal
    dm8 = system == "dm8"
    sync_data = np.where(dm8, 0.0, sync_data)  # DM8's sync write is the redo log (log station)
    host_cost = np.where(dev["single_queue"] > 0, params["blk_sq_cost_s"], 0.0)

    # background writes (memtable flushes, compactions): bytes per user write, drained as
    # 512 KiB I/Os; charged to the write that causes them so that the device's capacity
    # bounds the write rate (an LSM store stalls writes when compaction falls behind)
    bg_factor = per_system("background_write_factor")
    occ_bg = storage.io_occupancy(
        storage.FLUSH_IO_BYTES, dev["parallelism"], dev["write_iops"], dev["seq_write"]
    )
    bg_bytes_per_write = obj * bg_factor
    d_dev_bg = bg_bytes_per_write / storage.FLUSH_IO_BYTES * occ_bg
    d_dev_r = reads_per_read * occ_r + np.where(is_ceph & ~has_wal, onode_reads * occ_meta_r, 0.0)
    d_dev_w = reads_per_write * occ_r + sync_data * occ_w  # what a write waits for at the device
    d_wal_r = np.where(is_ceph & has_wal, onode_reads * occ_wal_r, 0.0)
    d_wal_w = sync_wal * occ_wal

    bg_bytes = (1 - f) * bg_bytes_per_write * rf / nodes  # background bytes per request, per node

    # ---- fixed latencies, network, log -------------------------------------------------
    virt_io = np.select(
        [virt == "untuned", virt == "boost"],
        [params["virt_io_overhead_s[untuned]"], params["virt_io_overhead_s[boost]"]],
        0.0,
    )
    remote = prof["remote"].astype(bool)
    wire = np.where(remote, 2 * plat["net_latency"] + params["net_stack_s"], 0.0)
    fixed_r = wire + virt_io * reads_per_read
    # the VM I/O path per synchronous I/O; DM8's redo write pays it in the log station
    fixed_w = wire + virt_io * (reads_per_write + sync_data + sync_wal)
    net_r = np.where(remote, (io_bytes + 128.0) / plat["net_bw"], 0.0)
    net_w = net_r
    log_files = _take(cfg, "log_files", 2.0).astype(float)
    redo = np.where(dm8, params["redo_bytes_per_tx[dm8]"], 0.0)
    d_log_w = np.where(dm8, dev["write_latency"] + redo / dev["seq_write"] + virt_io, 0.0)
    client_gbps = _take(cfg, "client_link_gbps", np.nan).astype(float)
    has_link = np.isfinite(client_gbps)
    link_bw = np.where(has_link, client_gbps * 1e9 / 8, 1.0)
    d_link = np.where(has_link, (io_bytes + 128.0) / link_bw, 0.0)

    # CPU demand per request
    cyc_r = per_system("cpu_cycles_read")
    cyc_m = per_system("cpu_cycles_miss")
    cyc_w = per_system("cpu_cycles_write")
    cyc_onode = params["cpu_cycles_onode_miss[ceph]"] * onode_reads * is_ceph
    d_cpu_r = (cyc_r + reads_per_read * cyc_m + cyc_onode) / thread_hz + reads_per_read * host_cost
    d_cpu_w = (cyc_w + reads_per_write * cyc_m + cyc_onode) / thread_hz + (
        sync_data + reads_per_write
    ) * host_cost

    hashed = prof["dispatch"] == "hashed"
    k = len(STATIONS)
    d_read = np.zeros((size, k))
    d_write = np.zeros((size, k))
    servers = np.ones((size, k))
    mult = np.ones((size, k))
    scv = np.ones((size, k))
    ix = {name: i for i, name in enumerate(STATIONS)}
    d_read[:, ix["network"]], d_write[:, ix["network"]] = net_r, net_w
    mult[:, ix["network"]] = nodes
    scv[:, ix["network"]] = 0.0
    d_read[:, ix["cpu"]], d_write[:, ix["cpu"]] = d_cpu_r, d_cpu_w
    servers[:, ix["cpu"]] = np.where(hashed, 1.0, threads)
    mult[:, ix["cpu"]] = np.where(hashed, threads, 1.0) * nodes
    d_read[:, ix["device"]], d_write[:, ix["device"]] = d_dev_r, d_dev_w
    servers[:, ix["device"]] = np.floor(dev["p_eff"])
    mult[:, ix["device"]] = devices * nodes
    d_read[:, ix["wal"]], d_write[:, ix["wal"]] = d_wal_r, d_wal_w
    servers[:, ix["wal"]] = np.where(has_wal, np.floor(wal_par), 1.0)
    mult[:, ix["wal"]] = nodes
    d_write[:, ix["log"]] = d_log_w
    servers[:, ix["log"]] = log_files
    mult[:, ix["log"]] = nodes
    d_read[:, ix["client_link"]], d_write[:, ix["client_link"]] = d_link, d_link
    scv[:, ix["client_link"]] = 0.0
    d_read[:, ix["fixed"]], d_write[:, ix["fixed"]] = fixed_r, fixed_w
    servers[:, ix["fixed"]] = np.inf
    scv[:, ix["fixed"]] = 0.0

    # Flush / compaction bursts (LSM stores): a device spends a fraction ``duty`` of its
    # time draining bursts at its sequential write bandwidth; a read reaching the device
    # then waits behind the backlog B = QD x 512 KiB / bandwidth (seed 003: QD 200-800).
    burst_qd = np.minimum(per_system("memtable_bytes") / storage.FLUSH_IO_BYTES, params["block_queue_limit"])
    lsm = prof["lsm"].astype(bool)
    duty_per_op = np.where(lsm, bg_bytes / (dev["seq_write"] * devices), 0.0)
    backlog = storage.burst_profile(0.0, dev["seq_write"], burst_qd)[2]  # QD x 512 KiB / bandwidth [s]
    reach = np.minimum(reads_per_read, 1.0)  # share of reads that reach the device
    # memtable back-pressure: a flush holds burst_qd x 512 KiB, written by W = that /
    # bg_bytes_per_write replica writes; a stall catches each client's next write once, so a
    # share N x copies / (nodes x W) of writes stall (solve.solve_closed)
    writes_per_flush = burst_qd * storage.FLUSH_IO_BYTES / np.maximum(bg_bytes_per_write, 1e-300)
    stall_share = np.where(lsm & (bg_bytes_per_write > 0), rf / (nodes * writes_per_flush), 0.0)
    # background writes occupy the device (capacity, queues) but no client waits for them
    load_write = np.zeros((size, k))
    load_write[:, ix["device"]] = d_dev_bg
    # visits per request: the device only on a cache miss, the WAL device for its own I/O
    v_read = (d_read > 0).astype(float)
    v_write = (d_write > 0).astype(float)
    v_read[:, ix["device"]] = reads_per_read + np.where(is_ceph & ~has_wal, onode_reads, 0.0)
    v_write[:, ix["device"]] = reads_per_write + sync_data
    v_read[:, ix["wal"]] = np.where(is_ceph & has_wal, onode_reads, 0.0)
    v_write[:, ix["wal"]] = sync_wal
    net = Network(
        d_read,
        d_write,
        servers,
        mult,
        scv,
        f,
        rf,
        cfg["acks"].astype(float),
        burst_duty_per_op=duty_per_op,
        burst_backlog=backlog,
        burst_reach=reach,
        burst_devices=devices * nodes,
        stall_share=stall_share,
        load_write=load_write,
        v_read=v_read,
        v_write=v_write,
    )
    return NodeModel(net, {name: value for name, value in locals().items() if name in _CONTEXT})


#: what the reporting step needs from the build step
_CONTEXT = frozenset(
    [
        "bg_bytes_per_write",
        "burst_qd",
        "d_dev_bg",
        "occ_bg",
        "prof",
        "system",
        "backlog",
        "bg_bytes",
        "cfg",
        "cores",
        "data_hit",
        "dev_ids",
        "devices",
        "dm8",
        "duty_per_op",
        "f",
        "has_wal",
        "dev_io_bytes",
        "is_ceph",
        "ix",
        "nodes",
        "onode_reads",
        "params",
        "plat",
        "reach",
        "reads_per_read",
        "reads_per_write",
        "rf",
        "size",
        "sync_data",
        "sys_codes",
        "sys_names",
        "threads",
        "tpc",
        "workload",
    ]
)


def _solve(model: NodeModel):
    """Solve every configuration's network: closed loop (AMVA) or open arrivals."""
    cfg, net = model.context["cfg"], model.net
    if model.context["workload"].closed:
        return solve_closed(net, cfg["population"].astype(float), cfg["think_time_s"].astype(float))
    return solve_open(net, cfg["arrival_rate"].astype(float))


def _report(model: NodeModel, sol) -> pd.DataFrame:
    """Throughput, latency percentiles, utilisations and bottleneck from a solution."""
    net = model.net
    ctx = model.context
    backlog = ctx["backlog"]
    bg_bytes = ctx["bg_bytes"]
    cfg = ctx["cfg"]
    cores = ctx["cores"]
    data_hit = ctx["data_hit"]
    dev_ids = ctx["dev_ids"]
    devices = ctx["devices"]
    dm8 = ctx["dm8"]
    duty_per_op = ctx["duty_per_op"]
    f = ctx["f"]
    has_wal = ctx["has_wal"]
    dev_io_bytes = ctx["dev_io_bytes"]
    is_ceph = ctx["is_ceph"]
    ix = ctx["ix"]
    nodes = ctx["nodes"]
    onode_reads = ctx["onode_reads"]
    params = ctx["params"]
    plat = ctx["plat"]
    reach = ctx["reach"]
    reads_per_read = ctx["reads_per_read"]
    reads_per_write = ctx["reads_per_write"]
    rf = ctx["rf"]
    size = ctx["size"]
    sync_data = ctx["sync_data"]
    sys_codes = ctx["sys_codes"]
    sys_names = ctx["sys_names"]
    threads = ctx["threads"]
    tpc = ctx["tpc"]
    workload = ctx["workload"]
    x = sol.throughput

    # ---- tails ---------------------------------------------------------------------------
    # Each class's latency = its fixed part (wire, transfers, VM I/O path) + a gamma with the
    # mean and variance of its queueing and service times; a read that meets a flush burst
    # also waits behind a uniform share of the burst backlog B: U(0, B).
    mean_r, var_r, mean_w, var_w = class_moments(net, sol)
    # writes held by memtable back-pressure (solve_closed): a share p_stall of them waits the
    # rest of a flush, stall / p_stall on average -- taken as that constant (the simulator's
    # stalled writes wait 12-25 ms with a spread of a quarter of that)
    stall = np.zeros(size) if sol.write_stall is None else sol.write_stall
    p_stall = np.ones(size) if sol.write_stall_probability is None else sol.write_stall_probability
    stall_wait = np.where(stall > 0, stall / p_stall, 0.0)
    mean_w_total = mean_w + stall
    shift_r, shift_w = deterministic_part(net, sol)
    duty = np.minimum(x * duty_per_op, 1.0)
    # closed loop: fewer reads meet a burst than its time share, each waits longer
    # (perfmodel.storage.closed_loop_burst); open arrivals: y = 0, U(0, B)
    y = burst_visits(net, x, cfg["population"].astype(float) if workload.closed else None)
    share, w_mean, w_var, _ = storage.closed_loop_burst(y)
    p_burst = duty * reach * share
    burst_mean = p_burst * backlog * w_mean
    mean_r_total = mean_r + burst_mean
    has_r, has_w = f > 0, f < 1

    def spread(mean, var, shift):  # the variable part as a gamma; a floor keeps it proper
        part = np.maximum(mean - shift, 1e-12)
        return part, np.maximum(var, (1e-9 * part) ** 2)

    vr_mean, vr_var = spread(mean_r, var_r, shift_r)
    vw_mean, vw_var = spread(mean_w, var_w, shift_w)
    # reads that meet a burst: the base time plus their wait behind the backlog (open loop
    # U(0, B): mean B / 2, variance B^2 / 12), matched to a gamma by mean and variance; its
    # p75 is within ~15% of the exact sum's
    read_parts = [
        (1 - p_burst, vr_mean, vr_var, shift_r),
        (p_burst, vr_mean + backlog * w_mean, vr_var + backlog**2 * w_var, shift_r),
    ]
    p_stalled = np.where(stall > 0, p_stall, 0.0)
    write_parts = [
        (1 - p_stalled, vw_mean, vw_var, shift_w),
        (p_stalled, vw_mean + stall_wait, vw_var, shift_w),
    ]
    finite = np.isfinite(mean_r) & np.isfinite(mean_w)
    need_r = has_r & (p_burst > 0) & finite
    need_w = has_w & (stall > 0) & finite
    both = has_r & has_w & finite

    def subset(parts, mask):
        return [
            tuple(np.broadcast_to(np.asarray(a, dtype=float), (size,))[mask] for a in part) for part in parts
        ]

    read_sub = subset(read_parts, need_r)
    write_sub = subset(write_parts, need_w)
    mix_sub = subset(
        [(f * w, m, v, sh) for w, m, v, sh in read_parts]
        + [((1 - f) * w, m, v, sh) for w, m, v, sh in write_parts],
        both,
    )
    quant = {}
    for q, name in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99")):
        r_q = shift_r + gamma_ppf(q, vr_mean, vr_var)
        if need_r.any():
            r_q[need_r] = mixture_quantile(q, read_sub)
        w_q = shift_w + gamma_ppf(q, vw_mean, vw_var)
        if need_w.any():
            w_q[need_w] = mixture_quantile(q, write_sub)
        overall = np.where(has_r, r_q, w_q)
        if both.any():  # the read / write mix, solved exactly; it lies between the classes' own
            lo, hi = np.minimum(r_q, w_q)[both], np.maximum(r_q, w_q)[both]
            overall[both] = mixture_quantile(q, mix_sub, bracket=(lo, hi))
        quant[name] = (
            np.where(np.isfinite(mean_r), r_q, np.inf),
            np.where(np.isfinite(mean_w), w_q, np.inf),
            np.where(finite | ~(has_r & has_w), overall, np.inf),
        )

    def weighted(weight, value):  # weight * value, with 0 * inf = 0 for an absent class
        present = weight > 0
        return np.where(present, weight * np.where(present, value, 0.0), 0.0)

    with np.errstate(invalid="ignore"):
        mean_all = weighted(f, mean_r_total) + weighted(1 - f, mean_w_total)

    sat = sol.saturated
    ms = 1e3
    lat_mean = mean_all

    def out(v, cls_mask=None):
        v = np.where(sat, np.inf, v) * ms
        return np.where(cls_mask, v, np.nan) if cls_mask is not None else v

    util = sol.utilization
    util_cols = {f"util_{s}": util[:, ix[s]] for s in STATIONS if s != "fixed"}
    station_names = np.array([s for s in STATIONS if s != "fixed"])
    bottleneck_codes = np.argmax(np.stack(list(util_cols.values()), axis=1), axis=1)
    # I/O rates seen by one data device [1/s]
    per_dev = x / (devices * nodes)
    read_ios = per_dev * (
        f * (reads_per_read + np.where(is_ceph & ~has_wal, onode_reads, 0.0)) + (1 - f) * rf * reads_per_write
    )
    sync_write_ios = per_dev * (1 - f) * rf * sync_data
    write_ios = sync_write_ios + x * bg_bytes / storage.FLUSH_IO_BYTES / devices
    # outstanding requests per station (Little's law); a class that is absent adds nothing
    dev_q = x[:, None] * (weighted(f[:, None], sol.r_read) + weighted(((1 - f) * rf)[:, None], sol.r_write))
    result = pd.DataFrame(
        {
            "platform": _categorical(plat["id"]),
            "system": pd.Categorical.from_codes(sys_codes, list(sys_names)),
            "nodes": nodes,
            "cores": cores,
            "threads_per_core": tpc,
            "shards": threads,
            "device": _categorical(dev_ids),
            "concurrency": cfg["population"].astype(float) if workload.closed else np.nan,
            "arrival_rate": cfg["arrival_rate"].astype(float),
            "read_fraction": f,
            "cache_hit_ratio": data_hit,
            "throughput_ops_s": x,
            "latency_mean_ms": out(lat_mean),
            "latency_p50_ms": out(quant["p50"][2]),
            "latency_p95_ms": out(quant["p95"][2]),
            "latency_p99_ms": out(quant["p99"][2]),
            "read_latency_mean_ms": out(mean_r_total, has_r),
            "read_latency_p50_ms": out(quant["p50"][0], has_r),
            "read_latency_p95_ms": out(quant["p95"][0], has_r),
            "read_latency_p99_ms": out(quant["p99"][0], has_r),
            "write_latency_mean_ms": out(mean_w_total, has_w),
            "write_latency_p50_ms": out(quant["p50"][1], has_w),
            "write_latency_p95_ms": out(quant["p95"][1], has_w),
            "write_latency_p99_ms": out(quant["p99"][1], has_w),
            **util_cols,
            "device_queue_depth": dev_q[:, ix["device"]] / (devices * nodes),
            "device_read_iops": read_ios,
            "device_write_iops": write_ios,
            "device_read_bytes_s": read_ios * dev_io_bytes,
            "device_write_bytes_s": sync_write_ios * dev_io_bytes + x * bg_bytes / devices,
            "burst_duty": duty,
            "bottleneck": pd.Categorical.from_codes(bottleneck_codes, list(station_names)),
            "saturated": sat,
        }
    )
    if (workload.operation == "tpcc") or dm8.any():
        share = params["neworder_share[tpcc]"]
        result["tpmc"] = np.where(dm8, x * 60.0 * share, np.nan)
    return result
