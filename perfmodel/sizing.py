"""Sizing: how many nodes of which platform meet a throughput target at a p99 SLO.

``size(workload, target_ops_s=..., slo_p99_ms=...)`` evaluates every candidate
platform configuration (catalog platforms x their SMT modes) at every node
count from the replication factor up to ``max_nodes`` in one vectorised
:func:`perfmodel.predict` call, with open Poisson arrivals at the target rate,
and keeps for each candidate the smallest node count for which, **with
``failure_tolerance`` nodes down** (N + k):

* throughput: no station saturated and every utilisation <= ``max_utilization``;
* SLO: the predicted p99 latency <= ``slo_p99_ms``;
* capacity: dataset x RF / ``fill_limit`` fits on the surviving nodes' drives;
* replication: surviving nodes >= RF.

The binding constraint is the one that needs the most nodes; a candidate that
meets them at no size up to ``max_nodes`` is reported with the reason
("cannot meet the SLO at any size" is an answer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from perfmodel.catalog import Platform, load_platform
from perfmodel.node import predict
from perfmodel.params import ParameterSet
from perfmodel.workload import Workload

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
    "feasible",
    "binding",
    "latency_p99_ms",
    "latency_p99_ms_lower",
    "latency_p99_ms_upper",
    "max_utilization",
    "bottleneck",
    "reason",
]


def node_capacity_bytes(platform: Platform) -> float:
    """Raw capacity of a platform's data drives [B]."""
    return float(sum(platform.device_spec(s.device).capacity_bytes * s.count for s in platform.storage))


def _first_true(mask: np.ndarray) -> np.ndarray:
    """Index of the first True along axis 1, or -1."""
    first = np.argmax(mask, axis=1)
    return np.where(mask.any(axis=1), first, -1)


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
    **knobs,
) -> pd.DataFrame:
    """Minimum node counts per candidate platform configuration.

    Parameters
    ----------
    workload : the operation mix, sizes and consistency level (its clients /
        arrival rate are replaced by open arrivals at ``target_ops_s``).
    target_ops_s : cluster throughput to sustain [1/s].
    slo_p99_ms : p99 latency objective [ms].
    system : ``scylla``, ``cassandra``, ``rocksdb``, ``dm8``, ``ceph`` or ``fio``.
    platforms : catalog ids or Platform objects (user YAML files work via
        :func:`perfmodel.load_platform`); every SMT mode of each is a candidate.
    dataset_gib, replication_factor : override the workload's [GiB], [count].
    max_utilization : highest utilisation any station may run at [-].
    failure_tolerance : nodes that may be down while the targets still hold.
    fill_limit : usable share of raw drive capacity [-].
    max_nodes : largest cluster considered.
    interval : add ``_lower`` / ``_upper`` bands at the chosen size (None: no bands).
    cost : optional price per node by platform id; adds ``cost``.
    **knobs : passed to :func:`perfmodel.predict` (cache size, device, ...).

    Returns
    -------
    DataFrame, one row per candidate (platform x SMT mode): ``nodes`` (0 when
    infeasible), ``feasible``, ``binding`` (the constraint needing the most
    nodes) or ``reason``, the predicted ``throughput_ops_s``,
    ``latency_p99_ms`` (with bands), utilisations and bottleneck at that size,
    and ``cost`` when prices are given.
    """
    if target_ops_s <= 0 or not np.isfinite(target_ops_s):
        raise ValueError(f"target_ops_s: must be a positive number, got {target_ops_s}")
    if slo_p99_ms <= 0:
        raise ValueError(f"slo_p99_ms: must be positive, got {slo_p99_ms}")
    if not 0 < max_utilization <= 1:
        raise ValueError(f"max_utilization: must lie in (0, 1], got {max_utilization}")
    if not 0 < fill_limit <= 1:
        raise ValueError(f"fill_limit: must lie in (0, 1], got {fill_limit}")
    if failure_tolerance < 0 or int(failure_tolerance) != failure_tolerance:
        raise ValueError(f"failure_tolerance: must be a whole number >= 0, got {failure_tolerance}")
    changes = {"arrival_rate": float(target_ops_s), "clients": None}
    if dataset_gib is not None:
        changes["dataset_bytes"] = float(dataset_gib) * 2**30
    if replication_factor is not None:
        changes["replication_factor"] = float(replication_factor)
    w = replace(workload, **changes)
    rf = int(np.max(w.replication_factor))
    loaded = [p if isinstance(p, Platform) else load_platform(p) for p in platforms]
    candidates = [(p, t) for p in loaded for t in p.smt_modes]
    counts = np.arange(1, max_nodes + 1)
    surviving = counts - failure_tolerance
    valid = surviving >= max(rf, 1)
    n_grid = np.where(valid, surviving, max(rf, 1)).astype(float)
    plat_idx = np.repeat(np.arange(len(candidates)), len(counts))
    frame = predict(
        [candidates[i][0] for i in plat_idx],
        w,
        nodes=np.tile(n_grid, len(candidates)),
        system=system,
        params=params,
        threads_per_core=np.array([candidates[i][1] for i in plat_idx], dtype=float),
        **knobs,
    )
    shape = (len(candidates), len(counts))
    util_cols = [c for c in frame.columns if c.startswith("util_")]
    max_util = frame[util_cols].max(axis=1).to_numpy().reshape(shape)
    p99 = frame["latency_p99_ms"].to_numpy().reshape(shape)
    saturated = frame["saturated"].to_numpy().reshape(shape)
    need_bytes = float(np.max(w.dataset_bytes)) * rf / fill_limit
    per_node = np.array([node_capacity_bytes(p) for p, _ in candidates])[:, None]
    ok = {
        "replication": np.broadcast_to(valid, shape),
        "capacity": valid & (n_grid * per_node >= need_bytes),
        "throughput": valid & ~saturated & (max_util <= max_utilization),
        "slo": valid & ~saturated & (p99 <= slo_p99_ms),
    }
    first = {name: _first_true(mask) for name, mask in ok.items()}
    all_ok = _first_true(ok["replication"] & ok["capacity"] & ok["throughput"] & ok["slo"])
    rows = []
    for i, (platform, tpc) in enumerate(candidates):
        row = {"platform": platform.id, "threads_per_core": tpc, "system": system}
        if all_ok[i] >= 0:
            j = int(all_ok[i])
            needs = {name: int(first[name][i]) for name in CONSTRAINTS}
            binding = max(CONSTRAINTS, key=lambda name: (needs[name], CONSTRAINTS.index(name)))
            pick = frame.iloc[i * len(counts) + j]
            row.update(
                nodes=int(counts[j]),
                feasible=True,
                binding=binding,
                reason="",
                throughput_ops_s=float(pick.throughput_ops_s),
                latency_p99_ms=float(pick.latency_p99_ms),
                max_utilization=float(max_util[i, j]),
                bottleneck=str(pick.bottleneck),
            )
        else:
            blocked = [name for name in CONSTRAINTS if first[name][i] < 0]
            reason = {
                "slo": f"cannot meet p99 <= {slo_p99_ms:g} ms at any size up to {max_nodes} nodes "
                f"(best {np.nanmin(np.where(ok['throughput'][i], p99[i], np.inf)):.3g} ms)",
                "throughput": f"cannot sustain {target_ops_s:g} ops/s at utilisation <= {max_utilization:g} "
                f"with up to {max_nodes} nodes",
                "capacity": f"the data set does not fit on {max_nodes} nodes",
                "replication": f"fewer than {rf} nodes survive {failure_tolerance} failures",
            }
            row.update(
                nodes=0,
                feasible=False,
                binding="",
                reason="; ".join(reason[b] for b in blocked)
                or f"no single size up to {max_nodes} nodes meets every constraint",
                throughput_ops_s=np.nan,
                latency_p99_ms=np.nan,
                max_utilization=np.nan,
                bottleneck="",
            )
        rows.append(row)
    out = pd.DataFrame(rows)
    if interval is not None and out.feasible.any():
        feasible = out[out.feasible]
        by_id = {p.id: p for p in loaded}  # the loaded platforms (a user's file defines its own devices)
        bands = predict(
            [by_id[p] for p in feasible.platform],
            w,
            nodes=(feasible.nodes - failure_tolerance).to_numpy(float),
            system=system,
            params=params,
            threads_per_core=feasible.threads_per_core.to_numpy(float),
            interval=interval,
            **knobs,
        )
        for col in ("latency_p99_ms_lower", "latency_p99_ms_upper"):
            out.loc[out.feasible, col] = bands[col].to_numpy()
    if cost is not None:
        unknown = sorted(set(out.platform) - set(cost))
        if unknown:
            raise ValueError(f"cost: no price for platform {unknown[0]!r}")
        out["cost"] = [cost[p] * n for p, n in zip(out.platform, out.nodes, strict=True)]
    return out.sort_values(["feasible", "nodes"], ascending=[False, True], kind="stable").reset_index(
        drop=True
    )
