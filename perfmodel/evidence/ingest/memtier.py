"""memtier_benchmark's JSON output (``--json-out-file``).

``configuration`` states the load: ``threads`` x ``clients`` (connections per thread) connections,
``pipeline``, ``data_size``, ``ratio`` (SET:GET), ``rate_limit`` (requests per second per
connection) and the protocol (redis or memcache: the system). ``ALL STATS`` has ``Sets``, ``Gets``
and ``Totals``, each with ``Ops/sec``, the mean latency and ``Percentile Latencies`` in
milliseconds. Reference: memtier_benchmark README and ``memtier_benchmark --help``
(https://github.com/RedisLabs/memtier_benchmark).
"""

from __future__ import annotations

import json
import re

from perfmodel.evidence.ingest.common import (
    IngestError,
    Measurement,
    Parsed,
    percentile_metric,
    printed,
    run_measurements,
)

NAME = "memtier-json"
TOOL = "memtier_benchmark"
SYSTEM = ""
#: the load generator the figures name (column load_generator, data/load_generators.yaml)
TOOL = "memtier"
PROTOCOL_SYSTEMS = {
    "redis": "redis",
    "resp2": "redis",
    "resp3": "redis",
    "memcache_text": "memcached",
    "memcache_binary": "memcached",
}
#: --key-pattern letters (memtier_benchmark --help: "G for Gaussian distribution, R for uniform
#: Random, S for Sequential, P for Parallel (Sequential were each client has a subset of the
#: key-range), Z for zipf distribution (will use key-zipf-exp)") -> the keys' columns; G: none
KEY_PATTERNS = {
    "R": {"key_distribution": "uniform", "access_pattern": "random"},
    "Z": {"key_distribution": "zipf", "access_pattern": "random"},
    "S": {"key_distribution": "uniform", "access_pattern": "sequential"},
    "P": {"key_distribution": "uniform", "access_pattern": "sequential"},
}
#: ALL STATS entry -> (key, operation or None for the configured mix)
ENTRIES = {"Sets": ("sets", "write"), "Gets": ("gets", "read"), "Totals": ("totals", None)}


def detect(text: str) -> bool:
    """A memtier_benchmark JSON document."""
    return '"ALL STATS"' in text and '"configuration"' in text


def _load(config: dict) -> tuple[dict, list[str]]:
    threads, per_thread = int(config.get("threads", 1)), int(config.get("clients", 1))
    load = {"clients": threads * per_thread, "iodepth": int(config.get("pipeline", 1))}
    notes = [f"{threads} threads x {per_thread} connections = {threads * per_thread} clients"]
    if int(config.get("data_size", 0)) > 0:
        load["object_bytes"] = int(config["data_size"])
    else:
        notes.append("values of varying size (data_size_range / list): object_bytes not recorded")
    ratio = re.fullmatch(r"(\d+):(\d+)", str(config.get("ratio", "")))
    if ratio and int(ratio.group(1)) + int(ratio.group(2)) > 0:
        sets, gets = int(ratio.group(1)), int(ratio.group(2))
        load["read_fraction"] = gets / (sets + gets)
    if int(config.get("rate_limit", 0)) > 0:
        load["target_rate"] = int(config["rate_limit"]) * load["clients"]
    return load, notes


def _keys(config: dict, operation: str) -> tuple[dict, str]:
    """The key columns of an entry from ``key_pattern`` (SET:GET), and a note when none apply."""
    pattern = str(config.get("key_pattern", "R:R"))
    sets, _, gets = pattern.partition(":")
    letter = {"write": sets, "read": gets}.get(operation, sets if sets == gets else "")
    keys = dict(KEY_PATTERNS.get(letter, {}))
    if keys.get("key_distribution") == "zipf":
        keys["zipf_s"] = float(config.get("key_zipf_exp", 0.0))
    if keys:
        return keys, ""
    why = (
        "Gaussian keys are not a distribution the model knows"
        if letter == "G"
        else ("SETs and GETs pick keys differently" if not letter else f"unknown key pattern {letter!r}")
    )
    return {}, f"--key-pattern {pattern}: key_distribution not recorded ({why}); --set it"


def _entry(name: str, stats: dict, load: dict, config: dict) -> list[Measurement]:
    key, operation = ENTRIES[name]
    share = load.get("read_fraction")
    op = operation or ("read" if share == 1 else "write" if share == 0 else "mixed")
    keys, note = _keys(config, op)
    entry_load = {**load, **keys, "operation": op}
    values = [("throughput", repr(stats["Ops/sec"]), "ops/s", "'Ops/sec'")]
    mean = stats.get("Average Latency", stats.get("Latency", 0))
    if mean:
        values.append(("latency_mean", repr(mean), "ms", "'Average Latency'"))
    elif stats.get("Accumulated Latency") and stats.get("Count"):
        values.append(
            (
                "latency_mean",
                printed(stats["Accumulated Latency"] / stats["Count"]),
                "ms",
                "'Accumulated Latency' / 'Count'",
            )
        )
        note = "; ".join(
            filter(None, [note, "mean latency computed: Accumulated Latency / Count (the entry prints 0)"])
        )
    if stats.get("Max Latency"):
        values.append(("latency_max", repr(stats["Max Latency"]), "ms", "'Max Latency'"))
    for label, value in stats.get("Percentile Latencies", {}).items():
        match = re.fullmatch(r"p([\d.]+)", label)
        if match:
            values.append((percentile_metric(float(match.group(1))), repr(value), "ms", f"'{label}'"))
    return run_measurements(
        key, f"ALL STATS '{name}'", entry_load, values, closed_loop="target_rate" not in load, note=note
    )


def parse(text: str) -> Parsed:
    """Figures of a memtier_benchmark JSON output."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(f"the memtier_benchmark JSON does not parse: {exc}") from None
    config, stats = doc.get("configuration", {}), doc.get("ALL STATS", {})
    load, notes = _load(config)
    ran = [name for name in ("Sets", "Gets") if stats.get(name, {}).get("Count", 0) > 0]
    out = []
    for name in ran + (["Totals"] if len(ran) == 2 else []):  # one kind alone: Totals restates it
        out += _entry(name, stats[name], load, config)
    if not out:
        raise IngestError("the memtier_benchmark JSON counts no SET or GET")
    system = PROTOCOL_SYSTEMS.get(str(config.get("protocol", "")), "")
    return Parsed(tuple(out), notes=tuple(notes), system=system)
