"""A load generator on the server's cores (knob ``client_colocated``, ``chain.client_cycles``) takes
its work per request from them: the server's socket work per message, and the server's read command
where the spec says a command is protocol work (``client_mirrors_commands``), the server's threads
carrying their share of the cores' hardware threads (``chain.client_share``). Checked against the
closed form, on the demands, against the CPU-bound capacity, against Amdahl's bound of Redis's
main thread and memcached's lock, and for the figure column that sets it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.evidence import figure_plan as figures
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

PLATFORM = "arm-graviton4-c8g-8xlarge"


def _workload(read_fraction=1.0, iodepth=1, clients=64):
    op = {1.0: "read", 0.0: "write"}.get(read_fraction, "mixed")
    return Workload(operation=op, read_fraction=read_fraction, object_bytes=64, dataset_bytes=1e9,
                    clients=clients, iodepth=iodepth, replication_factor=1)  # fmt: skip


def _build(system, params="default", **kw):
    knobs = {k: kw.pop(k) for k in list(kw) if k not in ("read_fraction", "iodepth", "clients")}
    return chain.build(PLATFORM, _workload(**kw), system=system, params=params, **knobs)


@pytest.mark.parametrize("system", ["memcached", "redis"])
@pytest.mark.parametrize("iodepth", [1, 16])
@pytest.mark.parametrize("read_fraction", [1.0, 0.0])
def test_an_in_memory_stores_load_generator_mirrors_its_message_and_command(system, iodepth, read_fraction):
    """A SET's load-generator side is a request to format and a reply to parse: the read command's
    cycles, not the write's (the defaults differ, so a write mirrored as a write would fail)."""
    p = perfmodel.load_parameters("default")
    assert p[f"cpu_cycles_read[{system}]"] != p[f"cpu_cycles_write[{system}]"]
    alone = _build(system, iodepth=iodepth, read_fraction=read_fraction)
    shared = _build(system, iodepth=iodepth, read_fraction=read_fraction, client_colocated=True)
    assert chain.client_cycles(alone.inputs)[0] == 0.0
    expected = p[f"cpu_cycles_message[{system}]"] / iodepth + p[f"cpu_cycles_read[{system}]"]
    assert chain.client_cycles(shared.inputs)[0] == pytest.approx(expected, rel=1e-12)


def test_a_sql_servers_load_generator_mirrors_only_its_socket_work(tmp_path):
    """A SQL statement's execution has no mirror in the client (no ``client_mirrors_commands``)."""
    assert not perfmodel.load_system("postgresql").client_mirrors_commands
    text = (Path(perfmodel.load_system("postgresql").path)).read_text()
    assert "\nparameters:" not in text  # the shipped spec has no message cost: give it one
    spec = tmp_path / "pg.yaml"
    message = "  cpu_cycles_message: {value: 3000, unit: cycles, bounds: [1, 1e6], source: test}"
    spec.write_text(text.replace("\nsources:", f"\nparameters:\n{message}\nsources:", 1))
    inp = _build(str(spec), iodepth=2, client_colocated=True).inputs
    assert chain.client_cycles(inp)[0] == pytest.approx(1500.0, rel=1e-12)


@pytest.mark.parametrize(("threads", "share"), [(32, 1.0), (8, 0.25)])
def test_the_server_threads_carry_their_share_of_the_load_generators_work(threads, share):
    """memcached GETs take no lock, so the threads' clock is the same with and without the load
    generator and the demand grows by exactly its cycles at that clock, times the server threads'
    share of the 32 cores the load generator is pinned to (8 threads: a quarter)."""
    alone = _build("memcached", iodepth=4, thread_cap=threads)
    shared = _build("memcached", iodepth=4, thread_cap=threads, client_colocated=True)
    assert shared.cpu.threads[0] == threads and shared.cpu.client_share[0] == share
    assert shared.cpu.thread_hz[0] == alone.cpu.thread_hz[0]
    extra = share * chain.client_cycles(shared.inputs)[0] / shared.cpu.thread_hz[0]
    assert extra > 0
    assert shared.demands.cpu_read[0] - alone.demands.cpu_read[0] == pytest.approx(extra, rel=1e-9)


def test_client_share_closed_form():
    threads, cores, tpc = (
        np.array([30.0, 8.0, 1.0, 64.0]),
        np.array([15.0, 32.0, 1.0, 16.0]),
        np.array([2.0, 1, 2, 2]),
    )
    assert chain.client_share(threads, cores, tpc).tolist() == [1.0, 0.25, 0.5, 1.0]


def test_a_replicated_write_charges_the_load_generator_once_per_operation():
    """Each of a write's replicas is charged 1 / rf of the load generator's work, so the replicas
    together carry it once."""
    w = replace(_workload(read_fraction=0.0, iodepth=2), replication_factor=2)
    m = {c: chain.build(PLATFORM, w, nodes=2, system="memcached", params="default", thread_cap=32,
                        client_colocated=c) for c in (False, True)}  # fmt: skip
    op = {c: chain._operation_cycles(m[c].inputs, 1.0)[1][0] for c in m}
    assert 2 * (op[True] - op[False]) == pytest.approx(chain.client_cycles(m[True].inputs)[0], rel=1e-12)


def test_a_saturated_store_loses_the_load_generators_share_of_its_cores():
    """CPU-bound, throughput is threads / demand: the co-located run keeps ``D_alone / D_shared`` of
    the run on cores of its own, more than half (the DRAM stall has no mirror) and less than all."""
    w = _workload(iodepth=8, clients=4096)
    x = {
        c: perfmodel.predict(PLATFORM, w, system="memcached", params="default", client_colocated=c)[
            "throughput_ops_s"
        ].iloc[0]
        for c in (False, True)
    }
    d = {c: _build("memcached", iodepth=8, client_colocated=c).demands.cpu_read[0] for c in (False, True)}
    assert x[True] / x[False] == pytest.approx(d[False] / d[True], rel=1e-6)
    assert 0.5 < x[True] / x[False] < 1.0


def test_redis_main_thread_keeps_its_bound_with_a_co_located_load_generator():
    """The load generator's work time-shares every thread alike, ``g / n`` of it per command on
    each: saturated with sixteen threads at pipeline 16, Redis's main thread binds at
    ``1 / (c + s + g / n)`` commands per cycle of its clock (``c + s`` the command and its stall),
    below its bound without the load generator."""
    p = perfmodel.load_parameters("default")
    shared = _build("redis", iodepth=16, thread_cap=16, client_colocated=True)
    on = shared.cpu.client_share[0]
    assert on == 0.5  # 16 threads on 32 cores
    clock = (shared.cpu.thread_hz / shared.cpu.usl_efficiency)[0]
    stall = shared.cpu.dram_stall[0] * clock
    command, sockets, g = (v[0] for v in chain._command_and_message(shared.inputs, np.array([stall]), on))
    c, msg = p["cpu_cycles_read[redis]"], p["cpu_cycles_message[redis]"]
    assert command == pytest.approx(c + stall) and sockets == pytest.approx(msg / 16)
    assert g == pytest.approx(on * (msg / 16 + c), rel=1e-12)  # the load generator's mirror
    w = replace(shared.inputs.workload, clients=4096)
    x = {
        colocated: perfmodel.predict(
            PLATFORM, w, system="redis", params="default", thread_cap=16, client_colocated=colocated
        )["throughput_ops_s"].iloc[0]
        for colocated in (False, True)
    }
    assert x[True] == pytest.approx(clock / (command + g / 16), rel=1e-5)
    assert x[True] <= clock / (command + g / 16) * (1 + 1e-9) and x[True] < x[False]
    assert x[False] == pytest.approx(clock / command, rel=1e-5)


@pytest.mark.parametrize(("f", "rf"), [(0.5, 2), (0.5, 3), (0.9, 3)])
@pytest.mark.parametrize("colocated", [False, True])
def test_redis_main_threads_bound_holds_with_replicated_writes(f, rf, colocated):
    """Each node's main thread runs ``f + (1 - f) rf`` commands per operation (a write on every
    replica): the cluster stays below ``nodes / ((f c_r + (1 - f) rf c_w) / clock + (f + (1 - f)
    rf) stall)`` with or without a load generator, whose work is per operation, not per replica (a
    serial share weighting commands per operation let it raise throughput past the bound)."""
    p = perfmodel.load_parameters("default")
    w = replace(_workload(read_fraction=f, iodepth=16, clients=8192), replication_factor=rf)
    kw = dict(nodes=3, system="redis", params="default", thread_cap=16, client_colocated=colocated)
    m = chain.build(PLATFORM, w, **kw)
    clock = (m.cpu.thread_hz / m.cpu.usl_efficiency)[0]
    per_op = f + (1 - f) * rf
    work = (f * p["cpu_cycles_read[redis]"] + (1 - f) * rf * p["cpu_cycles_write[redis]"]) / clock
    bound = 3 / (work + per_op * m.cpu.dram_stall[0])
    x = perfmodel.predict(PLATFORM, w, **kw)["throughput_ops_s"].iloc[0]
    assert x <= bound * (1 + 1e-9)
    assert x > 0.5 * bound  # 16 threads and 8192 clients: near the bound, not far below it


@settings(max_examples=25, deadline=None)
@given(
    f=st.sampled_from([0.0, 0.5, 0.9, 1.0]),
    iodepth=st.sampled_from([1, 8, 64]),
    clients=st.sampled_from([8, 256]),
    system=st.sampled_from(["memcached", "redis"]),
    rf=st.sampled_from([1, 2, 3]),
)
def test_a_co_located_load_generator_never_raises_throughput(f, iodepth, clients, system, rf):
    w = replace(_workload(read_fraction=f, iodepth=iodepth, clients=clients), replication_factor=rf)
    a, b = (
        perfmodel.predict(
            PLATFORM, w, nodes=3, system=system, params="default", thread_cap=8, client_colocated=c
        )
        for c in (False, True)
    )
    assert b["throughput_ops_s"].iloc[0] <= a["throughput_ops_s"].iloc[0] * (1 + 1e-9)
    assert b["latency_mean_ms"].iloc[0] >= a["latency_mean_ms"].iloc[0] * (1 - 1e-9)


def test_memcached_sets_keep_the_locks_bound_with_a_co_located_load_generator():
    """The load generator's work dilutes the lock's share without raising its bound ``clock / c_lock``."""
    p = perfmodel.load_parameters("default")
    m = _build("memcached", read_fraction=0.0, iodepth=16, thread_cap=32, client_colocated=True)
    clock = (m.cpu.thread_hz / m.cpu.usl_efficiency)[0]
    bound = clock / p["cpu_cycles_write_lock[memcached]"]
    w = replace(m.inputs.workload, clients=4096)
    x = perfmodel.predict(
        PLATFORM, w, system="memcached", params="default", thread_cap=32, client_colocated=True
    )
    assert m.cpu.client_share[0] == 1.0
    assert x["throughput_ops_s"].iloc[0] <= bound * (1 + 1e-9)


def test_the_figure_column_sets_the_knob():
    data = perfmodel.load_benchmarks()
    row = data[data["client_colocated"].eq(True)].iloc[0].to_dict()
    assert figures.figure_config(row)["client_colocated"] is True
    other = data[(data["system"] == "memcached") & data["client_colocated"].isna()].iloc[0].to_dict()
    assert "client_colocated" not in figures.figure_config(other)


def test_a_baseline_can_switch_the_load_generator_off():
    from perfmodel.evidence.recorded import parse_baseline

    assert parse_baseline("client_colocated=false") == {"client_colocated": False}
    assert parse_baseline("client_colocated=true") == {"client_colocated": True}
    assert "client_colocated" not in figures.figure_config({**_row(), "client_colocated": False})


def _row():
    data = perfmodel.load_benchmarks()
    return data[data["client_colocated"].eq(True)].iloc[0].to_dict()
