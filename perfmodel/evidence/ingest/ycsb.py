"""YCSB's text summary (``[OVERALL], Throughput(ops/sec), ...`` lines), with its command line.

YCSB prints its command line first (``Command line: -db site.ycsb.db.scylla.ScyllaCQLClient
-threads 300 -target 140000 -p readproportion=0.5 ...``); the binding names the system, the
properties the load (threads, target rate, field count and length, record count, operation mix,
consistency levels). Without it the summary states no load: ``--set threads_per_client=N`` (YCSB
``-threads``) supplies it. Latencies are microseconds (milliseconds in YCSB before 0.2:
``AverageLatency(ms)``). One output is one YCSB client process (``clients`` 1); ``-target`` is that
client's throttle. Reference: YCSB wiki, "Running a Workload" and "Core Properties"
(https://github.com/brianfrankcooper/YCSB/wiki).
"""

from __future__ import annotations

import re
import shlex

from perfmodel.evidence.ingest.common import (
    IngestError,
    Parsed,
    lines,
    number,
    percentile_metric,
    printed,
    run_measurements,
)
from perfmodel.inputs.units import GB

NAME = "ycsb"
TOOL = "YCSB"
SYSTEM = ""
#: the load generator the figures name (column load_generator, data/load_generators.yaml)
TOOL = "ycsb"
#: YCSB operation sections -> figure operation
OPERATIONS = {
    "READ": "read",
    "SCAN": "read",
    "UPDATE": "write",
    "INSERT": "write",
    "DELETE": "write",
    "READ-MODIFY-WRITE": "write",
}
#: a word of the binding's class name -> the system
BINDINGS = {
    "scylla": "scylla",
    "cassandra": "cassandra",
    "redis": "redis",
    "rocksdb": "rocksdb",
    "memcached": "memcached",
}
CONSISTENCY = ("writeconsistencylevel", "readconsistencylevel")


def detect(text: str) -> bool:
    """A YCSB summary."""
    return bool(re.search(r"^\[OVERALL\], (RunTime|Throughput)", text, flags=re.M))


def command_line(text: str) -> tuple[dict, dict]:
    """``-p`` properties and the other options of YCSB's ``Command line:``, as text."""
    match = re.search(r"^Command line: (.*)$", text, flags=re.M)
    if not match:
        return {}, {}
    try:
        words = shlex.split(match.group(1))
    except ValueError:
        words = match.group(1).split()
    props, opts = {}, {}
    for i, word in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if word == "-p" and "=" in nxt:
            key, _, value = nxt.partition("=")
            props[key] = value
        elif word.startswith("-") and word != "-p" and nxt and not nxt.startswith("-"):
            opts[word.lstrip("-")] = nxt
    return props, opts


def _load(props: dict, opts: dict) -> tuple[dict, list[str]]:
    load, notes = {"clients": 1}, []
    if "threads" in opts:
        load["threads_per_client"] = int(opts["threads"])
    if "target" in opts and number(opts["target"]) > 0:
        load["target_rate"] = number(opts["target"])
        notes.append(
            "throttled (-target): target_rate is this YCSB client's; with several clients set the total"
        )
    if "fieldcount" in props and "fieldlength" in props:
        load["object_bytes"] = int(props["fieldcount"]) * int(props["fieldlength"])
        if "recordcount" in props:
            load["dataset_gb"] = number(props["recordcount"]) * load["object_bytes"] / GB
    if "readproportion" in props:
        load["read_fraction"] = number(props["readproportion"])
    for key, value in props.items():
        suffix = key.rsplit(".", 1)[-1].lower()
        if suffix in CONSISTENCY:
            load["read_consistency" if suffix.startswith("read") else "consistency"] = value.upper()
    if "requestdistribution" in props:  # YCSB CoreWorkload's generators (perfmodel.inputs.keys)
        name = props["requestdistribution"].strip().lower()
        known = {"zipfian": "scrambled_zipf", "uniform": "uniform", "latest": "latest", "hotspot": "hotspot"}
        if name in known:
            load["key_distribution"] = known[name]
            for prop, column in (
                ("hotspotdatafraction", "hot_data_fraction"),
                ("hotspotopnfraction", "hot_op_fraction"),
            ):
                if name == "hotspot" and prop in props:
                    load[column] = number(props[prop])
        else:
            notes.append(f"key distribution {name!r} is not one the model knows: --set key_distribution=...")
    return load, notes


def _sections(text: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for section, label, value in re.findall(
        r"^\s*\[([A-Za-z_\-%0-9]+)\], ([^,]+), ([-\d.Ee+]+)\s*$", text, flags=re.M
    ):
        out.setdefault(section, {})[label] = value
    return out


def _latencies(stats: dict[str, str]) -> list[tuple[str, str, str, str]]:
    out = []
    for label, value in stats.items():
        unit = re.search(r"\((us|ms)\)$", label)
        if not unit:
            continue
        pct = re.fullmatch(r"(\d+(?:\.\d+)?)(?:th)?PercentileLatency\((us|ms)\)", label)
        metric = {"AverageLatency": "latency_mean", "MaxLatency": "latency_max"}.get(label.split("(")[0])
        metric = percentile_metric(float(pct.group(1))) if pct else metric
        if metric:
            out.append((metric, value, unit.group(1), f"'{label}'"))
    return out


def parse(text: str) -> Parsed:
    """Figures of a YCSB run: overall throughput, and the latencies of each operation."""
    text = "\n".join(lines(text))
    props, opts = command_line(text)
    load, notes = _load(props, opts)
    sections = _sections(text)
    overall = sections.get("OVERALL", {})
    if "Throughput(ops/sec)" not in overall:
        raise IngestError("the YCSB summary has no '[OVERALL], Throughput(ops/sec)' line")
    ops = {s: number(v["Operations"]) for s, v in sections.items() if s in OPERATIONS and "Operations" in v}
    if "read_fraction" not in load and sum(ops.values()) > 0:
        reads = sum(n for s, n in ops.items() if OPERATIONS[s] == "read")
        load["read_fraction"] = reads / sum(ops.values())
        notes.append(
            f"read_fraction {printed(load['read_fraction'])}: the reads' share of the operations counted"
        )
    share = load.get("read_fraction")
    overall_op = "read" if share == 1 else "write" if share == 0 else "mixed"
    closed = "target_rate" not in load
    out = run_measurements(
        "overall",
        "summary line '[OVERALL]'",
        {**load, "operation": overall_op},
        [("throughput", overall["Throughput(ops/sec)"], "ops/s", "'Throughput(ops/sec)'")],
    )
    for section in ops:
        values = _latencies(sections[section])
        out += run_measurements(
            section.lower(),
            f"summary lines '[{section}]'",
            {**load, "operation": OPERATIONS[section]},
            values,
            closed_loop=closed and len(ops) == 1,
        )
    for section in sections:  # measurement.interval=intended / both: counted from the intended start
        base = section.removeprefix("Intended-")
        if base != section and base in OPERATIONS and "target_rate" in load:
            out += run_measurements(
                section.lower(),
                f"summary lines '[{section}]'",
                {**load, "operation": OPERATIONS[base], "latency_start": "intended"},
                _latencies(sections[section]),
                closed_loop=False,
            )
    binding = opts.get("db", "").lower()
    system = next((s for word, s in BINDINGS.items() if word in binding), "")
    needs = (
        {}
        if "threads_per_client" in load
        else {"threads_per_client": "YCSB -threads (the output has no command line)"}
    )
    return Parsed(tuple(out), needs=needs, notes=tuple(notes), system=system)
