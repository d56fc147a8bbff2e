"""Ceph ``rados bench`` summary (``write``, ``seq`` and ``rand``).

The summary ends a run: ``Total time run``, ``Total writes made`` (or reads), ``Write size``,
``Object size``, ``Bandwidth (MB/sec)``, ``Average IOPS`` (Luminous and later), ``Average
Latency(s)`` (``Average Latency`` before) and ``Max latency(s)``. rados bench's MB is 2^20 bytes
(MiB). The load is the concurrency: ``Maintaining 16 concurrent writes of 4194304 bytes ...`` or
the command line's ``-t``; one rados process is one client. Without ``Average IOPS`` the
operations per second are the run's own count over its time. Reference: Ceph documentation,
"rados -- rados object storage utility" (``bench``) and ``src/common/obj_bencher.cc``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from perfmodel.evidence.ingest.common import IngestError, Parsed, lines, number, printed, run_measurements

NAME = "rados-bench"
TOOL = "rados bench"
SYSTEM = "ceph"
#: the load generator the figures name (column load_generator, data/load_generators.yaml)
TOOL = "rados-bench"


def detect(text: str) -> bool:
    """A rados bench summary."""
    return bool(re.search(r"^Total (writes|reads) made:", text, flags=re.M)) and "Bandwidth (MB/sec):" in text


def _field(text: str, label: str) -> str | None:
    match = re.search(rf"^{re.escape(label)}:?\s+([\d.]+)", text, flags=re.M)
    return match.group(1) if match else None


def _load(text: str, kind: str) -> dict:
    load = {"operation": "write" if kind == "writes" else "read", "clients": 1, "threads_per_client": 1}
    load["read_fraction"] = 0.0 if kind == "writes" else 1.0
    size = _field(text, "Write size" if kind == "writes" else "Read size")
    obj = _field(text, "Object size") or size
    if size:
        load["io_bytes"] = int(number(size))
    if obj:
        load["object_bytes"] = int(number(obj))
    depth = re.search(r"Maintaining (\d+) concurrent", text) or re.search(r"\bbench\b.*\s-t\s*(\d+)", text)
    if depth:
        load["iodepth"] = int(depth.group(1))
    return load


def parse(text: str) -> Parsed:
    """Figures of a rados bench summary: bandwidth, IOPS and latency."""
    text = "\n".join(lines(text))
    made = re.search(r"^Total (writes|reads) made:\s+(\d+)", text, flags=re.M)
    elapsed = _field(text, "Total time run")
    if not made or not elapsed:
        raise IngestError("the rados bench summary has no 'Total time run' and 'Total writes/reads made'")
    load = _load(text, made.group(1))
    values = [("bandwidth", _field(text, "Bandwidth (MB/sec)"), "MiB/s", "'Bandwidth (MB/sec)' (MiB)")]
    iops = _field(text, "Average IOPS")
    note = ""
    if iops:
        values.append(("iops", iops, "iops", "'Average IOPS'"))
    else:
        values.append(
            (
                "iops",
                printed(number(made.group(2)) / number(elapsed)),
                "iops",
                "'Total ... made' / 'Total time run'",
            )
        )
        note = "IOPS computed: operations made / time run"
    for label, metric in (
        ("Average Latency(s)", "latency_mean"),
        ("Average Latency", "latency_mean"),
        ("Max latency(s)", "latency_max"),
        ("Max latency", "latency_max"),
    ):
        value = _field(text, label)
        if value and metric not in (v[0] for v in values):
            values.append((metric, value, "s", f"'{label}'"))
    out = [
        replace(m, note=note) if m.metric == "iops" else m
        for m in run_measurements(made.group(1), "summary", load, values)
    ]
    needs = {} if "iodepth" in load else {"iodepth": "rados bench -t, concurrent operations (default 16)"}
    return Parsed(tuple(out), needs=needs)
