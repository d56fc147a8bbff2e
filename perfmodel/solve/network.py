"""Vectorised solution of many small two-class queueing networks at once.

:func:`perfmodel.predict` turns each configuration into the same set of
stations (network, CPU, device, WAL device, log writer, fixed delays) with
per-configuration demands, then solves all configurations together here:

* **closed loop** (N requests outstanding, think time Z): Schweitzer's
  approximate MVA with Seidmann's multi-server equivalent (Schweitzer 1979;
  Seidmann, Schweitzer & Shalev-Oren 1987; Lazowska et al. 1984, sec. 7.4).
  Its error against exact MVA is measured in docs/queueing.md (median
  throughput error < 1 %). Reads and writes are one aggregate class whose
  queues both see; each class's wait is then recovered from its own demand
  per customer found (the usual disaggregation), and background jobs are open
  arrivals beside the closed customers, waited for at their own size at a
  drive's FCFS queue.
* **open loop** (Poisson arrivals): each station is an M/G/c queue at its
  utilisation (Erlang C with the Allen-Cunneen factor over the job mix); a
  station at utilisation >= 1 is saturated (infinite latency, flagged).

Background work (flushes, compactions, checkpoints) is charged by the caller
to the writes that cause it, so the device's capacity bounds their rate; no
request waits for it, but every FCFS visit waits for the jobs it finds, background
jobs included (:func:`job_mix`), whatever the visiting class.

Writes go to ``rf`` replicas (``rf`` copies of the work) and complete at the
``k``-th answer: their latency is the k-th order statistic of ``rf`` replica
times, approximated as for exponentials (mean factor ``sum_{i=rf-k+1}^{rf}
1/i``, variance factor ``sum 1/i^2``; David & Nagaraja 2003).

Latency percentiles come from the first two moments of each class's
end-to-end time (Erlang C waiting probability, exponential waits, gamma
service; see :mod:`perfmodel.queueing.path`) matched to a gamma distribution,
and a mixture for reads that meet a background write burst.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import special

from perfmodel.mechanisms import bursts
from perfmodel.queueing import erlang_c_unchecked

STATIONS = ("network", "cpu", "device", "wal", "log", "client_link", "client", "fixed")


@dataclass
class StationNetwork:
    """Per-configuration station data; arrays of shape (M, K) or (M,).

    ``d_read`` / ``d_write`` [s]: service demand at each station of one read /
    of one replica of a write; ``servers`` (``inf`` = delay); ``mult``:
    identical stations the visits spread over (shards, devices, nodes);
    ``scv``: squared coefficient of variation of service; ``read_fraction``
    [-]; ``copies``: replicas executing each write; ``acks``: replica answers
    a write waits for. ``load_write`` [s]: work each write replica causes at a
    station that nobody waits for (flushes, compactions, checkpoints): it
    occupies servers (utilisation, queues) but is not part of the write's
    residence. ``destage`` [s] (at most ``load_write``): the part of it that holds the
    server right after the write replica's own visits (a drive programming what it has
    acknowledged: the simulator's ``SimConfig.destage``); ``flush`` [s]: the part an LSM store
    writes in flush bursts, which the burst terms below carry for the reads that meet them (the
    simulator's flushes): it loads the server but is no job in the waits' mix; the rest,
    ``load_write - destage - flush``, is one background job per write replica, queued FCFS like
    any visit (the simulator's ``SimConfig.background``). ``v_read`` / ``v_write``: visits per
    request (default: 1 where the demand is positive); a read that reaches the device only on a
    cache miss visits it ``miss x reads per miss`` times on average.
    """

    d_read: np.ndarray
    d_write: np.ndarray
    servers: np.ndarray
    mult: np.ndarray
    scv: np.ndarray
    read_fraction: np.ndarray
    copies: np.ndarray  # replicas executing each write (RF)
    acks: np.ndarray  # replica answers a write waits for
    #: reads delayed by background bursts: fraction of time a device is in
    #: bursts per unit throughput [s], the burst backlog B a read meeting one
    #: waits a part of [s], the share of reads that reach the device [-] (of them
    #: ``flush_queue_share`` reach the flush's hardware queue: :attr:`burst_queue_reach`), and the
    #: number of devices the bursts and reads spread over [count]
    burst_duty_per_op: np.ndarray | float = 0.0
    burst_backlog: np.ndarray | float = 0.0
    burst_reach: np.ndarray | float = 0.0
    burst_devices: np.ndarray | float = 1.0
    #: squared coefficient of variation of flush sizes (0: one size) [-]
    burst_size_scv: np.ndarray | float = 0.0
    #: what a read meeting a burst waits when the server's own I/O scheduler holds the burst back
    #: and keeps the device's queue at its latency goal [s]; inf: its share of the backlog
    burst_read_cap: np.ndarray | float = np.inf
    #: writes held by memtable back-pressure: the share of writes one client's stall
    #: catches [-] (copies / (nodes x writes per flush)); 0: unknown, every write waits
    stall_share: np.ndarray | float = 0.0
    load_write: np.ndarray | float = 0.0
    destage: np.ndarray | float = 0.0
    flush: np.ndarray | float = 0.0
    #: share of the requests at a flushing station that share the flush's hardware queue [-] (M,)
    #: (:func:`~perfmodel.mechanisms.bursts.flush_queue_share`; 1: one queue): only they queue behind
    #: its I/Os, the others are fetched ahead of them (the simulator's second device timeline); the station's
    #: capacity and utilisation count all of it
    flush_queue_share: np.ndarray | float = 1.0
    v_read: np.ndarray | None = None
    v_write: np.ndarray | None = None
    #: busiest instance's load over the mean at each station [-] (>= 1; placement imbalance):
    #: the solvers load every instance like the busiest, ``mult / imbalance`` instances' worth
    imbalance: np.ndarray | float = 1.0
    #: least squared coefficient of variation of a wait [-] (M,): 0 for first come, first served
    #: (a closed loop's finite-population wait, almost fixed at saturation); an event loop serving
    #: its connections in another order spreads the same mean wait (:func:`class_moments`)
    wait_scv: np.ndarray | float = 0.0
    #: stations whose queue serves jobs in arrival order (a drive's command queue): in the closed
    #: solver a visit there waits for the background jobs it finds at their own size; elsewhere
    #: (time-shared threads) they only load the station. Requests found cost each class its own
    #: demand everywhere. The open solver and the simulator queue FCFS everywhere.
    fcfs: np.ndarray | bool = True

    def __post_init__(self) -> None:
        self.ack_mean, self.ack_var = ack_factors(self.copies, self.acks)
        self.imbalance = np.array(np.broadcast_to(np.asarray(self.imbalance, dtype=float), self.d_read.shape))
        self.fcfs = np.array(np.broadcast_to(np.asarray(self.fcfs, dtype=bool), self.d_read.shape))
        if (self.imbalance < 1).any():
            raise ValueError("imbalance: must be >= 1 (the busiest instance over the mean)")
        self.load_write = np.array(
            np.broadcast_to(np.asarray(self.load_write, dtype=float), self.d_write.shape)
        )
        self.destage = np.array(np.broadcast_to(np.asarray(self.destage, dtype=float), self.d_write.shape))
        self.flush = np.array(np.broadcast_to(np.asarray(self.flush, dtype=float), self.d_write.shape))
        self.flush_queue_share = np.array(
            np.broadcast_to(np.asarray(self.flush_queue_share, dtype=float), self.d_write.shape[:1])
        )
        if ((self.flush_queue_share <= 0) | (self.flush_queue_share > 1)).any():
            raise ValueError("flush_queue_share: must be in (0, 1]")
        parts = self.destage + self.flush
        if (
            (self.destage < 0).any()
            or (self.flush < 0).any()
            or (parts > self.load_write * (1 + 1e-9) + 1e-300).any()
        ):
            raise ValueError("destage, flush: each >= 0, together at most load_write (they are part of it)")
        if self.v_read is None:
            self.v_read = (self.d_read > 0).astype(float)
        if self.v_write is None:
            self.v_write = (self.d_write > 0).astype(float)
        scv = np.asarray(self.scv, dtype=float)
        if not (np.isfinite(scv) & (scv >= 0)).all():
            raise ValueError("scv: every station's service SCV must be finite and >= 0")

    @property
    def flush_load_share(self) -> np.ndarray:
        """Share of a flush's load in the queue of the requests at its station [-] (M, 1):
        ``flush_queue_share``, and 0 where the server's own I/O scheduler holds the flush back
        (``burst_read_cap`` finite: a request waits that cap in the burst terms instead)."""
        held = np.isfinite(
            np.broadcast_to(np.asarray(self.burst_read_cap, dtype=float), self.read_fraction.shape)
        )
        return np.where(held, 0.0, self.flush_queue_share)[:, None]

    @property
    def burst_queue_reach(self) -> np.ndarray:
        """Share of the reads that reach a bursting device's flush queue [-] (M,): ``burst_reach x
        flush_queue_share`` (derived, so a changed ``burst_reach`` or share carries over)."""
        return np.asarray(self.burst_reach, dtype=float) * self.flush_queue_share


def background_jobs(net: StationNetwork) -> np.ndarray:
    """Mean work of the background job each write replica leaves at each station [s] (M, K):
    ``load_write - destage - flush`` (a write that does not visit a station leaves its destage
    there as such a job too), 0 where that is rounding noise (below 1e-9 of ``load_write``)."""
    destage = np.where(net.v_write > 0, net.destage, 0.0)
    own = net.load_write - destage - net.flush
    return np.where(own > 1e-9 * net.load_write, own, 0.0)


def job_mix(net: StationNetwork):
    """The jobs each station serves, per request: ``(jobs, mean, scv)``, each (M, K).

    Three kinds of job share a station's FCFS queue: reads' visits (``f v_read`` of
    ``d_read / v_read`` each), write replicas' visits (``(1 - f) copies v_write`` of ``d_write /
    v_write``, each followed on the same server by its share ``e = destage / v_write`` of the
    destage, a fixed time as the simulator holds it) and background jobs (``(1 - f) copies`` of
    ``load_write - destage`` each, where that is positive; a write that does not visit the station
    leaves its destage as such a job too). ``jobs`` [per request]; ``mean`` [s]: the mean service
    of one job, ``work / jobs`` (0 where there are none); ``scv`` [-]: the mix's
    ``E[S^2] / E[S]^2 - 1`` with ``E[S^2] = sum_i p_i s_i^2 (1 + c^2)`` (``s^2 (1 + c^2) + 2 s e +
    e^2`` for a write visit and its destage), or the station's own SCV where there are no jobs --
    what a waiting request's residual sees (a 10 us read and a 90 us write of fixed times, half
    and half: 0.64, not 0).
    """
    f, copies = net.read_fraction[:, None], net.copies[:, None]
    c2 = net.scv
    n_r, n_w = f * net.v_read, (1 - f) * copies * net.v_write
    destage = np.where(net.v_write > 0, net.destage, 0.0)
    own = background_jobs(net)
    n_b = np.where(own > 0, (1 - f) * copies, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s_r = np.where(net.v_read > 0, net.d_read / net.v_read, 0.0)
        s_w = np.where(net.v_write > 0, net.d_write / net.v_write, 0.0)
        e = np.where(net.v_write > 0, destage / net.v_write, 0.0)
        jobs = n_r + n_w + n_b
        work = n_r * s_r + n_w * (s_w + e) + n_b * own
        second = (
            n_r * s_r**2 * (1 + c2) + n_w * (s_w**2 * (1 + c2) + 2 * s_w * e + e**2) + n_b * own**2 * (1 + c2)
        )
        # a station requests visit less than once in 1e12 requests counts no jobs (hypothesis found
        # 1e300 s at read_fraction 1e-305 when background work was folded into such visits)
        some = jobs > 1e-12
        mean = np.where(some, work / np.where(some, jobs, 1.0), 0.0)
        mix = second / np.where(some, jobs, 1.0) / mean**2 - 1.0
    scv = np.where(some & (mean > 0) & np.isfinite(mix), np.maximum(mix, 0.0), c2)
    return np.where(some, jobs, 0.0), mean, scv


def service_scv(net: StationNetwork) -> np.ndarray:
    """SCV of one job's service at each station over the job mix [-] (M, K): :func:`job_mix`."""
    return job_mix(net)[2]


def waiting_scv(net: StationNetwork) -> np.ndarray:
    """The service SCV the solvers' waits use [-] (M, K): the job mix's (:func:`service_scv`)
    up to 1. Below 1 a waiting request meets a shorter residual than an exponential's (fixed
    statement times: Pollaczek-Khinchine's (1 + c^2) / 2); above it -- reads and writes of very
    different times at one station -- the waits stay the exponential network's, on which the
    AMVA and the calibrated fits rest (a known limit: such a mix waits longer)."""
    return np.minimum(service_scv(net), 1.0)


@dataclass
class Solution:
    """Throughput [1/s], per-class residence [s] (M, K), utilisation (M, K), waits."""

    throughput: np.ndarray
    r_read: np.ndarray
    r_write: np.ndarray
    w_read: np.ndarray
    w_write: np.ndarray
    utilization: np.ndarray
    wait_probability: np.ndarray  # per read (M, K)
    saturated: np.ndarray
    iterations: int
    wait_probability_write: np.ndarray | None = None  # per write replica (M, K)
    #: memtable back-pressure where its shape is known (``StationNetwork.stall_share``): mean
    #: stall per write [s] (M,), *not* in ``r_write`` / ``w_write``, and the share of
    #: writes that stall [-] (M,); each stalled write waits write_stall / probability
    write_stall: np.ndarray | None = None
    write_stall_probability: np.ndarray | None = None
    #: closed loop: the largest variance of a read's / a write replica's wait at each station
    #: that a finite population allows [s^2] (M, K) (:func:`finite_population_wait_var`);
    #: ``None`` (open arrivals): no cap
    wait_var_cap_read: np.ndarray | None = None
    wait_var_cap_write: np.ndarray | None = None


def ack_factors(copies, acks):
    """Mean and variance factors of the k-th of n iid exponentials [-].

    ``sum_{i=n-k+1}^{n} 1/i`` and ``sum 1/i^2`` (Renyi representation), via
    digamma / trigamma differences so that arrays broadcast.
    """
    n, k = np.broadcast_arrays(np.asarray(copies, dtype=float), np.asarray(acks, dtype=float))
    # few distinct (n, k) pairs: evaluate each once (n, k are whole numbers < 2^20)
    keys, inverse = np.unique(n.ravel() * 2.0**20 + k.ravel(), return_inverse=True)
    un, uk = np.floor(keys / 2.0**20), keys % 2.0**20
    mean = special.digamma(un + 1) - special.digamma(un - uk + 1)
    var = special.polygamma(1, un - uk + 1) - special.polygamma(1, un + 1)
    inverse = inverse.ravel()
    return mean[inverse].reshape(n.shape), var[inverse].reshape(n.shape)


def _split(net: StationNetwork):
    delay = np.isinf(net.servers)
    c = np.where(delay, 1.0, net.servers)
    return delay, c


@dataclass
class _Stations:
    """The closed solve's terms at the queueing stations ``qc`` (delay stations dropped), (M, Q)."""

    qc: np.ndarray  # the queueing stations' columns
    delay_col: np.ndarray  # the delay stations' mask (all columns)
    f: np.ndarray  # read fraction (M,)
    fr: np.ndarray  # reads' weight in the cycle (M,)
    fw: np.ndarray  # writes' (M,)
    gw: np.ndarray  # writes' wait weight: (1 - f) x the k-th-of-n acks' mean factor (M,)
    dr: np.ndarray  # read demand [s]
    dw: np.ndarray  # write replica demand [s]
    c: np.ndarray  # servers
    m: np.ndarray  # instances the visits spread over, the busiest's share (mult / imbalance)
    copies: np.ndarray  # (M, 1)
    load: np.ndarray  # background work per write replica [s]
    vr_k: np.ndarray  # visits per read
    vw_k: np.ndarray  # visits per write replica
    flush: np.ndarray  # flush bursts' work per write replica [s]
    flush_seen: np.ndarray  # of it, what the requests' queue sees [s]
    a_r: np.ndarray  # D / c per read [s]
    a_w: np.ndarray  # D / c per write replica [s]
    a_req: np.ndarray  # all the work there per request, over c [s]
    a_sig: np.ndarray  # the arrival-instant busy share per unit throughput [s]
    kappa: np.ndarray  # (1 - c^2) / 2 of the waits' SCV [-]
    scv_q: np.ndarray  # the waits' SCV [-]
    u_r: np.ndarray  # a read's wait per customer found [s]
    u_w: np.ndarray  # a write replica's [s]
    w_k: np.ndarray  # wait weight in the mean cycle [s]
    base: np.ndarray  # think time plus the requests' demands [s] (M,)


def _queueing_columns(net: StationNetwork) -> tuple[np.ndarray, np.ndarray]:
    """The stations that queue (``qc``) and the delay stations' mask (a delay in every configuration)."""
    is_delay = np.isinf(net.servers)
    delay_col = is_delay.all(0)
    if (is_delay[:, ~delay_col]).any():
        raise ValueError("servers: a station is a delay in some configurations only")
    # a station only background work loads (DM8's checkpoints on the data device) is queued
    # and utilised although no request waits there
    used = (net.d_read > 0).any(0) | (net.d_write > 0).any(0) | (net.load_write > 0).any(0)
    return np.flatnonzero(used & ~delay_col), delay_col


def _stations(net: StationNetwork, n, z) -> _Stations:
    """Each station's demands, busy shares and wait weights (comments: the AMVA's equations)."""
    qc, delay_col = _queueing_columns(net)
    f = net.read_fraction
    # a write waits for the k-th of its replicas: the order statistic applies to the
    # replicas' waiting times (the work itself is the same on each replica)
    fr, fw, gw = f, 1 - f, (1 - f) * net.ack_mean
    dr, dw = net.d_read[:, qc], net.d_write[:, qc]
    c, m = net.servers[:, qc], (net.mult / net.imbalance)[:, qc]
    a_r, a_w = dr / c, dw / c
    copies = net.copies[:, None]
    vw_k = net.v_write[:, qc]
    destage = np.where(vw_k > 0, net.destage[:, qc], 0.0)  # held by the write's own visits
    flush = net.flush[:, qc]  # LSM flush bursts: the burst terms carry the reads that meet them
    # the requests' own work (the closed customers) and the background jobs' (open arrivals at a
    # rate X (1 - f) copies: nobody waits for them, so the arrival theorem's (N - 1) / N does not
    # thin them -- the mixed open / closed network of Lazowska et al. 1984, sec. 7.4); flush
    # bursts load the station as the requests' own work does, in the queue of the requests that
    # share the flush's hardware queue only (the others are fetched ahead of its I/Os), in the
    # capacity all of it
    flush_seen = flush * net.flush_load_share  # none of it where the server's scheduler holds it
    a_own = f[:, None] * a_r + (1 - f)[:, None] * copies * (a_w + (destage + flush_seen) / c)
    a_bg = (1 - f)[:, None] * copies * background_jobs(net)[:, qc] / c
    a_req = a_own + a_bg + (1 - f)[:, None] * copies * (flush - flush_seen) / c  # all the work there
    # Schweitzer's equations in one unknown: with sigma_k = (N - 1) / (N m_k) the queue
    # Q_k = X a_k (1 + sigma_k Q_k) gives Q_k = X a_k / (1 - X a_k sigma_k), so the cycle
    # time Z + R(X) is increasing in X and X (Z + R(X)) = N has one root below
    # min_k 1 / a_sig_k (a_sig = a_own sigma + a_bg / m: background jobs are not thinned).
    sigma = ((n - 1) / n)[:, None] / m
    a_sig = a_own * sigma + a_bg / m  # the arrival-instant busy share per unit throughput
    # the customer in service when a request arrives has a mean residual (1 + c^2) / 2 of its
    # service (c^2 the SCV of the station's job mix, service_scv), not a whole one: with
    # y = X a_sig the arrival-instant busy share and kappa = (1 - c^2) / 2, the wait is
    # D / c (A - kappa y (1 - y)), A = y / (1 - y) the customers found. At light load this is
    # the mean-value argument for the M/G/1 wait (those waiting need a whole service, the one in
    # service its residual E[S^2] / (2 E[S]); Adan & van der Wal, 'Mean values techniques', in
    # Queueing Networks, Springer 2011) at the AMVA's arrival instant: Pollaczek-Khinchine's
    # (1 + c^2) / 2. The factor (1 - y) (an assumption) lets it vanish as the station
    # saturates, where a closed loop's arrival finds N - 1 ahead and waits for them whatever
    # the service law (a fixed service time starts as the arrival joins). A mix more variable
    # than exponential (c^2 > 1: reads and writes of very different times) keeps the
    # exponential network's wait, c^2 taken as 1 (:func:`waiting_scv`): the AMVA is a
    # product-form method, and that spread is a known limit. An approximation checked
    # against the simulator.
    _, s_mix, scv_mix = job_mix(net)  # once: the waits' SCV and the background jobs' size
    scv_q = np.minimum(scv_mix, 1.0)[:, qc]  # waiting_scv
    # A class's wait per customer found, per request: its own demand D / c for the requests found
    # (Seidmann; the usual disaggregation, exact for processor sharing), and at a station whose
    # queue serves in arrival order (``net.fcfs``: a drive's) the background jobs found at their
    # own size -- the found work's background share ``bg`` (of the arrival-instant busy share)
    # times the station's mean job (:func:`job_mix`) per visit, as the open solver's M/G/c wait
    # and the simulator charge them. Without background jobs this is the requests' own demand.
    vr_k, s_job = net.v_read[:, qc], s_mix[:, qc]
    with np.errstate(invalid="ignore", divide="ignore"):
        bg = np.where(net.fcfs[:, qc] & (a_sig > 0), (a_bg / m) / a_sig, 0.0)
    u_r = a_r * (1.0 - bg) + vr_k * s_job / c * bg
    u_w = a_w * (1.0 - bg) + vw_k * s_job / c * bg
    return _Stations(
        qc=qc, delay_col=delay_col, f=f, fr=fr, fw=fw, gw=gw, dr=dr, dw=dw, c=c, m=m, copies=copies,
        load=net.load_write[:, qc], vr_k=vr_k, vw_k=vw_k, flush=flush, flush_seen=flush_seen,
        a_r=a_r, a_w=a_w, a_req=a_req, a_sig=a_sig, kappa=0.5 * (1.0 - scv_q), scv_q=scv_q,
        u_r=u_r, u_w=u_w, w_k=fr[:, None] * u_r + gw[:, None] * u_w,
        base=z + fr * net.d_read.sum(1) + fw * net.d_write.sum(1),
    )  # fmt: skip


def _extra_cycle(terms, x, sub):
    """The mechanisms' extra cycle time per request at throughput ``x`` and its derivative [s]."""
    extra, d_extra = 0.0, 0.0
    for term in terms:
        e, de = term.cycle(x, sub)
        extra, d_extra = extra + e, d_extra + de
    return extra, d_extra


def _throughput_limits(st: _Stations, terms, n):
    """``(x_lim, x_cap, x_term)`` [1/s]: the root's upper bound, the stations' capacity and the
    least throughput a mechanism's term leaves (inf: none binds)."""
    with np.errstate(divide="ignore"):
        x_lim = np.min(np.where(st.a_sig > 0, 1.0 / st.a_sig, np.inf), axis=1)
        # capacity: no station may run above utilisation 1, including stations loaded by
        # background work nobody waits for (a write stalls instead: RocksDB / LSM write stalls)
        x_cap = np.min(np.where(st.a_req > 0, st.m / st.a_req, np.inf), axis=1)
    x_lim = np.minimum(x_lim, x_cap * (1 - 1e-9))
    x_term = np.full(x_cap.shape, np.inf)
    for term in terms:  # e.g. bursts that hold up many clients at once starve the bottleneck
        x_term = np.minimum(x_term, term.capacity(x_cap, n / (x_cap * st.base)))
    return np.minimum(x_lim, x_term * (1 - 1e-9)), x_cap, x_term


def _newton(st: _Stations, terms, n, x_lim, tol, max_iter):
    """The throughput ``X`` with ``X (Z + R(X)) = N`` [1/s] and the rounds the slowest took.

    Safeguarded Newton, vectorised, continued only on the configurations not yet within ``tol``
    (the same fixed point as the classic substitution, which converges slowly near saturation
    with many clients)."""
    size = len(x_lim)
    hi = np.minimum(n / st.base, x_lim)
    lo = np.zeros(size)
    x = np.where(np.isfinite(x_lim), np.minimum(n / st.base, 0.999 * x_lim), n / st.base)
    live = np.arange(size)
    rounds = 0
    for rounds in range(1, max_iter + 1):  # noqa: B007 -- reported as Solution.iterations
        sub = (live,)
        xl, asl, wl, kl = x[sub], st.a_sig[sub], st.w_k[sub], st.kappa[sub]
        denom = 1.0 - xl[:, None] * asl
        yl = xl[:, None] * asl
        arr = np.where(denom > 0, yl / denom - kl * yl * denom, np.inf)
        d_arr = np.where(denom > 0, asl * (1.0 / denom**2 - kl * (1.0 - 2.0 * yl)), np.inf)
        extra, d_extra = _extra_cycle(terms, xl, sub)
        cycle = st.base[sub] + extra + (wl * arr).sum(1)
        h = xl * cycle - n[sub]
        dh = cycle + xl * (d_extra + (wl * d_arr).sum(1))
        lo[sub] = np.where(h < 0, xl, lo[sub])
        hi[sub] = np.where(h >= 0, xl, hi[sub])
        with np.errstate(invalid="ignore"):
            newton = xl - h / dh
        ok = np.isfinite(newton) & (newton >= lo[sub]) & (newton <= hi[sub])
        x_next = np.where(ok, newton, 0.5 * (lo[sub] + hi[sub]))
        done = (np.abs(x_next - xl) <= tol * x_next) | (np.abs(h) <= 1e-3 * tol * n[sub])
        x[sub] = x_next
        live = live[~done]
        if live.size == 0:
            break
    return x, rounds


@dataclass
class _Waits:
    """The closed solve's waits at throughput ``x``: customers found, residences and the gaps."""

    arrive: np.ndarray  # customers an arrival finds per instance [-]
    ahead: np.ndarray  # the wait in units of u_r / u_w [-]
    rr_q: np.ndarray  # a read's residence [s]
    rw_q: np.ndarray  # a write replica's [s]
    stall: np.ndarray  # writes' stall behind background work at the bottleneck [s] (M,)
    surge: np.ndarray  # the queue a mechanism's capacity bound builds, per request [s] (M,)
    write_stall: np.ndarray  # memtable back-pressure kept apart, per write [s] (M,)
    write_stall_p: np.ndarray  # share of writes that stall [-] (M,)


def _waits(net: StationNetwork, st: _Stations, terms, n, x, x_cap, x_term) -> _Waits:
    """Waits at the solved throughput, with the correction, stall and surge that keep Little's law."""
    size = len(x)
    busy = x[:, None] * st.a_sig  # arrival-instant busy share per instance
    arrive = busy / (1.0 - busy)  # customers an arrival finds per instance
    residual = st.kappa * busy * (1.0 - busy)  # the residual correction [service times]
    extra_x = _extra_cycle(terms, x, slice(None))[0]
    cycle_x = st.base + extra_x + (st.w_k * (arrive - residual)).sum(1)
    # The correction never makes the loop outrun its bottleneck: where X sits at the capacity
    # bound (not a mechanism's term's) and the cycle falls short of N / X, the bottleneck station's
    # own correction -- where requests wait there -- is cut by up to that much (Little's law holds;
    # a saturated station waits as it would with any service law). Any rest is left to the
    # stall and surge below; the other stations keep theirs.
    rows = np.arange(size)
    neck = np.argmax(st.a_req / st.m, axis=1)  # the station whose capacity binds
    neck_corr = (st.w_k * residual)[rows, neck]
    capacity_bound = x_term >= x_cap
    gap = np.where((x * cycle_x < n * (1 - 1e-9)) & capacity_bound, n / x - cycle_x, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        cut = np.where(neck_corr > 0, np.clip(gap / neck_corr, 0.0, 1.0), 0.0)
    keep = np.ones_like(residual)
    keep[rows, neck] = 1.0 - cut
    ahead = arrive - residual * keep  # the wait in units of u_r / u_w (customers found)
    # Where the capacity bound binds before the population does, the clients' cycle is
    # shorter than N / X: the difference is the writes' stall behind background work,
    # charged to the bottleneck station as waiting (Little's law holds again).
    cycle_x = st.base + extra_x + (st.w_k * ahead).sum(1)
    short = x * cycle_x < n * (1 - 1e-9)
    # bound by a mechanism's term (burst starvation): the clients' missing time is the queue the
    # bottleneck builds while they are released from a burst; reads and writes both wait in it
    surge = np.where(short & (x_term < x_cap), (n / x - cycle_x) / np.maximum(st.fr + st.gw, 1e-300), 0.0)
    stall = np.where((st.fw > 0) & short & ~(surge > 0), (n / x - cycle_x) / np.maximum(st.gw, 1e-300), 0.0)
    # Memtable back-pressure (RocksDB max_write_buffer_number, Cassandra / ScyllaDB memtable
    # limits): a write that finds the next memtable full waits for the flush to drain, and a
    # stall catches each client once, as its next write: a share N x stall_share of writes
    # stall (the simulator shows exactly this share), each waiting stall / share. Where that
    # share is known the stall is kept apart (its waits are long and rare, not exponential).
    share = np.broadcast_to(np.asarray(net.stall_share, dtype=float), n.shape)
    shaped = (stall > 0) & (share > 0)
    return _Waits(
        arrive=arrive, ahead=ahead, rr_q=st.dr + st.u_r * ahead, rw_q=st.dw + st.u_w * ahead,
        stall=np.where(shaped, 0.0, stall), surge=surge,
        write_stall=np.where(shaped, stall * net.ack_mean, 0.0),  # per write, the ack wait included
        write_stall_p=np.where(shaped, np.minimum(n * share, 1.0), 1.0),
    )  # fmt: skip


def _wait_probabilities(st: _Stations, w: _Waits, util_seen):
    """P(wait) per read and per write replica at each station [-] (M, Q).

    Open M/M/c: P = C(c, c rho) (Erlang C) and a waiting request waits Exp with mean
    s / (c (1 - rho)), so E[W] = P s / (c (1 - rho)). The AMVA mean wait of a closed network can
    exceed that at low utilisation (finite population bursts) and falls short of it near
    saturation (the population bounds the queue); taking the larger of Erlang C and the P that
    reproduces the AMVA wait keeps P -> 1 at a saturated bottleneck and the conditional wait
    E[W] / P finite everywhere. Per visit: an arriving request finds A_k customers (per instance)
    and waits when all c servers are busy. P(wait | visit) is at least Erlang C at the
    utilisation, and at least A (1 - rho), which reproduces the AMVA wait of a visit (s A / c)
    with exponential waits of mean s / (c (1 - rho)); a class that visits v < 1 times per request
    waits with probability v P(wait | visit) (Tijms 1994, sec. 4.5; Lazowska et al. 1984, ch. 6).
    """
    vis = st.f[:, None] * st.vr_k + (1 - st.f)[:, None] * st.copies * st.vw_k
    rho = np.clip(util_seen, 0.0, 1.0 - 1e-12)
    p_visit = np.maximum(erlang_c_unchecked(st.c, st.c * rho), w.ahead * (1.0 - rho))
    p_visit = np.where(vis > 0, np.clip(np.nan_to_num(p_visit), 0.0, 1.0), 0.0)
    return np.minimum(st.vr_k, 1.0) * p_visit, np.minimum(st.vw_k, 1.0) * p_visit


def solve_closed(net: StationNetwork, population, think_time, *, tol=1e-10, max_iter=200) -> Solution:
    """Schweitzer AMVA with Seidmann multi-servers, vectorised over configurations.

    R_k = D_k / c_k (1 + A_k) + D_k (c_k - 1) / c_k = D_k + D_k / c_k A_k with the
    arrival-instant queue A_k = Q_k / m_k (N - 1) / N; X = N / (Z + sum_k R_k);
    Q_k = X D_k / c_k (1 + A_k). Stations without demand drop out; delay
    stations contribute their demand only. Mechanisms add their own terms (extra cycle time and
    a throughput bound: :class:`perfmodel.mechanisms.bursts.ClosedBursts`). ``iterations`` in the
    result is the number of Newton rounds the slowest configuration needed.
    """
    n = np.asarray(population, dtype=float)
    z = np.asarray(think_time, dtype=float)
    size, width = net.d_read.shape
    st = _stations(net, n, z)
    terms = [t for t in (bursts.ClosedBursts.of(net, n, size),) if t is not None]
    x_lim, x_cap, x_term = _throughput_limits(st, terms, n)
    x, rounds = _newton(st, terms, n, x_lim, tol, max_iter)
    w = _waits(net, st, terms, n, x, x_cap, x_term)
    per_instance = x[:, None] / (st.c * st.m)
    writes = (1 - st.f)[:, None] * st.copies
    util_q = per_instance * (st.f[:, None] * st.dr + writes * (st.dw + st.load))
    # the busy share the requests' queue sees: a flush's I/Os only for those that share its queue
    util_seen = util_q - per_instance * writes * (st.flush - st.flush_seen)
    pr_q, pw_wq = _wait_probabilities(st, w, util_seen)
    rr_q, rw_q, wr_q, ww_q, cap_r, cap_w = _charge_bottleneck(st, w, n, pr_q, pw_wq)

    def wide(values, base=None, fill=0.0):
        out = np.full((size, width), fill) if base is None else base
        out[:, st.qc] = values
        return out

    delay_col = st.delay_col
    return Solution(
        x,
        wide(np.where(st.dr > 0, rr_q, 0.0), np.where(delay_col, net.d_read, 0.0)),
        wide(rw_q, np.where(delay_col, net.d_write, 0.0)),
        wide(wr_q),
        wide(ww_q),
        wide(util_q),
        wide(pr_q),
        np.zeros(size, dtype=bool),
        rounds,
        wide(pw_wq),
        w.write_stall,
        w.write_stall_p,
        wide(cap_r, fill=np.inf),
        wide(cap_w, fill=np.inf),
    )


def _charge_bottleneck(st: _Stations, w: _Waits, n, pr_q, pw_wq):
    """Residences, waits and wait-variance caps with the stall and surge charged to the bottleneck.

    ``pr_q`` / ``pw_wq`` are set to 1 where a request always waits there (updated in place).
    Returns ``(rr_q, rw_q, wr_q, ww_q, cap_r, cap_w)``.
    """
    rr_q, rw_q = w.rr_q, w.rw_q
    neck = np.argmax(st.a_req / st.m, axis=1)
    surged, stalled = np.flatnonzero(w.surge > 0), np.flatnonzero(w.stall > 0)
    surge_col, stall_col = neck[surged], neck[stalled]
    wr_q = np.where(st.dr > 0, np.maximum(rr_q - st.dr, 0.0), 0.0)
    ww_q = np.where(st.dw > 0, np.maximum(rw_q - st.dw, 0.0), 0.0)
    rw_q = np.where(st.dw > 0, rw_q, 0.0)
    # a stalled write always waits at the bottleneck, whether or not it has I/O there
    ww_q[stalled, stall_col] += w.stall[stalled]
    rw_q[stalled, stall_col] += w.stall[stalled]
    pw_wq[stalled, stall_col] = 1.0
    for r_q, w_q, p_q in ((rr_q, wr_q, pr_q), (rw_q, ww_q, pw_wq)):
        r_q[surged, surge_col] += w.surge[surged]
        w_q[surged, surge_col] += w.surge[surged]
        p_q[surged, surge_col] = 1.0
    # a finite population caps how much the wait can vary (saturated: close to N service times)
    found_var = finite_population_found_var(w.arrive, st.m, n[:, None] - 1.0)
    cap_r = finite_population_wait_var(st.u_r, w.arrive, found_var, st.vr_k, st.scv_q, w.ahead)
    cap_w = finite_population_wait_var(st.u_w, w.arrive, found_var, st.vw_k, st.scv_q, w.ahead)
    for cap in (cap_r, cap_w):
        cap[surged, surge_col] = np.inf  # a burst's surge is long and rare: it keeps the exponential spread
    # a write stalled behind background work at a saturated station (destage, flushes) waits for
    # the customers ahead of it there just as well: each departure frees (D + background) / c of
    # work, so ww / that departures are ahead, from the same finite population
    if stalled.size:
        per_server = (st.dw + st.load)[stalled, stall_col] / st.c[stalled, stall_col]
        behind = ww_q[stalled, stall_col] / np.maximum(per_server, 1e-300)
        spread = finite_population_found_var(behind, st.m[stalled, stall_col], n[stalled] - 1.0)
        # every stalled write waits there, whether or not it has I/O there (one visit)
        cap_w[stalled, stall_col] = finite_population_wait_var(per_server, behind, spread, 1.0)
    return rr_q, rw_q, wr_q, ww_q, cap_r, cap_w


def finite_population_found_var(found, instances, others):
    """Variance of the number of customers an arrival finds at one instance of a station [-].

    ``found``: its mean (Schweitzer's arrival-instant queue per instance); ``instances``: the
    station's identical instances ``m`` (the visits spread evenly); ``others``: the customers
    besides the arriving one, ``N - 1``. The ``T = m x found`` customers at the station vary
    exactly as the ``N - 1 - T`` elsewhere do, taken as Poisson (an infinite-server delay fed
    by a saturated exponential server holds a Poisson number; Kleinrock 1975, sec. 3.8, the
    finite-source queue); in a product-form network ``T`` customers split over ``m`` equal
    FCFS queues uniformly over the compositions, one queue's share having variance
    ``T (T + m) (m - 1) / (m^2 (m + 1))`` (Bose-Einstein occupancy; Feller 1968, sec. II.5).
    Hence, with the split's variance at the mean ``T`` (the term ``Var T (m - 1) / (m^2 (m + 1))``
    dropped, of the order of the one kept), ``found (found + 1) (m - 1) / (m + 1) + (N - 1 - T)^+ /
    m^2``: a saturated single
    queue with ``N`` customers finds almost exactly ``N - 1 - X Z`` ahead, an open queue's
    geometric spread (variance ``A (1 + A)``) is kept where many instances share the
    customers.
    """
    m = np.maximum(np.asarray(instances, dtype=float), 1.0)
    total = m * found
    return found * (found + 1.0) * (m - 1.0) / (m + 1.0) + np.maximum(others - total, 0.0) / m**2


def finite_population_wait_var(per_server, found, found_var, visits, scv=1.0, ahead=None):
    """The wait's variance [s^2] when an arrival waits for the ``J`` customers it finds.

    ``per_server`` [s]: the class's demand at the station over its servers, ``D / c``, the
    mean time of one departure ahead (Seidmann); ``found``: mean of ``J``; ``found_var``:
    its variance (:func:`finite_population_found_var`); ``visits``: the class's visits per
    request; ``scv``: the SCV of one departure's service (1: exponential); ``ahead``: the mean
    wait in departures, ``J`` less the residual correction of :func:`solve_closed` (default
    ``found``). A request visiting ``v <= 1`` times waits ``J`` departures of ``D / (v c)``
    with probability ``v``: variance ``(D / c)^2 / v (c^2 E J + Var J) + w^2 (1 / v - 1)``
    with ``w = D / c x ahead`` (a random sum of ``J`` services of SCV ``c^2``: Ross,
    *Introduction to Probability Models*, sec. 3.6.2); ``v > 1`` visits are taken as one wait
    (the same as the open-arrival form). With exponential service and the open M/M/c's
    ``Var J`` this is exactly that form's ``w^2 (2 / P - 1)``; with fixed service a saturated
    queue's wait varies only as the count ahead does.
    """
    v = np.clip(np.asarray(visits, dtype=float), 1e-12, 1.0)
    w = per_server * (found if ahead is None else ahead)
    return per_server**2 / v * (scv * found + found_var) + w * w * (1.0 / v - 1.0)


def solve_open(net: StationNetwork, arrival_rate) -> Solution:
    """M/M/c stations at the offered load; saturated configurations flagged.

    ``throughput`` is the offered rate, or where a station would run at utilisation
    ``u >= 1`` the capacity ``rate / max u`` (what the bottleneck completes); the
    utilisations are those of the offered load (above 1 where saturated).

    Per visit an FCFS c-server station makes a request wait ``W = C(c, c rho)
    s / (c (1 - rho)) (1 + c_s^2) / 2`` with ``s`` the mean service of a job there (reads' and
    writes' visits and background jobs, :func:`job_mix`) and ``c_s^2`` the SCV of that job mix,
    at most 1 (:func:`waiting_scv`; Kleinrock 1975, eq. 3.43, the
    M/M/c wait; the Allen-Cunneen factor for general service, exact at c = 1 by
    Pollaczek-Khinchine where the mix's SCV is at most 1); a class waits ``v W`` per request for
    its ``v`` visits.
    """
    x = np.asarray(arrival_rate, dtype=float)
    f = net.read_fraction[:, None]
    copies = net.copies[:, None]
    delay, c = _split(net)
    dr, dw = net.d_read, net.d_write
    visits = f * net.v_read + (1 - f) * copies * net.v_write
    work = f * dr + (1 - f) * copies * (dw + net.load_write)
    util = np.where(delay, 0.0, x[:, None] * work * net.imbalance / (c * net.mult))
    saturated_k = util >= 1.0
    # a flush's I/Os load the queue of the requests that share its hardware queue only
    unseen = (1 - f) * copies * net.flush * (1 - net.flush_load_share)
    util_seen = np.where(delay, 0.0, x[:, None] * (work - unseen) * net.imbalance / (c * net.mult))
    jobs, s_job, scv_mix = job_mix(net)  # every job a visit waits behind, background jobs included
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.clip(util_seen, 0.0, 1.0 - 1e-12)
        p_visit = np.where(delay, 0.0, erlang_c_unchecked(c, c * rho))
        # Poisson arrivals, service SCV c^2: the M/M/c wait times (1 + c^2) / 2 (Allen-Cunneen;
        # exact for M/G/1 with c^2 <= 1, Pollaczek-Khinchine; docs/queueing.md)
        w_visit = np.where(
            delay | (visits == 0) | (jobs == 0),
            0.0,
            p_visit * s_job / (c * (1.0 - rho)) * 0.5 * (1.0 + np.minimum(scv_mix, 1.0)),  # waiting_scv
        )
    w_visit = np.where(saturated_k, np.inf, w_visit)
    with np.errstate(invalid="ignore"):
        wr = np.where(dr > 0, net.v_read * w_visit, 0.0)
        ww = np.where(dw > 0, net.v_write * w_visit, 0.0)
    rr = np.where(dr > 0, wr + dr, 0.0)
    rw = np.where(dw > 0, ww + dw, 0.0)
    # a saturated configuration completes what its bottleneck can: the offered rate over the
    # largest utilisation it would need (the capacity; utilisations stay at the offered load)
    peak = util.max(axis=1, initial=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        served = np.where(peak >= 1.0, x / np.where(peak >= 1.0, peak, 1.0), x)
    return Solution(
        served,
        rr,
        rw,
        wr,
        ww,
        util,
        np.minimum(net.v_read, 1.0) * p_visit,
        saturated_k.any(axis=1),
        0,
        np.minimum(net.v_write, 1.0) * p_visit,
    )


def class_moments(net: StationNetwork, sol: Solution, extra_read=0.0, extra_write=0.0):
    """Mean [s] and variance [s^2] of read and write end-to-end times.

    Per station: W is 0 w.p. 1 - P, else exponential (mean w / P), its variance capped in a
    closed loop by the finite population (``sol.wait_var_cap_*``, :func:`solve_closed`) and at
    least ``net.wait_scv x w^2`` (the order a server takes its waiting requests in changes the
    wait's spread, not its mean: first come, first served is the least, random order of service
    the exponential's SCV 1 at saturation; Kleinrock 1975, *Queueing Systems I*, sec. 4.12 and
    Kingman 1962, 'On queues in which customers are served in random order'); service has mean d
    and SCV ``scv``; stations independent (Tijms 1994, sec. 4.5).
    Writes: the k-th of ``copies`` replicas' waiting times (:func:`ack_factors`).
    ``extra_*`` are fixed latencies [s] added to each class.
    """
    p_read = np.maximum(sol.wait_probability, 1e-12)
    p_write = np.maximum(
        sol.wait_probability if sol.wait_probability_write is None else sol.wait_probability_write, 1e-12
    )

    floor = np.asarray(net.wait_scv, dtype=float)
    floor = floor[:, None] if floor.ndim else floor

    def moments(d, w, p, cap):
        var_w = np.where(w > 0, w * w * (2.0 / p - 1.0), 0.0)
        if cap is not None:  # a closed loop's finite population (solve_closed)
            var_w = np.minimum(var_w, cap)
        # the server's order of service (a saturated station's infinite wait stays infinite)
        var_w = np.maximum(var_w, floor * np.where(np.isfinite(w), w * w, 0.0))
        return (w + d).sum(1), (var_w + net.scv * d * d).sum(1)

    mean_r, var_r = moments(
        np.where(sol.r_read > 0, net.d_read, 0.0), sol.w_read, p_read, sol.wait_var_cap_read
    )
    d_w = np.where(sol.r_write > 0, net.d_write, 0.0)
    wait_mean, wait_var = moments(np.zeros_like(d_w), sol.w_write, p_write, sol.wait_var_cap_write)
    # the k-th of the replicas' waits (exponential order statistics: the mean scales by
    # g_mean, the variance by g_var); the work itself is the same on every replica
    mean_w = d_w.sum(1) + net.ack_mean * wait_mean
    var_w = (net.scv * d_w * d_w).sum(1) + net.ack_var * wait_var
    return mean_r + extra_read, var_r, mean_w + extra_write, var_w


def deterministic_part(net: StationNetwork, sol: Solution):
    """Latency every read / write pays with no variability [s]: stations with SCV 0.

    Wire and kernel latencies, transfers and fixed I/O-path costs shift a class's
    distribution rather than spread it: percentiles are ``shift + Gamma(mean -
    shift, var)``, so no percentile falls below the fixed part.
    """
    fixed = net.scv == 0
    shift_r = np.where(fixed & (sol.r_read > 0), net.d_read, 0.0).sum(1)
    shift_w = np.where(fixed & (sol.r_write > 0), net.d_write, 0.0).sum(1)
    return shift_r, shift_w


_TABLE_LEVELS = (0.5, 0.95, 0.99)
_LOG_SHAPES = np.linspace(np.log(1e-3), np.log(1e7), 24001)


def _small_shape_log_quantile(q, k):
    """log of the small-shape asymptote of the unit gamma quantile: (log q + lgamma(k+1)) / k."""
    return (np.log(q) + special.gammaln(k + 1.0)) / k


@functools.cache
def _residuals(q: float) -> np.ndarray:
    """The residual table of level ``q`` on ``_LOG_SHAPES`` (built on first use: ~25 ms a level)."""
    shapes = np.exp(_LOG_SHAPES)
    return np.log(special.gammaincinv(shapes, q)) - _small_shape_log_quantile(q, shapes)


def gamma_ppf(q: float, mean, var):
    """q-quantile [s] of the gamma with this mean [s] and variance [s^2], fast.

    Q(q; k, theta) = theta Q(q; k, 1) with shape k = mean^2 / var and scale
    theta = var / mean. For the levels 0.5, 0.95 and 0.99, ``log Q(q; k, 1)``
    is its small-shape asymptote ``(log q + lgamma(k + 1)) / k`` (from
    P(X <= x) ~ x^k / Gamma(k + 1) as x -> 0) plus a smooth residual
    interpolated in ``log k``: relative error < 1e-7 for 1e-3 <= k <= 1e7
    (tested against scipy). Other levels and shapes call
    ``scipy.special.gammaincinv``. Zero variance gives the mean; infinite
    moments give ``inf``.
    """
    mean, var = np.broadcast_arrays(np.asarray(mean, dtype=float), np.asarray(var, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = mean * mean / var
        theta = var / mean
        logk = np.log(k)
        if q in _TABLE_LEVELS:
            inside = (logk >= _LOG_SHAPES[0]) & (logk <= _LOG_SHAPES[-1])
            unit = np.exp(np.interp(logk, _LOG_SHAPES, _residuals(q)) + _small_shape_log_quantile(q, k))
            outside = ~inside & np.isfinite(k) & (k > 0)
            if outside.any():
                unit = np.array(unit, dtype=float)
                unit[outside] = special.gammaincinv(k[outside], q)
        else:
            unit = special.gammaincinv(k, q)
        out = theta * unit
    out = np.where(var > 0, out, mean)
    return np.where(np.isfinite(mean) & np.isfinite(var), out, np.inf)


def mixture_quantile(q, parts, *, bracket=None, rtol=1e-4, max_iter=100):
    """Quantile of a mixture ``sum_j w_j Gamma(mean_j, var_j)(t - shift_j)``.

    ``parts`` is a list of ``(weight, mean, var, shift)`` arrays of shape (M,)
    with positive variances and weights summing to 1. The answer lies between
    the smallest and largest component quantile (or in ``bracket``, a pair of
    arrays known to enclose it); the iteration starts from the
    gamma with the mixture's mean and variance. Newton steps are taken on
    ``log F`` against ``log t`` for q <= 0.5 (a gamma CDF is close to a power
    law near 0, even for shapes << 1) and on ``log(1 - F)`` against ``t``
    above (tails are close to exponential), safeguarded by bisection of the
    bracket (Press et al., Numerical Recipes, sec. 9.4); iteration continues
    only on the configurations not yet within ``rtol`` (relative).
    """
    # a component with no weight anywhere adds exact zeros to every sum: leave it out
    present = [p for p in parts if np.any(np.asarray(p[0]) > 0)]
    parts = present or parts[:1]
    if bracket is None:
        comps = np.stack([np.where(w > 0, s + gamma_ppf(q, m, v), np.nan) for w, m, v, s in parts])
        lo, hi = np.nanmin(comps, axis=0), np.nanmax(comps, axis=0)
    else:  # a caller that knows a tighter bracket (e.g. the classes' own quantiles)
        lo, hi = (np.array(b, dtype=float) for b in bracket)
    # (weight, shape, 1 / scale, shape - 1, log normaliser, shift) of every component, one array
    prepared = np.empty((len(parts), 6, lo.size))
    for j, (w, m, v, s) in enumerate(parts):
        k, theta = m * m / v, v / m
        for i, a in enumerate((w, k, 1.0 / theta, k - 1.0, special.gammaln(k) + np.log(theta), s)):
            prepared[j, i] = np.broadcast_to(a, lo.shape)
    # start from the gamma with the mixture's own mean and variance (two-moment match)
    mix_mean = sum(w * (m + sh) for w, m, v, sh in parts)
    mix_var = sum(w * (v + (m + sh) ** 2) for w, m, v, sh in parts) - mix_mean**2
    guess = gamma_ppf(q, mix_mean, np.maximum(mix_var, 0.0))
    t = np.where((guess > lo) & (guess < hi), guess, np.sqrt(lo * hi))
    out = t.copy()
    idx = np.arange(t.size)
    log_q, log_s, upper = np.log(q), np.log1p(-q), q > 0.5
    for it in range(max_iter):
        cdf = np.zeros_like(t)
        pdf = np.zeros_like(t)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for w, k, inv_theta, km1, log_norm, s in prepared:
                x = np.maximum(t - s, 0.0) * inv_theta
                cdf += w * special.gammainc(k, x)
                dens = np.exp(km1 * np.log(x) - x - log_norm)  # x^(k-1) e^-x / (Gamma(k) theta)
                pdf += w * np.where(x > 0, dens, 0.0)
        below = cdf < q
        lo = np.where(below, t, lo)
        hi = np.where(below, hi, t)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if upper:  # tails are close to exponential: log S(t) is nearly linear in t
                sf = 1.0 - cdf
                newton = t + (np.log(sf) - log_s) * sf / pdf  # d log S / dt = -f / S
            else:  # near 0 a gamma CDF is close to a power law: log F nearly linear in log t
                newton = t * np.exp(-(np.log(cdf) - log_q) * cdf / (t * pdf))
        inside = (newton > lo) & (newton < hi) & np.isfinite(newton)
        # after a few rejected Newton steps, plain halving guarantees progress
        half = np.sqrt(lo * hi) if it < 20 else 0.5 * (lo + hi)
        t_next = np.where(inside, newton, half)
        done = (np.abs(t_next - t) <= rtol * t_next) | (hi - lo <= rtol * hi)
        out[idx[done]] = t_next[done]
        keep = ~done
        if not keep.any():
            break
        idx, t, lo, hi = idx[keep], t_next[keep], lo[keep], hi[keep]
        prepared = prepared[:, :, keep]
    else:
        out[idx] = t
    return out
