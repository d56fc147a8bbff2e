"""Shard-per-core CPU scaling: SMT yield, USL, NUMA and thread caps."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel.mechanisms import scaling


def test_smt_yield_limits_and_values():
    assert scaling.smt_yield(1, 0.3) == 1.0
    assert scaling.smt_yield(8, 0.0) == 8.0  # no contention: linear
    assert scaling.smt_yield(8, 1.0) == 1.0  # full contention: nothing gained
    # y(2) = 2 / (1 + alpha)
    assert scaling.smt_yield(2, 0.6) == pytest.approx(1.25, rel=1e-15)
    # y(8) = 8 / (1 + 7 alpha) and saturation at 1/alpha
    assert scaling.smt_yield(8, 1 / 3) == pytest.approx(2.4, rel=1e-15)
    assert scaling.smt_yield(1e9, 0.25) == pytest.approx(4.0, rel=1e-8)


def test_smt_yield_broadcasts_a_grid():
    t = np.array([1, 2, 4, 8])[:, None]
    a = np.array([0.1, 0.5])[None, :]
    y = scaling.smt_yield(t, a)
    assert y.shape == (4, 2)
    assert np.all(np.diff(y, axis=0) > 0)  # more threads, more throughput (alpha < 1)


def test_shard_rate_splits_the_core():
    # 8 shards on a core with yield 2.4 each get 2.4/8 of the single-thread rate
    assert scaling.shard_service_rate(1000.0, 8, 1 / 3) == pytest.approx(300.0)
    # and together they deliver the core's SMT throughput
    assert 8 * scaling.shard_service_rate(1000.0, 8, 1 / 3) == pytest.approx(2400.0)


def test_usl_efficiency_matches_usl_throughput():
    from perfmodel.queueing import usl_throughput

    n = np.arange(1, 100)
    eff = scaling.usl_efficiency(n, 0.02, 1e-4)
    assert np.allclose(n * eff, usl_throughput(n, 1.0, 0.02, 1e-4), rtol=1e-12)
    assert scaling.usl_efficiency(1, 0.5, 0.5) == 1.0


def test_numa_slowdown_cases():
    # bound to one node: local only
    assert scaling.numa_slowdown(1, 2, 0.3, 1.0) == 1.0
    # two nodes of one socket: half the accesses pay the same-socket penalty
    assert scaling.numa_slowdown(2, 2, 0.3, 1.0) == pytest.approx(1.15)
    # four nodes on two sockets: 1/4 local, 1/4 same socket, 2/4 cross socket
    assert scaling.numa_slowdown(4, 2, 0.3, 1.0) == pytest.approx(1 + 0.25 * 0.3 + 0.5 * 1.0)


def test_nodes_spanned_bound_vs_unbound():
    assert scaling.numa_nodes_spanned(48, 24, True, 4) == 2
    assert scaling.numa_nodes_spanned(64, 24, False, 4) == 4
    assert scaling.numa_nodes_spanned(200, 24, True, 4) == 4  # cannot pack beyond the machine


def test_thread_cap_and_48_bound_beats_96_unbound():
    """Seed 002: DM8 caps worker threads at 64, so 96 unbound cores lose to 48 bound ones
    once cross-socket memory access costs enough."""
    assert scaling.usable_threads(96, 1, 64) == 64
    assert scaling.usable_threads(48, 1, 64) == 48
    assert scaling.usable_threads(10, 8, np.inf) == 80
    rate = 1000.0
    same, cross = 0.2, 1.0  # remote access costs: +20% same socket, +100% cross socket
    bound = scaling.numa_slowdown(scaling.numa_nodes_spanned(48, 24, True, 4), 2, same, cross)
    unbound = scaling.numa_slowdown(scaling.numa_nodes_spanned(64, 24, False, 4), 2, same, cross)
    cap48, _, _ = scaling.cpu_capacity(48, 1, 64, rate, 0.0, slowdown=bound)
    cap96, threads96, _ = scaling.cpu_capacity(96, 1, 64, rate, 0.0, slowdown=unbound)
    assert threads96 == 64
    assert cap48 > cap96
    # without the NUMA penalty the extra threads would win: the mechanism, not a constant
    cap96_flat, _, _ = scaling.cpu_capacity(96, 1, 64, rate, 0.0, slowdown=1.0)
    assert cap96_flat > cap48


@pytest.mark.parametrize(
    ("func", "kwargs", "name"),
    [
        (scaling.smt_yield, {"threads_per_core": 0, "alpha": 0.5}, "threads_per_core"),
        (scaling.smt_yield, {"threads_per_core": 2, "alpha": 1.5}, "alpha"),
        (scaling.smt_yield, {"threads_per_core": np.nan, "alpha": 0.5}, "threads_per_core"),
        (scaling.shard_service_rate, {"core_rate": -1, "threads_per_core": 2, "alpha": 0.5}, "core_rate"),
        (scaling.usl_efficiency, {"n": 4, "sigma": -0.1, "kappa": 0}, "sigma"),
        (scaling.usable_threads, {"cores": 0, "threads_per_core": 1, "thread_cap": 64}, "cores"),
    ],
)
def test_bad_input_names_the_argument(func, kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        func(**kwargs)


def test_grid_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match="shapes do not broadcast"):
        scaling.smt_yield(np.ones(3), np.full(4, 0.5))
