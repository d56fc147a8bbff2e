"""Deployment topologies: what a count of servers is in the model's nodes and load.

A system spec names its topology (``topology:``, :data:`perfmodel.inputs.systems.TOPOLOGIES`);
sizing counts *servers* and this module maps ``s`` surviving servers (the count less the
failures tolerated) onto what :func:`perfmodel.predict` models, so the model itself needs
no topology branch (and :func:`perfmodel.simulate` takes the same mapped inputs):

================== ===================================================================
topology           ``s`` surviving servers are, for the model
================== ===================================================================
sharded            ``s`` nodes sharing the load (ScyllaDB, Cassandra, Ceph)
instances          ``s x k`` nodes, each one instance on a 1/k slice of a server
                   (:func:`instance_slice`): its cores, RAM, NIC bandwidth, drives,
                   L3 and memory bandwidth (Redis Cluster, a memcached pool)
primary_replicas   one node carrying every write and its share ``1/s`` of the reads:
                   the primary runs the writes, each replica applies them (asynchronous
                   streaming replication) and reads are spread evenly over all ``s``
                   (PostgreSQL, MySQL, openGauss, DM8): as ``s`` grows the load per
                   server tends to the writes alone, so no number of replicas carries
                   writes one server cannot
embedded           one node per server with ``1/s`` of the load and of the data (an
                   application sharding over RocksDB or raw drives, no cluster traffic)
================== ===================================================================

Assumptions, stated: a replica applies a write at the primary's cost of it (an upper
bound: a WAL / binlog replay skips parsing and planning; MySQL's and PostgreSQL's manuals
give no ratio) and the replication stream's NIC bytes are not counted; instances on one
server share nothing but the slices above (no cross-instance cache or lock effects), and
one core per server is left to the operating system and other services (redis/redis
discussion #13206, a Redis maintainer: "At least one extra core (for the OS and other
services) is recommended").

References: MySQL 8.4 Reference Manual, 19.4.5 "Using Replication for Scale-Out" (reads
distributed over the replicas, writes on the source); PostgreSQL documentation, 27.4 "Hot
Standby" (read-only queries on a standby); Redis documentation, "Scale with Redis Cluster"
(data sharded over primaries, each a single-threaded process); Huawei Cloud DCS FAQ "What
Are the CPU Specifications of DCS Instances?" (open-source Redis uses one core per node:
add shards for more CPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from perfmodel.inputs.catalog import Network, Platform, load_network
from perfmodel.inputs.workload import Workload

__all__ = ["Layout", "instance_options", "instance_slice", "layout", "max_instances"]

#: cores per server left to the operating system when a server runs several instances
RESERVED_CORES = 1


def max_instances(platform: Platform, threads_per_instance: float) -> int:
    """Most instances of ``threads_per_instance`` threads a server runs, one physical core
    each at least, with :data:`RESERVED_CORES` left over [count] (>= 1)."""
    cores_each = max(1.0, math.ceil(threads_per_instance / max(platform.threads_per_core, 1)))
    if not math.isfinite(cores_each):
        return 1
    return max(1, int((platform.cores - RESERVED_CORES) // cores_each))


def instance_options(most: int) -> list[int]:
    """Instance counts per server tried when ``size`` chooses: powers of two up to ``most``,
    and ``most`` itself (sorted, distinct)."""
    options = {1, int(most)}
    k = 2
    while k < most:
        options.add(k)
        k *= 2
    return sorted(options)


def instance_slice(platform: Platform, k: int, network: str | None = None) -> Platform:
    """One of ``k`` instances on a server: ``1/k`` of its cores (whole cores, at least one;
    its sockets and NUMA nodes split where ``k`` allows, else one of each), RAM, L3, memory
    bandwidth, NIC bandwidth and data drives (``count // k``, at least one: where ``k``
    exceeds the drives each instance would count a whole drive, so the sizer keeps ``k``
    within the drive count for systems whose data lives on drives).

    ``network`` puts the server on another NIC first (a catalog id). The slice's id is
    ``<id>/<k>``, so predictions keep it apart from the whole server; ``k = 1`` is the
    server itself (on ``network`` when given).
    """
    net_id = network or platform.network
    if k == 1:
        return platform if net_id == platform.network else replace(platform, network=net_id)
    net = platform.known_networks.get(net_id)
    if net is None:
        net = load_network(net_id)
    shared: Network = replace(net, id=f"{net.id}/{k}", name=f"{net.name}, 1/{k} of it",
                              bandwidth_bytes_s=net.bandwidth_bytes_s / k)  # fmt: skip
    cores = max(1, platform.cores // k)
    sockets = max(1, platform.sockets // k) if platform.sockets >= k else 1
    numa = max(1, platform.numa_nodes // k) if platform.numa_nodes >= k else 1
    slots = tuple(replace(s, count=max(1, s.count // k)) for s in platform.storage)
    return replace(
        platform,
        id=f"{platform.id}/{k}",
        name=f"{platform.name}, one of {k} instances",
        sockets=sockets,
        cores_per_socket=max(1, cores // sockets),
        cores=cores,
        threads=cores * platform.threads_per_core,
        numa_nodes=numa,
        ram_bytes=platform.ram_bytes / k,
        l3_bytes=platform.l3_bytes / k,
        mem_bandwidth_bytes_s=platform.mem_bandwidth_bytes_s / k,
        network=shared.id,
        storage=slots,
        known_networks={**platform.known_networks, shared.id: shared},
    )


@dataclass(frozen=True)
class Layout:
    """What :func:`perfmodel.predict` models for a count of servers: ``nodes`` [count] and the
    ``workload`` (arrays, one entry per configuration)."""

    nodes: np.ndarray
    workload: Workload


def layout(topology: str, workload: Workload, surviving, instances=1, sync_replicas: int = 0) -> Layout:
    """The model's nodes and load for ``surviving`` servers [count] (array) of ``topology``.

    ``workload`` carries the cluster's open arrival rate [1/s]; ``instances`` [count] per
    server (``instances`` topology only). See the module doc for each mapping.

    ``sync_replicas`` (``primary_replicas`` only): replicas a commit waits for (PostgreSQL's
    ``synchronous_standby_names = 'ANY n (...)'``, MySQL's semi-synchronous
    ``rpl_semi_sync_source_wait_for_replica_count``). 0 (asynchronous, both systems' default) maps
    onto one node carrying a server's load; ``n > 0`` onto ``s`` nodes each holding the whole data
    (RF ``s``) whose writes wait for ``n + 1`` of them: the same load per server, plus the round
    trip and the replica's own commit (its log flush) in every write's latency -- the ``n + 1``-th
    fastest of the ``s`` answers, the chain's replica order statistic, which for ``s > n + 1``
    is slightly optimistic (the primary's own commit is always among those waited for).
    """
    s = np.asarray(surviving, dtype=float)
    k = np.asarray(instances, dtype=float)
    if (s < 1).any():
        raise ValueError(f"surviving servers: must be >= 1, got {s.min():g}")
    rate = np.asarray(workload.arrival_rate, dtype=float)
    if topology == "sharded":
        return Layout(s, workload)
    if topology == "instances":
        return Layout(s * k, workload)
    ones = np.ones_like(s)
    single = dict(replication_factor=1, consistency="ONE", read_consistency="ONE")
    if topology == "primary_replicas" and sync_replicas > 0:
        if (s < sync_replicas + 1).any():
            raise ValueError(f"sync_replicas: {sync_replicas} synchronous replicas need {sync_replicas + 1} "
                             f"surviving servers, got {s.min():g}")  # fmt: skip
        return Layout(s, replace(workload, replication_factor=s, consistency=int(sync_replicas) + 1,
                                 read_consistency="ONE"))  # fmt: skip
    if topology == "primary_replicas":
        r = np.asarray(workload.read_fraction, dtype=float)
        reads = rate * r / s
        per_server = rate * (1.0 - r) + reads
        share = np.divide(reads, per_server, out=np.ones_like(per_server), where=per_server > 0)
        return Layout(ones, replace(workload, arrival_rate=per_server, read_fraction=share, **single))
    if topology == "embedded":
        data = np.asarray(workload.dataset_bytes, dtype=float)
        return Layout(ones, replace(workload, arrival_rate=rate / s, dataset_bytes=data / s, **single))
    raise ValueError(f"topology: {topology!r} is not one of sharded, instances, primary_replicas, embedded")
