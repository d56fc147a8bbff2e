"""Sizing: how many servers of which platform meet a throughput target at a p99 SLO.

``size(workload, target_ops_s=..., slo_p99_ms=...)`` answers per candidate
platform configuration (catalog platforms x their SMT modes) the smallest
count of servers for which, **with ``failure_tolerance`` servers down**
(N + k), with open Poisson arrivals at the target rate:

* replication: surviving servers >= RF (and >= the availability zones, knob ``zones``);
* capacity: the data set x RF / ``fill_limit`` fits on the surviving servers' drives
  (an in-memory store's, spec ``dataset_in: memory``: in RAM x ``cache_share_of_ram``);
* throughput: no station saturated and every utilisation <= ``max_utilization``;
* SLO: the predicted p99 latency <= ``slo_p99_ms``.

**Topology.** The system spec's ``topology`` (:mod:`perfmodel.inputs.topology`) says what
a server is to the model: one node of a sharded cluster; ``k`` instances of a
thread-capped store (Redis, memcached), where ``size`` tries ``k`` = 1, 2, 4, ...
up to the cores less one and keeps the fewest servers (the fewest instances on a
tie; ``instances_per_server`` fixes it); a primary and its replicas (PostgreSQL,
MySQL, openGauss, DM8), where every server applies every write and reads spread
over all of them, so a write load one server cannot carry is answered infeasible
whatever the replicas; or one embedded engine per server (RocksDB).

**Search.** Replication and capacity are closed forms. Throughput and the SLO are
each searched per candidate by galloping from the least count (1, 2, 4, ... above
it) and bisecting the bracket: O(log n) solves, all candidates in one vectorised
:func:`perfmodel.predict` call per step. Both are monotone in the count wherever
utilisations fall and tails shrink as servers are added; the answer (the largest
of the four counts) is checked to meet every constraint at once, and where it does
not (a non-monotone p99) the search steps up from there and says so in ``search``.

Every row says what each constraint alone would need (``nodes_for_*``) and
which of them set the count (``binding``, all of them on a tie). With
``interval`` the count has a range: ``nodes_lower`` / ``nodes_upper`` are
the counts under the optimistic and pessimistic ends of the calibrated bands
(parameters plus model discrepancy, :mod:`perfmodel.evidence.discrepancy`) of the p99
and of every utilisation. ``size`` always answers: a candidate that meets the
constraints at no size up to ``max_nodes`` is a row with ``feasible`` False
and the ``reason`` in words; a malformed request is a ``ValueError`` naming
the argument.

**Networks and drives.** Each candidate keeps its own network (NIC) unless
``network=`` pins one for all, so a candidate's answer never depends on the
others in the list; data drives are each platform's own NVMe drives, or the
``EQUAL_NVME`` drive where its own are another class (with its own count),
unless ``device=`` pins one. The table's ``network`` / ``device`` columns
show what each row used.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

from perfmodel.inputs import knobs as settings
from perfmodel.inputs import topology
from perfmodel.inputs.catalog import Platform, load_platform
from perfmodel.inputs.params import ParameterSet, load_parameters
from perfmodel.inputs.prices import PriceEntry, PriceTable, load_prices, monthly_cost
from perfmodel.inputs.systems import SystemSpec, load_system
from perfmodel.inputs.workload import MAX_NODES, Workload
from perfmodel.model import bands, caveats
from perfmodel.model.predict import parameter_scope, predict

#: the candidates of the mission: POWER8 S821LC / S822LC configurations, the x86 DL380, the Kunpeng R722
DEFAULT_PLATFORMS = (
    "power8-s821lc-10c",
    "power8-s822lc-16c-prod",
    "power8-s822lc-22c-analytics",
    "x86-dl380-e5-2630v4",
    "kunpeng-r722",
)
CONSTRAINTS = ("replication", "capacity", "throughput", "slo")
#: what ``size(pricing=...)`` may set (:func:`perfmodel.inputs.prices.monthly_cost`'s options)
PRICING_OPTIONS = ("term", "horizon_months", "usd_per_kwh", "pue", "amortisation_months")
#: the columns a sizing table shows (the CLI, the report, the planner)
TABLE_COLUMNS = [
    "platform",
    "threads_per_core",
    "nodes",
    "nodes_lower",
    "nodes_upper",
    "instances_per_server",
    "feasible",
    "binding",
    "latency_p99_ms",
    "latency_p99_ms_lower",
    "latency_p99_ms_upper",
    "max_utilization",
    "bottleneck",
    "network",
    "tail_regime",
    "reason",
]
#: target units ``size`` takes (``target_unit``): the unit and what converts it to operations per second
TARGET_UNITS = {
    "ops/s": "operations per second",
    "tps": "transactions per second (one transaction is one operation)",
    "tpmC": "TPC-C New-Order transactions per minute (a TPC-C workload: operation tpcc)",
    "IOPS": "I/O operations per second",
    "MB/s": "megabytes (1e6 B) per second of the workload's io_bytes",
    "GiB/s": "gibibytes (2^30 B) per second of the workload's io_bytes",
}
#: the stations whose utilisation the throughput constraint caps
UTIL_COLUMNS = (
    "util_network", "util_cpu", "util_device", "util_wal", "util_log", "util_client_link", "util_client"
)  # fmt: skip
#: the NVMe drive a platform whose own data drives are another class gets in an equal comparison
EQUAL_NVME = "nvme-1p6tb-generic"
#: steps the search takes above a count that failed the joint check before it gives up
_JOINT_STEPS = 64
#: rounds of guess-and-check a band's count gets before it is searched with banded predictions alone
_GUESSES = 3


def node_capacity_bytes(platform: Platform) -> float:
    """Raw capacity of a platform's data drives [B]."""
    return float(sum(platform.device_spec(s.device).capacity_bytes * s.count for s in platform.storage))


def target_ops_per_s(target: float, unit: str, workload: Workload, system: str = "", params=None) -> float:
    """A target in a planner's unit (:data:`TARGET_UNITS`) as operations per second [1/s].

    ``tpmC`` counts New-Order transactions per minute: ``tpmC / 60 / neworder_share`` transactions
    per second (``neworder_share[tpcc]`` of the parameter set, 0.45 in TPC-C rev. 5.11 clause 5.2.3);
    ``MB/s`` and ``GiB/s`` divide by the workload's ``io_bytes`` [B].
    """
    if unit not in TARGET_UNITS:
        raise ValueError(f"target_unit: must be one of {', '.join(TARGET_UNITS)}, got {unit!r}")
    if unit == "tpmC":
        if workload.operation != "tpcc":
            raise ValueError(f"target_unit: tpmC needs a TPC-C workload (operation tpcc), got "
                             f"{workload.operation!r}")  # fmt: skip
        return float(target) / 60.0 / float(load_parameters(params)["neworder_share[tpcc]"])
    if unit in ("MB/s", "GiB/s"):
        scale = 1e6 if unit == "MB/s" else 2.0**30
        return float(target) * scale / float(np.max(workload.io_bytes))
    return float(target)


def from_ops_per_s(ops_s, unit: str, workload: Workload, params=None):
    """Operations per second [1/s] in ``unit`` (the inverse of :func:`target_ops_per_s`)."""
    per_unit = target_ops_per_s(1.0, unit, workload, params=params)
    return np.asarray(ops_s, dtype=float) / per_unit


def _own_device(platform: Platform) -> str:
    return max(platform.storage, key=lambda s: s.count * platform.device_spec(s.device).capacity_bytes).device


def equal_terms(platforms: Sequence[Platform], network: str | None = None, device: str | None = None) -> dict:
    """Network and data device per platform.

    ``network``: the given id for every platform, else each its own. ``device``: the given
    id for every platform, else each platform's own NVMe drives, or :data:`EQUAL_NVME`
    (with the platform's drive count) where its own are SATA. Neither depends on the other
    candidates. Returns ``{"networks": {platform id: network id}, "devices": {platform id:
    device id}, "note": words}``.
    """
    networks = {p.id: network or p.network for p in platforms}
    devices = {}
    for p in platforms:
        own = _own_device(p)
        devices[p.id] = device or (own if p.device_spec(own).interface == "nvme" else EQUAL_NVME)
    swapped = sorted(p.id for p in platforms if devices[p.id] != _own_device(p))
    where = f"every platform on {network}" if network else "each platform on its own network"
    note = where + (
        f" and {device} drives" if device else " with NVMe data drives" + (
            f" ({', '.join(swapped)}: {EQUAL_NVME} in place of their own)" if swapped else ""
        )
    )  # fmt: skip
    return {"networks": networks, "devices": devices, "note": note}


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
    workload: Workload, *, target_ops_s: float | None = None, slo_p99_ms: float, system: str,
    platforms: Sequence[str | Platform] = DEFAULT_PLATFORMS, dataset_gib: float | None = None,
    replication_factor: int | None = None, max_utilization: float = 0.7, failure_tolerance: int = 1,
    fill_limit: float = 0.7, max_nodes: int = 128, params: ParameterSet | str | None = None,
    interval: float | None = 0.9, cost: Mapping[str, float] | None = None, network: str | None = None,
    device: str | None = None, instances_per_server: int | None = None, sync_replicas: int = 0,
    target: float | None = None, target_unit: str = "ops/s", prices: PriceTable | str | Path | None = None,
    pricing: Mapping[str, float | str] | None = None, **knobs,
) -> pd.DataFrame:  # fmt: skip
    """Minimum server counts per candidate platform configuration (module doc).

    Parameters
    ----------
    workload : the operation mix, sizes and consistency level (its clients / arrival rate are replaced
        by open arrivals at the target).
    target_ops_s : cluster throughput to sustain [1/s]; or ``target`` in ``target_unit``
        (:data:`TARGET_UNITS`: ops/s, tps, tpmC, IOPS, MB/s, GiB/s).
    slo_p99_ms : p99 latency objective [ms].
    system : a system id (``scylla``, ``cassandra``, ...) or spec path.
    platforms : catalog ids, YAML paths or Platform objects; every SMT mode of each is a candidate
        (only ``threads_per_core`` when that knob is given).
    dataset_gib, replication_factor : override the workload's [GiB], [count].
    max_utilization, fill_limit : highest utilisation of any station [-]; usable share of drive capacity [-].
    failure_tolerance : servers that may be down while the targets still hold.
    max_nodes : most servers considered (up to 100,000).
    interval : level of the p99 band and of the count's range (None: neither). The range is left out (NaN)
        when the band a new lab's figures fall in at that level is wider than a factor of 10
        (:func:`perfmodel.model.bands.band_note`, ``attrs["range_note"]``): at 90% it is, today, always.
    cost : optional price per server by platform id; adds ``cost``.
    prices, pricing : a price table (``"shipped"``, a file, a PriceTable) and options of
        :func:`~perfmodel.inputs.prices.monthly_cost`: adds the monthly costs (:func:`_monthly_costs`).
    network, device : pin the NIC / data drive of every candidate (default: each platform's own network
        and NVMe drives, :func:`equal_terms`).
    instances_per_server : fix the instances per server of an ``instances`` topology (default: the count
        that needs the fewest servers).
    sync_replicas : replicas a commit waits for, ``primary_replicas`` only (default 0: asynchronous
        replication; :func:`perfmodel.inputs.topology.layout`).
    **knobs : passed to :func:`perfmodel.predict` (cache size, cores, ...).

    Returns
    -------
    DataFrame, one row per candidate (platform x SMT mode): ``nodes`` (servers; 0 when infeasible),
    ``instances_per_server``, ``replicas`` (a primary's, ``primary_replicas``), ``topology``, ``nodes_lower``
    / ``nodes_upper``, ``feasible``, ``binding`` (every constraint that sets the count, ``+``-joined),
    ``nodes_for_<constraint>`` (what each alone needs; NaN: more than ``max_nodes``), ``reason`` (why not, in
    words), ``latency_p99_ms_best`` (an infeasible row's p99 at the largest size whose utilisations are
    within ``max_utilization`` [ms]), ``latency_p99_ms_one_fewer`` / ``max_utilization_one_fewer`` (the p99
    [ms], inf when saturated, and the busiest utilisation one server below the answer: why it is the answer;
    NaN when one fewer breaks the replication constraint), the predicted throughput (``throughput_ops_s`` and
    ``throughput_target_unit``), p99 (with its band), utilisation and bottleneck at that size, ``network``
    and ``device`` used, ``search`` (empty, or what the search met), ``cost``. Sorted feasible first, fewest
    servers first; ``attrs`` hold ``terms``, ``target``, ``target_unit``, ``caveat`` (how far the system's
    answers held on other labs' figures, :func:`perfmodel.model.caveats.caveat`) and ``range_note`` ("" or
    why the range is not given).
    """
    smt = _one_smt_mode(knobs)
    job = _setup(
        workload, target_ops_s=target_ops_s, slo_p99_ms=slo_p99_ms, system=system, platforms=platforms,
        dataset_gib=dataset_gib, replication_factor=replication_factor, max_utilization=max_utilization,
        failure_tolerance=failure_tolerance, fill_limit=fill_limit, max_nodes=max_nodes, params=params,
        interval=interval, cost=cost, network=network, device=device,
        instances_per_server=instances_per_server, sync_replicas=sync_replicas, target=target,
        target_unit=target_unit, prices=prices, pricing=pricing, smt=smt, knobs=knobs,
    )  # fmt: skip
    return _finish(job, _run_searches([job.search])[0])


#: what :func:`size_many` lets differ between requests (the rest is common to all)
REQUEST_FIELDS = ("target_ops_s", "slo_p99_ms", "dataset_gib", "read_fraction", "object_bytes")


def size_many(workload: Workload, requests: Sequence[Mapping[str, float]], **common) -> list[pd.DataFrame]:
    """``[size(workload, **common, **request) for request in requests]``, with the requests' searches run
    together: every round of probes of every request is one :func:`perfmodel.predict` call (a sizing
    costs a few calls of fixed overhead each, so many small sizings are mostly overhead).

    A request may set :data:`REQUEST_FIELDS`: ``target_ops_s`` [1/s], ``slo_p99_ms`` [ms],
    ``dataset_gib`` [GiB] and the workload's ``read_fraction`` [-] / ``object_bytes`` [B]; ``common``
    holds every other argument of :func:`size` (platforms, knobs, ``max_nodes``, ...) and any of
    those fields the requests share. Each table is the one ``size`` returns for that request
    (:func:`perfmodel.plan.uncertain.size_uncertain` and the advisor's count grid size this way).
    """
    for request in requests:
        unknown = sorted(set(request) - set(REQUEST_FIELDS))
        if unknown:
            allowed = ", ".join(REQUEST_FIELDS)
            raise ValueError(f"size_many: a request sets {unknown[0]!r}; a request may set {allowed} (the "
                             f"rest goes in the common arguments)")  # fmt: skip
    names = set(inspect.signature(size).parameters) - {"workload", "knobs"}
    args = {k: v for k, v in common.items() if k in names}
    knobs = {k: v for k, v in common.items() if k not in names}
    smt = _one_smt_mode(knobs)  # one knobs dict for every search: their probes share predict calls
    if args.get("prices") is not None:  # a price table read once
        args["prices"] = _price_table(args["prices"], args.get("pricing"))[0]
    jobs = []
    for request in requests:
        wl = workload.with_changes(
            **{k: request[k] for k in ("read_fraction", "object_bytes") if k in request}
        )
        here = {
            **args,
            **{k: request[k] for k in ("target_ops_s", "slo_p99_ms", "dataset_gib") if k in request},
        }
        if "slo_p99_ms" not in here:
            raise ValueError("size_many: slo_p99_ms, in the common arguments or in every request")
        jobs.append(_setup(wl, **here, smt=smt, knobs=knobs))
    rows = _run_searches([job.search for job in jobs])
    return [_finish(job, r) for job, r in zip(jobs, rows, strict=True)]


@dataclass(frozen=True)
class _Job:
    """One sizing request, checked and set up: its search (candidates added) and what its table needs."""

    search: _Search
    spec: SystemSpec
    w: Workload  # the open workload at the target
    interval: float | None
    cost: Mapping[str, float] | None
    prices: tuple[PriceTable | None, dict]  # the table and the pricing options
    target: tuple[float, float, str]  # target, target [ops/s], target unit
    options: dict  # the request's attrs


def _setup(workload: Workload, *, target_ops_s=None, slo_p99_ms, system, platforms=DEFAULT_PLATFORMS,
           dataset_gib=None, replication_factor=None, max_utilization=0.7, failure_tolerance=1,
           fill_limit=0.7, max_nodes=128, params=None, interval=0.9, cost=None, network=None, device=None,
           instances_per_server=None, sync_replicas=0, target=None, target_unit="ops/s", prices=None,
           pricing=None, smt=None, knobs) -> _Job:  # fmt: skip
    """:func:`size`'s request checked, its workload and candidates set up (``knobs`` without
    ``threads_per_core``, which is ``smt``)."""
    target_ops_s, target, target_unit = _resolve_target(target, target_ops_s, target_unit, workload, system,
                                                        params)  # fmt: skip
    _check_request(target_ops_s, slo_p99_ms, max_utilization, fill_limit, failure_tolerance, max_nodes,
                   dataset_gib, replication_factor, interval)  # fmt: skip
    spec, price_table = load_system(system), _price_table(prices, pricing)
    _check_topology_options(spec, instances_per_server, sync_replicas)
    w = _open_workload(workload, target_ops_s, dataset_gib, replication_factor)
    loaded = _candidates(platforms)
    terms = equal_terms(loaded, network, device)
    search = _Search(system, spec, w, params, terms, knobs, int(max_nodes), int(failure_tolerance),
                     float(max_utilization), float(slo_p99_ms), float(fill_limit),
                     int(sync_replicas))  # fmt: skip
    _add_candidates(search, loaded, smt, instances_per_server)
    options = dict(max_nodes=int(max_nodes), slo_p99_ms=float(slo_p99_ms),
                   max_utilization=float(max_utilization), topology=spec.topology, system=spec.id,
                   failure_tolerance=int(failure_tolerance))  # fmt: skip
    goal = (float(target), float(target_ops_s), target_unit)
    return _Job(search, spec, w, interval, cost, price_table, goal, options)


def _finish(job: _Job, rows: list[dict]) -> pd.DataFrame:
    """The table of one searched request: its rows, ranges, prices, order and attrs (:func:`size`)."""
    search, spec, interval = job.search, job.spec, job.interval
    out, range_note = _table(search, rows, spec, interval)
    target, target_ops_s, target_unit = job.target
    out["throughput_target_unit"] = from_ops_per_s(out.throughput_ops_s, target_unit, job.w, search.params)
    out = _priced_and_sorted(out, job.cost)
    out.attrs.update(**_monthly_costs(out, *job.prices), terms=search.terms["note"],
                     interval=None if range_note else interval, target=target, target_unit=target_unit,
                     target_ops_s=target_ops_s, caveat=_caveat(spec.id, search.params), range_note=range_note,
                     **job.options)  # fmt: skip
    return out


def _caveat(system: str, params) -> str:
    """How far to trust the answer: how fits on a lab's own runs carried (a set with ``scope: lab``),
    else how the model did on labs it was not fitted on."""
    return caveats.own_lab_caveat(system) if parameter_scope(params) == "lab" else caveats.caveat(system)


def _priced_and_sorted(out: pd.DataFrame, cost) -> pd.DataFrame:
    """``cost`` per plan (price per server x servers) where prices are given; feasible first, fewest
    servers first."""
    if cost is not None:
        unknown = sorted(set(out.platform) - set(cost))
        if unknown:
            raise ValueError(f"cost: no price for platform {unknown[0]!r}")
        out["cost"] = [cost[p] * n for p, n in zip(out.platform, out.nodes, strict=True)]
    out = out.sort_values(["feasible", "nodes"], ascending=[False, True], kind="stable")
    return out.reset_index(drop=True)


def _price_table(prices, pricing) -> tuple[PriceTable | None, dict]:
    """The price table ``size(prices=...)`` names, loaded, and the checked ``pricing`` options."""
    options = dict(pricing or {})
    unknown = sorted(set(options) - set(PRICING_OPTIONS))
    if unknown:
        raise ValueError(f"pricing: unknown option {unknown[0]!r}; known: {', '.join(PRICING_OPTIONS)}")
    if prices is None:
        if options:
            raise ValueError("pricing: give prices= (a price table) with it")
        return None, options
    if isinstance(prices, str) and prices == "shipped":
        table = load_prices("shipped")
    elif isinstance(prices, str | Path):
        table = load_prices(prices, base="shipped")
    elif isinstance(prices, PriceTable):
        table = prices
    else:
        raise ValueError(
            f"prices: 'shipped', a price table file or a PriceTable, got {type(prices).__name__}"
        )
    probe = PriceEntry("pricing-check", "cloud", "USD", "2000-01-01", on_demand_usd_per_month=1.0)
    monthly_cost(probe, assumptions=table.assumptions, **options)  # a ValueError naming a bad option
    return table, options


def _monthly_costs(out: pd.DataFrame, table: PriceTable | None, options: dict) -> dict:
    """The columns ``size(prices=...)`` adds, in place: ``price_usd_per_month`` (one server [USD/month],
    :func:`perfmodel.inputs.prices.monthly_cost` with ``options``), ``cost_usd_per_month`` (x servers;
    NaN for an infeasible plan or a platform the table does not price) and ``cheapest`` (the feasible
    plan(s) of least monthly cost). Returns the attrs: ``price_note`` (the table, its dates, the term,
    and the platforms left unpriced), ``prices``, ``pricing`` (none without a table)."""
    if table is None:
        return {}
    per_server = {}
    for platform in dict.fromkeys(out.platform):
        entry = table.entries.get(platform)
        per_server[platform] = (
            math.nan if entry is None else monthly_cost(entry, assumptions=table.assumptions, **options)
        )
    out["price_usd_per_month"] = out.platform.map(per_server).astype(float)
    out["cost_usd_per_month"] = np.where(out.feasible, out.price_usd_per_month * out.nodes, np.nan)
    costs = out.cost_usd_per_month
    out["cheapest"] = (costs.notna() & np.isclose(costs, costs.min())) if costs.notna().any() else False
    term = str(options.get("term", "on_demand")).replace("_", "-")
    unpriced = sorted(p for p, v in per_server.items() if math.isnan(v))
    note = f"{table.describe()}; {term} prices"
    if unpriced:
        note += f"; no {term} price for {', '.join(unpriced)} (no cost given)"
    return {"price_note": note, "prices": table.describe(), "pricing": dict(options)}


def _resolve_target(target, target_ops_s, target_unit, workload, system, params):
    """``(target_ops_s, target, target_unit)`` from exactly one of ``target_ops_s`` and ``target``."""
    if (target is None) == (target_ops_s is None):
        raise ValueError("target_ops_s: give exactly one of target_ops_s and target (with target_unit)")
    if target is None:
        return target_ops_s, target_ops_s, "ops/s"
    if not isinstance(target, int | float | np.integer | np.floating) or not math.isfinite(target) \
            or target <= 0:  # fmt: skip
        raise ValueError(f"target: must be a number > 0, got {target!r}")
    return target_ops_per_s(target, target_unit, workload, system, params), target, target_unit


def _check_topology_options(spec, instances_per_server, sync_replicas) -> None:
    """``instances_per_server`` only for an ``instances`` topology, ``sync_replicas`` only for a
    primary with replicas, each a whole number."""
    if instances_per_server is not None:
        if spec.topology != "instances":
            raise ValueError(f"instances_per_server: {spec.id} is deployed as {spec.topology}, not as "
                             f"instances per server")  # fmt: skip
        if not isinstance(instances_per_server, int | np.integer) or instances_per_server < 1:
            raise ValueError(
                f"instances_per_server: must be a whole number >= 1, got {instances_per_server!r}"
            )
    if sync_replicas:
        if spec.topology != "primary_replicas":
            raise ValueError(f"sync_replicas: {spec.id} is deployed as {spec.topology}, not as a primary "
                             f"with replicas")  # fmt: skip
        if not isinstance(sync_replicas, int | np.integer) or sync_replicas < 0:
            raise ValueError(f"sync_replicas: must be a whole number >= 0, got {sync_replicas!r}")


def _open_workload(workload: Workload, target_ops_s, dataset_gib, replication_factor) -> Workload:
    """The workload as open arrivals at the target, with the sizing's data set and RF."""
    changes = {"arrival_rate": float(target_ops_s), "clients": None}
    if dataset_gib is not None:
        changes["dataset_bytes"] = float(dataset_gib) * 2**30
    if replication_factor is not None:
        changes["replication_factor"] = float(replication_factor)
    return replace(workload, **changes)


def _candidates(platforms) -> list[Platform]:
    """The candidate platforms, loaded."""
    if isinstance(platforms, str | Platform):
        platforms = [platforms]
    if len(platforms) == 0:
        raise ValueError("platforms: give at least one platform (a catalog id, a YAML path or a Platform)")
    return [p if isinstance(p, Platform) else load_platform(p) for p in platforms]


def _one_smt_mode(knobs: dict):
    """The ``threads_per_core`` knob, taken out of ``knobs`` (None: every SMT mode is a candidate)."""
    smt = knobs.pop("threads_per_core", None)
    if smt is not None:
        settings.check("threads_per_core", smt)
        if np.ndim(smt) != 0:
            raise ValueError(f"threads_per_core: one SMT mode for a sizing, got {smt!r}")
    return smt


def _add_candidates(search: _Search, loaded, smt, instances_per_server) -> None:
    """Every candidate of ``loaded`` (each SMT mode, or ``smt`` alone) added to ``search``; a platform
    without the SMT mode asked for is a refusal."""
    for p in loaded:
        modes = [t for t in p.smt_modes if smt is None or float(t) == float(smt)]
        if not modes:
            modes_text = ", ".join(map(str, p.smt_modes))
            reason = f"SMT{float(smt):g} is not a mode of {p.id} (modes: {modes_text})"
            search.unmatched.append(search.refused(p, float(smt), reason))
        for t in modes:
            search.add(p, float(t), instances_per_server)


def _table(search: _Search, rows: list[dict], spec, interval) -> tuple[pd.DataFrame, str]:
    """Every candidate searched (``rows``): the table (all columns present) and the range note."""
    out = pd.DataFrame(rows)
    for col in TABLE_COLUMNS + [f"nodes_for_{c}" for c in CONSTRAINTS] + _EXTRA:
        if col not in out.columns:
            out[col] = "" if col in _TEXT else np.nan
    # a range from a band too wide to act on is not computed: the attrs' range_note says why
    own = parameter_scope(search.params) == "lab"  # a lab's own fit: the band of a lab fitted on its runs
    range_note = "" if interval is None else bands.band_note(spec.id, level=float(interval), own_lab=own)
    if interval is not None and out.feasible.any() and not range_note:
        search.add_ranges(out, float(interval))
    out["topology"] = spec.topology
    out["replicas"] = np.where(out.feasible & (spec.topology == "primary_replicas"), out.nodes - 1, np.nan)
    return out, range_note


_TEXT = ("binding", "bottleneck", "tail_regime", "reason", "network", "device", "search")
_EXTRA = ["throughput_ops_s", "latency_p99_ms_one_fewer", "max_utilization_one_fewer", "latency_p99_ms_best",
          "device", "search", "system"]  # fmt: skip


def _tail_regime(share_here: float, share_fewer: float) -> str:
    """Where the p99 comes from: ``bursts`` (>= 1% of requests meet a flush burst or a memtable stall,
    so the p99 is one of their waits), ``step`` (one server fewer is in that regime: the count sits
    just past a step of the p99, and a small error moves it), or ``body``."""
    if share_here >= 0.01:
        return "bursts"
    if share_fewer >= 0.01:
        return "step"
    return "body"


@dataclass(frozen=True)
class _Candidate:
    platform: Platform  # the server
    tpc: float
    instances: int  # per server
    unit: Platform  # one model node: the server, or its slice
    device: str
    capacity_bytes: float  # what one server holds of the data set [B]


def first_true(lo, hi, test, points: int = 1, good=None) -> np.ndarray:
    """Per task, the least ``s`` in ``[lo, hi]`` with ``test`` True, or -1 where it holds at none.

    Assumes each task's test is False below some count and True from it on. Gallops from
    ``lo`` until a count passes or ``hi`` fails (probes ``lo``, ``lo + 1``, ``lo + 3``,
    ``lo + 7``, ...: the step doubles), then narrows the bracket: with ``points = 1`` by
    bisection, about ``2 log2(answer - lo)`` rounds of one probe per task; with more, each
    round probes ``points`` counts per task (the next ``points`` galloping counts, or as many
    evenly inside the bracket), fewer rounds for a test whose every call has a fixed cost.
    ``test(tasks, counts)`` evaluates every probe of a round at once (arrays, a task repeated
    for its several probes) and returns a bool array. ``good`` (per task, -1: none) is a count
    already known to pass: the search narrows ``[lo, good]`` without galloping.
    """
    lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
    bad = lo - 1  # the largest count known to fail (lo - 1: none known)
    # the least count known to pass
    good = np.full(lo.shape, -1, dtype=np.int64) if good is None else np.asarray(good, dtype=np.int64).copy()
    step = np.ones(lo.shape, dtype=np.int64)
    done = (hi < lo) | ((good >= 0) & (good - bad <= 1))
    while not done.all():
        tasks, probes = [], []
        for t in np.flatnonzero(~done):
            if good[t] < 0:  # galloping: the next `points` counts bad + step, + 2 step, + 4 step, ...
                counts = np.minimum(bad[t] + step[t] * (2 ** np.arange(points)), hi[t])
            else:  # inside the bracket (bad, good)
                width = good[t] - bad[t] - 1
                counts = (
                    bad[t] + 1 + (np.arange(1, min(points, width) + 1) * width) // (min(points, width) + 1)
                )
            counts = np.unique(counts)
            tasks.append(np.full(len(counts), t))
            probes.append(counts)
        tasks_a, probes_a = np.concatenate(tasks), np.concatenate(probes)
        ok = np.asarray(test(tasks_a, probes_a), dtype=bool)
        for t in np.unique(tasks_a):
            mine = tasks_a == t
            passed, failed = probes_a[mine & ok], probes_a[mine & ~ok]
            if len(passed):
                good[t] = passed.min() if good[t] < 0 else min(good[t], passed.min())
            below = failed[failed < good[t]] if good[t] >= 0 else failed
            if len(below):
                bad[t] = max(bad[t], below.max())
            if good[t] < 0:
                step[t] *= 2**points
                done[t] = bad[t] >= hi[t]
            done[t] = done[t] or (good[t] >= 0 and good[t] - bad[t] <= 1)
    return good


def _run_searches(searches: Sequence[_Search]) -> list[list[dict]]:
    """Each search's rows (:meth:`_Search.answers`), the searches run together: :func:`first_true` over
    every search's tasks at once, so each round of probes, and the prefetch after, is one
    :func:`perfmodel.predict` call per shared model (:func:`_predict_pending`)."""
    if not searches:
        return []
    bounds = [search.tasks() for search in searches]
    owner = np.concatenate([np.full(len(lo), j) for j, (lo, _) in enumerate(bounds)]).astype(np.int64)
    local = np.concatenate([np.arange(len(lo)) for lo, _ in bounds]).astype(np.int64)
    names = ("throughput", "slo")

    def test(tasks, counts):
        keys = {}
        for j in np.unique(owner[tasks]):
            mine = owner[tasks] == j
            keys[j] = searches[j].keys(local[tasks[mine]] // 2, counts[mine])
        _predict_pending([(searches[j], k) for j, k in keys.items()], None)
        out = np.zeros(len(tasks), dtype=bool)
        for j, k in keys.items():
            mine = np.flatnonzero(owner[tasks] == j)
            out[mine] = [searches[j].meets(searches[j].cache[key], names[local[tasks[t]] % 2])
                         for key, t in zip(k, mine, strict=True)]  # fmt: skip
        return out

    lo = np.concatenate([b[0] for b in bounds]).astype(np.int64)
    hi = np.concatenate([b[1] for b in bounds]).astype(np.int64)
    first = first_true(lo, hi, test) if len(lo) else np.zeros(0, dtype=np.int64)
    parts = [first[owner == j] for j in range(len(searches))]
    prefetch = [(search, search.prefetch_keys(part)) for search, part in zip(searches, parts, strict=True)]
    _predict_pending(prefetch, None)
    return [search.answers(part) for search, part in zip(searches, parts, strict=True)]


def _predict_pending(requests: Sequence[tuple[_Search, list]], interval: float | None) -> None:
    """Predict the keys of ``requests`` (``(search, keys)``) their searches have not cached: one
    :func:`perfmodel.predict` call for all searches that share the system, parameters and knobs
    (and the workload's consistency levels and operation), each search caching its rows."""
    groups: dict[tuple, list] = {}
    for search, keys in requests:
        todo = sorted({k for k in keys if k not in search.cache})
        if todo:
            args = search.predict_args(todo)
            w = args[1]
            shared = (search.system if isinstance(search.system, str) else id(search.system),
                      search.params if isinstance(search.params, str | None) else id(search.params),
                      id(search.knobs), w.operation, str(w.consistency), str(w.read_consistency))  # fmt: skip
            groups.setdefault(shared, []).append((search, todo, args))
    for parts in groups.values():
        search = parts[0][0]
        lengths = [len(todo) for _, todo, _ in parts]
        units, works, nodes, tpc, drives = zip(*(args for *_, args in parts), strict=True)
        frame = predict(
            [u for part in units for u in part], _concat_workloads(works, lengths),
            nodes=np.concatenate(nodes), system=search.system, params=search.params, interval=interval,
            threads_per_core=np.concatenate(tpc), device=np.concatenate(drives), **search.knobs,
        )  # fmt: skip
        first = 0
        for (owner, todo, _), n in zip(parts, lengths, strict=True):
            owner.store(todo, frame, first, interval)
            first += n


def _concat_workloads(workloads: Sequence[Workload], lengths: Sequence[int]) -> Workload:
    """One workload of ``sum(lengths)`` configurations: ``workloads[i]`` broadcast to ``lengths[i]``,
    one after the other (a field every one holds as the same scalar stays a scalar)."""
    if len(workloads) == 1:
        return workloads[0]
    changes = {}
    for f in (f for f in fields(Workload) if f.init):
        values = [getattr(w, f.name) for w in workloads]
        first = values[0]
        if all(np.ndim(v) == 0 and (v is first or v == first) for v in values):
            continue
        changes[f.name] = np.concatenate([np.broadcast_to(np.asarray(v), (n,)) for v, n in
                                          zip(values, lengths, strict=True)])  # fmt: skip
    return replace(workloads[0], **changes)


class _Search:
    """Candidates (platform x SMT mode x instances per server) and their predictions by server count."""

    def __init__(
        self, system, spec, w, params, terms, knobs, max_nodes, failures, max_util, slo_ms, fill_limit,
        sync_replicas=0,
    ):  # fmt: skip
        self.system, self.spec, self.w, self.params = system, spec, w, params
        self.values = spec.with_parameters(load_parameters(params))  # the spec's own defaults included
        self.terms, self.knobs = terms, knobs
        self.max_nodes, self.failures, self.max_util, self.slo_ms = max_nodes, failures, max_util, slo_ms
        self.fill_limit = fill_limit
        self.topology = spec.topology
        self.rf = int(np.max(w.replication_factor))
        zones = np.asarray(knobs.get("zones", 1.0), dtype=float)
        self.zones = int(np.nanmax(zones)) if np.isfinite(zones).any() else 1
        # the least surviving servers: replicas on distinct servers, a server in every zone
        self.least = max(self.rf, self.zones, 1) if self.topology in ("sharded", "instances") else 1
        self.sync_replicas = sync_replicas
        if self.topology == "primary_replicas":  # a synchronous commit needs its replicas up
            self.least = 1 + sync_replicas
        self.candidates: list[_Candidate] = []
        self.groups: list[list[int]] = []  # candidates of one (platform, SMT mode): its instance options
        self.refusals: list[dict] = []
        self.unmatched: list[dict] = []  # platforms without the SMT mode asked for (rows first)
        self.cache: dict[tuple[int, int, str], dict] = {}

    # ---------------------------------------------------------------- candidates
    def add(self, platform: Platform, tpc: float, fixed_instances: int | None) -> None:
        """The candidate (platform, SMT mode), one per instance count tried."""
        cores = self.knobs.get("cores")
        if cores is not None and np.ndim(cores) == 0 and float(cores) > platform.cores:
            self.refusals.append(self.refused(platform, tpc, f"cores {float(cores):g} is more than its "
                                                             f"{platform.cores} cores"))  # fmt: skip
            return
        options = [1]
        if self.topology == "instances":
            cap = float(self.knobs.get("thread_cap", self.spec.thread_cap))
            most = topology.max_instances(replace(platform, threads_per_core=int(tpc)), cap)
            if self.spec.dataset_in == "drives":
                most = min(most, min(s.count for s in platform.storage))
            options = [fixed_instances] if fixed_instances else topology.instance_options(most)
            if fixed_instances and fixed_instances > platform.cores:
                self.refusals.append(self.refused(platform, tpc, f"{fixed_instances} instances per server "
                                                                 f"need a core each: {platform.id} has "
                                                                 f"{platform.cores}"))  # fmt: skip
                return
        group = []
        for k in options:
            server = platform if self.terms["networks"][platform.id] == platform.network else \
                replace(platform, network=self.terms["networks"][platform.id])  # fmt: skip
            unit = topology.instance_slice(server, k)
            group.append(len(self.candidates))
            self.candidates.append(_Candidate(server, tpc, k, unit, self.terms["devices"][platform.id],
                                              self._server_capacity(server)))  # fmt: skip
        self.groups.append(group)

    def refused(self, platform: Platform, tpc: float, reason: str) -> dict:
        return {"platform": platform.id, "threads_per_core": tpc, "system": self.spec.id, "nodes": 0,
                "feasible": False, "binding": "", "reason": reason, "instances_per_server": np.nan,
                "network": self.terms["networks"][platform.id],
                "device": self.terms["devices"][platform.id]}  # fmt: skip

    def _server_capacity(self, server: Platform) -> float:
        """What one server holds of the data [B]: its drives x ``fill_limit``, or its RAM x
        ``cache_share_of_ram`` for an in-memory store."""
        if self.spec.dataset_in == "memory":
            return server.ram_bytes * self.spec.parameter(self.values, "cache_share_of_ram")
        count = next(s.count for s in server.storage if s.device == _own_device(server))
        return server.device_spec(self.terms["devices"][server.id]).capacity_bytes * count * self.fill_limit

    # ---------------------------------------------------------------- closed forms
    def servers_for_capacity(self, c: _Candidate) -> float:
        """Least surviving servers whose capacity holds the data (inf: none does)."""
        data = float(np.max(self.w.dataset_bytes))
        if data <= 0:
            return 1.0
        if self.topology == "primary_replicas":  # every server holds a whole copy
            return 1.0 if data <= c.capacity_bytes else math.inf
        copies = self.rf if self.topology in ("sharded", "instances") else 1
        return float(max(1, math.ceil(data * copies / c.capacity_bytes - 1e-9)))

    # ---------------------------------------------------------------- predictions
    def keys(self, idx, surviving, interval: float | None = None) -> list[tuple[int, int, str]]:
        """The cache keys of candidates ``idx`` at ``surviving`` servers (banded at ``interval``)."""
        end = "" if interval is None else f"{interval:g}"
        return [(int(i), int(s), end) for i, s in zip(idx, surviving, strict=True)]

    def evaluate(self, idx, surviving, interval: float | None = None) -> list[dict]:
        """Predictions for candidates ``idx`` at ``surviving`` servers (cached)."""
        keys = self.keys(idx, surviving, interval)
        _predict_pending([(self, keys)], interval)
        return [self.cache[k] for k in keys]

    def predict_args(self, todo: list[tuple[int, int, str]]) -> tuple[list, Workload, np.ndarray, np.ndarray,
                                                                       np.ndarray]:  # fmt: skip
        """What :func:`perfmodel.predict` takes for the keys ``todo``: the model nodes' platforms, the
        workload, the node counts, the SMT modes and the data drives."""
        cand = [self.candidates[i] for i, _, _ in todo]
        s = np.array([t[1] for t in todo], dtype=float)
        k = np.array([c.instances for c in cand], dtype=float)
        lay = topology.layout(self.topology, self.w, s, k, self.sync_replicas)
        nodes = np.broadcast_to(np.asarray(lay.nodes, dtype=float), s.shape)
        tpc = np.array([c.tpc for c in cand], dtype=float)
        return (
            [c.unit for c in cand],
            lay.workload,
            nodes,
            tpc,
            np.array([c.device for c in cand], dtype=object),
        )

    def store(self, todo: list[tuple[int, int, str]], frame: pd.DataFrame, first: int,
              interval: float | None) -> None:  # fmt: skip
        """Cache the predictions of ``todo``, rows ``first``, ``first + 1``, ... of ``frame``."""
        ends = ("",) if interval is None else ("_lower", "_upper")
        cols = {
            end: [frame[c + end].to_numpy(float) for c in UTIL_COLUMNS if c + end in frame] for end in ends
        }
        p99 = {end: frame["latency_p99_ms" + end].to_numpy(float) for end in ends}
        saturated = frame["saturated"].to_numpy(bool)
        if interval is None:
            through, neck = frame["throughput_ops_s"].to_numpy(float), frame["bottleneck"].to_numpy(object)
            share = frame["tail_event_share"].to_numpy(float)
        for j, key in enumerate(todo, start=first):
            rec = {}
            for end in ends:
                rec["util" + end] = max(float(c[j]) for c in cols[end])
                rec["p99" + end] = float(p99[end][j])
            rec["saturated"] = bool(saturated[j])
            if interval is None:
                rec.update(throughput=float(through[j]), bottleneck=str(neck[j]), share=float(share[j]))
            self.cache[key] = rec

    def meets(self, rec: dict, name: str, end: str = "") -> bool:
        """Whether a prediction meets the throughput or the SLO constraint: no station saturated at
        the centre, and the utilisation / p99 at the band's ``end`` ("" : the centre) within bounds."""
        if rec["saturated"]:
            return False
        if name == "throughput":
            return rec["util" + end] <= self.max_util
        return rec["p99" + end] <= self.slo_ms

    # ---------------------------------------------------------------- search
    def tasks(self) -> tuple[np.ndarray, np.ndarray]:
        """The search's tasks, each candidate's throughput and SLO constraint in turn: their least and
        largest surviving counts (none when no count up to ``max_nodes`` survives the failures)."""
        n, hi_s = len(self.candidates), self.max_nodes - self.failures
        if not n or hi_s < self.least:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.full(2 * n, self.least), np.full(2 * n, hi_s)

    def answers(self, first: np.ndarray) -> list[dict]:
        """Every candidate's row from the least passing counts ``first`` of :meth:`tasks` (cached
        predictions, :meth:`prefetch_keys` fetched); per (platform, SMT mode) the instance count with
        the fewest servers."""
        hi_s = self.max_nodes - self.failures
        found = {}
        if len(first):
            first = first.reshape(len(self.candidates), 2)
            found = {name: first[:, j] for j, name in enumerate(("throughput", "slo"))}
        rows = []
        for group in self.groups:
            answers = [self._answer(i, found, hi_s) for i in group]
            feasible = [a for a in answers if a["feasible"]]
            rows.append(min(feasible, key=lambda a: (a["nodes"], a["instances_per_server"])) if feasible
                        else max(answers, key=lambda a: a["instances_per_server"]))  # fmt: skip
        return self.unmatched + rows + self.refusals

    def prefetch_keys(self, first: np.ndarray) -> list[tuple[int, int, str]]:
        """What every candidate's answer reads, to predict in one call: its count and one fewer, or the
        largest count where none works (the answers then find them in the cache)."""
        if not len(first):
            return []
        first, hi_s = first.reshape(len(self.candidates), 2), self.max_nodes - self.failures
        idx, counts = [], []
        for i, c in enumerate(self.candidates):
            s = max(
                [self.least, self.servers_for_capacity(c)] + [v if v >= 0 else math.inf for v in first[i]]
            )
            for count in (hi_s,) if not math.isfinite(s) or s > hi_s else (int(s), int(s) - 1):
                if count >= self.least:
                    idx.append(i)
                    counts.append(count)
        return self.keys(idx, counts)

    def _answer(self, i: int, found: dict, hi_s: int) -> dict:
        c = self.candidates[i]
        f = self.failures
        row = {"platform": c.platform.id, "threads_per_core": c.tpc, "system": self.spec.id,
               "network": self.terms["networks"][c.platform.id], "device": c.device,
               "instances_per_server": c.instances, "search": ""}  # fmt: skip
        top = self.max_nodes
        if hi_s < self.least:
            need = self.least + f
            spread = f" over {self.zones} zones" if self.zones > 1 else ""
            reason = (f"RF {self.rf}{spread} with {f} failures needs {need} servers, more than {top} "
                      f"(raise max_nodes)")  # fmt: skip
            return self._infeasible(row, reason, {k: math.nan for k in CONSTRAINTS})
        s_cap = self.servers_for_capacity(c)
        s_thr, s_slo = (float(found[k][i]) if found[k][i] >= 0 else math.inf for k in ("throughput", "slo"))
        needs = {"replication": float(self.least), "capacity": max(s_cap, self.least), "throughput": s_thr,
                 "slo": s_slo}  # fmt: skip
        for name, s in needs.items():
            row[f"nodes_for_{name}"] = s + f if s + f <= top else math.nan
        s = max(needs.values())
        if not math.isfinite(s) or s > hi_s:
            reason, best = self._why_not(c, i, needs, hi_s)
            return self._infeasible(row, reason, needs, best)
        s = start = int(s)
        rec = self.evaluate([i], [s])[0]
        joint = self.meets(rec, "throughput") and self.meets(rec, "slo")
        while not joint and s < min(hi_s, start + _JOINT_STEPS):  # a p99 that is not monotone in the count
            s += 1
            rec = self.evaluate([i], [s])[0]
            joint = self.meets(rec, "throughput") and self.meets(rec, "slo")
        if not joint:
            reason = (
                f"throughput and the SLO each hold from {start + f} servers, but not together at any "
                f"count from {start + f} to {s + f} (the p99 is not monotone in the server count)"
            )
            return self._infeasible(row, reason, needs)
        if s > start:
            row["search"] = (
                f"the p99 is not monotone in the server count here: each constraint alone holds "
                f"from {start + f} servers, both together from {s + f}"
            )
        fewer = self.evaluate([i], [s - 1])[0] if s - 1 >= self.least else None
        nodes = s + f
        binding = [name for name in CONSTRAINTS if row[f"nodes_for_{name}"] == nodes]
        row.update(
            nodes=nodes, feasible=True, binding="+".join(binding) or "slo", reason="",
            throughput_ops_s=rec["throughput"], latency_p99_ms=rec["p99"], max_utilization=rec["util"],
            bottleneck=rec["bottleneck"],
            tail_regime=_tail_regime(rec["share"], fewer["share"] if fewer else 0.0),
            latency_p99_ms_one_fewer=(fewer["p99"] if not fewer["saturated"] else math.inf) if fewer
            else math.nan,
            max_utilization_one_fewer=fewer["util"] if fewer else math.nan,
        )  # fmt: skip
        return row

    def _infeasible(self, row: dict, reason: str, needs: dict, best: float = math.nan) -> dict:
        row.update(nodes=0, feasible=False, binding="", tail_regime="", reason=reason,
                   throughput_ops_s=math.nan, latency_p99_ms=math.nan, max_utilization=math.nan,
                   bottleneck="", latency_p99_ms_best=best)  # fmt: skip
        return row

    def _why_not(self, c: _Candidate, i: int, needs: dict, hi_s: int) -> tuple[str, float]:
        """Why no count up to ``max_nodes`` works, in words, and the p99 at the largest count where
        its utilisations are within the cap (the lowest the servers reach) [ms] (NaN: none)."""
        top = self.max_nodes
        rec = self.evaluate([i], [hi_s])[0]
        why = []
        if not math.isfinite(needs["capacity"]) or needs["capacity"] > hi_s:
            data = float(np.max(self.w.dataset_bytes))
            where = "RAM for the data" if self.spec.dataset_in == "memory" else "usable drive space"
            if self.topology == "primary_replicas":
                why.append(f"data does not fit: every server holds the whole data set ({data / 1e12:.4g} "
                           f"TB), one {c.platform.id} has {c.capacity_bytes / 1e12:.4g} TB of "
                           f"{where}")  # fmt: skip
            else:
                copies = self.rf if self.topology in ("sharded", "instances") else 1
                why.append(f"data does not fit: the data set x RF is {data * copies / 1e12:.4g} TB, {top} "
                           f"servers hold {hi_s * c.capacity_bytes / 1e12:.4g} TB of {where} "
                           f"(raise max_nodes, or larger servers)")  # fmt: skip
        if not math.isfinite(needs["throughput"]):
            u = rec["util"]
            target = float(np.max(self.w.arrival_rate))
            if self.topology == "primary_replicas":
                why.append(f"the primary takes every write: even with {hi_s - 1} replicas its busiest "
                           f"station ({rec['bottleneck']}) {_load(u, self.max_util)}; replicas add read "
                           f"capacity, not write capacity -- shard the data over several primaries (not "
                           f"modelled here) or choose a larger server")  # fmt: skip
            elif not math.isfinite(u):
                why.append(f"saturated at every size up to {top} servers (raise max_nodes)")
            else:
                why.append(f"needs more than {top} servers for {target:,.0f} ops/s: at {top} the busiest "
                           f"station {_load(u, self.max_util)} (raise max_nodes)")  # fmt: skip
        if not math.isfinite(needs["slo"]):
            if self.meets(rec, "throughput"):
                why.append(f"p99 never <= {self.slo_ms:g} ms up to {top} servers (best "
                           f"{_ms(rec['p99'], self.slo_ms)} ms, at {top}: a floor more servers do not "
                           f"lower)")  # fmt: skip
            elif math.isfinite(needs["throughput"]):
                why.append(f"p99 never <= {self.slo_ms:g} ms up to {top} servers")
        best = rec["p99"] if self.meets(rec, "throughput") else math.nan
        return "; ".join(why) or f"no single size up to {top} servers meets every constraint at once", best

    # ---------------------------------------------------------------- bands
    def add_ranges(self, out: pd.DataFrame, interval: float) -> None:
        """``nodes_lower`` / ``nodes_upper`` and the p99 band of the feasible rows: the least counts at
        which throughput and the SLO hold at the optimistic / pessimistic end of the calibrated bands.

        A banded prediction costs about 40 central ones (parameter draws), so the counts are first
        guessed and then checked: the band at the answer gives each end's ratio to the centre (of the
        busiest utilisation and of the p99), the central predictions scaled by it give a guess ``g``,
        and one banded prediction at ``g`` and ``g - 1`` confirms it (``g`` passes, ``g - 1`` fails);
        an end whose guess is not confirmed is searched with banded predictions alone.
        """
        index = {(c.platform.id, c.tpc, c.instances): i for i, c in enumerate(self.candidates)}
        rows = [k for k in out.index[out.feasible]]
        cand = np.array([index[(out.at[k, "platform"], float(out.at[k, "threads_per_core"]),
                                int(out.at[k, "instances_per_server"]))] for k in rows])  # fmt: skip
        f, hi_s = self.failures, self.max_nodes - self.failures
        central = np.array([int(out.at[k, "nodes"]) - f for k in rows], dtype=np.int64)
        floor = np.array([max(self.least, self.servers_for_capacity(self.candidates[i])) for i in cand],
                         dtype=np.int64)  # fmt: skip
        banded = self.evaluate(cand, central, interval)  # the band at the answer
        ends = ("_lower", "_upper")
        row_of = np.repeat(np.arange(len(cand)), 2)  # per task (a row's end): the row and the end
        end_of = np.tile(np.arange(2), len(cand))
        n_tasks = len(row_of)
        bad = floor[row_of] - 1  # the largest count known to fail at the task's end (floor - 1: none)
        good = np.full(n_tasks, -1, dtype=np.int64)  # the least count known to pass (-1: none)
        ref = central[row_of].copy()  # the count whose band gives the ratios of the next guess

        def holds(active, counts):  # both constraints at the task's end of one banded prediction
            recs = self.evaluate(cand[row_of[active]], counts, interval)
            return np.array([self.meets(r, "throughput", ends[end_of[t]]) and
                             self.meets(r, "slo", ends[end_of[t]])
                             for r, t in zip(recs, active, strict=True)], dtype=bool)  # fmt: skip

        for _ in range(_GUESSES):
            open_ = np.flatnonzero((good < 0) | (good - bad > 1))
            if not len(open_):
                break
            edge = self.evaluate(cand[row_of[open_]], ref[open_], interval)
            mid = self.evaluate(cand[row_of[open_]], ref[open_])
            ru = np.array([_ratio(m["util"], e["util" + ends[end_of[t]]])
                           for m, e, t in zip(mid, edge, open_, strict=True)])  # fmt: skip
            rp = np.array([_ratio(m["p99"], e["p99" + ends[end_of[t]]])
                           for m, e, t in zip(mid, edge, open_, strict=True)])  # fmt: skip

            def scaled(active, counts, ru=ru, rp=rp, open_=open_):  # the centre scaled by the band's ratios
                recs = self.evaluate(cand[row_of[open_[active]]], counts)
                return [not r["saturated"] and r["util"] * ru[a] <= self.max_util
                        and (not math.isfinite(rp[a]) or r["p99"] * rp[a] <= self.slo_ms)
                        for r, a in zip(recs, active, strict=True)]  # fmt: skip

            top = np.where(good[open_] >= 0, good[open_], hi_s)
            guess = first_true(bad[open_] + 1, top, scaled)
            g = np.where(guess >= 0, guess, top)
            probe_t, probe_s = [], []
            for t, gt in zip(open_, g, strict=True):  # the guess and one below, where not yet known
                for count in (gt, gt - 1):
                    if bad[t] < count and (good[t] < 0 or count < good[t]):
                        probe_t.append(t)
                        probe_s.append(count)
            if probe_t:
                passed = holds(np.array(probe_t), np.array(probe_s))
                for t, count, ok in zip(probe_t, probe_s, passed, strict=True):
                    if ok:
                        good[t] = count if good[t] < 0 else min(good[t], count)
                    else:
                        bad[t] = max(bad[t], count)
            ref[open_] = g
        found = np.where((good >= 0) & (good - bad <= 1), good, -2)
        todo = np.flatnonzero(found == -2)
        if len(todo):  # guesses the band did not confirm: search them with banded predictions alone
            found[todo] = first_true(bad[todo] + 1, np.full(len(todo), hi_s),
                                     lambda a, c: holds(todo[a], c), points=4, good=good[todo])  # fmt: skip
        first = found.reshape(len(cand), 2)
        for e, column in enumerate(("nodes_lower", "nodes_upper")):
            values = np.where(first[:, e] < 0, np.nan, np.maximum(first[:, e], floor) + f)
            for k, v in zip(rows, values, strict=True):
                out.at[k, column] = float(v)
        for k, rec in zip(rows, banded, strict=True):
            out.at[k, "latency_p99_ms_lower"] = rec["p99_lower"]
            out.at[k, "latency_p99_ms_upper"] = rec["p99_upper"]


def _ratio(centre: float, edge: float) -> float:
    """A band's end over the centre (NaN where the centre is zero or not finite)."""
    return edge / centre if centre > 0 and math.isfinite(centre) else math.nan


def _load(u: float, cap: float) -> str:
    """A station's load in words: ``runs at 84.8% > 70%``, or ``is offered 2.66x what it can serve``."""
    return f"runs at {u:.1%} > {cap:.0%}" if u <= 1 else f"is offered {u:.3g}x what it can serve"


def _ms(value: float, near: float) -> str:
    """A latency [ms] with enough digits to differ from ``near``."""
    for digits in range(3, 10):
        text = f"{value:.{digits}g}"
        if float(text) != float(f"{near:.{digits}g}") or value == near:
            return text
    return repr(value)
