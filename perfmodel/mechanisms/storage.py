"""Storage devices with queue-depth contention, host I/O paths and write bursts.

A flash device serves up to ``P`` requests at once (its internal parallelism:
channels x dies the controller keeps busy), so its service rate rises with the
number of outstanding I/Os ``n`` until ``n = P``: a load-dependent station with
rate ``mu(n) = min(n, P) / s`` where ``s`` [s] is the time one I/O occupies a
parallel unit (Little's law at the spec sheet's peak gives ``P = IOPS x
latency``). The host reaches the device through a submission path: NVMe's
multi-queue block layer gives each core its own queue (no shared lock), SATA /
AHCI has one queue of at most 32 commands (NCQ) behind the legacy single-queue
path (``generic_make_request``; Bjorling et al., "Linux block IO: introducing
multi-queue SSD access on multi-core systems", SYSTOR 2013).

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

All functions are pure and broadcast; SI units (bytes, seconds).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from perfmodel.inputs._validate import as_array, in_range

KIB = 1024.0
#: Size of the spec-sheet random I/O [B].
SPEC_IO_BYTES = 4096.0
#: I/O size of memtable flushes and compactions on Linux (max_sectors_kb) [B].
FLUSH_IO_BYTES = 512 * KIB


def device_parallelism(iops, latency_s):
    """Internal parallelism by Little's law at the spec sheet's peak [count].

    ``P = X * R`` with ``X`` the peak IOPS [1/s] and ``R`` the QD1 latency [s]
    (Little 1961); at least 1.
    """
    x = as_array(iops, "iops", positive=True)
    r = as_array(latency_s, "latency_s", positive=True)
    return np.maximum(x * r, 1.0)


def io_occupancy(io_bytes, parallelism, iops_4k, bandwidth_bytes_s):
    """Time one I/O of ``io_bytes`` occupies one of the device's parallel units [s].

    ``s(b) = s0 + b * P / B`` with the fixed part ``s0`` set so that a 4 KiB I/O
    reproduces the spec-sheet IOPS: ``s(4096) = P / IOPS_4k``, i.e.
    ``s0 = max(P / IOPS_4k - 4096 * P / B, 0)``. Peak throughput is then
    ``P / s(b)`` I/Os per second, tending to the sequential bandwidth ``B``
    [B/s] for large I/Os and to ``IOPS_4k`` for 4 KiB ones (the usual
    fixed-cost-plus-transfer model; Ruemmler & Wilkes 1994 for disks, the same
    shape for flash channels).
    """
    b = as_array(io_bytes, "io_bytes", positive=True)
    p = in_range(parallelism, "parallelism", 1.0)
    x = as_array(iops_4k, "iops_4k", positive=True)
    bw = as_array(bandwidth_bytes_s, "bandwidth_bytes_s", positive=True)
    fixed = np.maximum(p / x - SPEC_IO_BYTES * p / bw, 0.0)
    return fixed + b * p / bw


def effective_parallelism(parallelism, hardware_queues, queue_depth_limit):
    """Parallelism the host can use [count]: ``min(P, queues x depth limit)``.

    A SATA device (1 queue, NCQ 32) never sees more than 32 commands at once,
    whatever its flash could do.
    """
    p = in_range(parallelism, "parallelism", 1.0)
    q = in_range(hardware_queues, "hardware_queues", 1.0)
    d = in_range(queue_depth_limit, "queue_depth_limit", 1.0)
    return np.minimum(p, q * d)


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


def device_throughput(outstanding, parallelism, occupancy_s):
    """Throughput of a device kept at ``outstanding`` I/Os [1/s].

    The load-dependent rate ``mu(n) = min(n, P) / s``: with ``n`` I/Os always
    outstanding (a closed loop with no think time, e.g. fio at ``iodepth=n``),
    ``X(n) = mu(n)``; non-decreasing in ``n`` and equal to ``1 / s`` at QD1.
    """
    n = in_range(outstanding, "outstanding", 0.0)
    p = in_range(parallelism, "parallelism", 1.0)
    s = as_array(occupancy_s, "occupancy_s", positive=True)
    return np.minimum(n, p) / s


def mixed_occupancy(read_fraction, read_occupancy_s, write_occupancy_s):
    """Mean occupancy of an I/O from a read/write mix [s].

    ``s = f s_r + (1 - f) s_w``: reads and writes share the same parallel units,
    so writes (slower to program) slow the reads down -- the read/write
    interference of flash; peak mixed IOPS is ``P / s``, the harmonic mix of
    the read and write IOPS.
    """
    f = in_range(read_fraction, "read_fraction", 0.0, 1.0)
    sr = as_array(read_occupancy_s, "read_occupancy_s", positive=True)
    sw = as_array(write_occupancy_s, "write_occupancy_s", positive=True)
    return f * sr + (1.0 - f) * sw


def host_path_capacity(io_rate_cost_s, hardware_queues, cores):
    """Maximum I/O submission rate of the host's block layer [1/s].

    Each I/O costs ``io_rate_cost_s`` [s] of CPU in the block layer. NVMe's
    blk-mq gives up to ``min(hardware_queues, cores)`` independent submission
    queues; SATA's single-queue path serialises every submission behind one
    queue lock, so its capacity is ``1 / cost``.
    """
    cost = as_array(io_rate_cost_s, "io_rate_cost_s", positive=True)
    q = in_range(hardware_queues, "hardware_queues", 1.0)
    c = in_range(cores, "cores", 1.0)
    return np.minimum(q, c) / cost


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
