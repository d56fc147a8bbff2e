"""Properties of the simulator on its own records: Little's law, a full closed loop, capacity, determinism."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.sim import SimConfig, replication_metrics, replication_rng, run_fast, run_simpy


def config(servers, utilization, shards, closed, population, think):
    service = 1e-3
    rate = utilization * servers * shards / service
    return SimConfig(
        d_read=(service, 2e-4),
        d_write=(0.5 * service, 0.0),
        servers=(float(servers), np.inf),
        mult=(shards, 1),
        scv=(1.0, 0.0),
        read_fraction=0.6,
        closed=closed,
        population=population,
        think_time=think,
        arrival_rate=rate,
        stations=("cpu", "fixed"),
        device_station=0,
    )


def number_in_system_area(start, end, lo, hi):
    """Integral of the number of requests in system over [lo, hi] [request x s]."""
    return float(np.clip(np.minimum(end, hi) - np.maximum(start, lo), 0.0, None).sum())


CONFIGS = st.tuples(
    st.integers(1, 4),  # servers
    st.floats(0.1, 0.9),  # utilisation (open)
    st.integers(1, 3),  # instances
    st.booleans(),  # closed
    st.integers(1, 12),  # population
    st.sampled_from([0.0, 1e-3]),  # think time [s]
    st.integers(0, 2**31),  # seed
)


@settings(max_examples=25, deadline=None)
@given(CONFIGS)
def test_littles_law_on_the_records(args):
    """L = X W over the window, up to the requests straddling its two ends (bounded from the records)."""
    servers, util, shards, closed, population, think, seed = args
    cfg = config(servers, util, shards, closed, population, think)
    rec = run_simpy(cfg, 3_000, 300, replication_rng(seed, 0))
    t_w, t_e = rec.window
    span = t_e - t_w
    start, end = rec.start, rec.end
    area = number_in_system_area(start, end, t_w, t_e)
    m = replication_metrics(rec, cfg)
    x, w = m["throughput_ops_s"], m["latency_mean_ms"] / 1e3
    # requests in the system at either end of the window, each counted at most its response time
    at_ends = ((start <= t_w) & (end > t_w)) | ((start <= t_e) & (end > t_e))
    slack = rec.response[at_ends].sum() + w  # + one request's worth for the n - 1 vs n gaps
    assert abs(area - x * w * span) <= slack + 1e-12 * area
    if closed and think == 0:  # every client always has exactly one request outstanding
        assert area / span <= population * (1 + 1e-9)
        assert abs(x * w - population) <= slack / span + 1e-9


@settings(max_examples=15, deadline=None)
@given(CONFIGS)
def test_utilization_never_exceeds_one_and_same_seed_same_records(args):
    servers, util, shards, closed, population, think, seed = args
    cfg = config(servers, util, shards, closed, population, think)
    a = run_simpy(cfg, 1_000, 100, replication_rng(seed, 1))
    b = run_simpy(cfg, 1_000, 100, replication_rng(seed, 1))
    assert np.array_equal(a.end, b.end) and np.array_equal(a.operation, b.operation)
    m = replication_metrics(a, cfg)
    assert 0.0 <= m["util_cpu"] <= 1.0 + 1e-9
    assert np.all(a.response > 0) and np.all(a.waits[0] >= 0)
    if not closed:
        f = run_fast(cfg, 1_000, 100, replication_rng(seed, 1))
        assert np.array_equal(f.end, run_fast(cfg, 1_000, 100, replication_rng(seed, 1)).end)
        assert np.all(f.end - f.start >= f.waits[0])
