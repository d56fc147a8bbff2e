"""The caveat printed beside an answer: the held-out labs' and the first look's errors
(perfmodel.model.caveats)."""

from __future__ import annotations

import perfmodel
from perfmodel.model import caveats


def test_the_caveat_is_the_stored_runs_medians():
    """Cassandra's numbers are the held-out labs' median of lab medians and the first look's median,
    both recomputed here from the stored runs and the record."""
    from perfmodel.evidence import first_look, labs

    held = labs.held_out()
    tail = held[(held.system == "cassandra") & (held.metric_group == "tail latency")]
    lab_median = tail.groupby("lab")["factor_error"].median().median()
    look = first_look.load()
    look = look[(look.system == "cassandra") & (look.metric_group == "tail latency")]["factor_error"].median()
    text = caveats.caveat("cassandra")
    assert f"tail latency {lab_median:.2f}x over" in text
    assert f"first look {look:.2f}x" in text
    worst = max(lab_median, look)
    assert text.startswith("cassandra's tail latency on ") and f"is {worst:.1f}x off" in text
    assert "benchmark a candidate" in text


def test_a_system_within_the_threshold_gets_no_warning_and_one_without_a_record_says_so(monkeypatch):
    """On a made-up record: within 1.5x on both measures no warning; either measure above it warns,
    naming the worse; a system with no record says so."""
    import math

    import pandas as pd

    rows = [
        ("good", "throughput", 3, 1.2, 1.3), ("good", "tail latency", 2, 1.4, math.nan),
        ("held", "throughput", 3, 1.7, 1.1), ("looked", "throughput", 3, 1.1, 2.6),
    ]  # fmt: skip
    fake = pd.DataFrame(
        [{"system": s, "group": g, "labs": n, "figures": 10, "median_factor": m, "first_look_figures": 5,
          "first_look_sources": 1, "first_look_median": f} for s, g, n, m, f in rows]
    )  # fmt: skip
    monkeypatch.setattr(caveats, "record", lambda: fake)
    good = caveats.caveat("good")
    assert not good.startswith("good's") and "throughput 1.20x over 3 labs held out, first look 1.30x" in good
    assert caveats.caveat("held").startswith("held's throughput on labs held out is 1.7x off")
    assert caveats.caveat("looked").startswith("looked's throughput on first look is 2.6x off")
    assert caveats.caveat("no-such-system").startswith("no published figures of no-such-system")


def test_size_predict_and_the_planner_carry_it(capsys):
    w = perfmodel.Workload(operation="mixed", read_fraction=0.9, object_bytes=1024, dataset_bytes=1e11,
                           clients=1, replication_factor=3)  # fmt: skip
    out = perfmodel.size(w, target_ops_s=1e5, slo_p99_ms=50, system="cassandra",
                         platforms=["x86-dl380-e5-2630v4"], interval=None)  # fmt: skip
    assert out.attrs["caveat"] == caveats.caveat("cassandra")
    from perfmodel.plan.planner import plan_html

    html = plan_html(out, "Sizing for 100,000 ops/s\nFewest nodes: 4", slo_p99_ms=50)
    assert "class='pm-caveat'" in html and "cassandra&#x27;s tail latency" in html


def test_the_command_line_prints_it_under_the_answer(capsys):
    from pathlib import Path

    from perfmodel.cli import main

    workload = str(Path(perfmodel.__file__).parents[1] / "data" / "workloads" / "scylla-read-heavy.yaml")
    args = ["size", workload, "--target-ops", "1e5", "--slo-p99-ms", "20", "--platform", "kunpeng-r722"]
    assert main(args) == 0
    out = capsys.readouterr().out
    last = out.rstrip().splitlines()
    assert last[-2] == f"Caveat: {caveats.caveat('scylla')}"
    assert last[-1].startswith("Range: the model's 90% band on a lab it has not seen is too wide")
    assert main(["predict", workload, "--platform", "kunpeng-r722"]) == 0
    assert "Caveat: scylla's" in capsys.readouterr().out
