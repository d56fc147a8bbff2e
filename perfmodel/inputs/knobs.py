"""Configuration knobs, defined once: name, unit, kind, default and allowed values.

Every entry point builds a configuration's knobs through :func:`resolve`:
``perfmodel.predict(**knobs)``, ``size``, ``simulate``, a workload file's
``knobs:`` section, the command line's ``--set KNOB=VALUE`` (parsed by
:func:`parse`) and the recorded-figure predictor. A knob the caller does not
set takes its default; "platform" defaults come from the platform (its cores,
SMT mode, data device and count, WAL device) and "derived" ones from the
model (the cache from the system's share of RAM, the thread cap from the
system spec). An unknown knob, a value of the wrong type or out of range is a
``ValueError`` naming the knob and what is allowed.

A knob that means something only for some systems names in ``applies`` the
system spec's declared field that makes it apply (:data:`APPLIES`: ``ec_k``
needs ``daemons`` placed at random, ``osds_per_device`` needs ``daemons``,
``log_files`` needs ``sync_writes_to: log``, ...). :func:`check_applies`
refuses such a knob set for a configuration whose system lacks the field,
naming the knob and the system: a knob of another system never changes an
answer silently.

Knob values may be scalars or arrays (one per configuration). Inside an
array, ``None`` (text knobs) or NaN (numbers) means "not set" for that
configuration -- how the vectorised figure predictor mixes configurations
that set a knob with ones that do not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, make_dataclass
from typing import Any

import numpy as np
import pandas as pd

from perfmodel.inputs.systems import list_systems, load_system


@dataclass(frozen=True)
class Knob:
    """One knob: ``kind`` is ``count`` (a whole number >= 1), ``number`` (finite, > 0; >= 0 with ``zero``),
    ``bool``, ``choice`` (one of ``choices``) or ``id`` (a catalog id; ``""`` allowed
    where ``empty`` says what it means)."""

    name: str
    kind: str
    unit: str
    default: Any
    description: str
    choices: tuple[str, ...] = ()
    empty: str = ""
    #: a ``number`` that may be 0 (finite, >= 0)
    zero: bool = False
    #: largest allowed value of a ``number`` or ``count``
    maximum: float = math.inf
    #: why ``maximum`` bounds it (said in the error)
    maximum_reason: str = ""
    #: the system spec field that makes the knob apply (a key of :data:`APPLIES`; "": every system)
    applies: str = ""
    #: the recorded-figure column (:data:`perfmodel.evidence.recorded.COLUMNS`) that sets this knob
    #: as it is ("": none, or one the figure predictor translates itself)
    column: str = ""
    #: the column's unit in the knob's (SI) unit: a ``cache_gb`` of 1 is a ``cache_bytes`` of 1e9
    column_scale: float = 1.0


#: what makes a knob apply: name -> (test of a :class:`perfmodel.inputs.systems.SystemSpec`, the spec
#: field as a spec file declares it, what it means). A knob set where the test fails is refused
#: (:func:`check_applies`).
APPLIES: dict[str, tuple[Any, str, str]] = {
    # an erasure-coded pool stores an object as k + m chunks on as many daemons, placed at random
    # (CRUSH): a store of daemons with random placement (Ceph) has pools to code
    "erasure_coding": (
        lambda s: s.daemons is not None and s.placement is not None and s.placement.kind == "random",
        "daemons and placement {kind: random}",
        "objects' chunks on daemons placed at random: erasure-coded pools",
    ),
    "daemons": (lambda s: s.daemons is not None, "daemons", "it runs daemons per data device"),
    "log": (lambda s: s.sync_writes_to == "log", "sync_writes_to: log", "a commit waits for its redo log"),
    "coordinator": (lambda s: s.coordinator, "coordinator: true", "any node coordinates a request"),
    "placement": (lambda s: s.placement is not None, "placement", "it spreads data over placement units"),
    "lsm": (lambda s: s.lsm, "lsm: true", "memtable flushes write in bursts"),
    "memtables": (
        lambda s: "vector_insert_saving" in s.parameters,
        "parameters: vector_insert_saving",
        "its spec measures a vector memtable's insert",
    ),
    "logged": (
        lambda s: s.lsm or s.sync_writes_to == "log",
        "lsm: true or sync_writes_to: log",
        "writes go to a write-ahead or redo log",
    ),
    "remote": (lambda s: s.remote, "remote: true", "clients reach it over the network"),
    "cache": (
        lambda s: s.data_cache or s.metadata_cache is not None,
        "data_cache: true or metadata_cache",
        "it caches in memory",
    ),
}


UNSET = object()  # default of knobs whose value comes from the platform or the model
#: most statements one operation runs [count]: TPC-C's largest transaction (Delivery) runs about 70,
#: sysbench's 18; 10,000 is a batch job whose latency is seconds. Beyond it an operation is no
#: longer a request of a closed loop (1e9 of them drove the throughput to 0.001 ops/s, a p99 of 50 days)
STATEMENTS_MAX = 1e4

KNOBS: dict[str, Knob] = {
    k.name: k
    for k in (
        Knob(
            "cores",
            "count",
            "count",
            UNSET,
            "physical cores the system may use (default: the platform's)",
            column="cores_used",
        ),
        Knob(
            "threads_per_core",
            "count",
            "count",
            UNSET,
            "SMT mode (default: the platform's)",
            column="threads_per_core",
        ),
        Knob("device", "id", "", UNSET, "data device id (default: the platform's)", column="device_id"),
        Knob("devices", "count", "count", UNSET, "data devices per node (default: the platform's)"),
        Knob(
            "wal_device",
            "id",
            "",
            UNSET,
            "WAL / DB device id (default: the platform's)",
            empty="no separate WAL device",
        ),
        Knob(
            "cache_bytes",
            "number",
            "B",
            UNSET,
            "cache per node (per daemon for Ceph); default: a share of RAM",
            applies="cache",
            column="cache_gb",
            column_scale=1e9,
        ),
        Knob(
            "cache_state",
            "choice",
            "",
            "warm",
            "warm (the cache model's hit ratio), cold (after a restart every read misses) or "
            "resident (every read hits: the data a run touches is in memory)",
            choices=("warm", "cold", "resident"),
        ),  # fmt: skip
        Knob(
            "client_colocated",
            "bool",
            "",
            False,
            "the load generator is pinned to the cores the server may use: its socket work per request "
            "message, and per command where the system's spec says a command is protocol work (an "
            "in-memory store's), takes the server's threads' share of those cores' hardware threads "
            "(chain.client_cycles, chain.client_share)",
            applies="remote",
        ),
        Knob(
            "client_cores",
            "count",
            "count",
            UNSET,
            "hardware threads of the load-generator machines together: the load generator's time per "
            "request (knob client_time) is then served on them, queueing when they are busy and "
            "inside the latency the clients measure (station client); unset: that time is spent "
            "between a reply and the next request, outside the latency",
            maximum=1e6,
            maximum_reason="a million hardware threads of load generators",
            column="client_cores",
        ),
        Knob(
            "client_time",
            "number",
            "s",
            UNSET,
            "the load generator's own CPU time per request (default: the parameter client_time_s, 0 in "
            "the shipped sets; a recorded figure's load_generator column sets the tool's measured cost, "
            "data/load_generators.yaml): served on client_cores where given; else, with "
            "client_colocated, taken from the server's cores as cycles at the platform's base clock, in "
            "place of the peer-protocol estimate (chain.client_cycles); else spent between a reply and "
            "the next request",
            zero=True,
            maximum=0.01,
            maximum_reason="10 ms of a load generator's CPU per request is a batch job, not a request",
        ),
        Knob("numa_binding", "bool", "", False, "the process is bound to the NUMA nodes it needs"),
        Knob(
            "osds_per_device",
            "count",
            "count",
            2.0,
            "daemons per data device (Ceph OSDs)",
            applies="daemons",
            column="osds_per_device",
        ),
        Knob(
            "cores_per_device",
            "number",
            "count",
            UNSET,
            "cores per data device (caps cores)",
            column="cores_per_device",
        ),
        Knob(
            "log_files",
            "count",
            "count",
            2.0,
            "redo log files flushed concurrently",
            applies="log",
            column="log_files",
        ),
        Knob(
            "log_flushes",
            "count",
            "count",
            UNSET,
            "synchronous log flushes a commit waits for in turn (default: the system's; MySQL with its "
            "binary log and sync_binlog=1: 2, without it: 1)",
            applies="log",
        ),
        Knob("virtualization", "choice", "", "none", "VM I/O path", choices=("none", "untuned", "boost")),
        Knob(
            "client_link_gbps",
            "number",
            "Gb/s",
            UNSET,
            "a shared client-side link the load crosses",
            applies="remote",
            column="client_link_gbps",
        ),
        Knob(
            "thread_cap",
            "count",
            "count",
            UNSET,
            "worker threads at most (default: the system's)",
            column="shards",
        ),
        Knob(
            "network",
            "id",
            "",
            UNSET,
            "network id of every node's NIC (default: the platform's)",
            column="network_id",
        ),
        Knob(
            "zones",
            "count",
            "count",
            1.0,
            "availability zones of a cloud region the nodes and each key's replicas are spread over "
            "(replicas on distinct zones first): a request crosses zones to a coordinator outside the "
            "client's zone, 1 - 1/zones of them, and to a replica answer its coordinator's zone lacks, "
            "each crossing the round trip between zones (zone_rtt_s) less the one within a zone "
            "(perfmodel.mechanisms.placement); 1: one site",
            applies="remote",
            column="zones",
        ),
        Knob(
            "zone_rtt_s",
            "number",
            "s",
            UNSET,
            "round trip between two availability zones of the region (default: the platform's catalog "
            "zone_rtt_us, a typical region's; regions differ)",
            maximum=0.1,
            applies="remote",
            column="zone_rtt_us",
            column_scale=1e-6,
        ),
        Knob(
            "token_aware",
            "number",
            "-",
            1.0,
            "share of requests clients send straight to a replica, 0..1 (1: token-aware driver, "
            "0: round robin, a non-replica coordinator forwards)",
            zero=True,
            maximum=1.0,
            applies="coordinator",
        ),
        Knob(
            "ec_k",
            "count",
            "count",
            UNSET,
            "erasure coding: data chunks k of a k+m pool (Ceph; unset: replicated, as replication_factor)",
            applies="erasure_coding",
        ),
        Knob(
            "ec_m",
            "count",
            "count",
            UNSET,
            "erasure coding: coding chunks m of a k+m pool (with ec_k)",
            applies="erasure_coding",
        ),
        Knob(
            "copies_per_node",
            "count",
            "count",
            1.0,
            "most copies or erasure-coded chunks of one object a node holds (1: each on its own node, "
            "Ceph's default crush-failure-domain=host; more with crush-failure-domain=osd, e.g. a pool "
            "on one host)",
            applies="erasure_coding",
            column="copies_per_node",
        ),
        Knob(
            "statements_per_op",
            "count",
            "count",
            UNSET,
            "statements one operation runs (a sysbench transaction: 14 SELECTs ...): CPU, page reads, "
            "dirty pages and round trips per statement; one commit per operation (default: the system's "
            "tpcc_statements for a TPC-C operation, else 1); at most 10,000",
            maximum=STATEMENTS_MAX,
            maximum_reason="more is a batch job, not a request: the throughput goes to zero",
            column="statements_per_op",
        ),
        Knob(
            "read_statements_per_op",
            "number",
            "count",
            0.0,
            "statements of a writing operation that only read, at most statements_per_op - 1 (a sysbench "
            "oltp_read_write transaction: 14 of 18 SELECTs; pgbench's TPC-B: 1 of 5): each costs the "
            "system's read cycles and writes no redo and no dirty page; the operation still commits",
            zero=True,
            maximum=1e6,
            column="read_statements_per_op",
        ),
        Knob(
            "statements_scv",
            "number",
            "-",
            UNSET,
            "squared coefficient of variation of the statements per operation, >= 0 (0: every operation "
            "runs statements_per_op; a TPC-C mix of 2 to 70 statements: 0.69): an operation's CPU time "
            "has this SCV (a statement's own CPU time is fixed, chain.STATEMENT_CPU_SCV; default: the "
            "system's tpcc_statements_scv for a TPC-C operation, else 0)",
            zero=True,
            maximum=100.0,
        ),
        Knob(
            "wait_scv",
            "number",
            "-",
            UNSET,
            "least squared coefficient of variation of a request's wait at a station, >= 0: the order "
            "the server takes waiting requests in (0: first come, first served, a saturated closed "
            "loop's wait almost fixed; 1: random order, exponential); it spreads the latency's "
            "percentiles, not its mean (default: the system's wait_scv, 0 unless its spec sets one)",
            zero=True,
            maximum=100.0,
        ),
        Knob(
            "keys_per_op",
            "number",
            "count",
            UNSET,
            "index lookups (B-tree descents) one operation's statements make in all, an average where "
            "they differ (an IN list of 100 keys: 100; default: one per statement): each beyond one per "
            "statement costs the system's cpu_cycles_key and, uncached, a page read",
            column="keys_per_op",
        ),
        Knob(
            "rows_per_op",
            "number",
            "count",
            UNSET,
            "table rows one operation's statements visit in all (a 100-row range: 100; default: one per "
            "index lookup): each row beyond one per lookup (the next row of a range or scan) costs the "
            "system's cpu_cycles_row",
            column="rows_per_op",
        ),
        Knob(
            "prepared",
            "number",
            "-",
            1.0,
            "share of statements sent as server-side prepared statements, 0..1 (1: prepared; 0: SQL text, "
            "parsed and planned every time, as pgbench's default simple mode): each unprepared statement "
            "costs the system's cpu_cycles_parse",
            zero=True,
            maximum=1.0,
        ),
        Knob(
            "placement_units",
            "number",
            "count",
            UNSET,
            "placement units: tokens per node (ring) or placement groups per daemon (default: the system's)",
            applies="placement",
        ),
        Knob(
            "memtable",
            "choice",
            "",
            "skiplist",
            "the memtable's representation: skiplist (RocksDB's default: an insert finds its key's "
            "place) or vector (an append, sorted when flushed: db_bench's bulk loads); a vector "
            "insert skips the spec's vector_insert_saving share of a write's CPU",
            choices=("skiplist", "vector"),
            applies="memtables",
            column="memtable",
        ),
        Knob(
            "durability",
            "choice",
            "",
            "spec",
            "spec (as the system's spec: a redo-log commit waits for its flush), async (commits do not "
            "wait; the log is written in the background: synchronous_commit=off, "
            "innodb_flush_log_at_trx_commit=0/2) or off (no log: RocksDB disableWAL) "
            "(mechanisms.durability)",
            choices=("spec", "async", "off"),
            applies="logged",
            column="durability",
        ),
        Knob(
            "compactions",
            "choice",
            "",
            "auto",
            "auto (an LSM tree compacts as it is written) or off (auto compactions disabled for the run: "
            "db_bench --disable_auto_compactions=1, benchmark.sh's bulk load, which compacts afterwards in "
            "a step of its own): a write's background bytes are then its log's and its flush's copies "
            "only (mechanisms.compaction)",
            choices=("auto", "off"),
            applies="lsm",
            column="compactions",
        ),
        Knob(
            "flush_size_scv",
            "number",
            "-",
            0.0,
            "squared coefficient of variation of flush sizes, >= 0 (0: one size; 1: exponential sizes)",
            zero=True,
            maximum=100.0,
            applies="lsm",
        ),
    )
}


#: figure column -> the knob it sets as it is (:attr:`Knob.column`)
COLUMN_KNOBS: dict[str, Knob] = {k.column: k for k in KNOBS.values() if k.column}


def _knob_arrays_class() -> type:
    """:class:`KnobArrays`, one ``np.ndarray`` field per entry of :data:`KNOBS`, in its order."""
    doc = """Every knob resolved for a grid: one array per knob, one entry per configuration, in the
    knob's unit (:data:`KNOBS`); an entry the model fills from the platform or the system is None /
    NaN (:func:`fill`).

    Generated from :data:`KNOBS` (``dataclasses.make_dataclass``): a knob added to the table is a
    field here with no second edit, read as ``knobs.cache_bytes``. Frozen: a stage derives its own
    values from a knob, it never writes one back."""
    cls = make_dataclass(
        "KnobArrays",
        [(name, np.ndarray) for name in KNOBS],
        frozen=True,
        namespace={"__doc__": doc},
    )
    cls.__module__ = __name__  # pickles by name, like a class written out here
    return cls


KnobArrays = _knob_arrays_class()


def _bad(name: str, message: str) -> ValueError:
    return ValueError(f"{name}: {message}")


def check(name: str, value) -> np.ndarray:
    """A knob's value as an array, checked against its kind (``None`` / NaN entries are unset)."""
    if name not in KNOBS:
        raise _bad(name, f"unknown knob; valid knobs: {', '.join(sorted(KNOBS))}")
    knob = KNOBS[name]
    arr = np.asarray(value, dtype=object if knob.kind in ("id", "choice") else None)
    if knob.kind in ("count", "number"):
        if arr.dtype.kind in "bUS" or (
            arr.dtype == object and any(isinstance(v, bool | str) for v in np.ravel(arr))
        ):
            raise _bad(name, f"must be a number [{knob.unit}], got {value!r}")
        if arr.dtype == object:
            arr = np.asarray([np.nan if v is None else v for v in arr.ravel()], dtype=object).reshape(
                arr.shape
            )
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise _bad(name, f"must be a number [{knob.unit}], got {value!r}") from None
        if arr.ndim == 0 and np.isnan(arr):  # NaN means "unset" only inside an array
            raise _bad(name, f"must be a finite number {'>=' if knob.zero else '>'} 0 [{knob.unit}], got nan")
        given = arr[~np.isnan(arr)]
        if not np.isfinite(given).all() or (given < 0 if knob.zero else given <= 0).any():
            raise _bad(
                name, f"must be a finite number {'>=' if knob.zero else '>'} 0 [{knob.unit}], got {value!r}"
            )
        if (given > knob.maximum).any():
            why = f" ({knob.maximum_reason})" if knob.maximum_reason else ""
            raise _bad(name, f"must be at most {knob.maximum:g} [{knob.unit}]{why}, got {value!r}")
        if knob.kind == "count" and ((given != np.floor(given)) | (given < 1)).any():
            raise _bad(name, f"must be a whole number >= 1, got {value!r}")
        return arr
    if knob.kind == "bool":
        if arr.dtype.kind != "b" and not all(isinstance(v, bool | np.bool_) for v in np.ravel(arr)):
            raise _bad(name, f"must be true or false, got {value!r}")
        return arr.astype(bool)
    values = [v for v in np.ravel(arr) if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if any(not isinstance(v, str) for v in values):
        raise _bad(name, f"must be a string, got {value!r}")
    if knob.kind == "choice":
        bad = sorted(set(values) - set(knob.choices))
        if bad:
            raise _bad(name, f"must be one of {', '.join(knob.choices)}, got {bad[0]!r}")
    return arr


def resolve(knobs: dict[str, Any]) -> dict[str, np.ndarray]:
    """Every knob as an array (``check``-ed), defaults filled in; UNSET ones are NaN / None arrays."""
    out = {}
    for name in knobs:
        check(name, knobs[name])  # errors for unknown or ill-typed knobs first
    for name, knob in KNOBS.items():
        if name in knobs:
            out[name] = check(name, knobs[name])
        elif knob.default is UNSET:
            out[name] = np.asarray(
                None if knob.kind == "id" else np.nan, dtype=object if knob.kind == "id" else float
            )
        else:
            out[name] = np.asarray(knob.default)
    return out


def is_set(name: str, values) -> np.ndarray:
    """Where a knob's (checked) values are set: not None / NaN, and true for a ``bool`` knob (false
    is its off state, what a system without the knob does)."""
    arr = np.asarray(values)
    if KNOBS[name].kind == "bool":
        return arr.astype(bool)
    return ~pd.isna(arr)


def check_applies(knobs: dict[str, np.ndarray], specs, codes: np.ndarray) -> None:
    """Refuse a knob set for a configuration whose system it does not apply to (:data:`APPLIES`).

    ``knobs``: the knobs the caller set, one array per knob over the configurations; ``specs``
    and ``codes``: the distinct system specs and, per configuration, the index of its spec. The
    ``ValueError`` names the knob, the system and the spec field the knob needs, and the shipped
    systems that declare it.
    """
    for name, values in knobs.items():
        rule = KNOBS[name].applies
        if not rule:
            continue
        test, needs, meaning = APPLIES[rule]
        ok = np.array([bool(test(s)) for s in specs])[codes]
        bad = is_set(name, np.broadcast_to(values, np.shape(codes))) & ~ok
        if bad.any():
            spec = specs[codes[int(np.argmax(bad))]]
            shipped = [n for n in list_systems() if test(load_system(n))]
            system = spec.id if spec.id in list_systems() and load_system(spec.id) == spec else spec.path
            raise _bad(
                name,
                f"does not apply to system {system}: it needs a system spec with {needs} ({meaning}; "
                f"shipped: {', '.join(shipped) or 'none'}); leave it unset",
            )


def fill_defaults(knobs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``knobs`` with unset entries (None / NaN) of knobs with a fixed default set to it."""
    out = dict(knobs)
    for name, values in knobs.items():
        default = KNOBS[name].default
        if default is not UNSET and KNOBS[name].kind != "bool" and pd.isna(values).any():
            out[name] = fill(values, np.asarray(default, dtype=np.asarray(values).dtype))
    return out


def fill(values: np.ndarray, default: np.ndarray) -> np.ndarray:
    """``values`` with the unset entries (None / NaN) replaced by ``default`` (same length)."""
    return np.where(pd.isna(values), default, values)


def parse(name: str, text: str):
    """A knob's value from text (``--set KNOB=VALUE``, a workload file), checked."""
    if name not in KNOBS:
        raise _bad(name, f"unknown knob; valid knobs: {', '.join(sorted(KNOBS))}")
    knob = KNOBS[name]
    text = str(text).strip()
    if knob.kind in ("count", "number"):
        try:
            value = float(text)
        except ValueError:
            raise _bad(name, f"must be a number [{knob.unit}], got {text!r}") from None
        if math.isnan(value):
            raise _bad(
                name, f"must be a finite number {'>=' if knob.zero else '>'} 0 [{knob.unit}], got {text!r}"
            )
    elif knob.kind == "bool":
        if text.lower() not in ("true", "false", "yes", "no", "1", "0"):
            raise _bad(name, f"must be true or false, got {text!r}")
        value = text.lower() in ("true", "yes", "1")
    else:
        value = text
    check(name, value)
    return value


def describe() -> str:
    """The knobs as a Markdown table (docs/models.md)."""
    lines = ["| knob | kind | unit | default | applies to | meaning |", "|---|---|---|---|---|---|"]
    for k in KNOBS.values():
        default = "platform / model" if k.default is UNSET else repr(k.default)
        kind = k.kind + (f": {' / '.join(k.choices)}" if k.choices else "")
        applies = f"spec `{APPLIES[k.applies][1]}`" if k.applies else "every system"
        lines.append(f"| `{k.name}` | {kind} | {k.unit} | {default} | {applies} | {k.description} |")
    return "\n".join(lines)
