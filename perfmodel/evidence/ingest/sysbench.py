"""sysbench 1.x text output: the OLTP Lua tests (``oltp_read_write``, ``oltp_read_only``,
``oltp_point_select``, ...) and ``fileio``.

sysbench does not print which OLTP script ran; the statements per transaction come from its own
counts (``queries performed: read / write`` over transactions plus retried ones), which is how the
shipped scripts differ (oltp_read_write: 14 reads and 4 writes, oltp_read_only: 14 reads,
oltp_write_only: 4 writes, oltp_point_select: 1 read). A transaction that writes makes the
operation ``write`` (``mixed`` when it reads too, with ``read_statements_per_op``), as the figure
format records sysbench transactions. Latency is per event (a transaction; a file operation for
fileio, fsyncs included) in milliseconds. Reference: sysbench README
(https://github.com/akopytov/sysbench#readme).
"""

from __future__ import annotations

import re

from perfmodel.evidence.ingest.common import (
    IngestError,
    Measurement,
    Parsed,
    lines,
    number,
    percentile_metric,
    printed,
    run_measurements,
)
from perfmodel.inputs.units import GB, MIB

NAME = "sysbench"
TOOL = "sysbench"
SYSTEM = ""
#: the load generator the figures name (column load_generator, data/load_generators.yaml)
TOOL = "sysbench"
#: how close a per-transaction statement count must be to a whole number [-]
STATEMENT_TOLERANCE = 0.05
_FILE_MODES = {
    "random r/w": ("mixed", None),
    "random read": ("read", 1.0),
    "random write": ("write", 0.0),
    "sequential read": ("read", 1.0),
    "sequential write": ("write", 0.0),
    "sequential rewrite": ("write", 0.0),
}


def detect(text: str) -> bool:
    """A sysbench report."""
    return bool(re.search(r"^sysbench \d", text, flags=re.M)) and "General statistics:" in text


def _value(text: str, label: str) -> str | None:
    """The first number after ``label:`` (sysbench's ``label:   value`` lines)."""
    match = re.search(rf"^\s*{re.escape(label)}:\s*([-\d.,]+)", text, flags=re.M)
    return match.group(1) if match else None


def _latency(text: str) -> list[tuple[str, str, str, str]]:
    """The ``Latency (ms):`` block: avg, max and the percentile sysbench was asked for."""
    block = text[text.index("Latency (ms):") :] if "Latency (ms):" in text else ""
    out = []
    for label, metric in (("avg", "latency_mean"), ("max", "latency_max")):
        value = _value(block, label)
        if value is not None:
            out.append((metric, value, "ms", f"Latency (ms) '{label}'"))
    match = re.search(r"^\s*(\d+(?:\.\d+)?)th percentile:\s*([\d.]+)", block, flags=re.M)
    if match:
        out.append(
            (
                percentile_metric(float(match.group(1))),
                match.group(2),
                "ms",
                f"'{match.group(1)}th percentile'",
            )
        )
    return out


def _common(text: str) -> dict:
    """Load columns every sysbench test prints: threads, and a throttled run's target rate."""
    threads = _value(text, "Number of threads")
    if threads is None:
        raise IngestError("the sysbench output does not print 'Number of threads'")
    load = {"clients": int(number(threads)), "threads_per_client": 1}
    rate = re.search(r"^Target transaction rate:\s*([\d.]+)/sec", text, flags=re.M)
    if rate:
        load["target_rate"] = number(rate.group(1))
    return load


def _statements(text: str) -> tuple[dict, list[str]]:
    """Operation and statements per transaction from sysbench's query counts."""
    txn = number(_value(text, "transactions") or "0")
    retried = number(_value(text, "ignored errors") or "0")
    reads, writes = (number(_value(text, k) or "0") for k in ("read", "write"))
    if txn <= 0:
        raise IngestError("the sysbench output counts no transactions")
    per = {k: v / (txn + retried) for k, v in (("read", reads), ("write", writes))}
    whole = {k: round(v) for k, v in per.items()}
    if any(abs(v - whole[k]) > STATEMENT_TOLERANCE * max(whole[k], 1) for k, v in per.items()):
        note = f"statements per transaction not whole ({per['read']:.2f} reads, {per['write']:.2f} writes)"
        return {}, [note + ": give --set operation=... and --set statements_per_op=..."]
    r, w = whole["read"], whole["write"]
    if w == 0:
        load = {"operation": "read", "read_fraction": 1.0, "statements_per_op": r}
    elif r == 0:
        load = {"operation": "write", "read_fraction": 0.0, "statements_per_op": w}
    else:
        load = {
            "operation": "mixed",
            "read_fraction": 0.0,
            "statements_per_op": r + w,
            "read_statements_per_op": r,
        }
    note = (
        f"{r} reads and {w} writes per transaction (from the query counts); rows_per_op is not printed "
        "(sysbench's range_size: 410 for oltp_read_only, 414 for oltp_read_write at the default 100) -- "
        "give --set rows_per_op=N"
    )
    return load, [note]


def key_defaults(text: str) -> tuple[dict, list[str]]:
    """The key distribution a sysbench build picks when the run does not pass ``--rand-type``.

    The 1.0 releases default to ``special`` (``sysbench --help``: ``--rand-type=STRING ...
    [special]``, 1% of the range at 75%); builds from master (1.1) to ``uniform``
    (src/sb_rand.c). The report does not echo the option, so this is the default, which
    ``--set key_distribution=...`` overrides.
    """
    version = re.search(r"^sysbench (\d+)\.(\d+)", text, flags=re.M)
    if not version:
        return {}, []
    major, minor = int(version.group(1)), int(version.group(2))
    if (major, minor) == (1, 0):
        note = (
            f"key_distribution=special: sysbench {major}.{minor}'s default --rand-type (75% of requests "
            "on a hot slice of the keys); --set key_distribution=uniform if the run passed "
            "--rand-type=uniform"
        )
        return {"key_distribution": "special"}, [note]
    if (major, minor) >= (1, 1):
        return {"key_distribution": "uniform"}, [
            f"key_distribution=uniform: sysbench {major}.{minor}'s default --rand-type; --set it if the "
            "run passed another"
        ]
    return {}, []


def _oltp(text: str) -> tuple[list[Measurement], list[str]]:
    load, notes = _statements(text)
    load.update(_common(text))
    txn = re.search(r"^\s*transactions:\s*\d+\s*\(([\d.]+) per sec\.\)", text, flags=re.M)
    values = [("throughput", txn.group(1), "ops/s", "'transactions' per sec.")] + _latency(text)
    return run_measurements(
        "oltp", "SQL statistics", load, values, closed_loop="target_rate" not in load
    ), notes


def _fileio(text: str) -> tuple[list[Measurement], list[str]]:
    mode = re.search(r"^Doing (.+?) test", text, flags=re.M)
    kind = next((k for k in _FILE_MODES if mode and mode.group(1).startswith(k)), None)
    if kind is None:
        raise IngestError(f"sysbench fileio: unknown test mode {mode.group(1) if mode else '(none)'!r}")
    operation, share = _FILE_MODES[kind]
    load = {"operation": operation, **_common(text)}
    load["access_pattern"] = "sequential" if kind.startswith("sequential") else "random"
    ratio = _value(text, "Read/Write ratio for combined random IO test")
    load["read_fraction"] = share if share is not None else number(ratio) / (1 + number(ratio))
    block = re.search(r"^Block size (\d+)(KiB|MiB|b)", text, flags=re.M)
    if block:
        load["io_bytes"] = number(block.group(1)) * {"KiB": 1024, "MiB": MIB, "b": 1}[block.group(2)]
    total = re.search(r"^([\d.]+)MiB total file size", text, flags=re.M)
    if total:
        load["dataset_gb"] = number(total.group(1)) * MIB / GB
    if "Using synchronous I/O mode" in text:
        load["iodepth"] = 1
    rates = {k: number(_value(text, f"{k}/s") or "0") for k in ("reads", "writes")}
    bw = {k: number(_value(text, f"{k}, MiB/s") or "0") for k in ("read", "written")}
    values = [
        ("iops", printed(rates["reads"] + rates["writes"]), "iops", "'reads/s' + 'writes/s'"),
        ("bandwidth", printed(bw["read"] + bw["written"]), "MiB/s", "'read, MiB/s' + 'written, MiB/s'"),
    ]
    notes = ["fileio latency is per file operation, fsyncs included"]
    if "directio" not in (_value_text(text, "Extra file open flags") or ""):
        notes.append("fileio without --file-extra-flags=direct: the page cache served part of it")
    out = run_measurements(
        "fileio", "File operations", load, values, closed_loop=False, note="computed: sums"
    )
    out += run_measurements("fileio", "General statistics", load, _latency(text), closed_loop=False)
    return out, notes


def _value_text(text: str, label: str) -> str | None:
    match = re.search(rf"^{re.escape(label)}:\s*(.*)$", text, flags=re.M)
    return match.group(1) if match else None


def parse(text: str) -> Parsed:
    """Figures of a sysbench OLTP or fileio report (other tests are refused)."""
    text = "\n".join(lines(text))
    if "CPU speed:" in text:
        raise IngestError("sysbench cpu measures the processor alone, not a database or storage system")
    if "SQL statistics:" in text:
        measurements, notes = _oltp(text)
    elif "File operations:" in text:
        measurements, notes = _fileio(text)
    else:
        raise IngestError("this sysbench test is neither OLTP nor fileio: nothing to record")
    needs = {} if "operation" in measurements[0].load else {"operation": "what the sysbench script does"}
    defaults, key_notes = key_defaults(text) if "SQL statistics:" in text else ({}, [])
    return Parsed(tuple(measurements), needs=needs, notes=tuple(notes + key_notes), defaults=defaults)
