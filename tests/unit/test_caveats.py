"""The caveat printed beside an answer: what the stored corpus run says of the system (perfmodel.caveats)."""

from __future__ import annotations

import perfmodel
from perfmodel import caveats, corpus


def test_the_caveat_is_the_stored_runs_medians():
    table = corpus.load()
    cassandra = table[(table.system == "cassandra") & table.metric.isin(["latency_p95", "latency_p99",
                                                                          "latency_p999"])]  # fmt: skip
    tail = cassandra["loso_factor"].dropna().median()
    text = caveats.caveat("cassandra")
    assert f"tail latency {tail:.2f}x" in text
    assert text.startswith(f"cassandra's tail latency is {tail:.1f}x off") and "benchmark a candidate" in text


def test_a_system_within_the_threshold_gets_no_warning_and_one_without_a_record_says_so():
    rec = caveats.record()
    good = rec.groupby("system")["median_factor"].max()
    within = sorted(good[good <= caveats.THRESHOLD].index)
    for system in within:
        assert not caveats.caveat(system).startswith(f"{system}'s")
    assert caveats.caveat("dm8").startswith("no published figures of dm8 from other labs")


def test_size_predict_and_the_planner_carry_it(capsys):
    w = perfmodel.Workload(operation="mixed", read_fraction=0.9, object_bytes=1024, dataset_bytes=1e11,
                           clients=1, replication_factor=3)  # fmt: skip
    out = perfmodel.size(w, target_ops_s=1e5, slo_p99_ms=50, system="cassandra",
                         platforms=["x86-dl380-e5-2630v4"], interval=None)  # fmt: skip
    assert out.attrs["caveat"] == caveats.caveat("cassandra")
    from perfmodel.planner import plan_html

    html = plan_html(out, "Sizing for 100,000 ops/s\nFewest nodes: 4", slo_p99_ms=50)
    assert "class='pm-caveat'" in html and "cassandra&#x27;s tail latency" in html


def test_the_command_line_prints_it_under_the_answer(capsys):
    from pathlib import Path

    from perfmodel.cli import main

    workload = str(Path(perfmodel.__file__).parents[1] / "data" / "workloads" / "scylla-read-heavy.yaml")
    args = ["size", workload, "--target-ops", "1e5", "--slo-p99-ms", "20", "--platform", "kunpeng-r722"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1] == f"Caveat: {caveats.caveat('scylla')}"
    assert main(["predict", workload, "--platform", "kunpeng-r722"]) == 0
    assert "Caveat: scylla's" in capsys.readouterr().out
