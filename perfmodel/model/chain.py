"""The model chain: a configuration grid through short named stages to a prediction.

:func:`perfmodel.predict` and the discrete-event simulator run the same chain
(pvlib's ``ModelChain`` is the pattern: one named step per mechanism, each
reading typed inputs and returning a small frozen result)::

    inputs -> cpu -> cache -> devices -> paths -> demands -> network  (build)
           -> solve                                                   (solve)
           -> tails, io_rates -> report                               (report)

============  ==============================================================
stage         what it decides
============  ==============================================================
inputs        the typed grid, as given: workload (:class:`ConfigArrays`), knobs
              (:class:`perfmodel.inputs.knobs.KnobArrays`), platform (catalog) and system
              (:mod:`perfmodel.inputs.systems` spec); derived under names of their own: the
              pool's layout (:class:`Layout`) and the effective think time
cpu           threads, SMT yield, USL, NUMA, virtualisation, idle daemon cores
cache         cache size, data hit ratio, metadata-cache misses
devices       occupancies, device I/Os per operation, WAL / log split,
              background writes, flush bursts and memtable stalls
paths         network transfer, fixed latencies (wire, stack, VM I/O path),
              redo-log flush, shared client link
demands       CPU seconds per read and per write
network       the stations of :data:`perfmodel.solve.network.STATIONS`
solve         closed loop (approximate MVA) or open arrivals
tails         latency means and percentiles (gamma bodies, burst and stall mixtures)
io_rates      device IOPS, bytes and queue depth
report        the output frame; system hooks add their columns (TPC-C tpmC)
============  ==============================================================

Every array has one entry per configuration; nothing loops in Python per
configuration. Stages pass typed, frozen results, never string-keyed dicts, and
no input is rewritten to mean something else (issue 38). System-specific
behaviour comes from the system spec's data (threading, caches, daemons, log)
and its named hooks, never from a branch on the system's name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from perfmodel.inputs import knobs as settings
from perfmodel.inputs.catalog import Platform, load_network, load_platform
from perfmodel.inputs.params import ParameterSet, load_parameters
from perfmodel.inputs.systems import HOOKS, SystemSpec, load_system
from perfmodel.inputs.workload import Workload, check_nodes
from perfmodel.mechanisms import bursts, compaction, durability, ordering, placement, scaling, storage
from perfmodel.mechanisms import cache as _cache
from perfmodel.run import execution
from perfmodel.solve.network import (
    STATIONS,
    Solution,
    StationNetwork,
    class_moments,
    deterministic_part,
    gamma_ppf,
    mixture_quantile,
    solve_closed,
    solve_open,
)

IX = {name: i for i, name in enumerate(STATIONS)}
#: page of a metadata / WAL I/O [B]
META_IO_BYTES = 4096.0
#: request / response header bytes on the wire [B]
HEADER_BYTES = 128.0

# ---------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlatformArrays:
    """Per-configuration platform facts, SI units (a platform is looked up once)."""

    id: np.ndarray
    arch: np.ndarray
    cores: np.ndarray
    threads_per_core: np.ndarray
    sockets: np.ndarray
    numa_nodes: np.ndarray
    base_hz: np.ndarray
    turbo_hz: np.ndarray  # the clock one busy core may reach (blank in the catalog: base) [Hz]
    all_core_hz: np.ndarray  # the clock with every core busy (blank: base) [Hz]
    perf_per_ghz: np.ndarray  # the core's work per GHz relative to the reference core [-]
    l3_bytes: np.ndarray  # last-level cache over all sockets (blank in the catalog: NaN) [B]
    ram_bytes: np.ndarray
    net_bw: np.ndarray
    net_latency: np.ndarray
    #: a request message's socket work on the network's transport, as a share of kernel TCP's [-]
    net_message_share: np.ndarray
    #: a request message's VM exits on the vCPU that receives it, exits x time each (0 where the
    #: catalog counts none) [s]
    message_exit_s: np.ndarray
    #: the round trip between two availability zones of a cloud platform's region (NaN: no
    #: zones) [s]
    zone_rtt_s: np.ndarray
    device: np.ndarray
    devices: np.ndarray
    wal_device: np.ndarray
    smt_modes: np.ndarray
    index: np.ndarray
    platforms: tuple[Platform, ...] = ()


@dataclass(frozen=True)
class SystemArrays:
    """Per-configuration system facts from the specs (a spec is loaded once)."""

    specs: tuple[SystemSpec, ...]
    codes: np.ndarray
    id: np.ndarray
    hashed: np.ndarray
    thread_cap: np.ndarray
    data_cache: np.ndarray
    read_before_write: np.ndarray
    lsm: np.ndarray
    remote: np.ndarray
    page_bytes: np.ndarray
    sync_to_log: np.ndarray
    has_daemons: np.ndarray
    has_metadata_cache: np.ndarray
    coordinator: np.ndarray
    serial_command: np.ndarray
    serial_io_threads: np.ndarray  # of the serial_command ones: the main thread does no socket work
    serial_write_lock: np.ndarray
    group_commit: np.ndarray
    page_cache: np.ndarray
    client_mirrors_commands: np.ndarray
    load_threads: np.ndarray
    #: the server's I/O scheduler's latency goal: the most of a flush a read waits behind [s] (inf:
    #: no scheduler of its own)
    io_latency_goal_s: np.ndarray
    #: the store keeps key order on its devices (spec ``key_order: ordered``)
    key_ordered: np.ndarray

    def take(self, values) -> np.ndarray:
        """One value per spec, spread to the configurations (a spec's value may itself be an array
        with one entry per configuration: stacked parameter sets)."""
        if not any(np.ndim(v) for v in values):
            return np.asarray(values, dtype=float)[self.codes]
        out = np.empty(self.codes.shape)
        for code, v in enumerate(values):
            rows = self.codes == code
            out[rows] = np.asarray(v, dtype=float)[rows] if np.ndim(v) else v
        return out

    def parameter(self, params: ParameterSet, name: str) -> np.ndarray:
        """``name[id]`` per configuration (the set's value, else the spec's default)."""
        return self.take([s.parameter(params, name) for s in self.specs])


@dataclass(frozen=True)
class ConfigArrays:
    """The workload and configuration per configuration, as the caller gave them (broadcast; the
    numbers as floats): what the stages derive from them has names of its own (:class:`Layout`,
    :attr:`Inputs.effective_think_time_s`)."""

    platform_index: np.ndarray  # the configuration's platform in :attr:`PlatformArrays.platforms`
    system: np.ndarray  # the system's id or spec path, as given
    nodes: np.ndarray  # [count]
    read_fraction: np.ndarray  # reads among requests [-]
    object_bytes: np.ndarray  # [B]
    io_bytes: np.ndarray  # a device I/O's size [B]
    message_bytes: np.ndarray  # a request's and its response's payload on the network [B]
    dataset_bytes: np.ndarray  # [B]
    zipf_s: np.ndarray  # Zipf exponent [-]
    key_distribution: np.ndarray  # :data:`perfmodel.inputs.keys.KEY_DISTRIBUTIONS`
    hot_data_fraction: np.ndarray  # the hot set's share of the keys [-] (NaN: none given)
    hot_op_fraction: np.ndarray  # the hot set's share of the requests [-] (NaN: none given)
    access_pattern: np.ndarray  # the order requests visit keys: random or sequential
    think_time_s: np.ndarray  # a closed loop's client think time, as given [s]
    population: np.ndarray  # requests outstanding in a closed loop (1 under open arrivals) [count]
    iodepth: np.ndarray  # requests a client thread keeps outstanding (1 under open arrivals) [count]
    arrival_rate: np.ndarray  # open arrivals [1/s] (NaN in a closed loop)
    replication_factor: np.ndarray  # the pool's copies [count]
    acks: np.ndarray  # replica answers a write waits for by its consistency level [count]
    read_acks: np.ndarray  # replica answers a read waits for by read_consistency [count]


#: the entries of :class:`ConfigArrays` that are numbers (held as floats)
CONFIG_NUMBERS = ("nodes", "read_fraction", "object_bytes", "io_bytes", "message_bytes", "dataset_bytes",
                  "zipf_s", "hot_data_fraction", "hot_op_fraction", "think_time_s", "population", "iodepth",
                  "arrival_rate", "replication_factor", "acks", "read_acks")  # fmt: skip


@dataclass(frozen=True)
class Inputs:
    """The grid: workload arrays, resolved knobs, platform and system arrays, parameters -- as
    given -- and what :func:`inputs` derives from them under names of its own (``layout``,
    ``effective_think_time_s``): no input is rewritten to mean something else."""

    size: int
    workload: Workload
    params: ParameterSet
    cfg: ConfigArrays
    knobs: settings.KnobArrays
    plat: PlatformArrays
    sys: SystemArrays
    #: what the pool's layout (replicas or erasure-coded chunks) makes of a request (:func:`layout`)
    layout: Layout
    #: a closed loop's time between a reply and the client's next request: ``think_time_s`` plus the
    #: load generator's own time where it has no cores of its own (:func:`effective_think_time`) [s]
    effective_think_time_s: np.ndarray

    def repeat(self, times: int, params: ParameterSet) -> Inputs:
        """The grid ``times`` over, one after the other, with ``params`` (a set stacked over the
        copies, :func:`perfmodel.inputs.params.stack_parameters`)."""
        return self._each(lambda a: np.tile(a, times), self.size * times, params)

    def take(self, rows: slice) -> Inputs:
        """The configurations ``rows`` of the grid (every stage is per configuration)."""
        return self._each(lambda a: a[rows], len(range(*rows.indices(self.size))), self.params)

    def _each(self, fn, size: int, params: ParameterSet) -> Inputs:
        """The inputs with ``fn`` of every per-configuration array (:data:`GRID_FIELDS`)."""
        grid = {name: _each_array(getattr(self, name), fn) for name in GRID_FIELDS}
        return replace(self, size=size, params=params, **grid)


#: the fields of :class:`Inputs` that hold one entry per configuration
GRID_FIELDS = ("cfg", "knobs", "plat", "sys", "layout", "effective_think_time_s")


def _each_array(obj, fn):
    """``obj`` (an array, or a dataclass of per-configuration arrays and other values) with ``fn``
    of every array."""
    if isinstance(obj, np.ndarray):
        return fn(obj)
    arrays = {f.name: getattr(obj, f.name) for f in fields(obj)}
    return replace(obj, **{k: fn(v) for k, v in arrays.items() if isinstance(v, np.ndarray)})


def inputs(platform, workload: Workload, *, nodes, params, system, knobs) -> Inputs:
    """Broadcast every argument to the configurations and resolve catalog, system and knobs."""
    params = load_parameters(params)
    nodes = check_nodes(nodes)
    resolved = settings.resolve(knobs)
    platforms, platform_index = _as_platforms(platform)
    size, arrays = _broadcast(
        {
            "platform_index": platform_index,
            "system": system,
            "nodes": nodes,
            "read_fraction": workload.read_fraction,
            "object_bytes": workload.object_bytes,
            "io_bytes": workload.io_bytes,
            "message_bytes": workload.message_bytes,
            "dataset_bytes": workload.dataset_bytes,
            "zipf_s": workload.zipf_s,
            "key_distribution": workload.key_distribution,
            "hot_data_fraction": workload.hot_data_fraction,
            "hot_op_fraction": workload.hot_op_fraction,
            "access_pattern": workload.access_pattern,
            "think_time_s": workload.think_time_s,
            "population": workload.concurrency if workload.closed else 1.0,
            "iodepth": workload.iodepth if workload.closed else 1.0,
            "arrival_rate": workload.arrival_rate if not workload.closed else np.nan,
            "replication_factor": workload.replication_factor,
            "acks": workload.acks,
            "read_acks": workload.read_acks,
            **{f"knob:{k}": v for k, v in resolved.items()},
        }
    )
    given_knobs = {k.removeprefix("knob:"): arrays.pop(k) for k in list(arrays) if k.startswith("knob:")}
    cfg = ConfigArrays(**{k: v.astype(float) if k in CONFIG_NUMBERS else v for k, v in arrays.items()})
    sys_ = _system_arrays(cfg.system)
    # a knob of another system is refused, never ignored; then unset entries take their defaults
    settings.check_applies({k: given_knobs[k] for k in knobs}, sys_.specs, sys_.codes)
    knob_arrays = settings.KnobArrays(**settings.fill_defaults(given_knobs))
    knob_arrays = replace(knob_arrays, **_statement_defaults(knob_arrays, workload, sys_))
    why = placement_error(cfg.nodes, cfg.replication_factor, copies_per_node=knob_arrays.copies_per_node)
    if why:
        raise ValueError(why)
    pool = layout(cfg, knob_arrays, sys_.coordinator)
    plat = _with_network(_platform_arrays(platforms, cfg.platform_index.astype(int)), knob_arrays.network)
    for spec in sys_.specs:
        spec.check_parameters(params)
    think = effective_think_time(cfg.think_time_s, knob_arrays, params)
    return Inputs(size, workload, params, cfg, knob_arrays, plat, sys_, pool, think)


def effective_think_time(think_time_s, knobs: settings.KnobArrays, params: ParameterSet) -> np.ndarray:
    """A closed loop's time between a reply and the next request [s]: ``think_time_s`` plus the
    load generator's own time per request (:func:`client_time`) where it has neither cores of its
    own (knob ``client_cores``: then that time is the station ``client``, inside the latency) nor
    the server's cores to take it from (knob ``client_colocated`` with the tool's ``client_time``
    given: then it is cycles of the server's threads, :func:`client_cycles`)."""
    elsewhere = np.isfinite(knobs.client_cores.astype(float)) | _client_time_on_server(knobs)
    return think_time_s + np.where(elsewhere, 0.0, client_time(knobs, params))


def client_time(knobs: settings.KnobArrays, params: ParameterSet) -> np.ndarray:
    """The load generator's own CPU time per request [s]: the knob ``client_time`` (a recorded
    figure's tool, ``data/load_generators.yaml``), else the parameter ``client_time_s`` (0 in the
    shipped sets; a lab fit may free it)."""
    return settings.fill(knobs.client_time, params.values.get("client_time_s", 0.0)).astype(float)


def _client_time_on_server(knobs: settings.KnobArrays) -> np.ndarray:
    """Where the load generator's given time per request (knob ``client_time``) is the server's
    cores' work: it shares them (``client_colocated``) and has no cores of its own (``client_cores``)."""
    given = np.isfinite(knobs.client_time.astype(float))
    return given & knobs.client_colocated.astype(bool) & ~np.isfinite(knobs.client_cores.astype(float))


def _statement_defaults(
    knobs: settings.KnobArrays, workload: Workload, sys_: SystemArrays
) -> dict[str, np.ndarray]:
    """Unset ``statements_per_op`` / ``statements_scv`` resolved: for a TPC-C operation the system's
    ``tpcc_statements`` / ``tpcc_statements_scv`` (its costs per statement; the mix of 2 to 70
    statements per transaction), else 1 and 0; and ``wait_scv``, the system's (the three knobs'
    arrays, for a resolved copy of ``knobs``)."""
    tpcc = workload.operation == "tpcc"
    per_op = sys_.take([s.tpcc_statements for s in sys_.specs]) if tpcc else 1.0
    scv = sys_.take([s.tpcc_statements_scv for s in sys_.specs]) if tpcc else 0.0
    order = sys_.take([s.wait_scv for s in sys_.specs])
    return {
        "statements_per_op": settings.fill(knobs.statements_per_op, per_op).astype(float),
        "statements_scv": settings.fill(knobs.statements_scv, scv).astype(float),
        "wait_scv": settings.fill(knobs.wait_scv, order).astype(float),
    }


def placement_error(nodes, replication_factor, ec_k=math.nan, ec_m=math.nan, copies_per_node=1.0) -> str:
    """Why a configuration's copies or erasure-coded chunks cannot be placed ("" when they can):
    ``nodes`` below 1, more copies (``replication_factor``) or ``k + m`` chunks (``ec_k``, ``ec_m``;
    NaN for a replicated pool) than ``nodes x copies_per_node`` slots. ``copies_per_node`` is 1 when
    every copy and chunk sits on its own node (Ceph's default crush-failure-domain=host; Cassandra's
    and ScyllaDB's replicas on distinct nodes); Ceph's crush-failure-domain=osd puts several on one
    host, each on its own OSD (Ceph documentation, 'Erasure code profiles': crush-failure-domain,
    default host). Arrays broadcast; the first offending entry is named. The predictor refuses such
    a configuration, and :class:`perfmodel.evidence.figure_plan.FigurePlan` checks it when it builds one."""
    values = (nodes, replication_factor, ec_k, ec_m, copies_per_node)
    arrays = np.broadcast_arrays(*(np.asarray(v, float) for v in values))
    nodes, rf, k, m, per_node = (np.atleast_1d(v) for v in arrays)
    if (nodes < 1).any():
        return "nodes: must be >= 1"
    slots = nodes * per_node

    def where(i: int) -> str:  # the offending entry's slots, formatted only when one offends
        return f"nodes ({nodes[i]:g})" + (f" x copies_per_node ({per_node[i]:g})" if per_node[i] > 1 else "")

    if (rf > slots).any():
        i = int(np.argmax(rf > slots))
        return f"replication_factor: {rf[i]:g} exceeds {where(i)}"
    wide = np.isfinite(k) & np.isfinite(m) & (k + m > slots)
    if wide.any():
        i = int(np.argmax(wide))
        return f"ec_k + ec_m: {k[i] + m[i]:g} erasure-coded shards exceed {where(i)}"
    return ""


#: Ceph's default erasure-code stripe unit (osd_pool_erasure_code_stripe_unit) [B]
EC_STRIPE_UNIT = 4096.0


@dataclass(frozen=True)
class Layout:
    """What the pool's layout -- replicas, or a k+m erasure-coded pool (knobs ``ec_k``, ``ec_m``)
    -- makes of a request, per configuration (:func:`layout`); the workload's
    ``replication_factor``, ``acks`` and ``read_acks`` stay as given."""

    data_copies: np.ndarray  # bytes stored per byte of the dataset: RF, or (k + m) / k [-]
    shard_fraction: np.ndarray  # a write shard's bytes over the write's: 1/k, else 1 [-]
    read_chunks: np.ndarray  # chunks a read gathers through the primary: k, else 1 [count]
    rmw_reads: np.ndarray  # stripe-unit reads of a partial-stripe EC write: k, else 0 [count]
    write_shards: np.ndarray  # copies (replicated) or shards (EC) a write executes at [count]
    acks_waited: np.ndarray  # copies a write waits for: acks; every shard of its acting set (EC) [count]
    #: replicas a read waits for: read_acks on a coordinator-based store's replicated pool, else 1 [count]
    read_acks_waited: np.ndarray


def layout(cfg: ConfigArrays, knobs: settings.KnobArrays, coordinator: np.ndarray) -> Layout:
    """The pool's :class:`Layout` from the workload (``cfg``), the knobs ``ec_k`` / ``ec_m`` and
    whether the system coordinates reads (``coordinator``).

    A write of at least a stripe (``k x 4 KiB``) sends k + m chunks of ``1/k`` of its bytes and
    waits for all; a smaller write rewrites the chunk it touches and the m coding chunks after
    reading the stripe's k data chunks (read-modify-write). A read gathers k chunks through the
    primary -- of ``1/k`` of a large read, a stripe unit each for a small one (the decoding reads
    k chunks; Ceph before Tentacle has no partial-stripe reads). The data occupies ``(k + m) / k``
    of its size. References: Ceph documentation, 'Erasure coding' (architecture: an object is k +
    m chunks; reading decodes from k chunks) and 'Erasure Coding Direct Reads' (development docs:
    all EC reads go through the primary); ceph/ceph PR 23138 '[RFC] osd: ec partial stripe reads'
    (reads of part of a stripe still read whole chunks). Replicated pools: ``data_copies`` = RF,
    shards of full size, one chunk per read, no read-modify-write. Only a coordinator-based store
    (Cassandra / ScyllaDB) reads several replicas for one read; a primary-copy system (Ceph, MySQL,
    Redis) answers from one whatever read_consistency says, and an EC read gathers chunks instead.
    """
    k, m = knobs.ec_k.astype(float), knobs.ec_m.astype(float)
    rf = cfg.replication_factor
    ec = np.isfinite(k)
    if (ec != np.isfinite(m)).any():
        raise ValueError("ec_k / ec_m: an erasure-coded pool needs both (k data and m coding chunks)")
    why = placement_error(cfg.nodes, 1.0, k, m, knobs.copies_per_node)
    if why:
        raise ValueError(why)
    k, m = np.where(ec, k, 1.0), np.where(ec, m, 0.0)
    full_write = cfg.io_bytes >= k * EC_STRIPE_UNIT
    shards = np.where(full_write, k + m, 1.0 + m)
    return Layout(
        data_copies=np.where(ec, (k + m) / k, rf),
        shard_fraction=np.where(ec & full_write, 1.0 / k, 1.0),
        read_chunks=np.where(ec, k, 1.0),
        rmw_reads=np.where(ec & ~full_write, k, 0.0),
        write_shards=np.where(ec, shards, rf),
        acks_waited=np.where(ec, shards, cfg.acks),  # Ceph waits for every shard of its acting set
        read_acks_waited=np.where(coordinator & ~ec, cfg.read_acks, 1.0),
    )


def _as_platforms(platform) -> tuple[list[Platform], np.ndarray | int]:
    """Distinct platforms and, per configuration, the index of its platform."""
    if not isinstance(platform, list | tuple | np.ndarray):
        return [platform if isinstance(platform, Platform) else load_platform(platform)], 0
    arr = np.asarray(platform, dtype=object)
    if pd.api.types.infer_dtype(arr, skipna=False) == "string":  # ids or paths: factorize at C speed
        codes, uniques = pd.factorize(arr)
        return [load_platform(u) for u in uniques], codes
    keys = [p.id if isinstance(p, Platform) else str(p) for p in platform]
    codes, uniques = pd.factorize(np.asarray(keys, dtype=object))
    first = {k: p for k, p in zip(keys, platform, strict=True)}
    loaded = [first[k] if isinstance(first[k], Platform) else load_platform(first[k]) for k in uniques]
    return loaded, codes


def _broadcast(values: dict[str, object]) -> tuple[int, dict[str, np.ndarray]]:
    arrays = {k: np.asarray(v) for k, v in values.items()}
    empty = [k.removeprefix("knob:") for k, a in arrays.items() if a.size == 0]
    if empty:
        raise ValueError(f"{empty[0]}: an empty list gives no configuration; give a value or a list")
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k.removeprefix('knob:')} {a.shape}" for k, a in arrays.items() if a.ndim)
        raise ValueError(f"arguments do not broadcast: {shapes}") from None
    size = int(np.prod(shape)) if shape else 1
    return size, {k: np.broadcast_to(a, shape).ravel() for k, a in arrays.items()}


def _platform_arrays(platforms: list[Platform], index: np.ndarray) -> PlatformArrays:
    def col(fn):
        return np.array([fn(p) for p in platforms], dtype=object)[index]

    return PlatformArrays(
        id=col(lambda p: p.id),
        arch=col(lambda p: p.arch),
        cores=col(lambda p: p.cores).astype(float),
        threads_per_core=col(lambda p: p.threads_per_core).astype(float),
        sockets=col(lambda p: p.sockets).astype(float),
        numa_nodes=col(lambda p: p.numa_nodes).astype(float),
        base_hz=col(lambda p: p.base_hz).astype(float),
        turbo_hz=col(lambda p: p.base_hz if math.isnan(p.turbo_hz) else p.turbo_hz).astype(float),
        all_core_hz=col(lambda p: p.base_hz if math.isnan(p.all_core_hz) else p.all_core_hz).astype(float),
        perf_per_ghz=col(lambda p: p.perf_per_ghz).astype(float),
        l3_bytes=col(lambda p: p.l3_bytes).astype(float),
        ram_bytes=col(lambda p: p.ram_bytes).astype(float),
        net_bw=col(lambda p: p.network_spec().bandwidth_bytes_s).astype(float),
        net_latency=col(lambda p: p.network_spec().latency_s).astype(float),
        net_message_share=col(lambda p: p.network_spec().message_cost_share).astype(float),
        message_exit_s=np.nan_to_num(col(lambda p: p.message_exit_s).astype(float), nan=0.0),
        zone_rtt_s=col(lambda p: p.zone_rtt_s).astype(float),
        device=col(lambda p: _data_slot(p)[0]),
        devices=col(lambda p: _data_slot(p)[1]).astype(float),
        wal_device=col(_wal_slot),
        smt_modes=col(lambda p: p.smt_modes),
        index=index,
        platforms=tuple(platforms),
    )


def _with_network(plat: PlatformArrays, ids: np.ndarray) -> PlatformArrays:
    """The ``network`` knob: another NIC where it is set (resolved through each platform's catalog)."""
    ids = np.asarray(ids, dtype=object)
    given = ~pd.isna(ids)
    if not given.any():
        return plat
    bw, latency, share = plat.net_bw.copy(), plat.net_latency.copy(), plat.net_message_share.copy()
    keys = pd.unique(pd.Series(list(zip(plat.index[given], ids[given], strict=True))))
    for index, name in keys:
        platform = plat.platforms[int(index)]
        net = platform.known_networks.get(name) if name in platform.known_networks else load_network(name)
        rows = given & (plat.index == index) & (ids == name)
        bw[rows], latency[rows], share[rows] = net.bandwidth_bytes_s, net.latency_s, net.message_cost_share
    return replace(plat, net_bw=bw, net_latency=latency, net_message_share=share)


def _data_slot(p: Platform) -> tuple[str, int]:
    """The platform's data devices: the largest slot that is not a small WAL device."""
    slots = sorted(p.storage, key=lambda s: -s.count * p.device_spec(s.device).capacity_bytes)
    return slots[0].device, slots[0].count


def _wal_slot(p: Platform) -> str:
    data = _data_slot(p)[0]
    others = [s.device for s in p.storage if s.device != data]
    return others[0] if others else ""


def _system_arrays(system: np.ndarray) -> SystemArrays:
    codes, names = pd.factorize(np.asarray(system, dtype=object))
    try:
        specs = tuple(load_system(str(n)) for n in names)
    except (KeyError, FileNotFoundError) as exc:
        raise ValueError(f"system: {exc}") from None

    def flag(attr):
        return np.array([bool(getattr(s, attr)) for s in specs])[codes]

    return SystemArrays(
        specs=specs,
        codes=codes,
        id=np.array([s.id for s in specs], dtype=object)[codes],
        hashed=np.array([s.threading == "hashed" for s in specs])[codes],
        thread_cap=np.array([s.thread_cap for s in specs], dtype=float)[codes],
        data_cache=flag("data_cache"),
        read_before_write=flag("read_before_write"),
        lsm=flag("lsm"),
        remote=flag("remote"),
        page_bytes=np.array([s.page_bytes for s in specs], dtype=float)[codes],
        sync_to_log=np.array([s.sync_writes_to == "log" for s in specs])[codes],
        has_daemons=flag("daemons"),
        has_metadata_cache=flag("metadata_cache"),
        coordinator=flag("coordinator"),
        serial_command=np.array([s.serial in ("command", "command_io_threads") for s in specs])[codes],
        serial_io_threads=np.array([s.serial == "command_io_threads" for s in specs])[codes],
        serial_write_lock=np.array([s.serial == "write_lock" for s in specs])[codes],
        group_commit=flag("group_commit"),
        page_cache=flag("page_cache"),
        client_mirrors_commands=flag("client_mirrors_commands"),
        load_threads=flag("load_threads"),
        io_latency_goal_s=np.array([s.io_latency_goal_s for s in specs], dtype=float)[codes],
        key_ordered=np.array([s.key_order == "ordered" for s in specs])[codes],
    )


# ---------------------------------------------------------------------------------------
# cpu
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cpu:
    """Threads (shards) and each thread's effective clock [Hz]."""

    threads_per_core: np.ndarray
    cores: np.ndarray
    threads: np.ndarray
    thread_hz: np.ndarray
    devices: np.ndarray
    daemons: np.ndarray  # daemons per node (1 where the system has none)
    virtualization: np.ndarray
    dram_stall: np.ndarray  # time a statement waits for DRAM, at any clock [s] (:func:`dram_stall`)
    #: the threads' efficiency [-] (USL / Amdahl, or the I/O-thread law of ``serial:
    #: command_io_threads``): thread_hz's and the stall's share of a thread's clock
    usl_efficiency: np.ndarray
    #: share of a co-located load generator's work the server's threads carry [-] (:func:`client_share`)
    client_share: np.ndarray
    #: a write replica's efficiency [-] where it differs from a read's (``serial:
    #: command_io_threads``: the law per request class), else ``usl_efficiency``
    write_efficiency: np.ndarray | None = None

    def __post_init__(self):
        if self.write_efficiency is None:
            object.__setattr__(self, "write_efficiency", self.usl_efficiency)


def cpu(inp: Inputs) -> Cpu:
    """Shards / worker threads, SMT yield, USL, NUMA slowdown, VM efficiency, idle daemon cores."""
    plat, k, params = inp.plat, inp.knobs, inp.params
    tpc = settings.fill(k.threads_per_core, plat.threads_per_core).astype(float)
    _check_smt(plat, tpc)
    cores = settings.fill(k.cores, plat.cores).astype(float)
    if (cores < 1).any() or (cores > plat.cores).any():
        i = int(np.argmax((cores < 1) | (cores > plat.cores)))
        raise ValueError(f"cores: {cores[i]:g} is outside 1..{plat.cores[i]:g} for {plat.id[i]}")
    devices = settings.fill(k.devices, plat.devices).astype(float)
    cores_per_device = k.cores_per_device.astype(float)
    cores = np.where(np.isfinite(cores_per_device), np.minimum(cores, cores_per_device * devices), cores)
    if (cores < 1).any():
        i = int(np.argmax(cores < 1))
        raise ValueError(
            f"cores_per_device: {cores_per_device[i]:g} x {devices[i]:g} devices leaves {cores[i]:g} cores; "
            "at least 1 is needed"
        )
    per_device = _daemons_per_device(inp)
    idle = np.where(inp.sys.has_daemons, _daemon_idle(inp) * per_device * devices, 0.0)
    cores_avail = np.maximum(cores - idle, 0.05)  # cores left for requests [count]
    cap = k.thread_cap.astype(float)
    cap = np.where(np.isfinite(cap), cap, inp.sys.thread_cap)
    cap = np.where(inp.sys.load_threads, np.minimum(cap, _load_threads(inp)), cap)
    threads = np.maximum(np.floor(scaling.usable_threads(np.maximum(cores_avail, 1.0), tpc, cap)), 1.0)
    virt = k.virtualization
    virt_eff = np.select(
        [virt == "untuned", virt == "boost"],
        [params["virt_cpu_efficiency[untuned]"], params["virt_cpu_efficiency[boost]"]],
        1.0,
    )
    busy = _busy_threads(inp, threads)
    on_threads = client_share(threads, cores_avail, tpc)
    hz = (
        core_clock(plat, np.minimum(busy, cores_avail))
        * plat.perf_per_ghz
        * params.lookup("ghz_factor", plat.arch)
    )
    miss = llc_miss_share(inp)  # once: the stalls and the NUMA slowdown both take it
    stall = dram_stall(inp, miss)
    # a command's DRAM stalls run where the command does (Redis's main thread, under memcached's
    # lock's caller): in the serial shares as the cycles the stall lasts at the thread's clock
    kappa = inp.sys.parameter(params, "usl_kappa")
    share = scaling.threads_sharing_core(busy, np.maximum(cores_avail, 1.0), tpc)
    clock = (  # a thread's clock before contention [reference cycles / s]
        hz
        * scaling.smt_yield(share, params.lookup("smt_alpha", plat.arch))
        / share
        / _numa_slowdown(inp, threads, tpc, miss)
        * virt_eff
        * np.minimum(cores_avail, 1.0)  # a node whose daemons' idle load leaves under one core
    )
    exits = message_exits(inp) * clock  # a message's VM exits, as cycles at this clock
    command, sockets, client = _command_and_message(inp, stall * clock, on_threads, exits)
    sigma = np.select(
        [inp.sys.serial_command, inp.sys.serial_write_lock],
        [_serial_share(command, sockets + client), _write_lock_share(inp, stall * clock, on_threads, exits)],
        inp.sys.parameter(params, "usl_sigma"),
    )  # fmt: skip
    efficiency = scaling.usl_efficiency(threads, sigma, kappa)
    write_efficiency = efficiency
    io_threads = inp.sys.serial_io_threads
    if io_threads.any():  # the main thread runs the commands, the other threads every socket
        # per request class (a dearer SET must not make a GET cheaper): a read's and a write
        # replica's main-thread, socket and load-generator cycles; the load generator is no socket
        # work of the I/O threads but time-shares every thread alike, the main one too (kappa is
        # not applied: io_thread_efficiency)
        parts = _io_thread_parts(inp, stall * clock, on_threads, exits)
        efficiency = np.where(io_threads, scaling.io_thread_efficiency(threads, *parts[0]), efficiency)
        write_efficiency = np.where(io_threads, scaling.io_thread_efficiency(threads, *parts[1]), efficiency)
    daemons = np.where(inp.sys.has_daemons, per_device * devices, 1.0)
    return Cpu(
        tpc, cores, threads, clock * efficiency, devices, daemons, virt, stall, efficiency, on_threads,
        write_efficiency,
    )  # fmt: skip


def message_exits(inp: Inputs) -> np.ndarray:
    """Time a request message's VM exits take on the vCPU that receives it [s]: the platform's
    ``message_exit_s`` (catalog ``vm_exits_per_message x vm_exit_us``; 0 on bare metal) for a
    system clients reach over the network, 0 for one without request messages (fio, an embedded
    RocksDB: ``remote: false``). Assumption: a coordinator's forwarded request
    (``cpu_cycles_forward``) is not charged exits of its own."""
    return np.where(inp.sys.remote, inp.plat.message_exit_s, 0.0)


def core_clock(plat: PlatformArrays, busy_cores: np.ndarray) -> np.ndarray:
    """A core's clock with ``busy_cores`` of the node's cores busy [Hz]: the turbo clock with one,
    the all-core clock with all, linear in between (the scheduler puts busy threads on idle cores
    before SMT siblings, so busy cores = min(busy threads, cores)).

    The turbo limit falls as more cores are active (Intel SDM Vol. 3C, MSR_TURBO_RATIO_LIMIT: a
    maximum ratio per count of active cores; turbostat, L. Brown 2012: "the turbo-limit varies,
    depending on the number of active cores"); linear between the two ends is an assumption (the
    real limits fall in steps). A catalog without turbo_ghz runs at base; without all_core_ghz,
    a fully busy node runs at base (no boost credited under full load). The cores' work per GHz
    (data/microarchitectures.yaml) is SPECint rate-1 over the clock it ran at, one busy core's.
    """
    span = np.maximum(plat.cores - 1.0, 1.0)
    share = np.where(plat.cores > 1, np.clip((busy_cores - 1.0) / span, 0.0, 1.0), 1.0)
    all_core = np.minimum(plat.all_core_hz, plat.turbo_hz)
    return plat.turbo_hz - (plat.turbo_hz - all_core) * share


def _load_threads(inp: Inputs) -> np.ndarray:
    """The load's threads per node [count]: ``clients x threads_per_client`` of a closed loop
    (its population over ``iodepth``), spread over the nodes; ``inf`` under open arrivals (no
    fixed threads). A system with ``load_threads`` runs on these (fio: each of ``numjobs`` jobs is
    a thread or process that submits and reaps its own ``iodepth`` I/Os -- fio HOWTO, ``numjobs``
    and ``iodepth``), so its CPU work per I/O has no more cores than it has jobs."""
    if not inp.workload.closed:
        return np.full(inp.size, np.inf)
    cfg = inp.cfg
    return np.maximum(np.ceil(cfg.population / cfg.iodepth / cfg.nodes), 1.0)


def _busy_threads(inp: Inputs, threads: np.ndarray) -> np.ndarray:
    """Threads of a node busy at once [count]: in a closed loop at most the requests outstanding
    per node -- ``population x copies / nodes``, a write's CPU work running on each of its
    ``replication_factor`` replicas -- and never more than the threads; under open arrivals
    all of them (the load a sizing targets keeps every thread busy at its peak).

    An upper bound, not the mean (assumption): requests waiting on a device or the network, or
    thinking, count too, so an I/O-bound closed loop and a lightly loaded open one are charged
    more SMT sharing than they meet. The mean busy threads, ``X x D_cpu`` per node, would need a
    fixed point with the solution (docs/models.md)."""
    if not inp.workload.closed:
        return threads
    cfg = inp.cfg
    f = cfg.read_fraction
    copies = f + (1.0 - f) * inp.layout.write_shards
    return np.clip(cfg.population * copies / cfg.nodes, 1.0, threads)


def _command_share(inp: Inputs, stall_cycles=0.0, client_share=1.0, exit_cycles=0.0) -> np.ndarray:
    """Amdahl's serial fraction of a system whose commands run on one thread [-]: the commands'
    share of a node's request CPU, ``c_cmd / (c_cmd + c_msg / iodepth + c_client / copies)`` per
    command a node runs. A node runs ``copies = f + (1 - f) R`` commands per operation (``f``
    reads, ``R`` write replicas), so ``c_cmd = (f c_r + (1 - f) R c_w) / copies`` plus the
    command's DRAM stalls, ``stall_cycles`` (:func:`dram_stall` at the thread's clock); the
    request messages (with a guest's VM exits, ``exit_cycles`` each), shared by the commands
    pipelined in them, come with each command, and a co-located load generator's work
    (:func:`client_cycles` with its ``client_share``) once per operation -- both spread over the
    threads. With ``n`` threads the capacity is ``n / (1 +
    sigma (n - 1))`` single threads: one thread's at ``n = 1``, the main thread's ``1 / c_cmd`` as
    ``n`` grows (Gunther 2007, eq. 4.1: Amdahl as USL with kappa = 0)."""
    command, sockets, client = _command_and_message(inp, stall_cycles, client_share, exit_cycles)
    return _serial_share(command, sockets + client)


def _serial_share(serial, parallel):
    """``serial / (serial + parallel)``, 0 where both are 0 [-]."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(serial + parallel > 0, serial / (serial + parallel), 0.0)


def _message_cycles(inp: Inputs, exit_cycles=0.0) -> np.ndarray:
    """A request message's socket work and VM exits, shared by the commands pipelined in it
    [cycles per command]: ``(s x cpu_cycles_message + exit_cycles) / iodepth``, ``s`` the
    transport's share of a kernel TCP message's work (catalog network ``message_cost_share``: 1 for
    TCP, on a NIC or loopback, in which ``cpu_cycles_message`` is calibrated; a unix socket's
    less)."""
    socket = inp.plat.net_message_share * inp.sys.parameter(inp.params, "cpu_cycles_message")
    return (socket + exit_cycles) / inp.cfg.iodepth


def _io_thread_parts(inp: Inputs, stall_cycles, client_share, exit_cycles):
    """A read's and a write replica's ``(main, sockets, handoff, shared)`` cycles for
    :func:`perfmodel.mechanisms.scaling.io_thread_efficiency` [cycles per operation]: the request messages'
    socket work (with the VM exits) and handoffs on the I/O threads, the co-located load
    generator's work (once per operation: a write replica 1 / rf of it) on every thread alike, and
    everything else the class is charged (:func:`_operation_cycles`) with its DRAM stalls on the
    main thread."""
    statements = inp.knobs.statements_per_op.astype(float)
    op_r, op_w = _operation_cycles(inp, client_share, exit_cycles)
    sockets = _message_cycles(inp, exit_cycles) * statements
    handoff = inp.sys.parameter(inp.params, "cpu_cycles_handoff") / inp.cfg.iodepth * statements
    g_r = client_cycles(inp, client_share, exit_cycles) * statements
    g_w = g_r / inp.layout.write_shards
    stalls = stall_cycles * statements
    main_r, main_w = op_r - sockets - g_r + stalls, op_w - sockets - g_w + stalls
    return (main_r, sockets, handoff, g_r), (main_w, sockets, handoff, g_w)


def _command_and_message(inp: Inputs, stall_cycles=0.0, client_share=1.0, exit_cycles=0.0):
    """Per command a node runs [cycles]: the command's cycles, its share of the request messages'
    socket work (with a guest's VM exits) and of a co-located load generator's work --
    ``(c_cmd, (c_msg + e) / iodepth, c_client / copies)`` of :func:`_command_share`."""
    f, copies = inp.cfg.read_fraction, inp.layout.write_shards
    sys_, params = inp.sys, inp.params
    read, write = sys_.parameter(params, "cpu_cycles_read"), _write_cycles(inp)
    per_op = f + (1 - f) * copies  # commands a node runs per operation (a write once per replica)
    command = (f * read + (1 - f) * copies * write) / per_op + stall_cycles
    return command, _message_cycles(inp, exit_cycles), client_cycles(inp, client_share, exit_cycles) / per_op


def _write_cycles(inp: Inputs) -> np.ndarray:
    """CPU of a write command [cycles]: ``cpu_cycles_write`` less the shares of it a write without
    its log (``log_cpu_share``: the WAL append, knob ``durability=off``) and an insert in key order
    into a store that keeps it (``ordered_insert_saving``: the memtable search it skips) do not
    spend (:mod:`perfmodel.mechanisms.durability`, :mod:`perfmodel.mechanisms.ordering`; both 0
    where a spec does not measure them)."""
    sys_, params = inp.sys, inp.params
    in_order = ordering.sequential(inp.cfg.access_pattern) & sys_.key_ordered
    spared = durability.log_cpu(sys_.parameter(params, "log_cpu_share"), inp.knobs.durability)
    # an insert that need not find its key's place: in key order, or appended to a vector memtable
    search = np.maximum(
        ordering.insert_cpu(sys_.parameter(params, "ordered_insert_saving"), in_order),
        ordering.insert_cpu(sys_.parameter(params, "vector_insert_saving"), inp.knobs.memtable == "vector"),
    )
    spared = spared + search
    return sys_.parameter(params, "cpu_cycles_write") * (1.0 - np.minimum(spared, 1.0))


def _write_lock_share(inp: Inputs, stall_cycles=0.0, client_share=1.0, exit_cycles=0.0) -> np.ndarray:
    """Amdahl's serial fraction of a system whose writes allocate under a process-wide lock [-]:
    the locked cycles' share of a node's request CPU, ``(1 - f) R w c_lock / (f C_r + (1 - f) R
    C_w)`` with ``R`` write replicas, ``w`` writing statements and ``C_r`` / ``C_w`` the cycles a
    read / a write replica is charged (:func:`_operation_cycles`, with ``exit_cycles`` per message;
    page misses excluded) and
    its statements' DRAM stalls (``stall_cycles`` each: :func:`dram_stall` at the thread's clock).
    memcached's ``slabs_alloc`` and ``slabs_free`` take the global ``slabs_lock`` (slabs.c), which
    a SET needs for its new item and for the one it replaces, while a GET takes only its striped
    item lock: GETs scale with threads, SETs level off at ``hz / c_lock`` per node (Gunther 2007,
    eq. 4.1: Amdahl as USL with kappa = 0). Like every USL term here it slows the threads, so it
    costs a request at light load too (a known limit: a lock is waited for only under contention)."""
    f, copies = inp.cfg.read_fraction, inp.layout.write_shards
    sys_ = inp.sys
    if not sys_.serial_write_lock.any():  # no such system in the grid: skip a second pass over the costs
        return np.zeros(inp.size)
    locked = np.where(sys_.serial_write_lock, sys_.parameter(inp.params, "cpu_cycles_write_lock"), 0.0)
    locked = locked * _write_statements(inp.knobs)
    op_r, op_w = _operation_cycles(inp, client_share, exit_cycles)
    stalls = stall_cycles * inp.knobs.statements_per_op.astype(float)
    total = f * (op_r + stalls) + (1 - f) * copies * (op_w + stalls)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, np.minimum((1 - f) * copies * locked / total, 1.0), 0.0)


def dram_stall(inp: Inputs, miss: np.ndarray | None = None) -> np.ndarray:
    """Time one statement waits for DRAM [s]: ``m x t_dram x llc_miss_share``.

    ``m`` (``dram_misses_per_op``, per system; 0 unless its spec counts them) is the dependent
    cache lines a command walks -- an in-memory store's hash bucket, entry, key and value
    object -- each a last-level-cache miss when the data does not fit the cache
    (:func:`llc_miss_share`, or ``miss`` when the caller has it); ``t_dram`` (``dram_latency_s``)
    the load-to-use latency of one.
    Time, not cycles: DRAM latency has barely moved while cores' clocks and work per GHz grew
    (J. Chang, 'Memory Latency II', 2018; Graviton2, EPYC and Xeon near identical at ~81-90 ns,
    AnandTech 2020), so a newer core speeds up a pointer-chasing command less than SPECint says
    (the cycles of :func:`_operation_cycles` scale with it). Other systems' stalls stay inside
    their fitted cycles. Assumptions: the misses are dependent (none overlap); an SMT sibling
    runs during a thread's stall (the stall is not stretched by the core's sharing), and a
    remote NUMA node's longer latency stays on the cycles (:func:`_numa_slowdown`), not here."""
    misses = inp.sys.parameter(inp.params, "dram_misses_per_op")
    if not (misses > 0).any():  # no such system in the grid: skip the cache's hit ratio
        return np.zeros(inp.size)
    return misses * inp.params["dram_latency_s"] * (llc_miss_share(inp) if miss is None else miss)


def _check_smt(plat: PlatformArrays, tpc: np.ndarray) -> None:
    """Each distinct (platform, SMT mode) pair is checked once."""
    _, first, inverse = np.unique(plat.index * 1024 + tpc.astype(int), return_index=True, return_inverse=True)
    ok = np.array([tpc[i] in plat.smt_modes[i] for i in first])[inverse.ravel()]
    if not ok.all():
        i = int(np.argmin(ok))
        raise ValueError(
            f"threads_per_core: {tpc[i]:g} is not an SMT mode of {plat.id[i]} (valid: {plat.smt_modes[i]})"
        )


def _daemons_per_device(inp: Inputs) -> np.ndarray:
    """Daemons per data device: the spec's knob (Ceph: osds_per_device), 1 where there are none."""
    out = np.ones(inp.size)
    for code, spec in enumerate(inp.sys.specs):
        if spec.daemons is not None:
            mask = inp.sys.codes == code
            out[mask] = getattr(inp.knobs, spec.daemons.per_device_knob).astype(float)[mask]
    return out


def _daemon_idle(inp: Inputs) -> np.ndarray:
    return inp.sys.take(
        [s.parameter(inp.params, s.daemons.idle_cores) if s.daemons else 0.0 for s in inp.sys.specs]
    )


def _numa_slowdown(inp: Inputs, threads: np.ndarray, tpc: np.ndarray, miss: np.ndarray) -> np.ndarray:
    """NUMA slowdown over the nodes the configured threads span, on the accesses that leave the
    last-level cache: a binding is set for the threads the server starts, and its memory stays
    spread over those nodes however few threads are busy. A remote node's memory costs more only
    where an access goes to memory at all -- a working set the socket's cache holds never leaves
    it -- so the spread's extra cost is scaled by ``miss``, :func:`llc_miss_share`."""
    plat = inp.plat
    cores_per_node = plat.cores / plat.numa_nodes
    bound = inp.knobs.numa_binding.astype(bool)
    spanned = scaling.numa_nodes_spanned(np.ceil(threads / tpc), cores_per_node, bound, plat.numa_nodes)
    spread = scaling.numa_slowdown(
        spanned,
        np.maximum(plat.numa_nodes / plat.sockets, 1.0),
        inp.params["numa_same_socket_penalty"],
        inp.params["numa_cross_socket_penalty"],
    )
    return 1.0 + miss * (spread - 1.0)


def llc_miss_share(inp: Inputs) -> np.ndarray:
    """Share of a node's data accesses that miss the last-level cache a thread shares [-].

    The working set is the node's data (``dataset_bytes x data_copies / nodes``), the cache one
    NUMA node's share of the L3 (``l3_mib / max(sockets, numa_nodes)``: a thread sees its own
    socket's cache, or its own die's where a socket has several -- Kunpeng 920, EPYC; read-shared
    lines are held in each; an EPYC core complex's L3 is smaller still, not modelled), and the
    hit ratio the system cache's own (:func:`perfmodel.mechanisms.cache.hit_ratio`,
    uniform or Zipf keys): ``1 - hit``. Where the catalog has no L3 size or the figure no data
    set size, every access is taken to miss (1, the NUMA penalty in full: no relief without
    both sizes). An assumption: code, metadata and a writer's lines moving between sockets
    (coherence misses) are not counted, so a write-heavy load in cache is understated.
    """
    plat = inp.plat
    l3 = plat.l3_bytes / np.maximum(np.maximum(plat.sockets, plat.numa_nodes), 1.0)
    data = _per_node_data(inp)
    known = np.isfinite(l3) & (data > 0)
    if not known.any():
        return np.ones(inp.size)
    all_rows = np.ones(inp.size, dtype=bool)
    hit = _hit_ratio(
        inp, np.where(known, l3, 0.0), np.where(known, data, 1.0), inp.cfg.object_bytes, all_rows
    )
    return np.where(known, 1.0 - hit, 1.0)


def _per_node_data(inp: Inputs) -> np.ndarray:
    """The data one node holds [B]: ``dataset_bytes x data_copies / nodes``."""
    cfg = inp.cfg
    return cfg.dataset_bytes * inp.layout.data_copies / cfg.nodes


def _hit_ratio(inp: Inputs, cache_b, data_b, item_b, rows) -> np.ndarray:
    """:func:`perfmodel.mechanisms.cache.hit_ratios` with each configuration's key distribution
    (``rows``: the configurations the arrays belong to, a boolean mask)."""
    cfg = inp.cfg
    return _cache.hit_ratios(
        cache_b, data_b, item_b, cfg.key_distribution[rows],
        zipf_s=cfg.zipf_s[rows], hot_data_fraction=cfg.hot_data_fraction[rows],
        hot_op_fraction=cfg.hot_op_fraction[rows],
    )  # fmt: skip


# ---------------------------------------------------------------------------------------
# cache
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cache:
    """Cache per node (per daemon where the system has daemons), hit ratios, metadata misses."""

    cache_bytes: np.ndarray
    data_hit: np.ndarray
    metadata_reads: np.ndarray  # device reads per request for metadata misses [count]
    #: share of data reads that miss the system's cache and find the page in the OS page
    #: cache (systems with ``page_cache``: buffered I/O) [-]; 0 elsewhere
    page_cache_hit: np.ndarray | float = 0.0


def cache(inp: Inputs, cpu_: Cpu) -> Cache:
    """Data hit ratio of the system's cache; metadata (onode) misses of a per-daemon cache."""
    cfg, sys_ = inp.cfg, inp.sys
    share = sys_.parameter(inp.params, "cache_share_of_ram")
    ram_share = share * inp.plat.ram_bytes / cpu_.daemons  # what the RAM holds of the data [B]
    cache_bytes = inp.knobs.cache_bytes.astype(float)
    cache_bytes = np.where(np.isfinite(cache_bytes), cache_bytes, ram_share)
    per_node_data = _per_node_data(inp)

    def hit(cache_b, data_b, item_b, rows):
        return _hit_ratio(inp, cache_b, data_b, item_b, rows)

    all_rows = np.ones(inp.size, dtype=bool)
    data_hit = np.where(sys_.data_cache, hit(cache_bytes, per_node_data, cfg.object_bytes, all_rows), 0.0)
    cold = inp.knobs.cache_state == "cold"
    resident = sys_.data_cache & (inp.knobs.cache_state == "resident")
    data_hit = np.where(cold, 0.0, np.where(resident, 1.0, data_hit))
    # buffered I/O (PostgreSQL): a page the system's cache misses may still be in the OS page
    # cache, the rest of the RAM share (an explicit shared_buffers of 64 GB on a 252 GiB server
    # leaves ~120 GB). Those reads cost a miss's CPU (the read system call, copy and buffer
    # install) but no device I/O. Double buffering: a page read or written back through the
    # kernel leaves a copy there, so the two caches are taken as holding the larger of the two,
    # max(SB, share x RAM - SB), never their sum -- the reason PostgreSQL's documentation
    # expects no gain from shared_buffers beyond 40% of RAM
    buffered = sys_.page_cache & sys_.data_cache & ~cold
    page_cache_hit = np.zeros(inp.size)
    if buffered.any():  # a second hit-ratio solve, only where a page cache exists
        in_memory = np.maximum(cache_bytes, ram_share - cache_bytes)[buffered]
        both = hit(in_memory, per_node_data[buffered], cfg.object_bytes[buffered], buffered)
        page_cache_hit[buffered] = np.maximum(both - data_hit[buffered], 0.0)
    metadata_reads = np.zeros(inp.size)
    for code, spec in enumerate(sys_.specs):
        meta = spec.metadata_cache
        if meta is None:
            continue
        rows = sys_.codes == code

        def value(name, rows=rows, spec=spec):  # the spec's parameter on its rows
            v = spec.parameter(inp.params, name)
            return v[rows] if np.ndim(v) else v

        entry = value(meta.entry_bytes)
        objects = per_node_data[rows] / np.maximum(cpu_.daemons[rows], 1.0) / value(meta.object_bytes)
        meta_hit = hit(cache_bytes[rows], objects * entry, entry, rows)
        metadata_reads[rows] = (1.0 - meta_hit) * value(meta.reads_per_miss)
    return Cache(cache_bytes, data_hit, metadata_reads, page_cache_hit)


# ---------------------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceSpecs:
    """Per-configuration parameters of a device slot (looked up once per distinct device)."""

    ids: np.ndarray
    parallelism: np.ndarray
    p_eff: np.ndarray
    read_iops: np.ndarray
    write_iops: np.ndarray
    seq_read: np.ndarray
    seq_write: np.ndarray
    write_latency: np.ndarray
    single_queue: np.ndarray
    hardware_queues: np.ndarray  # submission queues [count]


def device_specs(ids: np.ndarray, platforms: list[Platform], index: np.ndarray) -> DeviceSpecs:
    """The parameters of each configuration's device (``""``: none, NaN), resolved through its
    platform's catalog (a user's platform file may define its own devices; a YAML path works too)."""
    ids = np.asarray(ids, dtype=object)
    id_codes, id_names = pd.factorize(ids)
    index = np.broadcast_to(np.asarray(index), ids.shape).astype(np.int64)
    keys, inv = np.unique(index * len(id_names) + id_codes, return_inverse=True)
    uniq = [f"{k // len(id_names)}|{id_names[k % len(id_names)]}" for k in keys]
    rows = []
    for pair in uniq:
        i, name = pair.split("|", 1)
        if name == "":
            rows.append((np.nan,) * 9)
            continue
        d = platforms[int(i)].device_spec(name)
        p_eff = storage.effective_parallelism(d.internal_parallelism, d.hardware_queues, d.queue_depth_limit)
        rows.append(
            (d.internal_parallelism, float(p_eff), d.read_iops_4k, d.write_iops_4k, d.seq_read_bytes_s)
            + (d.seq_write_bytes_s, d.write_latency_s, 1.0 if d.interface == "sata" else 0.0)
            + (float(d.hardware_queues),)
        )
    table = np.array(rows, dtype=float).reshape(len(uniq), 9)[inv]
    return DeviceSpecs(ids, *table.T)


@dataclass(frozen=True)
class Devices:
    """Device I/O per operation, the WAL / log split, background writes and their bursts."""

    data: DeviceSpecs
    wal: DeviceSpecs
    has_wal: np.ndarray
    io_bytes: np.ndarray  # bytes of a data-device I/O: at least a page [B]
    reads_per_read: np.ndarray
    reads_per_write: np.ndarray
    sync_data: np.ndarray  # synchronous data-device writes per write replica
    sync_wal: np.ndarray  # synchronous WAL-device writes per write replica
    metadata_reads: np.ndarray  # device reads per request for metadata misses [count]
    metadata_on_data: np.ndarray  # metadata reads go to the data device (no WAL device)
    page_cache_reads: np.ndarray  # page reads per read served by the OS page cache [count]
    page_cache_reads_write: np.ndarray  # the same per write (a B-tree reads its page first)
    d_read: np.ndarray  # data-device occupancy per read [s]
    d_write: np.ndarray
    d_wal_read: np.ndarray
    d_wal_write: np.ndarray
    d_background: np.ndarray  # background occupancy per write replica [s]
    d_destage: np.ndarray  # data-device occupancy a write replica leaves after its ack [s]
    d_wal_destage: np.ndarray  # the same on the WAL device [s]
    occ_background: np.ndarray  # occupancy of one 512 KiB background I/O [s]
    host_cost: np.ndarray  # single-queue block-layer CPU per I/O [s]
    bg_bytes_per_write: np.ndarray  # background bytes per write replica [B]
    bg_bytes: np.ndarray  # background bytes per request, per node [B]
    bursts: bursts.Bursts


def devices(inp: Inputs, cpu_: Cpu, cache_: Cache) -> Devices:
    """Occupancy of every device I/O and how many of each a read and a write make."""
    sys_, params, cfg, k = inp.sys, inp.params, inp.cfg, inp.knobs
    plat = inp.plat
    factor = params.values.get("device_time_factor", 1.0)  # the lab's drives against their catalog's
    data = _lab_device(
        device_specs(settings.fill(k.device, plat.device), list(plat.platforms), plat.index), factor
    )
    wal_ids = settings.fill(k.wal_device, plat.wal_device)
    wal, has_wal = _lab_device(device_specs(wal_ids, list(plat.platforms), plat.index), factor), wal_ids != ""
    io_bytes = np.maximum(cfg.io_bytes, sys_.page_bytes)
    # erasure coding: a large read gathers k chunks of 1/k, a write shard carries 1/k (or the chunk)
    chunk = np.where(inp.layout.read_chunks > 1, EC_STRIPE_UNIT, 0.0)  # an EC read reads whole stripe units
    read_bytes = np.maximum(np.maximum(cfg.io_bytes / inp.layout.read_chunks, chunk), sys_.page_bytes)
    write_bytes = np.maximum(cfg.io_bytes * inp.layout.shard_fraction, sys_.page_bytes)
    occ_r = storage.io_occupancy(read_bytes, data.parallelism, data.read_iops, data.seq_read)
    occ_w = storage.io_occupancy(write_bytes, data.parallelism, data.write_iops, data.seq_write)
    occ_stripe = storage.io_occupancy(  # a stripe-unit chunk read of a read-modify-write
        np.maximum(EC_STRIPE_UNIT, sys_.page_bytes), data.parallelism, data.read_iops, data.seq_read
    )
    occ_wal, occ_wal_r = _wal_occupancies(wal, has_wal)
    # a write is acknowledged from the drive's power-protected buffer after its spec write latency
    # (plus its bytes at full bandwidth) and programmed to flash afterwards: the client waits for
    # the ack, the rest of the occupancy (P / IOPS, capacity) is destaged behind it
    ack_w = np.minimum(occ_w, data.write_latency + write_bytes / data.seq_write)
    ack_wal = np.where(
        has_wal,
        np.minimum(occ_wal, wal.write_latency + META_IO_BYTES / np.where(has_wal, wal.seq_write, 1.0)),
        0.0,
    )
    occ_meta_r = storage.io_occupancy(META_IO_BYTES, data.parallelism, data.read_iops, data.seq_read)
    writing = _write_statements(k)  # dirty pages per writing statement
    lookups, rows = _keys_and_rows(k)  # page reads per index lookup (a statement, or each IN-list key)
    # keys read in the order the store keeps share its pages (mechanisms.ordering)
    in_order = ordering.sequential(cfg.access_pattern) & sys_.key_ordered
    pages = lookups * ordering.pages_per_key(cfg.object_bytes, sys_.page_bytes, in_order)
    # a range's further rows fill the next pages of a store that keeps key order
    pages = pages + ordering.range_pages(rows - lookups, cfg.object_bytes, sys_.page_bytes, sys_.key_ordered)
    per_miss = sys_.parameter(params, "device_reads_per_miss") * pages * inp.layout.read_chunks
    miss_reads = (1.0 - cache_.data_hit - cache_.page_cache_hit) * per_miss  # from the device
    copies = cache_.page_cache_hit * per_miss  # from the OS page cache (buffered I/O)
    reads_per_write = np.where(sys_.read_before_write, miss_reads, 0.0)
    rmw = inp.layout.rmw_reads / inp.layout.write_shards  # a partial EC write's stripe reads, per shard
    sync = sys_.parameter(params, "sync_writes")
    # one synchronous write (WAL / deferred) goes to the WAL device when there is one; a
    # system whose commit is a redo-log flush writes it at the log station (paths)
    sync_wal = np.where(has_wal & (sync > 0), 1.0, 0.0)
    sync_data = np.where(sys_.sync_to_log, 0.0, sync - sync_wal)
    meta = cache_.metadata_reads
    on_data = sys_.has_metadata_cache & ~has_wal
    bg_bytes_per_write, occ_bg, d_bg, bg_bytes = _background(inp, data, in_order, writing)
    return Devices(
        data=data,
        wal=wal,
        has_wal=has_wal,
        io_bytes=io_bytes,
        reads_per_read=miss_reads,
        reads_per_write=reads_per_write + rmw,
        page_cache_reads=copies,
        page_cache_reads_write=np.where(sys_.read_before_write, copies, 0.0),
        sync_data=sync_data,
        sync_wal=sync_wal,
        metadata_reads=meta,
        metadata_on_data=on_data,
        d_read=miss_reads * occ_r + np.where(on_data, meta * occ_meta_r, 0.0),
        # what a write waits for at the device: page reads, an EC stripe's reads, the sync write's ack
        d_write=reads_per_write * occ_r + rmw * occ_stripe + sync_data * ack_w,
        d_wal_read=np.where(sys_.has_metadata_cache & has_wal, meta * occ_wal_r, 0.0),
        d_wal_write=sync_wal * ack_wal,
        d_destage=sync_data * (occ_w - ack_w),
        d_wal_destage=sync_wal * (occ_wal - ack_wal),
        d_background=d_bg,
        occ_background=occ_bg,
        host_cost=np.where(data.single_queue > 0, params["blk_sq_cost_s"], 0.0),
        bg_bytes_per_write=bg_bytes_per_write,
        bg_bytes=bg_bytes,
        bursts=bursts.stage(inp, cpu_, data, miss_reads, bg_bytes_per_write, bg_bytes),
    )


def _background(inp: Inputs, data: DeviceSpecs, in_order: np.ndarray, writing: np.ndarray):
    """Background bytes per write replica [B], the occupancy of one background I/O [s], the
    background occupancy per write replica [s] and the background bytes per request per node [B]."""
    cfg = inp.cfg
    factor = ordering.background_write_factor(
        inp.sys.parameter(inp.params, "background_write_factor"), in_order, inp.sys.lsm
    )
    factor = compaction.background_factor(factor, inp.knobs.compactions, inp.sys.lsm)
    factor = durability.background_factor(factor, inp.knobs.durability, inp.sys.lsm)
    per_write = cfg.object_bytes * factor * writing
    occ = storage.io_occupancy(bursts.FLUSH_IO_BYTES, data.parallelism, data.write_iops, data.seq_write)
    per_request = (1 - cfg.read_fraction) * per_write * inp.layout.write_shards / cfg.nodes
    return per_write, occ, per_write / bursts.FLUSH_IO_BYTES * occ, per_request


def _lab_device(spec: DeviceSpecs, factor: float) -> DeviceSpecs:
    """A device slot whose every I/O takes ``factor`` times its catalog time: rates divided, the write
    latency multiplied (``factor`` 1: the catalog's numbers, unchanged)."""
    if np.all(np.asarray(factor) == 1.0):  # a scalar, or one per configuration (parameter draws)
        return spec
    return replace(
        spec, read_iops=spec.read_iops / factor, write_iops=spec.write_iops / factor,
        seq_read=spec.seq_read / factor, seq_write=spec.seq_write / factor,
        write_latency=spec.write_latency * factor,
    )  # fmt: skip


def _wal_occupancies(wal: DeviceSpecs, has_wal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Occupancy of a 4 KiB WAL write and read [s] (0 without a WAL device)."""
    par = np.where(has_wal, wal.parallelism, 1.0)

    def occ(iops, bandwidth):
        return np.where(
            has_wal,
            storage.io_occupancy(
                META_IO_BYTES, par, np.where(has_wal, iops, 1.0), np.where(has_wal, bandwidth, 1.0)
            ),
            0.0,
        )

    return occ(wal.write_iops, wal.seq_write), occ(wal.read_iops, wal.seq_read)


# ---------------------------------------------------------------------------------------
# paths and demands
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Paths:
    """What a request crosses besides the CPU and devices: demands [s] and the log's servers."""

    net_read: np.ndarray
    net_write: np.ndarray
    fixed_read: np.ndarray
    fixed_write: np.ndarray
    log_write: np.ndarray
    log_files: np.ndarray
    link: np.ndarray
    #: the log's work per write that no commit waits for (asynchronous commits) [s]
    log_background: np.ndarray | float = 0.0
    log_flushes: np.ndarray | float = 1.0  # flushes a commit waits for in turn [count]
    #: a cluster over availability zones (knob ``zones``): the round trip between zones [s] (0:
    #: one zone), the share of requests whose coordinator is outside the client's zone (each of
    #: the operation's ``zone_hops`` round trips then crosses), and the share of writes waiting
    #: for a replica in another zone than their coordinator [-] (:mod:`perfmodel.mechanisms.placement`);
    #: the fixed demands hold their means, :func:`tails` the mixture
    zone_rtt: np.ndarray | float = 0.0
    zone_client: np.ndarray | float = 0.0
    zone_replica: np.ndarray | float = 0.0
    zone_hops: np.ndarray | float = 1.0
    #: the share of reads waiting for a replica's digest from another zone (QUORUM reads) [-]
    zone_read_replica: np.ndarray | float = 0.0

    @property
    def zone_read_mean(self):
        """A read's mean time crossing zones [s]."""
        return zone_mean(self.zone_client, self.zone_hops, self.zone_read_replica, self.zone_rtt)

    @property
    def zone_write_mean(self):
        """A write's mean time crossing zones [s]."""
        return zone_mean(self.zone_client, self.zone_hops, self.zone_replica, self.zone_rtt)


def zone_mean(client, hops, replica, rtt):
    """Mean time a request spends crossing zones [s]: ``(p_c h + p_r) D`` (:func:`zone_mixtures`)."""
    return (client * hops + replica) * rtt


@dataclass(frozen=True)
class ScaleOut:
    """Placement imbalance (busiest over mean load) and the share of forwarded requests [-]."""

    node_imbalance: np.ndarray
    device_imbalance: np.ndarray
    forwarded: np.ndarray


def scale_out(inp: Inputs, cpu_: Cpu) -> ScaleOut:
    """The busiest node's and device's load over the mean, and coordinator forwarding
    (:mod:`perfmodel.mechanisms.placement`): a ``ring`` places ``units`` tokens per node (a node holds
    ``rf x units`` replica ranges); ``random`` places ``units`` placement groups per daemon,
    replicas counted, so a node holds ``units x daemons`` and a device ``units x daemons per
    device``."""
    cfg, sys_ = inp.cfg, inp.sys
    nodes, rf = cfg.nodes, inp.layout.write_shards
    node_imb, dev_imb = np.ones(inp.size), np.ones(inp.size)
    knob = inp.knobs.placement_units.astype(float)
    per_device = _daemons_per_device(inp)
    for code, spec in enumerate(sys_.specs):
        if spec.placement is None:
            continue
        m = sys_.codes == code
        units = np.where(np.isfinite(knob[m]), knob[m], spec.placement.units)
        if spec.placement.kind == "ring":
            node_imb[m] = placement.imbalance(nodes[m], rf[m], rf[m] * units, "ring")
            dev_imb[m] = node_imb[m]
        else:
            node_imb[m] = placement.imbalance(nodes[m], rf[m], units * cpu_.daemons[m], "random")
            dev_imb[m] = placement.imbalance(
                cpu_.devices[m] * nodes[m], rf[m], units * per_device[m], "random"
            )
    token_aware = inp.knobs.token_aware.astype(float)
    forwarded = np.where(sys_.coordinator, placement.forwarded_share(nodes, rf, token_aware), 0.0)
    return ScaleOut(node_imb, dev_imb, forwarded)


def paths(inp: Inputs, cpu_: Cpu, dev: Devices) -> Paths:
    """Network transfer, wire and stack latency (and a round trip between replicas for writes that
    wait for two or more), the VM I/O path, the redo-log flush, a client link."""
    params, plat, cfg, sys_ = inp.params, inp.plat, inp.cfg, inp.sys
    virt = cpu_.virtualization
    virt_io = np.select(
        [virt == "untuned", virt == "boost"],
        [params["virt_io_overhead_s[untuned]"], params["virt_io_overhead_s[boost]"]],
        0.0,
    )
    statements = inp.knobs.statements_per_op.astype(float)  # a round trip per statement
    rtt = np.where(sys_.remote, 2 * plat.net_latency + params["net_stack_s"], 0.0)
    wire = rtt * statements
    # a write acknowledged by two or more replicas waits for one that is not the node the client
    # reached: one more round trip between nodes (primary-copy Ceph, QUORUM / ALL writes)
    replica_hop = np.where((inp.layout.acks_waited >= 2) & (inp.layout.write_shards >= 2), rtt, 0.0)
    # a read at QUORUM / ALL waits for the digests of replicas other than its coordinator: as well
    read_hop = np.where((inp.layout.read_acks_waited >= 2) & (inp.layout.write_shards >= 2), rtt, 0.0)
    net = np.where(sys_.remote, (cfg.message_bytes + HEADER_BYTES) / plat.net_bw, 0.0) * statements
    # an erasure-coded write sends each shard its chunk (1/k of the bytes) from the primary
    net_shard = (
        np.where(
            sys_.remote, (cfg.message_bytes * inp.layout.shard_fraction + HEADER_BYTES) / plat.net_bw, 0.0
        )
        * statements
    )
    log_bytes = _log_bytes(inp)
    # a commit waits for its flushes one after the other (MySQL's binary log: the redo log's
    # prepare flush, then the binary log's), each the device's write latency and the VM I/O path
    flushes = settings.fill(inp.knobs.log_flushes, sys_.take([s.log_flushes for s in sys_.specs]))
    dur = inp.knobs.durability
    log = np.where(  # a commit waits for its flushes unless it is asynchronous (mechanisms.durability)
        sys_.sync_to_log & durability.waits_for_log(dur),
        flushes.astype(float) * (dev.data.write_latency + virt_io) + log_bytes / dev.data.seq_write,
        0.0,
    )
    # asynchronous: the log is written in batches, its bytes at the device's bandwidth, and no
    # commit waits for them
    log_background = np.where(sys_.sync_to_log, durability.background_log_bytes(log_bytes, dur), 0.0)
    log_background = log_background / dev.data.seq_write
    zone_rtt, zone_client, zone_replica, zone_read_replica = _zones(inp)
    zone_read = zone_mean(zone_client, statements, zone_read_replica, zone_rtt)
    zone_write = zone_mean(zone_client, statements, zone_replica, zone_rtt)
    gbps = inp.knobs.client_link_gbps.astype(float)
    has_link = np.isfinite(gbps)
    link_bw = np.where(has_link, gbps * 1e9 / 8, 1.0)
    return Paths(
        # a large EC read: the primary gathers k - 1 chunks from other OSDs, then sends the object
        net_read=net * (1.0 + (inp.layout.read_chunks - 1.0) / inp.layout.read_chunks),
        net_write=net_shard,
        fixed_read=wire + read_hop + zone_read + virt_io * dev.reads_per_read,
        fixed_write=wire
        + replica_hop
        + zone_write
        + virt_io * (dev.reads_per_write + dev.sync_data + dev.sync_wal),
        log_write=log,
        log_files=inp.knobs.log_files.astype(float),
        link=np.where(has_link, (cfg.message_bytes + HEADER_BYTES) / link_bw, 0.0),
        log_flushes=flushes.astype(float),
        log_background=log_background,
        zone_rtt=zone_rtt,
        zone_client=zone_client,
        zone_replica=zone_replica,
        zone_read_replica=zone_read_replica,
        zone_hops=statements,
    )


def _log_bytes(inp: Inputs) -> np.ndarray:
    """Redo bytes a write's commit flushes [B]: every writing statement's, in one flush (0 for a
    system without a redo log)."""
    sys_ = inp.sys
    log_bytes = sys_.take(
        [s.parameter(inp.params, s.log_bytes_per_write) if s.sync_writes_to == "log" else 0.0
         for s in sys_.specs]
    )  # fmt: skip
    return log_bytes * _write_statements(inp.knobs)


def _zones(inp: Inputs):
    """A cluster over availability zones: the round trip between zones [s] (0 for one zone), the
    share of requests whose coordinator is outside the client's zone and the shares of writes and
    of reads waiting for a replica answer from another zone than their coordinator's [-]
    (:func:`perfmodel.mechanisms.placement.cross_zone_client_share`, :func:`~perfmodel.mechanisms.placement.
    cross_zone_replica_share`). A system without network round trips (``remote: false``) crosses
    none."""
    cfg, plat = inp.cfg, inp.plat
    zones = settings.fill(inp.knobs.zones, 1.0).astype(float)  # unset in a list: one site
    spread = zones > 1
    if (spread & (zones > cfg.nodes)).any():
        i = int(np.argmax(spread & (zones > cfg.nodes)))
        raise ValueError(f"zones: {zones[i]:g} zones need as many nodes, got nodes={cfg.nodes[i]:g}")
    between = settings.fill(inp.knobs.zone_rtt_s, plat.zone_rtt_s).astype(float)
    if (spread & inp.sys.remote & ~np.isfinite(between)).any():  # a system without round trips crosses none
        i = int(np.argmax(spread & inp.sys.remote & ~np.isfinite(between)))
        raise ValueError(
            f"zones: {zones[i]:g} zones, but platform {plat.id[i]} has no round trip between zones "
            "(catalog zone_rtt_us, a cloud platform's; or knob zone_rtt_s); one site: zones=1"
        )
    on = spread & inp.sys.remote
    # a crossing costs the round trip between zones less the one within a zone already charged
    within = 2 * plat.net_latency
    if (on & (np.nan_to_num(between) <= within)).any():
        i = int(np.argmax(on & (np.nan_to_num(between) <= within)))
        raise ValueError(
            f"zone_rtt_s: {between[i]:g} s between zones is not above the round trip within one "
            f"({within[i]:g} s, twice the network's latency)"
        )
    rtt = np.where(on, np.nan_to_num(between) - within, 0.0)
    client = np.where(on, placement.cross_zone_client_share(zones), 0.0)
    replicated = on & (inp.layout.write_shards >= 2)
    rf = np.maximum(inp.layout.write_shards, 1.0)

    def replica_share(acks):
        return np.where(
            replicated, placement.cross_zone_replica_share(zones, rf, np.clip(acks, 1.0, rf)), 0.0
        )

    return rtt, client, replica_share(inp.layout.acks_waited), replica_share(inp.layout.read_acks_waited)


@dataclass(frozen=True)
class Demands:
    """CPU seconds per read and per write replica [s]."""

    cpu_read: np.ndarray
    cpu_write: np.ndarray


def _write_statements(knobs: settings.KnobArrays) -> np.ndarray:
    """Statements of a writing operation that write [count]: ``statements_per_op`` less its
    ``read_statements_per_op`` (a sysbench oltp_read_write transaction: 18 - 14 = 4), at least one."""
    statements = knobs.statements_per_op.astype(float)
    reads = settings.fill(knobs.read_statements_per_op, 0.0).astype(float)  # blank in a list: 0
    if (reads > statements - 1).any():
        i = int(np.argmax(reads > statements - 1))
        raise ValueError(
            f"read_statements_per_op: {reads[i]:g} leaves no writing statement of statements_per_op "
            f"({statements[i]:g}); a writing operation has at least one (a read-only one is a read: "
            "read_fraction)"
        )
    return statements - reads


def _keys_and_rows(knobs: settings.KnobArrays) -> tuple[np.ndarray, np.ndarray]:
    """Index lookups and rows per operation: ``keys_per_op`` (default: one per statement) and
    ``rows_per_op`` (default: one per lookup), never fewer than the statements / lookups."""
    statements = knobs.statements_per_op.astype(float)
    keys = np.maximum(settings.fill(knobs.keys_per_op, statements).astype(float), statements)
    rows = np.maximum(settings.fill(knobs.rows_per_op, keys).astype(float), keys)
    return keys, rows


def client_share(threads: np.ndarray, cores: np.ndarray, tpc: np.ndarray) -> np.ndarray:
    """Share of a co-located load generator's work that lands on the server's threads [-]:
    ``min(1, threads / (cores x threads_per_core))``. The load generator is pinned to the cores the
    server may use; its threads spread over their hardware threads, and those the server's threads
    do not occupy take their share of its work (a server with 8 threads on 32 hardware threads
    carries a quarter of it; sevmc's 30 threads on 30 vCPUs all of it). ``threads`` are the
    server's whether busy or not, ``cores`` those left for requests (not a daemon's idle load).
    A first-order split: idle hardware threads absorbing more than their share, and an SMT
    sibling's slowdown of the server's thread, are not modelled."""
    return np.minimum(threads / np.maximum(cores * tpc, 1.0), 1.0)


def client_cycles(inp: Inputs, share=1.0, exit_cycles=0.0) -> np.ndarray:
    """Cycles per statement a load generator on the server's cores takes from the server's threads
    [cycles].

    Zero unless knob ``client_colocated`` says the load generator is pinned to the server's CPUs.
    Then, per statement, the load generator's socket work for its share of a request message --
    the server's own, ``(s x cpu_cycles_message + exit_cycles) / iodepth`` with a guest's VM exits on
    the vCPU a reply wakes (:func:`_operation_cycles`): each side writes one message, waits for
    the other's and reads it -- and, where the spec says a command is protocol work
    (``client_mirrors_commands``: an in-memory store's GET and SET), the server's read command
    ``cpu_cycles_read`` (a SET's too: the load generator's side of a SET is a request to format and
    a reply to parse, not an item to store): the load generator formats each request and parses
    each reply as the server parses and formats them; times ``share``, the part of it the server's
    threads carry (:func:`client_share`). Assumptions: the load generator speaks the server's
    protocol as a peer (memtier, redis-benchmark); its own bookkeeping (key generation, latency
    histograms) is not counted. Time-sharing tails (a thread waiting out the other's scheduler
    slice) and the latency of waking an idle thread are not modelled.

    Where the tool's own CPU per request is given instead (knob ``client_time``, a measured cost of
    ``data/load_generators.yaml``, and no ``client_cores`` of its own), that time replaces the
    estimate (it counts the tool's socket work and its bookkeeping): ``client_time x base clock``
    cycles per operation, spread over its statements. Assumption: the tool's time as measured is
    its time at the platform's base clock; on the server's threads it then runs at their clock (SMT
    sharing, contention), as the server's own cycles do."""
    sys_, params = inp.sys, inp.params
    colocated = inp.knobs.client_colocated.astype(float)
    message = _message_cycles(inp, exit_cycles)
    command = np.where(sys_.client_mirrors_commands, sys_.parameter(params, "cpu_cycles_read"), 0.0)
    statements = inp.knobs.statements_per_op.astype(float)
    tool = settings.fill(inp.knobs.client_time, 0.0).astype(float) * inp.plat.base_hz / statements
    estimate = np.where(_client_time_on_server(inp.knobs), tool, message + command)
    return colocated * share * estimate


def _operation_cycles(inp: Inputs, client_share=1.0, exit_cycles=0.0) -> tuple[np.ndarray, np.ndarray]:
    """CPU cycles of a read and of a write replica, page misses and host I/O cost excluded [cycles]:
    statements, request messages, erasure-coded sub-reads, keys, rows and parsing.

    ``exit_cycles``: a request message's VM exits on the vCPU that receives it, as cycles at the
    thread's clock (:func:`message_exits` times the clock before contention in the serial shares,
    slowed by the contention in :func:`demands`; 0 on bare metal and without request messages): in
    a guest a message raises an interrupt, wakes its reader with an IPI, and the vCPU halts and rearms its
    timer when idle, each an exit to the host that the guest's vCPU waits out. A fixed time, not
    cycles of the guest's work: the host's world switch (for SEV-SNP the guest's own #VC handling
    too), so no clock or core speeds it up. Counted per message, like the socket work they go
    with; an assumption: the count is one measured at a moderate load, where the receiver is often
    idle -- a receiver kept busy by many connections halts less."""
    sys_, params = inp.sys, inp.params
    statements = inp.knobs.statements_per_op.astype(float)
    # a request message (socket read, parse, reply write) per statement, shared by the commands a
    # client pipelines in one message (its iodepth)
    per_message = _message_cycles(inp, exit_cycles)
    # an erasure-coded read is k sub-reads, each an operation on the OSD holding its chunk
    op_r = (sys_.parameter(params, "cpu_cycles_read") * inp.layout.read_chunks + per_message) * statements
    # a partial erasure-coded write first reads the stripe: k sub-reads, spread over its shards
    rmw_ops = sys_.parameter(params, "cpu_cycles_read") * inp.layout.rmw_reads / inp.layout.write_shards
    # a writing operation's SELECTs (read_statements_per_op) cost what a read's do
    writing = _write_statements(inp.knobs)
    op_w = ((_write_cycles(inp) + rmw_ops) * writing
            + sys_.parameter(params, "cpu_cycles_read") * inp.layout.read_chunks * (statements - writing)
            + per_message * statements)  # fmt: skip
    # index lookups beyond one per statement (IN-list keys): a B-tree descent and row fetch each;
    # rows beyond one per lookup (the next rows of a range or scan): a row visit each -- leaf-row
    # decode, predicate, visibility, copy-out (a SQL engine's per-tuple executor cost)
    keys, rows = _keys_and_rows(inp.knobs)
    extra = (sys_.parameter(params, "cpu_cycles_key") * np.maximum(keys - statements, 0.0)
             + sys_.parameter(params, "cpu_cycles_row") * np.maximum(rows - keys, 0.0))  # fmt: skip
    # a statement sent as SQL text (simple query protocol) is parsed, analysed and planned each time;
    # a prepared one skips that (PostgreSQL documentation, PREPARE)
    unprepared = 1.0 - settings.fill(inp.knobs.prepared, 1.0).astype(float)
    parse = sys_.parameter(params, "cpu_cycles_parse") * unprepared * statements
    # only the node the SQL reaches parses it, and a load generator on the server's cores works
    # once per operation; op_w is charged to each of a write's replicas
    once = parse + client_cycles(inp, client_share, exit_cycles) * statements
    op_r, op_w = op_r + extra + once, op_w + extra + once / inp.layout.write_shards
    return op_r, op_w


def demands(inp: Inputs, cpu_: Cpu, cache_: Cache, dev: Devices) -> Demands:
    """Cycles per operation, per device read and per metadata miss, at each thread's clock."""
    sys_, params = inp.sys, inp.params
    cyc_m = sys_.parameter(params, "cpu_cycles_miss")
    meta_cycles = sys_.take(
        [s.parameter(params, s.metadata_cache.cpu_cycles_per_miss) if s.metadata_cache else 0.0
         for s in sys_.specs]
    )  # fmt: skip
    cyc_meta = meta_cycles * cache_.metadata_reads * sys_.has_metadata_cache
    hz, host = cpu_.thread_hz, dev.host_cost
    # a message's VM exits take a fixed time, slowed by the threads' contention as the stall is (the
    # serial shares count them on the parallel side at the clock before contention): as cycles at
    # the thread's clock, so / hz gives that time back
    exits = message_exits(inp) * hz / cpu_.usl_efficiency
    op_r, op_w = _operation_cycles(inp, cpu_.client_share, exits)
    # [s], at any clock; slowed by the threads' contention as their cycles are (USL as slower
    # threads: the stall is part of the serial share, so Amdahl's bound holds with it)
    statements = inp.knobs.statements_per_op.astype(float)
    stall, stall_w = (cpu_.dram_stall / e * statements for e in (cpu_.usl_efficiency, cpu_.write_efficiency))
    own = cpu_.write_efficiency != cpu_.usl_efficiency  # a write replica's efficiency of its own
    hz_w = np.where(own, hz / cpu_.usl_efficiency * cpu_.write_efficiency, hz)
    # a page read costs cpu_cycles_miss whether the device or the OS page cache serves it
    read = (op_r + (dev.reads_per_read + dev.page_cache_reads) * cyc_m + cyc_meta) / hz + stall
    write = (op_w + (dev.reads_per_write + dev.page_cache_reads_write) * cyc_m + cyc_meta) / hz_w + stall_w
    return Demands(
        cpu_read=read + dev.reads_per_read * host,
        cpu_write=write + (dev.sync_data + dev.reads_per_write) * host,
    )


# ---------------------------------------------------------------------------------------
# network, model, solve
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeModel:
    """A configuration grid as networks of stations, before solving, with every stage's result.

    The discrete-event simulator runs ``net`` (:mod:`perfmodel.sim.config`),
    so it simulates exactly the system :func:`solve` solves analytically.
    """

    net: StationNetwork
    inputs: Inputs
    cpu: Cpu
    cache: Cache
    devices: Devices
    paths: Paths
    demands: Demands = field(repr=False)
    scale_out: ScaleOut | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        """Configurations [count]."""
        return self.inputs.size


#: SCV of one statement's (one request's) CPU time [-]: 0, the same code path on the same cached
#: structures each time (was 1, an exponential burst: a textbook default, never measured)
STATEMENT_CPU_SCV = 0.0


def _cpu_scv(knobs: settings.KnobArrays) -> np.ndarray:
    """SCV of an operation's CPU time [-]: ``K`` statements (mean ``k``, SCV ``c_K``), each a CPU
    burst of SCV ``c_s``, sum to SCV ``c_s / k + c_K`` (a random sum, ``Var S = k Var X + Var K
    E[X]^2``: Tijms, *A First Course in Stochastic Models*, 2003, eq. 1.2.2).

    ``c_s`` is :data:`STATEMENT_CPU_SCV`, 0: a statement's CPU time is set by its type and the data
    it touches, so what spreads an operation's CPU time is its mix (``statements_scv``: a TPC-C
    mix 0.69, sysbench's fixed transaction 0) and, above it, the queues. Evidence: Percona's
    sysbench oltp_read_only at one thread (one client, no queue) records p95 / mean of 1.03-1.10
    (m6g.16xlarge, 1.42-1.50 ms against 1 / 689-736 tps), where exponential statements give
    1.44 (Erlang-14). The solver uses the SCV in the waits too (:mod:`perfmodel.solve.network`); with
    both, the seeds' fit, which never sees that source, moves little (leave-one-group-out median
    factor 1.2037x -> 1.2046x, leave-one-out median |rel| 18.6% -> 18.4%). Not modelled: the OS's own noise
    (interrupts, preemption), which a one-thread run shows as p95 / mean just above 1.
    """
    k = knobs.statements_per_op.astype(float)
    return STATEMENT_CPU_SCV / k + settings.fill(knobs.statements_scv, 0.0).astype(float)


def network(inp: Inputs, cpu_: Cpu, dev: Devices, path: Paths, dem: Demands, so: ScaleOut) -> StationNetwork:
    """The stations of :data:`perfmodel.solve.network.STATIONS`: demands, servers, multiplicity, visits.

    A forwarded request (``so.forwarded`` of them) costs its coordinator
    ``cpu_cycles_forward``, one more message transfer and one more network round trip;
    a write's share is spread over its replicas' demands (the sum per request is one
    forward). Placement imbalance scales each node's (device's) load to the busiest one's.
    """
    size, k, cfg = inp.size, len(STATIONS), inp.cfg
    nodes, rf = cfg.nodes, inp.layout.write_shards
    fwd = so.forwarded
    cyc_fwd = inp.sys.take(
        [s.parameter(inp.params, "cpu_cycles_forward") if s.coordinator else 0.0 for s in inp.sys.specs]
    )
    fwd_cpu = fwd * cyc_fwd / cpu_.thread_hz  # [s] per request
    hop = fwd * np.where(inp.sys.remote, 2 * inp.plat.net_latency + inp.params["net_stack_s"], 0.0)
    d_read, d_write = np.zeros((size, k)), np.zeros((size, k))
    servers, mult, scv = np.ones((size, k)), np.ones((size, k)), np.ones((size, k))
    cores = inp.knobs.client_cores.astype(float)
    client = np.where(np.isfinite(cores), client_time(inp.knobs, inp.params), 0.0)
    client_servers = np.where(np.isfinite(cores), cores, 1.0)
    rows = {
        # station: (read demand, write demand, servers, multiplicity, scv)
        "network": (path.net_read * (1 + fwd), path.net_write + fwd * path.net_read / rf, 1.0, nodes, 0.0),
        "cpu": (dem.cpu_read + fwd_cpu, dem.cpu_write + fwd_cpu / rf,
                np.where(inp.sys.hashed, 1.0, cpu_.threads),
                np.where(inp.sys.hashed, cpu_.threads, 1.0) * nodes, _cpu_scv(inp.knobs)),
        "device": (dev.d_read, dev.d_write, np.floor(dev.data.p_eff), cpu_.devices * nodes, 1.0),
        "wal": (dev.d_wal_read, dev.d_wal_write, np.where(dev.has_wal, np.floor(dev.wal.parallelism), 1.0),
                nodes, 1.0),
        # group commit: a flush takes every commit waiting, so commits do not queue for the log
        # (as many flush slots as requests can be outstanding)
        # k flushes in turn, each exponential: SCV 1 / k
        "log": (0.0, path.log_write,
                np.where(inp.sys.group_commit, np.maximum(path.log_files, cfg.population), path.log_files),
                nodes, 1.0 / path.log_flushes),
        "client_link": (path.link, path.link, 1.0, 1.0, 0.0),
        # the load generator's cores: its time per request, exponential (a CPU's mix of work)
        "client": (client, client, client_servers, 1.0, 1.0),
        "fixed": (path.fixed_read + hop, path.fixed_write + hop, np.inf, 1.0, 0.0),
    }  # fmt: skip
    for name, (r, w, c, m, v) in rows.items():
        i = IX[name]
        d_read[:, i], d_write[:, i], servers[:, i], mult[:, i], scv[:, i] = r, w, c, m, v
    # background writes occupy the device (capacity, queues) but no client waits for them
    load_write = np.zeros((size, k))
    load_write[:, IX["device"]] = dev.d_background + dev.d_destage
    load_write[:, IX["wal"]] = dev.d_wal_destage
    load_write[:, IX["log"]] = path.log_background  # an asynchronous commit's log, written later
    # of which the drives' destage holds the server right after the write's own I/O; the rest
    # (checkpoints, page cleaning, flushes) is a background job of its own per write replica
    destage = np.zeros((size, k))
    destage[:, IX["device"]], destage[:, IX["wal"]] = dev.d_destage, dev.d_wal_destage
    # a drive's command queue serves in arrival order; threads, links and the log time-share
    fcfs = np.zeros((size, k), dtype=bool)
    fcfs[:, IX["device"]] = fcfs[:, IX["wal"]] = True
    # an LSM store writes its background bytes in flush bursts (the burst terms), not as jobs
    flush = np.zeros((size, k))
    flush[:, IX["device"]] = np.where(inp.sys.lsm, dev.d_background, 0.0)
    # visits per request: the device only on a cache miss, the WAL device for its own I/O
    v_read, v_write = (d_read > 0).astype(float), (d_write > 0).astype(float)
    v_read[:, IX["device"]] = dev.reads_per_read + np.where(dev.metadata_on_data, dev.metadata_reads, 0.0)
    v_write[:, IX["device"]] = dev.reads_per_write + dev.sync_data
    v_read[:, IX["wal"]] = np.where(inp.sys.has_metadata_cache & dev.has_wal, dev.metadata_reads, 0.0)
    v_write[:, IX["wal"]] = dev.sync_wal
    imbalance = np.ones((size, k))
    for name in ("network", "cpu", "wal", "log"):
        imbalance[:, IX[name]] = so.node_imbalance
    imbalance[:, IX["device"]] = so.device_imbalance
    b = dev.bursts
    return StationNetwork(
        d_read, d_write, servers, mult, scv, cfg.read_fraction, rf, inp.layout.acks_waited,
        burst_duty_per_op=b.duty_per_op, burst_backlog=b.backlog, burst_reach=b.reach,
        flush_queue_share=b.queue_share, burst_read_cap=b.read_cap,
        burst_devices=cpu_.devices * nodes, burst_size_scv=b.size_scv, stall_share=b.stall_share,
        load_write=load_write, destage=destage, flush=flush, fcfs=fcfs,
        v_read=v_read, v_write=v_write, imbalance=imbalance,
        wait_scv=inp.knobs.wait_scv.astype(float),
    )  # fmt: skip


def build(platform, workload: Workload, *, nodes=1, params=None, system, **knobs) -> NodeModel:
    """Run the build stages: the stations of every configuration, unsolved."""
    return build_from(inputs(platform, workload, nodes=nodes, params=params, system=system, knobs=knobs))


def build_from(inp: Inputs) -> NodeModel:
    """The build stages on resolved inputs."""
    cpu_ = cpu(inp)
    cache_ = cache(inp, cpu_)
    dev = devices(inp, cpu_, cache_)
    path = paths(inp, cpu_, dev)
    dem = demands(inp, cpu_, cache_, dev)
    so = scale_out(inp, cpu_)
    return NodeModel(network(inp, cpu_, dev, path, dem, so), inp, cpu_, cache_, dev, path, dem, so)


def solve(model: NodeModel) -> Solution:
    """Solve every configuration's network: closed loop (approximate MVA) or open arrivals."""
    cfg = model.inputs.cfg
    if model.inputs.workload.closed:
        return solve_closed(model.net, cfg.population, model.inputs.effective_think_time_s)
    return solve_open(model.net, cfg.arrival_rate)


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tails:
    """Latency means and percentiles [s] per class (read, write) and overall; ``burst_duty`` [-]."""

    mean_read: np.ndarray
    mean_write: np.ndarray
    mean: np.ndarray
    quantiles: dict  # "p50" / "p95" / "p99" / "p999" -> (read, write, overall)
    burst_duty: np.ndarray
    #: share of requests that meet a flush burst (reads) or a memtable stall (writes) [-]: where it
    #: passes 1% the p99 moves from the service body into those waits (a step in the p99)
    tail_event_share: np.ndarray


def tails(model: NodeModel, sol: Solution) -> Tails:
    """Each class's latency = its fixed part (wire, transfers, VM I/O path) + a gamma with the
    mean and variance of its queueing and service times; a read that meets a flush burst also
    waits behind a share of the burst backlog B, a write held by memtable back-pressure waits the
    rest of a flush (:func:`perfmodel.mechanisms.bursts.closed_loop_burst`; docs/models.md)."""
    net, x, inp = model.net, sol.throughput, model.inputs
    f = inp.cfg.read_fraction
    mean_r, var_r, mean_w, var_w = class_moments(net, sol)
    # writes held by memtable back-pressure (solve_closed): a share p_stall of them waits the
    # rest of a flush, stall / p_stall on average -- taken as that constant
    stall = np.zeros(inp.size) if sol.write_stall is None else sol.write_stall
    p_stall = np.ones(inp.size) if sol.write_stall_probability is None else sol.write_stall_probability
    shift_r, shift_w = deterministic_part(net, sol)
    # zone crossings (a cluster over availability zones): the fixed part holds their mean; the
    # latency is a mixture over how many round trips between zones the request makes
    zones_r, zones_w = zone_mixtures(model.paths)
    # a read that meets a flush burst waits in it (closed loop: fewer reads meet it, each longer)
    population = inp.cfg.population if inp.workload.closed else None
    burst = bursts.read_tail(net, model.devices.bursts, x, population)
    vr_mean, vr_var = _spread(mean_r, var_r, shift_r)
    vw_mean, vw_var = _spread(mean_w, var_w, shift_w)
    # the fixed part without the zone crossings' mean: each mixture part adds its own crossings
    shift_r, shift_w = shift_r - model.paths.zone_read_mean, shift_w - model.paths.zone_write_mean
    read_parts = [(1 - burst.p_burst, vr_mean, vr_var, shift_r)] + [
        (burst.p_size[:, j], vr_mean + burst.wait_mean[:, j], vr_var + burst.wait_var[:, j], shift_r)
        for j in range(burst.p_size.shape[1])
    ]
    p_stalled = np.where(stall > 0, p_stall, 0.0)
    write_parts = [
        (1 - p_stalled, vw_mean, vw_var, shift_w),
        (p_stalled, vw_mean + np.where(stall > 0, stall / p_stall, 0.0), vw_var, shift_w),
    ]
    read_parts = [(w * p, m, v, sh + e) for p, e in zones_r for w, m, v, sh in read_parts]
    write_parts = [(w * p, m, v, sh + e) for p, e in zones_w for w, m, v, sh in write_parts]
    zoned = np.broadcast_to(np.asarray(model.paths.zone_rtt) > 0, (inp.size,))
    quantiles = _quantiles(
        f, (mean_r, mean_w), read_parts, write_parts, burst.p_burst, stall, inp.size, zoned
    )
    mean_r_total, mean_w_total = mean_r + burst.mean_wait, mean_w + stall
    with np.errstate(invalid="ignore"):
        mean = _weighted(f, mean_r_total) + _weighted(1 - f, mean_w_total)
    share_events = _weighted(f, burst.p_burst) + _weighted(1 - f, p_stalled)
    return Tails(mean_r_total, mean_w_total, mean, quantiles, burst.duty, share_events)


def zone_mixtures(path: Paths):
    """A read's and a write's zone crossings as ``[(probability, time [s]), ...]``, the first
    none: a request crosses on all its ``h`` round trips when its coordinator is outside the
    client's zone (``p_c``), and waits for one more round trip between zones when its
    coordinator's zone lacks a replica answer it needs (``p_r``: a write's acks, a QUORUM read's
    digests; independent of the client's zone) -- ``0``, ``D``, ``h D`` or ``(h + 1) D`` with
    ``D`` the round trip between zones less the one within."""
    d, pc, h = path.zone_rtt, path.zone_client, path.zone_hops

    def mixture(pr):
        return [
            ((1 - pc) * (1 - pr), 0.0),
            ((1 - pc) * pr, d),
            (pc * (1 - pr), h * d),
            (pc * pr, (h + 1) * d),
        ]

    return mixture(path.zone_read_replica), mixture(path.zone_replica)


def _spread(mean, var, shift):
    """The variable part as a gamma's mean and variance; a floor keeps it proper."""
    part = np.maximum(mean - shift, 1e-12)
    return part, np.maximum(var, (1e-9 * part) ** 2)


def _weighted(weight, value):
    """``weight * value``, with ``0 * inf = 0`` for an absent class."""
    present = weight > 0
    return np.where(present, weight * np.where(present, value, 0.0), 0.0)


def _quantiles(f, means, read_parts, write_parts, p_burst, stall, size, zoned=False) -> dict:
    """p50 / p95 / p99 / p99.9 of reads, writes and their mix (mixtures solved exactly where needed:
    flush bursts, memtable stalls, zone crossings -- ``zoned``)."""
    mean_r, mean_w = means
    has_r, has_w = f > 0, f < 1
    finite = np.isfinite(mean_r) & np.isfinite(mean_w)
    # each class's own mixture where that class is finite (a saturated write must not drop the
    # reads' bursts or zone crossings)
    need_r, need_w, both = (
        has_r & ((p_burst > 0) | zoned) & np.isfinite(mean_r),
        has_w & ((stall > 0) | zoned) & np.isfinite(mean_w),
        has_r & has_w & finite,
    )

    def subset(parts, mask):
        return [
            tuple(np.broadcast_to(np.asarray(a, dtype=float), (size,))[mask] for a in part) for part in parts
        ]

    read_sub, write_sub = subset(read_parts, need_r), subset(write_parts, need_w)
    mix_sub = subset(
        [(f * w, m, v, sh) for w, m, v, sh in read_parts]
        + [((1 - f) * w, m, v, sh) for w, m, v, sh in write_parts],
        both,
    )
    (_, vr_mean, vr_var, shift_r), (_, vw_mean, vw_var, shift_w) = read_parts[0], write_parts[0]
    out = {}
    for q, name in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99"), (0.999, "p999")):
        r_q = _class_quantile(q, shift_r, vr_mean, vr_var, need_r, read_sub)
        w_q = _class_quantile(q, shift_w, vw_mean, vw_var, need_w, write_sub)
        overall = np.where(has_r, r_q, w_q)
        if both.any():  # the read / write mix, solved exactly; it lies between the classes' own
            lo, hi = np.minimum(r_q, w_q)[both], np.maximum(r_q, w_q)[both]
            overall[both] = mixture_quantile(q, mix_sub, bracket=(lo, hi))
        out[name] = (
            np.where(np.isfinite(mean_r), r_q, np.inf),
            np.where(np.isfinite(mean_w), w_q, np.inf),
            np.where(finite | ~(has_r & has_w), overall, np.inf),
        )
    # a narrow distribution's levels are solved to a root tolerance, not exactly: they must not
    # fall from one level to the next (p95 above p99 by 1e-8 s at a fixed service time)
    names = list(out)
    for i in range(3):
        levels = np.maximum.accumulate(np.stack([out[n][i] for n in names]), axis=0)
        for n, row in zip(names, levels, strict=True):
            out[n] = out[n][:i] + (row,) + out[n][i + 1 :]
    return out


def _class_quantile(q, shift, mean, var, mixed, mixture_parts) -> np.ndarray:
    """A class's q-quantile: its gamma body, or the mixture's where it has one (``mixed``)."""
    out = np.empty(np.shape(mean))
    plain = ~mixed
    out[plain] = np.broadcast_to(shift, out.shape)[plain] + gamma_ppf(
        q, np.broadcast_to(mean, out.shape)[plain], np.broadcast_to(var, out.shape)[plain]
    )
    if mixed.any():
        out[mixed] = mixture_quantile(q, mixture_parts)
    return out


@dataclass(frozen=True)
class IoRates:
    """What one data device sees: IOPS [1/s], bytes [B/s], queue depth [count]."""

    read_iops: np.ndarray
    write_iops: np.ndarray
    read_bytes_s: np.ndarray
    write_bytes_s: np.ndarray
    queue_depth: np.ndarray


def io_rates(model: NodeModel, sol: Solution) -> IoRates:
    """Device I/O rates from the throughput, and outstanding I/Os by Little's law."""
    dev, inp, x = model.devices, model.inputs, sol.throughput
    f, rf, nodes = inp.cfg.read_fraction, inp.layout.write_shards, inp.cfg.nodes
    devices = model.cpu.devices
    per_dev = x / (devices * nodes)
    metadata = np.where(dev.metadata_on_data, dev.metadata_reads, 0.0)
    read_ios = per_dev * (f * (dev.reads_per_read + metadata) + (1 - f) * rf * dev.reads_per_write)
    sync_write_ios = per_dev * (1 - f) * rf * dev.sync_data
    background = x * dev.bg_bytes / devices
    write_ios = sync_write_ios + background / bursts.FLUSH_IO_BYTES
    # outstanding requests per station; a class that is absent adds nothing
    queue = x[:, None] * (_weighted(f[:, None], sol.r_read) + _weighted(((1 - f) * rf)[:, None], sol.r_write))
    return IoRates(
        read_iops=read_ios,
        write_iops=write_ios,
        read_bytes_s=read_ios * dev.io_bytes,
        write_bytes_s=sync_write_ios * dev.io_bytes + background,
        queue_depth=queue[:, IX["device"]] / (devices * nodes),
    )


def report(model: NodeModel, sol: Solution) -> pd.DataFrame:
    """The output frame (:data:`perfmodel.model.predict.OUTPUT_COLUMNS`), then the systems' report hooks."""
    inp, x, sat = model.inputs, sol.throughput, sol.saturated
    t, io = tails(model, sol), io_rates(model, sol)
    # a load that leaves no throughput or an infinite latency is past capacity, open loop or closed
    endless = ~np.isfinite(t.mean) | np.any([~np.isfinite(t.quantiles[q][2]) for q in t.quantiles], axis=0)
    sat = sat | ~(x > 0) | endless
    f = inp.cfg.read_fraction
    has_r, has_w = f > 0, f < 1

    def ms(v, cls_mask=None):
        v = np.where(sat, np.inf, v) * 1e3
        return np.where(cls_mask, v, np.nan) if cls_mask is not None else v

    stations = [s for s in STATIONS if s != "fixed"]
    util = {f"util_{s}": sol.utilization[:, IX[s]] for s in stations}
    codes = np.argmax(np.stack(list(util.values()), axis=1), axis=1)
    frame = pd.DataFrame(
        {
            "platform": _categorical(inp.plat.id),
            "system": pd.Categorical.from_codes(inp.sys.codes, [s.id for s in inp.sys.specs]),
            "nodes": inp.cfg.nodes,
            "cores": model.cpu.cores,
            "threads_per_core": model.cpu.threads_per_core,
            "shards": model.cpu.threads,
            "device": _categorical(model.devices.data.ids),
            "concurrency": inp.cfg.population if inp.workload.closed else np.nan,
            "arrival_rate": inp.cfg.arrival_rate,
            "read_fraction": f,
            "cache_hit_ratio": model.cache.data_hit,
            "throughput_ops_s": x,
            "latency_mean_ms": ms(t.mean),
            **{f"latency_{q}_ms": ms(t.quantiles[q][2]) for q in ("p50", "p95", "p99", "p999")},
            "read_latency_mean_ms": ms(t.mean_read, has_r),
            **{f"read_latency_{q}_ms": ms(t.quantiles[q][0], has_r) for q in ("p50", "p95", "p99", "p999")},
            "write_latency_mean_ms": ms(t.mean_write, has_w),
            **{f"write_latency_{q}_ms": ms(t.quantiles[q][1], has_w) for q in ("p50", "p95", "p99", "p999")},
            **util,
            "device_queue_depth": io.queue_depth,
            "device_read_iops": io.read_iops,
            "device_write_iops": io.write_iops,
            "device_read_bytes_s": io.read_bytes_s,
            "device_write_bytes_s": io.write_bytes_s,
            "burst_duty": t.burst_duty,
            "tail_event_share": t.tail_event_share,
            "bottleneck": pd.Categorical.from_codes(codes, stations),
            "saturated": sat,
        }
    )
    if inp.workload.operation == "tpcc":
        frame["tpmc"] = np.nan
    for code, spec in enumerate(inp.sys.specs):
        for hook in spec.hooks:
            HOOKS[hook](frame, x, inp.sys.codes == code, inp.params)
    return frame


def _categorical(values) -> pd.Categorical:
    """A string column as a Categorical (fast to build, small, sorts by name)."""
    codes, names = pd.factorize(values)
    return pd.Categorical.from_codes(codes, [str(n) for n in names])


# ---------------------------------------------------------------------------------------
# the whole chain, on the machine's cores
# ---------------------------------------------------------------------------------------

#: configurations per thread below which a grid runs in one thread
THREAD_MIN = 10_000


def run(inp: Inputs, threads: int | None = None) -> pd.DataFrame:
    """Build, solve and report every configuration.

    A large grid is cut into contiguous parts run in threads (numpy and
    scipy release the GIL in their array loops, so the parts use the
    machine's cores without new processes); every stage is per
    configuration, so the table is the same, to the bit, as one part's.
    ``threads``: default the available cores (1 inside a worker process of
    :mod:`perfmodel.run.execution`, which already spreads work over the cores).
    """
    import os

    if threads is None:
        threads = 1 if execution._IN_WORKER else len(os.sched_getaffinity(0))
    parts = max(1, min(int(threads), inp.size // THREAD_MIN))
    if parts == 1:
        model = build_from(inp)
        return report(model, solve(model))
    from concurrent.futures import ThreadPoolExecutor

    bounds = np.linspace(0, inp.size, parts + 1).astype(int)

    def one(i):
        model = build_from(inp.take(slice(bounds[i], bounds[i + 1])))
        return report(model, solve(model))

    with ThreadPoolExecutor(parts) as pool:
        frames = list(pool.map(one, range(parts)))
    frame = pd.concat(frames, ignore_index=True)
    for col in ("platform", "device"):  # categories differ between parts: rebuild as a whole run does
        frame[col] = _categorical(frame[col].astype(object).to_numpy())
    return frame
