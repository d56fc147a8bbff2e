"""The main report (``perfmodel report``, the first half of ``make run``).

The answer first: a first screen (at most :data:`SCREEN_LINES` lines of at most
:data:`SCREEN_COLUMNS` characters) sizing the read-heavy workload on POWER8, x86
and Kunpeng -- per platform its best SMT mode, the servers with their range, the
network, what sets the count, and the one caveat that matters for the system (its
error on other labs' figures). ``--full`` adds the rest below it: the sizing by
every SMT mode, the catalog, the recorded figures, how well the model explains
them in and out of sample, and a 3-node prediction by SMT mode.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pandas as pd

from perfmodel._version import __version__
from perfmodel.evidence import corpus, validation
from perfmodel.evidence import recorded as benchmarks
from perfmodel.evidence import stored_runs as validation_runs
from perfmodel.inputs import catalog
from perfmodel.inputs._data import data_dir
from perfmodel.inputs.catalog import load_platform
from perfmodel.inputs.params import load_parameters
from perfmodel.inputs.workload import load_workload_file
from perfmodel.model.predict import predict
from perfmodel.plan import sizing_view, studies
from perfmodel.plan.sizing import size

#: the prediction table as printed
PREDICT_TABLE = [
    "platform",
    "system",
    "nodes",
    "shards",
    "device",
    "throughput_ops_s",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "util_cpu",
    "util_device",
    "bottleneck",
    "saturated",
]


def emit(frame: pd.DataFrame, fmt: str, out=None) -> None:
    """Write a table as ``table`` (aligned text; a missing value blank), ``csv`` or ``json`` records."""
    out = out or sys.stdout
    if fmt == "csv":
        frame.to_csv(out, index=False)
    elif fmt == "json":
        out.write(frame.to_json(orient="records", indent=2))
        out.write("\n")
    else:
        with pd.option_context(
            "display.width",
            200,
            "display.max_columns",
            50,
            "display.max_colwidth",
            60,
            "display.max_rows",
            500,
        ):
            out.write(frame.to_string(index=False, na_rep=""))  # a missing value prints blank, not NaN
            out.write("\n")


#: the first screen's size: lines, characters per line
SCREEN_LINES, SCREEN_COLUMNS = 40, 100
#: the main report's question: scylla-read-heavy.yaml at this target [ops/s] and p99 SLO [ms]
TARGET_OPS_S, SLO_P99_MS = 1_000_000.0, 20.0


def _wrap(text: str, indent: str = "   ") -> list[str]:
    return textwrap.wrap(text, SCREEN_COLUMNS, subsequent_indent=indent, break_on_hyphens=False)


def answer_screen(sized: pd.DataFrame, *, title: str) -> list[str]:
    """The sizing answer in at most :data:`SCREEN_LINES` lines of :data:`SCREEN_COLUMNS` characters:
    per platform its best SMT mode with the servers, deployment, network, p99 and busiest station;
    why each count; the answer; the system's caveat."""
    best = studies.best_per_platform(sized)
    best.attrs.update(sized.attrs)
    frame = sizing_view.table_frame(best, slo_p99_ms=sized.attrs["slo_p99_ms"])
    frame.insert(0, "#", range(1, len(frame) + 1))
    cols = ["#", "candidate", "nodes", "deploy", "network", "p99 [ms]", "busiest"]
    cols = [c for c in cols if c != "deploy" or frame[c].astype(bool).any()]
    widths = {c: max(len(c), *(len(str(v)) for v in frame[c])) for c in cols}
    lines = _wrap(title, "")
    level = sized.attrs.get("interval")
    ranged = f"servers with the model's {level:.0%} range; " if level else ""
    lines += _wrap(f"({sized.attrs['terms']}; {ranged}N+{sized.attrs['failure_tolerance']})", " ") + [""]
    lines.append("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in cols).rstrip() for r in frame.to_dict("records")]
    for r in frame.to_dict("records"):
        if r["note"]:
            lines += _wrap(f"{r['#']}. {r['note']}")
    conclusion = studies.sizing_conclusion(sized, target_ops_s=sized.attrs["target_ops_s"],
                                           slo_p99_ms=sized.attrs["slo_p99_ms"]).splitlines()  # fmt: skip
    lines += [""] + _wrap("Answer: " + conclusion[-1])
    lines += _wrap("Caveat: " + sized.attrs["caveat"])
    if sized.attrs.get("range_note"):
        lines += _wrap("Range: " + sized.attrs["range_note"])
    return lines


def main_report(full: bool = False) -> None:
    """Print the main report to standard output: the answer's first screen, then with ``full`` the
    rest (module doc)."""
    workload_file = Path(data_dir()) / "workloads" / "scylla-read-heavy.yaml"
    spec = load_workload_file(str(workload_file))
    target, slo = TARGET_OPS_S, SLO_P99_MS
    sized = size(
        spec["workload"], target_ops_s=target, slo_p99_ms=slo, system=spec["system"], **spec["knobs"]
    )
    w = spec["workload"]
    title = (f"perfmodel {__version__} -- {spec['system']} ({workload_file.name}: "
             f"{w.dataset_bytes / 2**40:.2f} TiB x RF {w.replication_factor:g}) at {target:,.0f} ops/s, "
             f"p99 <= {slo:g} ms, utilisation <= 70%: servers per platform")  # fmt: skip
    print("\n".join(answer_screen(sized, title=title)))
    if not full:
        print("\nEvery SMT mode, the catalog, the recorded figures, the validation: perfmodel report --full")
        return
    print("\n== Sizing by SMT mode ==")
    print(sizing_view.table_text(sized, slo_p99_ms=slo))
    print()
    print(studies.sizing_conclusion(sized, target_ops_s=target, slo_p99_ms=slo))

    params = load_parameters()
    print(f"\n(parameter set: {params.name})")
    print("\n== Platforms ==")
    emit(catalog.platforms_table(), "table")
    print("\n== Recorded benchmark figures by source ==")
    frame = benchmarks.load_benchmarks()
    emit(benchmarks.summarize_benchmarks(frame, by=["source_id"]), "table")
    print("\n== How well the model explains them (docs/validation.md) ==")
    print("The shipped fit: the seed documents and their context")
    seeds = benchmarks.calibration_benchmarks()
    print("\n".join(validation.summary_lines(validation.validate(seeds, params=params.name))[:2]))
    try:
        for cv in validation_runs.STORED:  # the stored out-of-sample runs: the headline numbers
            lines = validation.summary_lines(validation_runs.load_cv(cv))
            print("\n".join([lines[0], lines[1]] + [line for line in lines if line.startswith("metric ")]))
    except (validation_runs.StaleRunError, FileNotFoundError) as exc:
        print(f"(out of sample: {exc})")
    _corpus_summary()
    print(f"\n== {workload_file.name} on POWER8, x86 and Kunpeng: 3 nodes, by SMT mode ==")
    rows = []
    for platform in ("power8-s821lc-10c", "x86-dl380-e5-2630v4", "kunpeng-r722"):
        modes = load_platform(platform).smt_modes
        rows.append(
            predict(
                platform,
                spec["workload"],
                nodes=spec["nodes"],
                system=spec["system"],
                threads_per_core=list(modes),
                **spec["knobs"],
            )
        )
    table = pd.concat(rows, ignore_index=True)
    shown = ("shards", "throughput_ops_s", "latency_p", "util_", "bottleneck")
    cols = ["platform", "threads_per_core", *(c for c in PREDICT_TABLE if c.startswith(shown))]
    emit(table[cols].round(3), "table")
    print("Model, assumptions and accuracy: docs/models.md, docs/validation.md.")


def _corpus_summary() -> None:
    """The public corpus, per system: zero-shot and leave-one-source-out factors (evidence.corpus)."""

    try:
        table = corpus.load()
    except FileNotFoundError as exc:
        print(f"(public corpus: {exc})")
        return
    part = corpus.summary(table, ["system"])
    print(f"The public corpus ({len(table)} figures from {table['source_id'].nunique()} sources; "
          "factor errors, medians): fitted = the system's own parameters fitted on it")  # fmt: skip
    for _, r in part.iterrows():
        print(
            f"  {r['system']:<10} {r['figures']:>4} figures  leave-one-source-out "
            f"{r['leave-one-source-out median']:.2f}x  zero-shot {r['zero-shot median']:.2f}x"
            + ("  (fitted)" if r["fitted"] else "")
        )
