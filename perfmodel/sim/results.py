"""Per-request records of one replication, their statistics, and confidence intervals.

A replication's requests are numbered in the order they are issued (closed
loop) or arrive (open loop); the first ``warmup`` are discarded (the
replication / deletion approach, Law 2015, sec. 9.5.2). The measurement
window runs from the issue of request ``warmup`` to the issue of the last
request, ``[t_w, t_e]``. Each replication gives one estimate of every metric;
the estimates of independent replications are iid, so a Student t interval on
them is a valid confidence interval for the steady-state metric (Law 2015,
sec. 9.4.1) -- including for percentiles, whose per-replication estimates are
asymptotically normal.

References: Law, A. M. (2015). Simulation Modeling and Analysis, 5th ed.,
McGraw-Hill, ch. 9.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from perfmodel.sim.config import SimConfig

READ, WRITE = 0, 1
LEVELS = ((0.5, "p50"), (0.95, "p95"), (0.99, "p99"), (0.999, "p999"))


@dataclass
class Records:
    """One replication's requests as numpy columns, and station counters.

    ``operation`` (0 read, 1 write), ``start`` / ``end`` [s] (issue and
    completion; a write completes at its ``acks``-th replica), ``waits``:
    station index -> [s] array, time queued there by each request (for a
    write, by the replica that completed it), for the queueing stations
    visited. ``window`` = (t_w, t_e) [s]; ``busy`` [s]:
    server-seconds each station spent serving inside the window (background
    I/Os included); ``residence`` [s]: time requests spent at each station
    (waiting + service) for visits inside the window; ``burst_time`` [s]:
    node-seconds a node's device had flush I/Os outstanding, in the window.
    """

    operation: np.ndarray
    start: np.ndarray
    end: np.ndarray
    waits: dict
    warmup: int
    window: tuple[float, float]
    busy: np.ndarray
    residence: np.ndarray
    burst_time: float = 0.0
    engine: str = "simpy"

    @property
    def response(self) -> np.ndarray:
        """Response time of each request [s]."""
        return self.end - self.start


def t_interval(values, level: float = 0.95, *, positive: bool = False) -> tuple[float, float, float]:
    """Mean and Student t confidence interval of iid replication estimates.

    ``mean -+ t_{(1 + level) / 2, R - 1} s / sqrt(R)`` (Law 2015, eq. 4.12).
    ``positive``: for a quantity that cannot be negative (a rate, a latency),
    an interval that would reach below zero is taken on the log scale
    instead, ``mean x exp(-+ t (s / mean) / sqrt(R))`` (the delta method for
    ``log mean``; Law 2015, sec. 9.4.1): positive and asymmetric where the
    replications spread that wide. NaN bounds with fewer than two finite values.
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return np.nan, np.nan, np.nan
    mean = float(x.mean())
    if x.size < 2:
        return mean, np.nan, np.nan
    t = float(special.stdtrit(x.size - 1, 0.5 + level / 2))
    sd = float(x.std(ddof=1))
    half = t * sd / np.sqrt(x.size)
    if positive and mean > 0 and mean - half <= 0:
        rel = half / mean
        return mean, mean * float(np.exp(-rel)), mean * float(np.exp(rel))
    return mean, mean - half, mean + half


def spread_warning(values, ratio: float = 1.5) -> str:
    """Words when replication estimates split into groups (metastable or too-short runs), else "".

    Sorted estimates with a gap of more than ``ratio`` between neighbours
    (e.g. 264 k, 264 k, 881 k ops/s) mean the runs do not share one steady
    state: a confidence interval over them describes no run.
    """
    x = np.sort(np.asarray(values, dtype=float)[np.isfinite(values)])
    if x.size < 2 or x[0] <= 0:
        return ""
    gaps = x[1:] / x[:-1]
    k = int(np.argmax(gaps))
    if gaps[k] <= ratio:
        return ""
    return (f"replications split: {k + 1} near {np.median(x[: k + 1]):.4g} and {x.size - k - 1} near "
            f"{np.median(x[k + 1 :]):.4g} (a metastable or unsteady system, or runs too short)")  # fmt: skip


def replication_metrics(rec: Records, cfg: SimConfig) -> dict[str, float]:
    """The metrics of one replication, named as :func:`perfmodel.predict`'s columns.

    Latencies in ms; ``throughput_ops_s`` [1/s] is the issue rate inside the
    window (equal to the completion rate in steady state); ``util_*`` [-]
    from the busy time; ``device_queue_depth`` the time-average number of
    user requests at one device; ``burst_duty`` the fraction of time a
    node's devices spend draining flushes.
    """
    t_w, t_e = rec.window
    span = t_e - t_w
    n = rec.start.size
    keep = slice(rec.warmup, n)
    resp = rec.response[keep]
    op = rec.operation[keep]
    out: dict[str, float] = {"throughput_ops_s": (n - 1 - rec.warmup) / span if span > 0 else np.nan}

    def latency(prefix: str, values: np.ndarray) -> None:
        if values.size == 0:
            for name in ("mean", "p50", "p95", "p99", "p999"):
                out[f"{prefix}latency_{name}_ms"] = np.nan
            return
        out[f"{prefix}latency_mean_ms"] = float(values.mean()) * 1e3
        qs = np.quantile(values, [q for q, _ in LEVELS])
        for (_, name), v in zip(LEVELS, qs, strict=True):
            out[f"{prefix}latency_{name}_ms"] = float(v) * 1e3

    latency("", resp)
    latency("read_", resp[op == READ])
    latency("write_", resp[op == WRITE])
    servers = np.asarray(cfg.servers, dtype=float)
    mult = np.asarray(cfg.mult, dtype=float)
    capacity = np.where(np.isinf(servers), np.nan, servers) * mult * span
    with np.errstate(invalid="ignore", divide="ignore"):
        util = np.where(np.isinf(servers), 0.0, rec.busy / capacity)
    for k, name in enumerate(cfg.stations):
        if name != "fixed":
            out[f"util_{name}"] = float(util[k])
    dev = cfg.device_station
    out["device_queue_depth"] = float(rec.residence[dev] / span / mult[dev]) if span > 0 else np.nan
    out["burst_duty"] = float(rec.burst_time / (span * cfg.nodes)) if span > 0 else np.nan
    return out


def records_frame(rec: Records, cfg: SimConfig, stations=None):
    """A tidy DataFrame of one replication's requests (one row each).

    Columns: ``request``, ``operation`` (read / write), ``start_s``,
    ``end_s``, ``response_time_s``, ``wait_<station>_s`` for every station
    the configuration's requests visit, ``warmup`` (discarded from the
    statistics).
    """
    import pandas as pd

    n = rec.start.size
    cols = {
        "request": np.arange(n, dtype=np.int64),
        "operation": pd.Categorical.from_codes(rec.operation.astype(np.int8), ["read", "write"]),
        "start_s": rec.start,
        "end_s": rec.end,
        "response_time_s": rec.response,
    }
    for k in sorted(rec.waits) if stations is None else stations:
        cols[f"wait_{cfg.stations[k]}_s"] = rec.waits[k] if k in rec.waits else np.zeros(n)
    cols["warmup"] = np.arange(n) < rec.warmup
    return pd.DataFrame(cols, copy=False)
