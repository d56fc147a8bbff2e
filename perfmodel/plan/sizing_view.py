"""How a sizing table is shown: fixed colours, the two-panel plot, a compact table, the words.

The planner (notebook 06), notebook 05 and the command line show the same
sizing table (:func:`perfmodel.size`) the same way:

* colours mean one thing in every view: :data:`SMT_COLORS` per SMT mode,
  :func:`platform_color` per platform (a fixed colour for the mission's
  platforms, a stable one derived from the id for any other);
* :func:`plot_sizing`: nodes needed (with the node-count range) and the p99
  at that size (log axis, with its band and the SLO), one row per candidate
  in a fixed order, infeasible candidates marked with their reason, the
  legend below the data;
* :func:`table_frame` / :func:`table_html`: one short row per candidate
  (``8 (4-10)`` nodes, ``0.38 (0.21-31)`` ms), every reason in full below;
* :func:`binding_text`, :func:`band_text`: why a count is the answer, in words.

Every function takes any table :func:`perfmodel.size` returns: all
candidates feasible, some, none, or saturated at every size.
"""

from __future__ import annotations

import hashlib
import html
import math
import textwrap

import numpy as np
import pandas as pd

#: one colour per SMT mode in every view (seaborn "deep" 0-3); other modes: :func:`smt_color`
SMT_COLORS = {1: "#4c72b0", 2: "#dd8452", 4: "#55a868", 8: "#c44e52"}
_SPARE = ("#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd")
#: the mission's platforms (``perfmodel.plan.sizing.DEFAULT_PLATFORMS``) keep these colours everywhere
PLATFORM_COLORS = {
    "power8-s821lc-10c": "#1f77b4",
    "power8-s822lc-16c-prod": "#17becf",
    "power8-s822lc-22c-analytics": "#9467bd",
    "x86-dl380-e5-2630v4": "#d62728",
    "kunpeng-r722": "#2ca02c",
}
_PLATFORM_SPARE = ("#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#aec7e8", "#ffbb78",
                   "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5",
                   "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3", "#8ca252",
                   "#bd9e39", "#ad494a", "#a55194", "#6b6ecf", "#b5cf6b", "#e7ba52", "#d6616b")  # fmt: skip
#: reasons longer than this are shortened in a plot (the table below it has them in full)
PLOT_REASON_CHARS = 64


def smt_color(threads_per_core: float) -> str:
    """The colour of an SMT mode (hex), the same in every plot and table."""
    t = int(threads_per_core)
    return SMT_COLORS.get(t, _SPARE[t % len(_SPARE)])


def platform_color(platform: str) -> str:
    """The colour of a platform id (hex): fixed for the mission's platforms, else derived from the id
    (a hash, so it does not change with the other platforms shown)."""
    if platform in PLATFORM_COLORS:
        return PLATFORM_COLORS[platform]
    digest = int(hashlib.sha256(platform.encode()).hexdigest(), 16)
    return _PLATFORM_SPARE[digest % len(_PLATFORM_SPARE)]


def platform_palette(platforms) -> dict[str, str]:
    """``{platform: colour}`` for seaborn's ``palette=`` (``hue="platform"``): each platform's own
    colour (:func:`platform_color`), except that two platforms of one plot never share one (up to
    33 platforms) -- a later platform (in sorted order) whose colour is taken gets the next free
    spare colour, then the colour of a mission platform the plot does not show."""
    out, used = {}, set()
    shown = set(platforms)
    # when the spares run out, the colours of mission platforms not in this plot are free too
    lent = tuple(c for q, c in PLATFORM_COLORS.items() if q not in shown)
    for p in sorted(dict.fromkeys(platforms), key=lambda p: (p not in PLATFORM_COLORS, p)):
        colour = platform_color(p)
        if colour in used and p not in PLATFORM_COLORS:
            start = _PLATFORM_SPARE.index(colour) if colour in _PLATFORM_SPARE else 0
            free = [c for c in _PLATFORM_SPARE[start:] + _PLATFORM_SPARE[:start] + lent if c not in used]
            colour = free[0] if free else colour
        out[p] = colour
        used.add(colour)
    return {p: out[p] for p in dict.fromkeys(platforms)}


def candidate_label(row) -> str:
    """``power8-s821lc-10c SMT8``: the platform id and the SMT mode of a sizing row."""
    return f"{row['platform']} SMT{int(row['threads_per_core'])}"


def ordered(table: pd.DataFrame) -> pd.DataFrame:
    """The candidates in a fixed order (platform id, then SMT mode): rows keep their place when the
    target or the SLO changes, so a planner compares by position as well as by colour."""
    return table.sort_values(["platform", "threads_per_core"], kind="stable").reset_index(drop=True)


def _p99_band(row) -> tuple[float, float, float]:
    """A row's p99 at the chosen size and its band's ends [ms] (NaN where unknown)."""
    return tuple(float(row.get(c, math.nan)) for c in ("latency_p99_ms", "latency_p99_ms_lower",
                                                         "latency_p99_ms_upper"))  # fmt: skip


def band_text(row, level: float | None = 0.9) -> str:
    """The p99 at the chosen size and its band in words: ``0.378 ms (90% band 0.21-30.9 ms)``; an
    infinite upper end is "the pessimistic end saturates"."""
    p99, lo, hi = _p99_band(row)
    if not np.isfinite(p99):
        return ""
    text = f"{p99:.3g} ms"
    if level is None or not np.isfinite(lo):
        return text
    if np.isfinite(hi):
        return text + f" ({level:.0%} band {lo:.3g}-{hi:.3g} ms)"
    return text + f" ({level:.0%} band from {lo:.3g} ms; at the band's pessimistic end a station saturates)"


def binding_text(row, *, slo_p99_ms: float | None = None, max_utilization: float | None = None) -> str:
    """Why the row's node count is the answer, in words: what goes wrong with one node fewer.

    ``set by the SLO: at 7 nodes the p99 would be 43.2 ms > 20 ms (flush bursts: a p99 step)``;
    ``set by throughput: at 11 nodes the busiest station would run at 74% > 70%``; capacity and
    replication in their own terms. Needs ``latency_p99_ms_one_fewer`` / ``max_utilization_one_fewer``
    (:func:`perfmodel.size` adds them); without them only the constraint's name.
    """
    if not bool(row.get("feasible", False)):
        return ""
    nodes = int(row["nodes"])
    binding = [b for b in str(row.get("binding", "")).split("+") if b]
    p99 = float(row.get("latency_p99_ms_one_fewer", math.nan))
    util = float(row.get("max_utilization_one_fewer", math.nan))
    if "replication" in binding:  # the fewest nodes allowed: the others hold there and are not tried below
        held = [b for b in binding if b != "replication"]
        also = f" ({', '.join('the SLO' if b == 'slo' else b for b in held)} met there too)" if held else ""
        need = _nodes(nodes)
        return f"set by replication: RF plus the failures tolerated need {need}, the fewest allowed{also}"
    parts = []
    for name in binding:
        if name == "slo":
            why = f"at {_nodes(nodes - 1)} "
            if math.isinf(p99):
                why += "a station saturates"
            elif np.isfinite(p99):
                limit = f" > {slo_p99_ms:g} ms" if slo_p99_ms is not None else ""
                why += f"the p99 would be {_ms_text(p99, slo_p99_ms)} ms{limit}"
                if row.get("tail_regime") == "step":
                    why += " (>= 1% of requests meet a flush burst there: a p99 step)"
            else:
                why = ""
            parts.append("the SLO" + (f": {why}" if why else ""))
        elif name == "throughput":
            limit = f" > {max_utilization:.0%}" if max_utilization is not None else ""
            util_text = _util_text(util, max_utilization)
            why = (f": at {_nodes(nodes - 1)} the busiest station would run at {util_text}{limit}"
                   if np.isfinite(util) else "")  # fmt: skip
            parts.append("throughput" + why)
        elif name == "capacity":
            parts.append(f"capacity: the data set x RF needs the drives of {_nodes(nodes)}")
    return "set by " + "; and by ".join(parts) if parts else ""


def _nodes(n: int) -> str:
    """``1 node``, ``7 nodes``."""
    return f"{n} node" + ("" if n == 1 else "s")


def nodes_cell(row, max_nodes: int | None = None) -> str:
    """``8 (4-10)``, ``8 (4 to >128)``, ``8`` or ``infeasible``: the node count and its range (an
    open range: the pessimistic count is beyond ``max_nodes``, the largest size tried)."""
    if not bool(row.get("feasible", False)):
        return "infeasible"
    nodes = int(row["nodes"])
    lo, hi = float(row.get("nodes_lower", math.nan)), float(row.get("nodes_upper", math.nan))
    if not np.isfinite(lo):
        return f"{nodes}"
    if np.isfinite(hi):
        return f"{nodes}" if lo == hi == nodes else f"{nodes} ({int(lo)}-{int(hi)})"
    return f"{nodes} ({int(lo)} to >{max_nodes})" if max_nodes else f"{nodes} ({int(lo)} to more)"


def p99_cell(row) -> str:
    """``0.378 (0.21-30.9)``: the p99 at the chosen size [ms] and its band (``sat.``: saturates)."""
    p99, lo, hi = _p99_band(row)
    if not np.isfinite(p99):
        return ""
    if not np.isfinite(lo):
        return f"{p99:.3g}"
    return f"{p99:.3g} ({lo:.3g}-{hi:.3g})" if np.isfinite(hi) else f"{p99:.3g} ({lo:.3g}-sat.)"


def _busiest(row) -> str:
    """``cpu 37%`` (``cpu <1%`` below half a percent): the bottleneck and its utilisation."""
    util = float(row.get("max_utilization", math.nan))
    if not np.isfinite(util):
        return str(row.get("bottleneck", ""))
    return f"{row['bottleneck']} " + ("<1%" if util < 0.005 else f"{util:.0%}")


def deploy_cell(row) -> str:
    """How the servers are deployed: ``8 instances each`` (an ``instances`` topology), ``primary +
    2 replicas`` (``primary_replicas``), or empty (a sharded cluster, an embedded engine)."""
    topology = str(row.get("topology", ""))
    if not bool(row.get("feasible", False)):
        return ""
    if topology == "instances":
        k = int(row.get("instances_per_server", 1))
        return f"{k} instance{'' if k == 1 else 's'} each"
    if topology == "primary_replicas":
        r = int(row["nodes"]) - 1
        return f"primary + {r} replica{'' if r == 1 else 's'}"
    return ""


def table_frame(table: pd.DataFrame, *, slo_p99_ms: float | None = None) -> pd.DataFrame:
    """One short row of strings per candidate (fixed order): candidate, nodes (servers, with range),
    how they are deployed, their network, p99 [ms] (band), busiest station, and a note -- why that
    count, or why infeasible."""
    rows = []
    max_util = table.attrs.get("max_utilization")
    for _, r in ordered(table).iterrows():
        feasible = bool(r["feasible"])
        rows.append(
            {
                "candidate": candidate_label(r),
                "nodes": nodes_cell(r, table.attrs.get("max_nodes")),
                "deploy": deploy_cell(r),
                "network": str(r.get("network", "")),
                "p99 [ms]": p99_cell(r),
                "busiest": _busiest(r) if feasible else "",
                "note": binding_text(r, slo_p99_ms=slo_p99_ms, max_utilization=max_util)
                if feasible else str(r.get("reason", "")),
            }
        )  # fmt: skip
    columns = ["candidate", "nodes", "deploy", "network", "p99 [ms]", "busiest", "note"]
    return pd.DataFrame(rows, columns=columns)


def table_text(table: pd.DataFrame, *, slo_p99_ms: float | None = None) -> str:
    """:func:`table_frame` for a terminal: the short columns left-aligned, each row's note (why that
    count, or why infeasible) numbered below the table in full."""
    frame = table_frame(table, slo_p99_ms=slo_p99_ms)
    if frame.empty:
        return "no candidates"
    frame.insert(0, "#", range(1, len(frame) + 1))
    cols = ["#", "candidate", "nodes", "deploy", "network", "p99 [ms]", "busiest"]
    cols = [c for c in cols if c not in ("deploy",) or frame[c].astype(bool).any()]
    widths = {c: max(len(c), *(len(str(v)) for v in frame[c])) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols).rstrip()]
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in cols).rstrip() for r in frame.to_dict("records")]
    lines += [f"{r['#']}. {r['candidate']}: {r['note']}" for r in frame.to_dict("records") if r["note"]]
    return "\n".join(lines)


#: alignment of the HTML table's columns: swatch, candidate, nodes, p99, busiest, note mark
_ALIGN = ("left", "left", "right", "left", "left", "right", "left", "left")


def cost_text(table: pd.DataFrame) -> str:
    """The monthly cost of each feasible plan and the cheapest, from ``size(prices=...)``'s columns."""
    if "cost_usd_per_month" not in table.columns:
        return ""
    lines = [f"Cost: {table.attrs.get('price_note', '')}"]
    priced = table[table.cost_usd_per_month.notna()].sort_values("cost_usd_per_month", kind="stable")
    for _, row in priced.iterrows():
        mark = "  <- cheapest" if row.cheapest else ""
        lines.append(f"  {candidate_label(row)}: {int(row.nodes)} x {row.price_usd_per_month:,.2f} = "
                     f"{row.cost_usd_per_month:,.2f} USD/month{mark}")  # fmt: skip
    if priced.empty:
        lines.append("  no feasible plan has a price")
    return "\n".join(lines)


def table_html(table: pd.DataFrame, *, slo_p99_ms: float | None = None) -> str:
    """:func:`table_frame` as a narrow HTML table: a colour swatch per SMT mode (``data-smt`` and the
    colour on each swatch), the notes numbered below it in full, and as hover text on each row."""
    frame = table_frame(table, slo_p99_ms=slo_p99_ms)
    cand = ordered(table)
    level = table.attrs.get("interval")
    head = ["", "candidate", "nodes" + (f" ({level:.0%} range)" if level else ""), "deploy", "network",
            "p99 [ms]" + (f" ({level:.0%} band)" if level else ""), "busiest", ""]  # fmt: skip
    # the deployment column only where a row has one (instances per server, primary + replicas)
    keep = [i for i, h in enumerate(head) if h != "deploy" or frame["deploy"].astype(bool).any()]
    cells = "".join(f"<th style='text-align:{_ALIGN[i]};padding:2px 8px'>{html.escape(head[i])}</th>"
                    for i in keep)  # fmt: skip
    body, notes = [], []
    for k, (row, r) in enumerate(zip(frame.to_dict("records"), cand.itertuples(index=False), strict=True)):
        color = smt_color(r.threads_per_core)
        swatch = (f"<span class='pm-swatch' data-smt='{int(r.threads_per_core)}' data-color='{color}' "
                  f"style='display:inline-block;width:12px;height:12px;background:{color}'>"
                  "</span>")  # fmt: skip
        note = row["note"]
        mark = ""
        if note:
            notes.append(f"<li value='{k + 1}'>{html.escape(row['candidate'])}: {html.escape(note)}</li>")
            mark = f"<sup>{k + 1}</sup>"
        style = "" if r.feasible else " style='color:#777'"
        vals = (
            [swatch]
            + [html.escape(row[c]) for c in ("candidate", "nodes", "deploy", "network", "p99 [ms]")]
            + [html.escape(row["busiest"])]
            + [mark]
        )
        tds = "".join(f"<td style='padding:2px 8px;text-align:{_ALIGN[i]}'>{vals[i]}</td>" for i in keep)
        body.append(f"<tr class='pm-row' title='{html.escape(note, quote=True)}'{style}>{tds}</tr>")
    return (
        "<table class='pm-sizing' style='border-collapse:collapse;font-size:12px'>"
        f"<thead><tr>{cells}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        + (
            f"<ol class='pm-notes' style='font-size:12px;margin-top:4px'>{''.join(notes)}</ol>"
            if notes
            else ""
        )
    )


def _short(text: str, width: int = PLOT_REASON_CHARS) -> str:
    return textwrap.shorten(str(text), width=max(width, 12), placeholder="...")


def _chars(ax) -> int:
    """About how many 8-point characters fit across an axes."""
    return int(ax.get_position().width * ax.figure.get_figwidth() * 72 / 4.8)


def _ms_text(value: float, limit: float | None) -> str:
    """``43.2``; more digits where three would read equal to the limit (``0.1004`` against 0.1)."""
    for digits in range(3, 10):
        text = f"{value:.{digits}g}"
        if limit is None or float(text) != float(f"{limit:.{digits}g}") or value == limit:
            return text
    return repr(value)


def _util_text(u: float, limit: float | None) -> str:
    """``74%``; more decimals where whole percents would read equal to the limit (``70.04% > 70%``)."""
    for digits in range(4):
        text = f"{u:.{digits}%}"
        if limit is None or float(text.rstrip("%")) != round(limit * 100, digits):
            return text
    return text


def plot_sizing(
    table: pd.DataFrame,
    *,
    slo_p99_ms: float | None = None,
    axes=None,
    width_in: float = 11.0,
    standalone: bool = False,
):
    """Nodes needed and the p99 at that size, one row per candidate (platform x SMT mode).

    Left: a bar per feasible candidate, coloured by SMT mode (:data:`SMT_COLORS`), with its node
    count and range printed and drawn across it. Right: the p99 at that size on a log axis [ms],
    the band drawn as a line (an arrow where its pessimistic end saturates) and the SLO as a dashed
    line. An infeasible candidate is a row of text, ``infeasible: reason``, in both panels (and,
    where some size keeps every utilisation in bounds, a hollow marker at its best p99). The
    legend sits below the panels. Returns the two axes. ``standalone``: draw on a figure pyplot does
    not know (``matplotlib.figure.Figure``), which no backend hook can show, clear or close -- for
    figures made in a widget callback, outside any cell (the planner).
    """
    axes = _sizing_axes(len(table), width_in, standalone, axes)
    data = ordered(table)
    left, right = axes
    fig = left.figure
    y = np.arange(len(data))[::-1]
    feasible = data["feasible"].astype(bool).to_numpy()
    colors = [smt_color(t) for t in data["threads_per_core"]]
    lo = _draw_nodes(left, data, table, y, feasible, colors)
    slo_missed = _draw_p99(right, data, y, feasible, colors, slo_p99_ms)
    _sizing_legend(fig, data, table, lo, feasible, slo_missed, slo_p99_ms)
    for ax in axes:
        ax.set_ylim(-0.7, len(data) - 0.3)
        ax.grid(axis="y", visible=False)
    return axes


def _column(data: pd.DataFrame, name: str) -> np.ndarray:
    return data[name].to_numpy(dtype=float) if name in data else np.full(len(data), np.nan)


def _sizing_axes(rows: int, width_in: float, standalone: bool, axes):
    """The two panels, sized for ``rows`` candidates (``axes`` given: those)."""
    import matplotlib.pyplot as plt

    if axes is not None:
        return axes
    n = max(rows, 1)
    size = dict(figsize=(width_in, 1.3 + 0.3 * n), layout="constrained")
    grid = dict(sharey=True, gridspec_kw={"width_ratios": [1.15, 1]})
    if standalone:
        from matplotlib.figure import Figure

        return Figure(**size).subplots(1, 2, **grid)
    return plt.subplots(1, 2, **size, **grid)[1]


def _draw_nodes(left, data: pd.DataFrame, table: pd.DataFrame, y, feasible, colors) -> np.ndarray:
    """The left panel: a bar and range per feasible candidate, the reason for the others. Returns the
    ranges' lower ends (NaN: no range)."""

    def column(name):
        return _column(data, name)

    nodes, lo, hi = column("nodes"), column("nodes_lower"), column("nodes_upper")
    ends = np.where(feasible, np.fmax(nodes, np.where(np.isfinite(hi), hi, 0.0)), 0.0)
    xmax_nodes = max(float(ends.max(initial=0.0)), 8.0) * 1.3 + 1
    left.set_xlim(0, xmax_nodes)
    left_chars = _chars(left)
    for k in range(len(data)):
        if feasible[k]:
            left.barh(y[k], nodes[k], color=colors[k], height=0.7)
            text_x = nodes[k]
            if np.isfinite(lo[k]):
                end = hi[k] if np.isfinite(hi[k]) else xmax_nodes
                left.plot([lo[k], end], [y[k], y[k]], color="0.1", lw=1.3)
                left.plot([lo[k]], [y[k]], marker="|", color="0.1", ms=8)
                left.plot([end], [y[k]], marker="|" if np.isfinite(hi[k]) else ">", color="0.1", ms=8,
                          clip_on=False)  # fmt: skip
                text_x = max(nodes[k], hi[k]) if np.isfinite(hi[k]) else nodes[k]
            lift = 0.0 if np.isfinite(hi[k]) or not np.isfinite(lo[k]) else 0.3  # above an open range
            left.text(
                text_x + 0.01 * xmax_nodes,
                y[k] + lift,
                nodes_cell(data.iloc[k], table.attrs.get("max_nodes")),
                va="center",
                fontsize=8,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 0.3},
            )
        else:
            what = "infeasible: " + _short(data.iloc[k]["reason"], left_chars - 12)
            left.text(0.01 * xmax_nodes, y[k], what, va="center", fontsize=8, color="0.3", style="italic",
                      clip_on=True)  # fmt: skip
    left.set_yticks(y, [candidate_label(r) for _, r in data.iterrows()])
    left.set(xlabel="nodes (N + failures tolerated)", title="nodes needed")

    return lo


def _draw_p99(right, data: pd.DataFrame, y, feasible, colors, slo_p99_ms) -> np.ndarray:
    """The right panel: the p99 and its band per feasible candidate, an infeasible one's best p99
    where only the SLO is missed, the SLO. Returns where that best p99 is drawn."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    fig = right.figure

    def column(name):
        return _column(data, name)

    p99, plo, phi = column("latency_p99_ms"), column("latency_p99_ms_lower"), column("latency_p99_ms_upper")
    best = column("latency_p99_ms_best")
    # an infeasible row's best p99 is drawn where the SLO is what it misses
    # an infeasible row's best p99 is drawn where the SLO is the only constraint it misses
    only_slo = column("nodes_for_capacity") < np.inf
    only_slo &= column("nodes_for_throughput") < np.inf
    slo_missed = ~feasible & np.isfinite(best) & (slo_p99_ms is not None) & (best > (slo_p99_ms or np.inf))
    slo_missed &= only_slo
    shown = np.concatenate([p99[feasible], plo[feasible], phi[feasible], best[slo_missed]])
    shown = shown[np.isfinite(shown) & (shown > 0)]
    if slo_p99_ms is not None:
        shown = np.append(shown, slo_p99_ms)
    xlo = shown.min() / 2.5 if len(shown) else 0.1
    xhi = shown.max() * 2.5 if len(shown) else 100.0
    right.set(xlabel="p99 at that size [ms]", title="p99 latency (log scale)")
    fig.draw_without_rendering()  # the layout, so the panel's width below is the drawn one
    right_chars = int(_chars(right) * 8 / 7)  # the words here are 7 point
    words = {}
    for k in np.flatnonzero(~feasible):
        if slo_missed[k]:
            words[k] = f"infeasible: best {best[k]:.3g} ms"
            # room for the words right of the marker: widen the axis to the right where needed (in a
            # narrow panel the words shorten to the best p99; the legend says what a hollow marker is)
            width = (len(words[k]) + 1) / max(0.95 * right_chars, 1)
            if width >= 0.6:
                words[k] = f"best {best[k]:.3g} ms"
                width = (len(words[k]) + 1) / max(0.95 * right_chars, 1)
            wider = float(xlo * (best[k] / xlo) ** (1 / (0.94 - width))) if width < 0.6 else np.inf
            if wider > 20 * shown.max():  # no more than 20x the largest value shown: shorter words instead
                words[k] = f"best {best[k]:.3g} ms"
                width = (len(words[k]) + 1) / max(0.95 * right_chars, 1)
                wider = float(xlo * (best[k] / xlo) ** (1 / (0.94 - width))) if width < 0.6 else np.inf
            if wider <= 20 * shown.max():
                xhi = max(xhi, wider)
        else:
            words[k] = "infeasible: " + _short(str(data.iloc[k]["reason"]), right_chars - 14)
    right.set_xscale("log")
    right.set_xlim(xlo, xhi)
    right.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if xhi / xlo < 300 else (1.0,)))
    right.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    right.xaxis.set_minor_formatter(NullFormatter())
    span = np.log(xhi / xlo)
    for k in range(len(data)):
        if feasible[k] and np.isfinite(p99[k]):
            if np.isfinite(plo[k]):
                end = phi[k] if np.isfinite(phi[k]) else xhi
                right.plot([plo[k], end], [y[k], y[k]], color=colors[k], lw=2.2, alpha=0.55)
                if not np.isfinite(phi[k]):
                    right.plot([end], [y[k]], marker=">", color=colors[k], ms=7, clip_on=False)
            right.plot([p99[k]], [y[k]], marker="o", color=colors[k], ms=7, mec="0.1", mew=0.6)
        elif not feasible[k]:
            if slo_missed[k]:
                right.plot([best[k]], [y[k]], marker="o", mfc="none", mec=colors[k], mew=1.4, ms=7)
                x = best[k] * np.exp(0.04 * span)  # the words right of the marker
            else:
                x = xlo * np.exp(0.01 * span)
            what, ha = words[k], "left"
            box = {"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 0.5}
            right.text(x, y[k], what, ha=ha, va="center", fontsize=7, color="0.3", style="italic", bbox=box,
                       clip_on=True)  # fmt: skip
    if slo_p99_ms is not None:
        right.axvline(slo_p99_ms, color="#b2182b", ls="--", lw=1.2)
    right.set(xlabel="p99 at that size [ms]", title="p99 latency (log scale)")
    right.tick_params(axis="y", length=0)
    return slo_missed


def _sizing_legend(fig, data: pd.DataFrame, table: pd.DataFrame, lo, feasible, slo_missed, slo_p99_ms):
    """The legend below the panels: SMT modes, the range, the hollow marker, the SLO."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    modes = sorted({int(t) for t in data["threads_per_core"]})
    handles = [Patch(color=smt_color(t), label=f"SMT{t}") for t in modes]
    level = table.attrs.get("interval")
    if level and np.isfinite(lo[feasible]).any():
        handles.append(Line2D([], [], color="0.1", lw=1.3, label=f"{level:.0%} range / band"))
    if slo_missed.any():
        handles.append(Line2D([], [], marker="o", mfc="none", mec="0.3", ls="", label="infeasible: best p99"))
    if slo_p99_ms is not None:
        handles.append(Line2D([], [], color="#b2182b", ls="--", lw=1.2, label=f"SLO {slo_p99_ms:g} ms"))
    constrained = type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    fig.legend(handles=handles, loc="outside lower center" if constrained else "lower center",
               ncol=min(len(handles), 4), frameon=False, fontsize=8)  # fmt: skip
