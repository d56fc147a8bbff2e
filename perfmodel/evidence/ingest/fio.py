"""fio's JSON output (``--output-format=json``), per job or per group of jobs.

Each entry of ``jobs`` is one job, or one group under ``group_reporting``. A group whose jobs fio
reports one by one (``numjobs`` without ``group_reporting``) is recorded as the group: the IOPS and
bandwidth of its jobs summed, the mean latency weighted by each job's I/Os and the largest
maximum; percentiles of separate jobs do not combine, so they are left out (rerun with
``group_reporting``). Reference: fio documentation, "Interpreting the output" and "JSON output"
(https://fio.readthedocs.io/en/latest/fio_doc.html).

Latencies are nanoseconds (``lat_ns``: submission to completion; percentiles are of ``clat_ns``,
completion latency, unless the job set ``lat_percentiles``).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

from perfmodel.evidence.ingest.common import (
    IngestError,
    Measurement,
    Parsed,
    percentile_metric,
    printed,
    run_measurements,
)
from perfmodel.inputs.units import GB

NAME = "fio-json"
TOOL = "fio"
SYSTEM = "fio"
#: the load generator the figures name (column load_generator, data/load_generators.yaml)
TOOL = "fio"
DIRECTIONS = ("read", "write")
#: fio's rw= values: the operation and the share of reads (None: rwmixread decides)
READ_WRITE = {
    "read": ("read", 1.0),
    "randread": ("read", 1.0),
    "write": ("write", 0.0),
    "randwrite": ("write", 0.0),
    "rw": ("mixed", None),
    "readwrite": ("mixed", None),
    "randrw": ("mixed", None),
}
_SIZE_SUFFIX = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
#: synchronous I/O engines: one I/O in flight per job whatever iodepth says (fio caps it at 1)
SYNC_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2")


def detect(text: str) -> bool:
    """A fio JSON document."""
    return bool(re.search(r'^\s*"fio version"\s*:', text, flags=re.M)) and '"jobs"' in text


def size_bytes(text: str) -> float | None:
    """A fio size (``4k``, ``1M``, ``16MiB``, ``4096``) in bytes, base 1024 as fio's default
    ``kb_base``; None for a range or list (``4k-16k``, ``4k:8k``)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", str(text).lower())
    return float(match.group(1)) * _SIZE_SUFFIX[match.group(2)] if match else None


def _document(text: str) -> dict:
    """The JSON document (fio prints notes such as ``note: both iodepth >= 1 ...`` before it)."""
    start = re.search(r"^\{", text, flags=re.M)
    if not start:
        raise IngestError("no JSON object in the fio output (run fio with --output-format=json)")
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start.start() :])
    except json.JSONDecodeError as exc:
        raise IngestError(f"the fio JSON does not parse: {exc}") from None
    if not isinstance(doc.get("jobs"), list) or not doc["jobs"]:
        raise IngestError("the fio JSON has no jobs")
    return doc


def _options(doc: dict, job: dict) -> dict:
    return {**doc.get("global options", {}), **job.get("job options", {})}


def _load(opts: dict, jobs: int) -> tuple[dict, list[str]]:
    """The configuration columns a job's options state, and notes."""
    rw = opts.get("rw", opts.get("readwrite", "read"))
    if rw not in READ_WRITE:
        raise IngestError(f"fio rw={rw}: only reads and writes become figures (not trims)")
    operation, share = READ_WRITE[rw]
    if share is None:
        share = float(opts["rwmixread"]) / 100 if "rwmixread" in opts else None
        share = 1 - float(opts["rwmixwrite"]) / 100 if share is None and "rwmixwrite" in opts else share
        share = 0.5 if share is None else share  # fio's documented default rwmixread=50
    load = {"operation": operation, "read_fraction": share, "clients": jobs, "threads_per_client": 1}
    load["access_pattern"] = "random" if rw.startswith("rand") else "sequential"  # fio HOWTO, rw=
    notes = []
    load["iodepth"] = int(opts.get("iodepth", 1))
    if opts.get("ioengine", "psync") in SYNC_ENGINES and load["iodepth"] > 1:
        notes.append(
            f"iodepth={load['iodepth']} with the synchronous {opts.get('ioengine', 'psync')} engine: 1"
        )
        load["iodepth"] = 1
    block = size_bytes(opts.get("bs", opts.get("blocksize", "4k")))
    if block:
        load["io_bytes"] = block
    else:
        notes.append(f"bs={opts.get('bs', opts.get('blocksize'))}: no one block size, io_bytes not recorded")
    size = size_bytes(opts.get("size", "")) if "size" in opts else None
    if size:  # one shared file (filename=) or a file per job
        load["dataset_gb"] = size * (1 if "filename" in opts else jobs) / GB
    if "rate_iops" in opts:
        load["target_rate"] = float(opts["rate_iops"]) * jobs
    if str(opts.get("direct", "0")) != "1":
        notes.append("buffered I/O (no direct=1): the page cache served part of it")
    return load, notes


def _rates(job: dict, done: list[str]) -> tuple[list[tuple[str, str, str, str]], str]:
    """IOPS and bandwidth of a job: as printed for one direction, summed for read + write."""
    if len(done) == 1:
        d = done[0]
        return [
            ("iops", repr(job[d]["iops"]), "iops", f"'{d}' iops"),
            ("bandwidth", repr(job[d]["bw_bytes"]), "B/s", f"'{d}' bw_bytes"),
        ], ""
    iops = sum(job[d]["iops"] for d in done)
    bw = sum(job[d]["bw_bytes"] for d in done)
    return [
        ("iops", printed(iops), "iops", "'read' + 'write' iops"),
        ("bandwidth", printed(bw), "B/s", "'read' + 'write' bw_bytes"),
    ], "computed: read + write"


def _latencies(job: dict, d: str) -> tuple[list[tuple[str, str, str, str]], str]:
    """Mean, maximum and percentiles of direction ``d`` [ns]."""
    lat = job[d]["lat_ns"]
    kind = "lat_ns" if "percentile" in lat else "clat_ns"
    values = [
        ("latency_mean", repr(lat["mean"]), "ns", f"'{d}' lat_ns mean"),
        ("latency_max", repr(lat["max"]), "ns", f"'{d}' lat_ns max"),
    ]
    values += [
        (percentile_metric(float(p)), repr(v), "ns", f"'{d}' {kind} percentile {p}")
        for p, v in job[d][kind].get("percentile", {}).items()
    ]
    return values, ("" if kind == "lat_ns" else "percentiles are completion latency (clat), fio's default")


def _job_measurements(key: str, where: str, job: dict, load: dict) -> list[Measurement]:
    """One job (or a group under group_reporting): throughput, and latencies per direction."""
    done = [d for d in DIRECTIONS if job.get(d, {}).get("total_ios", 0) > 0]
    if not done:
        return []
    closed = "target_rate" not in load
    rates, note = _rates(job, done)
    out = run_measurements(key, where, load, rates, closed_loop=closed, note=note)
    for d in done:
        values, note = _latencies(job, d)
        if len(done) == 1:
            out += run_measurements(key, where, load, values, closed_loop=closed, note=note)
        else:  # a mixed job's read and write latencies: each its own operation
            out += run_measurements(
                f"{key}-{d}", where, {**load, "operation": d}, values, closed_loop=False, note=note
            )
    return out


def _group_measurements(key: str, where: str, jobs: list[dict], load: dict) -> list[Measurement]:
    """Jobs of one group reported one by one: the group's sums and I/O-weighted mean latency."""
    done = [d for d in DIRECTIONS if any(j.get(d, {}).get("total_ios", 0) > 0 for j in jobs)]
    iops = sum(j[d]["iops"] for j in jobs for d in done)
    bw = sum(j[d]["bw_bytes"] for j in jobs for d in done)
    closed = "target_rate" not in load
    sums = "summed over its jobs"
    out = run_measurements(
        key,
        where,
        load,
        [
            ("iops", printed(iops), "iops", "'iops' " + sums),
            ("bandwidth", printed(bw), "B/s", "'bw_bytes' " + sums),
        ],
        closed_loop=closed,
        note="computed: the sum of the jobs' values",
    )
    for d in done:
        ios = sum(j[d]["lat_ns"]["N"] for j in jobs)
        mean = sum(j[d]["lat_ns"]["mean"] * j[d]["lat_ns"]["N"] for j in jobs) / ios
        biggest = max(j[d]["lat_ns"]["max"] for j in jobs)
        dkey = key if len(done) == 1 else f"{key}-{d}"
        dload = {**load, "operation": d} if len(done) > 1 else load
        out += run_measurements(
            dkey,
            where,
            dload,
            [
                ("latency_mean", printed(mean), "ns", f"'{d}' lat_ns mean weighted by each job's N"),
                ("latency_max", repr(biggest), "ns", f"'{d}' lat_ns max of the jobs"),
            ],
            closed_loop=closed and len(done) == 1,
            note="computed from the jobs' lat_ns",
        )
    return out


def parse(text: str) -> Parsed:
    """Figures of a fio JSON output: per group of jobs (see the module docstring)."""
    doc = _document(text)
    groups: dict[int, list[tuple[int, dict]]] = defaultdict(list)
    for i, job in enumerate(doc["jobs"]):
        groups[job.get("groupid", 0)].append((i, job))
    out, notes = [], []
    for gid, members in sorted(groups.items()):
        first = members[0][1]
        opts = [_options(doc, j) for _, j in members]
        if len(members) > 1 and any(_shape(o) != _shape(opts[0]) for o in opts):
            notes.append(
                f"group {gid}: its jobs differ in rw/bs/iodepth, so it is left out (run them "
                "as separate groups, or with group_reporting)"
            )
            continue
        jobs = int(opts[0].get("numjobs", 1)) if len(members) == 1 else len(members)
        load, job_notes = _load(opts[0], jobs)
        notes += [f"group {gid}: {n}" for n in job_notes]
        key = f"g{gid}-{first.get('jobname', 'job')}"
        if len(members) == 1:
            where = f"jobs[{members[0][0]}] (job '{first.get('jobname')}', group {gid})"
            out += _job_measurements(key, where, first, load)
        else:
            where = f"jobs[{members[0][0]}..{members[-1][0]}] (group {gid}, {len(members)} jobs)"
            out += _group_measurements(key, where, [j for _, j in members], load)
            notes.append(
                f"group {gid}: {len(members)} jobs reported one by one; latency percentiles "
                "do not combine across jobs (rerun with --group_reporting to record them)"
            )
    if not out:
        raise IngestError("the fio JSON has no job that read or wrote")
    return Parsed(tuple(out), notes=tuple(notes))


def _shape(opts: dict) -> tuple:
    return tuple(opts.get(k) for k in ("rw", "readwrite", "bs", "iodepth", "rwmixread", "rwmixwrite"))
