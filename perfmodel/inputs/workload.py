"""What is asked of the system: the workload.

A :class:`Workload` is an operation mix, object and dataset sizes, a key
popularity, and either a closed loop of clients (cassandra-stress threads, YCSB
threads, fio jobs x iodepth, TPC-C terminals, each with a think time) or an
open arrival rate, plus the replication factor and consistency level.

Numeric fields may be numpy arrays (they broadcast), so one ``Workload``
describes a whole sweep. Construction validates every field and raises a
ValueError naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from perfmodel.inputs import knobs as settings
from perfmodel.inputs._data import load_yaml
from perfmodel.inputs.consistency import acks_required
from perfmodel.inputs.errors import read_text
from perfmodel.inputs.keys import ACCESS_PATTERNS, KEY_DISTRIBUTIONS, YCSB_ZIPF_S
from perfmodel.inputs.units import GIB

OPERATIONS = ("read", "write", "mixed", "tpcc")
DISTRIBUTIONS = KEY_DISTRIBUTIONS


def _numeric(
    value: Any,
    name: str,
    *,
    lo: float | None = None,
    hi: float | None = None,
    integer: bool = False,
    strict_lo: bool = False,
    allow_inf: bool = False,
    why: str = "",
) -> Any:
    """``value`` (a number or an array) as float, checked: a number, not NaN, finite, within
    ``lo`` / ``hi``, whole where ``integer``; a ValueError naming ``name`` otherwise (``why``
    says where an upper bound comes from)."""

    def number_like(v) -> bool:  # YAML 1.1 reads 1e6 as the string '1e6': a number still
        if isinstance(v, str):
            try:
                float(v)
            except ValueError:
                return False
            return True
        return not isinstance(v, bool | bytes | list | tuple | dict)

    items = value if isinstance(value, list | tuple) else [value]
    if not all(number_like(v) for v in items):
        raise ValueError(f"{name}: expected a number (or a list of numbers), got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number (or a list of numbers), got {value!r}") from None
    if arr.size == 0:
        raise ValueError(f"{name}: an empty list; give a number or a non-empty list")
    if arr.ndim > 1:
        raise ValueError(f"{name}: a number or a flat list of numbers, got {value!r}")
    if np.isnan(arr).any():
        raise ValueError(f"{name}: must not be NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name}: must be finite")
    if lo is not None:
        bad = arr <= lo if strict_lo else arr < lo
        if bad.any():
            op = ">" if strict_lo else ">="
            raise ValueError(f"{name}: must be {op} {lo:g}, got {value!r}")
    if hi is not None and (arr > hi).any():
        raise ValueError(f"{name}: must be <= {hi:g}{f' ({why})' if why else ''}, got {value!r}")
    if integer and (np.isfinite(arr) & (arr != np.floor(arr))).any():
        raise ValueError(f"{name}: must be a whole number, got {value!r}")
    return float(arr) if arr.ndim == 0 else arr


#: network payload of one TPC-C transaction, request plus response [B]: a terminal sends an order of up to
#: 15 lines and receives the order's rows (TPC-C standard, clause 2.4.3's output screen: ~1 KB), never
#: a database page (assumption from the screen layouts; the standard fixes the screens, not the bytes)
TPCC_MESSAGE_BYTES = 1024.0
#: the largest object, I/O or message a request may carry [B] (1 TiB)
MAX_OBJECT_BYTES = 2.0**40
#: the most nodes (and replicas) a cluster may have [count]
MAX_NODES = 100_000.0


def check_nodes(nodes, where: str = "") -> Any:
    """Node counts: whole numbers in 1..:data:`MAX_NODES` (a ValueError naming ``nodes``)."""
    return _numeric(nodes, f"{where}nodes", lo=1.0, integer=True, hi=MAX_NODES)


@dataclass(frozen=True)
class Workload:
    """A database or storage workload.

    Parameters
    ----------
    operation : ``read``, ``write``, ``mixed`` or ``tpcc`` (a label; the mix is
        ``read_fraction``).
    read_fraction : share of operations that read [-], in [0, 1].
    object_bytes : row / value / object size [B] (> 0).
    dataset_bytes : data set size before replication [B] (>= 0).
    io_bytes : block size of each I/O for block workloads (fio, RBD) [B];
        defaults to ``object_bytes``.
    message_bytes : payload a request and its response carry over the
        network [B]; defaults to ``io_bytes`` (a key-value store ships the
        value, a block store the block), and for ``tpcc`` to
        :data:`TPCC_MESSAGE_BYTES` (a transaction returns rows, not pages).
    key_distribution : key popularity, one of :data:`perfmodel.inputs.keys.KEY_DISTRIBUTIONS`
        (``uniform``, ``zipf``, ``latest``, ``hotspot``, ``special``; a name per configuration
        as an array is accepted): see :mod:`perfmodel.inputs.keys`.
    zipf_s : Zipf exponent [-] (>= 0) when ``key_distribution`` is ``zipf``, ``scrambled_zipf`` or ``latest``.
    access_pattern : the order requests visit keys or offsets: ``random`` (default) or
        ``sequential`` (fio ``rw=read``, db_bench ``fillseq``; an array per configuration is
        accepted): see :mod:`perfmodel.inputs.keys` and :mod:`perfmodel.mechanisms.ordering`.
    hot_data_fraction, hot_op_fraction : the hot set's share of the keys and of the requests
        [-] (``hotspot``, ``special``); NaN or None: the generator's defaults
        (:data:`perfmodel.inputs.keys.HOT_DEFAULTS`).
    clients, threads_per_client, iodepth : closed loop: ``clients x
        threads_per_client x iodepth`` requests outstanding [count].
    think_time_s : think time between a response and the next request [s].
    arrival_rate : open loop instead: Poisson arrivals [1/s].
    replication_factor : copies of each object [count] (>= 1).
    consistency : replicas a write waits for: ``ONE``, ``TWO``, ``THREE``,
        ``QUORUM``, ``ALL`` or a count.
    read_consistency : replicas a read waits for, the same levels (default ``ONE``): at
        ``QUORUM`` the coordinator waits for its own read and the digests of ``k - 1``
        others, one more round trip between nodes (the digest reads' own work is not
        counted).

    Exactly one of ``clients`` and ``arrival_rate`` is given.
    """

    operation: str = "mixed"
    read_fraction: Any = 0.5
    object_bytes: Any = 1024.0
    dataset_bytes: Any = 0.0
    io_bytes: Any = None
    message_bytes: Any = None
    key_distribution: Any = "uniform"
    zipf_s: Any = 0.99
    hot_data_fraction: Any = None
    hot_op_fraction: Any = None
    access_pattern: Any = "random"
    clients: Any = None
    threads_per_client: Any = 1
    iodepth: Any = 1
    think_time_s: Any = 0.0
    arrival_rate: Any = None
    replication_factor: Any = 1
    consistency: str | int = "ONE"
    read_consistency: str | int = "ONE"
    #: the sizes derived at construction (io_bytes from object_bytes, message_bytes from io_bytes),
    #: which :meth:`with_changes` derives again
    derived: frozenset = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        put("derived", frozenset(n for n in ("io_bytes", "message_bytes") if getattr(self, n) is None))

        if self.operation not in OPERATIONS:
            raise ValueError(f"operation: must be one of {', '.join(OPERATIONS)}, got {self.operation!r}")
        for name, allowed in (("key_distribution", DISTRIBUTIONS), ("access_pattern", ACCESS_PATTERNS)):
            words = np.asarray(getattr(self, name), dtype=object)  # one word, or one per configuration
            unknown = sorted({str(w) for w in words.ravel()} - set(allowed))
            if unknown:
                raise ValueError(f"{name}: must be one of {', '.join(allowed)}, got {unknown[0]!r}")
            if words.ndim:
                put(name, words)
        for name in ("hot_data_fraction", "hot_op_fraction"):
            value = math.nan if getattr(self, name) is None else getattr(self, name)
            arr = np.asarray(value, dtype=float)
            bad = np.isfinite(arr) & ~(
                (arr > 0.0) & (arr < 1.0) if name == "hot_data_fraction" else (arr >= 0.0) & (arr <= 1.0)
            )
            if bad.any():
                raise ValueError(
                    f"{name}: must be a share in (0, 1) ([0, 1] for hot_op_fraction), "
                    f"got {arr[bad].ravel()[0]!r}"
                )
            put(name, float(arr) if arr.ndim == 0 else arr)
        put("read_fraction", _numeric(self.read_fraction, "read_fraction", lo=0.0, hi=1.0))
        size = dict(lo=0.0, strict_lo=True, hi=MAX_OBJECT_BYTES, why="1 TiB: larger is not one request")
        put("object_bytes", _numeric(self.object_bytes, "object_bytes", **size))
        put(
            "dataset_bytes", _numeric(self.dataset_bytes, "dataset_bytes", lo=0.0, hi=1e24, why="a yottabyte")
        )
        io = self.object_bytes if self.io_bytes is None else self.io_bytes
        put("io_bytes", _numeric(io, "io_bytes", **size))
        msg = self.message_bytes
        msg = (TPCC_MESSAGE_BYTES if self.operation == "tpcc" else self.io_bytes) if msg is None else msg
        put("message_bytes", _numeric(msg, "message_bytes", **size))
        put(
            "zipf_s",
            _numeric(self.zipf_s, "zipf_s", lo=0.0, hi=100.0, why="beyond, every request hits one key"),
        )
        put("think_time_s", _numeric(self.think_time_s, "think_time_s", lo=0.0, hi=86400.0, why="a day"))
        put(
            "threads_per_client",
            _numeric(self.threads_per_client, "threads_per_client", lo=1.0, integer=True, hi=1e6),
        )
        put(
            "iodepth", _numeric(self.iodepth, "iodepth", lo=1.0, integer=True, hi=65536.0, why="NVMe's limit")
        )
        put(
            "replication_factor",
            _numeric(self.replication_factor, "replication_factor", lo=1.0, integer=True, hi=MAX_NODES),
        )
        if (self.clients is None) == (self.arrival_rate is None):
            raise ValueError(
                "clients: give exactly one of clients (closed loop) and arrival_rate (open loop)"
            )
        if self.clients is not None:
            put("clients", _numeric(self.clients, "clients", lo=1.0, integer=True, hi=1e9))
        else:
            put("arrival_rate", _numeric(self.arrival_rate, "arrival_rate", lo=0.0, strict_lo=True, hi=1e12))
        _ = self.acks  # validates the consistency level against the replication factor
        try:
            _ = self.read_acks
        except ValueError as exc:
            raise ValueError(f"read_{exc}") from None

    def with_changes(self, **changes) -> Workload:
        """A copy with ``changes`` (field names and values, checked as at construction). A size this
        workload derived (``io_bytes`` from ``object_bytes``, ``message_bytes`` from ``io_bytes``) is
        derived again unless ``changes`` gives it: with a new object size, a request carries the new
        object. (``dataclasses.replace`` would keep the old derived size.)"""
        return replace(self, **{**dict.fromkeys(self.derived), **changes})

    # ------------------------------------------------------------------ derived
    @property
    def closed(self) -> bool:
        """True for a closed loop of clients, False for open arrivals."""
        return self.clients is not None

    @property
    def concurrency(self):
        """Requests outstanding in a closed loop [count]: clients x threads x iodepth."""
        if not self.closed:
            raise ValueError("concurrency: an open workload (arrival_rate) has no fixed concurrency")
        return self.clients * self.threads_per_client * self.iodepth

    @property
    def acks(self):
        """Replica answers a request waits for [count] (the consistency level).

        See :func:`perfmodel.inputs.consistency.acks_required`.
        """
        k = acks_required(self.consistency, self.replication_factor)
        return float(k) if np.ndim(k) == 0 else k.astype(float)

    @property
    def read_acks(self):
        """Replica answers a read waits for [count] (``read_consistency``)."""
        k = acks_required(self.read_consistency, self.replication_factor)
        return float(k) if np.ndim(k) == 0 else k.astype(float)

    # ------------------------------------------------------------------ building
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Workload:
        """Build from a mapping with unit-suffixed keys (a workload YAML file).

        Accepted size keys: ``object_bytes``, ``io_bytes``, ``dataset_bytes``,
        ``dataset_gb`` (1e9 B), ``dataset_gib``; time keys ``think_time_s``,
        ``think_time_ms``; other keys are the field names. Unknown keys raise
        a ValueError listing the valid ones.
        """
        data = dict(data)
        conversions = {
            "dataset_gb": ("dataset_bytes", 1e9),
            "dataset_gib": ("dataset_bytes", GIB),
            "think_time_ms": ("think_time_s", 1e-3),
            "arrival_rate_ops_s": ("arrival_rate", 1.0),
        }
        for key, (target, factor) in conversions.items():
            if key in data:
                if target in data:
                    raise ValueError(f"{key}: give either {key} or {target}, not both")
                data[target] = np.asarray(_numeric(data.pop(key), key), dtype=float) * factor
        valid = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - valid)
        if unknown:
            raise ValueError(
                f"{unknown[0]}: unknown workload key; valid keys: "
                + ", ".join(sorted(valid | set(conversions)))
            )
        return cls(**data)

    @classmethod
    def from_benchmark(cls, row: Mapping[str, Any]) -> Workload:
        """The workload of a recorded figure (a row of :func:`perfmodel.load_benchmarks`).

        Closed loop with ``clients x threads_per_client x iodepth`` (or TPC-C
        terminals), or open arrivals at a throttled run's ``target_rate``; missing
        sizes fall back to documented defaults (1 KiB
        objects, 4 KiB I/Os for block workloads).
        """

        def get(key: str, default: Any = None) -> Any:
            value = row.get(key, default)
            if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
                return default
            return value

        operation = get("operation", "mixed")
        read_fraction = get("read_fraction", {"read": 1.0, "write": 0.0}.get(operation, 0.5))
        clients = get("terminals") or get("clients", 1)
        object_bytes = get("object_bytes") or get("io_bytes") or 1024.0
        target = get("target_rate")
        load = (
            {"arrival_rate": float(target)}  # a throttled run: arrivals at the target rate
            if target is not None
            else {
                "clients": int(clients),
                "threads_per_client": int(get("threads_per_client", 1)),
                "iodepth": int(get("iodepth", 1)),
            }
        )
        return cls(
            operation=operation,
            read_fraction=float(read_fraction),
            object_bytes=float(object_bytes),
            io_bytes=float(get("io_bytes") or object_bytes),
            dataset_bytes=float(get("dataset_gb", 0.0)) * 1e9,
            replication_factor=int(get("replication_factor", 1)),
            key_distribution=str(get("key_distribution", "uniform")),
            zipf_s=float(get("zipf_s", YCSB_ZIPF_S)),
            hot_data_fraction=get("hot_data_fraction"),
            hot_op_fraction=get("hot_op_fraction"),
            access_pattern=str(get("access_pattern", "random")),
            **load,
        )


def load_workload_file(path: str) -> dict:
    """Read a workload YAML (``system``, ``nodes``, ``workload``, ``knobs``).

    ``system`` is a shipped system id or the path of a system spec (relative
    to the workload file's folder).
    """
    from pathlib import Path

    import yaml

    text = read_text(path, "workload file")
    try:
        doc = load_yaml(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"workload file {path}: not valid YAML: {exc}") from None
    if not isinstance(doc, dict) or "workload" not in doc or "system" not in doc:
        raise ValueError(
            f"workload file {path}: needs 'system' and 'workload' (and optionally 'nodes', 'knobs')"
        )
    unknown = set(doc) - {"system", "nodes", "workload", "knobs"}
    if unknown:
        raise ValueError(f"workload file {path}: unknown key {sorted(unknown)[0]!r}")
    for key in ("workload", "knobs"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise ValueError(
                f"workload file {path}: '{key}' must be a mapping of name: value, "
                f"got {type(doc[key]).__name__}"
            )
    if not isinstance(doc["system"], str) or not doc["system"]:
        raise ValueError(f"workload file {path}: 'system' must be a system id or a spec file path")

    knobs = dict(doc.get("knobs") or {})
    try:
        workload = Workload.from_dict(doc["workload"] or {})
        nodes = check_nodes(doc.get("nodes", 1))
        for name, value in knobs.items():
            settings.check(str(name), value)
    except ValueError as exc:
        raise ValueError(f"workload file {path}: {exc}") from None
    system = str(doc["system"])
    if system.endswith((".yaml", ".yml")) and not Path(system).is_absolute():
        system = str(Path(path).resolve().parent / system)  # a spec next to the workload file
    return {
        "system": system,
        "nodes": nodes,
        "workload": workload,
        "knobs": knobs,
    }
