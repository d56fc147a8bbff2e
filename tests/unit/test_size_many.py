"""size_many: many sizings searched together answer exactly as one size call each."""

from __future__ import annotations

import pandas as pd
import pytest

import perfmodel
from perfmodel.plan.sizing import size, size_many

W = perfmodel.Workload(read_fraction=0.8, object_bytes=1024, replication_factor=3, consistency="QUORUM",
                       arrival_rate=1.0)  # fmt: skip
PLATFORMS = ["x86-dl380-e5-2630v4", "power8-s821lc-10c", "kunpeng-r722"]
#: requests that differ in every field a request may set, feasible and not (a 0.05 ms p99, 1 PB of data)
REQUESTS = [
    {"target_ops_s": 2e5, "slo_p99_ms": 20.0, "dataset_gib": 500.0},
    {"target_ops_s": 3e6, "slo_p99_ms": 5.0, "dataset_gib": 100.0, "read_fraction": 0.95},
    {"target_ops_s": 8e5, "slo_p99_ms": 1.0, "dataset_gib": 2000.0, "object_bytes": 4096},
    {"target_ops_s": 1e5, "slo_p99_ms": 0.05, "dataset_gib": 10.0},
    {"target_ops_s": 1e6, "slo_p99_ms": 50.0, "dataset_gib": 1e6},
]
COLUMNS = ["platform", "threads_per_core", "nodes", "feasible", "binding", "reason", "instances_per_server",
           "nodes_for_throughput", "nodes_for_slo", "nodes_for_capacity", "latency_p99_ms",
           "max_utilization", "tail_regime", "cost_usd_per_month"]  # fmt: skip


def one_by_one(system, requests, **common):
    out = []
    for r in requests:
        base = {
            f: getattr(W, f) for f in ("read_fraction", "object_bytes", "replication_factor", "consistency")
        }
        mix = {k: r[k] for k in ("read_fraction", "object_bytes") if k in r}
        w = perfmodel.Workload(**{**base, "arrival_rate": 1.0, **mix})  # built afresh: sizes derived anew
        rest = {k: v for k, v in r.items() if k not in ("read_fraction", "object_bytes")}
        out.append(size(w, system=system, **rest, **common))
    return out


@pytest.mark.parametrize("system", ["scylla", "redis", "postgresql"])
def test_each_table_is_the_one_size_returns(system):
    common = dict(platforms=PLATFORMS, interval=None, prices="shipped")
    alone = one_by_one(system, REQUESTS, **common)
    together = size_many(W, REQUESTS, system=system, **common)
    assert len(together) == len(REQUESTS)
    assert any(t.feasible.any() for t in together) and any((~t.feasible).any() for t in together)
    for a, b in zip(alone, together, strict=True):
        cols = [c for c in COLUMNS if c in a]
        pd.testing.assert_frame_equal(a[cols], b[cols], check_exact=False, rtol=1e-9)
        assert a.attrs["target_ops_s"] == b.attrs["target_ops_s"]
        assert a.attrs["slo_p99_ms"] == b.attrs["slo_p99_ms"]


def test_an_smt_knob_and_a_band_apply_to_every_request():
    common = dict(platforms=PLATFORMS, interval=0.5, threads_per_core=2)
    alone = one_by_one("scylla", REQUESTS[:2], **common)
    together = size_many(W, REQUESTS[:2], system="scylla", **common)
    for a, b in zip(alone, together, strict=True):
        assert set(b.threads_per_core) == {2.0}
        cols = ["platform", "nodes", "nodes_lower", "nodes_upper", "reason"]
        pd.testing.assert_frame_equal(a[cols], b[cols])


def test_requests_share_their_searches_predict_calls(monkeypatch):
    """The point of size_many: its predict calls are those of one search, not one search's per request."""
    from perfmodel.plan import sizing

    calls = []
    real = sizing.predict

    def counting(*args, **kwargs):
        calls.append(len(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(sizing, "predict", counting)
    size_many(W, REQUESTS[:1], system="scylla", platforms=PLATFORMS, interval=None)
    single = len(calls)
    calls.clear()
    size_many(W, REQUESTS * 4, system="scylla", platforms=PLATFORMS, interval=None)
    # the rounds of the deepest search (galloping and bisecting up to max_nodes 128: at most 2 x 7, the
    # prefetch, an answer's check), not 20 searches' worth of calls
    assert len(calls) <= 2 * 7 + 3 and len(calls) < 20 * single / 3, (single, len(calls))
    assert max(calls) > 20 * len(PLATFORMS)  # rows of many requests in one call


@pytest.mark.parametrize(
    ("requests", "match"),
    [
        (
            [{"target_ops_s": 1e5, "slo_p99_ms": 1.0, "platforms": ["kunpeng-r722"]}],
            "a request sets 'platforms'",
        ),
        ([{"target_ops_s": 1e5}], "slo_p99_ms"),
        ([{"target_ops_s": -1.0, "slo_p99_ms": 1.0}], "target_ops_s"),
    ],
)
def test_a_bad_request_is_refused_naming_it(requests, match):
    with pytest.raises(ValueError, match=match):
        size_many(W, requests, system="scylla", platforms=PLATFORMS, interval=None)


def test_no_requests_no_tables():
    assert size_many(W, [], system="scylla", slo_p99_ms=1.0, platforms=PLATFORMS) == []
