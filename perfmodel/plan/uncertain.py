"""Sizing under uncertainty: workload inputs as ranges, the model's own error, a count per confidence.

A planner rarely knows next year's rate to the op: :func:`size_uncertain` takes the target rate,
the data set, the read share and the object size each as a point, a range or two percentiles
(:func:`uncertain`), adds the model's own error on a lab it has not seen (or on the user's own,
after calibrating on it), and answers per candidate the server count that meets the targets with
the chosen probability (default 90%), with the distribution behind it.

**Inputs.** A number is a point. ``{low, high}`` is uniform between them -- on a log scale for a
positive quantity (a rate, a size: the same odds for each doubling), on the line for a share.
Two percentiles (``{p50: 8e5, p95: 1.5e6}``, any two of ``p1`` .. ``p99``) fix a lognormal (a
positive quantity) or a logit-normal (a share in (0, 1)) through them.

**The model's error.** Per sample a factor ``f`` on the throughput a server carries and a factor
``g`` on its p99, each with a random sign and a magnitude drawn from the system's held-out errors
on labs the fit never saw -- the pooled lab distribution behind its bands
(:func:`perfmodel.model.bands.half_width_for`, the same numbers as ``size``'s interval): ``|log f|``
is that distribution's ``|2u - 1|``-quantile for a uniform ``u``. A model that over-states a
server's throughput by ``f`` needs the servers for ``target x f``; one that under-states its p99
by ``g`` needs the p99 it predicts to meet ``slo / g``. ``model_error="own_lab"`` takes the bands
of a lab fitted on its own runs (split cross-validation), ``None`` leaves the model's error out, and
a mapping ``{"throughput": s, "tail": s}`` uses lognormal errors of those log-sds (for studies and
tests).

**Combination.** The inputs and the two errors are drawn together by Latin hypercube sampling
(``samples`` points, scipy's ``qmc.LatinHypercube``, seeded), each point sized by
:func:`perfmodel.plan.sizing.size` (open arrivals at its target, its bands off: the error is
already drawn). A candidate's count at confidence ``q`` is the least ``n`` with ``P(N <= n) >= q``
over the samples, a sample where no count up to ``max_nodes`` meets the targets counting as
infinite; where more than ``1 - q`` of them are infeasible, so is the plan. The count is monotone
in the target and the SLO, so with only those uncertain the answer is also the point answer at the
``q``-quantile of ``target x f`` (``tests/unit/test_uncertain.py`` checks the two against a
million-draw Monte Carlo).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from perfmodel.inputs.workload import Workload
from perfmodel.model import bands
from perfmodel.plan.sizing import size_many

__all__ = ["UNCERTAIN_INPUTS", "Uncertain", "model_error_factors", "size_uncertain", "uncertain"]

#: inputs ``size_uncertain`` takes as ranges -> (positive quantity, share in (0, 1))
UNCERTAIN_INPUTS = {
    "target_ops_s": "positive",
    "dataset_gib": "positive",
    "object_bytes": "positive",
    "read_fraction": "share",
}
#: sizings searched together (:func:`perfmodel.plan.sizing.size_many`) between two progress reports
_BATCH = 32
_KEYS = ("target_ops_s", "slo_p99_ms", "dataset_gib", "read_fraction", "object_bytes")


@dataclass(frozen=True)
class Uncertain:
    """One input: ``kind`` ``point`` (``a``), ``uniform`` / ``loguniform`` on ``[a, b]``, or
    ``lognormal`` / ``logitnormal`` of location ``a`` and scale ``b`` (of the log or the logit)."""

    name: str
    kind: str
    a: float
    b: float = 0.0

    def ppf(self, u) -> np.ndarray:
        """The value at cumulative probability ``u`` in (0, 1) (inverse CDF), broadcast."""
        u = np.asarray(u, dtype=float)
        if self.kind == "point":
            return np.full(u.shape, self.a)
        if self.kind == "uniform":
            return self.a + u * (self.b - self.a)
        if self.kind == "loguniform":
            return np.exp(math.log(self.a) + u * (math.log(self.b) - math.log(self.a)))
        z = special.ndtri(u)
        if self.kind == "lognormal":
            return np.exp(self.a + self.b * z)
        return special.expit(self.a + self.b * z)  # logitnormal

    def median(self) -> float:
        return float(self.ppf(0.5))

    def describe(self) -> str:
        if self.kind == "point":
            return f"{self.a:g}"
        lo, mid, hi = (float(self.ppf(q)) for q in (0.05, 0.5, 0.95))
        return f"{self.kind} (p5 {lo:.4g}, p50 {mid:.4g}, p95 {hi:.4g})"


def _percentile_key(key: str, name: str) -> float:
    if not (isinstance(key, str) and key.startswith("p")):
        raise ValueError(f"{name}: {key!r} is not a percentile (p1 .. p99) or low / high")
    try:
        q = float(key[1:]) / 100.0
    except ValueError:
        raise ValueError(f"{name}: {key!r} is not a percentile (p1 .. p99) or low / high") from None
    if not 0.0 < q < 1.0:
        raise ValueError(f"{name}: percentile {key!r} must lie strictly between p0 and p100")
    return q


def uncertain(name: str, value: Any) -> Uncertain:
    """``value`` (a number, ``{low, high}`` or two percentiles ``{pA: x, pB: y}``) as an
    :class:`Uncertain` input ``name`` (:data:`UNCERTAIN_INPUTS` says whether it is a positive
    quantity or a share); a ``ValueError`` names what is wrong."""
    if name not in UNCERTAIN_INPUTS:
        raise ValueError(f"{name}: not an input that may be uncertain ({', '.join(UNCERTAIN_INPUTS)})")
    share = UNCERTAIN_INPUTS[name] == "share"

    def check(x, what):
        number = isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)
        if not number or not math.isfinite(x):
            raise ValueError(f"{name}: {what} must be a finite number, got {x!r}")
        x = float(x)
        if share and not 0.0 <= x <= 1.0:
            raise ValueError(f"{name}: {what} must lie in [0, 1], got {x:g}")
        if not share and x <= 0:
            raise ValueError(f"{name}: {what} must be positive, got {x:g}")
        return x

    if isinstance(value, Uncertain):
        return value
    if not isinstance(value, Mapping):
        return Uncertain(name, "point", check(value, "the value"))
    keys = set(value)
    if keys == {"low", "high"}:
        lo, hi = check(value["low"], "low"), check(value["high"], "high")
        if not lo < hi:
            raise ValueError(f"{name}: low ({lo:g}) must be below high ({hi:g})")
        return Uncertain(name, "uniform" if share else "loguniform", lo, hi)
    if len(keys) != 2:
        raise ValueError(f"{name}: give a number, {{low, high}} or two percentiles such as {{p50, p95}}; "
                         f"got {sorted(keys)}")  # fmt: skip
    (q1, x1), (q2, x2) = sorted((_percentile_key(k, name), check(v, k)) for k, v in value.items())
    if q1 == q2 or not x1 < x2:
        raise ValueError(f"{name}: the higher percentile must have the higher value, got {dict(value)}")
    if share and (x1 <= 0.0 or x2 >= 1.0):
        raise ValueError(f"{name}: a share's percentiles must lie strictly inside (0, 1), got {dict(value)}")
    t1, t2 = (special.logit([x1, x2]) if share else np.log([x1, x2])).tolist()
    z1, z2 = special.ndtri([q1, q2]).tolist()
    scale = (t2 - t1) / (z2 - z1)
    return Uncertain(name, "logitnormal" if share else "lognormal", t1 - scale * z1, scale)


ErrorModel = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def model_error_factors(system: str, how: str | Mapping[str, float] | None) -> ErrorModel:
    """``(u_f, u_g) -> (f, g)``: the model's throughput and p99 error factors for uniforms in (0, 1)
    (module doc): ``"new_lab"`` (default) or ``"own_lab"`` bands, ``None`` (no error: 1, 1) or
    ``{"throughput": sd, "tail": sd}`` lognormal log-sds."""
    if how is None:
        return lambda uf, ug: (np.ones_like(uf), np.ones_like(ug))
    if isinstance(how, Mapping):
        unknown = set(how) - {"throughput", "tail"}
        if unknown:
            raise ValueError(f"model_error: unknown keys {sorted(unknown)} (throughput, tail)")
        sd_f, sd_g = float(how.get("throughput", 0.0)), float(how.get("tail", 0.0))
        if sd_f < 0 or sd_g < 0:
            raise ValueError("model_error: log-sds must be >= 0")
        return lambda uf, ug: (np.exp(sd_f * special.ndtri(uf)), np.exp(sd_g * special.ndtri(ug)))
    if how not in ("new_lab", "own_lab"):
        raise ValueError(f"model_error: {how!r} is not one of new_lab, own_lab, None or a mapping")
    own = how == "own_lab"

    def signed(u, group):
        x = 2.0 * np.asarray(u, dtype=float) - 1.0
        level = np.clip(np.abs(x), 1e-6, 1.0 - 1e-6)
        mag = np.array([bands.half_width_for(system, group, float(q), own_lab=own) for q in level])
        return np.exp(np.sign(x) * mag)

    return lambda uf, ug: (signed(uf, "throughput"), signed(ug, "tail latency"))


def _draws(inputs: dict[str, Uncertain], samples: int, seed: int) -> np.ndarray:
    """``samples`` Latin-hypercube points in (0, 1) over the uncertain inputs and the two errors."""
    from scipy.stats import qmc  # deferred: import perfmodel does not load scipy.stats (test_imports)

    return qmc.LatinHypercube(d=len(inputs) + 2, seed=seed).random(samples)


def _count_at(values: np.ndarray, q: float) -> float:
    """The least ``n`` with a share ``>= q`` of ``values`` at or below it (``inf``: infeasible)."""
    ordered = np.sort(values)
    return float(ordered[max(math.ceil(q * len(ordered)) - 1, 0)])


def size_uncertain(
    workload: Workload, *, system: str, target_ops_s: Any, slo_p99_ms: float, dataset_gib: Any = None,
    read_fraction: Any = None, object_bytes: Any = None, confidence: float = 0.9, samples: int = 48,
    model_error: str | Mapping[str, float] | None = "new_lab", seed: int = 0, progress: bool = False,
    **size_kwargs,
) -> pd.DataFrame:  # fmt: skip
    """Per candidate (platform x SMT mode) the server count that meets the targets with probability
    ``confidence`` over the uncertain inputs and the model's error (module doc).

    Parameters
    ----------
    workload : as for :func:`perfmodel.plan.sizing.size`; its ``read_fraction`` / ``object_bytes``
        are replaced by the drawn ones where those are given.
    target_ops_s, dataset_gib, read_fraction, object_bytes : a point, ``{low, high}`` or two
        percentiles (:func:`uncertain`) [1/s], [GiB], [-], [B].
    slo_p99_ms : the p99 objective [ms] (a requirement, not uncertain).
    confidence : the probability the count must meet the targets with, in (0, 1).
    samples : Latin-hypercube points (each one :func:`size` call).
    model_error : ``"new_lab"``, ``"own_lab"``, ``None`` or lognormal log-sds (module doc).
    seed : the sampling seed (the same seed, the same answer).
    size_kwargs : passed to :func:`size` (``platforms``, ``max_nodes``, knobs, ...).

    Returns
    -------
    DataFrame per candidate: ``platform``, ``threads_per_core``, ``nodes`` (at ``confidence``; 0 when
    more than ``1 - confidence`` of the samples have no feasible count), ``feasible``, ``nodes_p50``,
    ``nodes_p05``, ``nodes_p95``, ``share_feasible`` (of the samples), ``nodes_point`` (the point
    answer: the inputs' medians, no model error), ``binding`` (the constraint that set the count most
    often); with ``prices=`` (passed to :func:`size`) ``price_usd_per_month`` (one server),
    ``cost_usd_per_month`` (the count at ``confidence``) and ``cheapest`` (the cheapest feasible
    priced plan at that confidence). Sorted feasible first, fewest servers first. ``attrs``:
    ``confidence``, ``samples`` (the long table: each sample's inputs, errors and count per
    candidate), ``inputs`` (each input's description) and ``model_error``.
    """
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence: must lie in (0, 1), got {confidence!r}")
    if int(samples) != samples or samples < 8:
        raise ValueError(f"samples: a whole number of at least 8, got {samples!r}")
    size_kwargs.pop("interval", None)
    given = {"target_ops_s": target_ops_s, "dataset_gib": dataset_gib, "read_fraction": read_fraction,
             "object_bytes": object_bytes}  # fmt: skip
    inputs = {k: uncertain(k, v) for k, v in given.items() if v is not None}
    errors = model_error_factors(system, model_error)
    u = _draws(inputs, int(samples), int(seed))
    drawn = {name: inputs[name].ppf(u[:, i]) for i, name in enumerate(inputs)}
    f, g = errors(u[:, -2], u[:, -1])

    def request(values: dict[str, float], f_s: float, g_s: float) -> dict[str, float]:
        out = {"target_ops_s": float(values["target_ops_s"]) * f_s, "slo_p99_ms": float(slo_p99_ms) / g_s}
        return out | {
            k: float(values[k]) for k in ("dataset_gib", "read_fraction", "object_bytes") if k in values
        }

    keep = ["platform", "threads_per_core", "nodes", "feasible", "binding", "price_usd_per_month"]
    point_values = {k: v.median() for k, v in inputs.items()}
    sample_values = [{k: float(v[s]) for k, v in drawn.items()} for s in range(int(samples))]
    requests = [request(point_values, 1.0, 1.0)]
    requests += [request(v, float(f[s]), float(g[s])) for s, v in enumerate(sample_values)]
    tables, rows = [], []
    for start in range(0, len(requests), _BATCH):  # a batch of sizings searched together
        tables += size_many(workload, requests[start : start + _BATCH], system=system, interval=None,
                            **size_kwargs)  # fmt: skip
        if progress:
            print(f"\rsize_uncertain: {min(start + _BATCH, len(requests)) - 1} / {samples} samples", end="",
                  flush=True)  # fmt: skip
    if progress:
        print(flush=True)
    point = tables[0][[c for c in keep if c in tables[0]]]
    for s, (values, part) in enumerate(zip(sample_values, tables[1:], strict=True)):
        part = part[[c for c in keep if c in part]]
        rows.append(part.assign(sample=s, f=float(f[s]), g=float(g[s]), **values))
    table = pd.concat(rows, ignore_index=True)
    return _summary(table, point, float(confidence), inputs, model_error)


def _cost(part: pd.DataFrame, at_q: float) -> dict:
    """A candidate's ``price_usd_per_month`` (one server) and ``cost_usd_per_month`` (the count at the
    confidence) where ``size`` priced it (``prices=``); ``{}`` without prices."""
    if "price_usd_per_month" not in part:
        return {}
    price = float(part["price_usd_per_month"].dropna().iloc[0]) if part["price_usd_per_month"].notna().any() \
        else math.nan  # fmt: skip
    cost = price * at_q if math.isfinite(at_q) else math.nan
    return {"price_usd_per_month": price, "cost_usd_per_month": cost}


def _summary(table, point, q, inputs, model_error) -> pd.DataFrame:
    """Per candidate: the count at ``q``, its spread and the point answer (:func:`size_uncertain`)."""
    counts = table.assign(n=np.where(table["feasible"], table["nodes"].astype(float), np.inf))
    out = []
    for (plat, tpc), part in counts.groupby(["platform", "threads_per_core"], sort=False):
        n = part["n"].to_numpy()
        at_q = _count_at(n, q)
        here = point[(point.platform == plat) & (point.threads_per_core == tpc)]
        out.append({
            "platform": plat, "threads_per_core": tpc,
            "nodes": int(at_q) if math.isfinite(at_q) else 0, "feasible": math.isfinite(at_q),
            "nodes_p50": _count_at(n, 0.5), "nodes_p05": _count_at(n, 0.05), "nodes_p95": _count_at(n, 0.95),
            "share_feasible": float(np.isfinite(n).mean()),
            "nodes_point": int(here["nodes"].iloc[0]) if len(here) and bool(here["feasible"].iloc[0]) else 0,
            "binding": part["binding"].mode().iloc[0] if part["binding"].notna().any() else "",
            **_cost(part, at_q),
        })  # fmt: skip
    frame = pd.DataFrame(out)
    if "cost_usd_per_month" in frame:  # the cheapest plan that meets the targets at this confidence
        priced = frame["feasible"] & frame["cost_usd_per_month"].notna()
        frame["cheapest"] = False
        if priced.any():
            frame.loc[frame.loc[priced, "cost_usd_per_month"].idxmin(), "cheapest"] = True
    frame = frame.sort_values(["feasible", "nodes"], ascending=[False, True], kind="stable")
    frame = frame.reset_index(drop=True)
    frame.attrs.update(confidence=q, samples=table, model_error=model_error,
                       inputs={k: v.describe() for k, v in inputs.items()})  # fmt: skip
    return frame


def table_text(frame: pd.DataFrame) -> str:
    """The plan under uncertainty as printed by ``perfmodel size --confidence``."""
    q = frame.attrs.get("confidence", 0.9)
    lines = [f"servers per candidate that meet the targets with probability {q:.0%} "
             f"({len(frame.attrs.get('samples', [])) // max(len(frame), 1)} samples; model error: "
             f"{frame.attrs.get('model_error') or 'left out'})"]  # fmt: skip
    for name, text in frame.attrs.get("inputs", {}).items():
        lines.append(f"  {name}: {text}")
    priced = "cost_usd_per_month" in frame
    head = f"{'#':>2}  {'candidate':<34} {'nodes':>6} {'p50':>5} {'p5-p95':>9} {'feasible':>9} {'point':>6}"
    lines += ["", head + ("  USD/month" if priced else "")]
    for i, r in enumerate(frame.itertuples(index=False), start=1):
        spread = "-".join("inf" if not math.isfinite(v) else f"{v:g}" for v in (r.nodes_p05, r.nodes_p95))
        nodes = str(r.nodes) if r.feasible else "-"
        row = (f"{i:>2}  {f'{r.platform} SMT{int(r.threads_per_core)}':<34} {nodes:>6} {r.nodes_p50:>5g} "
               f"{spread:>9} {r.share_feasible:>9.0%} {r.nodes_point:>6}")  # fmt: skip
        if priced:
            cost = r.cost_usd_per_month
            row += f"  {cost:>9,.0f}" if math.isfinite(cost) else "          -"
            row += "  cheapest" if r.cheapest else ""
        lines.append(row)
    lines.append("")
    lines.append("nodes: the count at the confidence; p50 / p5-p95: over the samples; feasible: the share "
                 "of samples some count up to max_nodes met; point: the inputs' medians without the "
                 "model's error. A count at a high confidence rests on the few largest samples: more "
                 "samples (--samples), a steadier count.")  # fmt: skip
    return "\n".join(lines)


def frontier(result: pd.DataFrame, levels=(0.5, 0.8, 0.9, 0.95)) -> pd.DataFrame:
    """The count and cost per candidate at each confidence in ``levels``, from one
    :func:`size_uncertain` result's samples (no new sizing): ``confidence``, ``platform``,
    ``threads_per_core``, ``nodes`` (0: infeasible at that confidence), ``feasible``,
    ``cost_usd_per_month`` (NaN unpriced or infeasible) and ``cheapest`` (the cheapest feasible priced
    plan at that confidence) -- what a higher confidence costs."""
    table = result.attrs["samples"]
    counts = np.where(table["feasible"], table["nodes"].astype(float), np.inf)
    table = table.assign(n=counts)
    rows = []
    for q in levels:
        if not 0.0 < float(q) < 1.0:
            raise ValueError(f"levels: each confidence must lie in (0, 1), got {q!r}")
        for (plat, tpc), part in table.groupby(["platform", "threads_per_core"], sort=False):
            at_q = _count_at(part["n"].to_numpy(), float(q))
            rows.append({"confidence": float(q), "platform": plat, "threads_per_core": tpc,
                         "nodes": int(at_q) if math.isfinite(at_q) else 0, "feasible": math.isfinite(at_q),
                         **(_cost(part, at_q) or {"cost_usd_per_month": math.nan})})  # fmt: skip
    out = pd.DataFrame(rows)
    out["cheapest"] = False
    for _, part in out[out["feasible"] & out["cost_usd_per_month"].notna()].groupby("confidence"):
        out.loc[part["cost_usd_per_month"].idxmin(), "cheapest"] = True
    return out


def plot_frontier(front: pd.DataFrame, axes=None):
    """What confidence costs: per candidate its monthly cost (or, unpriced, its servers) against the
    confidence, from :func:`frontier`; the cheapest plan at each confidence marked."""
    import matplotlib.pyplot as plt  # deferred: plotting only (test_imports)
    import seaborn as sns

    ax = axes or plt.subplots(figsize=(9, 4.5))[1]
    data = front[front["feasible"]].assign(candidate=lambda f: f["platform"] + " SMT"
                                           + f["threads_per_core"].astype(int).astype(str))  # fmt: skip
    priced = data["cost_usd_per_month"].notna().any()
    y = "cost_usd_per_month" if priced else "nodes"
    sns.lineplot(data=data.dropna(subset=[y]), x="confidence", y=y, hue="candidate", marker="o", ax=ax)
    best = data[data["cheapest"]]
    if priced and len(best):
        ax.scatter(best["confidence"], best[y], s=160, facecolors="none", edgecolors="black",
                   label="cheapest")  # fmt: skip
    ax.set_yscale("log")
    _plain_ticks(ax.yaxis)
    ax.set_xlabel("confidence the plan meets the targets [-]")
    ax.set_ylabel("cost [USD / month]" if priced else "servers [count]")
    ax.legend(fontsize="small", loc="upper left")
    return ax


def plot_counts(result: pd.DataFrame, axes=None):
    """The distribution behind each count: per candidate the share of samples some count up to ``n``
    meets (an empirical CDF over all samples, so one whose samples are partly infeasible never reaches
    1), the chosen confidence as a dashed line."""
    import matplotlib.pyplot as plt  # deferred: plotting only (test_imports)

    ax = axes or plt.subplots(figsize=(9, 4.5))[1]
    table = result.attrs["samples"]
    for (plat, tpc), part in table.groupby(["platform", "threads_per_core"], sort=False):
        n = np.sort(np.where(part["feasible"], part["nodes"].astype(float), np.inf))
        share = np.arange(1, len(n) + 1) / len(n)
        ax.step(n[np.isfinite(n)], share[np.isfinite(n)], where="post", label=f"{plat} SMT{int(tpc)}")
    ax.axhline(result.attrs["confidence"], color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    _plain_ticks(ax.xaxis)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("servers [count]")
    ax.set_ylabel("share of samples met [-]")
    ax.legend(fontsize="small", loc="lower right")
    return ax


def _plain_ticks(axis) -> None:
    """A log axis labelled 4, 6, 20, 40 000 rather than 4 x 10^0 (major and minor ticks)."""
    from matplotlib.ticker import FuncFormatter  # deferred: plotting only (test_imports)

    plain = FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    axis.set_major_formatter(plain)
    axis.set_minor_formatter(plain)
