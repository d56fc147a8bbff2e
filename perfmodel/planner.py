"""The interactive capacity planner of notebook 06: ipywidgets over :func:`perfmodel.studies.size_workload`.

:func:`run_plan` is the computation (a sizing table and its conclusion) and
runs anywhere; :func:`planner` builds the controls (sliders and drop-downs, one
per argument of ``run_plan``) and an output area that re-plans whenever a
control changes. Constructing the widgets needs no browser, so the notebook
also executes headless under papermill.
"""

from __future__ import annotations

import pandas as pd

from perfmodel import studies
from perfmodel.sizing import TABLE_COLUMNS

#: sizing-table columns the planner shows
PLAN_COLUMNS = TABLE_COLUMNS
CONSISTENCY_LEVELS = ("ONE", "QUORUM", "ALL")


def run_plan(**values) -> tuple[pd.DataFrame, str]:
    """The sizing table and its conclusion text: :func:`perfmodel.studies.size_workload` on the
    controls' ``values`` (its arguments and units: ``target_ops_s`` [1/s], ``slo_p99_ms`` [ms],
    ``object_bytes`` [B], ``dataset_gib`` [GiB], ...), which builds the workload and calls
    :func:`perfmodel.size`."""
    values = {k: list(v) if k == "platforms" else v for k, v in values.items()}
    table = studies.size_workload(**values)
    text = studies.sizing_conclusion(
        table, target_ops_s=float(values["target_ops_s"]), slo_p99_ms=float(values["slo_p99_ms"])
    )
    return table, text


def controls(**defaults) -> dict:
    """One widget per argument of :func:`run_plan`, set to ``defaults``."""
    import ipywidgets as w

    from perfmodel.catalog import list_platforms
    from perfmodel.systems import list_systems

    style = {"description_width": "150px"}
    layout = w.Layout(width="480px")
    common = {"style": style, "layout": layout, "continuous_update": False}
    return {
        "platforms": w.SelectMultiple(
            options=list_platforms(),
            value=tuple(defaults.get("platforms", ())),
            rows=6,
            description="platforms",
            style=style,
            layout=layout,
        ),
        "system": w.Dropdown(
            options=[k for k in list_systems() if k != "fio"],
            value=defaults.get("system", "scylla"),
            description="system",
            style=style,
            layout=layout,
        ),
        "target_ops_s": w.FloatLogSlider(
            value=defaults.get("target_ops_s", 1e6),
            base=10,
            min=3,
            max=8,
            step=0.1,
            description="target [ops/s]",
            readout_format=".3g",
            **common,
        ),
        "read_fraction": w.FloatSlider(
            value=defaults.get("read_fraction", 0.8),
            min=0,
            max=1,
            step=0.05,
            description="read fraction",
            **common,
        ),
        "object_bytes": w.Dropdown(
            options=sorted(
                {128, 256, 512, 1024, 4096, 16384, 65536, int(defaults.get("object_bytes", 1024))}
            ),
            value=int(defaults.get("object_bytes", 1024)),
            description="object size [B]",
            style=style,
            layout=layout,
        ),
        "key_distribution": w.Dropdown(
            options=("uniform", "zipf"),
            value=defaults.get("key_distribution", "uniform"),
            description="key popularity",
            style=style,
            layout=layout,
        ),
        "zipf_s": w.FloatSlider(
            value=defaults.get("zipf_s", 0.0),
            min=0,
            max=1.5,
            step=0.05,
            description="Zipf exponent",
            **common,
        ),
        "dataset_gib": w.FloatLogSlider(
            value=defaults.get("dataset_gib", 500.0),
            base=10,
            min=0,
            max=6,
            step=0.1,
            description="data set [GiB]",
            readout_format=".3g",
            **common,
        ),
        "replication_factor": w.IntSlider(
            value=defaults.get("replication_factor", 3),
            min=1,
            max=5,
            description="replication factor",
            **common,
        ),
        "consistency": w.Dropdown(
            options=CONSISTENCY_LEVELS,
            value=defaults.get("consistency", "QUORUM"),
            description="consistency",
            style=style,
            layout=layout,
        ),
        "slo_p99_ms": w.FloatLogSlider(
            value=defaults.get("slo_p99_ms", 20.0),
            base=10,
            min=-1,
            max=3,
            step=0.05,
            description="p99 SLO [ms]",
            readout_format=".3g",
            **common,
        ),
        "failure_tolerance": w.IntSlider(
            value=defaults.get("failure_tolerance", 1),
            min=0,
            max=3,
            description="failures tolerated",
            **common,
        ),
        "max_utilization": w.FloatSlider(
            value=defaults.get("max_utilization", 0.7),
            min=0.3,
            max=0.95,
            step=0.05,
            description="max utilisation",
            **common,
        ),
    }


def planner(**defaults):
    """The planner: controls beside an output area that shows the plan for the current values.

    Returns an ``ipywidgets.VBox``; the output is filled once at construction
    (with ``defaults``) and again whenever a control changes.
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import display

    widgets = controls(**defaults)
    output = w.Output()

    def show(**values):
        if not values["platforms"]:
            print("choose at least one platform")
            return
        try:
            table, text = run_plan(**values)
        except ValueError as exc:
            print(f"cannot plan: {exc}")
            return
        print(text)
        display(table[PLAN_COLUMNS].round(3))
        studies.plot_sizing(table, slo_p99_ms=values["slo_p99_ms"])
        plt.tight_layout()
        plt.show()

    def refresh(_change=None):
        output.clear_output(wait=True)
        with output:
            show(**{name: widget.value for name, widget in widgets.items()})

    for widget in widgets.values():
        widget.observe(refresh, names="value")
    refresh()
    left = w.VBox(list(widgets.values()))
    return w.VBox([left, output])
