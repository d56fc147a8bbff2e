"""Shard-per-core CPU scaling: SMT yield, shard service rates, NUMA, thread caps.

Pure numpy functions; every argument broadcasts, so a grid of configurations is
one call.

The mechanisms (glossary in brackets):

* **SMT yield** ``smt_yield(t, alpha)``: throughput of one core running ``t``
  hardware threads relative to one thread. A core's execution resources are
  shared, so each added thread contributes less; we use the saturating form
  ``y(t) = t / (1 + alpha (t - 1))`` (the Amdahl / USL contention form applied
  to threads on a core; Gunther, *Guerrilla Capacity Planning*, 2007, ch. 4),
  with ``y(1) = 1`` and ``y(inf) = 1 / alpha``. ``alpha`` is per architecture
  (POWER8 SMT8 keeps more of its width busy than x86 Hyper-Threading).
* **Shard rate**: one shard per hardware thread (ScyllaDB ``--smp``, Ceph OSD
  threads); a shard's service rate is the core's rate times ``y(t) / t``.
* **Cross-shard coordination**: USL contention ``sigma`` and coherency
  ``kappa`` over the number of shards (Gunther 2007, ch. 6).
* **NUMA**: a thread whose memory is on another NUMA node pays a slowdown
  ``1 + penalty``; with memory spread evenly over the nodes a process spans,
  the expected slowdown is the average over local and remote accesses
  (Lameter, "NUMA (Non-Uniform Memory Access): An Overview", ACM Queue 2013).
* **Thread cap**: a database with at most ``thread_cap`` worker threads
  (DM8: 64) uses at most that many hardware threads, whatever the core count.
* **Busy threads**: SMT sharing acts on the threads that are busy at once, not
  on those configured. The scheduler gives each runnable thread an idle core of
  its own before it pairs threads on one core (Linux CFS balances load over the
  scheduling domains -- SMT siblings, LLC, NUMA node -- and prefers idle cores
  and idle packages: Bovet & Cesati, *Understanding the Linux Kernel*, 3rd ed.,
  ch. 7 "Scheduling domains"; kernel docs ``scheduler/sched-domains``), so one
  busy thread on an idle SMT core runs at the core's full rate. NUMA stays with
  the configured threads: a binding (and the memory it places) is set for the
  threads a server starts, however few are busy.
"""

from __future__ import annotations

import numpy as np

from perfmodel.inputs._validate import as_array, broadcast, in_range


def smt_yield(threads_per_core, alpha):
    """Throughput of a core running ``threads_per_core`` threads, relative to one [-].

    ``y(t) = t / (1 + alpha (t - 1))``; monotone non-decreasing in ``t`` for
    ``0 <= alpha <= 1``, saturating at ``1 / alpha``.

    Parameters
    ----------
    threads_per_core : hardware threads per core (SMT mode) [count], >= 1.
    alpha : SMT contention of the architecture [-], in [0, 1]; 0 = perfect
        scaling, 1 = a second thread adds nothing.

    Reference: Gunther, *Guerrilla Capacity Planning* (2007), ch. 4 (Amdahl /
    contention form).
    """
    t = in_range(threads_per_core, "threads_per_core", 1.0)
    a = in_range(alpha, "alpha", 0.0, 1.0)
    t, a = broadcast(threads_per_core=t, alpha=a)
    return t / (1.0 + a * (t - 1.0))


def shard_service_rate(core_rate, threads_per_core, alpha):
    """Service rate of one shard (one hardware thread) [1/s].

    ``mu_shard = core_rate * y(t) / t`` where ``core_rate`` [1/s] is the rate
    one core achieves running a single thread and ``y`` is :func:`smt_yield`.
    """
    rate = as_array(core_rate, "core_rate", positive=True)
    t = in_range(threads_per_core, "threads_per_core", 1.0)
    return rate * smt_yield(t, alpha) / t


def usl_efficiency(n, sigma, kappa):
    """Per-unit efficiency under the Universal Scalability Law [-].

    ``C(n) / n = 1 / (1 + sigma (n - 1) + kappa n (n - 1))``: the share of each
    of ``n`` shards' capacity left after contention ``sigma`` [-] and
    coherency ``kappa`` [-] (Gunther 2007, eq. 6.1).
    """
    n = in_range(n, "n", 1.0)
    s = in_range(sigma, "sigma", 0.0)
    k = in_range(kappa, "kappa", 0.0)
    return 1.0 / (1.0 + s * (n - 1.0) + k * n * (n - 1.0))


def io_thread_efficiency(n, command, message, handoff=0.0, shared=0.0):
    """Per-thread efficiency of a main thread that runs every command while ``n - 1`` I/O threads
    carry every client's socket work [-] (Redis 8's threaded I/O).

    Per command [cycles]: ``command`` (``c``) is its work on the main thread, ``message`` (``m``)
    its share of the request messages' socket work, ``handoff`` (``h``) the I/O thread's cost of
    passing the client to the main thread and back, and ``shared`` (``g``) work that time-shares
    every thread alike (a co-located load generator's), ``g / n`` on each. One thread does
    everything (``n = 1``: efficiency 1). With ``n >= 2`` (a whole number of threads) the main
    thread does no socket work -- each client belongs to one of the ``n - 1`` I/O threads
    (redis/redis ``src/iothread.c``, ``assignClientToIOThread``: the I/O thread with the fewest
    clients among threads 1 .. n - 1) -- so the node runs ``X = min(1 / ((m + h) / (n - 1) +
    g / n), 1 / (c + g / n))`` commands per cycle of one thread: the I/O threads' bound or the
    main thread's, whichever binds. The efficiency is ``X (c + m + g) / n``, the share of ``n``
    threads' cycles that ``X`` commands' charged work fills. Unlike Amdahl's law
    (:func:`usl_efficiency`, the main thread taking its share of the sockets) a second thread
    gains little where the sockets dominate, and many threads reach the main thread's bound.
    Coherency (``kappa``) is not modelled here."""
    n = in_range(n, "n", 1.0)
    c = in_range(command, "command", 0.0)
    m = in_range(message, "message", 0.0)
    h = in_range(handoff, "handoff", 0.0)
    g = in_range(shared, "shared", 0.0)
    work = c + m + g
    with np.errstate(divide="ignore", invalid="ignore"):
        io = (m + h) / np.maximum(n - 1.0, 1e-300) + g / n  # cycles an I/O thread spends a command
        main = c + g / n  # and the main thread
        per_cycle = 1.0 / np.maximum(io, main)  # commands per cycle of one thread
        return np.where((n > 1.0) & (work > 0), per_cycle * work / n, 1.0)


def numa_slowdown(nodes_spanned, nodes_per_socket, same_socket_penalty, cross_socket_penalty):
    """Mean memory slowdown factor of a process spread over NUMA nodes [-] (>= 1).

    With memory spread evenly over the ``m = nodes_spanned`` nodes, a thread
    finds a fraction ``1/m`` of its accesses local, ``(s - 1)/m`` on the other
    nodes of its socket (``s = min(m, nodes_per_socket)``) and the rest on
    other sockets:
    ``1 + (s - 1)/m * same_socket_penalty + (m - s)/m * cross_socket_penalty``.
    Penalties are the extra cost of a remote access relative to a local one [-].
    A process bound to one node has slowdown 1.
    """
    m = in_range(nodes_spanned, "nodes_spanned", 1.0)
    per = in_range(nodes_per_socket, "nodes_per_socket", 1.0)
    p_same = in_range(same_socket_penalty, "same_socket_penalty", 0.0)
    p_cross = in_range(cross_socket_penalty, "cross_socket_penalty", 0.0)
    s = np.minimum(m, per)
    return 1.0 + (s - 1.0) / m * p_same + (m - s) / m * p_cross


def numa_nodes_spanned(threads_used, threads_per_node, bound, total_nodes):
    """NUMA nodes a process's threads (and memory) span [count].

    A bound process packs its threads onto ``ceil(threads_used /
    threads_per_node)`` nodes; an unbound one is spread by the scheduler and
    first-touch allocation over every node of the machine.
    """
    used = in_range(threads_used, "threads_used", 1.0)
    per = in_range(threads_per_node, "threads_per_node", 1.0)
    total = in_range(total_nodes, "total_nodes", 1.0)
    packed = np.minimum(np.ceil(used / per), total)
    return np.where(np.asarray(bound, dtype=bool), packed, total)


def threads_sharing_core(busy_threads, cores, threads_per_core):
    """Hardware threads each busy core runs [-]: ``busy / cores`` within ``[1, t]``.

    Up to one busy thread per core each gets a core of its own (the scheduler
    fills idle cores first); beyond that the busy threads pair up as SMT
    siblings, at most ``t`` per core. Feed it to :func:`smt_yield`: each busy
    thread runs at ``y(s) / s`` of a core. A fractional ``s`` is an average
    (some cores paired, some not) taken through ``y``'s interpolation, within
    ~2% of the mix's own throughput at ``s = 1.5`` for x86.
    """
    busy = in_range(busy_threads, "busy_threads", 1.0, allow_inf=True)
    c = in_range(cores, "cores", 1.0)
    t = in_range(threads_per_core, "threads_per_core", 1.0)
    return np.clip(busy / c, 1.0, t)


def usable_threads(cores, threads_per_core, thread_cap):
    """Hardware threads the software can keep busy [count]: ``min(cores * t, cap)``.

    ``thread_cap`` is the software's worker-thread limit (``inf`` for
    shard-per-core designs that start one shard per hardware thread).
    """
    c = in_range(cores, "cores", 1.0)
    t = in_range(threads_per_core, "threads_per_core", 1.0)
    cap = in_range(thread_cap, "thread_cap", 1.0, allow_inf=True)
    return np.minimum(c * t, cap)


def cpu_capacity(cores, threads_per_core, thread_cap, core_rate, alpha, sigma=0.0, kappa=0.0, slowdown=1.0):
    """Maximum CPU throughput of a node [1/s], and the shard count and shard rate.

    ``threads = min(cores * t, cap)``; each thread runs at
    ``core_rate * y(t) / t / slowdown`` [1/s]; the USL efficiency over the
    threads multiplies the total. Returns ``(capacity, threads, shard_rate)``
    where ``shard_rate`` already includes the USL and NUMA factors.
    """
    threads = usable_threads(cores, threads_per_core, thread_cap)
    rate = shard_service_rate(core_rate, threads_per_core, alpha) / np.asarray(slowdown, dtype=float)
    rate = rate * usl_efficiency(threads, sigma, kappa)
    return threads * rate, threads, rate
