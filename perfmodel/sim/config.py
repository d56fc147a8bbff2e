"""One configuration of a station network, as plain numbers the simulators run.

:func:`config_from_model` takes row ``i`` of a :class:`perfmodel.model.predict.NodeModel`
(the unsolved network :func:`perfmodel.predict` solves) so that the simulator
runs exactly the system the analytic model describes; :func:`config_from_network`
does the same for a hand-built :class:`perfmodel.solve.network.StationNetwork` (tests, studies).

Semantics (see :mod:`perfmodel.solve.network`): a read visits every station with
``d_read > 0`` in :data:`perfmodel.solve.network.STATIONS` order; a write runs on
``copies`` replicas, each visiting every station with ``d_write > 0``, and
completes at the ``acks``-th replica. ``mult`` identical instances of a
station share its load: a visit picks one uniformly at random. When ``mult``
is a multiple of ``nodes`` the instances belong to nodes (``mult / nodes``
each) and a request (or a write's replica) stays on its node, so a write's
replicas land on distinct nodes; otherwise the instance is drawn among all.
LSM flushes are simulated explicitly (``flush_bytes_per_write > 0``): the
background bytes are then taken out of the write's own device demand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from perfmodel.mechanisms import bursts
from perfmodel.sim.distributions import Distribution, from_moments
from perfmodel.solve.network import STATIONS, StationNetwork, background_jobs


@dataclass(frozen=True)
class SimConfig:
    """A single configuration's stations and workload, in SI units.

    ``d_read`` / ``d_write`` [s] per station (per replica for writes);
    ``servers`` (``inf`` = delay); ``mult`` instances; ``scv`` of service;
    ``read_fraction`` [-]; ``copies`` / ``acks`` [count]; ``nodes`` [count];
    closed loop (``population`` requests, mean think time ``think_time`` [s],
    exponential) or open Poisson arrivals at ``arrival_rate`` [1/s]; flushes:
    every completed write replica adds ``flush_bytes_per_write`` [B] to its
    node's memtable, and each ``flush_ios x 512 KiB`` accumulated is written
    as ``flush_ios`` I/Os of mean occupancy ``flush_io_time`` [s] and SCV
    ``flush_io_scv`` on that node's devices (station ``device_station``;
    default 0: a 512 KiB sequential write takes its transfer time, so a
    flush drains in ``QD x 512 KiB / bandwidth``, the analytic backlog --
    with exponential times the flush would last until the slowest of its
    I/Os, several times longer). ``flush_size_scv``: flush sizes vary, each
    flush's I/O count drawn from a gamma of mean ``flush_ios`` and this squared
    coefficient of variation (0: all ``flush_ios``); a node flushes when the
    drawn size has accumulated, so gaps vary with sizes. ``family`` is the shape of
    services whose SCV is neither 0 nor 1; ``service`` maps a station name to
    a distribution whose *shape* replaces it (rescaled to the demand's mean).
    ``read_visit`` (optional, one per station): the probability that a read
    visits the station (``d_read`` stays the mean over all reads, so a
    visiting read needs ``d_read / p``): cache misses reach the device.
    ``hot_node`` / ``hot_device`` [-]: placement imbalance made concrete -- node 0
    takes ``hot_node / nodes`` of the requests (and of the write replicas) and the
    others share the rest evenly; on node 0, device 0 takes the share that makes
    its cluster-wide load ``hot_device`` times the mean device's
    (:mod:`perfmodel.mechanisms.placement`; the analytic solvers load every instance like
    the busiest one).
    ``destage`` (optional, one per station) [s]: work a write replica leaves
    at the station after its own service there -- a drive acknowledges a write
    from its buffer and programs it afterwards: the replica moves on, and the
    same server stays busy with that work right after it (FCFS by arrival),
    which nobody waits for.
    ``background`` (optional, one per station) [s]: mean work a write replica
    causes at the station as a job of its own (a database's checkpoint or page
    cleaner writing dirty pages; a visit to the station is not needed): when the
    replica completes, a job of that mean (the station's service law) joins its
    node's instance of the station, FCFS, and no request waits for it.
    ``flush_queue_share`` [-] (default 1: one queue): the share of the reads at the
    flushing device that share the flush's hardware queue and wait behind its I/Os
    (:func:`perfmodel.mechanisms.bursts.flush_queue_share`); the others are fetched ahead of the
    flush's queued I/Os (NVMe round-robin arbitration): they queue only behind the
    requests' and background jobs' work, as if no flush were queued.
    ``flush_read_cap`` [s] (default inf): a read on the flush's queue waits behind at most this
    much of the flush's I/Os beyond the other work queued there -- a server whose own I/O
    scheduler keeps the device's queue within a latency goal and holds the rest of the flush
    back (ScyllaDB's Seastar).
    ``zones`` [count] (default 1), ``zone_rtt`` [s], ``zone_hops`` [count]: a cluster over
    availability zones, simulated from its layout (the analytic model's shares are not used):
    replica ``j`` of a key in zone ``j mod zones``, the client in a uniformly drawn zone and the
    coordinator a uniformly drawn replica; a request whose coordinator is in another zone than
    the client adds ``zone_hops x zone_rtt`` at the ``fixed`` station (its round trips to the
    coordinator), and each write replica in another zone than the coordinator ``zone_rtt`` more
    (the write completes at its ``acks``-th replica); a read waiting for ``read_acks`` answers
    adds ``zone_rtt`` when its coordinator's zone holds fewer replicas than that (it waits for
    the ``read_acks``-th nearest). ``d_read`` / ``d_write`` at ``fixed`` hold the rest of the
    fixed latency.
    """

    d_read: tuple
    d_write: tuple
    servers: tuple
    mult: tuple
    scv: tuple
    read_fraction: float
    copies: int = 1
    acks: int = 1
    nodes: int = 1
    closed: bool = False
    population: int = 1
    think_time: float = 0.0
    arrival_rate: float = float("nan")
    flush_bytes_per_write: float = 0.0
    flush_ios: int = 0
    flush_io_time: float = 0.0
    flush_io_scv: float = 0.0
    flush_size_scv: float = 0.0
    device_station: int = STATIONS.index("device")
    stations: tuple = STATIONS
    family: str = "gamma"
    service: dict = field(default_factory=dict)
    read_visit: tuple = ()
    hot_node: float = 1.0
    hot_device: float = 1.0
    destage: tuple = ()
    background: tuple = ()
    flush_queue_share: float = 1.0
    flush_read_cap: float = float("inf")
    zones: int = 1
    zone_rtt: float = 0.0
    zone_hops: float = 1.0
    read_acks: int = 1

    def __post_init__(self) -> None:
        k = len(self.stations)
        for name in ("d_read", "d_write", "servers", "mult", "scv"):
            if len(getattr(self, name)) != k:
                raise ValueError(f"{name}: needs one value per station ({k})")
        if not 0.0 <= self.read_fraction <= 1.0:
            raise ValueError(f"read_fraction: must be in [0, 1], got {self.read_fraction!r}")
        if not 1 <= self.acks <= self.copies:
            raise ValueError(f"acks: must be in 1..copies ({self.copies}), got {self.acks!r}")
        if self.copies > self.nodes and any(self.local(j) for j in range(k)):
            raise ValueError(f"copies: {self.copies} replicas need as many nodes, got {self.nodes}")
        if self.closed and self.population < 1:
            raise ValueError(f"population: must be >= 1, got {self.population!r}")
        if not self.closed and not (np.isfinite(self.arrival_rate) and self.arrival_rate > 0):
            raise ValueError(
                f"arrival_rate: an open configuration needs a rate > 0, got {self.arrival_rate!r}"
            )
        if not (np.isfinite(self.flush_queue_share) and 0.0 < self.flush_queue_share <= 1.0):
            raise ValueError(f"flush_queue_share: must be in (0, 1], got {self.flush_queue_share!r}")
        if not (self.flush_read_cap > 0):  # inf allowed: no cap
            raise ValueError(
                f"flush_read_cap: must be a time > 0 [s] (inf: none), got {self.flush_read_cap!r}"
            )
        if not (isinstance(self.read_acks, int | np.integer) and 1 <= self.read_acks <= max(self.copies, 1)):
            raise ValueError(f"read_acks: must be in 1..copies ({self.copies}), got {self.read_acks!r}")
        if not (isinstance(self.zones, int | np.integer) and self.zones >= 1):
            raise ValueError(f"zones: must be a whole number >= 1, got {self.zones!r}")
        if not (np.isfinite(self.zone_rtt) and self.zone_rtt >= 0):
            raise ValueError(f"zone_rtt: must be a finite time >= 0 [s], got {self.zone_rtt!r}")
        if not (np.isfinite(self.zone_hops) and self.zone_hops >= 0):
            raise ValueError(f"zone_hops: must be a finite count >= 0, got {self.zone_hops!r}")
        if self.zoned and "fixed" not in self.stations:
            raise ValueError("zones: crossing zones needs a station named 'fixed' to add the round trips at")
        if self.zoned:
            fixed = self.stations.index("fixed")
            for name, d, used in (("d_read", self.d_read, self.read_fraction > 0),
                                  ("d_write", self.d_write, self.read_fraction < 1)):  # fmt: skip
                if used and not d[fixed] > 0:
                    raise ValueError(
                        f"zones: {name} at 'fixed' must be > 0 to carry the crossings (a request "
                        "with no fixed latency skips the station)"
                    )
        if not (np.isfinite(self.flush_size_scv) and self.flush_size_scv >= 0):
            raise ValueError(f"flush_size_scv: must be a finite number >= 0, got {self.flush_size_scv!r}")
        if self.destage and (len(self.destage) != k or not all(v >= 0 for v in self.destage)):
            raise ValueError("destage: needs one work [s] >= 0 per station")
        if self.background and (
            len(self.background) != k or not all(np.isfinite(v) and v >= 0 for v in self.background)
        ):
            raise ValueError("background: needs one work [s] >= 0 per station")
        if self.background and any(b > 0 and self.is_delay(j) for j, b in enumerate(self.background)):
            raise ValueError("background: a delay station (servers = inf) holds no background work")
        if self.read_visit and (len(self.read_visit) != k or not all(0 < p <= 1 for p in self.read_visit)):
            raise ValueError("read_visit: needs one probability in (0, 1] per station")
        if not 1.0 <= self.hot_node <= self.nodes:
            raise ValueError(f"hot_node: must be in [1, nodes], got {self.hot_node!r}")
        if self._hot_device_q() > 1.0 + 1e-9:
            raise ValueError(f"hot_device: {self.hot_device!r} is above what one device of node 0 can take")
        for name, dist in self.service.items():
            if name not in self.stations or not isinstance(dist, Distribution):
                raise ValueError(f"service: {name!r} must be a station name mapped to a Distribution")

    # ------------------------------------------------------------------ derived
    @property
    def flushes(self) -> bool:
        """Whether flush bursts are simulated explicitly."""
        return self.flush_bytes_per_write > 0 and self.flush_ios > 0 and self.read_fraction < 1

    @property
    def requests_per_flush(self) -> float:
        """Requests the whole cluster serves between two flushes of one node [count] (``inf``
        without flushes): a node flushes every ``flush_ios x 512 KiB`` of memtable bytes, and
        each request brings it ``(1 - f) x copies / nodes`` write replicas of
        ``flush_bytes_per_write`` each."""
        if not self.flushes:
            return float("inf")
        per_node = (1 - self.read_fraction) * self.copies / self.nodes * self.flush_bytes_per_write
        return self.flush_ios * bursts.FLUSH_IO_BYTES / per_node

    def node_weights(self) -> np.ndarray | None:
        """Probability that a request lands on each node (``None``: uniform)."""
        n, h = self.nodes, self.hot_node
        if n == 1 or h <= 1.0:
            return None
        w = np.full(n, (1.0 - h / n) / (n - 1))
        w[0] = h / n
        return w

    def hot_device_share(self) -> float | None:
        """On node 0, the probability that a device visit picks device 0 (``None``: uniform).

        Device 0's cluster share ``hot_device / (nodes x per)`` over node 0's share
        ``hot_node / nodes``; ``None`` where it is not above ``1 / per`` or above 1.
        """
        q = self._hot_device_q()
        per = self._device_per()
        if per < 2 or not 1.0 / per + 1e-12 < q <= 1.0 + 1e-9:
            return None
        return float(min(q, 1.0))

    def hot_device_weights(self) -> np.ndarray | None:
        """Probabilities of the devices of node 0 (of the station when not per node) for a visit:
        device 0 :meth:`hot_device_share`, the others the rest evenly (``None``: uniform)."""
        q = self.hot_device_share()
        if q is None:
            return None
        per = self._device_per()
        weights = np.full(per, (1.0 - q) / (per - 1))
        weights[0] = q
        return weights

    def _device_per(self) -> int:
        k = self.device_station
        m = int(self.mult[k])
        return m // self.nodes if self.local(k) else m

    def _hot_device_q(self) -> float:
        k = self.device_station
        per = self._device_per()
        if self.hot_device <= 1.0 or per < 1:
            return 0.0
        if self.local(k):  # device 0's cluster share over node 0's share
            return self.hot_device / (self.nodes * per) / (self.hot_node / self.nodes)
        return self.hot_device / per

    def read_visit_probability(self, k: int) -> float:
        """Probability that a read visits station k [-]; it then needs ``d_read[k] / p`` there."""
        return float(self.read_visit[k]) if self.read_visit else 1.0

    def is_delay(self, k: int) -> bool:
        return bool(np.isinf(self.servers[k]))

    def local(self, k: int) -> bool:
        """Whether station k's instances belong to nodes (``mult`` a multiple of ``nodes``)."""
        m = int(self.mult[k])
        return self.nodes > 1 and m >= self.nodes and m % self.nodes == 0

    def distribution(self, k: int, mean: float) -> Distribution:
        """Service law at station k with this mean [s]."""
        name = self.stations[k]
        if name in self.service:
            return self.service[name].scaled(mean)
        return from_moments(mean, self.scv[k], family=self.family)

    def offered_utilization(self) -> np.ndarray:
        """Per-station utilisation an open configuration offers [-] (0 for delays, NaN closed);
        the busiest instance's where placement is uneven (``hot_node``, ``hot_device``)."""
        if self.closed:
            return np.full(len(self.stations), np.nan)
        f = self.read_fraction
        work = f * np.asarray(self.d_read) + (1 - f) * self.copies * np.asarray(self.d_write)
        if self.flushes:  # the background bytes a write causes, at the device
            dev = self.device_station
            ios = self.flush_bytes_per_write / bursts.FLUSH_IO_BYTES  # 512 KiB I/Os per write replica
            work[dev] += (1 - f) * self.copies * ios * self.flush_io_time
        if self.destage:
            work += (1 - f) * self.copies * np.asarray(self.destage)
        if self.background:
            work += (1 - f) * self.copies * np.asarray(self.background)
        servers = np.asarray(self.servers, dtype=float)
        with np.errstate(invalid="ignore"):
            util = (
                self.arrival_rate * work / (np.where(np.isinf(servers), 1.0, servers) * np.asarray(self.mult))
            )
        hot = np.array([self.hot_node if self.local(k) else 1.0 for k in range(len(self.stations))])
        if self.hot_device > 1.0:
            hot[self.device_station] = self.hot_device
        return np.where(np.isinf(servers), 0.0, util * hot)

    @property
    def fast_path_applies(self) -> bool:
        """Open Poisson arrivals through FCFS stations in series, no replicas, no bursts, one zone."""
        # a read-only load destages nothing and causes no background work
        writes_leave_work = (any(self.destage) or any(self.background)) and self.read_fraction < 1
        simple = not self.closed and self.copies == 1 and not self.flushes and not self.zoned
        return simple and not writes_leave_work

    @property
    def zoned(self) -> bool:
        """Whether requests cross availability zones (``zones > 1`` and a round trip between them)."""
        return self.zones > 1 and self.zone_rtt > 0


def config_from_network(
    net: StationNetwork,
    i: int = 0,
    *,
    arrival_rate: float | None = None,
    population: int | None = None,
    think_time: float = 0.0,
    nodes: int = 1,
    family: str = "gamma",
    service: dict | None = None,
    stations: tuple = STATIONS,
) -> SimConfig:
    """Row ``i`` of a hand-built network with an open rate or a closed population.

    Exactly one of ``arrival_rate`` [1/s] and ``population`` [count] is given.
    Flush bursts are not simulated (the network's burst terms are ignored); the
    background work ``net.load_write`` is, as the solvers count it: ``net.destage`` holds
    the server after each write visit (``destage``), the rest but ``net.flush`` is one job of
    its own per write replica (``background``); :func:`config_from_model` simulates an LSM
    store's flush share as flushes.
    """
    if (arrival_rate is None) == (population is None):
        raise ValueError("arrival_rate: give exactly one of arrival_rate (open) and population (closed)")
    row = np.atleast_2d
    destage = np.where(row(net.v_write)[i] > 0, row(net.destage)[i], 0.0)
    background = row(background_jobs(net))[i]
    return SimConfig(
        d_read=tuple(float(v) for v in row(net.d_read)[i]),
        d_write=tuple(float(v) for v in row(net.d_write)[i]),
        servers=tuple(float(v) for v in row(net.servers)[i]),
        mult=tuple(int(v) for v in row(net.mult)[i]),
        scv=tuple(float(v) for v in row(net.scv)[i]),
        read_fraction=float(np.atleast_1d(net.read_fraction)[i]),
        copies=int(np.atleast_1d(net.copies)[i]),
        acks=int(np.atleast_1d(net.acks)[i]),
        nodes=int(nodes),
        closed=population is not None,
        population=int(population) if population is not None else 1,
        think_time=float(think_time),
        arrival_rate=float(arrival_rate) if arrival_rate is not None else float("nan"),
        family=family,
        service=dict(service or {}),
        stations=tuple(stations),
        destage=tuple(float(v) for v in destage) if destage.any() else (),
        background=tuple(float(v) for v in background) if background.any() else (),
    )


def config_from_model(model, i: int = 0, *, family: str = "gamma", service: dict | None = None) -> SimConfig:
    """Row ``i`` of a :class:`perfmodel.model.predict.NodeModel`, flushes made explicit.

    Where the system is an LSM store (its spec's ``lsm``) and a write causes
    background bytes, the flushes are simulated (the analytic model keeps that
    work as ``net.load_write``, occupying the device without being waited for):
    each node submits ``burst_qd`` background writes
    of occupancy ``occ_bg`` [s] when a memtable's worth
    (``burst_qd x 512 KiB``) has accumulated. Other background work (a
    database's checkpoints and page cleaning) is simulated as ``background``
    jobs, one per write replica, that occupy the device as ``net.load_write``
    does in the analytic model: nobody waits for them, the requests queued
    behind them do.
    """
    net, inp, dev = model.net, model.inputs, model.devices
    cfg = inp.cfg
    dev_i = STATIONS.index("device")
    fixed_i = STATIONS.index("fixed")
    # zone crossings are drawn from the layout: the fixed demands without their analytic mean
    path = model.paths
    zone_rtt = float(np.broadcast_to(path.zone_rtt, (inp.size,))[i])
    d_read = np.array(net.d_read[i], dtype=float)
    d_read[fixed_i] -= float(np.broadcast_to(path.zone_read_mean, (inp.size,))[i])
    d_write = np.array(net.d_write[i], dtype=float)
    d_write[fixed_i] -= float(np.broadcast_to(path.zone_write_mean, (inp.size,))[i])
    flush = bool(inp.sys.lsm[i]) and float(dev.bg_bytes_per_write[i]) > 0
    # the writes' destage (a drive programs after its ack) is background work at its station
    destage = np.zeros(len(STATIONS))
    destage[dev_i] = float(dev.d_destage[i])
    destage[STATIONS.index("wal")] = float(dev.d_wal_destage[i])
    # background work not simulated as flushes (e.g. DM8 checkpoints): jobs of their own
    background = np.zeros(len(STATIONS))
    if not flush:
        background = np.clip(np.asarray(net.load_write[i], dtype=float) - destage, 0.0, None)
    closed = bool(inp.workload.closed)
    # a read reaches the device only on a cache miss (share ``reach``), and then needs d / reach
    reach = float(dev.bursts.reach[i])
    read_visit = [1.0] * len(STATIONS)
    if 0 < reach < 1 and net.d_read[i, dev_i] > 0:
        read_visit[dev_i] = reach
    return SimConfig(
        d_read=tuple(float(v) for v in d_read),
        d_write=tuple(float(v) for v in d_write),
        servers=tuple(float(v) for v in net.servers[i]),
        mult=tuple(int(round(v)) for v in net.mult[i]),
        scv=tuple(float(v) for v in net.scv[i]),
        read_fraction=float(net.read_fraction[i]),
        copies=int(net.copies[i]),
        acks=int(net.acks[i]),
        nodes=int(cfg.nodes[i]),
        closed=closed,
        population=int(cfg.population[i]) if closed else 1,
        think_time=float(inp.effective_think_time_s[i]),
        arrival_rate=float(cfg.arrival_rate[i]),
        flush_bytes_per_write=float(dev.bg_bytes_per_write[i]) if flush else 0.0,
        flush_ios=int(round(float(dev.bursts.queue_depth[i]))) if flush else 0,
        flush_io_time=float(dev.occ_background[i]) if flush else 0.0,
        flush_size_scv=float(dev.bursts.size_scv[i]) if flush else 0.0,
        flush_queue_share=float(dev.bursts.queue_share[i]) if flush else 1.0,
        flush_read_cap=float(inp.sys.io_latency_goal_s[i]) if flush else float("inf"),
        family=family,
        service=dict(service or {}),
        read_visit=tuple(read_visit),
        hot_node=float(model.scale_out.node_imbalance[i]) if model.scale_out is not None else 1.0,
        hot_device=float(model.scale_out.device_imbalance[i]) if model.scale_out is not None else 1.0,
        destage=tuple(float(v) for v in destage),
        background=tuple(float(v) for v in background),
        zones=int(inp.knobs.zones[i]) if zone_rtt > 0 else 1,
        zone_rtt=zone_rtt,
        zone_hops=float(np.broadcast_to(path.zone_hops, (inp.size,))[i]),
        read_acks=int(min(inp.layout.read_acks_waited[i], net.copies[i])),
    )
