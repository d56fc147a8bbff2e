"""Sizing properties over random workloads (tests/unit/test_sizing.py checks fixed examples).

* more target throughput never needs fewer nodes;
* a looser p99 SLO never needs more nodes;
* RF 3 never needs fewer nodes than RF 2 for the same write load.

An infeasible candidate counts as needing infinitely many nodes.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.plan.sizing import size

PLATFORMS = ["x86-dl380-e5-2630v4", "power8-s821lc-10c"]
SYSTEMS = st.sampled_from(["scylla", "cassandra"])
SETTINGS = settings(max_examples=20, deadline=None)
#: read shares in whole percent: a subnormal share (e.g. 2e-313) overflows inside the solver (reported)
READ_FRACTIONS = st.integers(0, 100).map(lambda k: k / 100)


def workload(read_fraction, object_bytes, rf=3, consistency="QUORUM"):
    return perfmodel.Workload(
        operation="mixed",
        read_fraction=read_fraction,
        object_bytes=object_bytes,
        dataset_bytes=2e11,
        clients=1,
        replication_factor=rf,
        consistency=consistency,
    )


def needs(w, system, **kwargs) -> dict:
    out = size(w, system=system, platforms=PLATFORMS, max_nodes=64, interval=None, **kwargs)
    return {
        (p, t): (n if ok else math.inf)
        for p, t, n, ok in zip(out.platform, out.threads_per_core, out.nodes, out.feasible, strict=True)
    }


@SETTINGS
@given(
    system=SYSTEMS,
    read_fraction=READ_FRACTIONS,
    object_bytes=st.sampled_from([256, 1024, 4096]),
    target=st.floats(2e4, 1e6),
    factor=st.floats(1.05, 4.0),
    slo=st.floats(2.0, 200.0),
)
def test_more_target_throughput_never_needs_fewer_nodes(
    system, read_fraction, object_bytes, target, factor, slo
):
    w = workload(read_fraction, object_bytes)
    low = needs(w, system, target_ops_s=target, slo_p99_ms=slo)
    high = needs(w, system, target_ops_s=target * factor, slo_p99_ms=slo)
    for key in low:
        assert high[key] >= low[key], (key, low[key], high[key])


@SETTINGS
@given(
    system=SYSTEMS,
    read_fraction=READ_FRACTIONS,
    target=st.floats(2e4, 1e6),
    slo=st.floats(0.5, 50.0),
    factor=st.floats(1.1, 10.0),
)
def test_a_looser_slo_never_needs_more_nodes(system, read_fraction, target, slo, factor):
    w = workload(read_fraction, 1024)
    tight = needs(w, system, target_ops_s=target, slo_p99_ms=slo)
    loose = needs(w, system, target_ops_s=target, slo_p99_ms=slo * factor)
    for key in tight:
        assert loose[key] <= tight[key], (key, tight[key], loose[key])


@SETTINGS
@given(
    system=SYSTEMS,
    target=st.floats(2e4, 6e5),
    consistency=st.sampled_from(["ONE", "QUORUM", "ALL"]),
    slo=st.floats(5.0, 200.0),
)
def test_rf3_never_needs_fewer_nodes_than_rf2_for_the_same_writes(system, target, consistency, slo):
    w = workload(0.0, 1024, rf=2, consistency=consistency)
    rf2 = needs(w, system, target_ops_s=target, slo_p99_ms=slo)
    rf3 = needs(w, system, target_ops_s=target, slo_p99_ms=slo, replication_factor=3)
    for key in rf2:
        assert rf3[key] >= rf2[key], (key, rf2[key], rf3[key])
