"""The main report (``perfmodel report``, the first half of ``make run``).

The catalog, the recorded figures, how well the model explains them in and
out of sample, a read-heavy workload on POWER8, x86 and Kunpeng by SMT mode,
and a sizing table with its conclusion.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

import perfmodel
from perfmodel import benchmarks, catalog, sizing_view, studies
from perfmodel._data import data_dir
from perfmodel.workload import load_workload_file

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


def main_report() -> None:
    """Print the main report to standard output."""
    from perfmodel import validation, validation_runs

    params = perfmodel.load_parameters()
    print(f"perfmodel {perfmodel.__version__}: hardware catalog, recorded figures and model predictions")
    print(f"(parameter set: {params.name})\n")
    print("== Platforms ==")
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
    workload_file = Path(data_dir()) / "workloads" / "scylla-read-heavy.yaml"
    spec = load_workload_file(str(workload_file))
    print(f"\n== {workload_file.name} on POWER8, x86 and Kunpeng: 3 nodes, by SMT mode ==")
    rows = []
    for platform in ("power8-s821lc-10c", "x86-dl380-e5-2630v4", "kunpeng-r722"):
        modes = perfmodel.load_platform(platform).smt_modes
        rows.append(
            perfmodel.predict(
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
    target, slo = 1_000_000.0, 20.0
    print(
        f"\n== Sizing: {target:,.0f} ops/s at p99 <= {slo:g} ms, N+1, utilisation <= 70% "
        f"({workload_file.name}, {spec['workload'].dataset_bytes / 2**40:.2f} TiB x RF "
        f"{spec['workload'].replication_factor:g}; the same candidates as notebooks/05-sizing) =="
    )
    sized = perfmodel.size(
        spec["workload"], target_ops_s=target, slo_p99_ms=slo, system=spec["system"], **spec["knobs"]
    )
    print(sizing_view.table_text(sized, slo_p99_ms=slo))
    print()
    print(studies.sizing_conclusion(sized, target_ops_s=target, slo_p99_ms=slo))
    print("Model, assumptions and accuracy: docs/models.md, docs/validation.md.")


def _corpus_summary() -> None:
    """The public corpus, per system: zero-shot and leave-one-source-out factors (perfmodel.corpus)."""
    from perfmodel import corpus

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
