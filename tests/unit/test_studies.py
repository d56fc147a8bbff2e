"""perfmodel.plan.studies and perfmodel.plan.planner: the notebook helpers, fast, against closed forms
and the model."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import perfmodel
from perfmodel.evidence.figure_plan import predict_figures
from perfmodel.mechanisms.bursts import FLUSH_IO_BYTES
from perfmodel.plan import studies
from perfmodel.plan.planner import controls, planner, run_plan


def test_figures_vs_model_puts_predictions_in_the_figures_units():
    table = studies.figures_vs_model("seed000")
    raw = predict_figures(perfmodel.load_benchmarks().query("source_id == 'seed000'").reset_index(drop=True))
    ms = (table["unit"] == "ms").to_numpy()
    assert ms.sum() == 12  # Table 3
    np.testing.assert_allclose(table.loc[ms, "predicted"], raw.loc[ms, "predicted"] * 1e3, rtol=1e-12)
    ratio = (table["unit"] == "ratio").to_numpy()
    np.testing.assert_allclose(table.loc[ratio, "predicted"], raw.loc[ratio, "predicted"], rtol=1e-12)
    has = table["reason"] == ""
    np.testing.assert_allclose(
        table.loc[has, "ratio"], table.loc[has, "predicted"] / table.loc[has, "recorded"]
    )
    assert table.loc[~has, "predicted"].isna().all()
    with pytest.raises(ValueError, match="^source_id"):
        studies.figures_vs_model("seed999")


def test_percent_changes_compare_on_the_ratio_scale():
    table = studies.figures_vs_model("seed004").query("unit == 'pct_change' and reason == ''")
    expected = (1 + table["predicted"] / 100) / (1 + table["recorded"] / 100)
    np.testing.assert_allclose(table["ratio"], expected)


def test_fit_table_intervals_bracket_the_values():
    table = studies.fit_table()
    assert (
        len(table)
        and (table["ci_low"] <= table["value"]).all()
        and (table["value"] <= table["ci_high"]).all()
    )
    params = perfmodel.load_parameters("calibrated")
    for row in table.itertuples():
        assert row.value == pytest.approx(params[row.parameter], rel=1e-9)
    with pytest.raises(ValueError, match="no fit"):
        studies.fit_table("default")


def test_flush_burst_table_is_the_backlog_closed_form():
    t = studies.flush_burst_table("micron-6500-ion-30tb", [20, 200], [2e9, 4e9])
    assert len(t) == 4
    np.testing.assert_allclose(
        t["read_delay_max_ms"],
        t["burst_queue_depth"] * FLUSH_IO_BYTES / (t["burst_bandwidth_gb_s"] * 1e9) * 1e3,
    )
    default = studies.flush_burst_table("micron-6500-ion-30tb", [100])
    assert default["burst_bandwidth_gb_s"].iloc[0] == pytest.approx(
        perfmodel.load_device("micron-6500-ion-30tb").seq_write_bytes_s / 1e9
    )


def test_scaling_sweep_adds_the_full_core_count_and_drops_larger_ones():
    w = perfmodel.Workload(
        operation="read", read_fraction=1.0, object_bytes=1024, dataset_bytes=1e10, clients=50
    )
    sweep = studies.scaling_sweep(["x86-dl380-e5-2630v4"], w, system="scylla", cores=[2, 64])
    assert sorted(zip(sweep["threads_per_core"], sweep["cores"], strict=True)) == [
        (1, 2),
        (1, 10),
        (2, 2),
        (2, 10),
    ]


def test_config_sweep_changes_only_the_swept_axes():
    base = studies.config_sweep("seed004-t2-randrw-rf3-vs-rf2-p99")
    sweep = studies.config_sweep("seed004-t2-randrw-rf3-vs-rf2-p99", replication_factor=[2, 3])
    assert list(sweep["replication_factor"]) == [2, 3] and (sweep["figure_id"] == base["figure_id"][0]).all()
    # the figure's own configuration is RF 3: the RF 3 row equals the unswept prediction
    assert sweep["throughput_ops_s"].iloc[1] == pytest.approx(base["throughput_ops_s"].iloc[0], rel=1e-12)
    with pytest.raises(ValueError, match="^figure_id"):
        studies.config_sweep("no-such-figure")


def test_queue_depth_sweep_is_littles_law():
    t = studies.queue_depth_sweep(["sata-ssd-800gb"], [1, 4, 64])
    np.testing.assert_allclose(
        t["throughput_ops_s"] * t["latency_mean_ms"] / 1e3, t["queue_depth"], rtol=1e-6
    )


def _table():
    return pd.DataFrame(
        {
            "platform": ["a", "a", "b", "c"],
            "threads_per_core": [1, 2, 1, 1],
            "nodes": [6, 5, 5, 0],
            "feasible": [True, True, True, False],
            "binding": ["slo", "throughput", "capacity", ""],
            "reason": ["", "", "", "cannot meet p99"],
            "latency_p99_ms": [1.0, 2.0, 1.5, math.nan],
            "bottleneck": ["cpu", "cpu", "device", ""],
        }
    )


def test_sizing_summary_and_conclusion():
    summary = studies.sizing_summary(_table())
    assert summary["best_nodes"] == 5 and summary["best_platform"] == "b"  # 5 nodes, then the lower p99
    assert summary["best_threads_per_core"] == 1 and summary["feasible_candidates"] == 3
    assert (summary["nodes_a"], summary["nodes_b"], summary["nodes_c"]) == (5, 5, 0)
    text = studies.sizing_conclusion(_table(), target_ops_s=1e5, slo_p99_ms=10)
    assert (
        "- a: 5 nodes at SMT2" in text
        and "c: infeasible (cannot meet p99)" in text
        and "Fewest nodes: 5 nodes x b at SMT1 (a tie at 5 nodes with a SMT2; broken by the lower predicted "
        "p99)"
        in text
    )
    nan = float("nan")
    ranged = _table().assign(nodes_lower=[5.0, 4.0, 4.0, nan], nodes_upper=[7.0, 9.0, nan, nan])
    text = studies.sizing_conclusion(ranged, target_ops_s=1e5, slo_p99_ms=10)
    assert "- a: 5 nodes (90% range 4-9) at SMT2" in text
    assert "b: 5 nodes (90% range 4 to more than the largest size tried) at SMT1" in text
    none = studies.sizing_summary(_table().assign(feasible=False, nodes=0))
    assert none["best_nodes"] == 0 and math.isnan(none["best_latency_p99_ms"])
    # a platform with no feasible mode is described by its nearest miss (the lowest best p99)
    missed = _table().assign(feasible=False, nodes=0, latency_p99_ms=math.nan,
                             latency_p99_ms_best=[3.0, 2.0, 1.0, 5.0],
                             reason=["SMT1 misses", "SMT2 misses", "b misses", "c misses"])  # fmt: skip
    best = studies.best_per_platform(missed).set_index("platform")
    assert best.loc["a", "threads_per_core"] == 2 and best.loc["a", "reason"] == "SMT2 misses"
    text = studies.sizing_conclusion(missed, target_ops_s=1e5, slo_p99_ms=10)
    assert "- a: infeasible (SMT2 misses)." in text


def test_plot_sizing_draws_two_axes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes = studies.plot_sizing(_table(), slo_p99_ms=10)
    assert (
        len(axes) == 2 and axes[1].get_xlabel() == "p99 at that size [ms]" and axes[1].get_xscale() == "log"
    )
    plt.close("all")


def test_run_plan_is_size_workload_and_the_planner_builds_headless():
    pytest.importorskip("ipywidgets")
    kwargs = dict(
        platforms=["x86-dl380-e5-2630v4"], target_ops_s=1e5, slo_p99_ms=20, dataset_gib=50, interval=None
    )
    table, text = run_plan(**kwargs)
    direct = studies.size_workload(**kwargs)
    assert list(table["nodes"]) == list(direct["nodes"]) and "x86-dl380-e5-2630v4" in text
    widgets = controls(platforms=["kunpeng-r722"], target_ops_s=2e5)
    assert widgets["platforms"].value == ("kunpeng-r722",) and widgets["target_ops_s"].value == pytest.approx(
        2e5
    )
    import matplotlib

    matplotlib.use("Agg")
    ui = planner(platforms=["x86-dl380-e5-2630v4"], target_ops_s=1e5, slo_p99_ms=20, dataset_gib=50)
    assert len(ui.children) == 2  # the controls' column beside the output
