"""Discrete-event simulation of one station-network configuration with SimPy.

The SimPy :class:`~simpy.Environment` orders every event in time; requests
move through the stations of :mod:`perfmodel.sim.config`:

* **FCFS c-server stations** are kept as their Kiefer-Wolfowitz workload
  vector: the times at which each of the ``c`` servers of each instance next
  falls free (a heap). A job arriving at time t starts at ``max(t, earliest
  free)`` on that server (Kiefer & Wolfowitz 1955), which is exact for FCFS
  because no later arrival can overtake it; so a visit costs one SimPy event
  (the departure, or rather the arrival at the next queueing station) instead
  of the request / grant / release events of a :class:`simpy.Resource`, and the
  waiting time is known on arrival. Events are processed in time order, so
  every station sees its arrivals in order.
* **Delay stations** (``servers = inf``: wire, kernel, VM latencies) add
  their time with no event of their own.
* **Reads** visit each station with ``d_read > 0`` in order, at one instance
  drawn uniformly (on the request's node when the station's instances belong
  to nodes), so shard imbalance appears by itself.
* **Writes** run on ``copies`` replicas on distinct nodes, each visiting the
  stations with ``d_write > 0``; the write completes at the ``acks``-th
  replica to finish (the consistency level).
* **Flushes** (LSM stores): each completed write replica adds its background
  bytes to its node's memtable; every ``flush_ios x 512 KiB`` the node's
  devices receive ``flush_ios`` background writes at once (spread over the
  node's devices), which enter the FCFS queues so that reads queue behind them.
  A write that fills the memtable while the previous flush is still draining
  stalls until it has (write back-pressure). On a device with several
  hardware queues (``flush_queue_share`` < 1) only that share of the reads
  shares the flush's queue; the others are fetched ahead of its queued I/Os,
  so the device keeps a second timeline without the flush I/Os, and every
  other job's work enters both: such a read starts on the second one.
* **Background work** (a database's checkpoints and page cleaning): each
  completed write replica submits a job of mean ``background[k]`` to its
  node's instance of station k, FCFS; nobody waits for it, the requests
  queued behind it do.
* **Clients**: a closed loop of ``population`` requests, each re-issued after
  an exponential think time; or open Poisson arrivals.

Random numbers are drawn from one :class:`numpy.random.Generator` in blocks,
one stream per use (class choice, instance choice per station, service per
class and station, think / inter-arrival times, flush I/Os).

References: Kiefer, J., Wolfowitz, J. (1955). On the theory of queues with many
servers. Trans. AMS 78(1), 1-18. SimPy documentation, "Environments" and
"Events" (https://simpy.readthedocs.io/). Law, A. M. (2015). Simulation
Modeling and Analysis, 5th ed., ch. 1-2 (event scheduling).
"""

from __future__ import annotations

import heapq
from array import array
from itertools import chain, repeat

import numpy as np
import simpy
from simpy.events import NORMAL

from perfmodel.mechanisms import bursts
from perfmodel.sim.config import SimConfig
from perfmodel.sim.distributions import from_moments
from perfmodel.sim.results import Records

BLOCK = 4096  # random numbers drawn per block


def _stream(draw):
    """An endless iterator over blocks ``draw()`` (numpy arrays), as Python floats."""
    return chain.from_iterable(iter(lambda: draw().tolist(), None))


class _Station:
    __slots__ = (
        "k", "single", "per", "local", "free", "free_nf", "choice", "hot_choice", "busy", "residence"
    )  # fmt: skip

    def __init__(self, cfg: SimConfig, k: int, rng: np.random.Generator) -> None:
        self.k = k
        mult = int(cfg.mult[k])
        self.local = cfg.local(k)
        self.per = mult // cfg.nodes if self.local else mult
        c = 1 if cfg.is_delay(k) else int(cfg.servers[k])  # a delay station keeps no state
        self.single = c == 1
        # per instance: the next free time of its one server, or a heap of c such times
        self.free = [0.0] * mult if self.single else [[0.0] * c for _ in range(mult)]
        # the flushing device with several hardware queues: the same servers without the flush
        # I/Os, the timeline of the reads fetched ahead of them (None: one queue for all)
        self.free_nf = None
        reads_pass = cfg.flush_queue_share < 1.0 or cfg.flush_read_cap < float("inf")
        if k == cfg.device_station and cfg.flushes and reads_pass:
            self.free_nf = [0.0] * mult if self.single else [[0.0] * c for _ in range(mult)]
        per = self.per
        self.choice = _stream(lambda: rng.integers(0, per, BLOCK)) if per > 1 else repeat(0)
        # placement imbalance: on node 0 (the whole station when not per node) device 0 is hot
        weights = cfg.hot_device_weights() if k == cfg.device_station else None
        self.hot_choice = None
        if weights is not None:
            self.hot_choice = _stream(lambda: rng.choice(per, BLOCK, p=weights))
        self.busy = 0.0
        self.residence = 0.0


def _take(free: list, single: bool, inst: int, t: float, work: float) -> float:
    """FCFS: ``work`` [s] arriving at ``t`` takes instance ``inst``'s first free server (its one
    free time, or the minimum of its heap); returns the start time (Kiefer-Wolfowitz)."""
    if single:
        f = free[inst]
        begin = f if f > t else t
        free[inst] = begin + work
        return begin
    heap = free[inst]
    f = heap[0]
    begin = f if f > t else t
    heapq.heapreplace(heap, begin + work)
    return begin


def _hot_replicas(rng: np.random.Generator, n: int, c: int, p0: float) -> list:
    """A block of replica sets of ``c`` distinct nodes: node 0 in each with probability ``p0``,
    the other members drawn uniformly from nodes 1..n-1 (each then holds ``(c - p0) / (n - 1)``)."""
    with_hot = rng.random(BLOCK) < p0
    others = np.argsort(rng.random((BLOCK, n - 1)), axis=1)[:, :c] + 1
    rows = zip(with_hot.tolist(), others.tolist(), strict=True)
    return [(0, *row[: c - 1]) if hot else tuple(row) for hot, row in rows]


class _Wake:
    """A bare SimPy event: what :meth:`simpy.Environment.step` needs (``callbacks``, ``_ok``)."""

    __slots__ = ("callbacks", "_ok", "_value")

    def __init__(self, callbacks, value=None) -> None:
        self.callbacks = callbacks
        self._ok = True
        self._value = value


class _Job:
    """One request (a read) or one replica of a write, walking its path.

    The job is its own SimPy event (``callbacks``, ``_ok``) when it waits for
    its next arrival, so that a step allocates nothing.
    """

    __slots__ = ("rid", "path", "step", "node", "waits", "parent", "extra", "callbacks", "_ok")

    def __init__(self, rid, path, node, nwaits, parent, extra=0.0) -> None:
        self._ok = True
        self.rid = rid
        self.path = path
        self.step = 0
        self.node = node
        self.waits = [0.0] * nwaits
        self.parent = parent
        self.extra = extra  # round trips between availability zones, at the fixed station [s]


class _Write:
    __slots__ = ("rid", "done")

    def __init__(self, rid) -> None:
        self.rid = rid
        self.done = 0


class Engine:
    """One replication of one configuration (see the module docstring).

    ``requests`` requests are recorded (the first ``warmup`` as warm-up); a
    closed loop keeps its population until all of them have completed.
    """

    def __init__(self, cfg: SimConfig, requests: int, warmup: int, rng: np.random.Generator) -> None:
        if requests < 2 or not 0 <= warmup <= requests - 2:
            raise ValueError(f"requests / warmup: need 0 <= warmup <= requests - 2, got {requests}, {warmup}")
        self.cfg, self.rng = cfg, rng
        self.env = simpy.Environment()
        self.requests, self.warmup = int(requests), int(warmup)
        k_all = len(cfg.stations)
        self.nk = k_all
        self.stations = [_Station(cfg, k, rng) for k in range(k_all)]
        self.paths = (self._path(cfg.d_read, reads=True), self._path(cfg.d_write, reads=False))
        f = cfg.read_fraction
        self.read_fraction = f
        self.op_choice = _stream(lambda: rng.random(BLOCK)) if 0 < f < 1 else repeat(0.0 if f == 1 else 1.0)
        n = cfg.nodes
        weights = cfg.node_weights()
        if weights is not None:
            self.node_choice = _stream(lambda: rng.choice(n, BLOCK, p=weights))
        else:
            self.node_choice = _stream(lambda: rng.integers(0, n, BLOCK)) if n > 1 else repeat(0)
        c = cfg.copies
        if c == 1:
            self.replica_nodes = None
        elif c == n:
            self.replica_nodes = repeat(tuple(range(n)))
        elif weights is not None:  # node 0 holds a replica with probability c x its share
            self.replica_nodes = chain.from_iterable(
                iter(lambda: _hot_replicas(rng, n, c, min(1.0, c * weights[0])), None)
            )
        else:  # `copies` distinct nodes: the first columns of random permutations
            self.replica_nodes = chain.from_iterable(
                iter(lambda: np.argsort(rng.random((BLOCK, n)), axis=1)[:, :c].tolist(), None)
            )
        # availability zones: replica j of a key in zone j mod zones; per request the client's
        # zone and the coordinator (one of the replicas) drawn uniformly
        self.fixed_k = cfg.stations.index("fixed") if cfg.zoned else -1
        if cfg.zoned:
            self.replica_zone = [j % cfg.zones for j in range(max(c, 1))]
            self.zone_draw = _stream(lambda: rng.random(BLOCK))
        z = cfg.think_time
        self.think = _stream(lambda: rng.exponential(z, BLOCK)) if z > 0 else None
        if not cfg.closed:
            gap = 1.0 / cfg.arrival_rate
            self.gaps = _stream(lambda: rng.exponential(gap, BLOCK))
        # flushes: bytes accumulated per node (random initial fill: no synchronised first flushes)
        self.flushes = cfg.flushes
        if self.flushes:
            # each node's next flush size [I/Os]: flush_ios, or drawn (flush_size_scv > 0)
            self.flush_size = [self._flush_size() for _ in range(n)]
            self.memtable = [rng.random() * k * bursts.FLUSH_IO_BYTES for k in self.flush_size]
            self.burst_until = [0.0] * n
            bg = from_moments(cfg.flush_io_time, cfg.flush_io_scv, family=cfg.family)
            self.bg_service = _stream(lambda: bg.sample(rng, BLOCK))
            # which reads share the flush's hardware queue (drawn only where not all do)
            if cfg.flush_queue_share < 1.0:
                self.queue_draw = _stream(lambda: rng.random(BLOCK))
        self.burst_time = 0.0
        self.destage = list(cfg.destage) if cfg.destage else [0.0] * len(cfg.stations)
        # background jobs per write replica: (station, its service stream) where the work is > 0
        laws = [(k, cfg.distribution(k, b)) for k, b in enumerate(cfg.background) if b > 0]
        self.background = tuple(
            (self.stations[k], _stream(lambda dist=dist: dist.sample(rng, BLOCK))) for k, dist in laws
        )
        # records
        self.op = array("b", bytes(requests))
        self.start = array("d", bytes(8 * requests))
        self.end = array("d", bytes(8 * requests))
        self.visited = sorted({k for path in self.paths for (k, _, _, delay, _) in path if not delay})
        self.waits = {k: array("d", bytes(8 * requests)) for k in self.visited}
        self.issued = 0
        self.completed = 0
        self.measuring = False
        self.t_w = self.t_e = 0.0
        self.stop = self.env.event()
        self._step_callbacks = (self._on_step,)
        if (
            cfg.closed
            and cfg.think_time == 0
            and ((f > 0 and not self.paths[0]) or (f < 1 and not self.paths[1]))
        ):
            raise ValueError("d_read / d_write: a closed loop with a class of no demand and no think time")

    def _path(self, demand, *, reads: bool) -> tuple:
        """Steps (station index, station, service stream, is delay, visit) of one class.

        ``visit`` is None, or (p, uniform stream) when a read visits the station
        with probability p (and then needs ``d / p``).
        """
        cfg, rng = self.cfg, self.rng
        steps = []
        for k, d in enumerate(demand):
            if d <= 0:
                continue
            p = cfg.read_visit_probability(k) if reads and not cfg.is_delay(k) else 1.0
            dist = cfg.distribution(k, d / p)
            if cfg.is_delay(k) and dist.variance == 0:
                service = repeat(float(d))
            else:
                service = _stream(lambda dist=dist: dist.sample(rng, BLOCK))
            visit = (p, _stream(lambda: rng.random(BLOCK))) if p < 1 else None
            steps.append((k, self.stations[k], service, cfg.is_delay(k), visit))
        return tuple(steps)

    # ------------------------------------------------------------------ events
    def _schedule(self, delay: float, callback) -> None:
        self.env.schedule(_Wake([callback]), NORMAL, delay)

    def _wake(self, job: _Job, delay: float) -> None:
        job.callbacks = self._step_callbacks
        self.env.schedule(job, NORMAL, delay)

    def _issue(self, now: float) -> None:
        rid = self.issued
        self.issued = rid + 1
        if rid < self.requests:
            if rid == self.warmup:
                self.measuring, self.t_w = True, now
                self._carry_backlog(now, +1.0)
            if rid == self.requests - 1:
                self.measuring, self.t_e = False, now
                self._carry_backlog(now, -1.0)
            self.start[rid] = now
        else:
            rid = -1
        read = next(self.op_choice) < self.read_fraction
        extras = self._zone_extras() if self.cfg.zoned else None
        if read:
            extra = extras[0] if extras else 0.0
            self._advance(_Job(rid, self.paths[0], next(self.node_choice), self.nk, None, extra), now)
            return
        if rid >= 0:
            self.op[rid] = 1
        parent = _Write(rid)
        path = self.paths[1]
        if self.replica_nodes is None:
            extra = extras[1][0] if extras else 0.0
            self._advance(_Job(rid, path, next(self.node_choice), self.nk, parent, extra), now)
        else:
            for j, node in enumerate(next(self.replica_nodes)):
                extra = extras[1][j] if extras else 0.0
                self._advance(_Job(rid, path, node, self.nk, parent, extra), now)

    def _zone_extras(self) -> tuple[float, list[float]]:
        """A request's round trips between zones [s]: the read's, and each write replica's."""
        cfg = self.cfg
        zones, rtt = cfg.zones, cfg.zone_rtt
        client = min(int(next(self.zone_draw) * zones), zones - 1)
        r = len(self.replica_zone)
        coordinator = self.replica_zone[min(int(next(self.zone_draw) * r), r - 1)]
        to_coordinator = cfg.zone_hops * rtt if coordinator != client else 0.0
        replicas = [to_coordinator + (rtt if zone != coordinator else 0.0) for zone in self.replica_zone]
        # a read waits for the read_acks-th nearest replica: another zone's if its own holds fewer
        beside = sum(1 for zone in self.replica_zone if zone == coordinator)
        read = to_coordinator + (rtt if beside < cfg.read_acks else 0.0)
        return read, replicas

    def _carry_backlog(self, now: float, sign: float) -> None:
        """Add (at the window's start) or remove (at its end) the work already queued beyond ``now``.

        Busy time is counted per arrival inside the window; the work queued
        at ``t_w`` runs inside it and the work queued at ``t_e`` runs after it.
        Under FCFS the work a server still owes is contiguous from ``now``, so
        it is the sum over servers of ``max(0, free - now)``, and the busy time
        in the window is exact.
        """
        for st in self.stations:
            if self.cfg.is_delay(st.k):
                continue
            rows = [st.free] if st.single else st.free
            owed = sum(f - now for row in rows for f in row if f > now)
            st.busy += sign * owed

    def _on_issue(self, event) -> None:
        self._issue(self.env.now)

    def _on_arrival(self, event) -> None:
        now = self.env.now
        self._issue(now)
        if self.issued < self.requests:
            self._schedule(next(self.gaps), self._on_arrival)

    def _on_step(self, job) -> None:
        now = self.env.now
        if job.step >= len(job.path):
            self._finish(job, now)
        else:
            self._advance(job, now, True)

    def _advance(self, job: _Job, t: float, arrived: bool = False) -> None:
        """Move ``job`` along its path from time ``t`` (= now) as far as no other job can interfere.

        ``arrived``: the job wakes up at the station of its current step (whose
        visit was already decided).
        """
        path = job.path
        i = job.step
        n = len(path)
        now = self.env.now
        while i < n:
            k, st, service, delay, visit = path[i]
            if delay:
                t += next(service)
                if k == self.fixed_k:
                    t += job.extra
                i += 1
                continue
            if visit is not None and not arrived and next(visit[1]) >= visit[0]:
                i += 1  # e.g. a cache hit: this read does not reach the device
                continue
            arrived = False
            if t > now:  # arrive at this station later: an event then
                job.step = i
                self._wake(job, t - self.env.now)
                return
            if st.hot_choice is not None and (job.node == 0 or not st.local):
                inst = next(st.hot_choice)
            else:
                inst = next(st.choice)
            if st.local:
                inst += job.node * st.per
            s = next(service)
            # a write's destage (programmed after its ack) holds the same server right after it:
            # the write leaves at begin + s, the server is free at begin + s + destage
            extra = self.destage[k] if job.parent is not None else 0.0
            if st.free_nf is not None:
                # its work enters both timelines; a read on another hardware queue than the
                # flush's starts on the one without the flush I/Os
                begin = _take(st.free, st.single, inst, t, s + extra)
                begin_nf = _take(st.free_nf, st.single, inst, t, s + extra)
                if job.parent is None:
                    if (
                        self.cfg.flush_queue_share < 1.0
                        and next(self.queue_draw) >= self.cfg.flush_queue_share
                    ):
                        begin = begin_nf
                    elif begin > begin_nf + self.cfg.flush_read_cap:  # the scheduler holds the rest back
                        begin = begin_nf + self.cfg.flush_read_cap
            elif st.single:
                free = st.free[inst]
                begin = free if free > t else t
                st.free[inst] = begin + s + extra
            else:
                heap = st.free[inst]
                free = heap[0]
                begin = free if free > t else t
                heapq.heapreplace(heap, begin + s + extra)
            job.waits[k] = begin - t
            if self.measuring:
                st.busy += s + extra
                st.residence += begin + s - t
            t = begin + s
            i += 1
            now = -1.0  # past a queueing station, the next one is reached by an event
        job.step = n
        if t > self.env.now:
            self._wake(job, t - self.env.now)
        else:
            self._finish(job, t)

    def _finish(self, job: _Job, now: float) -> None:
        parent = job.parent
        if parent is not None:
            if self.flushes and self._stalls(job, now):
                return
            if self.background:
                self._background(job.node, now)
            parent.done += 1
            if parent.done != self.cfg.acks:
                return
        rid = job.rid
        if rid >= 0:
            self.end[rid] = now
            for k in self.visited:
                self.waits[k][rid] = job.waits[k]
            self.completed += 1
            if self.completed == self.requests:
                if self.cfg.closed:
                    self.stop.succeed()
                return
        if self.cfg.closed and not self.stop.triggered:
            if self.think is None:
                self._issue(now)
            else:
                self._schedule(next(self.think), self._on_issue)

    def _stalls(self, job: _Job, now: float) -> bool:
        """Add a completed write replica's bytes to its node's memtable; flush when it is full.

        A full memtable whose predecessor is still being flushed stalls the
        write until that flush has drained (RocksDB ``max_write_buffer_number``
        = 2; Cassandra / ScyllaDB memtable back-pressure): the replica is woken
        then and tries again. This is what bounds the write rate by the
        device's flush bandwidth, as the analytic model's charging of
        background work to writes does.
        """
        node = job.node
        fill = self.memtable[node] + self.cfg.flush_bytes_per_write
        ios = self.flush_size[node]
        if fill >= ios * bursts.FLUSH_IO_BYTES:
            until = self.burst_until[node]
            if until > now:
                self._wake(job, until - now)
                return True
            fill -= ios * bursts.FLUSH_IO_BYTES
            self._burst(node, now, ios)
            self.flush_size[node] = self._flush_size()
        self.memtable[node] = fill
        return False

    def _background(self, node: int, now: float) -> None:
        """A completed write replica's background jobs join its node's instances at ``now``."""
        for st, service in self.background:
            if st.hot_choice is not None and (node == 0 or not st.local):
                inst = next(st.hot_choice)
            else:
                inst = next(st.choice)
            if st.local:
                inst += node * st.per
            s = next(service)
            if st.free_nf is not None:
                _take(st.free_nf, st.single, inst, now, s)
            if st.single:
                free = st.free[inst]
                st.free[inst] = (free if free > now else now) + s
            else:
                heap = st.free[inst]
                free = heap[0]
                heapq.heapreplace(heap, (free if free > now else now) + s)
            if self.measuring:
                st.busy += s

    def _flush_size(self) -> int:
        """A flush's I/O count: ``flush_ios``, or a gamma draw of that mean and SCV ``flush_size_scv``
        (rounded, at least 1)."""
        cfg = self.cfg
        if cfg.flush_size_scv <= 0:
            return cfg.flush_ios
        shape = 1.0 / cfg.flush_size_scv
        return max(1, int(round(self.rng.gamma(shape, cfg.flush_ios / shape))))

    def _burst(self, node: int, now: float, ios: int) -> None:
        """``ios`` background writes enter the node's device queues at ``now``."""
        st = self.stations[self.cfg.device_station]
        base = node * st.per if st.local else 0
        per = st.per
        last = now
        busy = 0.0
        for j in range(ios):
            inst = base + j % per
            s = next(self.bg_service)
            busy += s
            if st.single:
                free = st.free[inst]
                begin = free if free > now else now
                st.free[inst] = begin + s
            else:
                heap = st.free[inst]
                free = heap[0]
                begin = free if free > now else now
                heapq.heapreplace(heap, begin + s)
            if begin + s > last:
                last = begin + s
        if self.measuring:
            st.busy += busy
            prev = self.burst_until[node]
            self.burst_time += max(last - max(now, prev), 0.0)
        if last > self.burst_until[node]:
            self.burst_until[node] = last

    # ------------------------------------------------------------------ run
    def run(self) -> Records:
        cfg = self.cfg
        if cfg.closed:
            for _ in range(cfg.population):
                self._schedule(0.0, self._on_issue)
            self.env.run(until=self.stop)
        else:
            self._schedule(next(self.gaps), self._on_arrival)
            self.env.run()
        return Records(
            operation=np.frombuffer(self.op, dtype=np.int8),
            start=np.frombuffer(self.start, dtype=float),
            end=np.frombuffer(self.end, dtype=float),
            waits={k: np.frombuffer(v, dtype=float) for k, v in self.waits.items()},
            warmup=self.warmup,
            window=(self.t_w, self.t_e),
            busy=np.array([s.busy for s in self.stations]),
            residence=np.array([s.residence for s in self.stations]),
            burst_time=self.burst_time,
            engine="simpy",
        )


def run_simpy(cfg: SimConfig, requests: int, warmup: int, rng: np.random.Generator) -> Records:
    """One replication of ``cfg`` with the SimPy engine (:class:`Engine`)."""
    return Engine(cfg, requests, warmup, rng).run()
