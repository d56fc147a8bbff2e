"""RocksDB db_bench's report.

Each benchmark prints one line, ``readrandom : 3.146 micros/op 533074 ops/sec 0.188 seconds 100000
operations; 51.1 MB/s (43375 of 50000 found)`` (older releases end at ``ops/sec;``), and with
``--histogram`` a ``Microseconds per read:`` block (Count, Average, Max, ``Percentiles: P50 ...
P99.99``). ``micros/op`` depends on the release: RocksDB 2.0-5.x printed the wall time per
operation (``elapsed / ops``, metric ``time_per_op``); RocksDB 6.0 on (facebook/rocksdb d9c9f3c,
#4949, 2019-02-05), LevelDB and RocksDB before 2.0 print the threads' summed running time per
operation (``thread_time_per_op``, about ``threads / ops/sec``); the header's ``RocksDB: version``
line decides, and without it the current meaning is assumed (a note says so). ``MB/s`` is MiB per
second (db_bench divides by 1048576). The header states key and value sizes and the entries; the thread
count (``--threads``) is not printed, so ``--set clients=N`` supplies it. Reference: RocksDB wiki,
"Benchmarking tools" (https://github.com/facebook/rocksdb/wiki/Benchmarking-tools).
"""

from __future__ import annotations

import re

from perfmodel.evidence.ingest.common import (
    IngestError,
    Measurement,
    Parsed,
    lines,
    percentile_metric,
    run_measurements,
)
from perfmodel.inputs.units import GB

NAME = "db_bench"
TOOL = "db_bench"
SYSTEM = "rocksdb"
#: the load generator the figures name (column load_generator, data/load_generators.yaml)
TOOL = "db_bench"
WRITES = ("fill", "overwrite", "update", "delete", "merge", "append", "bulkload")
READS = ("read", "seek", "multireadrandom", "getmergeoperands")
#: db_bench benchmarks that mix: the printed rate counts the reads while one writer runs
READ_WHILE = ("readwhilewriting", "readwhilemerging", "readwhilescanning")
NEEDS = {"clients": "db_bench --threads (default 1)"}
_RESULT = re.compile(
    r"^(\w+)\s*:\s*([\d.]+) micros/op\s+(\d+) ops/sec(?:\s+([\d.]+) seconds\s+(\d+) operations)?;"
    r"\s*(?:([\d.]+) MB/s)?",
    flags=re.M,
)


def detect(text: str) -> bool:
    """A db_bench report."""
    return bool(re.search(r"^\w+\s*:\s*[\d.]+ micros/op", "\n".join(lines(text)), flags=re.M))


def _operation(name: str) -> dict | None:
    if name in ("readrandomwriterandom", "readrandommergerandom", "ycsb"):
        return None
    if name.startswith(READ_WHILE) or name.startswith(READS):
        return {"operation": "read", "read_fraction": 1.0}
    if name.startswith(WRITES):
        return {"operation": "write", "read_fraction": 0.0}
    return None


def micros_per_op_metric(text: str) -> tuple[str, str]:
    """The metric db_bench's ``micros/op`` is, from the header's version line, and a note.

    ``thread_time_per_op`` (threads' summed running seconds / operations) for LevelDB, RocksDB
    before 2.0 and from 6.0; ``time_per_op`` (wall seconds / operations) for RocksDB 2.0-5.x, the
    releases between facebook/rocksdb 4985a9f (2013-06-12) and d9c9f3c (2019-02-05, in 6.0.1).
    """
    version = re.search(r"^(RocksDB|LevelDB):\s+version\s+(\d+)\.(\d+)", text, flags=re.M)
    if version is None:
        return "thread_time_per_op", (
            "no 'RocksDB: version' line: micros/op read as the threads' time per operation "
            "(RocksDB 6.0 on); a 2.0-5.x build printed wall time per operation"
        )
    if version.group(1) == "RocksDB" and 2 <= int(version.group(2)) < 6:
        return "time_per_op", ""
    return "thread_time_per_op", ""


def _header(text: str) -> dict:
    load = {}
    keys = re.search(r"^Keys:\s+(\d+) bytes each", text, flags=re.M)
    values = re.search(r"^Values:\s+(\d+) bytes each", text, flags=re.M)
    entries = re.search(r"^Entries:\s+(\d+)", text, flags=re.M)
    if values:
        load["object_bytes"] = int(values.group(1))
    if keys and values and entries:
        load["dataset_gb"] = int(entries.group(1)) * (int(keys.group(1)) + int(values.group(1))) / GB
    return load


def _histogram(rest: str) -> list[tuple[str, str, str, str]]:
    """Average, maximum and percentiles of the histogram that follows a result line [us]."""
    block = re.match(r"\s*\n?Microseconds per \w+:\n(Count:.*\n.*\n(?:Percentiles:.*)?)", rest)
    if not block:
        return []
    text = block.group(1)
    out = []
    for label, metric in (("Average", "latency_mean"), ("Max", "latency_max")):
        match = re.search(rf"{label}: ([\d.]+)", text)
        if match:
            out.append((metric, match.group(1), "us", f"histogram '{label}'"))
    for pct, value in re.findall(r"P([\d.]+): ([\d.]+)", text):
        out.append((percentile_metric(float(pct)), value, "us", f"histogram 'P{pct}'"))
    return out


def _benchmark(match: re.Match, rest: str, load: dict, per_op: str) -> list[Measurement]:
    name = match.group(1)
    values = [
        ("throughput", match.group(3), "ops/s", "'ops/sec'"),
        (per_op, match.group(2), "us", "'micros/op'"),
    ]
    if match.group(6):
        values.append(("bandwidth", match.group(6), "MiB/s", "'MB/s' (MiB: bytes / 1048576)"))
    out = run_measurements(name, f"result line '{name}'", load, values, closed_loop=False)
    out = [m if m.metric != per_op else _same(m, name) for m in out]
    return out + run_measurements(
        name, f"histogram after '{name}'", load, _histogram(rest), closed_loop=False
    )


def _same(m: Measurement, name: str) -> Measurement:
    """micros/op restates ops/sec (wall or threads' time per operation)."""
    return Measurement(m.key, m.metric, m.value, m.unit, m.locator, m.load, (name, "throughput"), m.note)


def parse(text: str) -> Parsed:
    """Figures of each benchmark db_bench ran (those that only read or only write)."""
    text = "\n".join(lines(text))
    header = _header(text)
    per_op, version_note = micros_per_op_metric(text)
    out, notes, seen = [], [version_note] if version_note else [], set()
    matches = list(_RESULT.finditer(text))
    for i, match in enumerate(matches):
        name = match.group(1)
        rest = text[match.end() : matches[i + 1].start() if i + 1 < len(matches) else len(text)]
        rest = rest.split("\n", 1)[1] if "\n" in rest else ""
        kind = _operation(name)
        if kind is None:
            notes.append(f"{name}: neither only reads nor only writes, not recorded")
            continue
        if name in seen:
            notes.append(f"{name} ran twice: the first run is recorded")
            continue
        seen.add(name)
        order = {"access_pattern": "sequential" if "seq" in name else "random"}  # fillseq, readseq
        out += _benchmark(match, rest, {**header, **kind, **order, "threads_per_client": 1}, per_op)
        if name.startswith(READ_WHILE):
            notes.append(f"{name}: the rate counts the reads; a writer ran alongside")
    if not out:
        raise IngestError("the db_bench report has no benchmark that only reads or only writes")
    return Parsed(tuple(out), needs=NEEDS, notes=tuple(notes))
