"""Systems as data: what a database or storage system does per request, from a YAML spec.

A system spec (``data/systems/<id>.yaml``; a user's own file works the same
way) declares the structure the model composes -- never a fitted number:

================== =====================================================================
key                meaning
================== =====================================================================
id, name           the id ``predict(system=...)`` takes, and a display name
threading          ``hashed`` (each request goes to one shard's own queue: ScyllaDB
                   shards, Ceph PG shards) or ``pooled`` (worker threads share a queue)
thread_cap         worker threads the software runs at most (blank: no cap)
load_threads       the software runs on the load's own threads, one per job, each keeping its
                   ``iodepth`` requests in flight (fio: ``numjobs`` clones, each submitting and
                   reaping its own I/Os): worker threads = ``clients x threads_per_client``
remote             clients reach it over the network (false: embedded or raw device)
data_cache         reads can be served from memory (a row / block cache, buffer pool)
page_cache         the data files are read through the OS page cache (buffered I/O, as
                   PostgreSQL's): a read missing the system's own cache (a given
                   ``cache_bytes``) is served from memory while the data fits the RAM share
                   ``cache_share_of_ram`` holds (the system's cache included)
read_before_write  a write reads its page first (a B-tree)
lsm                memtable flushes and compactions write in bursts
write_consistency  replicas a write waits for by default (``ONE``, ``QUORUM``, ``ALL``)
page_bytes         the smallest I/O the system sends a device [B]
sync_writes_to     ``data`` (the data device, or one write to the WAL device when there
                   is one) or ``log`` (a redo-log station: commits wait for the log flush)
log_bytes_per_write with ``log``: the parameter giving redo bytes per write [B]
log_flushes        with ``log``: synchronous log flushes a commit waits for one after the other
                   (blank: 1; MySQL with its binary log: 2, the redo log's prepare flush and
                   the binary log's; knob ``log_flushes`` overrides it)
daemons            one daemon per ``per_device_knob`` of a device, each keeping
                   ``idle_cores`` (a parameter) busy and owning its share of the cache
metadata_cache     a metadata cache beside the data (BlueStore onodes): parameters for the
                   data bytes per entry, the bytes an entry takes, device reads and CPU
                   cycles per miss
placement          how data is spread over the cluster (:mod:`perfmodel.mechanisms.placement`):
                   ``kind`` (``ring``: random tokens, ``units`` tokens per node;
                   ``random``: CRUSH-like, ``units`` placement groups per daemon,
                   replicas counted) -- the busiest node / device sets capacity
coordinator        any node coordinates a request: a client that is not token-aware
                   (knob ``token_aware`` < 1) reaches a non-replica node that forwards
                   it (parameter ``cpu_cycles_forward``, one more network hop)
group_commit       one log flush covers every commit waiting for it (InnoDB, PostgreSQL,
                   openGauss): commits wait a flush but do not queue behind each other's
serial             ``command``: every command runs on one main thread (Redis 6 and 7); only
                   the request messages (``cpu_cycles_message``) spread over the threads,
                   so the threads scale by Amdahl's law with the commands' share as the
                   serial fraction (replaces ``usl_sigma``). ``write_lock``: a write
                   allocates and frees its item under one process-wide lock (memcached's
                   ``slabs_lock``), held ``cpu_cycles_write_lock`` cycles; reads take only
                   striped locks, so the serial fraction is the writes' locked share of
                   the CPU (replaces ``usl_sigma``). ``command_io_threads``: the commands
                   run on one main thread and, with more than one thread, the others (I/O
                   threads) carry every client's socket work and the main thread none (Redis
                   8's threaded I/O): per command ``c`` cycles on the main thread (with its
                   DRAM stall), ``m`` of socket work (``cpu_cycles_message / iodepth``) and
                   ``h`` of handoff (``cpu_cycles_handoff / iodepth``: an I/O thread passing
                   a client to the main thread and back) on the I/O threads, so a node runs
                   ``min((n - 1) / (m + h), 1 / c)`` commands per cycle of a thread
                   (:func:`perfmodel.mechanisms.scaling.io_thread_efficiency`, which also spreads a
                   co-located load generator over every thread)
client_mirrors_commands  a command's cycles (``cpu_cycles_read``) are protocol work -- parse a
                   request, look a key up, format the reply -- which a load generator mirrors
                   (it formats the request and parses the reply): with the load generator on
                   the server's cores (knob ``client_colocated``) each command costs them a
                   read command more (an in-memory store's; a SQL statement's execution has no
                   such mirror)
io_latency_goal_ms  the server's own I/O scheduler keeps at most this much work queued at a
                   device (ScyllaDB's Seastar: ``--io-latency-goal-ms``), holding the rest of
                   a flush in its own queue, fair-queued with the reads: a read that meets a
                   flush waits behind at most this much of its backlog (blank: no such
                   scheduler, the kernel's queue holds the whole flush)
tpcc_statements    SQL statements of an average TPC-C transaction, for systems whose CPU and
                   page costs are per statement (blank: 1, costs are per transaction)
tpcc_statements_scv  squared coefficient of variation of the statements per TPC-C transaction
                   over its mix (blank: 0)
wait_scv           least squared coefficient of variation of a request's wait (knob
                   ``wait_scv``): the order the server takes waiting requests in -- an event
                   loop's turns over its connections, its threads' scheduling -- spreads the
                   wait without changing its mean (blank: 0, first come, first served)
topology           how servers are deployed for it (:data:`TOPOLOGIES`, blank: ``sharded``):
                   ``sharded`` (data partitioned over the nodes, each a server), ``instances``
                   (sharded over instances, several per server: a thread-capped server such
                   as Redis or memcached; ``size`` chooses how many fit a server),
                   ``primary_replicas`` (one primary takes every write, replicas serve reads:
                   PostgreSQL, MySQL), ``embedded`` (a library in each server, no cluster:
                   RocksDB, a raw device)
key_order          whether the store keeps the client's key order on its devices
                   (:data:`KEY_ORDERS`, blank: ``unordered``): ``ordered`` (sorted by key: an LSM
                   tree's runs, a B-tree's leaves -- consecutive keys share pages, and
                   sequential inserts leave an LSM tree's runs disjoint), ``unordered`` (a
                   partitioner, CRUSH, a hash table or a heap in insertion order: sequential
                   is random to it), ``offsets`` (the client addresses device offsets: fio)
dataset_in         where the data set must fit: ``drives`` (blank) or ``memory`` (an
                   in-memory store: the servers' RAM x ``cache_share_of_ram``)
hooks              named behaviours data cannot express (:data:`HOOKS`)
parameters         defaults for the system's parameters (``name: {value, unit, bounds,
                   source}``) where the parameter set has no ``name[id]``
sources            where each structural fact comes from
================== =====================================================================

Per-system parameters are looked up as ``name[id]`` in the parameter set:
``cpu_cycles_read``, ``cpu_cycles_miss``, ``cpu_cycles_write`` [cycles],
``device_reads_per_miss`` [count], ``sync_writes`` [count per write],
``background_write_factor`` [bytes per user byte], ``memtable_bytes`` [B],
``cache_share_of_ram`` [-] (a share: a spec value outside [0, 1] is refused, as for every
parameter named ``*share*`` or of unit ``share``), and optionally ``usl_sigma`` / ``usl_kappa``,
``cpu_cycles_parse`` [cycles] (parsing and planning a statement sent as SQL text, knob
``prepared`` < 1) and
``cpu_cycles_message`` [cycles] (a request message's socket read, parse and reply
write over kernel TCP, shared by the commands a client pipelines in one message: its iodepth;
another transport costs its catalog network's ``message_cost_share`` of it),
``cpu_cycles_handoff`` [cycles] (``serial: command_io_threads``: an I/O thread handing a
request message's client to the main thread and taking it back).
A user's spec gives their defaults under ``parameters``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from perfmodel.inputs._data import data_dir, load_yaml
from perfmodel.inputs.consistency import COMMON_LEVELS
from perfmodel.inputs.errors import DataError, Problem, TextFileError, UnknownNameError, read_text
from perfmodel.inputs.params import ParameterSet, ParamInfo

THREADING = ("hashed", "pooled")
SYNC_TARGETS = ("data", "log")

#: parameters every system needs (``name[id]``)
REQUIRED_PARAMETERS = (
    "cpu_cycles_read",
    "cpu_cycles_miss",
    "cpu_cycles_write",
    "device_reads_per_miss",
    "sync_writes",
    "background_write_factor",
    "memtable_bytes",
    "cache_share_of_ram",
)
#: what runs serially in a system whose threads do not scale by ``usl_sigma`` (spec field ``serial``)
SERIAL = {
    "command": "commands run on one thread",
    "command_io_threads": "commands run on one main thread, every socket on the other threads",
    "write_lock": "a write allocates and frees under one process-wide lock",
}
#: deployment topologies (spec field ``topology``; :mod:`perfmodel.inputs.topology` maps each onto the model)
TOPOLOGIES = {
    "sharded": "data partitioned over the nodes, one node per server",
    "instances": "data partitioned over instances, several instances per server",
    "primary_replicas": "one primary takes every write; replicas add read capacity, not write capacity",
    "embedded": "a library inside each server: no cluster, each server its own share of the data",
}
DATASET_IN = ("drives", "memory")
#: what a sequential access pattern meets in the store (:mod:`perfmodel.mechanisms.ordering`)
KEY_ORDERS = ("unordered", "ordered", "offsets")
#: optional parameters and their value when neither the set nor the spec has them
OPTIONAL_PARAMETERS = {"usl_sigma": 0.0, "usl_kappa": 0.0, "cpu_cycles_message": 0.0, "cpu_cycles_row": 0.0,
                       "cpu_cycles_key": 0.0, "cpu_cycles_parse": 0.0,
                       "cpu_cycles_write_lock": 0.0, "dram_misses_per_op": 0.0,
                       "cpu_cycles_handoff": 0.0, "log_cpu_share": 0.0,
                       "ordered_insert_saving": 0.0, "vector_insert_saving": 0.0}  # fmt: skip


@dataclass(frozen=True)
class Daemons:
    """One daemon per ``per_device_knob`` of a data device (Ceph OSDs)."""

    per_device_knob: str
    idle_cores: str  # parameter name


@dataclass(frozen=True)
class MetadataCache:
    """A metadata cache beside the data, per daemon (BlueStore's onode cache); parameter names."""

    object_bytes: str
    entry_bytes: str
    reads_per_miss: str
    cpu_cycles_per_miss: str


#: how data is spread over the cluster (:mod:`perfmodel.mechanisms.placement` models each)
PLACEMENTS = ("random", "ring", "even")


@dataclass(frozen=True)
class Placement:
    """Data placement over the cluster (:mod:`perfmodel.mechanisms.placement`)."""

    kind: str  # ring / random
    units: float  # tokens per node (ring) or placement groups per daemon, replicas counted (random)


@dataclass(frozen=True)
class SystemSpec:
    """A system's structure (see the module doc for each field)."""

    id: str
    name: str
    threading: str
    remote: bool
    data_cache: bool
    read_before_write: bool
    lsm: bool
    write_consistency: str
    page_bytes: float
    sync_writes_to: str = "data"
    thread_cap: float = math.inf
    log_bytes_per_write: str = ""
    log_flushes: float = 1.0
    daemons: Daemons | None = None
    metadata_cache: MetadataCache | None = None
    placement: Placement | None = None
    coordinator: bool = False
    tpcc_statements: float = 1.0
    tpcc_statements_scv: float = 0.0
    wait_scv: float = 0.0
    serial: str = ""
    group_commit: bool = False
    page_cache: bool = False
    client_mirrors_commands: bool = False
    load_threads: bool = False
    #: the server's I/O scheduler's latency goal [s] (inf: none)
    io_latency_goal_s: float = math.inf
    topology: str = "sharded"
    dataset_in: str = "drives"
    key_order: str = "unordered"
    hooks: tuple[str, ...] = ()
    parameters: Mapping[str, float] = field(default_factory=dict)
    #: name -> (unit, bounds, source) of the spec's own parameters
    parameter_info: Mapping[str, tuple] = field(default_factory=dict, repr=False)
    sources: Mapping[str, str] = field(default_factory=dict, repr=False)
    path: str = ""

    def required_parameters(self) -> list[str]:
        """Every parameter name this spec's mechanisms look up (``name[id]``)."""
        names = list(REQUIRED_PARAMETERS)
        if self.daemons is not None:
            names.append(self.daemons.idle_cores)
        if self.metadata_cache is not None:
            m = self.metadata_cache
            names += [m.object_bytes, m.entry_bytes, m.reads_per_miss, m.cpu_cycles_per_miss]
        if self.sync_writes_to == "log":
            names.append(self.log_bytes_per_write)
        if self.coordinator:
            names.append("cpu_cycles_forward")
        if self.serial == "write_lock":
            names.append("cpu_cycles_write_lock")
        return names

    def check_parameters(self, params) -> None:
        """Raise a KeyError listing every parameter neither the set nor the spec gives."""
        missing = [
            f"{n}[{self.id}]"
            for n in self.required_parameters()
            if f"{n}[{self.id}]" not in params.values and n not in self.parameters
        ]
        if missing:
            raise KeyError(
                f"system {self.path or self.id!r}: parameters {', '.join(missing)} are in neither the "
                f"parameter set {params.name!r} nor the spec (give them under 'parameters:')"
            )

    def with_parameters(self, params):
        """``params`` plus this spec's own parameters as ``name[id]`` entries it lacks (so a fit
        can free them: ``calibrate(free=["cpu_cycles_read[my-db]"])``)."""

        values, info = dict(params.values), dict(params.info)
        for name, value in self.parameters.items():
            key = f"{name}[{self.id}]"
            if key not in values:
                values[key] = value
                unit, bounds, source = self.parameter_info.get(name, ("", (0.0, math.inf), ""))
                info[key] = ParamInfo(unit, bounds, f"system spec {self.path}: {source}", name)
        return ParameterSet(params.name, values, info, params.description)

    def parameter(self, params, name: str) -> float:
        """``name[id]`` from the parameter set, else the spec's default, else the optional default."""
        key = f"{name}[{self.id}]"
        if key in params.values:
            value = params.values[key]
            return value if np.ndim(value) else float(value)  # an array: one value per configuration
        if name in self.parameters:
            return float(self.parameters[name])
        if name in OPTIONAL_PARAMETERS:
            return OPTIONAL_PARAMETERS[name]
        raise KeyError(
            f"parameter {key!r} is in neither the parameter set {params.name!r} nor the system spec "
            f"{self.path or self.id!r} (give it under 'parameters:')"
        )


# ---------------------------------------------------------------------------------------
# Hooks: behaviour that data cannot express, registered by name
# ---------------------------------------------------------------------------------------


def _tpmc(frame, x: np.ndarray, mask: np.ndarray, params) -> None:
    """TPC-C NewOrder transactions per minute: throughput x 60 x NewOrder's share of the mix."""
    share = params["neworder_share[tpcc]"]
    previous = frame["tpmc"].to_numpy(float) if "tpmc" in frame else np.full(len(frame), np.nan)
    frame["tpmc"] = np.where(mask, x * 60.0 * share, previous)


#: report hooks: ``hook(frame, throughput, mask of this system's rows, params)`` adds columns
HOOKS: dict[str, Callable] = {"tpmc": _tpmc}


# ---------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------

#: the spec's true / false keys (a missing one is false)
FLAG_KEYS = (
    "remote",
    "data_cache",
    "read_before_write",
    "lsm",
    "coordinator",
    "group_commit",
    "page_cache",
    "client_mirrors_commands",
    "load_threads",
)
#: the spec's keys that take one of a few words -> (the words, the default where the key is missing)
CHOICE_KEYS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "threading": (THREADING, None),
    "sync_writes_to": (SYNC_TARGETS, "data"),
    "write_consistency": (COMMON_LEVELS, None),
    "topology": (tuple(TOPOLOGIES), "sharded"),
    "dataset_in": (DATASET_IN, "drives"),
    "key_order": (KEY_ORDERS, "unordered"),
}
#: every other key a spec may have (each read by its own part of the loader)
OTHER_KEYS = (
    "id",
    "name",
    "thread_cap",
    "page_bytes",
    "log_bytes_per_write",
    "log_flushes",
    "daemons",
    "metadata_cache",
    "placement",
    "tpcc_statements",
    "tpcc_statements_scv",
    "wait_scv",
    "serial",
    "io_latency_goal_ms",
    "hooks",
    "parameters",
    "sources",
)
_KEYS = {*FLAG_KEYS, *CHOICE_KEYS, *OTHER_KEYS}
_REQUIRED = ("id", "name", "threading", "remote", "data_cache", "read_before_write", "lsm",
             "write_consistency", "page_bytes")  # fmt: skip


def _systems_dir() -> Path:
    return data_dir() / "systems"


def list_systems() -> list[str]:
    """Ids of the shipped system specs."""
    return sorted(p.stem for p in _systems_dir().glob("*.yaml"))


def load_system(name_or_path: str | Path | SystemSpec) -> SystemSpec:
    """A system spec by shipped id or from a YAML file (errors name the file, line and field)."""
    if isinstance(name_or_path, SystemSpec):
        return name_or_path
    text = str(name_or_path)
    if text.endswith((".yaml", ".yml")) or "/" in text:
        path = Path(text).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"system spec not found: {path}")
    elif text in list_systems():
        path = _systems_dir() / f"{text}.yaml"
    else:
        raise UnknownNameError("system", text, list_systems())
    return _load_file(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _load_file(path: str, mtime_ns: int = 0) -> SystemSpec:  # mtime: an edited file reloads
    import yaml

    problems: list[Problem] = []
    try:
        raw = read_text(path, "system spec")
    except OSError as exc:
        raise DataError([Problem(path, "", "", f"cannot be read: {exc}")]) from None
    except TextFileError as exc:
        raise DataError([Problem(path, str(exc.line or ""), "", exc.reason)]) from None
    try:
        node = yaml.compose(raw)
        doc = load_yaml(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(
            [Problem(path, str(mark.line + 1) if mark else "", "", f"is not valid YAML: {exc}")]
        ) from None
    lines = _key_lines(node)

    def add(key: str, message: str) -> None:
        problems.append(Problem(path, str(lines.get(key.split(".")[0], "")), key, message))

    if not isinstance(doc, Mapping):
        raise DataError([Problem(path, "", "", "must be a YAML mapping of the spec's keys")])
    for key in sorted(set(doc) - _KEYS):
        add(key, f"unknown key; valid: {', '.join(sorted(_KEYS))}")
    for key in _REQUIRED:
        if doc.get(key) is None:
            add(key, "is required")
    spec = _convert(doc, add)
    if problems:
        raise DataError(problems)
    return SystemSpec(**spec, path=path)


def _key_lines(node) -> dict[str, int]:
    """Line of each top-level key (1-based) in a composed YAML mapping."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}


def _convert(doc: Mapping[str, Any], add) -> dict[str, Any]:
    """A spec's keys as :class:`SystemSpec` fields, each problem reported through ``add(key, why)``."""
    out: dict[str, Any] = {}
    for part in (_identity, _choices, _flags, _numbers, _sections, _statements, _hooks, _parameters):
        part(doc, add, out)
    sources = doc.get("sources") or {}
    out["sources"] = dict(sources) if isinstance(sources, Mapping) else {}
    return out


def _identity(doc: Mapping[str, Any], add, out: dict[str, Any]) -> None:
    """``id`` and ``name``."""
    for key in ("id", "name"):
        value = doc.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            add(key, f"must be a non-empty string, got {value!r}")
        out[key] = str(value or "")
    if out["id"] and any(ch.isspace() or ch in "[]" for ch in out["id"]):
        add("id", f"must not contain spaces or brackets, got {out['id']!r}")


def _choices(doc: Mapping[str, Any], add, out: dict[str, Any]) -> None:
    """The keys that take one of a few words (:data:`CHOICE_KEYS`)."""
    for key, (choices, default) in CHOICE_KEYS.items():
        value = doc.get(key, default)
        if value is not None and value not in choices:
            add(key, f"must be one of {', '.join(choices)}, got {value!r}")
        out[key] = value


def _flags(doc: Mapping[str, Any], add, out: dict[str, Any]) -> None:
    """The true / false keys (:data:`FLAG_KEYS`)."""
    for key in FLAG_KEYS:
        value = doc.get(key)
        if value is not None and not isinstance(value, bool):
            add(key, f"must be true or false, got {value!r}")
        out[key] = bool(value)


def _numbers(doc: Mapping[str, Any], add, out: dict[str, Any]) -> None:
    """Page size, thread cap, the I/O scheduler's goal and the redo log's keys."""
    out["page_bytes"] = _number(doc, "page_bytes", add, positive=True)
    cap = doc.get("thread_cap")
    out["thread_cap"] = (
        math.inf if cap is None else _number(doc, "thread_cap", add, positive=True, whole=True)
    )
    if doc.get("io_latency_goal_ms") is not None:
        out["io_latency_goal_s"] = _number(doc, "io_latency_goal_ms", add, positive=True) * 1e-3
        if not doc.get("lsm"):
            add("io_latency_goal_ms", "needs lsm: true (it bounds what a read waits of a flush)")
    out["log_bytes_per_write"] = str(doc.get("log_bytes_per_write") or "")
    if out["sync_writes_to"] == "log" and not out["log_bytes_per_write"]:
        add(
            "log_bytes_per_write",
            "is required with sync_writes_to: log (the parameter of redo bytes per write)",
        )
    if doc.get("log_flushes") is not None:
        out["log_flushes"] = _number(doc, "log_flushes", add, positive=True, whole=True)
        if out.get("sync_writes_to") != "log":
            add("log_flushes", "needs sync_writes_to: log (the flushes are the redo log's)")
    if out.get("page_cache") and not out.get("data_cache"):
        add("page_cache", "needs data_cache: true (the page cache holds what the system's cache misses)")


def _sections(doc: Mapping[str, Any], add, out: dict[str, Any]) -> None:
    """``daemons``, ``metadata_cache`` and ``placement``."""
    out["daemons"] = _section(doc, "daemons", Daemons, add)
    out["metadata_cache"] = _section(doc, "metadata_cache", MetadataCache, add)
    if out["metadata_cache"] is not None and out["daemons"] is None:
        add("metadata_cache", "needs 'daemons' (the cache is per daemon)")
    out["placement"] = _placement(doc, add)


def _statements(doc: Mapping[str, Any], add, out: dict[str, Any]) -> None:
    """``serial``, the TPC-C statement mix and ``wait_scv``."""
    serial = doc.get("serial")
    if serial is not None and serial not in SERIAL:
        add("serial", f"must be one of {', '.join(SERIAL)} ({'; '.join(SERIAL.values())}), got {serial!r}")
    out["serial"] = serial if serial in SERIAL else ""
    if doc.get("tpcc_statements") is not None:
        out["tpcc_statements"] = _number(doc, "tpcc_statements", add, positive=True, whole=True)
    if doc.get("tpcc_statements_scv") is not None:
        out["tpcc_statements_scv"] = _number(doc, "tpcc_statements_scv", add)
        if out["tpcc_statements_scv"] < 0:
            add("tpcc_statements_scv", f"must be >= 0, got {out['tpcc_statements_scv']!r}")
    if doc.get("wait_scv") is not None:
        out["wait_scv"] = _number(doc, "wait_scv", add)
        if not 0 <= out["wait_scv"] <= 100:
            add("wait_scv", f"must be between 0 and 100, got {out['wait_scv']!r}")


def _hooks(doc: Mapping[str, Any], add, out: dict[str, Any]) -> None:
    """Report hooks by name."""
    hooks = doc.get("hooks") or []
    if not isinstance(hooks, list) or any(h not in HOOKS for h in hooks):
        add("hooks", f"must be a list of known hooks ({', '.join(HOOKS)}), got {hooks!r}")
        hooks = []
    out["hooks"] = tuple(hooks)


def _parameters(doc: Mapping[str, Any], add, out: dict[str, Any]) -> None:
    """The system's own parameters: values, units, bounds and sources."""
    params = doc.get("parameters") or {}
    values: dict[str, float] = {}
    info: dict[str, tuple] = {}
    if not isinstance(params, Mapping):
        add("parameters", "must map a parameter name to {value, unit, source}")
        params = {}
    for name, entry in params.items():
        value = entry.get("value") if isinstance(entry, Mapping) else entry
        if (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not math.isfinite(value)
            or value < 0
        ):
            add(f"parameters.{name}", f"value must be a finite number >= 0, got {value!r}")
            continue
        if isinstance(entry, Mapping) and not str(entry.get("source", "")).strip():
            add(f"parameters.{name}", "needs a 'source' (a citation or 'assumption: why')")
        unit = str(entry.get("unit", "")) if isinstance(entry, Mapping) else ""
        if is_share(str(name), unit) and value > 1:
            add(f"parameters.{name}", f"is a share of a whole: must be between 0 and 1, got {value!r}")
            continue
        values[str(name)] = float(value)
        if isinstance(entry, Mapping):
            bounds = entry.get("bounds", [0.0, math.inf])
            info[str(name)] = (str(entry.get("unit", "")), (float(bounds[0]), float(bounds[1])),
                               str(entry.get("source", "")))  # fmt: skip
    out["parameters"] = values
    out["parameter_info"] = info


#: units that say a parameter is a share of a whole [-]
SHARE_UNITS = ("share", "fraction")


def is_share(name: str, unit: str = "") -> bool:
    """Whether a parameter is a share of a whole, in [0, 1]: its name has the word ``share``
    (``cache_share_of_ram``, ``neworder_share``) or its unit is one of :data:`SHARE_UNITS`."""
    return "share" in name.split("_") or unit.strip().lower() in SHARE_UNITS


def _number(doc, key, add, positive=False, whole=False) -> float:
    value = doc.get(key)
    if value is None:
        return math.nan
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        add(key, f"must be a finite number, got {value!r}")
        return math.nan
    if positive and value <= 0:
        add(key, f"must be positive, got {value!r}")
    if whole and value != int(value):
        add(key, f"must be a whole number, got {value!r}")
    return float(value)


def _placement(doc, add) -> Placement | None:
    value = doc.get("placement")
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) != {"kind", "units"}:
        add("placement", f"must be a mapping with exactly kind and units, got {value!r}")
        return None
    if value["kind"] not in PLACEMENTS:
        add("placement", f"kind must be one of {', '.join(PLACEMENTS)}, got {value['kind']!r}")
        return None
    units = value["units"]
    if not isinstance(units, int | float) or isinstance(units, bool) or not units >= 1:
        add("placement", f"units must be a number >= 1, got {units!r}")
        return None
    return Placement(str(value["kind"]), float(units))


def _section(doc, key, cls, add):
    value = doc.get(key)
    if value is None:
        return None
    names = [f for f in cls.__dataclass_fields__]
    if not isinstance(value, Mapping) or set(value) != set(names):
        add(key, f"must be a mapping with exactly {', '.join(names)}, got {value!r}")
        return None
    if not all(isinstance(value[n], str) and value[n].strip() for n in names):
        add(key, "each entry names a parameter (or, for per_device_knob, a knob) as a string")
        return None
    return cls(**{n: str(value[n]) for n in names})
