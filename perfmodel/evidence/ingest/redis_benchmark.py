"""redis-benchmark output: ``--csv``, the full text report and ``-q`` lines (Redis 2.6 to 7.x).

Each test (``SET``, ``GET``, ``LPUSH``, ...) is one run. The CSV states no load at all, the text
report the clients and the payload; neither prints the pipeline depth (``-P``), so ``--set
iodepth=N`` supplies it (1 without ``-P``). Latencies are milliseconds. Reference: Redis
documentation, "Redis benchmark" (https://redis.io/docs/latest/operate/oss_and_stack/management/
optimization/benchmarks/).
"""

from __future__ import annotations

import csv
import io
import re

from perfmodel.evidence.ingest.common import IngestError, Measurement, Parsed, lines, run_measurements

NAME = "redis-benchmark"
CSV_NAME = "redis-benchmark-csv"
TOOL = "redis-benchmark"
SYSTEM = "redis"
#: the load generator the figures name (column load_generator, data/load_generators.yaml)
TOOL = "redis-benchmark"
READS = ("GET", "MGET", "LRANGE", "LINDEX", "HGET", "SMEMBERS", "ZRANGE", "EXISTS")
WRITES = (
    "SET",
    "MSET",
    "INCR",
    "LPUSH",
    "RPUSH",
    "LPOP",
    "RPOP",
    "SADD",
    "HSET",
    "SPOP",
    "ZADD",
    "ZPOPMIN",
    "XADD",
)
NEEDS = {
    "clients": "redis-benchmark -c, parallel connections (default 50)",
    "object_bytes": "redis-benchmark -d, value size [B] (default 3)",
    "iodepth": "redis-benchmark -P, requests pipelined per connection (1 without -P)",
}
#: the CSV columns (Redis >= 6.2) and the metric each is
CSV_METRICS = {
    "avg_latency_ms": "latency_mean",
    "p50_latency_ms": "latency_p50",
    "p95_latency_ms": "latency_p95",
    "p99_latency_ms": "latency_p99",
    "max_latency_ms": "latency_max",
}


def detect_csv(text: str) -> bool:
    """A ``--csv`` report: ``"test","rps",...`` or the old two-column ``"SET","12345.67"``."""
    first = text.lstrip().split("\n", 1)[0]
    return first.startswith('"test","rps"') or bool(re.fullmatch(r'"[A-Z_ ()0-9]+","[\d.]+"\s*', first))


def detect(text: str) -> bool:
    """A text report (``====== SET ======`` blocks) or ``-q`` lines."""
    if re.search(r"^\s*====== .+ ======", text, flags=re.M) and "requests completed in" in text:
        return True
    return bool(
        re.search(r"^\s*[A-Z][^:\n]*: [\d.]+ requests per second", "\n".join(lines(text)), flags=re.M)
    )


def command_load(test: str) -> dict | None:
    """Operation columns of a redis-benchmark test, None for one that is not a data read or write
    (PING_INLINE, PING_MBULK)."""
    name = test.split()[0].split("_")[0].upper()
    if name not in READS + WRITES:
        return None
    load = (
        {"operation": "read", "read_fraction": 1.0}
        if name in READS
        else {"operation": "write", "read_fraction": 0.0}
    )
    keys = re.search(r"\((\d+) keys\)", test)
    if keys:
        load["keys_per_op"] = int(keys.group(1))
    rows = re.match(r"LRANGE_(\d+)", test)
    if rows:
        load["rows_per_op"] = int(rows.group(1))
    return load


def _skip(test: str) -> str:
    return f"{test}: not a read or write of data, not recorded"


def parse_csv(text: str) -> Parsed:
    """Figures of a ``redis-benchmark --csv`` report."""
    table = list(csv.reader(io.StringIO(text.strip())))
    header = table[0] if table and table[0][:2] == ["test", "rps"] else ["test", "rps"]
    body = table[1:] if table and table[0][:2] == ["test", "rps"] else table
    out, notes = [], []
    for n, cells in enumerate(body, start=2 if header is table[0] else 1):
        row = dict(zip(header, cells, strict=False))
        load = command_load(row["test"])
        if load is None:
            notes.append(_skip(row["test"]))
            continue
        values = [("throughput", row["rps"], "ops/s", "'rps'")]
        values += [(m, row[c], "ms", f"'{c}'") for c, m in CSV_METRICS.items() if row.get(c)]
        out += run_measurements(row["test"], f"CSV line {n} ({row['test']})", load, values)
    if not out:
        raise IngestError("the redis-benchmark CSV has no read or write test")
    return Parsed(tuple(out), needs=NEEDS, notes=tuple(notes))


def _block_load(block: str, test: str) -> dict | None:
    load = command_load(test)
    if load is None:
        return None
    clients = re.search(r"^\s*(\d+) parallel clients", block, flags=re.M)
    payload = re.search(r"^\s*(\d+) bytes payload", block, flags=re.M)
    if clients:
        load["clients"] = int(clients.group(1))
    if payload:
        load["object_bytes"] = int(payload.group(1))
    return load


def _block_values(block: str) -> list[tuple[str, str, str, str]]:
    """Throughput and latency summary of one ``====== TEST ======`` block."""
    rps = re.search(r"(?:throughput summary: )?([\d.]+) requests per second", block)
    values = [("throughput", rps.group(1), "ops/s", "'requests per second'")] if rps else []
    summary = re.search(r"latency summary \(msec\):\s*\n\s*(avg.*)\n\s*([\d.\s]+)\n", block)
    if summary:
        names = {
            "avg": "latency_mean",
            "p50": "latency_p50",
            "p95": "latency_p95",
            "p99": "latency_p99",
            "max": "latency_max",
        }
        for label, value in zip(summary.group(1).split(), summary.group(2).split(), strict=False):
            if label in names:
                values.append((names[label], value, "ms", f"latency summary '{label}'"))
    return values


def _blocks(text: str) -> list[Measurement]:
    out = []
    parts = re.split(r"^\s*====== (.+?) ======\s*$", text, flags=re.M)
    for test, block in zip(parts[1::2], parts[2::2], strict=True):
        load = _block_load(block, test)
        values = _block_values(block)
        if load is not None and values:
            out += run_measurements(test, f"block '====== {test} ======'", load, values)
    return out


def _quiet(text: str) -> list[Measurement]:
    out = []
    pattern = r"^\s*([A-Z][^:\n]*?): ([\d.]+) requests per second(?:, p50=([\d.]+) msec)?"
    for match in re.finditer(pattern, text, flags=re.M):
        test = match.group(1).strip()
        load = command_load(test)
        if load is None:
            continue
        values = [("throughput", match.group(2), "ops/s", "requests per second")]
        if match.group(3):
            values.append(("latency_p50", match.group(3), "ms", "p50"))
        out += run_measurements(test, f"-q line '{test}'", load, values)
    return out


def parse(text: str) -> Parsed:
    """Figures of a redis-benchmark text report or ``-q`` lines."""
    text = "\n".join(lines(text))
    out = _blocks(text) if re.search(r"^\s*====== ", text, flags=re.M) else _quiet(text)
    if not out:
        raise IngestError("the redis-benchmark report has no read or write test with a throughput")
    notes = []
    if re.search(r'host configuration "appendonly": yes', text):
        notes.append("the server logged every write (appendonly yes)")
    return Parsed(tuple(out), needs=NEEDS, notes=tuple(notes))
