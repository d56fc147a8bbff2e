"""A cluster over availability zones: ``predict``'s crossing shares and mixture tails against the
simulator, which draws each request's client zone, coordinator and replica zones from the
layout (replica j in zone j mod z) and never sees the analytic shares."""

from dataclasses import replace

import pytest

from perfmodel.inputs.catalog import load_platform
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain
from perfmodel.sim.config import config_from_model
from perfmodel.sim.run import simulate_config

pytestmark = pytest.mark.slow

RTT = 1e-3


def _pair(zones, consistency, **changes):
    plat = replace(load_platform("x86-aws-i4i-4xlarge"), zone_rtt_s=RTT)
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
    m = chain.build(plat, Workload(**fields), nodes=6, system="scylla", zones=zones)
    t = chain.tails(m, chain.solve(m))
    sim = simulate_config(config_from_model(m), requests=40_000, replications=2, seed=5, keep_records=False,
                          workers=1).summary.iloc[0]  # fmt: skip
    return t, sim


@pytest.mark.parametrize(
    "zones, consistency, levels",
    [
        (3, "QUORUM", ("p50", "p99")),  # 2/3 of the reads cross once; every write twice or once
        (3, "ONE", ("p50", "p99")),
        (2, "QUORUM", ("p99",)),  # half the reads cross: the median sits on the jump
        (2, "ALL", ("p95", "p99")),
    ],
)
def test_means_and_tails_agree_with_the_drawn_layout(zones, consistency, levels):
    t, sim = _pair(zones, consistency)
    assert t.mean_read[0] * 1e3 == pytest.approx(sim["read_latency_mean_ms"], rel=0.02)
    assert t.mean_write[0] * 1e3 == pytest.approx(sim["write_latency_mean_ms"], rel=0.02)
    for level in levels:
        assert t.quantiles[level][0][0] * 1e3 == pytest.approx(sim[f"read_latency_{level}_ms"], rel=0.05), (
            level
        )
        assert t.quantiles[level][1][0] * 1e3 == pytest.approx(sim[f"write_latency_{level}_ms"], rel=0.05), (
            level
        )


def test_a_loaded_cluster_over_zones_agrees_too():
    # the crossings are fixed delays: queueing at the nodes comes on top, in both
    t, sim = _pair(3, "QUORUM", arrival_rate=4e5)
    assert t.mean_read[0] * 1e3 == pytest.approx(sim["read_latency_mean_ms"], rel=0.05)
    assert t.mean_write[0] * 1e3 == pytest.approx(sim["write_latency_mean_ms"], rel=0.05)
    assert t.quantiles["p99"][2][0] * 1e3 == pytest.approx(sim["latency_p99_ms"], rel=0.08)


@pytest.mark.parametrize("zones", [2, 3])
def test_quorum_reads_against_the_drawn_layout(zones):
    # the simulator draws the coordinator and counts the replicas beside it; the model uses the share
    t, sim = _pair(zones, "QUORUM", read_consistency="QUORUM")
    assert t.mean_read[0] * 1e3 == pytest.approx(sim["read_latency_mean_ms"], rel=0.02)
    assert t.quantiles["p99"][0][0] * 1e3 == pytest.approx(sim["read_latency_p99_ms"], rel=0.05)
    assert t.quantiles["p95"][0][0] * 1e3 == pytest.approx(sim["read_latency_p95_ms"], rel=0.05)
