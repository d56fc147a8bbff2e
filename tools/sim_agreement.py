"""Analytic versus simulated tails over a node sweep: is the p99 step where the simulator puts it?

``python -m tools.sim_agreement`` runs, for each workload of :data:`CASES`
(the two shipped workload files, a write-heavy and a read-only variant of
the ScyllaDB one, the read-heavy one on SATA drives run by Cassandra, where every
read shares a flush's hardware queue in the kernel, and the SATA read-heavy and the write-heavy ones with
flush sizes that vary, each as open arrivals at a fixed cluster rate), every node
count of :data:`NODES` through :func:`perfmodel.predict` and through the
simulator (``REQUESTS`` requests x ``REPLICATIONS`` replications: long enough
that each node sees several flushes; the automatic run length where flush
sizes vary), and writes the table into the
``<!-- generated:node-sweep -->`` block of docs/simulator.md, with each
case's node count for its SLO by both methods. Minutes on two cores.

``--shipped`` runs only :func:`shipped` instead (every shipped workload file as the
command line runs it, and without its flush bursts) into the ``shipped-workloads``
block; ``--all`` runs both. ``--case NAME`` (repeatable; a case's name as in
:data:`CASES`) reruns only the cases named and keeps every other case's rows in the
block as they are (:func:`merge_block`): the write-heavy case with exponential flush
sizes alone takes hours on two cores.
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

import perfmodel
from perfmodel.inputs._data import data_dir
from perfmodel.inputs.workload import load_workload_file

NODES = tuple(range(4, 17))
REQUESTS = 1_000_000
REPLICATIONS = 2
#: name: (workload file, changes to its workload, cluster rate [1/s], platform, knobs, SLO [ms])
CASES = {
    "scylla read-heavy (80/20), 1 M ops/s": ("scylla-read-heavy.yaml", {}, 1e6, "power8-s821lc-10c",
                                              {"threads_per_core": 2}, 20.0),
    "scylla write-heavy (20/80), 400 k ops/s": ("scylla-read-heavy.yaml", {"read_fraction": 0.2}, 4e5,
                                                "power8-s821lc-10c", {"threads_per_core": 2}, 20.0),
    "scylla read-only, 1.5 M ops/s": ("scylla-read-heavy.yaml", {"read_fraction": 1.0, "operation": "read"},
                                      1.5e6, "power8-s821lc-10c", {"threads_per_core": 2}, 20.0),
    "dm8 TPC-C, 150 k tx/s": ("dm8-tpcc.yaml", {}, 1.5e5, "kunpeng-r722", {"cores": 48, "numa_binding": True},
                              20.0),
    # one hardware queue (SATA) and the kernel's queue holding the whole flush (Cassandra; ScyllaDB's
    # own I/O scheduler holds it back): every read shares a flush's queue, so the p99 steps over node
    # counts
    "cassandra read-heavy on SATA drives (one queue), 100 k ops/s": (
        "scylla-read-heavy.yaml", {}, 1e5, "power8-s821lc-10c",
        {"threads_per_core": 2, "device": "sata-ssd-800gb", "system": "cassandra"}, 20.0),
    "cassandra read-heavy on SATA drives, flush sizes exponential (scv 1)": (
        "scylla-read-heavy.yaml", {}, 1e5, "power8-s821lc-10c",
        {"threads_per_core": 2, "flush_size_scv": 1.0, "device": "sata-ssd-800gb", "system": "cassandra"},
        20.0),
    "scylla write-heavy, flush sizes exponential (scv 1)": (
        "scylla-read-heavy.yaml", {"read_fraction": 0.2}, 4e5, "power8-s821lc-10c",
        {"threads_per_core": 2, "flush_size_scv": 1.0}, 20.0),
}  # fmt: skip


def sweep(name: str, workers: int | None = None) -> pd.DataFrame:
    """One case: per node count, predict's and the simulator's p95 / p99 [ms] (with its 95% CI)."""
    file, changes, rate, platform, knobs, _ = CASES[name]
    spec = load_workload_file(str(data_dir() / "workloads" / file))
    w = replace(spec["workload"], **changes, arrival_rate=rate, clients=None)
    nodes = np.array(NODES, dtype=float)
    knobs = dict(knobs)
    system = knobs.pop("system", spec["system"])  # a case may run the workload on another system
    analytic = perfmodel.predict(platform, w, nodes=nodes, system=system, **knobs)
    # flush sizes that vary need more flushes per run (perfmodel.sim.run.auto_requests)
    requests = None if knobs.get("flush_size_scv") else REQUESTS
    run = dict(requests=requests, replications=REPLICATIONS, keep_records=False, workers=workers)
    sim = perfmodel.simulate(platform, w, nodes=nodes, system=system, **run, **knobs).summary
    out = pd.DataFrame({"case": name, "nodes": nodes.astype(int)})
    for q in ("p95", "p99"):
        col = f"latency_{q}_ms"
        out[f"{q}_predict"] = analytic[col].to_numpy()
        out[f"{q}_sim"] = sim[col].to_numpy()
        out[f"{q}_sim_low"] = sim[f"{col}_ci_low"].to_numpy()
        out[f"{q}_sim_high"] = sim[f"{col}_ci_high"].to_numpy()
        err = out[f"{q}_predict"] / out[f"{q}_sim"] - 1
        inside = (out[f"{q}_predict"] >= out[f"{q}_sim_low"]) & (out[f"{q}_predict"] <= out[f"{q}_sim_high"])
        both_saturated = np.isinf(out[f"{q}_predict"]) & np.isinf(out[f"{q}_sim"])
        out[f"{q}_agrees"] = (err.abs() <= 0.25) | inside | both_saturated
    out["saturated"] = analytic["saturated"].to_numpy()
    out["tail_event_share"] = analytic["tail_event_share"].to_numpy()
    return out


def nodes_for_slo(p99: np.ndarray, nodes: np.ndarray, slo: float) -> float:
    """The fewest nodes of the sweep whose p99 is within the SLO (NaN: none)."""
    ok = np.flatnonzero(np.asarray(p99) <= slo)
    return float(nodes[ok[0]]) if len(ok) else math.nan


def markdown(tables: list[pd.DataFrame]) -> str:
    """The generated block: one row per case and node count, then the SLO node counts."""
    head = "| case | nodes | share meeting a burst | p95 predict / simulated [ms] | p99 predict / simulated "
    lines = [
        head + "(95% CI) [ms] | within 25% or the CI (inf: both saturated) |",
        "|---|---|---|---|---|---|",
    ]
    summary = ["", "| case | SLO | nodes by predict | nodes by the simulator | p95 / p99 agree at |",
               "|---|---|---|---|---|"]  # fmt: skip
    for t in tables:
        name = t["case"].iloc[0]
        for r in t.itertuples():
            ok = "yes" if r.p95_agrees and r.p99_agrees else ("p95 only" if r.p95_agrees else
                 "p99 only" if r.p99_agrees else "no")  # fmt: skip
            lines.append(
                f"| {name} | {r.nodes} | {r.tail_event_share:.2%} | {r.p95_predict:.3g} / {r.p95_sim:.3g} | "
                f"{r.p99_predict:.3g} / {r.p99_sim:.3g} ({r.p99_sim_low:.3g}-{r.p99_sim_high:.3g}) | {ok} |"
            )
        slo = CASES[name][-1]
        a, s = (nodes_for_slo(t[c], t["nodes"].to_numpy(), slo) for c in ("p99_predict", "p99_sim"))
        both = int((t.p95_agrees & t.p99_agrees).sum())
        summary.append(f"| {name} | p99 <= {slo:g} ms | {a:g} | {s:g} | {both} of {len(t)} node counts |")
    return "\n".join(lines + summary)


def merge_block(old: str, tables: list[pd.DataFrame]) -> str:
    """The node-sweep block with the cases of ``tables`` recomputed and every other case's rows
    (its node counts and its SLO line) kept from the block ``old``, in :data:`CASES`' order."""
    fresh = markdown(tables).split("\n")
    kept = old.strip("\n").split("\n")
    done = {str(t["case"].iloc[0]) for t in tables}
    blank = fresh.index("")
    rows, slo = [], []
    for name in CASES:
        lines = [line for line in (fresh if name in done else kept) if line.startswith(f"| {name} |")]
        if not lines:
            raise ValueError(f"case {name!r}: neither rerun nor in the existing block")
        slo += [line for line in lines if line.startswith(f"| {name} | p99 <= ")]
        rows += [line for line in lines if not line.startswith(f"| {name} | p99 <= ")]
    return "\n".join(fresh[:2] + rows + fresh[blank : blank + 3] + slo)


#: the shipped workload files, each on the platform the README / the file's comment runs it on
SHIPPED = {"scylla-read-heavy.yaml": "power8-s821lc-10c", "dm8-tpcc.yaml": "kunpeng-r722"}
SHIPPED_REPLICATIONS = 3


def without_flushes(model) -> tuple:
    """The same configuration (row 0) with its flush bursts removed, analytic and simulated:
    ``(NodeModel, SimConfig)``; the background bytes of the bursts go with them (the drives'
    destage stays, as the simulator keeps it)."""
    from perfmodel.sim.config import config_from_model

    cfg = config_from_model(model, 0)
    net = replace(
        model.net,
        burst_duty_per_op=0.0,
        burst_backlog=0.0,
        stall_share=0.0,
        load_write=model.net.destage.copy() if cfg.flushes else model.net.load_write,
        flush=np.zeros_like(model.net.flush) if cfg.flushes else model.net.flush,
    )
    return replace(model, net=net), replace(cfg, flush_bytes_per_write=0.0, flush_ios=0)


def shipped(workers: int | None = None) -> pd.DataFrame:
    """Every shipped workload file as ``perfmodel predict`` / ``perfmodel simulate`` run it
    (the simulator's default run length), and the same without flush bursts."""
    from perfmodel.model import chain
    from perfmodel.sim.config import config_from_model
    from perfmodel.sim.run import simulate_config

    rows = []
    for file, platform in SHIPPED.items():
        spec = load_workload_file(str(data_dir() / "workloads" / file))
        args = dict(nodes=spec["nodes"], system=spec["system"], **spec["knobs"])
        analytic = perfmodel.predict(platform, spec["workload"], **args).iloc[0]
        sim = perfmodel.simulate(
            platform, spec["workload"], replications=SHIPPED_REPLICATIONS, keep_records=False,
            workers=workers, **args,
        ).summary.iloc[0]  # fmt: skip
        row = {"workload": file, "platform": platform, "requests": int(sim["requests"])}
        for col in ("throughput_ops_s", "latency_mean_ms", "latency_p99_ms"):
            row[f"{col}_predict"], row[f"{col}_sim"] = analytic[col], sim[col]
        row["throughput_ci"] = (sim["throughput_ops_s_ci_low"], sim["throughput_ops_s_ci_high"])
        row["warning"] = sim["replication_warning"]
        model = chain.build(platform, spec["workload"], params=None, **args)
        quiet_model, quiet_cfg = without_flushes(model)
        row["flushes"] = config_from_model(model, 0).flushes
        if row["flushes"]:
            row["quiet_predict"] = float(chain.solve(quiet_model).throughput[0])
            quiet = simulate_config(
                quiet_cfg, replications=SHIPPED_REPLICATIONS, keep_records=False, workers=workers
            ).summary.iloc[0]
            row["quiet_sim"] = float(quiet["throughput_ops_s"])
        rows.append(row)
    return pd.DataFrame(rows)


def shipped_markdown(table: pd.DataFrame) -> str:
    """The generated block: predict against the simulator on each shipped workload."""
    lines = [
        "| workload (platform) | simulated run | throughput predict / simulated (95% CI) [ops/s] | error "
        "| mean latency predict / simulated [ms] | p99 predict / simulated [ms] "
        "| without flush bursts: throughput predict / simulated [ops/s], error |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        err = r.throughput_ops_s_predict / r.throughput_ops_s_sim - 1
        quiet = "no flushes"
        if r.flushes:
            quiet = f"{r.quiet_predict:,.0f} / {r.quiet_sim:,.0f}, {r.quiet_predict / r.quiet_sim - 1:+.1%}"
        lo, hi = r.throughput_ci
        lines.append(
            f"| {r.workload} ({r.platform}) | {r.requests:,} requests x {SHIPPED_REPLICATIONS} | "
            f"{r.throughput_ops_s_predict:,.0f} / {r.throughput_ops_s_sim:,.0f} ({lo:,.0f}-{hi:,.0f}) | "
            f"{err:+.1%} | {r.latency_mean_ms_predict:.3g} / {r.latency_mean_ms_sim:.3g} | "
            f"{r.latency_p99_ms_predict:.3g} / {r.latency_p99_ms_sim:.3g} | {quiet} |"
        )
    warnings = [f"{r.workload}: {r.warning}" for r in table.itertuples() if r.warning]
    return "\n".join(lines + ([""] + [f"Warning: {w}" for w in warnings] if warnings else []))


def main(argv=None) -> int:  # pragma: no cover - minutes of simulation
    from perfmodel.evidence.stored_runs import read_block, replace_block

    args = sys.argv[1:] if argv is None else argv
    only = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--case"]
    unknown = [name for name in only if name not in CASES]
    if unknown:
        raise SystemExit(f"--case: unknown case {unknown[0]!r}; cases: {', '.join(map(repr, CASES))}")
    path = Path(__file__).resolve().parents[1] / "docs" / "simulator.md"
    text = path.read_text(encoding="utf-8")
    if "--shipped" in args or "--all" in args:
        print("shipped workloads ...", file=sys.stderr, flush=True)
        text = replace_block(text, "shipped-workloads", shipped_markdown(shipped()))
    if "--shipped" not in args:
        tables = []
        for name in only or CASES:
            print(f"{name} ...", file=sys.stderr, flush=True)
            tables.append(sweep(name))
        body = merge_block(read_block(text, "node-sweep"), tables) if only else markdown(tables)
        text = replace_block(text, "node-sweep", body)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
