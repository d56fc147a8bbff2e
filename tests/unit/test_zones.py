"""A cluster spread over availability zones (knob ``zones``): the crossing shares against
enumeration of the layout, the latency they add, and every bad input answered."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.inputs.catalog import load_platform
from perfmodel.inputs.workload import Workload
from perfmodel.mechanisms import placement
from perfmodel.model import chain

RTT = 1e-3  # a round trip between zones [s], for these tests only
# what a crossing adds: the round trip between zones less the one within a zone (the wire's)
D = RTT - 2 * load_platform("x86-aws-i4i-4xlarge").network_spec().latency_s


def _enumerated_replica_share(zones: int, replicas: int, acks: int) -> float:
    """Replica j in zone j mod z, every replica equally likely the coordinator: the share of
    coordinators whose zone holds fewer than ``acks`` replicas (themselves included)."""
    zone = [j % zones for j in range(replicas)]
    crossing = [sum(1 for other in zone if other == zone[c]) < acks for c in range(replicas)]
    return sum(crossing) / replicas


def _enumerated_client_share(zones: int, replicas: int) -> float:
    """The client in each zone alike, the coordinator each replica alike: the share apart."""
    zone = [j % zones for j in range(replicas)]
    apart = [zone[c] != client for client in range(zones) for c in range(replicas)]
    return sum(apart) / len(apart)


@pytest.mark.parametrize("zones", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("replicas", [1, 2, 3, 5, 6])
def test_crossing_shares_match_the_enumerated_layout(zones, replicas):
    assert placement.cross_zone_client_share(zones) == pytest.approx(
        _enumerated_client_share(zones, replicas)
    )
    for acks in range(1, replicas + 1):
        expected = _enumerated_replica_share(zones, replicas, acks)
        assert placement.cross_zone_replica_share(zones, replicas, acks) == pytest.approx(expected), acks


def test_rf3_over_three_zones():
    # every QUORUM and ALL write waits for another zone, no ONE write; two of three coordinators
    # are outside the client's zone
    assert placement.cross_zone_replica_share(3, 3, [1, 2, 3]).tolist() == [0.0, 1.0, 1.0]
    assert placement.cross_zone_replica_share(2, 3, 2) == pytest.approx(1 / 3)  # zones of 2 and 1
    assert placement.cross_zone_client_share(3) == pytest.approx(2 / 3)
    assert placement.cross_zone_client_share(1) == 0.0


def _aws(zone_rtt_s=RTT):
    return replace(load_platform("x86-aws-i4i-4xlarge"), zone_rtt_s=zone_rtt_s)


def _workload(consistency="QUORUM", **changes):
    fields = dict(
        operation="mixed",
        read_fraction=0.5,
        object_bytes=1000,
        dataset_bytes=50e9,
        arrival_rate=2e4,
        replication_factor=3,
        consistency=consistency,
    )
    fields.update(changes)
    return Workload(**fields)


def _tails(zones, consistency="QUORUM", **changes):
    m = chain.build(_aws(), _workload(consistency, **changes), nodes=6, system="scylla", zones=zones)
    sol = chain.solve(m)
    return m, chain.tails(m, sol)


def test_the_mean_latency_adds_exactly_the_crossings():
    _, one = _tails(1)
    _, three = _tails(3)
    # reads: 2/3 of them one round trip between zones; QUORUM writes: that and one more, always
    assert three.mean_read[0] - one.mean_read[0] == pytest.approx(2 / 3 * D, rel=1e-3)
    assert three.mean_write[0] - one.mean_write[0] == pytest.approx((2 / 3 + 1) * D, rel=1e-3)
    _, one_ack_one_zone = _tails(1, "ONE")
    _, one_ack = _tails(3, "ONE")
    assert one_ack.mean_write[0] - one_ack_one_zone.mean_write[0] == pytest.approx(2 / 3 * D, rel=1e-3)


def test_percentiles_are_the_mixture_not_the_mean():
    # two reads in three cross: the median and the p99 read pay a whole round trip, not 2/3 of one
    _, one = _tails(1)
    _, three = _tails(3)
    p50_r, p50_w = three.quantiles["p50"][0][0], three.quantiles["p50"][1][0]
    assert p50_r - one.quantiles["p50"][0][0] == pytest.approx(D, rel=0.02)
    assert p50_w - one.quantiles["p50"][1][0] == pytest.approx(2 * D, rel=0.02)
    # one zone: nothing changes
    m1, t1 = _tails(1)
    assert np.all(np.asarray(m1.paths.zone_rtt) == 0.0)
    assert t1.quantiles["p99"][0][0] < RTT / 4


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.sampled_from(["ONE", "QUORUM", "ALL"]), st.floats(2e-5, 5e-3))
def test_latency_never_falls_with_more_zones(zones, consistency, rtt):
    plat = _aws(rtt)
    lat = []
    for z in (1, zones):
        m = chain.build(plat, _workload(consistency), nodes=6, system="scylla", zones=z)
        t = chain.tails(m, chain.solve(m))
        lat.append((t.mean_read[0], t.mean_write[0], t.quantiles["p99"][2][0]))
    assert all(b >= a * (1 - 1e-9) for a, b in zip(lat[0], lat[1], strict=True))


def test_a_system_without_round_trips_refuses_zones():
    """Zones are a topology of networked nodes: a system no client reaches over the network (fio,
    ``remote: false``) crosses none, so the knob is refused there (settings.check_applies)."""
    w = Workload(operation="read", read_fraction=1.0, object_bytes=4096, dataset_bytes=1e10, arrival_rate=1e3)
    with pytest.raises(ValueError, match="^zones: does not apply to system fio: it needs a system spec with"):
        chain.build(_aws(), w, nodes=3, system="fio", zones=3)


def test_bad_zones_are_answered():
    with pytest.raises(ValueError, match="zones: 4 zones need as many nodes"):
        chain.build(_aws(), _workload(), nodes=3, system="scylla", zones=4)
    with pytest.raises(ValueError, match="no round trip between zones"):
        chain.build("x86-aws-i4i-4xlarge" if np.isnan(load_platform("x86-aws-i4i-4xlarge").zone_rtt_s)
                    else _aws(float("nan")), _workload(), nodes=6, system="scylla", zones=3)  # fmt: skip
    with pytest.raises(ValueError, match="zones"):
        chain.build(_aws(), _workload(), nodes=6, system="scylla", zones=0)
    with pytest.raises(ValueError, match="zones"):
        placement.cross_zone_replica_share(0, 3, 2)
    with pytest.raises(ValueError, match="not above the round trip within one"):
        chain.build(_aws(5e-6), _workload(), nodes=6, system="scylla", zones=3)
    # a region's own round trip (knob) replaces the platform's
    m = chain.build(_aws(), _workload(), nodes=6, system="scylla", zones=3, zone_rtt_s=2e-3)
    assert float(np.asarray(m.paths.zone_rtt)[0]) == pytest.approx(2e-3 - (RTT - D))


def test_sim_config_rejects_bad_zones():
    from perfmodel.sim.config import config_from_model

    m = chain.build(_aws(), _workload(), nodes=6, system="scylla", zones=3)
    cfg = config_from_model(m)
    assert cfg.zones == 3 and cfg.zone_rtt == pytest.approx(D) and cfg.zoned and not cfg.fast_path_applies
    # the fixed demands keep the rest: the layout is drawn, the analytic mean is taken out
    fixed = cfg.stations.index("fixed")
    assert cfg.d_read[fixed] == pytest.approx(m.net.d_read[0, fixed] - 2 / 3 * D)
    for bad in (dict(zones=0), dict(zones=2.5), dict(zone_rtt=-1.0), dict(zone_rtt=float("inf"))):
        with pytest.raises(ValueError, match="zone"):
            replace(cfg, **bad)


def test_quorum_reads_wait_for_another_zone_too():
    # RF 3 over 3 zones: a QUORUM read's digest comes from another zone, always; at ONE never. Over
    # one zone QUORUM adds only the round trip between nodes (the wire's)
    _, one = _tails(1, read_consistency="ONE")
    _, one_q = _tails(1, read_consistency="QUORUM")
    _, three = _tails(3, read_consistency="ONE")
    _, three_q = _tails(3, read_consistency="QUORUM")
    hop = one_q.mean_read[0] - one.mean_read[0]
    assert 0 < hop < D / 10
    assert three.mean_read[0] - one.mean_read[0] == pytest.approx(2 / 3 * D, rel=1e-3)
    assert three_q.mean_read[0] - one_q.mean_read[0] == pytest.approx((2 / 3 + 1) * D, rel=1e-3)
    # the median QUORUM read pays two crossings (a third of them, coordinated in the client's zone, one)
    assert three_q.quantiles["p50"][0][0] - one_q.quantiles["p50"][0][0] == pytest.approx(2 * D, rel=0.02)
    with pytest.raises(ValueError, match="read_consistency"):
        _workload(read_consistency="FOUR")


def test_each_statement_of_an_operation_crosses():
    # statements_per_op round trips to a coordinator in another zone: each crosses
    m1 = chain.build(_aws(), _workload("ONE"), nodes=6, system="scylla", zones=3)
    m3 = chain.build(_aws(), _workload("ONE"), nodes=6, system="scylla", zones=3, statements_per_op=3)
    assert float(m3.paths.zone_read_mean[0]) == pytest.approx(3 * 2 / 3 * D)
    assert float(m1.paths.zone_read_mean[0]) == pytest.approx(2 / 3 * D)


@pytest.mark.parametrize("zones, consistency", [(2, "QUORUM"), (3, "QUORUM"), (3, "ONE"), (5, "ALL")])
def test_the_mixtures_mean_is_the_fixed_demands(zones, consistency):
    m = chain.build(_aws(), _workload(consistency, read_consistency=consistency), nodes=6, system="scylla",
                    zones=zones, statements_per_op=2)  # fmt: skip
    reads, writes = chain.zone_mixtures(m.paths)
    for parts, mean in ((reads, m.paths.zone_read_mean), (writes, m.paths.zone_write_mean)):
        assert sum(float(np.asarray(p)[0]) for p, _ in parts) == pytest.approx(1.0)
        assert sum(
            float(np.asarray(p)[0]) * float(np.asarray(e).ravel()[0]) for p, e in parts
        ) == pytest.approx(float(np.asarray(mean)[0]))


def test_client_and_replica_crossings_are_independent_not_correlated():
    # z = 3, QUORUM writes: a third of them reach a coordinator in the client's zone and cross once,
    # the rest twice -- a quarter of the way up the distribution is one crossing above the body
    _, one = _tails(1)
    m3, three = _tails(3)
    _, writes = chain.zone_mixtures(m3.paths)
    weights = [float(np.asarray(p)[0]) for p, _ in writes]
    assert weights == pytest.approx([0.0, 1 / 3, 0.0, 2 / 3])
    assert three.quantiles["p50"][1][0] - one.quantiles["p50"][1][0] == pytest.approx(2 * D, rel=0.02)
