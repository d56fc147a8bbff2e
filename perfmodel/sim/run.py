"""``perfmodel.simulate``: independent replications of the node model, with confidence intervals.

:func:`simulate` builds the same station networks as :func:`perfmodel.predict`
(:func:`perfmodel.model.predict.build_model`) and simulates each configuration
``replications`` times, each replication seeded from ``(seed, replication
index)`` through :class:`numpy.random.SeedSequence` (so the same seed gives the
same answer, and every configuration of a grid sees common random numbers).
:func:`simulate_config` does the same for one :class:`~perfmodel.sim.config.SimConfig`
(a hand-built network).

The engine is chosen per configuration: the compiled Kiefer-Wolfowitz
recursion (:mod:`perfmodel.sim.fast`) for an open tandem without replicas or
flush bursts, else the SimPy engine (:mod:`perfmodel.sim.engine`).

Replications are independent tasks of :func:`perfmodel.run.execution.map_tasks`:
this process, local worker processes or a Dask cluster (``workers=``,
``scheduler=``) give identical numbers.

References: Law, A. M. (2015). Simulation Modeling and Analysis, 5th ed.,
sec. 9.4 (independent replications, Student t intervals) and 9.5.2
(warm-up deletion).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from perfmodel.model import bands, chain
from perfmodel.model.predict import BAND_COLUMNS, OUTPUT_COLUMNS
from perfmodel.run.execution import Interrupted, map_tasks, task_rng
from perfmodel.sim.config import SimConfig, config_from_model
from perfmodel.sim.distributions import FAMILIES
from perfmodel.sim.engine import run_simpy
from perfmodel.sim.fast import run_fast
from perfmodel.sim.results import records_frame, replication_metrics, spread_warning, t_interval
from perfmodel.solve.network import STATIONS

ENGINES = ("auto", "simpy", "fast")
#: metrics that get confidence-interval columns
CI_METRICS = tuple(c for c in OUTPUT_COLUMNS if c == "throughput_ops_s" or "latency" in c)


@dataclass
class SimulationResult:
    """What :func:`simulate` returns.

    ``summary``: one row per configuration (``predict``'s columns, the
    simulated values, ``<metric>_ci_low`` / ``_ci_high`` for throughput and
    latencies, ``replications`` finished). ``replication_metrics``: one row
    per (configuration, replication). ``records``: every request of every
    replication as a tidy DataFrame (built on first access). ``interrupted``:
    Ctrl-C stopped the run; finished replications are kept.
    """

    summary: pd.DataFrame
    replication_metrics: pd.DataFrame
    runs: list = field(default_factory=list, repr=False)  # (configuration, replication, SimConfig, Records)
    interrupted: bool = False
    _records: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def records(self) -> pd.DataFrame:
        """Tidy per-request records: ``configuration``, ``replication`` and the columns of
        :func:`perfmodel.sim.results.records_frame` (times in s)."""
        if self._records is None:
            visited = sorted({k for _, _, _, rec in self.runs for k in rec.waits})
            frames = []
            for i, r, cfg, rec in self.runs:
                frame = records_frame(rec, cfg, stations=visited)
                frame.insert(0, "replication", np.int32(r))
                frame.insert(0, "configuration", np.int32(i))
                frames.append(frame)
            self._records = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return self._records


#: requests per replication when none are given [count], at least
DEFAULT_REQUESTS = 100_000
#: ... and enough that each replication measures this many flushes of every node [count]: a
#: run that sees one flush or none is not a sample of the steady state (the README workload's
#: replications of 100 k requests split 264 k / 881 k ops/s: with and without a flush)
FLUSH_CYCLES = 5
#: the automatic run length stops here [count] (~20 s per replication of the SimPy engine)
MAX_AUTO_REQUESTS = 5_000_000
#: requests one replication may simulate [count]: its records take ~50 B each (2.5 GB here)
MAX_REQUESTS = 50_000_000
#: a replication measuring fewer flushes per node than this gets a warning [count]
MIN_FLUSH_CYCLES = 2.0


def flush_cycle_factor(size_scv: float) -> float:
    """``1 + Var[B^2] / E[B^2]^2`` for gamma flush sizes of squared CV ``size_scv`` [-]
    (gamma moments ``E[B^n] = theta^n k (k+1) ... (k+n-1)``, ``k = 1 / scv``)."""
    s = float(size_scv)
    return (1 + 2 * s) * (1 + 3 * s) / (1 + s)


def auto_requests(configs) -> int:
    """Requests per replication for ``configs`` (``None`` entries skipped) [count].

    ``max(DEFAULT_REQUESTS, FLUSH_CYCLES flush cycles of every node, after the 10%
    warm-up)``, at most :data:`MAX_AUTO_REQUESTS`: bursts are the rarest events of the
    model, and an average over a run must contain several of them. Where flush sizes
    vary (``flush_size_scv`` = s > 0) the cycles grow by ``1 + Var[B^2] / E[B^2]^2`` =
    ``(1 + 2s)(1 + 3s) / (1 + s)`` (gamma sizes; 6x at s = 1): what a read waits is
    length-biased, ``E[B^2] / 2 E[B]``, and its average over n flushes is as precise as
    that of one-size flushes over n / that factor.
    """
    cycles = [
        c.requests_per_flush * flush_cycle_factor(c.flush_size_scv)
        for c in configs
        if c is not None and np.isfinite(c.requests_per_flush)
    ]
    needed = max(cycles, default=0.0) * FLUSH_CYCLES / 0.9
    return int(min(max(DEFAULT_REQUESTS, math.ceil(needed)), MAX_AUTO_REQUESTS))


def _run_length_warning(cfg: SimConfig | None, measured: int) -> str:
    """Words when one replication measures fewer than :data:`MIN_FLUSH_CYCLES` flushes per node."""
    if cfg is None or not np.isfinite(cfg.requests_per_flush):
        return ""
    cycles = measured / cfg.requests_per_flush
    if cycles >= MIN_FLUSH_CYCLES:
        return ""
    enough = math.ceil(FLUSH_CYCLES * cfg.requests_per_flush / 0.9)
    return (
        f"each replication measures {cycles:.2g} flushes per node (one every "
        f"{cfg.requests_per_flush:,.0f} requests): too few to average over bursts; "
        f"use requests >= {enough:,}"
    )


def _check_run_length(requests, warmup, replications) -> tuple[int, int, int]:
    def whole(value, name):
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if isinstance(value, bool | str) or not math.isfinite(number) or number != int(number):
            raise ValueError(f"{name}: must be a whole number, got {value!r}")
        return int(number)

    requests = whole(requests, "requests")
    if requests <= 0:
        raise ValueError(f"requests: must be > 0, got {requests}")
    if requests > MAX_REQUESTS:
        raise ValueError(
            f"requests: at most {MAX_REQUESTS:,} per replication (each keeps ~50 B of records), got "
            f"{requests:,}; run more replications instead"
        )
    warmup = requests // 10 if warmup is None else whole(warmup, "warmup")
    if warmup < 0:
        raise ValueError(f"warmup: must be >= 0, got {warmup}")
    if warmup >= requests:
        raise ValueError(f"warmup: {warmup} requests leave none of the {requests} to measure")
    if requests - warmup < 2:
        raise ValueError(
            f"requests: measuring needs at least 2 requests after the warm-up, got {requests - warmup}"
        )
    replications = whole(replications, "replications")
    if replications < 1:
        raise ValueError(f"replications: must be >= 1, got {replications}")
    return requests, warmup, replications


def _check_settings(seed, level, engine, *, interval=None, family="gamma") -> None:
    """A ValueError naming the argument: seed a whole number >= 0, level and interval in (0, 1),
    engine and family among the known ones."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**63:
        raise ValueError(f"seed: must be a whole number >= 0, got {seed!r}")
    for name, value in (("level", level), ("interval", interval)):
        if name == "interval" and value is None:
            continue
        ok = isinstance(value, int | float | np.number) and not isinstance(value, bool)
        if not (ok and 0 < float(value) < 1):
            raise ValueError(f"{name}: must be a number in (0, 1), got {value!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine: must be one of {', '.join(ENGINES)}, got {engine!r}")

    if family not in FAMILIES:
        raise ValueError(f"family: must be one of {', '.join(FAMILIES)}, got {family!r}")


def replication_rng(seed: int, replication: int) -> np.random.Generator:
    """The generator of one replication: ``SeedSequence(seed, spawn_key=(replication,))``."""
    return task_rng(seed, replication)


def _engine_for(cfg: SimConfig, engine: str):
    if engine not in ENGINES:
        raise ValueError(f"engine: must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "fast" and not cfg.fast_path_applies:
        raise ValueError("engine: the fast path needs open arrivals, one copy per write and no flush bursts")
    return run_fast if engine == "fast" or (engine == "auto" and cfg.fast_path_applies) else run_simpy


def _run_replication(task: dict) -> tuple[dict, object]:
    """One task: replication ``r`` of configuration ``i`` -> ``(metrics, records or None)``.

    Seeded from ``(seed, r)`` only, so where it ran (this process, a local
    worker, a Dask worker) and what ran beside it never change a number.
    """
    cfg, r = task["config"], task["replication"]
    rec = _engine_for(cfg, task["engine"])(
        cfg, task["requests"], task["warmup"], replication_rng(task["seed"], r)
    )
    metrics = {"configuration": task["configuration"], "replication": r, **replication_metrics(rec, cfg)}
    return metrics, (rec if task["keep_records"] else None)


#: below this many simulated requests in all [count], ``workers=None`` runs in this process:
#: about 1 s of the SimPy engine, twice the first local pool's start-up (docs/distributed.md)
PARALLEL_MIN_REQUESTS = 200_000
#: simulated requests per scheduled unit at least [count] (~0.3 s of the SimPy engine), so
#: that tiny replications do not drown in per-unit overhead on a large cluster
UNIT_MIN_REQUESTS = 50_000


def _run_all(
    configs,
    *,
    requests,
    warmup,
    seed,
    replications,
    engine,
    progress,
    keep_records,
    scheduler=None,
    workers=None,
):
    """Replications of every configuration (``None`` = not simulated), one task each through
    :func:`perfmodel.run.execution.map_tasks`; Ctrl-C keeps the replications that finished."""
    for cfg in configs:
        if cfg is not None:
            _engine_for(cfg, engine)  # a bad engine fails here, before anything is dispatched
    common = {
        "requests": requests,
        "warmup": warmup,
        "seed": seed,
        "engine": engine,
        "keep_records": keep_records,
    }
    tasks = [
        {"configuration": i, "replication": r, "config": cfg, **common}
        for i, cfg in enumerate(configs)
        if cfg is not None
        for r in range(replications)
    ]
    if scheduler is None and workers is None and len(tasks) * requests < PARALLEL_MIN_REQUESTS:
        workers = 1
    interrupted = False
    try:
        results = map_tasks(
            _run_replication,
            tasks,
            scheduler=scheduler,
            workers=workers,
            progress=progress,
            min_chunk=-(-UNIT_MIN_REQUESTS // requests),
            desc="simulate",
            unit="rep",
        )
    except Interrupted as stop:
        results = [result for result, ok in zip(stop.results, stop.done, strict=True) if ok]
        tasks = [task for task, ok in zip(tasks, stop.done, strict=True) if ok]
        if not results:
            raise KeyboardInterrupt from None
        interrupted = True
    runs = [
        (t["configuration"], t["replication"], t["config"], rec)
        for t, (_, rec) in zip(tasks, results, strict=True)
        if keep_records
    ]
    return runs, pd.DataFrame([metrics for metrics, _ in results]), interrupted


def _aggregate(per_rep: pd.DataFrame, size: int, level: float) -> pd.DataFrame:
    """Mean over replications of every metric, and t intervals of :data:`CI_METRICS`."""
    names = [c for c in per_rep.columns if c not in ("configuration", "replication")]
    if not names:  # nothing simulated: the columns a replication would have given
        names = [
            *CI_METRICS,
            *(f"util_{s}" for s in STATIONS if s != "fixed"),
            "device_queue_depth",
            "burst_duty",
        ]
    out = {name: np.full(size, np.nan) for name in names}
    ci = {f"{m}_ci_{end}": np.full(size, np.nan) for m in CI_METRICS for end in ("low", "high")}
    count = np.zeros(size, dtype=np.int64)
    warning = np.full(size, "", dtype=object)
    if len(per_rep):
        for i, group in per_rep.groupby("configuration"):
            count[i] = len(group)
            for name in names:
                out[name][i] = group[name].mean()
            for m in CI_METRICS:  # rates and latencies are positive: intervals on the log scale
                _, lo, hi = t_interval(group[m].to_numpy(), level, positive=True)
                ci[f"{m}_ci_low"][i], ci[f"{m}_ci_high"][i] = lo, hi
            warning[i] = spread_warning(group["throughput_ops_s"].to_numpy())
    return pd.DataFrame({**out, **ci, "replications": count, "replication_warning": warning})


def simulate_config(
    cfg: SimConfig,
    *,
    requests: int | None = None,
    warmup: int | None = None,
    seed: int = 0,
    replications: int = 5,
    engine: str = "auto",
    level: float = 0.95,
    progress: bool | None = None,
    keep_records: bool = True,
    scheduler=None,
    workers: int | None = None,
) -> SimulationResult:
    """Simulate one hand-built configuration (see :func:`simulate` for the arguments;
    ``scheduler`` / ``workers`` spread its replications).

    The summary has the simulated metrics (named as ``predict``'s columns)
    and their confidence intervals; an open configuration whose offered
    utilisation is >= 1 at some station raises a ValueError.
    """
    requests = auto_requests([cfg]) if requests is None else requests
    requests, warmup, replications = _check_run_length(requests, warmup, replications)
    _check_settings(seed, level, engine)
    util = cfg.offered_utilization()
    if not cfg.closed and (util >= 1).any():
        k = int(np.nanargmax(util))
        raise ValueError(
            f"arrival_rate: unstable open system, utilisation {util[k]:.3g} >= 1 at station "
            f"{cfg.stations[k]!r}; lower the rate or add servers"
        )
    runs, per_rep, interrupted = _run_all(
        [cfg],
        requests=requests,
        warmup=warmup,
        seed=seed,
        replications=replications,
        engine=engine,
        progress=progress,
        keep_records=keep_records,
        scheduler=scheduler,
        workers=workers,
    )
    summary = _aggregate(per_rep, 1, level)
    _add_run_length(summary, [cfg], requests, warmup)
    return SimulationResult(summary, per_rep, runs, interrupted)


def simulate(
    platform, workload, *, nodes=1, params=None, requests: int | None = None, warmup: int | None = None,
    seed: int = 0, replications: int = 5, engine: str = "auto", family: str = "gamma",
    service: dict | None = None, level: float = 0.95, interval: float | None = None,
    progress: bool | None = None, keep_records: bool = True, scheduler=None, workers: int | None = None,
    system, **knobs,
) -> SimulationResult:  # fmt: skip
    """Simulate the systems :func:`perfmodel.predict` describes, by discrete events.

    Parameters
    ----------
    platform, workload, nodes, params, system, **knobs
        As for :func:`perfmodel.predict` (arrays make a grid: each
        configuration is simulated on its own).
    requests : requests per replication [count], warm-up included (> 0). Default
        (``None``): :func:`auto_requests`, at least 100,000 and enough for every node
        to flush :data:`FLUSH_CYCLES` times while measured (about 1.2 M for the README's
        ScyllaDB workload); a run measuring fewer than two flushes per node says so in
        ``replication_warning``.
    warmup : requests discarded at the start of each replication [count]
        (default ``requests // 10``; must leave >= 2).
    seed : replication r draws from ``SeedSequence(seed, spawn_key=(r,))``.
    replications : independent replications per configuration (>= 1; the
        confidence intervals need >= 2).
    engine : ``auto`` (the fast path where it applies), ``simpy`` or ``fast``.
    family : shape of services whose SCV is neither 0 nor 1 (``gamma`` or
        ``lognormal``).
    service : ``{station: Distribution}``, a shape (e.g.
        :class:`~perfmodel.sim.distributions.Empirical` from measured times)
        that replaces the station's service law at the model's mean demand.
    level : confidence level of the intervals [-].
    interval : add ``<column>_lower`` / ``_upper`` *prediction* bands at this level (e.g. 0.9) for
        throughput and latency percentiles, as :func:`perfmodel.predict` does: the replications'
        standard error (from the confidence interval) widened by the model discrepancy estimated
        out of sample (:mod:`perfmodel.evidence.discrepancy`). Parameter uncertainty is not
        sampled here (``predict(..., interval=)`` does).
    progress : show a tqdm bar over replications (default: when stderr is a TTY).
    keep_records : keep per-request records (``False`` saves memory).
    scheduler, workers : where the replications run, one task each (see
        :func:`perfmodel.run.execution.map_tasks`): ``scheduler="tcp://host:port"`` an existing Dask
        cluster; else ``workers`` local processes (default: the cores, or this process when the run
        is under :data:`PARALLEL_MIN_REQUESTS` simulated requests; ``1``: this process). The
        numbers are identical whatever runs them.

    Returns
    -------
    SimulationResult
        ``.summary`` has :data:`perfmodel.model.predict.OUTPUT_COLUMNS` (the simulated
        throughput, latencies, utilisations, device queue depth, burst duty
        and bottleneck; the I/O-rate columns follow from the simulated
        throughput), ``<metric>_ci_low`` / ``<metric>_ci_high`` for
        throughput and latencies (Student t on the log scale: never below
        zero), ``replications``, and ``replication_warning`` (words when the
        replications' throughputs split into groups -- a metastable system or
        runs too short -- or when a replication measures too few flushes, else
        ""), ``requests`` (per replication). An open configuration
        whose analytic utilisation is >= 1 is not simulated: its row is
        predict's (``saturated`` True, latencies ``inf``) with
        ``replications`` 0. ``.records`` are the requests (times in s).
    """

    _check_run_length(DEFAULT_REQUESTS if requests is None else requests, warmup, replications)
    _check_settings(seed, level, engine, interval=interval, family=family)
    model = chain.build(platform, workload, nodes=nodes, params=params, system=system, **knobs)
    analytic = chain.solve(model)
    configs = [None if analytic.saturated[i] else config_from_model(model, i, family=family, service=service)
               for i in range(model.size)]  # fmt: skip
    requests, warmup, replications = _check_run_length(
        auto_requests(configs) if requests is None else requests, warmup, replications
    )
    runs, per_rep, interrupted = _run_all(
        configs, requests=requests, warmup=warmup, seed=seed, replications=replications, engine=engine,
        progress=progress, keep_records=keep_records, scheduler=scheduler, workers=workers,
    )  # fmt: skip
    summary = _summary(model, analytic, configs, _aggregate(per_rep, model.size, level))
    _add_run_length(summary, configs, requests, warmup)
    _add_order_note(summary, model.net.wait_scv)
    if interval is not None:
        _add_prediction_bands(summary, float(interval), level, params)
    return SimulationResult(summary, per_rep, runs, interrupted)


def _summary(model, analytic, configs, sim: pd.DataFrame) -> pd.DataFrame:
    """predict's table at the simulated throughput, with the simulated columns where a configuration
    ran (NaN where it should have and did not; the analytic row where it saturates), and the
    bottleneck re-read from the simulated utilisations."""
    done = sim["replications"].to_numpy() > 0
    x = np.where(done, sim["throughput_ops_s"].to_numpy(), analytic.throughput)
    x = np.where(np.isfinite(x), x, analytic.throughput)
    summary = chain.report(model, dataclasses.replace(analytic, throughput=x))
    simulated_unsaturated = np.array([c is not None for c in configs])
    for name in sim.columns:
        if name in summary.columns and name != "throughput_ops_s":
            summary[name] = np.where(
                done, sim[name].to_numpy(), np.where(simulated_unsaturated, np.nan, summary[name])
            )
        elif name not in summary.columns:
            summary[name] = sim[name].to_numpy()
    summary["throughput_ops_s"] = np.where(simulated_unsaturated & ~done, np.nan, x)
    summary["tail_event_share"] = np.where(done, np.nan, summary["tail_event_share"])  # analytic only
    util_names = [s for s in STATIONS if s != "fixed"]
    utils = np.stack([summary[f"util_{s}"].to_numpy() for s in util_names], axis=1)
    codes = np.argmax(np.nan_to_num(utils, nan=-1.0), axis=1)
    summary["bottleneck"] = pd.Categorical.from_codes(codes, util_names)
    return summary


def _add_run_length(summary: pd.DataFrame, configs, requests: int, warmup: int) -> None:
    """``requests`` per replication, and a too-short run said in ``replication_warning``."""
    summary["requests"] = requests
    if "replication_warning" not in summary.columns:
        summary["replication_warning"] = ""
    for i, cfg in enumerate(configs):
        short = _run_length_warning(cfg, requests - warmup)
        if short:
            before = summary.at[i, "replication_warning"]
            summary.at[i, "replication_warning"] = f"{before}; {short}" if before else short


def _add_order_note(summary: pd.DataFrame, wait_scv) -> None:
    """Say in ``replication_warning`` where the model spreads the waits by an order of service the
    simulator does not have (it serves first come, first served: spec / knob ``wait_scv`` > 0)."""
    order = np.broadcast_to(np.asarray(wait_scv, dtype=float), (len(summary),))
    for i in np.flatnonzero(order > 0):
        note = (
            f"served first come, first served: the model's wait spread (wait_scv {order[i]:g}) is not "
            "simulated, so predict's percentiles are wider; compare them at wait_scv=0"
        )
        before = summary.at[i, "replication_warning"]
        summary.at[i, "replication_warning"] = f"{before}; {note}" if before else note


def _add_prediction_bands(summary: pd.DataFrame, interval: float, level: float, params) -> None:
    """``_lower`` / ``_upper`` of predict's band columns: simulation error plus model discrepancy."""

    z_ci = bands.z_score(level)
    stored = bands.load_discrepancy(params if isinstance(params, str) else None) or {}
    for col in BAND_COLUMNS:
        if col not in summary:
            continue
        entry = stored.get(bands.COLUMN_GROUPS[col], {"sigma_log": 0.0, "scores": []})
        center = summary[col].to_numpy(float)
        lo_ci = summary.get(f"{col}_ci_low", summary[col]).to_numpy(float)
        hi_ci = summary.get(f"{col}_ci_high", summary[col]).to_numpy(float)
        # a single replication has no interval: no simulation error to add
        lo_ci = np.where(np.isfinite(lo_ci), lo_ci, center)
        hi_ci = np.where(np.isfinite(hi_ci), hi_ci, center)
        m = bands.band_multiplier(entry["scores"], interval)
        summary[f"{col}_lower"], summary[f"{col}_upper"] = bands.widen_band(
            center, lo_ci, hi_ci, entry["sigma_log"], m, z_ci
        )
