"""cassandra-stress's ``Results:`` summary (Cassandra 2.1 to 5.0; ScyllaDB's fork prints the same).

Both forms are read: ``op rate : 46751 [WRITE:46751]`` (before 4.0) and ``Op rate : 10,690 op/s
[WRITE: 10,690 op/s]``; latencies are milliseconds. The load comes from ``Running WRITE with 200
threads ...`` and, where printed (4.0 and later), the ``Stress Settings`` block: thread count,
consistency level, replication factor, throttle (``OpsPer Sec``) and column count and size (the
row's bytes). A run of several operations (``mixed``, ``user``) has one bracketed value per
operation; each becomes its own figures beside the total. Reference: DataStax documentation,
"Interpreting the output of cassandra-stress"
(https://docs.datastax.com/en/cassandra-oss/3.x/cassandra/tools/toolsCStressOutput.html) and
Apache Cassandra's ``tools/stress`` (StressMetrics.summarise).
"""

from __future__ import annotations

import re

from perfmodel.evidence.ingest.common import (
    IngestError,
    Parsed,
    lines,
    number,
    percentile_metric,
    run_measurements,
)

NAME = "cassandra-stress"
TOOL = "cassandra-stress"
SYSTEM = ""
#: the load generator the figures name (column load_generator, data/load_generators.yaml)
TOOL = "cassandra-stress"
#: summary label (lower case) -> metric
LABELS = {
    "op rate": "throughput",
    "latency mean": "latency_mean",
    "latency median": percentile_metric(50),
    "latency 95th percentile": "latency_p95",
    "latency 99th percentile": "latency_p99",
    "latency 99.9th percentile": "latency_p999",
    "latency max": "latency_max",
}
WRITES = ("write", "insert", "counter_write", "update", "delete")


def detect(text: str) -> bool:
    """A cassandra-stress summary."""
    return bool(re.search(r"^\s*(?:op|Op) rate\s*:", text, flags=re.M)) and "Total operation time" in text


def _operation(name: str) -> str:
    low = name.lower()
    return "write" if any(w in low for w in WRITES) else "read"


def _settings(text: str) -> dict:
    """Load columns from ``Running ... with N threads`` and the Stress Settings block."""
    load: dict = {"clients": 1}
    threads = re.search(r"^Running \S+ with (\d+) threads", text, flags=re.M) or re.search(
        r"^\s*Thread Count: (\d+)", text, flags=re.M
    )
    if threads:
        load["threads_per_client"] = int(threads.group(1))
    level = re.search(r"^\s*Consistency Level: (\w+)", text, flags=re.M)
    if level:
        load["consistency"] = level.group(1).upper()
    rf = re.search(r"Replication Strategy Options: \{replication_factor=(\d+)\}", text)
    if rf:
        load["replication_factor"] = int(rf.group(1))
    size = re.search(r"^\s*Size Distribution: Fixed:\s*key=(\d+)", text, flags=re.M)
    count = re.search(r"^\s*Count Distribution: Fixed:\s*key=(\d+)", text, flags=re.M)
    if size and count:
        load["object_bytes"] = int(size.group(1)) * int(count.group(1))
    # Population (4.0 and later): 'Sequence: 1..N' walks the keys in order, each once per pass
    # (cassandra-stress help: -pop seq=; its default for writes); a distribution (Gaussian, uniform)
    # picks them at random
    population = re.search(r"^Population:\s*\n\s*(\w+):", text, flags=re.M)
    if population and population.group(1) == "Sequence":
        load.update(key_distribution="uniform", access_pattern="sequential")
    elif population and population.group(1) == "Distribution":
        load["access_pattern"] = "random"
    rate = re.search(r"^\s*OpsPer Sec: (\d+)", text, flags=re.M)
    if rate and int(rate.group(1)) > 0:
        load["target_rate"] = int(rate.group(1))
    return load


def _summary(block: str) -> dict[str, tuple[str, dict[str, str]]]:
    """label -> (total, {operation: value}) of the Results block."""
    out = {}
    for line in block.splitlines():
        match = re.match(r"^\s*([A-Za-z][A-Za-z0-9. ]*?)\s*:\s*([\d.,]+)[^\[\n]*(?:\[(.*)\])?", line)
        if match and match.group(1).lower() in LABELS:
            per_op = dict(re.findall(r"([\w.\-]+):\s*([\d.,]+)", match.group(3) or ""))
            out[match.group(1).lower()] = (match.group(2), per_op)
    return out


def parse(text: str) -> Parsed:
    """Figures of the last ``Results:`` block of a cassandra-stress run."""
    text = "\n".join(lines(text))
    if "Results:" not in text:
        raise IngestError("the cassandra-stress output has no 'Results:' block")
    summary = _summary(text[text.rindex("Results:") :])
    if "op rate" not in summary:
        raise IngestError("the cassandra-stress 'Results:' block has no op rate")
    load = _settings(text)
    ops = list(summary["op rate"][1])
    rates = {op: number(v) for op, v in summary["op rate"][1].items()}
    if len(ops) > 1 and sum(rates.values()) > 0:
        load["read_fraction"] = sum(r for op, r in rates.items() if _operation(op) == "read") / sum(
            rates.values()
        )
    elif ops:
        load["read_fraction"] = 1.0 if _operation(ops[0]) == "read" else 0.0
    closed = "target_rate" not in load
    running = re.search(r"^Running (\S+) with", text, flags=re.M)
    named = ops[0] if len(ops) == 1 else (running.group(1) if running and not ops else "")
    total_op = _operation(named) if named else "mixed"
    if not ops and named:
        load["read_fraction"] = 1.0 if total_op == "read" else 0.0
    values = [
        (LABELS[label], total.replace(",", ""), "ops/s" if label == "op rate" else "ms", f"'{label}'")
        for label, (total, _) in summary.items()
    ]
    key = named.lower() if named else "total"
    out = run_measurements(
        key, "'Results:' block", {**load, "operation": total_op}, values, closed_loop=closed
    )
    for op in ops if len(ops) > 1 else []:
        per = [
            (
                LABELS[label],
                per_op[op].replace(",", ""),
                "ops/s" if label == "op rate" else "ms",
                f"'{label}' [{op}]",
            )
            for label, (_, per_op) in summary.items()
            if op in per_op
        ]
        out += run_measurements(
            op.lower(), "'Results:' block", {**load, "operation": _operation(op)}, per, closed_loop=False
        )
    needs = {} if "threads_per_client" in load else {"threads_per_client": "cassandra-stress -rate threads=N"}
    notes = (
        ()
        if len(ops) < 2
        else ("a mix: the total is operation mixed, read_fraction the reads' share of the op rate",)
    )
    return Parsed(tuple(out), needs=needs, notes=notes)
