"""A load generator on the server's cores (knob ``client_colocated``, ``chain.client_cycles``) takes
its work per request from them: the server's socket work per message, and the server's read command
where the spec says a command is protocol work (``client_mirrors_commands``). Checked against the
closed form, on the demands, against the CPU-bound capacity, against Amdahl's bound of Redis's
main thread, and for the figure column that sets it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel import chain, figures
from perfmodel.workload import Workload

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
def test_an_in_memory_stores_load_generator_mirrors_its_message_and_command(system, iodepth):
    p = perfmodel.load_parameters("default")
    alone = _build(system, iodepth=iodepth)
    shared = _build(system, iodepth=iodepth, client_colocated=True)
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


def test_the_load_generators_work_is_on_the_servers_cpu_demand():
    """memcached GETs take no lock, so the threads' clock is the same with and without the load
    generator and the demand grows by exactly its cycles at that clock."""
    alone = _build("memcached", iodepth=4)
    shared = _build("memcached", iodepth=4, client_colocated=True)
    assert shared.cpu.thread_hz[0] == alone.cpu.thread_hz[0]
    extra = chain.client_cycles(shared.inputs)[0] / shared.cpu.thread_hz[0]
    assert shared.demands.cpu_read[0] - alone.demands.cpu_read[0] == pytest.approx(extra, rel=1e-9)


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
    assert x[True] / x[False] == pytest.approx(d[False] / d[True], rel=2e-3)
    assert 0.5 < x[True] / x[False] < 1.0


def test_redis_main_thread_keeps_amdahls_bound_with_a_co_located_load_generator():
    """The load generator's work runs on any thread, so it lowers Redis's serial share without
    raising the main thread's bound ``1 / (c_cmd / clock + stall)``."""
    p = perfmodel.load_parameters("default")
    alone = _build("redis", iodepth=16, thread_cap=16)
    shared = _build("redis", iodepth=16, thread_cap=16, client_colocated=True)
    c, msg = p["cpu_cycles_read[redis]"], p["cpu_cycles_message[redis]"]
    stall = shared.cpu.dram_stall[0] * (shared.cpu.thread_hz / shared.cpu.usl_efficiency)[0]
    share = chain._command_share(shared.inputs, np.array([stall]))[0]
    assert share == pytest.approx((c + stall) / (c + stall + msg / 16 + msg / 16 + c), rel=1e-12)
    assert share < chain._command_share(alone.inputs, np.array([stall]))[0]
    clock = (shared.cpu.thread_hz / shared.cpu.usl_efficiency)[0]
    bound = 1 / (c / clock + shared.cpu.dram_stall[0])
    w = replace(shared.inputs.workload, clients=4096)
    x = perfmodel.predict(PLATFORM, w, system="redis", params="default", thread_cap=16, client_colocated=True)
    assert x["throughput_ops_s"].iloc[0] <= bound * (1 + 1e-9)


@settings(max_examples=20, deadline=None)
@given(
    f=st.sampled_from([0.0, 0.5, 1.0]),
    iodepth=st.sampled_from([1, 8, 64]),
    clients=st.sampled_from([8, 256]),
    system=st.sampled_from(["memcached", "redis"]),
)
def test_a_co_located_load_generator_never_raises_throughput(f, iodepth, clients, system):
    w = _workload(read_fraction=f, iodepth=iodepth, clients=clients)
    a, b = (
        perfmodel.predict(PLATFORM, w, system=system, params="default", thread_cap=8, client_colocated=c)
        for c in (False, True)
    )
    assert b["throughput_ops_s"].iloc[0] <= a["throughput_ops_s"].iloc[0] * (1 + 1e-9)
    assert b["latency_mean_ms"].iloc[0] >= a["latency_mean_ms"].iloc[0] * (1 - 1e-9)


def test_the_figure_column_sets_the_knob():
    data = perfmodel.load_benchmarks()
    row = data[data["client_colocated"].eq(True)].iloc[0].to_dict()
    assert figures.figure_config(row)["client_colocated"] is True
    other = data[(data["system"] == "memcached") & data["client_colocated"].isna()].iloc[0].to_dict()
    assert "client_colocated" not in figures.figure_config(other)
