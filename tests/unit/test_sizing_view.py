"""perfmodel.plan.sizing_view and the planner: what a planner sees of a sizing, for every answer size gives.

Three real sizings (the planner's defaults, a high target, an infeasible SLO) are plotted and
tabulated; the checks read the drawn artists (bar colours, the log axis, the band's ends, the SLO
line, the infeasible rows' text), not the code's intentions.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from perfmodel.plan import sizing_view
from perfmodel.plan.planner import applicable, planner, platform_options, run_plan
from perfmodel.plan.sizing_view import SMT_COLORS, binding_text, nodes_cell, smt_color

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

BASE = dict(
    platforms=["power8-s821lc-10c", "x86-dl380-e5-2630v4"],
    system="scylla",
    read_fraction=0.8,
    object_bytes=1024,
    key_distribution="zipf",
    zipf_s=0.9,
    dataset_gib=500.0,
    replication_factor=3,
    consistency="QUORUM",
    failure_tolerance=1,
    max_utilization=0.7,
)
CASES = {
    "defaults": dict(target_ops_s=1e6, slo_p99_ms=20.0),
    "high target": dict(target_ops_s=1e7, slo_p99_ms=20.0),
    "infeasible": dict(target_ops_s=1e7, slo_p99_ms=0.1),
}


@pytest.fixture(scope="module")
def plans():
    return {name: (run_plan(**BASE, **case), case["slo_p99_ms"]) for name, case in CASES.items()}


def _label_smt(label: str) -> int:
    return int(re.search(r"SMT(\d+)$", label).group(1))


def test_smt_colours_are_the_same_in_every_sizing(plans):
    seen = {}
    for (table, _), slo in plans.values():
        left, _right = sizing_view.plot_sizing(table, slo_p99_ms=slo)
        labels = {
            round(t, 6): lab.get_text()
            for t, lab in zip(left.get_yticks(), left.get_yticklabels(), strict=True)
        }
        for bar in left.patches:
            y = round(bar.get_y() + bar.get_height() / 2, 6)
            mode = _label_smt(labels[y])
            colour = mcolors.to_hex(bar.get_facecolor())
            assert colour == SMT_COLORS[mode]
            seen.setdefault(mode, set()).add(colour)
        plt.close("all")
    assert set(seen) == {1, 2, 4, 8} and all(len(c) == 1 for c in seen.values())
    assert smt_color(3) == smt_color(3) and smt_color(3) not in SMT_COLORS.values()


def test_rows_keep_their_place_whatever_the_answer(plans):
    orders = [list(sizing_view.ordered(table).apply(sizing_view.candidate_label, axis=1)) for (table, _), _ in
              plans.values()]  # fmt: skip
    assert orders[0] == orders[1] == orders[2]
    assert orders[0][0] == "power8-s821lc-10c SMT1" and len(orders[0]) == 6


def test_p99_panel_is_log_with_band_and_slo(plans):
    (table, _), slo = plans["defaults"]
    # at 90% the band on a new lab is too wide to give (perfmodel.evidence.lab_bands): no band is drawn
    assert table.attrs["range_note"] and table.attrs["interval"] is None
    _left, right = sizing_view.plot_sizing(table, slo_p99_ms=slo)
    bands = [
        ln for ln in right.get_lines() if len(ln.get_xdata()) == 2 and list(ln.get_xdata()) != [slo, slo]
    ]
    assert bands == []
    plt.close("all")
    table, _ = run_plan(**BASE, **CASES["defaults"], interval=0.5)  # a band narrow enough to draw
    _left, right = sizing_view.plot_sizing(table, slo_p99_ms=slo)
    assert right.get_xscale() == "log"
    slo_lines = [ln for ln in right.get_lines() if list(ln.get_xdata()) == [slo, slo]]
    assert len(slo_lines) == 1
    segments = [ln for ln in right.get_lines() if len(ln.get_xdata()) == 2 and ln not in slo_lines]
    data = sizing_view.ordered(table)
    feasible = data[data["feasible"]]
    assert len(segments) == len(feasible)  # one band per feasible candidate
    xhi = right.get_xlim()[1]
    for seg, (_, row) in zip(segments, feasible.iterrows(), strict=True):
        lo, hi = seg.get_xdata()
        assert lo == pytest.approx(row["latency_p99_ms_lower"])
        assert hi == pytest.approx(
            row["latency_p99_ms_upper"] if np.isfinite(row["latency_p99_ms_upper"]) else xhi
        )
        assert lo <= row["latency_p99_ms"] <= hi
    plt.close("all")


def test_infeasible_candidates_are_words_in_both_panels(plans):
    (table, text), slo = plans["infeasible"]
    assert not table["feasible"].any() and "No candidate meets every constraint" in text
    left, right = sizing_view.plot_sizing(table, slo_p99_ms=slo)
    assert not left.patches  # no bar pretends to be an answer
    notes = [t.get_text() for t in left.texts]
    assert len(notes) == len(table) and all(n.startswith("infeasible: p99 never <= 0.1 ms") for n in notes)
    data = sizing_view.ordered(table)
    notes = [t.get_text() for t in right.texts]  # the p99 panel says how far from the SLO
    expected = [f"best {b:.3g} ms" for b in data["latency_p99_ms_best"]]  # "infeasible: " where there is room
    assert [n.removeprefix("infeasible: ") for n in notes] == expected
    hollow = [ln for ln in right.get_lines() if ln.get_markerfacecolor() == "none"]
    best = sorted(table["latency_p99_ms_best"])
    assert sorted(float(ln.get_xdata()[0]) for ln in hollow) == pytest.approx(best)
    assert min(best) > slo  # the best p99 any size reaches misses the SLO: why it is infeasible
    plt.close("all")


def test_one_node_fewer_breaks_the_binding_constraint(plans):
    """What the words say is what the model computed: with one node fewer the binding constraint fails."""
    checked = 0
    for (table, _), slo in plans.values():
        for _, row in table[table["feasible"]].iterrows():
            if "slo" in row["binding"].split("+"):
                assert row["latency_p99_ms_one_fewer"] > slo
                checked += 1
            if "throughput" in row["binding"].split("+"):
                assert row["max_utilization_one_fewer"] > 0.7
                checked += 1
    assert checked >= 10


def test_binding_words():
    row = {
        "feasible": True,
        "nodes": 8,
        "binding": "slo",
        "latency_p99_ms_one_fewer": 44.4,
        "tail_regime": "step",
    }
    assert binding_text(row, slo_p99_ms=20) == (
        "set by the SLO: at 7 nodes the p99 would be 44.4 ms > 20 ms "
        "(>= 1% of requests meet a flush burst there: a p99 step)"
    )
    row.update(latency_p99_ms_one_fewer=math.inf, tail_regime="body")
    assert binding_text(row, slo_p99_ms=20) == "set by the SLO: at 7 nodes a station saturates"
    row.update(binding="throughput", max_utilization_one_fewer=0.7004)
    assert binding_text(row, max_utilization=0.7).endswith("would run at 70.04% > 70%")  # never "70% > 70%"
    row.update(binding="capacity")
    assert binding_text(row) == "set by capacity: the data set x RF needs the drives of 8 nodes"
    row.update(binding="replication+capacity+throughput+slo")  # the fewest nodes allowed: nothing tried below
    assert binding_text(row) == (
        "set by replication: RF plus the failures tolerated need 8 nodes, the fewest allowed "
        "(capacity, throughput, the SLO met there too)"
    )
    assert binding_text({"feasible": False, "nodes": 0}) == ""


def test_cells_and_table_html(plans):
    nan = math.nan
    assert nodes_cell({"feasible": True, "nodes": 8, "nodes_lower": 4.0, "nodes_upper": 10.0}) == "8 (4-10)"
    assert (
        nodes_cell({"feasible": True, "nodes": 8, "nodes_lower": 4.0, "nodes_upper": nan}, 128)
        == "8 (4 to >128)"
    )
    assert nodes_cell({"feasible": False, "nodes": 0}) == "infeasible"
    for (table, _), slo in plans.values():
        page = sizing_view.table_html(table, slo_p99_ms=slo)
        swatches = re.findall(r"data-smt='(\d+)' data-color='(#[0-9a-f]{6})'", page)
        assert len(swatches) == len(table)
        assert all(colour == SMT_COLORS[int(mode)] for mode, colour in swatches)
        for reason in table.loc[~table["feasible"], "reason"]:
            assert (
                reason.replace(">", "&gt;").replace("<", "&lt;") in page
            )  # in full, not cut at 50 characters
        assert "inf" not in re.sub(r"infeasible", "", page)  # no "inf ms" anywhere


def test_planner_controls_that_do_not_apply_and_platform_order():
    assert applicable({"key_distribution": "uniform", "replication_factor": 3}) == {
        "zipf_s": False,
        "consistency": True,
    }
    assert applicable({"key_distribution": "zipf", "replication_factor": 1}) == {
        "zipf_s": True,
        "consistency": False,
    }
    order = platform_options(["a", "b", "kunpeng-r722", "z"], ["z"])
    assert order[:2] == ["z", "kunpeng-r722"] and sorted(order) == ["a", "b", "kunpeng-r722", "z"]


def test_planner_answers_an_infeasible_request_in_words(capsys):
    pytest.importorskip("ipywidgets")
    ui = planner(**BASE, target_ops_s=1e6, slo_p99_ms=20.0)
    controls = ui.children[0].children
    by_name = {getattr(c, "description", ""): c for c in controls}
    assert by_name["Zipf exponent"].disabled is False
    by_name["key popularity"].value = "uniform"
    assert by_name["Zipf exponent"].disabled is True
    capsys.readouterr()
    by_name["target [ops/s]"].value = 1e7
    by_name["p99 SLO [ms]"].value = 0.1
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err and "KeyError" not in out.out + out.err
    assert "No candidate meets every constraint" in ui.last_html  # what the output area shows
    bundle = ui._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # the live planner in JupyterLab
    static = bundle["text/html"]  # and its last plan for an export with no widget script
    assert "No candidate meets every constraint" in static and "data:image/png;base64," in static
    plt.close("all")


def test_terminal_table_numbers_its_notes(plans):
    (table, _), slo = plans["infeasible"]
    text = sizing_view.table_text(table, slo_p99_ms=slo)
    lines = text.splitlines()
    assert lines[0].split() == ["#", "candidate", "nodes", "network", "p99", "[ms]", "busiest"]
    assert len(lines) == 1 + 2 * len(table)  # header, a row per candidate, a note per candidate
    assert lines[1 + len(table)].startswith("1. power8-s821lc-10c SMT1: p99 never <= 0.1 ms")
    assert max(map(len, lines[: 1 + len(table)])) < 80  # the table itself fits a terminal


def test_markers_ranges_and_legend_are_where_they_say(plans):
    """Each feasible row's p99 marker has its SMT colour, each node range spans nodes_lower..nodes_upper,
    and the legend lies outside both panels."""
    (table, _), slo = plans["defaults"]
    left, right = sizing_view.plot_sizing(table, slo_p99_ms=slo)
    data = sizing_view.ordered(table)
    y_of = {len(data) - 1 - k: k for k in range(len(data))}  # the first candidate is the top row
    filled = [ln for ln in right.get_lines() if ln.get_marker() == "o" and ln.get_markerfacecolor() != "none"]
    assert len(filled) == int(data["feasible"].sum())
    for ln in filled:
        row = data.iloc[y_of[int(round(ln.get_ydata()[0]))]]
        assert mcolors.to_hex(ln.get_color()) == SMT_COLORS[int(row["threads_per_core"])]
        assert ln.get_xdata()[0] == pytest.approx(row["latency_p99_ms"])
    ranges = [ln for ln in left.get_lines() if len(ln.get_xdata()) == 2]
    assert len(ranges) == int(np.isfinite(data["nodes_lower"]).sum())
    xmax = left.get_xlim()[1]
    for ln in ranges:
        row = data.iloc[y_of[int(round(ln.get_ydata()[0]))]]
        hi = row["nodes_upper"] if np.isfinite(row["nodes_upper"]) else xmax
        assert tuple(ln.get_xdata()) == pytest.approx((row["nodes_lower"], hi))
    fig = left.figure
    fig.canvas.draw()
    legend = fig.legends[0].get_window_extent()
    for ax in (left, right):
        assert not legend.overlaps(ax.get_window_extent())
    plt.close("all")


def test_a_data_set_that_does_not_fit_says_so():
    table, text = run_plan(**{**BASE, "dataset_gib": 1e6}, target_ops_s=1e5, slo_p99_ms=1000.0)
    assert not table["feasible"].any()
    assert table["reason"].str.startswith("data does not fit: the data set x RF is").all()
    assert "the data set does not fit" in text and "relax the p99 SLO" not in text
    left, right = sizing_view.plot_sizing(table, slo_p99_ms=1000.0)
    assert all(t.get_text().startswith("infeasible: data does not fit") for t in left.texts)
    assert not [
        ln for ln in right.get_lines() if ln.get_markerfacecolor() == "none"
    ]  # no "best p99": not the SLO
    plt.close("all")


def test_the_planners_export_copy_follows_the_controls():
    pytest.importorskip("ipywidgets")
    ui = planner(**BASE, target_ops_s=1e6, slo_p99_ms=20.0)
    assert "Fewest nodes" in ui.last_html
    platforms = ui.children[0].children[0]
    platforms.value = ()
    assert "Choose at least one platform" in ui.last_html and "Fewest nodes" not in ui.last_html
    plt.close("all")


def test_platform_colours_are_fixed_and_distinct_within_a_plot():
    from perfmodel.inputs.catalog import list_platforms

    every = list_platforms()
    palette = sizing_view.platform_palette(every[:30])
    assert len(set(palette.values())) == 30  # no two platforms of one plot share a colour
    assert sizing_view.platform_palette(["kunpeng-r722", "x86-dl380-e5-2630v4"]) == {
        "kunpeng-r722": sizing_view.PLATFORM_COLORS["kunpeng-r722"],
        "x86-dl380-e5-2630v4": sizing_view.PLATFORM_COLORS["x86-dl380-e5-2630v4"],
    }
    other = [p for p in every if p not in sizing_view.PLATFORM_COLORS][0]
    assert sizing_view.platform_palette([other]) == {other: sizing_view.platform_color(other)}  # its own


def test_planner_topology_controls_apply_where_the_system_has_them(capsys):
    pytest.importorskip("ipywidgets")
    from perfmodel.plan.planner import applicable, run_plan, topology_text

    assert applicable({"system": "redis"})["instances_per_server"]
    assert not applicable({"system": "redis"})["sync_replicas"]
    assert applicable({"system": "postgresql"})["sync_replicas"]
    assert not applicable({"system": "scylla"})["instances_per_server"]
    assert "primary_replicas" in topology_text("mysql")
    base = dict(platforms=["x86-dl380-e5-2630v4"], target_ops_s=2e5, slo_p99_ms=20.0, dataset_gib=10.0,
                replication_factor=1, interval=None)  # fmt: skip
    table, _ = run_plan(system="redis", instances_per_server=2, sync_replicas=1, **base)
    assert set(table.instances_per_server) == {2}  # fixed; the sync control does not apply and is ignored
    table, _ = run_plan(system="postgresql", instances_per_server=4, sync_replicas=1, **base)
    assert (table.nodes[table.feasible] >= 3).all()  # a surviving synchronous replica: N+1 is 3


def test_the_tables_show_how_servers_are_deployed_where_the_system_has_a_deployment():
    import perfmodel
    from perfmodel.plan.sizing import size
    from perfmodel.plan.sizing_view import table_html, table_text

    kv = perfmodel.Workload(operation="mixed", read_fraction=0.9, object_bytes=100, dataset_bytes=50 * 2**30,
                            clients=1)  # fmt: skip
    redis = size(kv, target_ops_s=2e6, slo_p99_ms=1, system="redis", platforms=["x86-epyc-9654-2s"],
                 interval=None)  # fmt: skip
    assert "16 instances each" in table_html(redis) and "16 instances each" in table_text(redis)
    scylla = size(kv, target_ops_s=2e5, slo_p99_ms=1, system="scylla", platforms=["x86-epyc-9654-2s"],
                  interval=None)  # fmt: skip
    assert "deploy" not in table_html(scylla) and "deploy" not in table_text(scylla).splitlines()[0]
