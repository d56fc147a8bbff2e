"""pgbench's report (PostgreSQL 9.6 to 17).

The builtin scripts say what a transaction runs (pgbench documentation, "What Is the
'Transaction' Actually Performed in pgbench?",
https://www.postgresql.org/docs/current/pgbench.html): ``tpcb-like`` 5 statements between BEGIN
and END (3 UPDATEs, 1 SELECT, 1 INSERT), ``simple-update`` (``-N``) 3 of them (1 UPDATE, 1 SELECT,
1 INSERT), ``select-only`` (``-S``) 1 SELECT. A custom script's work is not printed: ``--set
operation=...`` and ``--set statements_per_op=...`` supply it. ``tps`` is transactions per second
without the initial connection time; latency is per transaction, in milliseconds.
"""

from __future__ import annotations

import re

from perfmodel.evidence.ingest.common import IngestError, Parsed, lines, number, run_measurements

NAME = "pgbench"
TOOL = "pgbench"
SYSTEM = "postgresql"
#: the load generator the figures name (column load_generator, data/load_generators.yaml)
TOOL = "pgbench"
#: builtin transaction type -> its configuration columns
BUILTINS = {
    "TPC-B (sort of)": {
        "operation": "mixed",
        "read_fraction": 0.0,
        "statements_per_op": 5,
        "read_statements_per_op": 1,
    },
    "simple update": {
        "operation": "mixed",
        "read_fraction": 0.0,
        "statements_per_op": 3,
        "read_statements_per_op": 1,
    },
    "select only": {"operation": "read", "read_fraction": 1.0, "statements_per_op": 1},
}
QUERY_MODES = {"simple": "simple", "prepared": "prepared"}


def detect(text: str) -> bool:
    """A pgbench report."""
    return bool(re.search(r"^transaction type: ", text, flags=re.M)) and bool(
        re.search(r"^tps = ", text, flags=re.M)
    )


def _field(text: str, label: str) -> str | None:
    match = re.search(rf"^{re.escape(label)}:\s*(.+?)\s*$", text, flags=re.M)
    return match.group(1) if match else None


def _load(text: str) -> tuple[dict, dict, list[str]]:
    """Configuration columns, the columns still needed, and notes."""
    kind = _field(text, "transaction type") or ""
    builtin = re.fullmatch(r"<builtin: (.+)>", kind)
    load = dict(BUILTINS.get(builtin.group(1), {})) if builtin else {}
    needs = {}
    if not load:
        needs = {
            "operation": f"what the script {kind!r} does",
            "statements_per_op": "statements per transaction",
        }
    load["clients"] = int(number(_field(text, "number of clients") or "0")) or None
    load["threads_per_client"] = 1
    mode = _field(text, "query mode")
    notes = []
    if mode in QUERY_MODES:
        load["query_protocol"] = QUERY_MODES[mode]
    elif mode:
        notes.append(f"query mode {mode}: parsed and planned each time like simple, not recorded")
    scale = _field(text, "scaling factor")
    if scale:
        notes.append(f"scaling factor {scale} ({int(number(scale)) * 100000:,} pgbench_accounts rows)")
    if re.search(r"^rate limit schedule lag", text, flags=re.M):
        needs["target_rate"] = "pgbench -R, the throttled rate [transactions/s]"
    return {k: v for k, v in load.items() if v is not None}, needs, notes


def parse(text: str) -> Parsed:
    """Figures of one pgbench report: throughput and mean latency."""
    text = "\n".join(lines(text))
    load, needs, notes = _load(text)
    tps = re.search(
        r"^tps = ([\d.]+) \((without initial connection time|excluding connections establishing)\)",
        text,
        flags=re.M,
    )
    if not tps:
        raise IngestError("the pgbench report has no 'tps = ... (without initial connection time)' line")
    values = [("throughput", tps.group(1), "ops/s", f"'tps = ... ({tps.group(2)})'")]
    latency = re.search(r"^latency average = ([\d.]+) ms", text, flags=re.M)
    if latency:
        values.append(("latency_mean", latency.group(1), "ms", "'latency average'"))
    kind = _field(text, "transaction type")
    out = run_measurements(
        "run", f"pgbench report ({kind})", load, values, closed_loop="target_rate" not in needs
    )
    return Parsed(tuple(out), needs=needs, notes=tuple(notes))
