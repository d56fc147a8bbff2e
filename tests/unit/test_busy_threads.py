"""SMT sharing acts on the threads busy at once, not on those configured (issue 17, gap
cpu-busy-threads): a lone request on a Hyper-Threaded core runs at the core's full rate, a
single-threaded server owns its core, and SMT sharing sets in only once the busy threads outnumber
the cores -- checked in closed form on each thread's clock and on throughput."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.inputs.catalog import load_platform
from perfmodel.inputs.params import load_parameters
from perfmodel.inputs.workload import Workload
from perfmodel.mechanisms import scaling
from perfmodel.model import chain

# 10 cores, 2 threads per core; at one clock (no turbo), so that only SMT sharing moves a thread's
# rate here (the clock's fall with busy cores is tests/unit/test_core_clock.py's)
HT = dataclasses.replace(load_platform("x86-dl380-e5-2630v4"), turbo_hz=math.nan)
PARAMS = load_parameters("default")
ALPHA = PARAMS.lookup("smt_alpha", "x86")


def _model(clients=1, system="mysql", arrival_rate=None, **knobs):
    common = dict(
        operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=1e8, replication_factor=1
    )
    w = Workload(arrival_rate=arrival_rate, **common) if arrival_rate else Workload(clients=clients, **common)
    return chain.build(HT, w, nodes=1, system=system, params=PARAMS, **knobs)


def test_threads_sharing_core_closed_form():
    assert scaling.threads_sharing_core(1, 10, 2) == 1.0  # a core of its own
    assert scaling.threads_sharing_core(10, 10, 2) == 1.0
    assert scaling.threads_sharing_core(15, 10, 2) == pytest.approx(1.5)  # half the cores pair up
    assert scaling.threads_sharing_core(40, 10, 2) == 2.0  # never beyond the SMT mode
    assert scaling.threads_sharing_core(np.inf, 10, 8) == 8.0
    with pytest.raises(ValueError, match="^busy_threads"):
        scaling.threads_sharing_core(0.5, 10, 2)


def test_a_lone_request_runs_at_the_full_core_rate():
    ht = _model(clients=1, threads_per_core=2)
    st_ = _model(clients=1, threads_per_core=1)
    np.testing.assert_allclose(ht.cpu.thread_hz, st_.cpu.thread_hz, rtol=1e-12)
    assert ht.cpu.threads[0] == 20  # the threads exist; they are not busy


def test_sharing_sets_in_past_the_cores_and_reaches_the_smt_yield():
    one = _model(clients=1, threads_per_core=1).cpu.thread_hz
    full = _model(clients=20, threads_per_core=2).cpu.thread_hz
    np.testing.assert_allclose(full / one, scaling.smt_yield(2, ALPHA) / 2, rtol=1e-12)
    half = _model(clients=15, threads_per_core=2).cpu.thread_hz  # 5 of 10 cores run two threads
    np.testing.assert_allclose(half / one, scaling.smt_yield(1.5, ALPHA) / 1.5, rtol=1e-12)


def test_a_single_threaded_server_owns_its_core():
    """Redis runs commands on one thread: 50 clients keep one thread busy, and it does not share
    its core with an SMT sibling."""
    ht = _model(clients=50, system="redis", threads_per_core=2)
    st_ = _model(clients=50, system="redis", threads_per_core=1)
    assert ht.cpu.threads[0] == 1
    np.testing.assert_allclose(ht.cpu.thread_hz, st_.cpu.thread_hz, rtol=1e-12)


def test_open_arrivals_keep_every_thread_busy():
    ht = _model(arrival_rate=1e3, threads_per_core=2).cpu.thread_hz
    st_ = _model(arrival_rate=1e3, threads_per_core=1).cpu.thread_hz
    np.testing.assert_allclose(ht / st_, scaling.smt_yield(2, ALPHA) / 2, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=39))
def test_throughput_never_falls_as_clients_are_added(clients):
    """Slower threads past the cores never cost throughput: more busy threads always deliver
    more in total (y(s) grows with s), so a closed loop's throughput is monotone in clients."""
    x = [chain.solve(_model(clients=n, threads_per_core=2)).throughput[0] for n in (clients, clients + 1)]
    assert x[1] >= x[0] * (1 - 1e-9)


def test_busy_threads_count_each_replica_and_share_the_nodes():
    """A write works on each of its RF replicas; the clients spread over the nodes: 3 nodes, RF 3,
    writes only, 10 clients keep 10 threads busy per node (below 10 cores: no sharing), 20 clients
    keep 20 (every thread paired)."""
    w = dict(operation="write", read_fraction=0.0, object_bytes=200, dataset_bytes=1e8, replication_factor=3)
    one = chain.build(
        HT, Workload(clients=10, **w), nodes=3, system="mysql", params=PARAMS, threads_per_core=2
    )
    two = chain.build(
        HT, Workload(clients=20, **w), nodes=3, system="mysql", params=PARAMS, threads_per_core=2
    )
    alone = _model(clients=1, threads_per_core=1).cpu.thread_hz
    np.testing.assert_allclose(one.cpu.thread_hz, alone, rtol=1e-12)
    np.testing.assert_allclose(two.cpu.thread_hz / alone, scaling.smt_yield(2, ALPHA) / 2, rtol=1e-12)
