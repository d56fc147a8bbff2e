"""Recorded benchmark figures: schema, loading and validation.

Every number the model is calibrated or validated against is one row of a tidy
CSV file in ``data/benchmarks/`` (shipped in the wheel). A row says where the
number comes from (``source``, ``locator``), what ran (system, platform,
device, workload, the knobs the source varied) and what was measured
(``metric``, ``value``, ``unit``). Users bring their own measurements in the
same schema: ``load_benchmarks("my.csv")``.

Relative figures (``unit`` = ``ratio`` or ``pct_change``) are kept as what
they are. Their row describes the measured configuration, and ``baseline``
says how the configuration they compare against differs from it, as
``field=value`` pairs separated by ``;`` -- e.g. a row for 3 replicas with
``baseline`` = ``replication_factor=2``. A model predicts the same ratio by
evaluating both configurations.

The schema is :data:`COLUMNS` (rendered in ``data/benchmarks/README.md``).
"""

from __future__ import annotations

import csv
import difflib
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from perfmodel.inputs import load_generators
from perfmodel.inputs import units as _units
from perfmodel.inputs._data import data_dir
from perfmodel.inputs.catalog import Catalog, default_catalog
from perfmodel.inputs.consistency import CONSISTENCY_LEVELS
from perfmodel.inputs.errors import DataError, Problem
from perfmodel.inputs.keys import ACCESS_PATTERNS, KEY_DISTRIBUTIONS
from perfmodel.inputs.knobs import KNOBS
from perfmodel.inputs.systems import list_systems, load_system

OPERATIONS = ("read", "write", "mixed", "tpcc")
ROLES = ("measured", "summary", "claim")
LEVELS = ("client", "device", "network", "cpu")
IO_TYPES = ("read", "write", "discard")
AGGREGATES = ("mean", "min", "max", "median")
RELATIONS = ("eq", "gt", "lt", "approx")
READ_SOURCES = ("cache", "disk")
QUERY_PROTOCOLS = ("simple", "prepared")
NUMA_BINDINGS = ("bound", "unbound")

#: metric -> unit dimensions it may be recorded in (relative units always allowed)
METRICS: dict[str, tuple[str, ...]] = {
    "throughput": ("rate",),
    "tpmc": ("rate",),
    "iops": ("rate",),
    "bandwidth": ("bandwidth",),
    "latency_mean": ("time",),
    "latency_p50": ("time",),
    "latency_p95": ("time",),
    "latency_p99": ("time",),
    "latency_p999": ("time",),
    "latency_max": ("time",),
    "time_per_op": ("time",),
    "thread_time_per_op": ("time",),
    "completion_time": ("time",),
    "queue_depth": ("count",),
    "io_volume": ("size",),
    "io_share_by_count": ("fraction",),
    "io_share_by_volume": ("fraction",),
    "io_size_share": ("fraction",),
    "utilization": ("fraction",),
    "cpu_utilization": ("fraction",),
}


@dataclass(frozen=True)
class Column:
    """One column of the benchmark schema.

    ``kind`` is one of ``id``, ``ids`` (figure ids separated by ``;``), ``text``,
    ``choice``, ``int`` (whole number >= 1),
    ``float`` (finite, > 0), ``fraction`` (in [0, 1]), ``bool`` (true/false),
    ``platform``, ``device`` (ids that must resolve in the hardware catalog).
    ``config`` marks the columns that describe the configuration (they may
    appear in ``baseline``).
    """

    name: str
    kind: str
    required: bool
    description: str
    choices: tuple[str, ...] = ()
    config: bool = False


COLUMNS: tuple[Column, ...] = (
    Column("figure_id", "id", True, "stable unique id of the figure"),
    Column("source_id", "id", True, "short id of the source document (seed000, ctx-ceph-part2)"),
    Column(
        "group",
        "id",
        False,
        "sources that share a lab or derive from each other share a group; leave-one-group-out "
        "cross-validation holds a group out together (blank = source_id)",
    ),
    Column("source", "text", True, "the source: seed file name or full citation"),
    Column("locator", "text", True, "where in the source: table, figure, paragraph"),
    Column(
        "role",
        "choice",
        True,
        "measured (a measurement), summary (the source's rounded restatement of "
        "its own measurements), claim (an unmeasured or marketing statement)",
        ROLES,
    ),
    Column(
        "system",
        "system",
        True,
        "database or storage system: a shipped spec id (data/systems/) or the path of your own spec "
        "(relative to the CSV file)",
        config=True,
    ),
    Column(
        "platform_id",
        "platform",
        False,
        "server, a hardware catalog id (required unless role is claim)",
        config=True,
    ),
    Column(
        "device_id",
        "device",
        False,
        "data storage device, a catalog id (required unless role is claim)",
        config=True,
    ),
    Column("wal_device_id", "device", False, "separate WAL/DB device, a catalog id", config=True),
    Column("nodes", "int", False, "server nodes in the cluster [count] (blank = 1)", config=True),
    Column(
        "variant",
        "text",
        False,
        "short tag of a configuration the source names (default, tuned, hci-boost)",
        config=True,
    ),
    Column("operation", "choice", True, "workload operation", OPERATIONS, config=True),
    Column("read_fraction", "fraction", False, "share of reads in the workload [-]", config=True),
    Column("object_bytes", "float", False, "row / value / object size [B]", config=True),
    Column("io_bytes", "float", False, "I/O (block) size the figure refers to [B]", config=True),
    Column("dataset_gb", "float", False, "dataset size [GB = 1e9 B]", config=True),
    Column(
        "key_distribution",
        "choice",
        False,
        "which keys the requests pick (perfmodel.inputs.keys): uniform, zipf (Zipf over the keys: sysbench "
        "zipfian, memtier Z), scrambled_zipf (YCSB zipfian), latest (YCSB workload D), hotspot (YCSB "
        "hotspot), special (sysbench 1.0's default --rand-type); blank = uniform",
        KEY_DISTRIBUTIONS,
        config=True,
    ),
    Column(
        "zipf_s",
        "float",
        False,
        "Zipf exponent for zipf / latest keys [-] (blank = 0.99, YCSB's)",
        config=True,
    ),
    Column(
        "hot_data_fraction",
        "fraction",
        False,
        "the hot set's share of the keys [-] (hotspot, special; blank: YCSB's 0.2, sysbench's 0.01)",
        config=True,
    ),
    Column(
        "hot_op_fraction",
        "fraction",
        False,
        "the share of requests that go to the hot set [-] (hotspot, special; blank: YCSB's 0.8, "
        "sysbench's 0.75)",
        config=True,
    ),
    Column(
        "access_pattern",
        "choice",
        False,
        "the order requests visit keys or offsets (perfmodel.inputs.keys): random, or sequential (fio "
        "rw=read/write, db_bench fillseq/readseq, rados bench seq, cassandra-stress -pop seq=); blank = "
        "random",
        ACCESS_PATTERNS,
        config=True,
    ),
    Column(
        "latency_start",
        "choice",
        False,
        "a throttled run's latency counted from: actual (blank: when the request was sent, YCSB's default "
        "measurement.interval=op, cassandra-stress) or intended (when it was due: YCSB intended, wrk2, "
        "coordinated omission corrected)",
        ("actual", "intended"),
        config=True,
    ),
    Column(
        "client_cores",
        "int",
        False,
        "hardware threads of the load-generator machines together [count] (knob client_cores: the load "
        "generator's time per request is then served on them, inside the latency; blank: not modelled)",
        config=True,
    ),
    Column(
        "load_generator",
        "choice",
        False,
        "the tool that ran the load (blank: not stated). A tool with a measured CPU per request "
        f"(data/load_generators.yaml: {', '.join(load_generators.table().costs)}) sets the model's "
        "client_time knob to it; the others set nothing",
        load_generators.names(),
        config=True,
    ),
    Column(
        "memtable",
        "choice",
        False,
        "the LSM memtable's representation (knob memtable): skiplist (blank) or vector (db_bench "
        "--memtablerep=vector, benchmark.sh's bulk loads)",
        KNOBS["memtable"].choices,
        config=True,
    ),
    Column(
        "compactions",
        "choice",
        False,
        "whether the LSM tree compacted during the run (knob compactions): auto (blank) or off (auto "
        "compactions disabled: db_bench --disable_auto_compactions=1, benchmark.sh's bulkload step)",
        KNOBS["compactions"].choices,
        config=True,
    ),
    Column(
        "durability",
        "choice",
        False,
        "whether writes wait for their log (knob durability): spec (blank: as the system's spec), async "
        "(commits do not wait: synchronous_commit=off, fsync=off, innodb_flush_log_at_trx_commit=0/2), "
        "off (no log: RocksDB disable_wal)",
        KNOBS["durability"].choices,
        config=True,
    ),
    Column("clients", "int", False, "client processes / loaders / volumes [count]", config=True),
    Column("threads_per_client", "int", False, "threads per client [count]", config=True),
    Column("iodepth", "int", False, "outstanding I/Os per client [count]", config=True),
    Column("terminals", "int", False, "TPC-C terminals [count]", config=True),
    Column("warehouses", "int", False, "TPC-C warehouses [count]", config=True),
    Column("replication_factor", "int", False, "copies of the data [count]", config=True),
    Column("cache_gb", "float", False, "cache / buffer pool size [GB]", config=True),
    Column("cores_used", "int", False, "physical cores the system may use [count]", config=True),
    Column("threads_per_core", "int", False, "SMT mode: hardware threads per core", config=True),
    Column("shards", "int", False, "shards / worker threads [count]", config=True),
    Column("cores_per_device", "float", False, "physical cores per storage device", config=True),
    Column("osds_per_device", "int", False, "Ceph OSDs per storage device [count]", config=True),
    Column("numa_binding", "choice", False, "process bound to NUMA nodes or not", NUMA_BINDINGS, config=True),
    Column("log_files", "int", False, "database redo log files [count]", config=True),
    Column("virtualized", "bool", False, "runs in a VM / hyper-converged (true/false)", config=True),
    Column(
        "client_colocated",
        "bool",
        False,
        "the load generator runs on the server's own cores (pinned to the same CPUs), so its work per "
        "request takes them (true/false; blank = false: its own cores or host)",
        config=True,
    ),
    Column(
        "read_source",
        "choice",
        False,
        "reads served from cache (the source shows every read hit memory: the cache hit ratio is 1) "
        "or disk (a cold cache: every read misses); blank: the cache model's hit ratio",
        READ_SOURCES,
        config=True,
    ),
    Column(
        "client_link_gbps",
        "float",
        False,
        "a shared client-side link the load crosses [Gb/s] (e.g. a lab uplink)",
        config=True,
    ),
    Column(
        "network_id",
        "network",
        False,
        "the network the load crosses, a catalog network id (blank: the platform's NIC; loopback: the "
        "load generator runs on the server)",
        config=True,
    ),
    Column(
        "statements_per_op",
        "int",
        False,
        "statements one reported operation runs (a sysbench oltp_read_only transaction: 14 SELECTs; "
        "blank = 1, or the system's statements per TPC-C transaction)",
        config=True,
    ),
    Column(
        "read_statements_per_op",
        "float",
        False,
        "of a writing operation's statements, those that only read (a sysbench oltp_read_write "
        "transaction: 14 SELECTs of 18; blank = 0); every such operation commits, so its read_fraction "
        "is the share of operations that write nothing",
        config=True,
    ),
    Column(
        "keys_per_op",
        "float",
        False,
        "index lookups one reported operation's statements make in all (an IN list of 100 keys: 100; "
        "blank = one per statement)",
        config=True,
    ),
    Column(
        "rows_per_op",
        "float",
        False,
        "table rows one reported operation's statements visit in all (a 100-row range: 100; a sysbench "
        "oltp_read_only transaction: 10 point + 4 x 100-row range SELECTs = 410; blank = one per lookup)",
        config=True,
    ),
    Column(
        "query_protocol",
        "choice",
        False,
        "how the statements reach a SQL server: simple (SQL text, parsed and planned every time: pgbench's "
        "default query mode, sysbench Lua that builds each query with con:query) or prepared (server-side "
        "prepared statements: sysbench's con:prepare with its default --db-ps-mode=auto); blank = prepared",
        QUERY_PROTOCOLS,
        config=True,
    ),
    Column(
        "target_rate",
        "float",
        False,
        "a throttled (open-loop) load's target rate [ops/s] over the whole cluster (blank: closed loop); "
        "the clients then only keep up with it",
        config=True,
    ),
    Column(
        "consistency",
        "choice",
        False,
        "replicas a write waits for (Cassandra / ScyllaDB consistency level; blank: the system's default)",
        CONSISTENCY_LEVELS,
        config=True,
    ),
    Column(
        "read_consistency",
        "choice",
        False,
        "replicas a read waits for (Cassandra / ScyllaDB read consistency level: QUORUM waits for the "
        "digests of other replicas; blank: ONE)",
        CONSISTENCY_LEVELS,
        config=True,
    ),
    Column(
        "zones",
        "int",
        False,
        "availability zones of a cloud region the cluster's nodes and each key's replicas were spread "
        "over (knob zones; blank = 1: one site)",
        config=True,
    ),
    Column(
        "zone_rtt_us",
        "float",
        False,
        "the region's round trip between availability zones [us] (knob zone_rtt_s; blank: the "
        "platform's catalog zone_rtt_us)",
        config=True,
    ),
    Column(
        "ec_profile",
        "ec",
        False,
        "erasure-coding profile k+m (Ceph EC pools: k data and m coding chunks; blank: replicated)",
        config=True,
    ),
    Column(
        "copies_per_node",
        "int",
        False,
        "most copies or erasure-coded chunks of one object a node held (knob copies_per_node; blank = "
        "1, each on its own node; Ceph's crush-failure-domain=osd, e.g. a pool on one host: more)",
        config=True,
    ),
    Column(
        "level",
        "choice",
        True,
        "where it was measured: client (benchmark tool), device (iostat, trace), network, cpu",
        LEVELS,
    ),
    Column("io_type", "choice", False, "I/O stream a device-level figure counts", IO_TYPES),
    Column("metric", "choice", True, "what was measured", tuple(METRICS)),
    Column(
        "aggregate",
        "choice",
        False,
        "statistic over time or over a swept knob (blank = as reported, a run mean)",
        AGGREGATES,
    ),
    Column(
        "relation",
        "choice",
        False,
        "eq (blank), gt / lt (the source says more / less than value), approx",
        RELATIONS,
    ),
    Column("value", "number", True, "the number as the source prints it"),
    Column("unit", "unit", True, "unit of value, see perfmodel.inputs.units"),
    Column(
        "baseline",
        "baseline",
        False,
        "for ratio / pct_change: how the compared configuration differs, 'field=value;field=value'",
    ),
    Column(
        "same_measurement",
        "ids",
        False,
        "figure ids of the same measurement in another form, ';'-separated (a ratio of two recorded "
        "absolutes, a time per operation of a throughput, a closed loop's mean latency of its "
        "throughput); leave-one-out holds them out together",
    ),
    Column("notes", "text", False, "anything else: reading method, caveats"),
)

COLUMN_BY_NAME = {c.name: c for c in COLUMNS}
CONFIG_COLUMNS = tuple(c.name for c in COLUMNS if c.config)
_NUMERIC_KINDS = ("int", "float", "fraction", "number")


def _parse_field(col: Column, text: str, catalog: Catalog, base: str = ".") -> tuple[object, str | None]:
    """Parse one cell; return ``(value, error message or None)``."""
    text = text.strip()
    if text == "":
        if col.required:
            return None, "is required"
        return (math.nan if col.kind in ("int", "float", "fraction") else ""), None
    kind = col.kind
    if kind == "ids":
        ids = [part.strip() for part in text.split(";")]
        if any(not part or any(ch.isspace() for ch in part) for part in ids):
            return None, f"must be figure ids separated by ';', got {text!r}"
        return ";".join(ids), None
    if kind == "ec":
        k, plus, m = text.partition("+")
        if not plus or not k.isdigit() or not m.isdigit() or int(k) < 1:
            return None, f"must be an erasure-coding profile k+m (e.g. 4+2), got {text!r}"
        return f"{int(k)}+{int(m)}", None
    if kind in ("id", "text", "unit", "baseline"):
        if kind == "id" and any(ch.isspace() for ch in text):
            return None, f"must not contain spaces, got {text!r}"
        return text, None
    if kind == "choice":
        if text not in col.choices:
            return None, f"must be one of {', '.join(col.choices)}; got {text!r}"
        return text, None
    if kind == "bool":
        low = text.lower()
        if low not in ("true", "false"):
            return None, f"must be true or false, got {text!r}"
        return low == "true", None
    if kind == "system":
        if text in list_systems():
            return text, None
        if text.endswith((".yaml", ".yml")):
            path = Path(text) if Path(text).is_absolute() else Path(base) / text
            try:
                load_system(path)
            except (OSError, ValueError, KeyError) as exc:
                return None, f"system spec {text!r} cannot be loaded: {exc}"
            return str(path.resolve()), None
        return None, f"must be one of {', '.join(list_systems())} or a system spec YAML path; got {text!r}"
    if kind in ("platform", "network", "device"):
        table = {"platform": catalog.platforms, "network": catalog.networks, "device": catalog.devices}[kind]
        return (text, None) if text in table else (None, _unknown(kind, text, table))
    try:
        number = float(text)
    except ValueError:
        return None, f"must be a number, got {text!r}"
    if not math.isfinite(number):
        return None, f"must be finite, got {text!r}"
    if kind == "number":
        return number, None
    if kind == "fraction":
        if not 0.0 <= number <= 1.0:
            return None, f"must be in [0, 1], got {text!r}"
        return number, None
    if number <= 0:
        return None, f"must be positive, got {text!r}"
    if kind == "int" and number != int(number):
        return None, f"must be a whole number, got {text!r}"
    return number, None


def parse_baseline(text: str) -> dict[str, object]:
    """Parse ``'field=value;field=value'`` into a dict of typed values.

    Raises ValueError naming the offending field when a key is not a
    configuration column or its value does not parse.
    """
    result: dict[str, object] = {}
    catalog = default_catalog()
    for part in filter(None, (p.strip() for p in text.split(";"))):
        key, sep, raw = part.partition("=")
        key = key.strip()
        if not sep:
            raise ValueError(f"baseline part {part!r} is not 'field=value'")
        if key not in CONFIG_COLUMNS:
            raise ValueError(
                f"baseline field {key!r} is not a configuration column; valid: " + ", ".join(CONFIG_COLUMNS)
            )
        col = COLUMN_BY_NAME[key]
        # an empty value means "not set" in the baseline (e.g. no WAL device)
        value, err = _parse_field(replace(col, required=False), raw, catalog)
        if err:
            raise ValueError(f"baseline field {key!r} {err}")
        if key in result:
            raise ValueError(f"baseline field {key!r} given twice")
        result[key] = value
    if not result:
        raise ValueError("baseline is empty")
    return result


def _check_row(rec: dict, file: str, line: str, add) -> None:
    """Cross-field checks: unit vs metric, relative figures, value range."""
    if rec.get("role") != "claim":
        for key in ("platform_id", "device_id"):
            if not rec.get(key):
                add(key, "is required for measured and summary figures (only claims may omit it)")
    unit_name, metric, value = rec.get("unit"), rec.get("metric"), rec.get("value")
    if unit_name is None or value is None:
        return
    if unit_name not in _units.UNITS:
        add("unit", f"unknown unit {unit_name!r}; known: {', '.join(_units.UNITS)}")
        return
    unit = _units.UNITS[unit_name]
    relative = unit.dimension in _units.RELATIVE_DIMENSIONS
    if metric is not None and not relative and unit.dimension not in METRICS[metric]:
        add(
            "unit",
            f"{unit_name!r} ({unit.dimension}) does not fit metric {metric!r} "
            f"(expects {', '.join(METRICS[metric])} or a relative unit)",
        )
    if unit.dimension == "pct_change":
        if value <= -100:
            add("value", f"a pct_change must be > -100, got {value}")
    elif unit.dimension == "fraction":
        if not 0 <= value <= 100:
            add("value", f"a pct share must be in [0, 100], got {value}")
    elif value <= 0:
        add("value", f"must be positive for unit {unit_name!r}, got {value}")
    baseline = rec.get("baseline", "")
    if relative and not baseline:
        add("baseline", f"a relative figure ({unit_name}) needs a baseline configuration")
    if baseline and not relative:
        add("baseline", f"only relative figures (ratio, pct_change) take a baseline, not unit {unit_name!r}")
    if baseline and relative:
        try:
            parsed = parse_baseline(baseline)
        except ValueError as exc:
            add("baseline", str(exc))
            return
        same = [k for k, v in parsed.items() if _same(rec.get(k), v)]
        if len(same) == len(parsed):
            add("baseline", "describes the same configuration as the row itself")


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _read_csv(path: Path, catalog: Catalog, problems: list[Problem]) -> list[dict]:
    name = str(path)
    try:
        handle = path.open(newline="", encoding="utf-8-sig")  # Excel writes a byte-order mark
    except OSError as exc:
        problems.append(Problem(name, "", "", f"cannot be read: {exc}"))
        return []
    rows: list[dict] = []
    with handle:
        reader = csv.reader(handle)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            problems.append(Problem(name, "1", "", "is empty (expected a header row)"))
            return []
        except (csv.Error, UnicodeDecodeError) as exc:
            problems.append(Problem(name, "1", "", f"is not valid CSV: {exc}"))
            return []
        missing = [c.name for c in COLUMNS if c.required and c.name not in header]
        for col in missing:
            problems.append(Problem(name, "1", col, "required column is missing from the header"))
        unknown = [h for h in header if h not in COLUMN_BY_NAME]
        for col in unknown:
            problems.append(Problem(name, "1", col, "unknown column (see data/benchmarks/README.md)"))
        dupes = {h for h in header if header.count(h) > 1}
        for col in dupes:
            problems.append(Problem(name, "1", col, "column appears twice in the header"))
        if missing or unknown or dupes:
            return []
        try:
            for lineno, cells in enumerate(reader, start=2):
                if not cells or all(not c.strip() for c in cells):
                    continue
                if len(cells) != len(header):
                    problems.append(
                        Problem(
                            name, str(lineno), "", f"has {len(cells)} fields, the header has {len(header)}"
                        )
                    )
                    continue
                rec: dict[str, object] = {}
                row_ok = True

                def add(field: str, msg: str, _line=lineno) -> None:
                    problems.append(Problem(name, str(_line), field, msg))

                raw = dict(zip(header, cells, strict=True))
                for col in COLUMNS:
                    value, err = _parse_field(col, raw.get(col.name, ""), catalog, str(path.parent))
                    if err:
                        add(col.name, err)
                        row_ok = False
                    rec[col.name] = value
                if row_ok:
                    before = len(problems)
                    _check_row(rec, name, str(lineno), add)
                    row_ok = len(problems) == before
                if row_ok:
                    rec["file"] = path.name
                    rec["line"] = lineno
                    rows.append(rec)
        except (csv.Error, UnicodeDecodeError) as exc:
            problems.append(Problem(name, str(reader.line_num), "", f"is not valid CSV: {exc}"))
    return rows


#: file-name prefix of the public benchmark corpus (data/benchmarks/corpus_*.csv)
CORPUS_PREFIX = "corpus_"


def calibration_files() -> list[Path]:
    """The shipped fit's figure files: the seed documents and their context (not ``corpus_*``)."""
    return [p for p in benchmark_files() if not p.name.startswith(CORPUS_PREFIX)]


def corpus_files() -> list[Path]:
    """The public benchmark corpus: one file per published source (``corpus_*.csv``)."""
    return [p for p in benchmark_files() if p.name.startswith(CORPUS_PREFIX)]


def calibration_benchmarks() -> pd.DataFrame:
    """The figures the shipped fit and its cross-validation use (:func:`calibration_files`).

    The public corpus (:func:`corpus_benchmarks`) is kept out of that fit: its
    figures of the seed systems are predicted zero-shot, and the systems only the
    corpus describes are fitted on it source by source (:mod:`perfmodel.evidence.corpus`).
    """
    return load_benchmarks(calibration_files())


def corpus_benchmarks() -> pd.DataFrame:
    """The public benchmark corpus's figures (:func:`corpus_files`)."""
    return load_benchmarks(corpus_files())


def benchmark_files(path: str | Path | None = None) -> list[Path]:
    """The CSV files :func:`load_benchmarks` reads for ``path``."""
    base = data_dir() / "benchmarks" if path is None else Path(path)
    if base.is_dir():
        files = sorted(base.glob("*.csv"))
        if not files:
            raise FileNotFoundError(f"no .csv files in {base}")
        return files
    if not base.is_file():
        raise FileNotFoundError(f"benchmark file not found: {base}")
    return [base]


def load_benchmarks(
    path: str | Path | Iterable[str | Path] | None = None, *, catalog: Catalog | None = None
) -> pd.DataFrame:
    """Load and validate recorded benchmark figures.

    Parameters
    ----------
    path : None for every figure shipped with perfmodel, or a CSV file, a
        folder of CSV files, or a list of those, in the schema of
        :data:`COLUMNS` (see ``data/benchmarks/README.md``).
    catalog : the hardware catalog ids must resolve in (default: shipped).

    Returns
    -------
    DataFrame, one row per figure: the schema's columns (missing optional
    numbers are NaN, missing text is ""), plus ``value_si`` and ``unit_si``
    (value converted to SI: 1/s, B/s, s, B, fractions; relative units
    unchanged), ``file`` and ``line``, ``family`` (the platform's architecture family:
    power8, x86, kunpeng, arm) and ``collection`` (``seed``: the seed documents and their
    context; ``corpus``: the public benchmark corpus, ``corpus_*.csv``).

    Raises
    ------
    DataError : listing every malformed cell with its file, line and field
        (missing column, unknown unit, non-numeric value, unresolved platform,
        duplicate figure id, ratio without baseline, ...). No row is dropped
        silently.
    """
    catalog = catalog or default_catalog()
    if path is None or isinstance(path, str | Path):
        files = benchmark_files(path)
    else:
        files = [f for p in path for f in benchmark_files(p)]
    problems: list[Problem] = []
    rows: list[dict] = []
    for file in files:
        rows.extend(_read_csv(file, catalog, problems))
    seen: dict[str, dict] = {}

    def problem(rec: dict, field: str, message: str) -> None:
        problems.append(Problem(rec["file"], str(rec["line"]), field, message))

    for rec in rows:
        first = seen.setdefault(str(rec["figure_id"]), rec)
        if first is not rec:
            where = f"{first['file']}:{first['line']}"
            problem(rec, "figure_id", f"duplicate figure id {rec['figure_id']!r} (first at {where})")
    for rec in rows:
        for other in filter(None, str(rec["same_measurement"]).split(";")):
            if other == rec["figure_id"]:
                problem(rec, "same_measurement", "names the row itself")
            elif other not in seen:
                problem(rec, "same_measurement", f"figure {other!r} is not among the loaded figures")
    if problems:
        raise DataError(problems)
    frame = pd.DataFrame(rows, columns=[c.name for c in COLUMNS] + ["file", "line"])
    frame["group"] = frame["group"].where(frame["group"] != "", frame["source_id"])
    frame["value_si"] = [_units.to_si(v, u) for v, u in zip(frame["value"], frame["unit"], strict=True)]
    frame["unit_si"] = [_units.UNITS[u].si for u in frame["unit"]]
    for col in COLUMNS:
        if col.kind in ("int", "float", "fraction", "number"):
            frame[col.name] = frame[col.name].astype(float)
    for col in ("virtualized", "client_colocated"):
        frame[col] = frame[col].map(lambda v: v if isinstance(v, bool) else pd.NA)
    arches = {p: catalog.platform(p).arch for p in set(frame["platform_id"]) if p}
    frame["family"] = frame["platform_id"].map(lambda p: arches.get(p, ""))
    frame["collection"] = [
        "corpus" if Path(f).name.startswith(CORPUS_PREFIX) else "seed" for f in frame["file"]
    ]
    return frame


def summarize_benchmarks(
    frame: pd.DataFrame,
    by: Iterable[str] = ("source_id", "metric"),
) -> pd.DataFrame:
    """Count figures by ``by`` columns, with how many are relative figures."""
    by = list(by)
    unknown = [c for c in by if c not in frame.columns]
    if unknown:
        raise ValueError(f"by: unknown column {unknown[0]!r}; columns: {', '.join(map(str, frame.columns))}")
    relative = frame["unit"].map(_units.is_relative)
    out = (
        frame.assign(relative=relative)
        .groupby(by, sort=True)
        .agg(
            figures=("figure_id", "size"),
            relative=("relative", "sum"),
            systems=("system", lambda s: ",".join(sorted(set(s)))),
        )
    )
    return out.reset_index()


def _unknown(kind: str, text: str, table) -> str:
    """Why a catalog id is refused: the closest ids, and where the full list and the user's own are."""
    close = difflib.get_close_matches(text, list(table), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    own = "--catalog DIR" + (
        ", or a platform YAML with --platform where the verb takes it" if kind == "platform" else ""
    )
    return (
        f"{kind} {text!r} is not in the hardware catalog{hint} `perfmodel {kind}s` lists its {len(table)} "
        f"(your own: {own})"
    )


def schema_markdown() -> str:
    """The schema as a Markdown table (kept in data/benchmarks/README.md)."""
    lines = ["| column | required | kind | meaning |", "|---|---|---|---|"]
    for c in COLUMNS:
        kind = c.kind + (f": {' / '.join(c.choices)}" if c.choices else "")
        lines.append(f"| `{c.name}` | {'yes' if c.required else ''} | {kind} | {c.description} |")
    return "\n".join(lines)
