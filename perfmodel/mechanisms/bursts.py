"""Flush and compaction bursts: the physics, the closed solver's terms and the latency's parts.

Large sequential writes (memtable flushes, compactions) arrive in **bursts**:
a flush writes the whole memtable as 512 KiB I/Os as fast as the device takes
them, pushing the queue depth from tens to hundreds (seed 003). Small reads that
arrive during a burst wait behind the burst's backlog; the fraction of time the
device spends in bursts is the background write bandwidth over the burst
bandwidth. :func:`burst_profile` computes both from the write workload.
With open (Poisson) arrivals a read meets a burst with probability equal to its
time share and waits a uniform part of the backlog; in a closed loop the
clients a burst holds up stop arriving, so fewer reads meet it and each waits
longer: :func:`closed_loop_burst`.

The mechanism's pieces live here: the physics above (pure, broadcast), the closed-loop
solver's terms (:class:`ClosedBursts`: the extra cycle time of reads that meet a burst and the
throughput the bursts leave, which :func:`perfmodel.solve.network.solve_closed` adds up with any
other mechanism's), and the helpers the tail latency's mixture uses (:func:`burst_visits`,
:func:`burst_points`, :func:`held_burst_wait`).

All functions are pure and broadcast; SI units (bytes, seconds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from perfmodel.inputs._validate import as_array, in_range
from perfmodel.inputs.units import KIB

#: I/O size of memtable flushes and compactions on Linux (max_sectors_kb) [B].
FLUSH_IO_BYTES = 512 * KIB


def flush_queue_share(hardware_queues, cpus):
    """Share of a device's reads that queue behind a flush's backlog [-]: ``1 / min(q, cpus)``.

    A flush (or compaction) is written by one thread, so its I/Os enter the
    hardware queue of that thread's CPU. blk-mq gives each CPU a software queue
    and maps the CPUs onto ``min(q, cpus)`` hardware queues, each with its own
    tags (``nr_requests``), so a backlog of hundreds of 512 KiB writes waits in
    that one queue (Linux ``Documentation/block/blk-mq.rst``, "Software staging
    queues" / "Hardware dispatch queues"; Bjorling et al., "Linux Block IO:
    Introducing Multi-queue SSD Access on Multi-core Systems", SYSTOR 2013). An
    NVMe controller fetches from its submission queues in round robin (NVMe Base
    Specification, "Command Arbitration"), so a read submitted on another CPU's
    queue is fetched at the next arbitration round and does not wait for the
    backlog; only the reads issued on the flushing CPU's queue do, a share
    ``1 / min(q, cpus)`` of them with reads spread evenly over the CPUs
    (assumption). A SATA drive has one queue (AHCI), so every read shares it:
    share 1, the single-queue backlog of seed 003.

    Parameters
    ----------
    hardware_queues : the device's submission queues [count], >= 1.
    cpus : logical CPUs of the node that submit I/O [count], >= 1.
    """
    q = in_range(hardware_queues, "hardware_queues", 1.0)
    c = in_range(cpus, "cpus", 1.0)
    return 1.0 / np.minimum(q, c)


def burst_profile(
    background_write_bytes_s, burst_bandwidth_bytes_s, burst_queue_depth, io_bytes=FLUSH_IO_BYTES
):
    """Duty cycle and read delay of background write bursts (flushes, compactions).

    Parameters
    ----------
    background_write_bytes_s : mean rate the database writes in the background
        (memtable flushes plus compaction rewrites) [B/s].
    burst_bandwidth_bytes_s : rate a burst drains at, the device's sequential
        write bandwidth [B/s].
    burst_queue_depth : I/Os a burst keeps outstanding (bounded by the block
        layer's request limit; seed 003 saw 200, spikes to 800) [count].
    io_bytes : size of a burst I/O [B] (512 KiB).

    Returns
    -------
    duty : fraction of time the device is in a burst [-],
        ``min(rate / bandwidth, 1)``.
    delay_s : mean extra wait of a read that arrives during a burst [s]: half
        the backlog ahead of it, ``QD * io_bytes / bandwidth / 2`` (a read
        arriving at a uniform moment of a FIFO backlog).
    max_delay_s : the whole backlog ``QD * io_bytes / bandwidth`` [s].
    """
    rate = in_range(background_write_bytes_s, "background_write_bytes_s", 0.0)
    bw = as_array(burst_bandwidth_bytes_s, "burst_bandwidth_bytes_s", positive=True)
    qd = in_range(burst_queue_depth, "burst_queue_depth", 0.0)
    size = as_array(io_bytes, "io_bytes", positive=True)
    duty = np.minimum(rate / bw, 1.0)
    backlog = qd * size / bw
    return duty, backlog / 2.0, backlog


def background_write_rate(user_write_bytes_s, write_amplification):
    """Bytes an LSM store writes in the background per second [B/s].

    ``user_bytes * WA``: every user byte is flushed once and rewritten by
    compaction ``WA - 1`` more times (leveled compaction: about the level
    fan-out per level; O'Neil et al., "The log-structured merge-tree", 1996;
    Dong et al., "Optimizing space amplification in RocksDB", CIDR 2017).
    """
    u = in_range(user_write_bytes_s, "user_write_bytes_s", 0.0)
    wa = in_range(write_amplification, "write_amplification", 1.0)
    return u * wa


def closed_loop_burst(visits_per_backlog):
    """How the reads of a closed loop meet a FIFO burst backlog of length B.

    Open arrivals see time averages (PASTA): a read meets a burst with
    probability ``duty`` and waits ``U(0, B)``. In a closed loop a client that
    meets a burst is held until the backlog ahead of it drains, so it arrives
    at most once per burst. Take a client free at the burst's start, its next
    visit to the bursting device ``T ~ Exp(lambda)``: it is caught when
    ``T < B`` and then waits ``B - T``. With ``y = lambda B`` (visits one client
    makes to that device per backlog time, away from bursts), per burst and
    client:

    * ``P(caught) = 1 - e^-y``; the share of reads that meet a burst is
      ``duty x s(y)`` with ``s(y) = (1 - e^-y) / y`` (per read, relative to the
      open-loop ``duty``);
    * the caught read's wait ``W = B - T`` with ``T`` exponential truncated to
      ``[0, B]``: ``E[T] = B (1/y - 1/(e^y - 1))``,
      ``Var[T] = B^2 (1/y^2 - e^y / (e^y - 1)^2)``;
    * the mean extra wait per read reaching the device is
      ``duty x B x h(y)``, ``h(y) = s(y) E[W] / B = (y - 1 + e^-y) / y^2``.

    As ``y -> 0`` this is the open-loop answer (``s = 1``, ``E[W] = B/2``,
    ``Var[W] = B^2/12``, ``h = 1/2``); as ``y`` grows, ``h -> 1/y``: a client
    loses at most the backlog per burst, however many reads it would have sent.
    (Finite-source arrivals see fewer customers than time averages: Kleinrock,
    *Queueing Systems* vol. 1, 1975, sec. 3.8 (Engset); the truncated-
    exponential wait is derived in docs/models.md.)

    Parameters
    ----------
    visits_per_backlog : ``y = lambda B`` >= 0 [-].

    Returns
    -------
    share : ``s(y)`` [-]; mean : ``E[W] / B`` [-]; var : ``Var[W] / B^2`` [-];
    h : ``s(y) E[W] / B`` [-].
    """
    y = in_range(visits_per_backlog, "visits_per_backlog", 0.0)
    small = y < 1e-3
    ys = np.where(small, 1.0, y)  # series below 1e-3 (cancellation), closed forms above
    em1 = np.expm1(-ys)  # e^-y - 1
    share = np.where(small, 1.0 - y / 2 + y**2 / 6, -em1 / ys)
    with np.errstate(over="ignore"):
        ey1 = np.expm1(ys)  # e^y - 1
        mean_t = 1.0 / ys - 1.0 / ey1
        ratio = np.where(ys > 700.0, 0.0, np.exp(np.minimum(ys, 700.0)) / ey1**2)
    var_t = 1.0 / ys**2 - ratio
    mean = np.where(small, 0.5 + y / 12, 1.0 - mean_t)
    var = np.where(small, 1.0 / 12 - y**2 / 240, np.maximum(var_t, 0.0))
    return share, mean, var, _burst_h(y)[0]


def closed_loop_burst_slope(visits_per_backlog):
    """``dh/dy`` of :func:`closed_loop_burst`'s ``h(y) = (y - 1 + e^-y) / y^2`` [-]."""
    return _burst_h(in_range(visits_per_backlog, "visits_per_backlog", 0.0))[1]


def _burst_h(y):
    """``h(y)`` and ``dh/dy`` without input checks (the closed-loop solver's inner loop)."""
    small = y < 1e-3  # series below 1e-3 (cancellation), closed forms above
    ys = np.where(small, 1.0, y)
    em1 = np.expm1(-ys)  # e^-y - 1
    h = np.where(small, 0.5 - y / 6 + y**2 / 24, (ys + em1) / ys**2)
    dh = np.where(small, -1.0 / 6 + y / 12, -em1 / ys**2 - 2.0 * (ys + em1) / ys**3)
    return h, dh


#: quadrature points over flush sizes when their sizes vary (``flush_size_scv`` > 0)
BURST_POINTS = 12


def burst_size_points(size_scv, points=BURST_POINTS):
    """Flush (burst) sizes relative to their mean as quadrature points and weights.

    A flush's backlog ``B = b E[B]`` with ``b ~ Gamma(1 / scv, scale scv)`` (mean 1,
    squared coefficient of variation ``scv``), counted per flush (not per unit of
    time). Gauss-generalised-Laguerre quadrature with ``points`` nodes is exact for
    ``E[p(b)]`` of any polynomial ``p`` of degree < 2 points (Abramowitz & Stegun
    25.4.45); below ``scv = 0.01`` (shapes over 100, where its weights overflow) the
    gamma is all but normal and Gauss-Hermite nodes ``1 + sqrt(scv) z`` are used.
    ``scv = 0`` is one size: ``b = 1`` at every node.

    Parameters
    ----------
    size_scv : squared coefficient of variation of flush sizes, >= 0 [-], shape (M,).
    points : nodes per configuration [count].

    Returns
    -------
    b, w : arrays of shape (M, points) [-]; ``sum(w) = 1``, ``sum(w b) = 1``.
    """
    scv = np.atleast_1d(in_range(size_scv, "size_scv", 0.0)).astype(float)
    b = np.ones((scv.size, points))
    w = np.full((scv.size, points), 1.0 / points)
    for value in np.unique(scv[scv > 0]):
        rows = scv == value
        if value < 0.01:
            z, wz = special.roots_hermitenorm(points)
            nodes, weights = 1.0 + np.sqrt(value) * z, wz
        else:
            shape = 1.0 / value
            x, wx = special.roots_genlaguerre(points, shape - 1.0)
            nodes, weights = x / shape, wx
        b[rows], w[rows] = nodes, weights / weights.sum()
    return b, w


def burst_wait_mixed(y, b, w):
    """:func:`closed_loop_burst`'s ``h`` and ``dh/dy`` averaged over flush sizes [-].

    A flush of backlog ``b E[B]`` costs a client ``E[B] (y b - 1 + e^(-y b)) / y``
    of waiting (``y = lambda E[B]``), and flushes come at ``duty / E[B]`` per
    device, so the mean extra wait per read is ``duty E[B] h_b(y)`` with
    ``h_b(y) = sum w b^2 h(y b)``, ``dh_b/dy = sum w b^3 h'(y b)``. Open arrivals
    (``y = 0``): ``h_b = E[b^2] / 2 = (1 + scv) / 2``, the length-biased mean wait.
    ``y`` has shape (M,), ``b`` and ``w`` (M, K) from :func:`burst_size_points`.
    """
    yb = np.asarray(y, dtype=float)[:, None] * b
    h, dh = _burst_h(yb)
    return (w * b * b * h).sum(1), (w * b**3 * dh).sum(1)


def burst_starvation_mixed(duty, devices, y, log_ratio, b, w):
    """:func:`burst_starvation` averaged over flush sizes (``b``, ``w`` of shape (M, K)) [-].

    ``L = devices x duty x sum_i w_i lost((y b_i - ln(N / N*))^+) / y`` with
    ``lost(u) = u - 1 + e^-u``: each flush size loses its own time, at the rate
    flushes come (``duty / E[B]``). One size (``b = 1``) is :func:`burst_starvation`.
    """
    y = np.asarray(y, dtype=float)
    y_eff = np.maximum(y[:, None] * b - np.asarray(log_ratio, dtype=float)[:, None], 0.0)
    mean_lost = (w * _lost(y_eff)).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_burst = np.where(y > 0, mean_lost / np.where(y > 0, y, 1.0), 0.0)
    return np.minimum(devices * duty * per_burst, 1.0)


def burst_starvation(duty, devices, visits_per_backlog, population_ratio):
    """Share of time bursts starve the bottleneck of a closed loop [-].

    While a device drains a burst of length B, the closed loop's clients are
    caught one by one (each after ``T ~ Exp(lambda)``, see
    :func:`closed_loop_burst`): ``N e^(-lambda t)`` are still free at time t.
    The bottleneck stays busy while at least the knee population
    ``N* = X_max (Z + D)`` (Lazowska et al. 1984, sec. 5.3) is free, i.e. for
    ``t0 = ln(N / N*) / lambda``, and serves in proportion to the free clients
    after that. Per burst it loses ``B' - (1 - e^(-lambda B')) / lambda`` of
    its time, ``B' = (B - t0)^+``; with ``devices x duty / B`` bursts per second:

    ``L = devices x duty x (y' - 1 + e^-y') / y``, ``y' = (y - ln(N / N*))^+``.

    Below the knee (``N <= N*``) this equals the mean burst wait of
    :func:`closed_loop_burst` in Little's law, ``devices x duty x y h(y)``; above
    it, it is what averaging waits alone misses: a burst holds up many clients
    at once, so the bottleneck idles although the mean population would keep
    it busy (Jensen's inequality on the concave ``X(N)``). Capped at 1.

    Parameters
    ----------
    duty : share of time one device is in bursts [-]; devices : bursting devices
    the clients spread over [count]; visits_per_backlog : ``y = lambda B`` [-];
    population_ratio : ``N / N*`` [-].
    """
    d = in_range(duty, "duty", 0.0, 1.0)
    k = in_range(devices, "devices", 1.0)
    y = in_range(visits_per_backlog, "visits_per_backlog", 0.0)
    ratio = as_array(population_ratio, "population_ratio", positive=True)
    return _starvation(d, k, y, np.log(np.maximum(ratio, 1.0)))


def _lost(u):
    """``u - 1 + e^-u`` (a burst's lost time in units of ``1 / lambda``), by its series where
    ``u + expm1(-u)`` cancels."""
    return np.where(u < 1e-3, u**2 * (0.5 - u / 6), u + np.expm1(-u))


def _starvation(duty, devices, y, log_ratio):
    """:func:`burst_starvation` without input checks (the solver's inner loop)."""
    lost = _lost(np.maximum(y - log_ratio, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        per_burst = np.where(y > 0, lost / np.where(y > 0, y, 1.0), 0.0)
    return np.minimum(devices * duty * per_burst, 1.0)


def held_burst_wait(share, spread, cap, backlog):
    """A read meeting a burst waits ``share x backlog`` with variance ``spread x backlog^2`` (its
    share of a FIFO backlog, :func:`perfmodel.mechanisms.bursts.closed_loop_burst`); where the server's own
    I/O scheduler holds the burst back (``cap`` finite) it waits the cap, fixed: the share becomes
    ``cap / backlog`` and the spread 0. Returns ``(share, spread)`` [-]."""
    held = np.isfinite(cap) & (backlog > 0)
    return np.where(held, cap / np.where(held, backlog, 1.0), share), np.where(held, 0.0, spread)


def burst_visits(net, throughput, population=None):
    """``y = lambda B`` of :func:`perfmodel.mechanisms.bursts.closed_loop_burst` [-].

    ``lambda = (X / N) f reach / D``: the rate at which one of ``N`` closed-loop
    clients sends reads into the bursting queue of one of the ``D`` devices (``reach``: the reads
    that reach that queue, ``net.burst_queue_reach``). Open arrivals
    (``population`` None) see time averages: ``y = 0``.
    """
    x = np.asarray(throughput, dtype=float)
    if population is None:
        return np.zeros_like(x)
    n = np.asarray(population, dtype=float)
    y = (
        x
        / n
        * net.read_fraction
        * net.burst_queue_reach
        * np.asarray(net.burst_backlog, dtype=float)
        / np.asarray(net.burst_devices, dtype=float)
    )
    # a server's own I/O scheduler holds no client for a backlog: its reads meet bursts at their
    # time share and wait the scheduler's goal (burst_read_cap)
    return np.where(np.isfinite(net.burst_read_cap), 0.0, y)


def burst_points(size_scv, size=None):
    """Flush sizes relative to their mean, ``b`` and weights ``w`` of shape (M, K)
    (:func:`perfmodel.mechanisms.burst_size_points`); one point ``b = 1`` (K = 1) where no
    configuration's sizes vary, so one-size flushes take exactly the one-size formulas."""
    scv = np.asarray(size_scv, dtype=float)
    scv = np.broadcast_to(scv, (size,) if size is not None else np.shape(np.atleast_1d(scv))).ravel()
    if not (scv > 0).any():
        return np.ones((scv.size, 1)), np.ones((scv.size, 1))
    return burst_size_points(scv)


def burst_capacity(x_cap, population_ratio, duty_per_op, y_per_x, devices, sizes, rtol=1e-10):
    """Largest throughput the bursts leave: the root of ``x = x_cap (1 - L(x))`` [1/s].

    ``L`` is :func:`perfmodel.mechanisms.burst_starvation` at throughput ``x`` (its
    duty and visits grow with ``x``, so ``x - x_cap (1 - L(x))`` increases and
    has one root in ``[x_cap (1 - L(x_cap)), x_cap]``); bisection, vectorised,
    only where bursts cost anything at ``x_cap``; ``sizes`` = (b, w) of :func:`burst_points`.
    """
    shape = np.shape(x_cap)
    out = np.full(shape, np.inf)
    dpo, ypx = (np.broadcast_to(np.asarray(a, dtype=float), shape) for a in (duty_per_op, y_per_x))
    dev = np.broadcast_to(np.asarray(devices, dtype=float), shape)
    log_ratio = np.log(np.maximum(np.nan_to_num(population_ratio, nan=1.0, posinf=1.0), 1.0))
    finite = np.isfinite(x_cap)
    out[finite] = x_cap[finite]

    size_b, size_w = sizes

    def loss(x, ix):
        return burst_starvation_mixed(
            np.minimum(x * dpo[ix], 1.0), dev[ix], x * ypx[ix], log_ratio[ix], size_b[ix], size_w[ix]
        )

    largest = size_b.max(1)  # the largest flush starves first
    ix = np.flatnonzero(finite & (dpo > 0) & (ypx * largest * np.where(finite, x_cap, 0.0) > log_ratio))
    if ix.size == 0:
        return out
    cap = x_cap[ix]
    lo, hi = cap * (1.0 - loss(cap, ix)), cap.copy()
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        above = mid - cap * (1.0 - loss(mid, ix)) > 0
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
        if np.all(hi - lo <= rtol * hi):
            break
    out[ix] = hi
    return out


@dataclass(frozen=True)
class Bursts:
    """Flush / compaction bursts of LSM stores and memtable back-pressure."""

    queue_depth: np.ndarray  # 512 KiB I/Os a flush submits at once [count]
    duty_per_op: np.ndarray  # device time in bursts per unit throughput [s]
    backlog: np.ndarray  # the backlog a read meeting a burst waits a part of [s]
    reach: np.ndarray  # share of reads that reach the device [-]
    #: share of those that share the flush's hardware queue and wait behind its backlog [-]
    #: (:func:`perfmodel.mechanisms.bursts.flush_queue_share`; 1 for a single-queue device)
    queue_share: np.ndarray
    #: what a read meeting a flush waits when the server's own I/O scheduler holds the flush back
    #: (spec ``io_latency_goal_ms``: the device's queue kept full at that much work) [s]; inf: the
    #: kernel's queue holds the whole flush and the read waits its share of the backlog
    read_cap: np.ndarray
    stall_share: np.ndarray  # share of writes one client's stall catches [-]
    size_scv: np.ndarray  # squared coefficient of variation of flush sizes [-] (knob flush_size_scv)


def stage(inp, cpu_, data, reads_per_read, bg_bytes_per_write, bg_bytes) -> Bursts:
    """The bursts of a configuration grid (the model chain's ``Inputs`` ``inp``, its CPU ``cpu_``
    and data-device specs ``data``; ``reads_per_read``: device reads per read, ``bg_bytes_per_write``
    / ``bg_bytes``: background bytes per write replica and per request).

    Flushes drain QD x 512 KiB at the sequential write bandwidth; a read meeting one waits
    behind the backlog (seed 003: QD 200-800) if it shares the flush's hardware queue (a share
    ``queue_share`` of the reads: :func:`perfmodel.mechanisms.flush_queue_share`), or behind at most
    the system's I/O scheduler's latency goal of it (spec ``io_latency_goal_ms``: Seastar's
    dispatcher keeps a device's queue within that much work; doc/io-scheduler.md). Memtable
    back-pressure: a flush holds QD x 512 KiB, written by W = that / bytes-per-write replica
    writes; a stall catches each client's next write once, so a share copies / (nodes x W) of
    writes stall (:func:`perfmodel.solve.network.solve_closed`)."""
    lsm = inp.sys.lsm
    memtable = inp.sys.parameter(inp.params, "memtable_bytes")
    queue_depth = np.minimum(memtable / FLUSH_IO_BYTES, inp.params["block_queue_limit"])
    flush_bytes = queue_depth * FLUSH_IO_BYTES  # W = flush bytes / bytes per write replica
    rf, nodes = inp.layout.write_shards, inp.cfg.nodes
    return Bursts(
        queue_depth=queue_depth,
        duty_per_op=np.where(lsm, bg_bytes / (data.seq_write * cpu_.devices), 0.0),
        backlog=burst_profile(0.0, data.seq_write, queue_depth)[2],  # QD x 512 KiB / bandwidth [s]
        # a server with its own I/O scheduler (Seastar) keeps the device's queue within its latency
        # goal and the rest of the flush in its own queue: a read meeting a flush waits about that
        read_cap=inp.sys.io_latency_goal_s,
        reach=np.minimum(reads_per_read, 1.0),
        # the CPUs that issue I/O: the server's threads' (a thread cap leaves the others idle)
        queue_share=flush_queue_share(
            np.where(np.isfinite(data.hardware_queues), data.hardware_queues, 1.0),
            np.maximum(np.floor(np.minimum(cpu_.cores * cpu_.threads_per_core, cpu_.threads)), 1.0),
        ),
        stall_share=np.where(
            lsm & (bg_bytes_per_write > 0), rf * bg_bytes_per_write / (nodes * flush_bytes), 0.0
        ),
        size_scv=np.broadcast_to(inp.knobs.flush_size_scv.astype(float), np.shape(queue_depth)),
    )


@dataclass(frozen=True)
class ReadTail:
    """What flush bursts add to a read's latency, per configuration (M,) and flush size (M, K)."""

    duty: np.ndarray  # time share of the device in bursts [-] (M,)
    p_size: np.ndarray  # probability a read meets a flush of each size [-] (M, K)
    wait_mean: np.ndarray  # its wait in that flush: mean [s] (M, K)
    wait_var: np.ndarray  # and variance [s^2] (M, K)
    p_burst: np.ndarray  # probability a read meets any flush [-] (M,)
    mean_wait: np.ndarray  # a read's mean wait in flushes, all reads counted [s] (M,)


def read_tail(net, b: Bursts, throughput, population=None) -> ReadTail:
    """The burst part of a read's latency mixture at ``throughput`` [1/s] (``net``: the solved
    network's burst fields; ``population``: a closed loop's clients, None for open arrivals).

    Flush sizes ``b x B`` (``b = 1`` when they are all one size): a read meets a flush of size
    ``b`` with probability ``duty x reach x w b s(y b)`` and waits ``(b B) x W(y b)`` in it
    (:func:`closed_loop_burst`); behind a server's own I/O scheduler (``y = 0`` there: no client
    held) it waits the scheduler's latency goal, whatever the flush's size (:func:`held_burst_wait`).
    """
    x = np.asarray(throughput, dtype=float)
    duty = np.minimum(x * b.duty_per_op, 1.0)
    y = burst_visits(net, x, population)
    size_b, size_w = burst_points(b.size_scv)
    share, w_mean, w_var, _ = closed_loop_burst(y[:, None] * size_b)
    reach = np.broadcast_to(net.burst_queue_reach, duty.shape)  # the reads on the flush's queue
    p_size = (duty * reach)[:, None] * size_w * size_b * share
    backlog = b.backlog[:, None] * size_b
    cap = np.broadcast_to(b.read_cap, duty.shape)[:, None]
    w_mean, w_var = held_burst_wait(w_mean, w_var, cap, backlog)
    return ReadTail(
        duty=duty, p_size=p_size, wait_mean=backlog * w_mean, wait_var=backlog**2 * w_var,
        p_burst=p_size.sum(1), mean_wait=(p_size * backlog * w_mean).sum(1),
    )  # fmt: skip


@dataclass(frozen=True)
class ClosedBursts:
    """Flush bursts' terms in the closed solve, per configuration (M,).

    A read that meets a burst waits ``reach x B x h(y)`` (``y = x y_per_x``: the closed loop's
    visits per backlog, :func:`closed_loop_burst`; ``h = 1/2`` at ``y = 0``: the open loop's
    ``U(0, B)``), with probability the bursts' duty ``min(x duty_per_op, 1)``; behind a server's
    own I/O scheduler (``cap`` finite) it waits the cap (:func:`held_burst_wait`). Bursts that hold
    up many clients at once also starve the bottleneck: :meth:`capacity`.
    """

    duty_per_op: np.ndarray  # time share of a device in bursts per unit throughput [s]
    delay: np.ndarray  # reach x backlog: the reads' share of the backlog they may wait in [s]
    y_per_x: np.ndarray  # closed-loop visits per backlog per unit throughput [s]
    sizes: tuple[np.ndarray, np.ndarray]  # flush sizes b and weights w (M, K): burst_points
    cap: np.ndarray  # the server's I/O scheduler's wait goal [s] (inf: none)
    backlog: np.ndarray  # B [s]
    read_fraction: np.ndarray  # [-]
    devices: np.ndarray | float  # devices the bursts spread over [count]

    @classmethod
    def of(cls, net, population, size: int) -> ClosedBursts | None:
        """The terms of ``net``'s bursts at a closed ``population``; None where none costs anything."""
        n = np.asarray(population, dtype=float)
        duty = np.broadcast_to(np.asarray(net.burst_duty_per_op, dtype=float), n.shape)
        delay = np.broadcast_to(net.burst_queue_reach * np.asarray(net.burst_backlog, dtype=float), n.shape)
        if not (duty * delay > 0).any():
            return None
        return cls(
            duty_per_op=duty,
            delay=delay,
            y_per_x=np.broadcast_to(burst_visits(net, 1.0, n), n.shape),
            sizes=burst_points(net.burst_size_scv, size),
            cap=np.broadcast_to(np.asarray(net.burst_read_cap, dtype=float), n.shape),
            backlog=np.broadcast_to(np.asarray(net.burst_backlog, dtype=float), n.shape),
            read_fraction=net.read_fraction,
            devices=net.burst_devices,
        )

    def cycle(self, x, sub):
        """Extra cycle time per request [s] at throughput ``x`` [1/s] of configurations ``sub``, and
        its derivative in ``x``."""
        h, dh_dy = burst_wait_mixed(x * self.y_per_x[sub], self.sizes[0][sub], self.sizes[1][sub])
        dh = dh_dy * self.y_per_x[sub]
        # a read meeting a burst behind a server's own I/O scheduler waits its goal (h B = cap): dh 0
        h, dh = held_burst_wait(h, dh, self.cap[sub], self.backlog[sub])
        duty = np.minimum(x * self.duty_per_op[sub], 1.0)
        d_duty = np.where(x * self.duty_per_op[sub] < 1.0, self.duty_per_op[sub], 0.0)
        scale = self.read_fraction[sub] * self.delay[sub]
        return scale * duty * h, scale * (d_duty * h + duty * dh)

    def capacity(self, x_cap, population_ratio):
        """Largest throughput the bursts leave [1/s] below the stations' capacity ``x_cap``
        (:func:`burst_capacity`; ``population_ratio``: clients over those the capacity keeps busy)."""
        return burst_capacity(
            x_cap, population_ratio, self.duty_per_op, self.y_per_x, self.devices, self.sizes
        )
