"""An in-memory store's commands wait for DRAM (``chain.dram_stall``): ``dram_misses_per_op`` dependent
last-level-cache misses of ``dram_latency_s`` each, scaled by the share of accesses that miss the cache.
Time, not cycles: a faster core shortens the cycles of a command, not its stalls. Checked against the
closed form, on the demands, in the serial shares, and for monotonicity."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.inputs.workload import Workload
from perfmodel.mechanisms import scaling
from perfmodel.model import chain

PLATFORM = "arm-graviton4-c8g-8xlarge"
L3_PLATFORM = "kunpeng-taishan200-2280-7260"  # l3_mib in the catalog
BIG, SMALL = 1e11, 1e5  # data sets far beyond and far within the node's last-level cache [B]


def _build(
    system, dataset_bytes=BIG, read_fraction=1.0, iodepth=1, params="default", platform=PLATFORM, **knobs
):
    op = {1.0: "read", 0.0: "write"}.get(read_fraction, "mixed")
    w = Workload(operation=op, read_fraction=read_fraction, object_bytes=64, dataset_bytes=dataset_bytes,
                 clients=64, iodepth=iodepth, replication_factor=1)  # fmt: skip
    return chain.build(platform, w, system=system, params=params, **knobs)


@pytest.mark.parametrize("system", ["redis", "memcached"])
def test_the_stall_is_misses_times_latency_times_the_miss_share(system):
    p = perfmodel.load_parameters("default")
    m = _build(system)
    share = chain.llc_miss_share(m.inputs)[0]
    assert share == 1.0  # the catalog has no L3 size for this VM: every access counts as a miss
    expected = p[f"dram_misses_per_op[{system}]"] * p["dram_latency_s"] * share
    assert m.cpu.dram_stall[0] == pytest.approx(expected, rel=1e-12)
    assert m.cpu.dram_stall[0] > 0


def test_a_data_set_the_cache_holds_does_not_stall():
    """A TaiShan 200 with 128 MiB of L3 over 4 NUMA nodes: 100 kB of keys stay in it, 100 GB do not.
    (A catalog entry without an L3 size takes every access to miss: chain.llc_miss_share.)"""
    small, big = (
        _build("redis", dataset_bytes=d, platform=L3_PLATFORM).cpu.dram_stall[0] for d in (SMALL, BIG)
    )
    assert small < 0.01 * big and big > 0


def test_systems_without_counted_misses_do_not_stall():
    m = chain.build("x86-xeon-8380-2s", Workload(operation="read", object_bytes=1000, dataset_bytes=BIG,
                    clients=8), system="mysql", params="default")  # fmt: skip
    assert m.cpu.dram_stall[0] == 0.0


def test_the_stall_is_time_on_the_cpu_demand_not_cycles():
    """The demand is cycles / thread_hz + the stall: the stall part does not scale with the clock."""
    p = perfmodel.load_parameters("default")
    base = _build("redis")
    none = _build("redis", params=p.with_values(**{"dram_misses_per_op[redis]": 0.0}))
    stall = base.cpu.dram_stall[0]
    # with one thread (Redis's commands run serially) the two share every other cost and clock
    # except through the serial share, which the stall enters; undo the clocks to compare
    assert base.cpu.usl_efficiency[0] == 1.0  # one thread: no contention to slow the stall
    cycles_base = (base.demands.cpu_read[0] - stall) * base.cpu.thread_hz[0]
    cycles_none = none.demands.cpu_read[0] * none.cpu.thread_hz[0]
    assert cycles_base == pytest.approx(cycles_none, rel=1e-9)
    # twice the latency, twice the stall, the cycles untouched
    slow = _build("redis", params=p.with_values(dram_latency_s=2 * p["dram_latency_s"]))
    assert slow.cpu.dram_stall[0] == pytest.approx(2 * stall, rel=1e-12)
    cycles_slow = (slow.demands.cpu_read[0] - 2 * stall) * slow.cpu.thread_hz[0]
    assert cycles_slow == pytest.approx(cycles_none, rel=1e-9)  # the cycles untouched
    # a faster core (ghz_factor) shortens the cycles, not the stall
    fast = _build("redis", params=p.with_values(**{"ghz_factor[arm]": 2 * p.lookup("ghz_factor", "arm")}))
    assert fast.demands.cpu_read[0] - fast.cpu.dram_stall[0] == pytest.approx(
        (base.demands.cpu_read[0] - stall) / 2, rel=1e-9
    )


def test_redis_commands_stall_on_the_main_thread():
    """Redis's serial share is the commands' share of a request, their stalls included:
    ``(c + s) / (c + s + c_msg / iodepth)`` with ``s`` the stall in cycles at the thread's clock; so
    the stall never raises the threads' CPU-bound capacity."""
    p = perfmodel.load_parameters("default")
    c, msg = p["cpu_cycles_read[redis]"], p["cpu_cycles_message[redis]"]
    for iodepth, extra in ((1, 500.0), (16, 2000.0)):
        inp = _build("redis", iodepth=iodepth).inputs
        share = chain._command_share(inp, np.array([extra]))[0]
        assert share == pytest.approx((c + extra) / (c + extra + msg / iodepth), rel=1e-12)
    none = p.with_values(**{"dram_misses_per_op[redis]": 0.0})
    with_stall, without = (_build("redis", params=q, thread_cap=4) for q in ("default", none))
    assert with_stall.cpu.threads[0] == without.cpu.threads[0] == 4
    # CPU-bound reads per second, threads / demand: the stall never raises it
    assert 4 / with_stall.demands.cpu_read[0] <= 4 / without.demands.cpu_read[0]
    # the main thread's command takes the stall as cycles at the thread's clock before contention
    cpu_ = with_stall.cpu
    clock = cpu_.thread_hz / cpu_.usl_efficiency
    command, sockets, _ = chain._command_and_message(with_stall.inputs, cpu_.dram_stall * clock)
    assert command[0] == pytest.approx(c + (cpu_.dram_stall * clock)[0], rel=1e-12)
    expected = scaling.io_thread_efficiency(4, command, sockets, p["cpu_cycles_handoff[redis]"])[0]
    assert cpu_.usl_efficiency[0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("system", ["redis", "memcached"])
def test_the_stall_keeps_amdahls_bound(system):
    """The stall is part of the serial share, so it is slowed by the threads' contention as their
    cycles are: however many threads, Redis stays below its main thread's ``1 / (c_cmd / clock + s)``
    and memcached's SETs below the lock's ``clock / c_lock`` (a stall outside the contention had
    let more misses raise throughput past both)."""
    p = perfmodel.load_parameters("default")
    f = 1.0 if system == "redis" else 0.0
    m = _build(system, read_fraction=f, iodepth=16, thread_cap=32)
    clock = (m.cpu.thread_hz / m.cpu.usl_efficiency)[0]
    if system == "redis":
        bound = 1 / (p["cpu_cycles_read[redis]"] / clock + m.cpu.dram_stall[0])
    else:
        bound = clock / p["cpu_cycles_write_lock[memcached]"]
    w = replace(m.inputs.workload, clients=4096)
    x = perfmodel.predict(PLATFORM, w, system=system, params="default", thread_cap=32)[
        "throughput_ops_s"
    ].iloc[0]
    assert m.cpu.threads[0] == 32
    assert x <= bound * (1 + 1e-9)


@settings(max_examples=25, deadline=None)
@given(
    misses=st.floats(0.0, 20.0),
    more=st.floats(1.0, 5.0),
    f=st.sampled_from([0.0, 0.5, 1.0]),
    threads=st.sampled_from([4, 32]),
    iodepth=st.sampled_from([1, 16]),
)
def test_more_misses_never_raise_throughput(misses, more, f, threads, iodepth):
    p = perfmodel.load_parameters("default")
    w = Workload(operation={1.0: "read", 0.0: "write"}.get(f, "mixed"), read_fraction=f, object_bytes=64,
                 dataset_bytes=BIG, clients=256, iodepth=iodepth, replication_factor=1)  # fmt: skip
    a, b = (
        perfmodel.predict(
            PLATFORM,
            w,
            system="memcached",
            thread_cap=threads,
            params=p.with_values(**{"dram_misses_per_op[memcached]": v}),
        )
        for v in (misses, min(misses * more + 0.5, 40.0))
    )
    assert b["throughput_ops_s"].iloc[0] <= a["throughput_ops_s"].iloc[0] * (1 + 1e-9)
    # a closed loop's mean latency is N / X (Little's law): it never falls as throughput does not
    # rise (one class's share of the waits may shift in a mix)
    assert b["latency_mean_ms"].iloc[0] >= a["latency_mean_ms"].iloc[0] * (1 - 1e-9)
