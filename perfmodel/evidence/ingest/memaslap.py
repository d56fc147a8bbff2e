"""memaslap's report (libmemcached's load generator; ``memcaslap`` in Debian's
libmemcached-tools).

The header states the load (``threads count``, ``concurrency``: connections in all, ``set
proportion`` / ``get proportion``); the last line the run's rate (``Run time: 2.0s Ops: 257619
TPS: 128795``). With ``-S`` (statistics) the ``Get`` / ``Set`` / ``Total Statistics`` blocks give
the latency (``Avg``, ``Max``) in microseconds. The object size is the run's own ``object_bytes``
over ``cmd_set`` (key and value, as memaslap counts them). Reference: libmemcached documentation,
"memaslap - Load testing and benchmarking a server"
(https://awesomized.github.io/libmemcached/bin/memaslap.html).
"""

from __future__ import annotations

import re

from perfmodel.evidence.ingest.common import IngestError, Parsed, lines, number, printed, run_measurements

NAME = "memaslap"
TOOL = "memaslap"
SYSTEM = "memcached"
#: the load generator the figures name (column load_generator, data/load_generators.yaml)
TOOL = "memaslap"
BLOCKS = {"Get": ("get", "read"), "Set": ("set", "write"), "Total": ("total", None)}


def detect(text: str) -> bool:
    """A memaslap report."""
    return bool(re.search(r"^concurrency: \d+", text, flags=re.M)) and bool(
        re.search(r"^Run time: [\d.]+s Ops: \d+ TPS: \d+", text, flags=re.M)
    )


def _field(text: str, label: str) -> str | None:
    match = re.search(rf"^{re.escape(label)}:\s*(\S+)", text, flags=re.M)
    return match.group(1) if match else None


def _load(text: str) -> dict:
    load = {"clients": int(number(_field(text, "concurrency") or "0")), "iodepth": 1}
    get = re.search(r"^get proportion: get_prop=([\d.]+)", text, flags=re.M)
    if get:
        load["read_fraction"] = number(get.group(1))
    sets, obj = _field(text, "cmd_set"), _field(text, "object_bytes")
    if sets and obj and number(sets) > 0:
        load["object_bytes"] = round(number(obj) / number(sets))
    return load


def _operation(share: float | None, kind: str | None) -> str:
    return kind or ("read" if share == 1 else "write" if share == 0 else "mixed")


def parse(text: str) -> Parsed:
    """Figures of a memaslap report: the run's TPS, and latency per command with ``-S``."""
    text = "\n".join(lines(text))
    final = re.search(r"^Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+)", text, flags=re.M)
    if not final:
        raise IngestError("the memaslap report has no final 'Run time: ... TPS: ...' line")
    load = _load(text)
    share = load.get("read_fraction")
    total = {**load, "operation": _operation(share, None)}
    out = run_measurements("total", "last line", total, [("throughput", final.group(3), "ops/s", "'TPS'")])
    for name, (key, kind) in BLOCKS.items():
        block = re.search(rf"^{name} Statistics \((\d+) events\)\n((?:[ \t]+\S.*\n?)+)", text, flags=re.M)
        if not block or int(block.group(1)) == 0:
            continue
        stats = dict(re.findall(r"^\s+(Avg|Max):\s+([\d.]+)", block.group(2), flags=re.M))
        values = [
            (m, stats[s], "us", f"'{s}'")
            for s, m in (("Avg", "latency_mean"), ("Max", "latency_max"))
            if s in stats
        ]
        out += run_measurements(
            key, f"'{name} Statistics' block", {**load, "operation": _operation(share, kind)}, values
        )
    notes = (
        [f"object_bytes {load['object_bytes']}: object_bytes / cmd_set (key + value)"]
        if "object_bytes" in load
        else []
    )
    return Parsed(
        tuple(out),
        notes=tuple(notes + [f"{printed(number(final.group(2)))} operations in {final.group(1)} s"]),
    )
