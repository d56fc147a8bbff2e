"""The planner fills its output area as widget state, so a headless run sends nothing back to the kernel."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")

import matplotlib.pyplot as plt  # noqa: E402

from perfmodel.plan.planner import planner  # noqa: E402

BASE = dict(platforms=["x86-dl380-e5-2630v4"], system="scylla", dataset_gib=100.0)


def _output_area(ui):
    return ui.children[1]


def test_the_output_area_holds_the_plan_as_state_never_a_capture():
    """The plan is the Output widget's ``outputs``, set in one step; the widget never captures
    (``msg_id`` stays empty). A capture makes nbclient send the captured outputs back to the kernel
    mid-cell, after which ipykernel 7 sometimes lost the cell's reply and the run hung (issue 36)."""
    ui = planner(**BASE, target_ops_s=1e5, slo_p99_ms=20.0)
    output = _output_area(ui)
    captures = []
    output.observe(lambda change: captures.append(change.new), names="msg_id")
    (shown,) = output.outputs
    assert shown["output_type"] == "display_data" and shown["data"]["text/html"] == ui.last_html
    assert "class='pm-plan'" in ui.last_html and "Sizing for" in shown["data"]["text/plain"]
    platforms = ui.children[0].children[0]
    platforms.value = ()
    (shown,) = output.outputs
    assert "Choose at least one platform" in shown["data"]["text/html"] == ui.last_html
    assert captures == [] and output.msg_id == ""
    plt.close("all")


def test_the_plans_figure_never_enters_pyplot():
    """A figure drawn in a widget callback runs outside any cell; under pyplot the inline backend's
    hooks own it, and the browser test twice received a blank PNG from it (a race this test does not
    reproduce; tests/browser does). The planner draws on a figure pyplot does not know: none is
    registered, and the PNG holds the bars."""
    import base64
    import io
    import re

    import matplotlib.image as mpimg
    import numpy as np

    from perfmodel.plan.sizing_view import SMT_COLORS

    plt.close("all")
    ui = planner(**BASE, target_ops_s=1e6, slo_p99_ms=20.0)
    ui.children[0].children[0].value = ("x86-dl380-e5-2630v4", "kunpeng-r722")  # a replan in a callback
    assert plt.get_fignums() == []
    src = re.search(r"src='data:image/png;base64,([^']+)'", ui.last_html).group(1)
    rgb = np.round(mpimg.imread(io.BytesIO(base64.b64decode(src)), format="png")[..., :3] * 255).astype(int)
    x86_smt2 = np.array([int(SMT_COLORS[2][i : i + 2], 16) for i in (1, 3, 5)])
    assert np.all(rgb == x86_smt2, axis=-1).sum() > 500  # a bar of the x86's SMT2 row, not a blank


@pytest.mark.slow
def test_costs_and_a_confidence_add_their_blocks_to_the_plan():
    """With costs on, the shipped prices' block; with a confidence, the plan under uncertainty (the
    target's spread and the model's own error, perfmodel.plan.uncertain); the spread control applies
    only with a confidence."""
    from perfmodel.plan.planner import applicable

    assert not applicable({"confidence": 0.0})["target_spread"]
    assert applicable({"confidence": 0.9})["target_spread"]
    ui = planner(platforms=["x86-aws-i3-4xlarge"], system="scylla", dataset_gib=100.0, target_ops_s=3e5,
                 slo_p99_ms=20.0, prices=True, confidence=0.9, target_spread=1.5)  # fmt: skip
    page = ui.last_html
    assert "class='pm-cost'" in page and "USD/month" in page and "cheapest" in page
    assert "class='pm-uncertain'" in page and "probability 90%" in page and "target_ops_s: lognormal" in page
    plain = planner(platforms=["x86-aws-i3-4xlarge"], system="scylla", dataset_gib=100.0, target_ops_s=3e5,
                    slo_p99_ms=20.0)  # fmt: skip
    assert "pm-cost" not in plain.last_html and "pm-uncertain" not in plain.last_html
    plt.close("all")
