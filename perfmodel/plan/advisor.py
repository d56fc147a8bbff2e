"""The next benchmark worth running: candidate runs ranked by the expected value of what they would show.

A sizing on a lab the model has never seen carries its held-out error: a factor ``f`` on what a
server carries and ``g`` on its p99 (:mod:`perfmodel.plan.uncertain`), wide on a new lab. A run on a
platform, ingested and calibrated on (``perfmodel calibrate --data``), moves that platform from the
new-lab error to the narrower own-lab one. Which run first? The one whose result would most change
what is bought, or most narrow the count of what is bought. This module answers by preposterior
analysis -- the expected value of sample information (Raiffa & Schlaifer, *Applied Statistical
Decision Theory*, 1961, ch. 4-5); Ernest (Venkataraman et al., NSDI 2016) picks training runs for a
performance model by optimal experiment design in the same spirit.

**Candidate runs** (:func:`candidate_runs`). For each platform in contention, one run per load level
of the workload asked about, as the exact command of the system's benchmark tool (cassandra-stress,
memtier_benchmark, pgbench, sysbench, BenchmarkSQL, fio, db_bench) with the rate limit and clients that
realise the level: at :data:`RUN_LEVELS` 90% of the predicted per-server capacity (near saturation:
it informs the throughput error ``f``) and 50% (below the knee: it informs the tail error ``g``).

**Decision.** The belief about each platform's ``log f`` and ``log g`` is a symmetric distribution
(:class:`Spread`): the system's held-out errors on labs never seen
(:func:`perfmodel.model.bands.half_width_for`, ``own_lab=False``), or, for a platform already
calibrated on, the split cross-validation's own-lab errors (``own_lab=True``). Under a belief, each
candidate's count at ``confidence`` ``q`` is the ``q``-quantile of ``n_c(target x f, slo / g)`` over
``S`` belief samples (a sample no count up to ``max_nodes`` meets counts as ``max_nodes``); the plan
chosen is the cheapest ``price_c x N_c`` (fewest servers where unpriced), and its node-count range is
its p5-p95 width.

**Truth, measurement, update (the stated assumption).** A scenario draws each platform's true
``(log f, log g)`` from its current belief (and, for a ranged target, the true target). A run on
platform ``p`` informing error ``e`` observes ``o = e_true + r`` with ``r`` drawn from the own-lab
distribution (the error a fit on the lab's own runs still has); afterwards ``p``'s ``e`` is believed
with its posterior given ``o`` (Bayes' rule on a grid, :func:`posterior_draws`: the prior belief times
the own-lab likelihood of the residual ``o - e``; with a prior much wider than the own-lab spread,
about ``o`` +- that spread), while every platform not measured keeps its belief (errors independent
across platforms: no shared-system correlation).

**Value.** With ``n*_c`` the count the truth needs, the plan bought (``N`` servers of the chosen
``c``) costs ``price_c x max(N, n*_c)`` (topped up if short), or, when the truth says no count meets
the targets on it, ``price_c x N`` wasted plus the truly cheapest plan; the regret is that cost minus
``min_c price_c x n*_c``, the truly cheapest feasible plan (0 in a scenario where none is feasible).
A run's value is the expected regret before minus after it (USD per month; servers unpriced), and the
expected narrowing of the chosen plan's p5-p95 count; :func:`rank_runs` sorts by the first, ties by
the second. Both are Monte Carlo over ``scenarios`` truths with common random numbers, so runs are
compared on the same truths.

**Speed.** The count is monotone in ``target x f`` and in ``slo / g``, so each candidate's count is
computed once on a grid (:func:`count_grid`: ``K_f x K_g`` calls of
:func:`perfmodel.plan.sizing.size`, every candidate in each) and read off by bilinear interpolation
(linear in ``f``, where a count is near-proportional to the load, and in ``log g``), rounded up; a
cell touching a count no ``max_nodes`` meets takes its conservative corner (a step), and a point
beyond the grid its edge.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from perfmodel.inputs.systems import load_system
from perfmodel.inputs.workload import Workload
from perfmodel.model import bands
from perfmodel.plan.sizing import DEFAULT_PLATFORMS, size_many
from perfmodel.plan.uncertain import Uncertain, uncertain

__all__ = ["RUN_LEVELS", "CountGrid", "Spread", "candidate_runs", "count_grid", "decide", "error_spread",
           "posterior_draws", "preposterior", "rank_runs", "regret", "runs_text", "update"]  # fmt: skip

#: load level of a run (share of the predicted per-server capacity) -> the error it informs
RUN_LEVELS = {0.9: "throughput", 0.5: "tail"}
#: the bands' metric group of each error
GROUPS = {"throughput": "throughput", "tail": "tail latency"}
#: central levels at which a spread's magnitudes are tabulated
_LEVELS = np.concatenate([np.linspace(0.0, 0.98, 50), [0.99, 0.995]])
#: how long each run lasts [s] (in every command)
RUN_SECONDS = 300


@dataclass(frozen=True)
class Spread:
    """A symmetric distribution of a log error [log units]: ``magnitudes[i]`` is the half-width of its
    central band at level ``_LEVELS[i]`` (the |log error| quantile), linear between levels; beyond the
    last level |X| has an exponential tail whose scale matches the last two levels (a Laplace tail:
    the table cannot say more, and a likelihood must not vanish there)."""

    magnitudes: tuple[float, ...]

    @property
    def _tail(self) -> float:
        """The scale of the exponential tail of |X| beyond the last tabulated level [log units]."""
        m = self.magnitudes
        drop = math.log((1.0 - _LEVELS[-2]) / (1.0 - _LEVELS[-1]))
        return max((m[-1] - m[-2]) / drop, 1e-9 * (1.0 + m[-1]))

    def magnitude(self, level) -> np.ndarray:
        """The half-width of the central band at ``level`` in [0, 1) [log units]."""
        level = np.asarray(level, dtype=float)
        inside = np.interp(np.minimum(level, _LEVELS[-1]), _LEVELS, np.asarray(self.magnitudes))
        with np.errstate(divide="ignore"):
            beyond = self.magnitudes[-1] + self._tail * np.log((1.0 - _LEVELS[-1]) / (1.0 - level))
        return np.where(level > _LEVELS[-1], beyond, inside)

    def draw(self, u) -> np.ndarray:
        """The log error at uniforms ``u`` in (0, 1): sign of ``2u - 1``, magnitude at level ``|2u - 1|``."""
        x = 2.0 * np.asarray(u, dtype=float) - 1.0
        return np.sign(x) * self.magnitude(np.abs(x))

    def cdf(self, x) -> np.ndarray:
        """``P(X <= x)``."""
        x = np.asarray(x, dtype=float)
        m, mags = np.abs(x), np.asarray(self.magnitudes)
        inside = np.interp(m, mags, _LEVELS)
        beyond = 1.0 - (1.0 - _LEVELS[-1]) * np.exp(-(m - mags[-1]) / self._tail)
        return 0.5 + 0.5 * np.sign(x) * np.where(m > mags[-1], beyond, inside)

    def log_density(self, x) -> np.ndarray:
        """``log p(x)``: half the slope of the level against the magnitude on the table's segment, the
        exponential tail beyond it (in logs: an observation far out keeps a likelihood)."""
        m, mags = np.abs(np.asarray(x, dtype=float)), np.asarray(self.magnitudes)
        widths = np.maximum(np.diff(mags), 1e-12 * (1.0 + mags[-1]))
        slopes = np.diff(_LEVELS) / widths
        seg = np.clip(np.searchsorted(mags, m, side="right") - 1, 0, len(slopes) - 1)
        inside = np.log(0.5 * slopes[seg])
        beyond = np.log(0.5 * (1.0 - _LEVELS[-1]) / self._tail) - (m - mags[-1]) / self._tail
        return np.where(m > mags[-1], beyond, inside)

    def half_width(self, level: float) -> float:
        return float(self.magnitude(level))

    @classmethod
    def lognormal(cls, sd: float) -> Spread:
        """A lognormal error of log-sd ``sd`` (tests, studies)."""
        return cls(tuple(float(sd) * special.ndtri((1.0 + _LEVELS) / 2.0)))


def error_spread(system: str, error: str, own_lab: bool = False) -> Spread:
    """``system``'s ``error`` (``throughput`` or ``tail``) on a new lab, or after calibrating on the lab's
    own runs (``own_lab``): the pooled held-out errors behind the bands
    (:func:`perfmodel.model.bands.half_width_for`)."""
    group = GROUPS[error]
    return Spread(tuple(bands.half_width_for(system, group, float(max(q, 1e-6)), own_lab=own_lab)
                        for q in _LEVELS))  # fmt: skip


@dataclass(frozen=True, eq=False)
class CountGrid:
    """Each candidate's server count on a grid of model errors (:func:`count_grid`).

    ``platform``, ``threads_per_core``, ``price`` (per server per month; 1 unpriced) per candidate;
    ``log_f`` (K_f,) and ``log_g`` (K_g,) ascending [log units]; ``counts`` (C, K_f, K_g) [servers], inf
    where no count up to ``max_nodes`` meets the targets; ``capacity_ops_s`` per candidate (one server's
    predicted capacity at 100% of its busiest station, NaN unknown); ``unit`` of the price."""

    platform: tuple[str, ...]
    threads_per_core: tuple[int, ...]
    price: np.ndarray
    log_f: np.ndarray
    log_g: np.ndarray
    counts: np.ndarray
    max_nodes: int
    capacity_ops_s: np.ndarray
    unit: str = "USD/month"

    def lookup(self, c: int, lf, lg) -> np.ndarray:
        """Candidate ``c``'s count at log errors ``lf`` (on the throughput, the target's spread folded
        in) and ``lg`` (on the p99), broadcast (module doc: bilinear, rounded up; a step near inf)."""
        lf, lg = np.broadcast_arrays(np.asarray(lf, dtype=float), np.asarray(lg, dtype=float))
        fx, gx = np.exp(self.log_f), self.log_g
        f = np.clip(np.exp(lf), fx[0], fx[-1])
        g = np.clip(lg, gx[0], gx[-1])
        i = np.clip(np.searchsorted(fx, f, side="right") - 1, 0, len(fx) - 2)
        j = np.clip(np.searchsorted(gx, g, side="right") - 1, 0, len(gx) - 2)
        wf = (f - fx[i]) / (fx[i + 1] - fx[i])
        wg = (g - gx[j]) / (gx[j + 1] - gx[j])
        n = self.counts[c]
        c00, c10, c01, c11 = n[i, j], n[i + 1, j], n[i, j + 1], n[i + 1, j + 1]
        finite = np.isfinite(c00) & np.isfinite(c10) & np.isfinite(c01) & np.isfinite(c11)
        with np.errstate(invalid="ignore"):
            mix = (1 - wf) * ((1 - wg) * c00 + wg * c01) + wf * ((1 - wg) * c10 + wg * c11)
        step = np.where((wf > 0) & (wg > 0), c11, np.where(wf > 0, c10, np.where(wg > 0, c01, c00)))
        return np.where(finite, np.ceil(np.where(finite, mix, 0.0) - 1e-9), step)


def _size_kwargs(cost, prices, pricing, size_kwargs) -> dict:
    out = {k: v for k, v in size_kwargs.items() if k != "interval"}
    if prices is not None:
        out.update(prices=prices, pricing=pricing)
    return out


def count_grid(
    workload: Workload, *, system: str, target_ops_s: float, slo_p99_ms: float, log_f: Sequence[float],
    log_g: Sequence[float], platforms: Sequence[str] = DEFAULT_PLATFORMS,
    cost: Mapping[str, float] | None = None, prices=None, pricing=None, **size_kwargs,
) -> CountGrid:  # fmt: skip
    """Every candidate's count at ``size(target_ops_s x e^lf, slo_p99_ms / e^lg)`` for each grid point
    (``len(log_f) x len(log_g)`` sizings, bands off, searched together by
    :func:`perfmodel.plan.sizing.size_many`).

    ``cost`` (USD per server per month by platform) or ``prices`` / ``pricing`` (as for ``size``) price
    the plans; candidates a price table leaves unpriced are dropped (unless none is priced: then every
    price is 1 and the regret is in servers)."""
    lf, lg = np.sort(np.asarray(log_f, float)), np.sort(np.asarray(log_g, float))
    if len(lf) < 2 or len(lg) < 2:
        raise ValueError("count_grid: at least two grid points on each axis")
    kwargs = _size_kwargs(cost, prices, pricing, size_kwargs)
    keys, counts, capacity, price = None, None, None, None
    points = [(a, b) for a in range(len(lf)) for b in range(len(lg))]
    requests = [{"target_ops_s": float(target_ops_s) * math.exp(lf[a]),
                 "slo_p99_ms": float(slo_p99_ms) / math.exp(lg[b])} for a, b in points]  # fmt: skip
    tables = size_many(workload, requests, system=system, platforms=list(platforms), interval=None, **kwargs)
    for (a, b), out in zip(points, tables, strict=True):
        out = out.set_index(["platform", "threads_per_core"])
        if keys is None:
            keys = list(out.index)
            counts = np.full((len(keys), len(lf), len(lg)), np.inf)
            capacity = np.full((len(keys), len(lf), len(lg)), np.nan)
            price = _prices(out, keys, cost)
        out = out.loc[keys]
        feasible = out["feasible"].to_numpy(bool)
        counts[:, a, b] = np.where(feasible, out["nodes"].to_numpy(float), np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_server = out["nodes"].to_numpy(float) * out["max_utilization"].to_numpy(float)
            cap = out["throughput_ops_s"].to_numpy(float) / per_server
        capacity[:, a, b] = np.where(feasible, cap, np.nan)
    keep = np.isfinite(price) if np.isfinite(price).any() else np.ones(len(keys), bool)
    unit = "USD/month" if np.isfinite(price).any() else "servers"
    price = np.where(np.isfinite(price), price, 1.0)
    with warnings.catch_warnings():  # a candidate feasible nowhere on the grid: NaN capacity
        warnings.simplefilter("ignore", RuntimeWarning)
        cap = np.nanmedian(capacity.reshape(len(keys), -1), axis=1) if len(keys) else np.array([])
    pick = [i for i, k in enumerate(keys) if keep[i]]
    max_nodes = int(size_kwargs.get("max_nodes", 128))
    return CountGrid(tuple(keys[i][0] for i in pick), tuple(int(keys[i][1]) for i in pick), price[pick],
                     lf, lg, counts[pick], max_nodes, cap[pick], unit)  # fmt: skip


def _prices(out: pd.DataFrame, keys, cost) -> np.ndarray:
    """USD per server per month per candidate from ``cost`` or ``size``'s prices; NaN unpriced."""
    if cost is not None:
        return np.array([float(cost.get(p, math.nan)) for p, _ in keys])
    if "price_usd_per_month" in out:
        return out.loc[keys, "price_usd_per_month"].to_numpy(float)
    return np.full(len(keys), math.nan)


def _order_stat(sorted_n: np.ndarray, q: float) -> np.ndarray:
    """The least value with a share ``>= q`` at or below it, along the last axis of sorted values."""
    return sorted_n[..., max(math.ceil(q * sorted_n.shape[-1]) - 1, 0)]


def decide(grid: CountGrid, lf: Mapping[str, np.ndarray], lg: Mapping[str, np.ndarray],
           confidence: float) -> dict:  # fmt: skip
    """The plan chosen under a belief: per platform ``lf[p]`` / ``lg[p]`` are samples of its log errors
    (last axis: the ``S`` belief samples; leading axes broadcast, e.g. one per scenario).

    Returns ``choice`` (candidate index), ``nodes`` (its count at ``confidence``), ``range`` (its p5-p95
    width [servers]) and ``cost`` (``price x nodes``), each of the leading shape."""
    n = [grid.lookup(c, lf[p], lg[p]) for c, p in enumerate(grid.platform)]
    n = np.minimum(np.stack(np.broadcast_arrays(*n)), grid.max_nodes)  # infeasible samples: max_nodes
    n = np.sort(n, axis=-1)
    at_q = _order_stat(n, confidence)
    cost = grid.price.reshape((-1,) + (1,) * (at_q.ndim - 1)) * at_q
    key = cost + 1e-9 * at_q  # ties: fewer servers
    choice = np.argmin(key, axis=0)
    take = lambda a: np.take_along_axis(a, choice[None], axis=0)[0]  # noqa: E731
    width = _order_stat(n, 0.95) - _order_stat(n, 0.05)
    return {"choice": choice, "nodes": take(at_q), "range": take(width), "cost": take(cost)}


def regret(grid: CountGrid, choice, nodes, true_lf: Mapping[str, np.ndarray],
           true_lg: Mapping[str, np.ndarray]) -> np.ndarray:  # fmt: skip
    """The regret [price unit] of buying ``nodes`` servers of candidate ``choice`` when the truth is
    ``true_lf`` / ``true_lg`` per platform (module doc: topped up if short; a plan the truth makes
    infeasible is paid and the cheapest bought too; 0 where no plan is feasible)."""
    true_n = np.stack(np.broadcast_arrays(*[grid.lookup(c, true_lf[p], true_lg[p])
                                            for c, p in enumerate(grid.platform)]))  # fmt: skip
    true_cost = grid.price.reshape((-1,) + (1,) * (true_n.ndim - 1)) * true_n
    best = true_cost.min(axis=0)
    choice = np.broadcast_to(np.asarray(choice), best.shape)
    nodes = np.broadcast_to(np.asarray(nodes, dtype=float), best.shape)
    mine = np.take_along_axis(true_n, choice[None], axis=0)[0]
    price = grid.price[choice]
    with np.errstate(invalid="ignore"):
        paid = np.where(np.isfinite(mine), price * np.maximum(nodes, mine), price * nodes + best)
        return np.where(np.isfinite(best), paid - best, 0.0)


def preposterior(
    grid: CountGrid, runs: pd.DataFrame, *, prior: Mapping[tuple[str, str], Spread],
    own: Mapping[str, Spread], confidence: float = 0.9, scenarios: int = 200, samples: int = 200,
    seed: int = 0, target: Uncertain | None = None,
) -> pd.DataFrame:  # fmt: skip
    """Each run's expected regret reduction and range reduction (module doc), by Monte Carlo.

    ``runs`` has ``platform`` and ``informs`` (``throughput`` or ``tail``); ``prior[(platform, error)]``
    is the current belief of each platform's log error, ``own[error]`` the own-lab spread a run leaves;
    ``target`` a ranged target (its log ratio to its median multiplies ``f``; runs do not narrow it).
    Returns ``runs`` with ``regret_reduction`` [grid.unit], ``range_reduction`` [servers] and
    ``changes_choice`` (share of scenarios where the run changes the plan chosen); ``attrs``:
    ``regret_before``, ``range_before``, ``choice_before`` (platform SMTn, nodes) and ``unit``."""
    rng = np.random.default_rng(seed)
    plats = list(dict.fromkeys(grid.platform))
    ub, ut, uo = rng.random((samples, len(plats), 2)), rng.random((scenarios, len(plats), 2)), \
        rng.random((scenarios, len(plats), 2))  # fmt: skip
    lt_b, lt_t = (np.zeros(samples), np.zeros(scenarios)) if target is None else \
        (_log_ratio(target, rng.random(samples)), _log_ratio(target, rng.random(scenarios)))  # fmt: skip
    errors = ("throughput", "tail")
    pairs = [(k, p, x, e) for k, p in enumerate(plats) for x, e in enumerate(errors)]
    belief = {(p, e): prior[(p, e)].draw(ub[:, k, x]) for k, p, x, e in pairs}
    truth = {(p, e): prior[(p, e)].draw(ut[:, k, x]) for k, p, x, e in pairs}
    true_lf = {p: truth[(p, "throughput")] + lt_t for p in plats}
    true_lg = {p: truth[(p, "tail")] for p in plats}

    def outcome(b):
        d = decide(grid, {p: b[(p, "throughput")] + lt_b for p in plats}, {p: b[(p, "tail")] for p in plats},
                   confidence)  # fmt: skip
        return d, regret(grid, d["choice"], d["nodes"], true_lf, true_lg)

    before, r_before = outcome(belief)
    rows = []
    for run in runs.itertuples(index=False):
        k, x = plats.index(run.platform), errors.index(run.informs)
        observed = truth[(run.platform, run.informs)] + own[run.informs].draw(uo[:, k, x])
        post = update(belief, (run.platform, run.informs), observed, own[run.informs], ub[:, k, x],
                      prior[(run.platform, run.informs)])  # fmt: skip
        after, r_after = outcome(post)
        rows.append({"regret_reduction": float(np.mean(r_before - r_after)),
                     "range_reduction": float(before["range"] - np.mean(after["range"])),
                     "changes_choice": float(np.mean(after["choice"] != before["choice"]))})  # fmt: skip
    out = pd.concat([runs.reset_index(drop=True), pd.DataFrame(rows, index=range(len(runs)))], axis=1)
    c = int(before["choice"])
    out.attrs.update(regret_before=float(np.mean(r_before)), range_before=float(before["range"]),
                     unit=grid.unit, choice_before=(f"{grid.platform[c]} SMT{grid.threads_per_core[c]}",
                                                    int(before["nodes"])))  # fmt: skip
    return out


def update(belief: Mapping, key: tuple[str, str], observed, own: Spread, u, prior: Spread) -> dict:
    """The belief after a run on ``key = (platform, error)`` observed ``observed`` [log units] (one value, or
    one per scenario): that error's posterior (:func:`posterior_draws`: the ``prior`` it was believed with,
    times the likelihood of ``observed`` under the own-lab spread ``own``), drawn at the belief samples'
    uniforms ``u`` (the last axis); every other entry is kept as it was (module doc)."""
    out = dict(belief)
    out[key] = posterior_draws(prior, own, observed, u)
    return out


#: cells of the grid a posterior is computed on
_POSTERIOR_CELLS = 800


def posterior_draws(prior: Spread, own: Spread, observed, u) -> np.ndarray:
    """Draws at uniforms ``u`` (last axis) of the error ``e`` given ``observed = e + r``, ``e ~ prior``,
    ``r ~ own`` independent (Bayes' rule: posterior density proportional to ``prior(e) own(o - e)``),
    computed on a grid of :data:`_POSTERIOR_CELLS` cells wide enough for both and inverted cell by cell
    (each cell's weight from the two densities at its centre, linear within a cell). ``observed`` is a
    scalar or an array (one posterior each, leading axes)."""
    o = np.asarray(observed, dtype=float)
    reach = max(float(prior.magnitude(0.9999)), float(np.max(np.abs(o))) + float(own.magnitude(0.9999)))
    edges = np.linspace(-reach, reach, _POSTERIOR_CELLS + 1)
    centres = 0.5 * (edges[:-1] + edges[1:])
    # in logs: a residual far in both tails would underflow as a probability
    log_post = prior.log_density(centres) + own.log_density(o[..., None] - centres)
    post = np.exp(log_post - log_post.max(axis=-1, keepdims=True))
    cum = np.concatenate([np.zeros(post.shape[:-1] + (1,)), np.cumsum(post, axis=-1)], axis=-1)
    cum /= cum[..., -1:]
    u = np.asarray(u, dtype=float)
    flat = cum.reshape(-1, cum.shape[-1])
    draws = np.stack([np.interp(u, row, edges) for row in flat])
    return draws.reshape(cum.shape[:-1] + u.shape)


def _log_ratio(target: Uncertain, u) -> np.ndarray:
    """``log(target / its median)`` at uniforms ``u``."""
    return np.log(target.ppf(u) / target.median())


def _concurrency(workload: Workload) -> int:
    """Connections a run opens: the workload's clients x threads, else 64 (at least 8)."""
    clients = workload.clients if workload.clients else 64
    return int(max(8, round(float(clients) * float(workload.threads_per_client or 1))))


def _rows(workload: Workload) -> int:
    """Keys the run spreads over: the data set over the object size (1e3 .. 1e9; 1e6 without a data set)."""
    data, obj = float(workload.dataset_bytes or 0.0), float(workload.object_bytes or 1024.0)
    return int(min(max(data / obj, 1e3), 1e9)) if data > 0 else 1_000_000


def _cl(workload: Workload) -> str:
    level = workload.consistency
    return {1: "ONE", 2: "TWO", 3: "THREE"}.get(level, "QUORUM") if isinstance(level, int) else str(level)


def _cassandra_stress(w: Workload, rate: int, servers: int, system: str) -> str:
    reads = float(w.read_fraction)
    op = "read" if reads >= 1.0 else "write" if reads <= 0.0 else \
        f"mixed 'ratio(write={round(100 * (1 - reads))},read={round(100 * reads)})'"  # fmt: skip
    return (f"cassandra-stress {op} duration={RUN_SECONDS // 60}m cl={_cl(w)} no-warmup "
            f"-rate threads={_concurrency(w)} throttle={rate}/s -pop 'dist=uniform(1..{_rows(w)})' "
            f"-col 'size=FIXED({int(w.object_bytes)})' "
            f"-schema 'replication(factor={int(w.replication_factor or 1)})' -node $HOSTS")  # fmt: skip


def _memtier(w: Workload, rate: int, servers: int, system: str) -> str:
    threads = 4
    conns = max(1, math.ceil(_concurrency(w) / threads))
    per_conn = max(1, round(rate / (threads * conns)))
    sets, gets = round(100 * (1 - float(w.read_fraction))), round(100 * float(w.read_fraction))
    proto, port = ("redis", 6379) if system == "redis" else ("memcache_text", 11211)
    return (f"memtier_benchmark -s $HOST -p {port} --protocol={proto} -t {threads} -c {conns} "
            f"--ratio={sets}:{gets} -d {int(w.object_bytes)} --key-maximum={_rows(w)} "
            f"--rate-limiting={per_conn} --test-time={RUN_SECONDS} --hide-histogram "
            f"--json-out-file=run.json")  # fmt: skip


def _pgbench(w: Workload, rate: int, servers: int, system: str) -> str:
    script = "-S " if float(w.read_fraction) >= 0.99 else "-N " if float(w.read_fraction) <= 0.5 else ""
    clients = _concurrency(w)
    return (f"pgbench -h $HOST -c {clients} -j {min(clients, 8)} -T {RUN_SECONDS} -R {rate} -P 10 {script}"
            f"--report-per-command bench")  # fmt: skip


def _sysbench(w: Workload, rate: int, servers: int, system: str) -> str:
    reads = float(w.read_fraction)
    test = "oltp_read_only" if reads >= 0.99 else "oltp_write_only" if reads <= 0.01 else "oltp_read_write"
    driver = "--db-driver=mysql --mysql-host=$HOST" if system == "mysql" else \
        "--db-driver=pgsql --pgsql-host=$HOST --pgsql-port=5432"  # fmt: skip
    return (f"sysbench {test} {driver} --tables=16 --table-size={max(_rows(w) // 16, 1000)} "
            f"--threads={_concurrency(w)} --rate={rate} --time={RUN_SECONDS} --report-interval=10 "
            f"--percentile=99 run")  # fmt: skip


def _benchmarksql(w: Workload, rate: int, servers: int, system: str) -> str:
    props = f"props.{system}"
    return (f"sed -i -e 's/^terminals=.*/terminals={_concurrency(w)}/' -e 's/^runTxnsPerTerminal=.*/"
            f"runTxnsPerTerminal=0/' -e 's/^runMins=.*/runMins={RUN_SECONDS // 60}/' -e "
            f"'s/^limitTxnsPerMin=.*/limitTxnsPerMin={rate * 60}/' {props} "
            f"&& ./runBenchmark.sh {props}")  # fmt: skip


def _fio(w: Workload, rate: int, servers: int, system: str) -> str:
    reads = float(w.read_fraction)
    mixed = f"randrw --rwmixread={round(100 * reads)}"
    rw = "randread" if reads >= 1.0 else "randwrite" if reads <= 0.0 else mixed
    iops = f"{round(rate * reads)},{round(rate * (1 - reads))}" if 0.0 < reads < 1.0 else f"{rate}"
    target = "--ioengine=rbd --clientname=admin --pool=rbd --rbdname=perfmodel" if system == "ceph" else \
        "--filename=$DEVICE --ioengine=libaio --direct=1"  # fmt: skip
    bs = int(w.io_bytes or w.object_bytes or 4096)
    return (f"fio --name=run {target} --rw={rw} --bs={bs} --iodepth={min(_concurrency(w), 256)} "
            f"--rate_iops={iops} --runtime={RUN_SECONDS} --time_based --group_reporting "
            f"--output-format=json --output=run.json")  # fmt: skip


def _db_bench(w: Workload, rate: int, servers: int, system: str) -> str:
    reads = float(w.read_fraction)
    bench = "readrandom" if reads >= 1.0 else "fillrandom" if reads <= 0.0 else "readrandomwriterandom"
    limits = f"--benchmark_read_rate_limit={round(rate * reads)}" if reads > 0 else ""
    if reads < 1.0:
        write_bytes = round(rate * (1 - reads) * (float(w.object_bytes) + 16))
        limits = (limits + f" --benchmark_write_rate_limit={write_bytes}").strip()
    return (f"db_bench --benchmarks={bench} --use_existing_db={int(reads > 0)} --db=$DB --num={_rows(w)} "
            f"--key_size=16 --value_size={int(w.object_bytes)} --readwritepercent={round(100 * reads)} "
            f"--threads={min(_concurrency(w), 64)} --duration={RUN_SECONDS} {limits} "
            f"--histogram=1")  # fmt: skip


#: system -> (tool, command builder); a TPC-C workload on a SQL system runs BenchmarkSQL
TOOLS = {
    "cassandra": ("cassandra-stress", _cassandra_stress), "scylla": ("cassandra-stress", _cassandra_stress),
    "redis": ("memtier_benchmark", _memtier), "memcached": ("memtier_benchmark", _memtier),
    "postgresql": ("pgbench", _pgbench), "mysql": ("sysbench", _sysbench),
    "opengauss": ("sysbench", _sysbench), "dm8": ("BenchmarkSQL", _benchmarksql), "fio": ("fio", _fio),
    "ceph": ("fio", _fio), "rocksdb": ("db_bench", _db_bench),
}  # fmt: skip


def run_command(system: str, workload: Workload, rate_ops_s: float, servers: int = 1) -> tuple[str, str]:
    """``(tool, command)`` of a run of ``workload`` on ``system`` at ``rate_ops_s`` [1/s] in all (the
    tool's rate limit: cassandra-stress ``throttle``, memtier ``--rate-limiting`` per connection, pgbench
    ``-R``, sysbench ``--rate``, BenchmarkSQL ``limitTxnsPerMin``, fio ``--rate_iops``, db_bench
    ``--benchmark_read_rate_limit``); ``$HOST`` / ``$HOSTS`` / ``$DEVICE`` / ``$DB`` are the user's."""
    sql = system in ("postgresql", "mysql", "opengauss", "dm8")
    tool, build = ("BenchmarkSQL", _benchmarksql) if sql and workload.operation == "tpcc" else \
        TOOLS.get(system, (None, None))  # fmt: skip
    if build is None:
        raise ValueError(f"run_command: no benchmark tool known for system {system!r} ({', '.join(TOOLS)})")
    return tool, build(workload, max(int(round(rate_ops_s)), 1), int(servers), system)


def candidate_runs(
    system: str, workload: Workload, capacity: Mapping[str, float], *,
    levels: Mapping[float, str] = RUN_LEVELS, threads_per_core: Mapping[str, int] | None = None,
) -> pd.DataFrame:  # fmt: skip
    """One run per platform x load level: ``platform``, ``threads_per_core``, ``level`` (share of the
    predicted capacity), ``servers`` (the test deployment: the replication factor for a sharded system,
    else one server), ``rate_ops_s`` (``level x servers x capacity[platform]``, [1/s] in all), ``tool``,
    ``command`` and ``informs`` (the error the run pins, :data:`RUN_LEVELS`).

    ``capacity`` is one server's predicted throughput at 100% of its busiest station [1/s]."""
    spec = load_system(system)
    servers = int(workload.replication_factor or 1) if spec.topology == "sharded" else 1
    rows = []
    for platform, cap in capacity.items():
        if not (cap and math.isfinite(cap) and cap > 0):
            raise ValueError(f"capacity: {platform}: a positive per-server throughput [1/s], got {cap!r}")
        for level, informs in levels.items():
            rate = float(level) * servers * float(cap)
            tool, command = run_command(spec.id, workload, rate, servers)
            smt = int((threads_per_core or {}).get(platform, 1))
            rows.append({"platform": platform, "threads_per_core": smt, "level": float(level),
                         "servers": servers, "rate_ops_s": rate, "tool": tool,
                         "command": command, "informs": informs})  # fmt: skip
    return pd.DataFrame(rows)


def _axis(spreads: Iterable[Spread], target: Uncertain | None, points: int, seed: int) -> np.ndarray:
    """``points`` grid values [log units]: quantiles (1% .. 99%) of the widest ``spreads``' draws, with the
    target's log ratio added; spaced at least 0.01 apart."""
    rng = np.random.default_rng(seed)
    widest = max(spreads, key=lambda s: s.half_width(0.9))
    draws = widest.draw(rng.random(4000)) + (0.0 if target is None else _log_ratio(target, rng.random(4000)))
    axis = np.quantile(draws, np.linspace(0.01, 0.99, int(points)))
    axis = np.unique(np.round(axis, 3))
    return axis if len(axis) >= 2 else np.array([axis[0] - 0.01, axis[0] + 0.01])


def _platforms(result: pd.DataFrame | None, platforms) -> list:
    """The platforms in contention: a ``size_uncertain`` result's feasible candidates (all when none is),
    else those given, else the default candidates."""
    if result is not None:
        feasible = result[result["feasible"]] if result["feasible"].any() else result
        return list(dict.fromkeys(feasible["platform"]))
    return list(platforms or DEFAULT_PLATFORMS)


def rank_runs(
    workload: Workload, *, system: str, target_ops_s, slo_p99_ms: float,
    platforms: Sequence[str] | None = None, result: pd.DataFrame | None = None, measured: Iterable[str] = (),
    confidence: float | None = None, cost: Mapping[str, float] | None = None, prices=None, pricing=None,
    levels: Mapping[float, str] = RUN_LEVELS, scenarios: int = 400, samples: int = 200,
    grid: tuple[int, int] = (7, 5), seed: int = 0, **size_kwargs,
) -> pd.DataFrame:  # fmt: skip
    """The candidate runs for the plans in contention, best first (module doc).

    Parameters
    ----------
    workload, system, slo_p99_ms, size_kwargs : as for :func:`perfmodel.plan.sizing.size`.
    target_ops_s : the target [1/s]: a point, ``{low, high}`` or two percentiles
        (:func:`perfmodel.plan.uncertain.uncertain`).
    platforms, result : the platforms in contention, or a :func:`~perfmodel.plan.uncertain.size_uncertain`
        result whose feasible candidates (and confidence) are taken.
    measured : platforms already calibrated on (their errors start at the own-lab spread).
    confidence : the probability the plan bought must meet the targets with (default 0.9).
    cost, prices, pricing : per-server prices (``{platform: USD per month}``) or a price table as for
        ``size``; without either, regret is in servers.
    scenarios, samples, grid, seed : Monte Carlo truths, belief samples, grid points ``(K_f, K_g)``.

    Returns
    -------
    DataFrame, one row per run, best first: ``platform``, ``threads_per_core``, ``level``, ``servers``,
    ``rate_ops_s``, ``tool``, ``command``, ``informs``, ``regret_reduction`` [``attrs["unit"]``: USD/month,
    or servers], ``range_reduction`` [servers], ``changes_choice``; ``attrs`` also hold ``regret_before``,
    ``range_before``, ``choice_before``, ``confidence``, ``left_out`` (platforms without a price), and what
    the values came from: ``grid`` (:class:`CountGrid`), ``prior`` and ``own`` (the spreads).
    """
    q = float(confidence if confidence is not None else (result.attrs.get("confidence", 0.9)
                                                          if result is not None else 0.9))  # fmt: skip
    if not 0.0 < q < 1.0:
        raise ValueError(f"confidence: must lie in (0, 1), got {confidence!r}")
    target = uncertain("target_ops_s", target_ops_s)
    spec, measured = load_system(system), set(measured)
    plats = _platforms(result, platforms)
    prior = {(p, e): error_spread(spec.id, e, own_lab=p in measured) for p in plats for e in GROUPS}
    own = {e: error_spread(spec.id, e, own_lab=True) for e in GROUPS}
    ranged = None if target.kind == "point" else target
    lf = _axis([prior[(p, "throughput")] for p in plats], ranged, grid[0], seed)
    lg = _axis([prior[(p, "tail")] for p in plats], None, grid[1], seed + 1)
    counts = count_grid(workload, system=spec.id, target_ops_s=target.median(), slo_p99_ms=slo_p99_ms,
                        log_f=lf, log_g=lg, platforms=plats, cost=cost, prices=prices, pricing=pricing,
                        **size_kwargs)  # fmt: skip
    capacity, smt = _run_platforms(counts)
    runs = candidate_runs(spec.id, workload, capacity, levels=levels, threads_per_core=smt)
    out = preposterior(counts, runs, prior=prior, own=own, confidence=q, scenarios=scenarios, samples=samples,
                       seed=seed, target=ranged)  # fmt: skip
    out = out.sort_values(["regret_reduction", "range_reduction"], ascending=False, kind="stable")
    attrs = dict(out.attrs, confidence=q, measured=sorted(measured), grid=counts, prior=prior, own=own,
                 left_out=sorted(set(plats) - set(counts.platform)))  # fmt: skip
    out = out.reset_index(drop=True)
    out.attrs.update(attrs)
    return out


def _run_platforms(grid: CountGrid) -> tuple[dict, dict]:
    """Per platform the capacity [1/s] and SMT mode of its cheapest candidate at the model's own answer
    (no error): what its runs are sized on. A platform with no known capacity is left out."""
    capacity, smt, best = {}, {}, {}
    for c, p in enumerate(grid.platform):
        n = float(grid.lookup(c, 0.0, 0.0))
        key = (grid.price[c] * min(n, grid.max_nodes), n)
        if math.isfinite(grid.capacity_ops_s[c]) and (p not in best or key < best[p]):
            best[p], capacity[p], smt[p] = key, float(grid.capacity_ops_s[c]), grid.threads_per_core[c]
    return capacity, smt


def runs_text(frame: pd.DataFrame, top: int = 5) -> str:
    """The ``top`` runs as printed by ``perfmodel next-run``: the plan chosen now, then per run its value
    and exact command."""
    unit = frame.attrs.get("unit", "USD/month")
    plan, nodes = frame.attrs.get("choice_before", ("?", 0))
    lines = [f"plan chosen now at {frame.attrs.get('confidence', 0.9):.0%} confidence: {nodes} x {plan}; "
             f"expected regret {frame.attrs.get('regret_before', math.nan):,.0f} {unit}, "
             f"node-count range (p5-p95) {frame.attrs.get('range_before', math.nan):g}"]  # fmt: skip
    grid = frame.attrs.get("grid")
    if grid is not None and nodes >= grid.max_nodes:
        lines.append(f"  (at max_nodes {grid.max_nodes}: no plan meets the targets at this confidence; "
                     "the runs still say which error decides that)")  # fmt: skip
    if frame.attrs.get("left_out"):
        lines.append(f"left out (no price): {', '.join(frame.attrs['left_out'])}")
    lines.append("")
    for i, r in enumerate(frame.head(int(top)).itertuples(index=False), start=1):
        lines.append(f"{i}. {r.platform} SMT{r.threads_per_core}, {r.level:.0%} of capacity on {r.servers} "
                     f"server(s), {r.rate_ops_s:,.0f} ops/s ({r.informs} error): expected regret reduction "
                     f"{r.regret_reduction:,.0f} {unit}, range reduction {r.range_reduction:.2f} servers, "
                     f"changes the plan in {r.changes_choice:.0%} of scenarios")  # fmt: skip
        lines.append(f"   {r.command}")
    lines += ["", "regret: the expected cost above the truly cheapest plan, before minus after the run; "
              "range: the chosen plan's p5-p95 node count, narrowed (perfmodel.plan.advisor)."]  # fmt: skip
    return "\n".join(lines)
