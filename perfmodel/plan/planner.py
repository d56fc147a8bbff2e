"""The interactive capacity planner of notebook 06: ipywidgets over
:func:`perfmodel.plan.studies.size_workload`.

:func:`run_plan` is the computation (a sizing table and its conclusion) and
runs anywhere; :func:`planner` builds the controls (sliders and drop-downs, one
per argument of ``run_plan``) in a column beside an output area that re-plans
whenever a control changes: the conclusion, a compact table (colour swatch per
SMT mode, every reason in full below it) and the two-panel plot
(:mod:`perfmodel.plan.sizing_view`). Every answer ``size`` can give -- all feasible,
some, none -- is words and a plot, never a traceback. Controls that do not
apply are disabled (the Zipf exponent under uniform keys, the consistency level
with one replica). Constructing the widgets needs no browser, so the notebook
also executes headless under papermill; the planner then also carries a static
HTML copy of its last plan, which an HTML export shows where no widget script
runs (:func:`perfmodel.run.batch.export_html`).

The output area is filled by setting its state (``Output.outputs``), never by
capturing with ``with output:``. A capture is routed by the client: under
papermill, nbclient mirrors the Output widget and sends each captured output
back to the kernel as a ``comm_msg`` on the shell channel while the cell still
runs; with ipykernel 7 that cell's ``execute_reply`` was then sometimes lost
(the kernel idle, every cell executed, the client waiting for the reply), so a
batch run hung after the notebook had written its results.
"""

from __future__ import annotations

import pandas as pd

from perfmodel.inputs.catalog import list_platforms
from perfmodel.inputs.consistency import COMMON_LEVELS
from perfmodel.inputs.keys import KEY_DISTRIBUTIONS
from perfmodel.inputs.systems import TOPOLOGIES, list_systems, load_system
from perfmodel.plan import sizing_view, studies, uncertain
from perfmodel.plan.sizing import DEFAULT_PLATFORMS, TABLE_COLUMNS

#: sizing-table columns the planner shows
PLAN_COLUMNS = TABLE_COLUMNS
#: rows of the platform list (the selected platforms come first, so they are visible)
PLATFORM_ROWS = 10
#: width of the plot beside the controls [in]: the output column of a laptop-sized JupyterLab
PLOT_WIDTH_IN = 7.6
#: the confidence control's choices: the point answer, or the count that meets the targets with that
#: probability over the target's spread and the model's own error (perfmodel.plan.uncertain)
CONFIDENCES = (("point answer", 0.0), ("80%", 0.8), ("90%", 0.9), ("95%", 0.95))
#: Latin-hypercube samples of a plan under uncertainty in the planner (a few seconds per plan)
PLAN_SAMPLES = 24


def platform_options(platforms, selected) -> list[str]:
    """The platform list's order: the selected platforms first (in their order), then the mission's
    platforms, then the rest of the catalog alphabetically -- so a selection is visible without
    scrolling."""

    known = list(platforms)
    first = [p for p in selected if p in known] + [p for p in DEFAULT_PLATFORMS if p in known]
    return list(dict.fromkeys(first + sorted(known)))


def applicable(values: dict) -> dict[str, bool]:
    """Which controls apply to the current values: ``zipf_s`` only with Zipf (or latest) keys, ``consistency``
    only with more than one replica, ``instances_per_server`` only for a system deployed as instances
    (Redis, memcached). ``{control: enabled}`` for the controls that can be disabled."""
    out = {
        "zipf_s": values.get("key_distribution") in ("zipf", "scrambled_zipf", "latest"),
        "consistency": int(values.get("replication_factor", 3)) > 1,
    }
    if "confidence" in values:
        out["target_spread"] = float(values["confidence"]) > 0
    if "system" in values:
        out["instances_per_server"] = topology_of(values["system"]) == "instances"
        out["sync_replicas"] = topology_of(values["system"]) == "primary_replicas"
    return out


def topology_of(system: str) -> str:
    """A system's deployment topology (its spec's ``topology``)."""

    return load_system(system).topology


def topology_text(system: str) -> str:
    """The planner's line on how the chosen system is deployed."""

    topo = topology_of(system)
    return f"<small>deployed as <b>{topo}</b>: {TOPOLOGIES[topo]}</small>"


def plan_html(table: pd.DataFrame, text: str, *, slo_p99_ms: float, figure=None) -> str:
    """The plan as one HTML block, what the planner shows and what an export keeps of it: the answer
    in a line (the request and the fewest nodes, or that none is feasible), the plot as an embedded
    PNG (``figure``, a matplotlib figure, when given), the compact table with every reason below
    it, and the whole conclusion in words (folded)."""
    import base64
    import html
    import io

    lines = text.splitlines()
    request = lines[0].split(" (", 1)[0] if lines else ""
    answer = lines[-1] if len(lines) > 1 else ""
    terms = table.attrs.get("terms", "")
    answer_style, terms_style = (
        "font-size:13px;margin:2px 0 0 0",
        "font-size:11px;color:#555;margin:0 0 6px 0",
    )
    request, answer, terms = html.escape(request), html.escape(answer), html.escape(terms)
    caveat = html.escape(table.attrs.get("caveat", ""))
    range_note = html.escape(table.attrs.get("range_note", ""))
    parts = [f"<p class='pm-answer' style='{answer_style}'><b>{request}</b> {answer}</p>"
             f"<p class='pm-terms' style='{terms_style}'>{terms}</p>"
             + (f"<p class='pm-caveat' style='{terms_style};color:#8a4b00'>Caveat: {caveat}</p>"
                if caveat else "")
             + (f"<p class='pm-range' style='{terms_style};color:#8a4b00'>Range: {range_note}</p>"
                if range_note else "")]  # fmt: skip
    if figure is not None:
        buf = io.BytesIO()
        figure.savefig(buf, format="png", dpi=100)
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        parts.append(f"<img class='pm-plot' alt='nodes needed and p99 per candidate' style='max-width:100%' "
                     f"src='data:image/png;base64,{data}'>")  # fmt: skip
    parts.append(sizing_view.table_html(table, slo_p99_ms=slo_p99_ms))
    for name in ("cost_text", "uncertain_text"):  # the costs and the plan under uncertainty, when asked
        if table.attrs.get(name):
            css = "pm-cost" if name == "cost_text" else "pm-uncertain"
            parts.append(f"<pre class='{css}' style='white-space:pre-wrap;font-size:12px'>"
                         f"{html.escape(table.attrs[name])}</pre>")  # fmt: skip
    words = f"<pre style='white-space:pre-wrap;font-size:12px'>{html.escape(text)}</pre>"
    summary = "<summary style='font-size:12px'>the plan in words</summary>"
    parts.append(f"<details class='pm-words'>{summary}{words}</details>")
    return "<div class='pm-plan'>" + "".join(parts) + "</div>"


def run_plan(**values) -> tuple[pd.DataFrame, str]:
    """The sizing table and its conclusion text: :func:`perfmodel.plan.studies.size_workload` on the
    controls' ``values`` (its arguments and units: ``target_ops_s`` [1/s], ``slo_p99_ms`` [ms],
    ``object_bytes`` [B], ``dataset_gib`` [GiB], ...), which builds the workload and calls
    :func:`perfmodel.size`."""
    values = {k: list(v) if k == "platforms" else v for k, v in values.items()}
    # 0: the sizing chooses; a system not deployed as instances takes none
    topo = topology_of(values.get("system", "scylla"))
    if not values.get("instances_per_server") or topo != "instances":
        values.pop("instances_per_server", None)
    if not values.get("sync_replicas") or topo != "primary_replicas":  # 0: asynchronous replicas
        values.pop("sync_replicas", None)
    costs, confidence = bool(values.pop("prices", False)), float(values.pop("confidence", 0.0))
    spread = float(values.pop("target_spread", 1.0))
    table = studies.size_workload(**values, **({"prices": "shipped"} if costs else {}))
    text = studies.sizing_conclusion(
        table, target_ops_s=float(values["target_ops_s"]), slo_p99_ms=float(values["slo_p99_ms"])
    )
    if costs:
        table.attrs["cost_text"] = sizing_view.cost_text(table)
        text += "\n\n" + table.attrs["cost_text"]
    if confidence > 0:
        table.attrs["uncertain_text"] = uncertain.table_text(
            _uncertain_plan(values, confidence, spread, costs)
        )
        text += "\n\n" + table.attrs["uncertain_text"]
    return table, text


def _uncertain_plan(values: dict, confidence: float, spread: float, costs: bool) -> pd.DataFrame:
    """The plan at ``confidence`` (:func:`perfmodel.plan.uncertain.size_uncertain`, :data:`PLAN_SAMPLES`
    samples, the model's new-lab error): the target a lognormal of median ``target_ops_s`` and 95th
    percentile ``spread`` times it (a point at ``spread`` 1)."""
    v = dict(values)
    workload = studies.workload_for(
        **{
            k: v.pop(k)
            for k in ("read_fraction", "object_bytes", "dataset_gib", "replication_factor", "consistency")
            if k in v
        },  # fmt: skip
        **{k: v.pop(k) for k in ("key_distribution", "zipf_s") if k in v},
    )
    target = float(v.pop("target_ops_s"))
    return uncertain.size_uncertain(
        workload, system=v.pop("system", "scylla"), slo_p99_ms=float(v.pop("slo_p99_ms")),
        target_ops_s={"p50": target, "p95": target * spread} if spread > 1 else target,
        confidence=confidence, samples=PLAN_SAMPLES, **({"prices": "shipped"} if costs else {}), **v,
    )  # fmt: skip


def controls(**defaults) -> dict:
    """One widget per argument of :func:`run_plan`, set to ``defaults`` (in the planner's order)."""
    import ipywidgets as w

    style = {"description_width": "130px"}
    layout = w.Layout(width="350px")
    common = {"style": style, "layout": layout, "continuous_update": False}
    parts = (_system_widgets, _load_widgets, _data_widgets, _objective_widgets, _plan_widgets)
    return {k: v for part in parts for k, v in part(w, defaults, style, layout, common).items()}


def _system_widgets(w, defaults: dict, style: dict, layout, common: dict) -> dict:
    """The candidate platforms and the system."""
    return {
        "platforms": w.SelectMultiple(
            options=platform_options(list_platforms(), defaults.get("platforms", ())),
            value=tuple(defaults.get("platforms", ())),
            rows=PLATFORM_ROWS,
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
    }


def _load_widgets(w, defaults: dict, style: dict, layout, common: dict) -> dict:
    """The target and the operation mix: read share, object size, key popularity."""
    return {
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
            options=KEY_DISTRIBUTIONS,
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
    }


def _data_widgets(w, defaults: dict, style: dict, layout, common: dict) -> dict:
    """The data set, its replication and the consistency level."""
    return {
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
            options=COMMON_LEVELS,
            value=defaults.get("consistency", "QUORUM"),
            description="consistency",
            style=style,
            layout=layout,
        ),
    }


def _objective_widgets(w, defaults: dict, style: dict, layout, common: dict) -> dict:
    """The SLO, failures tolerated, the utilisation cap and the deployment's counts."""
    return {
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
        # the deployment's counts: 0 lets the sizing choose / means asynchronous replicas
        **{
            name: w.BoundedIntText(
                value=defaults.get(name) or 0, min=0, max=most, description=label, tooltip=tip, **common
            )
            for name, most, label, tip in (
                (
                    "instances_per_server",
                    512,
                    "instances / server",
                    "0: the count that needs the fewest servers (systems deployed as instances only)",
                ),
                (
                    "sync_replicas",
                    3,
                    "sync replicas",
                    "replicas a commit waits for (a primary with replicas only; 0: asynchronous)",
                ),
            )
        },  # fmt: skip
    }


def _plan_widgets(w, defaults: dict, style: dict, layout, common: dict) -> dict:
    """Costs from the shipped price tables, and the confidence the plan must hold with."""
    return {
        "prices": w.Checkbox(
            value=bool(defaults.get("prices", False)),
            description="costs (shipped prices)",
            indent=False,
            layout=layout,
        ),  # fmt: skip
        "confidence": w.Dropdown(
            options=list(CONFIDENCES),
            value=float(defaults.get("confidence", 0.0)),
            description="confidence",
            style=style,
            layout=layout,
        ),  # fmt: skip
        "target_spread": w.FloatSlider(
            value=defaults.get("target_spread", 1.0),
            min=1.0,
            max=4.0,
            step=0.1,
            description="target p95 / p50",
            readout_format=".1f",
            **common,
        ),  # fmt: skip
    }


def planner(**defaults):
    """The planner: the controls in a column beside an output area with the plan for the current values.

    Returns an ``ipywidgets.HBox`` (:class:`Planner`); the output is filled once at construction
    (with ``defaults``) and again whenever a control changes. ``Planner.last_html`` holds the last
    plan as static HTML (also in the planner's display data, for exports).
    """
    import html

    import ipywidgets as w

    widgets = controls(**defaults)
    selected = w.HTML(layout=w.Layout(width="350px"))
    deployed = w.HTML(layout=w.Layout(width="350px"))
    busy = w.HTML(layout=w.Layout(width="350px"))
    output = w.Output(layout=w.Layout(flex="1 1 auto", min_width="0", overflow="auto"))

    class Planner(w.HBox):
        """The planner's box; its display data carry a static copy of the last plan as text/html."""

        last_html = ""

        def _repr_mimebundle_(self, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs)
            if self.last_html:
                bundle["text/html"] = self.last_html
            return bundle

    def show(**values) -> tuple[str, str]:
        """The plan for ``values`` as (HTML, plain text)."""
        if not values["platforms"]:
            message = "Choose at least one platform (click one; Ctrl/Cmd+click adds more)."
            return f"<p class='pm-message'>{html.escape(message)}</p>", message
        try:
            table, text = run_plan(**values)
        except Exception as exc:  # a request the model cannot answer: words, never a traceback
            message = f"cannot plan: {exc}" if isinstance(exc, ValueError) else f"cannot plan: {exc!r}"
            return f"<p class='pm-message'>{html.escape(message)}</p>", message
        slo = float(values["slo_p99_ms"])
        # a figure pyplot never sees: the inline backend's hooks cannot show, clear or close it while
        # it is drawn in this callback (the browser test caught a blank PNG under pyplot)
        left, _ = sizing_view.plot_sizing(table, slo_p99_ms=slo, width_in=PLOT_WIDTH_IN, standalone=True)
        figure = left.figure
        return plan_html(table, text, slo_p99_ms=slo, figure=figure), text

    def refresh(_change=None):
        values = {name: widget.value for name, widget in widgets.items()}
        for name, enabled in applicable(values).items():
            widgets[name].disabled = not enabled
        chosen = list(values["platforms"])
        selected.value = (f"<small>{len(chosen)} selected: {', '.join(chosen)}</small>" if chosen
                          else "<small>none selected</small>")  # fmt: skip
        deployed.value = topology_text(values["system"])
        busy.value = "<span class='pm-busy' style='color:#b45f06'>&#8987; computing the plan...</span>"
        try:
            page, text = show(**values)
        finally:
            busy.value = ""
        box.last_html = page  # what the output shows now, for an export
        # set as the output area's state in one step, never captured with ``with output:`` (see
        # the module docstring: under papermill a capture makes the client write to the kernel
        # mid-cell, and the cell's reply can then be lost)
        output.outputs = (
            {"output_type": "display_data", "data": {"text/html": page, "text/plain": text}, "metadata": {}},
        )

    controls_box = w.VBox(
        [widgets["platforms"], selected, busy, widgets["system"], deployed]
        + [v for k, v in widgets.items() if k not in ("platforms", "system")],
        layout=w.Layout(width="370px", flex="0 0 370px"),
    )
    box = Planner([controls_box, output], layout=w.Layout(width="100%", align_items="flex-start"))
    for widget in widgets.values():
        widget.observe(refresh, names="value")
    refresh()
    return box
