"""Storage devices with queue-depth contention and host I/O paths.

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

Write bursts (memtable flushes, compactions) are :mod:`perfmodel.mechanisms.bursts`.

All functions are pure and broadcast; SI units (bytes, seconds).
"""

from __future__ import annotations

import numpy as np

from perfmodel.inputs._validate import as_array, in_range

#: Size of the spec-sheet random I/O [B].
SPEC_IO_BYTES = 4096.0


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
