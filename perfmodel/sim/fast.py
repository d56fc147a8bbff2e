"""Fast path: open FCFS multi-server stations in series by the Kiefer-Wolfowitz recursion.

For open Poisson arrivals through FCFS c-server stations in series (a
tandem), with no replicas, no flush bursts and no closed loop, each station
can be simulated in one pass over its arrivals in time order. With ``W`` the
sorted vector of the times the ``c`` servers fall free, a customer arriving
at ``t`` with service ``s`` starts at ``b = max(t, W_1)``, and ``W_1`` is
replaced by ``b + s`` (Kiefer & Wolfowitz 1955; for c = 1 this is Lindley's
recursion ``W_{n+1} = max(0, W_n + S_n - A_{n+1})``, Lindley 1952). A station
with several identical instances keeps one vector per instance. Departures
from a multi-server station overtake each other, so the next station's
arrivals are its predecessors' departures re-sorted (a stable argsort).
Delay stations add their time; reads and writes keep their own demands.

The recursion is compiled with numba (``cache=True``); a single pass costs a
few tens of nanoseconds per request. The distribution is the same as the
SimPy engine's (tests compare the two with confidence intervals); only the
order in which random numbers are drawn differs.

References: Lindley, D. V. (1952). The theory of queues with a single server.
Proc. Cambridge Phil. Soc. 48(2), 277-289. Kiefer, J., Wolfowitz, J. (1955).
On the theory of queues with many servers. Trans. AMS 78(1), 1-18.
Asmussen, S. (2003). Applied Probability and Queues, 2nd ed., sec. XII.2.
"""

from __future__ import annotations

import functools

import numpy as np

from perfmodel.sim.config import SimConfig
from perfmodel.sim.results import READ, WRITE, Records


def _fcfs_loop(arrival, service, instance, instances, servers, begin):  # pragma: no cover - compiled
    """:func:`fcfs_station`'s loop, compiled by numba (the free times of each instance: a binary min-heap)."""
    free = np.zeros((instances, servers))
    for j in range(arrival.size):
        t = arrival[j]
        row = free[instance[j]]
        f = row[0]
        b = t if t > f else f
        begin[j] = b
        value = b + service[j]
        # replace the heap's smallest (row[0]) by value and sift it down
        i = 0
        while True:
            child = 2 * i + 1
            if child >= servers:
                break
            if child + 1 < servers and row[child + 1] < row[child]:
                child += 1
            if row[child] >= value:
                break
            row[i] = row[child]
            i = child
        row[i] = value


@functools.cache
def _compiled_fcfs_loop():
    """:func:`_fcfs_loop` compiled (numba is imported here, on first use: importing it costs ~0.1 s)."""
    import numba

    return numba.njit(cache=True)(_fcfs_loop)


def fcfs_station(arrival, service, instance, instances, servers, begin) -> None:
    """Start times [s] of FCFS service for arrivals in time order (Kiefer-Wolfowitz).

    ``arrival`` [s] sorted ascending, ``service`` [s], ``instance`` (index of
    the station instance each one visits, in ``0 .. instances - 1``),
    ``servers`` per instance; ``begin`` (output) receives each start [s].
    """
    _compiled_fcfs_loop()(arrival, service, instance, instances, servers, begin)


def lindley(arrival, service) -> np.ndarray:
    """Waiting times [s] of a FCFS single-server queue (Lindley's recursion), for tests and users.

    ``arrival`` [s] ascending, ``service`` [s]; returns ``begin - arrival``.
    """
    arrival = np.ascontiguousarray(arrival, dtype=float)
    begin = np.empty_like(arrival)
    fcfs_station(
        arrival, np.ascontiguousarray(service, dtype=float), np.zeros(arrival.size, np.int64), 1, 1, begin
    )
    return begin - arrival


def _visitors(visit, present, op, p_read: float, rng: np.random.Generator):
    """``(idx, cls)``: the requests that visit a station (None: every one) and their classes. A read
    visits with probability ``p_read`` (e.g. a cache miss reaches the device)."""
    n = len(op)
    partial = p_read < 1 and any(c == READ for c, _ in visit)
    if len(visit) == len(present) and not partial:
        return None, op  # every request visits
    mask = np.zeros(n, dtype=bool)
    for c, _ in visit:
        mask |= op == c
    if partial:
        mask &= (op != READ) | (rng.random(n) < p_read)
    idx = np.flatnonzero(mask)
    return idx, op[idx]


def _service_times(cfg: SimConfig, k: int, visit, cls, m: int, p_read: float, rng: np.random.Generator):
    """``(service, means)``: the ``m`` visitors' service times at station ``k`` [s] and each class's
    mean where its service is fixed (NaN: it varies)."""
    service = np.empty(m)
    means = []
    for c, d in visit:
        sel = slice(None) if len(visit) == 1 else cls == c
        size = m if len(visit) == 1 else int(np.count_nonzero(sel))
        dist = cfg.distribution(k, d / p_read if c == READ else d)
        means.append(dist.mean if dist.variance == 0 else np.nan)
        service[sel] = dist.sample(rng, size)
    return service, means


def _instances(cfg: SimConfig, k: int, m: int, idx, order, nodes, rng: np.random.Generator) -> np.ndarray:
    """Which of station ``k``'s instances each visitor (in arrival order) goes to: uniform, the hot
    device of node 0 under placement imbalance, a node's own instances for a local station."""
    mult = int(cfg.mult[k])
    if mult <= 1:
        return np.zeros(m, np.int64)
    per = mult // cfg.nodes if cfg.local(k) else mult
    inst = rng.integers(0, per, m)
    weights = cfg.hot_device_weights() if k == cfg.device_station else None
    if cfg.local(k):
        who = np.arange(m) if idx is None else idx
        node_of = nodes[who if order is None else who[order]]
        if weights is not None:  # placement imbalance: device 0 of node 0 is hot
            on_hot = node_of == 0
            inst[on_hot] = rng.choice(per, int(on_hot.sum()), p=weights)
        inst = inst + node_of * per
    elif weights is not None:
        inst = rng.choice(per, m, p=weights)
    return inst


def run_fast(cfg: SimConfig, requests: int, warmup: int, rng: np.random.Generator) -> Records:
    """One replication of an open tandem configuration (see the module docstring).

    Same records as :func:`perfmodel.sim.engine.run_simpy`.
    """
    if not cfg.fast_path_applies:
        raise ValueError("fast path: needs open arrivals, one copy per write and no flush bursts")
    if requests < 2 or not 0 <= warmup <= requests - 2:
        raise ValueError(f"requests / warmup: need 0 <= warmup <= requests - 2, got {requests}, {warmup}")
    n = int(requests)
    start = np.cumsum(rng.exponential(1.0 / cfg.arrival_rate, n))
    f = cfg.read_fraction
    op = (rng.random(n) >= f).astype(np.int8) if 0 < f < 1 else np.full(n, 0 if f == 1 else 1, np.int8)
    weights = cfg.node_weights()
    if weights is not None:
        nodes = rng.choice(cfg.nodes, n, p=weights)
    else:
        nodes = rng.integers(0, cfg.nodes, n) if cfg.nodes > 1 else None
    t = start.copy()
    ordered = True  # t is in time order
    waits: dict[int, np.ndarray] = {}
    servers = np.asarray(cfg.servers, dtype=float)
    busy = np.zeros(len(cfg.stations))
    residence = np.zeros(len(cfg.stations))
    t_w, t_e = start[warmup], start[-1]
    classes = ((READ, cfg.d_read), (WRITE, cfg.d_write))
    present = [c for c, _ in classes if (op == c).any()]
    for k in range(len(cfg.stations)):
        visit = [(c, d[k]) for c, d in classes if d[k] > 0 and c in present]
        if not visit:
            continue
        p_read = cfg.read_visit_probability(k)
        idx, cls = _visitors(visit, present, op, p_read, rng)
        m = n if idx is None else idx.size
        service, means = _service_times(cfg, k, visit, cls, m, p_read, rng)
        if cfg.is_delay(k):
            if idx is None:
                t += service
            else:
                t[idx] += service
            # only the same constant for everyone keeps the time order
            ordered = ordered and idx is None and len(set(means)) == 1 and not np.isnan(means[0])
            continue
        arrive = t if idx is None else t[idx]
        if not ordered or idx is not None:
            order = np.argsort(arrive, kind="stable")
            arrive = arrive[order]
            service = service[order]
        else:
            order = None
        mult = int(cfg.mult[k])
        inst = _instances(cfg, k, m, idx, order, nodes, rng)
        begin = np.empty(m)
        fcfs_station(arrive, service, inst, mult, int(servers[k]), begin)
        wait = begin - arrive
        depart = begin + service
        inside = (arrive >= t_w) & (arrive < t_e)
        busy[k] = np.clip(np.minimum(depart, t_e) - np.maximum(begin, t_w), 0.0, None).sum()  # in the window
        residence[k] = (depart - arrive)[inside].sum()
        if idx is None and order is None:  # everyone, already in request order
            waits[k] = wait
            t = depart
        else:
            rows = order if idx is None else (idx if order is None else idx[order])
            waits[k] = np.zeros(n)
            waits[k][rows] = wait
            t[rows] = depart
        ordered = False
        del arrive, service, begin, inside, inst
    return Records(
        operation=op,
        start=start,
        end=t,
        waits=waits,
        warmup=int(warmup),
        window=(float(t_w), float(t_e)),
        busy=busy,
        residence=residence,
        engine="fast",
    )
