"""200 random valid sizing requests: ``size`` always answers, monotonically, with consistent ranges.

For each request (system, mix, object size, data set, RF and consistency, target, SLO, failure
tolerance, utilisation cap): no exception; every infeasible row has a reason; nodes_lower <= nodes
<= nodes_upper where a range is known; a larger target never needs fewer nodes and a looser SLO
never more (an infeasible candidate counts as needing infinitely many).
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.plan.sizing import size

PLATFORMS = ["x86-dl380-e5-2630v4", "power8-s821lc-10c"]


@st.composite
def requests(draw):
    rf = draw(st.integers(1, 3))
    consistency = draw(st.sampled_from(["ONE", "QUORUM", "ALL"]))
    w = perfmodel.Workload(
        operation="mixed",
        read_fraction=draw(st.integers(0, 100)) / 100,
        object_bytes=draw(st.sampled_from([128, 1024, 8192])),
        dataset_bytes=draw(st.floats(1e9, 5e13)),
        clients=1,
        replication_factor=rf,
        consistency=consistency,
    )
    return {
        "workload": w,
        "system": draw(st.sampled_from(["scylla", "cassandra", "rocksdb", "dm8", "ceph"])),
        "target_ops_s": draw(st.floats(1e3, 3e6)),
        "slo_p99_ms": draw(st.floats(0.05, 500.0)),
        "failure_tolerance": draw(st.integers(0, 2)),
        "max_utilization": draw(st.floats(0.3, 0.95)),
        "factor": draw(st.floats(1.1, 3.0)),
    }


def needs(out):
    return {(p, t): (n if ok else math.inf) for p, t, n, ok in
            zip(out.platform, out.threads_per_core, out.nodes, out.feasible, strict=True)}  # fmt: skip


# twice the loaded profile's examples: 200 in the full suite, 20 in make test-fast
@settings(max_examples=2 * settings.default.max_examples, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(requests())
def test_size_always_answers_monotonically_with_consistent_ranges(req):
    factor = req.pop("factor")
    common = dict(platforms=PLATFORMS, max_nodes=48, **req)
    out = size(**common)
    assert len(out) == 6  # every candidate answers
    assert (out.reason.str.len() > 0).eq(~out.feasible).all()
    feasible = out[out.feasible]
    assert (feasible.nodes >= 1).all()
    known = feasible[feasible.nodes_lower.notna()]
    assert (known.nodes_lower <= known.nodes).all()
    upper = known[known.nodes_upper.notna()]
    assert (upper.nodes <= upper.nodes_upper).all()
    base = needs(out)
    more = needs(size(**{**common, "target_ops_s": req["target_ops_s"] * factor, "interval": None}))
    looser = needs(size(**{**common, "slo_p99_ms": req["slo_p99_ms"] * factor, "interval": None}))
    for key, n in base.items():
        assert more[key] >= n, (key, n, more[key])
        assert looser[key] <= n, (key, n, looser[key])
