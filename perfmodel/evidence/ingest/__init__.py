"""Benchmark tools' outputs read into recorded figures (``perfmodel ingest``).

One module per tool; each has a pure ``parse(text) -> Parsed`` and a ``detect(text)``. A
:class:`Format` ties them to the format's name and the system the tool implies (pgbench runs on
PostgreSQL). :func:`read` turns one output and a :class:`~.common.Context` (what the output does
not say: platform, device, nodes, ``--set``) into figure rows of :mod:`perfmodel.evidence.recorded`;
:func:`write_csv` writes them and :func:`validate_csv` loads them back exactly as
:func:`~perfmodel.evidence.recorded.load_benchmarks` does for ``perfmodel validate --data``.
"""

from __future__ import annotations

import csv
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from perfmodel.evidence.ingest import (
    cassandra_stress,
    db_bench,
    fio,
    memaslap,
    memtier,
    pgbench,
    rados_bench,
    redis_benchmark,
    sysbench,
    tpcc,
    ycsb,
)
from perfmodel.evidence.ingest.common import Context, Ingested, IngestError, Parsed, figure_rows, slug
from perfmodel.evidence.recorded import COLUMNS, load_benchmarks
from perfmodel.inputs.errors import read_text

__all__ = [
    "FORMATS",
    "Context",
    "Format",
    "IngestError",
    "Ingested",
    "detect",
    "read",
    "validate_csv",
    "write_csv",
]


@dataclass(frozen=True)
class Format:
    """One output format: ``name`` (``--format``), what it is, its parser and detector, the
    system the tool implies ("" when the output or the user must say) and the tool itself (the
    figures' ``load_generator``: :func:`perfmodel.inputs.load_generators.names`)."""

    name: str
    description: str
    parse: Callable[[str], Parsed]
    detect: Callable[[str], bool]
    system: str = ""
    tool: str = ""


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(fio.NAME, "fio --output-format=json", fio.parse, fio.detect, fio.SYSTEM, fio.TOOL),
        Format(
            sysbench.NAME,
            "sysbench OLTP or fileio report",
            sysbench.parse,
            sysbench.detect,
            tool=sysbench.TOOL,
        ),
        Format(pgbench.NAME, "pgbench report", pgbench.parse, pgbench.detect, pgbench.SYSTEM, pgbench.TOOL),
        Format(
            redis_benchmark.CSV_NAME,
            "redis-benchmark --csv",
            redis_benchmark.parse_csv,
            redis_benchmark.detect_csv,
            redis_benchmark.SYSTEM,
            redis_benchmark.TOOL,
        ),
        Format(
            redis_benchmark.NAME,
            "redis-benchmark text or -q report",
            redis_benchmark.parse,
            redis_benchmark.detect,
            redis_benchmark.SYSTEM,
            redis_benchmark.TOOL,
        ),
        Format(
            memtier.NAME,
            "memtier_benchmark --json-out-file",
            memtier.parse,
            memtier.detect,
            tool=memtier.TOOL,
        ),
        Format(
            memaslap.NAME,
            "memaslap (memcaslap) report",
            memaslap.parse,
            memaslap.detect,
            memaslap.SYSTEM,
            memaslap.TOOL,
        ),
        Format(ycsb.NAME, "YCSB text summary", ycsb.parse, ycsb.detect, tool=ycsb.TOOL),
        Format(
            cassandra_stress.NAME,
            "cassandra-stress Results: summary",
            cassandra_stress.parse,
            cassandra_stress.detect,
            tool=cassandra_stress.TOOL,
        ),
        Format(
            db_bench.NAME,
            "RocksDB db_bench report",
            db_bench.parse,
            db_bench.detect,
            db_bench.SYSTEM,
            db_bench.TOOL,
        ),
        Format(
            rados_bench.NAME,
            "Ceph rados bench summary",
            rados_bench.parse,
            rados_bench.detect,
            rados_bench.SYSTEM,
            rados_bench.TOOL,
        ),
        Format(
            tpcc.HAMMERDB,
            "HammerDB TPROC-C TEST RESULT line",
            tpcc.parse_hammerdb,
            tpcc.detect_hammerdb,
            tool=tpcc.HAMMERDB,
        ),
        Format(
            tpcc.BENCHMARKSQL,
            "BenchmarkSQL Measured tpmC lines",
            tpcc.parse_benchmarksql,
            tpcc.detect_benchmarksql,
            tool=tpcc.BENCHMARKSQL,
        ),
    )
}


def detect(text: str) -> Format:
    """The format of an output; IngestError when none or several match (then ``--format``)."""
    found = [f for f in FORMATS.values() if f.detect(text)]
    if len(found) == 1:
        return found[0]
    names = ", ".join(FORMATS)
    if not found:
        raise IngestError(f"not an output format perfmodel reads; give --format (one of {names})")
    raise IngestError(f"looks like several formats ({', '.join(f.name for f in found)}); give --format")


def read(text: str, context: Context, fmt: str | None = None) -> Ingested:
    """Figure rows of one output: its format ``fmt`` (None: detected), ``context`` for the rest."""
    if fmt is not None and fmt not in FORMATS:
        raise IngestError(f"--format {fmt}: unknown; one of {', '.join(FORMATS)}")
    form = FORMATS[fmt] if fmt else detect(text)
    return figure_rows(form.parse(text), context, form.name, form.system, form.tool)


def context_for(path: str | Path, **given) -> Context:
    """The context of output file ``path``: ``source`` its name and ``source_id`` its stem
    (unless given), figure ids prefixed with the stem."""
    stem = slug(Path(path).stem)
    given = {k: v for k, v in given.items() if v not in (None, "")}
    given.setdefault("source", Path(path).name)
    given.setdefault("source_id", stem)
    return Context(file_id=stem, **given)


def write_csv(rows: Iterable[dict], path: str | Path) -> Path:
    """Write figure rows as a CSV in the schema (every column, in schema order)."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[c.name for c in COLUMNS])
        writer.writeheader()
        writer.writerows(rows)
    return path


def validate_csv(rows: Iterable[dict], catalog=None, path: str | Path | None = None):
    """The rows loaded through :func:`~perfmodel.evidence.recorded.load_benchmarks` (the same checks
    ``perfmodel validate --data`` makes); written to ``path``, or to a scratch file."""
    if path is not None:
        return load_benchmarks(write_csv(rows, path), catalog=catalog)
    with tempfile.TemporaryDirectory() as scratch:
        return load_benchmarks(write_csv(rows, Path(scratch) / "figures.csv"), catalog=catalog)


def ingest_files(paths: Iterable[str | Path], fmt: str | None = None, **given) -> list[tuple[Path, Ingested]]:
    """Each output file's figure rows (:func:`read` with :func:`context_for`); an
    :class:`IngestError` names the file it is about."""
    out = []
    for path in map(Path, paths):
        text = read_text(path, "benchmark output")
        try:
            out.append((path, read(text, context_for(path, **given), fmt)))
        except IngestError as exc:
            raise IngestError(f"{path}: {exc}") from None
    return out


def _counted(items: Iterable[str]) -> str:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return ", ".join(f"{k} x{n}" if n > 1 else k for k, n in counts.items())


def summary_lines(path: str | Path, ingested: Ingested) -> list[str]:
    """What one file gave: its format, the figures by metric, what was left out and why, notes."""
    head = f"{Path(path).name} ({ingested.format}): {len(ingested.rows)} figures"
    out = [head + (f"; {ingested.system_note}" if ingested.system_note else "")]
    if ingested.rows:
        out.append("  recorded: " + _counted(r["metric"] for r in ingested.rows))
    reasons: dict[str, list[str]] = {}
    for _, metric, why in ingested.left_out:
        reasons.setdefault(why, []).append(metric)
    out += [f"  left out ({why}): {_counted(metrics)}" for why, metrics in reasons.items()]
    out += [f"  note: {note}" for note in ingested.notes]
    return out
