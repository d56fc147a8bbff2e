"""Scale-out: uneven data placement and coordinator forwarding, the costs that make clusters sublinear.

Glossary and units: ``instances`` n [count] (nodes, or OSD daemons' devices),
``replicas`` r [count] (copies of each placement unit, on distinct instances),
``units`` u [count] (placement units per instance, replicas counted: Cassandra
``num_tokens x RF`` ranges a node holds, Ceph placement groups per OSD),
``cv2`` [-] (squared coefficient of variation of an instance's load share),
``token_aware`` [-] (share of requests a client sends straight to a replica).

* **Placement imbalance.** Hashing spreads data over units, and units over
  instances at random, so instance loads differ. An instance's load is
  modelled as ``Gamma`` with mean 1 and squared coefficient of variation
  ``cv2``; the cluster is as fast as its busiest instance, ``imbalance =
  E[max of n loads]`` (>= 1, growing like ``1 + sqrt(2 cv2 ln n)``), so its
  capacity is ``n / imbalance`` instances' worth and throughput per node falls
  as nodes are added. Two placements:

  - ``random`` (Ceph CRUSH: each placement group on ``r`` distinct OSDs drawn
    at random; ``u`` = PGs per OSD, replicas counted): an instance's unit count
    is a sum of independent Bernoulli(``r/n``) draws, ``cv2 = (1 - r/n) / u``
    exactly;
  - ``ring`` (Cassandra / ScyllaDB random tokens, ``v`` tokens per node,
    ``u = r v``): a node replicates the ranges of its ``r`` predecessors'
    spans, a sum of ``v`` spans of about ``r`` arcs each, ``cv2 = 1 / (r v)``
    for ``r < n`` (0 when every node holds everything). A Monte Carlo of the
    ring (tests/unit/test_placement.py) gives ``cv2 v r`` = 0.72 (n = 4),
    0.92 (6), 0.98 (12), 1.0 (48) at ``r = 3``: the form is within 10% from
    ``n = 2 r`` and overstates the variance (so understates capacity) just
    above ``n = r``;
  - ``even`` (a token-allocation algorithm or a balancer that makes loads
    proportional: Cassandra 4's ``allocate_tokens_for_local_replication_factor``,
    Ceph's upmap balancer): ``cv2 = 0``, no imbalance.
* **Availability zones.** A cluster spread over ``z`` zones of a cloud region
  (nodes, and each key's replicas, as evenly as the zones allow: replicas on
  distinct racks, a rack per zone) crosses zones twice over. The client, in one
  zone, reaches a coordinator in another with probability ``1 - 1/z``
  (:func:`cross_zone_client_share`); a request that waits for ``k`` replica
  answers waits for one in another zone than its coordinator when the
  coordinator's zone holds fewer than ``k`` of the replicas
  (:func:`cross_zone_replica_share`). Each crossing costs the region's round
  trip between zones, far above one within a zone.
* **Coordinator forwarding.** A client that is not token-aware sends a request
  to any node; with probability ``1 - r / n`` that node holds no replica and
  forwards it (one more network hop and the coordinator's CPU). The share
  grows with ``n``, so per-node throughput falls until ``n >> r``.

References: Raab, M., Steger, A. (1998). "Balls into bins" -- a simple and
tight analysis. RANDOM '98, LNCS 1518 (the maximum load grows like
``sqrt(2 m ln n / n)`` above the mean). DeCandia, G. et al. (2007). Dynamo:
Amazon's highly available key-value store. SOSP (virtual nodes smooth load;
load imbalance falls with tokens per node). Weil, S. A. et al. (2006). CRUSH:
controlled, scalable, decentralized placement of replicated data. SC'06 (PG
placement variance, section 4.2). Apache Cassandra documentation,
"Architecture: Dynamo" (token-aware drivers send requests to a replica);
"Replication" (NetworkTopologyStrategy places a key's replicas on distinct
racks first), where a cloud deployment maps racks to availability zones
(Cassandra's Ec2Snitch: "the rack is the availability zone").
"""

from __future__ import annotations

import functools
import math

import numpy as np

from perfmodel.inputs._validate import broadcast, in_range
from perfmodel.inputs.systems import PLACEMENTS

__all__ = [
    "PLACEMENTS",
    "cross_zone_client_share",
    "cross_zone_replica_share",
    "expected_max_load",
    "forwarded_share",
    "imbalance",
    "load_cv2",
]

#: how units are placed on instances (see the module doc)


def load_cv2(instances, replicas, units, kind: str = "random"):
    """Squared coefficient of variation of one instance's load share [-].

    ``random``: ``(1 - r/n) / u``; ``ring``: ``1 / u`` where ``r < n``, else 0
    (``u`` counts replicas: PGs per OSD, or ``r x`` tokens per node).
    """
    if kind not in PLACEMENTS:
        raise ValueError(f"placement: {kind!r} is not one of {', '.join(PLACEMENTS)}")
    n = in_range(instances, "instances", 1.0)
    r = in_range(replicas, "replicas", 1.0)
    u = in_range(units, "units", 1e-9, allow_inf=True)
    n, r, u = broadcast(instances=n, replicas=r, units=u)
    if kind == "even":
        return np.zeros(n.shape)
    if kind == "ring":
        return np.where(r < n, 1.0 / u, 0.0)
    return np.clip(1.0 - np.minimum(r, n) / n, 0.0, None) / u


@functools.lru_cache(maxsize=4096)
def _expected_max(n: int, cv2: float) -> float:
    """E[max of n iid Gamma loads of mean 1 and scv ``cv2``] = int_0^inf 1 - F(x)^n dx.

    ``F`` is the regularized lower incomplete gamma function of shape ``1 / cv2`` at ``x / cv2``
    (scipy.special.gammainc, what scipy.stats.gamma's cdf evaluates, called directly: the frozen
    distribution's per-call overhead made this 100x slower).
    """
    if n <= 1 or cv2 <= 0.0:
        return 1.0
    from scipy import integrate, special  # deferred: ``import perfmodel`` stays light

    shape = 1.0 / cv2
    upper = float(special.gammainccinv(shape, 1e-12 / n)) * cv2  # beyond it 1 - F^n < n (1 - F) < 1e-12

    def survival_of_max(x: float) -> float:
        cdf = float(special.gammainc(shape, x / cv2))
        return 1.0 if cdf <= 0.0 else -math.expm1(n * math.log(cdf))

    value, _ = integrate.quad(survival_of_max, 0.0, upper, limit=200, epsabs=1e-10)
    return float(value)


def expected_max_load(instances, cv2):
    """Mean load of the busiest of ``n`` instances, relative to the average [-] (>= 1).

    The loads are iid Gamma with mean 1 and squared coefficient of variation
    ``cv2``; ``E[max] = integral_0^inf (1 - F(x)^n) dx``, evaluated by
    adaptive quadrature once per distinct ``(n, cv2)``.
    """
    n = in_range(instances, "instances", 1.0)
    c = in_range(cv2, "cv2", 0.0)
    n, c = broadcast(instances=n, cv2=c)
    pairs = np.stack([np.round(n).ravel(), c.ravel()], axis=1)
    uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
    values = np.array([_expected_max(int(a), float(b)) for a, b in uniq])
    return values[inverse.ravel()].reshape(n.shape)


def imbalance(instances, replicas, units, kind: str = "random"):
    """Busiest instance's load over the mean [-]: :func:`expected_max_load` of :func:`load_cv2`.

    ``units = inf`` (perfect balance, or a single instance) gives 1.
    """
    return expected_max_load(instances, load_cv2(instances, replicas, units, kind))


def forwarded_share(nodes, replicas, token_aware):
    """Share of requests whose first node holds no replica and forwards them [-].

    ``(1 - token_aware) x (1 - min(r, n) / n)``: a token-aware client
    (``token_aware = 1``) always reaches a replica; a round-robin one reaches
    each node equally often.
    """
    n = in_range(nodes, "nodes", 1.0)
    r = in_range(replicas, "replicas", 1.0)
    t = in_range(token_aware, "token_aware", 0.0, 1.0)
    n, r, t = broadcast(nodes=n, replicas=r, token_aware=t)
    return (1.0 - t) * (1.0 - np.minimum(r, n) / n)


def cross_zone_client_share(zones):
    """Share of requests whose coordinator is in another availability zone than the client [-].

    ``1 - 1/z``: nodes (and every key's replicas) spread evenly over ``z`` zones and the client
    in one of them, the node a request reaches -- a replica for a token-aware client, any node
    otherwise -- is in the client's zone with probability ``1/z`` (averaged over the keys: the
    client's zone holds ``r/z`` of each key's ``r`` replicas). 0 for one zone.
    """
    z = in_range(zones, "zones", 1.0)
    return 1.0 - 1.0 / z


def cross_zone_replica_share(zones, replicas, acks):
    """Share of requests that wait for a replica in another zone than their coordinator [-].

    A key's ``r`` replicas lie on distinct racks, a rack per zone, as evenly as the ``z`` zones
    allow: with ``r = q z + s`` (``0 <= s < z``), ``s`` zones hold ``q + 1`` of them and the
    others ``q`` (``z >= r``: one each in ``r`` zones). The coordinator is one of the replicas,
    drawn uniformly: with probability ``s (q + 1) / r`` its zone holds ``q`` other replicas,
    else ``q - 1``. A request waiting for ``k`` answers (its own and ``k - 1`` others) waits for
    one from another zone when ``k - 1`` exceeds those. RF 3 over 3 zones: every QUORUM write
    (``k = 2``), no ONE write. Assumptions: the coordinator is a replica (a token-aware client;
    a forwarded request's coordinator is in the zones' mix as well) and the ``k``-th answer is
    the ``k``-th nearest replica's (queueing does not reorder answers across zones).

    References: Apache Cassandra documentation, "Replication" (NetworkTopologyStrategy: replicas
    on distinct racks first) and "Snitch" (Ec2Snitch: a rack is an availability zone).
    """
    z = in_range(zones, "zones", 1.0)
    r = in_range(replicas, "replicas", 1.0)
    k = in_range(acks, "acks", 1.0)
    z, r, k = broadcast(zones=z, replicas=r, acks=k)
    z, r, k = np.round(z), np.round(r), np.round(k)
    q, s = np.floor(r / z), np.mod(r, z)
    big = s * (q + 1.0) / r  # the coordinator's zone holds q + 1 replicas
    others_big, others_small = q, np.maximum(q - 1.0, 0.0)
    need = k - 1.0
    return big * (need > others_big) + (1.0 - big) * (need > others_small)
