"""Sizing: how many nodes of which platform meet a throughput target at a p99 SLO.

``size(workload, target_ops_s=..., slo_p99_ms=...)`` evaluates every candidate
platform configuration (catalog platforms x their SMT modes) at every node
count up to ``max_nodes`` in one vectorised :func:`perfmodel.predict` call,
with open Poisson arrivals at the target rate, and keeps for each candidate
the smallest node count for which, **with ``failure_tolerance`` nodes down**
(N + k):

* replication: surviving nodes >= RF (and >= the availability zones, knob ``zones``);
* capacity: dataset x RF / ``fill_limit`` fits on the surviving nodes' drives;
* throughput: no station saturated and every utilisation <= ``max_utilization``;
* SLO: the predicted p99 latency <= ``slo_p99_ms``.

Every row says what each constraint alone would need (``nodes_for_*``) and
which of them set the count (``binding``, all of them on a tie). With
``interval`` the node count has a range: ``nodes_lower`` / ``nodes_upper``
are the counts under the optimistic and pessimistic ends of the calibrated
bands (parameters plus model discrepancy, :mod:`perfmodel.discrepancy`) of the
p99 and of every utilisation. ``size`` always answers: a candidate that meets
the constraints at no size up to ``max_nodes`` is a row with ``feasible``
False and the ``reason`` in words; a malformed request is a ``ValueError``
naming the argument.

Candidates are compared on equal terms: unless the caller pins them
(``network=``, ``device=``), every platform gets the same network -- the
fastest among the candidates' own -- and NVMe data drives (the
``EQUAL_NVME`` device where a platform's own are another class, with its own
count); :func:`equal_terms` says which, and the table's ``network`` /
``device`` columns show it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from perfmodel import settings
from perfmodel.catalog import Platform, load_platform
from perfmodel.node import predict
from perfmodel.params import ParameterSet
from perfmodel.workload import MAX_NODES, Workload

#: the candidates of the mission: POWER8 S821LC / S822LC configurations, the x86 DL380, the Kunpeng R722
DEFAULT_PLATFORMS = (
    "power8-s821lc-10c",
    "power8-s822lc-16c-prod",
    "power8-s822lc-22c-analytics",
    "x86-dl380-e5-2630v4",
    "kunpeng-r722",
)
CONSTRAINTS = ("replication", "capacity", "throughput", "slo")
#: the columns a sizing table shows (the CLI, the report, the planner)
TABLE_COLUMNS = [
    "platform",
    "threads_per_core",
    "nodes",
    "nodes_lower",
    "nodes_upper",
    "feasible",
    "binding",
    "latency_p99_ms",
    "latency_p99_ms_lower",
    "latency_p99_ms_upper",
    "max_utilization",
    "bottleneck",
    "tail_regime",
    "reason",
]


def node_capacity_bytes(platform: Platform) -> float:
    """Raw capacity of a platform's data drives [B]."""
    return float(sum(platform.device_spec(s.device).capacity_bytes * s.count for s in platform.storage))


def _first_true(mask: np.ndarray) -> np.ndarray:
    """Index of the first True along axis 1, or -1."""
    first = np.argmax(mask, axis=1)
    return np.where(mask.any(axis=1), first, -1)


#: the NVMe drive a platform whose own data drives are another class gets in an equal comparison
EQUAL_NVME = "nvme-1p6tb-generic"


def equal_terms(platforms: Sequence[Platform], network: str | None = None, device: str | None = None) -> dict:
    """Network and data device per platform for a comparison on equal terms.

    ``network``: the given id, else the fastest of the candidates' own.
    ``device``: the given id for every platform, else each platform's own
    NVMe drives, or :data:`EQUAL_NVME` (with the platform's drive count)
    where its own are SATA. Returns ``{"network": id, "devices": {platform
    id: device id}, "note": words}``.
    """
    if network is None:
        network = max((p.network_spec() for p in platforms), key=lambda n: n.bandwidth_bytes_s).id
    devices = {}
    for p in platforms:
        own = max(p.storage, key=lambda s: s.count * p.device_spec(s.device).capacity_bytes).device
        devices[p.id] = device or (own if p.device_spec(own).interface == "nvme" else EQUAL_NVME)
    swapped = sorted(pid for pid, d in devices.items() if d != _own_device(platforms, pid))
    note = f"every platform on {network}" + (
        f" and {device} drives" if device else " with NVMe data drives" + (
            f" ({', '.join(swapped)}: {EQUAL_NVME} in place of their own)" if swapped else ""
        )
    )  # fmt: skip
    return {"network": network, "devices": devices, "note": note}


def _own_device(platforms, pid):
    p = next(p for p in platforms if p.id == pid)
    return max(p.storage, key=lambda s: s.count * p.device_spec(s.device).capacity_bytes).device


def _check_request(target_ops_s, slo_p99_ms, max_utilization, fill_limit, failure_tolerance, max_nodes,
                   dataset_gib, replication_factor, interval) -> None:  # fmt: skip
    """A ValueError naming the argument for a malformed request."""

    def number(name, value, low, high=math.inf, *, whole=False, open_low=True):
        ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
        ok = ok and math.isfinite(value) and (value > low if open_low else value >= low) and value <= high
        if ok and whole:
            ok = float(value) == int(value)
        if not ok:
            kind = "a whole number" if whole else "a number"
            bound = f"> {low:g}" if open_low else f">= {low:g}"
            upper = f" and <= {high:g}" if high < math.inf else ""
            raise ValueError(f"{name}: must be {kind} {bound}{upper}, got {value!r}")

    number("target_ops_s", target_ops_s, 0, 1e12)
    number("slo_p99_ms", slo_p99_ms, 0)
    number("max_utilization", max_utilization, 0, 1)
    number("fill_limit", fill_limit, 0, 1)
    number("failure_tolerance", failure_tolerance, 0, whole=True, open_low=False)
    number("max_nodes", max_nodes, 1, MAX_NODES, whole=True, open_low=False)
    if dataset_gib is not None:
        number("dataset_gib", dataset_gib, 0, 1e24 / 2**30, open_low=False)
    if replication_factor is not None:
        number("replication_factor", replication_factor, 1, MAX_NODES, whole=True, open_low=False)
    if interval is not None:
        number("interval", interval, 0, 1 - 1e-12)


def size(
    workload: Workload,
    *,
    target_ops_s: float,
    slo_p99_ms: float,
    system: str,
    platforms: Sequence[str | Platform] = DEFAULT_PLATFORMS,
    dataset_gib: float | None = None,
    replication_factor: int | None = None,
    max_utilization: float = 0.7,
    failure_tolerance: int = 1,
    fill_limit: float = 0.7,
    max_nodes: int = 128,
    params: ParameterSet | str | None = None,
    interval: float | None = 0.9,
    cost: Mapping[str, float] | None = None,
    network: str | None = None,
    device: str | None = None,
    **knobs,
) -> pd.DataFrame:
    """Minimum node counts per candidate platform configuration (module doc).

    Parameters
    ----------
    workload : the operation mix, sizes and consistency level (its clients /
        arrival rate are replaced by open arrivals at ``target_ops_s``).
    target_ops_s : cluster throughput to sustain [1/s].
    slo_p99_ms : p99 latency objective [ms].
    system : a system id (``scylla``, ``cassandra``, ...) or spec path.
    platforms : catalog ids, YAML paths or Platform objects; every SMT mode
        of each is a candidate (only ``threads_per_core`` when that knob is given).
    dataset_gib, replication_factor : override the workload's [GiB], [count].
    max_utilization : highest utilisation any station may run at [-].
    failure_tolerance : nodes that may be down while the targets still hold.
    fill_limit : usable share of raw drive capacity [-].
    max_nodes : largest cluster considered.
    interval : level of the p99 band and of the node-count range (None: neither).
    cost : optional price per node by platform id; adds ``cost``.
    network, device : pin the NIC / data drive of every candidate (default:
        equal terms, :func:`equal_terms`).
    **knobs : passed to :func:`perfmodel.predict` (cache size, cores, ...).

    Returns
    -------
    DataFrame, one row per candidate (platform x SMT mode): ``nodes`` (0 when
    infeasible), ``nodes_lower`` / ``nodes_upper``, ``feasible``, ``binding``
    (every constraint that sets the count, ``+``-joined), ``nodes_for_<constraint>``
    (what each alone needs; NaN: more than ``max_nodes``), ``reason`` (why not,
    in words), ``latency_p99_ms_best`` (an infeasible row's lowest p99 at any size whose
    utilisations are within ``max_utilization`` [ms]), ``latency_p99_ms_one_fewer`` /
    ``max_utilization_one_fewer`` (the p99 [ms],
    inf when saturated, and the busiest utilisation one node below the answer: why it is
    the answer; NaN when one fewer breaks the replication constraint), the predicted
    throughput, p99 (with its band), utilisation and bottleneck at that size, ``network`` and
    ``device`` used, ``cost``.
    Sorted feasible first, fewest nodes first; ``attrs["terms"]`` says how
    the candidates were equalised.
    """
    _check_request(target_ops_s, slo_p99_ms, max_utilization, fill_limit, failure_tolerance, max_nodes,
                   dataset_gib, replication_factor, interval)  # fmt: skip
    changes = {"arrival_rate": float(target_ops_s), "clients": None}
    if dataset_gib is not None:
        changes["dataset_bytes"] = float(dataset_gib) * 2**30
    if replication_factor is not None:
        changes["replication_factor"] = float(replication_factor)
    w = replace(workload, **changes)
    if isinstance(platforms, str | Platform):
        platforms = [platforms]
    if len(platforms) == 0:
        raise ValueError("platforms: give at least one platform (a catalog id, a YAML path or a Platform)")
    loaded = [p if isinstance(p, Platform) else load_platform(p) for p in platforms]
    terms = equal_terms(loaded, network, device)
    smt = knobs.pop("threads_per_core", None)
    if smt is not None:
        settings.check("threads_per_core", smt)
        if np.ndim(smt) != 0:
            raise ValueError(f"threads_per_core: one SMT mode for a sizing, got {smt!r}")
    candidates = [(p, t) for p in loaded for t in p.smt_modes if smt is None or float(t) == float(smt)]
    rows = []
    if candidates:
        grid = _Grid(candidates, w, int(max_nodes), int(failure_tolerance), system, params, terms, knobs)
        ok = grid.constraints(slo_p99_ms, max_utilization, fill_limit)
        rows = [grid.row(i, ok, slo_p99_ms, max_utilization, target_ops_s) for i in range(len(candidates))]
    rows += [_no_mode_row(p, smt, system, terms) for p in loaded if smt is not None and float(smt) not in
             map(float, p.smt_modes)]  # fmt: skip
    out = pd.DataFrame(rows)
    for col in ("nodes_lower", "nodes_upper", "latency_p99_ms_lower", "latency_p99_ms_upper"):
        out[col] = np.nan
    extra = ["throughput_ops_s", "latency_p99_ms_one_fewer", "max_utilization_one_fewer",
             "latency_p99_ms_best", "network", "device"]  # fmt: skip
    for col in (
        TABLE_COLUMNS + [f"nodes_for_{c}" for c in CONSTRAINTS] + extra
    ):  # every column, whatever the rows
        if col not in out.columns:
            out[col] = (
                ""
                if col in ("binding", "bottleneck", "tail_regime", "reason", "network", "device")
                else np.nan
            )
    if interval is not None and out.feasible.any():
        grid.add_ranges(out, float(interval), slo_p99_ms, max_utilization, fill_limit)
    if cost is not None:
        unknown = sorted(set(out.platform) - set(cost))
        if unknown:
            raise ValueError(f"cost: no price for platform {unknown[0]!r}")
        out["cost"] = [cost[p] * n for p, n in zip(out.platform, out.nodes, strict=True)]
    out = out.sort_values(["feasible", "nodes"], ascending=[False, True], kind="stable").reset_index(
        drop=True
    )
    out.attrs["terms"] = terms["note"]
    out.attrs["interval"] = interval
    out.attrs["max_nodes"] = int(max_nodes)
    out.attrs["slo_p99_ms"] = float(slo_p99_ms)
    out.attrs["max_utilization"] = float(max_utilization)
    return out


def _no_mode_row(platform: Platform, smt, system, terms) -> dict:
    modes = ", ".join(map(str, platform.smt_modes))
    return {
        "platform": platform.id,
        "threads_per_core": float(smt),
        "system": system,
        "nodes": 0,
        "feasible": False,
        "binding": "",
        "reason": f"SMT{smt:g} is not a mode of {platform.id} (modes: {modes})",
        "network": terms["network"],
        "device": terms["devices"][platform.id],
    }


#: the stations whose utilisation the throughput constraint caps
UTIL_COLUMNS = ("util_network", "util_cpu", "util_device", "util_wal", "util_log", "util_client_link")


def _tail_regime(share: np.ndarray, j: int) -> str:
    """Where the p99 comes from at node count index ``j``: ``bursts`` (>= 1% of requests meet a flush
    burst or a memtable stall, so the p99 is one of their waits), ``step`` (one node fewer is in that
    regime: the count sits just past a step of the p99, and a small error moves it), or ``body``."""
    if share[j] >= 0.01:
        return "bursts"
    if j > 0 and share[j - 1] >= 0.01:
        return "step"
    return "body"


class _Grid:
    """Every candidate at every node count 1..max_nodes (N + k: ``failure_tolerance`` down)."""

    def __init__(self, candidates, w, max_nodes, failure_tolerance, system, params, terms, knobs):
        self.candidates, self.w, self.system, self.params = candidates, w, system, params
        self.terms, self.knobs, self.failure_tolerance = terms, knobs, failure_tolerance
        self.rf = int(np.max(w.replication_factor))
        # a cluster over availability zones needs a node in each (knob zones), failures included
        zones = np.asarray(knobs.get("zones", 1.0), dtype=float)
        self.zones = int(np.nanmax(zones)) if np.isfinite(zones).any() else 1
        least = max(self.rf, self.zones, 1)
        self.counts = np.arange(1, max_nodes + 1)
        surviving = self.counts - failure_tolerance
        self.valid = surviving >= least
        self.n_grid = np.where(self.valid, surviving, least).astype(float)
        self.per_node = np.array([self._capacity(p) for p, _ in candidates])[:, None]
        self.frame = self.predict(np.arange(len(self.counts))) if candidates else None

    def _capacity(self, platform: Platform) -> float:
        """Raw data capacity of one node [B]: the comparison's drive x the platform's data-drive count."""
        own = max(platform.storage, key=lambda s: s.count * platform.device_spec(s.device).capacity_bytes)
        return float(platform.device_spec(self.terms["devices"][platform.id]).capacity_bytes * own.count)

    def predict(self, count_index, interval: float | None = None, rows=None) -> pd.DataFrame:
        """predict over candidates ``rows`` (default all) x the node counts ``count_index``."""
        rows = np.arange(len(self.candidates)) if rows is None else np.asarray(rows)
        cand = np.repeat(rows, len(count_index))
        counts = np.tile(np.asarray(count_index), len(rows))
        return predict(
            [self.candidates[i][0] for i in cand], self.w, nodes=self.n_grid[counts], system=self.system,
            params=self.params, interval=interval,
            threads_per_core=np.array([self.candidates[i][1] for i in cand], dtype=float),
            network=self.terms["network"],
            device=np.array([self.terms["devices"][self.candidates[i][0].id] for i in cand], dtype=object),
            **self.knobs,
        )  # fmt: skip

    def constraints(self, slo_p99_ms, max_utilization, fill_limit, frame=None, end="", rows=None) -> dict:
        """Which node counts meet each constraint: central values, or a band's ``end`` (_lower / _upper)."""
        frame = self.frame if frame is None else frame
        rows = np.arange(len(self.candidates)) if rows is None else np.asarray(rows)
        width = len(frame) // max(len(rows), 1)
        valid, n_grid = self.valid[:width], self.n_grid[:width]
        max_util = frame[[c + end for c in UTIL_COLUMNS]].max(axis=1).to_numpy().reshape(len(rows), width)
        p99 = frame[f"latency_p99_ms{end}"].to_numpy().reshape(len(rows), width)
        saturated = frame["saturated"].to_numpy().reshape(len(rows), width)
        need_bytes = float(np.max(self.w.dataset_bytes)) * self.rf / fill_limit
        return {
            "replication": np.broadcast_to(valid, (len(rows), width)),
            "capacity": valid & (n_grid * self.per_node[rows] >= need_bytes),
            "throughput": valid & ~saturated & (max_util <= max_utilization),
            "slo": valid & ~saturated & (p99 <= slo_p99_ms),
            "_max_util": max_util,
            "_p99": p99,
        }

    def row(self, i: int, ok: dict, slo_p99_ms, max_utilization, target_ops_s) -> dict:
        """Candidate ``i``'s answer: nodes, what each constraint needs, which bind, or why not."""
        platform, tpc = self.candidates[i]
        first = {name: int(_first_true(ok[name][i : i + 1])[0]) for name in CONSTRAINTS}
        all_ok = int(
            _first_true((ok["replication"] & ok["capacity"] & ok["throughput"] & ok["slo"])[i : i + 1])[0]
        )
        row = {"platform": platform.id, "threads_per_core": tpc, "system": self.system,
               "network": self.terms["network"], "device": self.terms["devices"][platform.id]}  # fmt: skip
        for name in CONSTRAINTS:
            row[f"nodes_for_{name}"] = float(self.counts[first[name]]) if first[name] >= 0 else np.nan
        if all_ok < 0:
            why = self._why_not(i, ok, first, slo_p99_ms, max_utilization, target_ops_s)
            row.update(nodes=0, feasible=False, binding="", tail_regime="", reason=why)
            row.update(throughput_ops_s=np.nan, latency_p99_ms=np.nan, max_utilization=np.nan, bottleneck="")
            best = np.nanmin(np.where(ok["throughput"][i], ok["_p99"][i], np.inf), initial=np.inf)
            row["latency_p99_ms_best"] = float(best) if np.isfinite(best) else np.nan
            return row
        nodes = int(self.counts[all_ok])
        binding = [name for name in CONSTRAINTS if row[f"nodes_for_{name}"] == nodes]
        fewer = all_ok - 1 if all_ok > 0 and self.valid[all_ok - 1] else -1  # one node fewer, when allowed
        pick = self.frame.iloc[i * len(self.counts) + all_ok]
        share = self.frame["tail_event_share"].to_numpy()[i * len(self.counts) : (i + 1) * len(self.counts)]
        row.update(
            nodes=nodes,
            feasible=True,
            # a count no single constraint asks for: the SLO holds below it, but not at every size up to it
            binding="+".join(binding) or "slo",
            reason="",
            throughput_ops_s=float(pick.throughput_ops_s),
            latency_p99_ms=float(pick.latency_p99_ms),
            max_utilization=float(ok["_max_util"][i, all_ok]),
            bottleneck=str(pick.bottleneck),
            tail_regime=_tail_regime(share, all_ok),
            latency_p99_ms_one_fewer=float(ok["_p99"][i, fewer]) if fewer >= 0 else np.nan,
            max_utilization_one_fewer=float(ok["_max_util"][i, fewer]) if fewer >= 0 else np.nan,
        )
        return row

    def _why_not(self, i, ok, first, slo_p99_ms, max_utilization, target_ops_s) -> str:
        last = len(self.counts) - 1
        top = int(self.counts[last])
        why = []
        if first["replication"] < 0:  # the other constraints are not evaluated without enough nodes
            need = max(self.rf, self.zones) + self.failure_tolerance
            spread = f" over {self.zones} zones" if self.zones > 1 else ""
            return (f"RF {self.rf}{spread} with {self.failure_tolerance} failures needs {need} nodes, more "
                    f"than {top}")  # fmt: skip
        if first["capacity"] < 0:
            need = float(np.max(self.w.dataset_bytes)) * self.rf
            have = self.n_grid[last] * self.per_node[i, 0]
            why.append(f"data does not fit: the data set x RF is {need / 1e12:.3g} TB, {top} nodes hold "
                       f"{have / 1e12:.3g} TB raw")  # fmt: skip
        if first["throughput"] < 0:
            u = ok["_max_util"][i, last]
            if not np.isfinite(u):
                why.append(f"saturated at every size up to {top} nodes")
            elif u > 1:  # an offered load beyond capacity: say by how much, not a utilisation over 100%
                why.append(f"saturated: at {top} nodes the busiest station is offered {u:.3g}x what it can "
                           f"serve at {target_ops_s:g} ops/s")  # fmt: skip
            else:
                why.append(f"needs more than {top} nodes for {target_ops_s:g} ops/s: at {top} nodes the "
                           f"busiest station runs at {u:.0%} > {max_utilization:.0%}")  # fmt: skip
        if first["slo"] < 0:
            best = np.nanmin(np.where(ok["throughput"][i], ok["_p99"][i], np.inf))
            best_text = f" (best {best:.3g} ms)" if np.isfinite(best) else ""
            why.append(f"p99 never <= {slo_p99_ms:g} ms up to {top} nodes{best_text}")
        return "; ".join(why) or f"no single size up to {top} nodes meets every constraint at once"

    def add_ranges(self, out: pd.DataFrame, interval: float, slo_p99_ms, max_utilization, fill_limit) -> None:
        """``nodes_lower`` / ``nodes_upper`` and the p99 band of the feasible rows.

        The optimistic / pessimistic ends of the calibrated bands of the p99
        and of every utilisation give the counts at which the constraints hold
        for a model ``interval`` of its error better / worse than the centre.
        The bands are evaluated up to twice the largest answer plus 8 nodes
        first, and over every size for the rows whose pessimistic count lies beyond.
        """
        index = {(p.id, float(t)): i for i, (p, t) in enumerate(self.candidates)}
        feasible = list(out.index[out.feasible])
        rows = [index[(out.at[k, "platform"], float(out.at[k, "threads_per_core"]))] for k in feasible]
        window = min(len(self.counts), 2 * int(out.loc[feasible, "nodes"].max()) + 8)
        todo = list(range(len(rows)))
        while todo:
            sub = [rows[j] for j in todo]
            frame = self.predict(np.arange(window), interval=interval, rows=sub)
            ends = {end: self.constraints(slo_p99_ms, max_utilization, fill_limit, frame, end, sub)
                    for end in ("_lower", "_upper")}  # fmt: skip
            missing = []
            for m, j in enumerate(todo):
                k = feasible[j]
                for column, end in (("nodes_lower", "_lower"), ("nodes_upper", "_upper")):
                    c = ends[end]
                    ok = (c["replication"] & c["capacity"] & c["throughput"] & c["slo"])[m : m + 1]
                    first = _first_true(ok)[0]
                    out.at[k, column] = float(self.counts[first]) if first >= 0 else np.nan
                at = m * window + int(out.at[k, "nodes"]) - 1
                out.at[k, "latency_p99_ms_lower"] = float(frame["latency_p99_ms_lower"].iloc[at])
                out.at[k, "latency_p99_ms_upper"] = float(frame["latency_p99_ms_upper"].iloc[at])
                if np.isnan(out.at[k, "nodes_upper"]) and window < len(self.counts):
                    missing.append(j)
            todo = missing
            window = len(self.counts)
