"""A guest's VM exits per request message (catalog ``vm_exit_us`` x ``vm_exits_per_message``,
``PlatformArrays.message_exit_s``): a fixed time each message costs the vCPU that receives it, and
a co-located load generator its share of the same for the reply. Checked against the closed form
on the demands, against the serial shares (Amdahl's for memcached's lock, the I/O threads' law for
Redis: the exits run beside the commands, not in them), the CPU-bound capacity, the catalog's
validation, and the recorded SEV-SNP platform's sources."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.inputs import catalog
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain
from perfmodel.model.chain import solve

BARE = catalog.load_platform("arm-graviton4-c8g-8xlarge")
EXIT_S, EXITS = 3.72e-6, 1.69
GUEST = replace(BARE, vm_exit_s=EXIT_S, vm_exits_per_message=EXITS)


def _workload(read_fraction=1.0, iodepth=1, clients=64):
    op = {1.0: "read", 0.0: "write"}.get(read_fraction, "mixed")
    return Workload(operation=op, read_fraction=read_fraction, object_bytes=64, dataset_bytes=1e9,
                    clients=clients, iodepth=iodepth, replication_factor=1)  # fmt: skip


def _build(platform, system="memcached", read_fraction=1.0, iodepth=1, clients=64, **knobs):
    return chain.build(
        platform, _workload(read_fraction, iodepth, clients), system=system, params="default", **knobs
    )


def test_bare_metal_and_an_unmeasured_guest_count_no_exits():
    assert _build(BARE).inputs.plat.message_exit_s[0] == 0.0
    half = replace(BARE, vm_exit_s=EXIT_S)  # a time without a count: nothing is counted
    assert _build(half).inputs.plat.message_exit_s[0] == 0.0
    assert _build(GUEST).inputs.plat.message_exit_s[0] == pytest.approx(EXITS * EXIT_S, rel=1e-15)


@pytest.mark.parametrize("iodepth", [1, 8, 64])
@pytest.mark.parametrize("statements", [1, 3])
def test_a_guest_message_costs_its_exits_shared_by_the_pipelined_commands(iodepth, statements):
    """memcached GETs take no lock, so the thread clock is the same on both platforms and the demand
    grows by exactly ``statements x exits x time / iodepth`` [s]."""
    bare = _build(BARE, iodepth=iodepth, statements_per_op=statements)
    guest = _build(GUEST, iodepth=iodepth, statements_per_op=statements)
    assert guest.cpu.thread_hz[0] == bare.cpu.thread_hz[0]
    extra = statements * EXITS * EXIT_S / iodepth
    assert guest.demands.cpu_read[0] - bare.demands.cpu_read[0] == pytest.approx(extra, rel=1e-9)


@pytest.mark.parametrize(("threads", "share"), [(32, 1.0), (8, 0.25)])
def test_a_colocated_load_generator_pays_the_exits_of_its_replies(threads, share):
    """The load generator in the same guest is woken by each reply: its share of the same exits."""
    bare = _build(BARE, iodepth=4, thread_cap=threads, client_colocated=True)
    guest = _build(GUEST, iodepth=4, thread_cap=threads, client_colocated=True)
    assert guest.cpu.client_share[0] == share and guest.cpu.thread_hz[0] == bare.cpu.thread_hz[0]
    extra = (1.0 + share) * EXITS * EXIT_S / 4
    assert guest.demands.cpu_read[0] - bare.demands.cpu_read[0] == pytest.approx(extra, rel=1e-9)


@pytest.mark.parametrize("iodepth", [1, 16])
def test_the_exits_dilute_redis_main_threads_share(iodepth):
    """Redis's serial fraction ``c_cmd / (c_cmd + (c_msg + e) / iodepth)``: the exits come with the
    message, on the threads that read sockets, so the bound on the main thread does not move."""
    p = perfmodel.load_parameters("default")
    c_cmd, c_msg = p["cpu_cycles_read[redis]"], p["cpu_cycles_message[redis]"]
    inp = _build(BARE, system="redis", iodepth=iodepth).inputs
    e = 5000.0  # exit cycles per message at the thread's clock
    with_exits = chain._command_share(inp, 0.0, 1.0, np.array([e]))[0]
    assert with_exits == pytest.approx(c_cmd / (c_cmd + (c_msg + e) / iodepth), rel=1e-12)
    assert with_exits < chain._command_share(inp, 0.0, 1.0)[0]


def test_the_exits_dilute_memcacheds_lock_share():
    """The lock's share of a SET's cycles ``c_lock / (c_w + (c_msg + e) / iodepth)``."""
    p = perfmodel.load_parameters("default")
    lock, c_w, c_msg = (
        p[f"{k}[memcached]"] for k in ("cpu_cycles_write_lock", "cpu_cycles_write", "cpu_cycles_message")
    )
    inp = _build(BARE, read_fraction=0.0, iodepth=2).inputs
    e = 5000.0
    share = chain._write_lock_share(inp, 0.0, 1.0, np.array([e]))[0]
    assert share == pytest.approx(lock / (c_w + (c_msg + e) / 2), rel=1e-12)


def test_cpu_bound_capacity_falls_by_the_exits():
    """Many clients at pipeline 1 saturate the threads: the throughput is ``threads / demand`` on
    either platform, so the ratio is the ratio of the demands (a wrong exit time would move it)."""
    bare, guest = _build(BARE, clients=4096), _build(GUEST, clients=4096)
    x_bare, x_guest = (solve(m).throughput[0] for m in (bare, guest))
    d_bare, d_guest = bare.demands.cpu_read[0], guest.demands.cpu_read[0]
    assert x_guest / x_bare == pytest.approx(d_bare / d_guest, rel=1e-5)
    assert d_guest - d_bare == pytest.approx(EXITS * EXIT_S, rel=1e-9)


@pytest.mark.parametrize("system", ["fio", "rocksdb"])
def test_a_system_without_request_messages_pays_no_exits(system):
    """fio and an embedded RocksDB (``remote: false``) receive no request messages."""
    assert not perfmodel.load_system(system).remote
    bare, guest = _build(BARE, system=system), _build(GUEST, system=system)
    assert guest.demands.cpu_read[0] == bare.demands.cpu_read[0]
    assert chain.message_exits(guest.inputs)[0] == 0.0


def test_a_serial_system_without_request_messages_keeps_its_serial_share_in_a_guest(tmp_path):
    """The serial shares take the exits from ``message_exits`` (0 for ``remote: false``), not from
    the platform: Redis's spec made embedded keeps the same Amdahl efficiency on the guest as on
    bare metal, while the shipped (remote) spec loses some of it."""
    from pathlib import Path

    text = Path(perfmodel.load_system("redis").path).read_text()
    assert "\nremote: true" in text
    spec = tmp_path / "embedded.yaml"
    spec.write_text(text.replace("\nremote: true", "\nremote: false", 1))
    for system, same in ((str(spec), True), ("redis", False)):
        bare, guest = (_build(p, system=system, iodepth=4, thread_cap=16) for p in (BARE, GUEST))
        assert chain.message_exits(guest.inputs)[0] == (0.0 if same else pytest.approx(EXITS * EXIT_S))
        if same:
            assert guest.cpu.usl_efficiency[0] == bare.cpu.usl_efficiency[0]
        else:
            assert guest.cpu.usl_efficiency[0] > bare.cpu.usl_efficiency[0]


def _redis_bound(m, p):
    """Redis's main thread: ``1 / (c_cmd / clock + stall)`` per node (reads)."""
    clock = (m.cpu.thread_hz / m.cpu.usl_efficiency)[0]
    return 1.0 / (p["cpu_cycles_read[redis]"] / clock + m.cpu.dram_stall[0])


@pytest.mark.parametrize("threads", [8, 16, 30])
def test_exits_never_raise_redis_or_memcached_throughput_nor_its_bound(threads):
    """The exits dilute the serial shares at the clock before contention and are charged, slowed by
    the same contention, in the demands: more exit time never means more throughput (a demand
    charged at the contended clock's cycles while the share counted them did: 1.46x at 30
    threads), and Redis stays below its main thread's bound."""
    p = perfmodel.load_parameters("default")
    for system, f in (("redis", 1.0), ("memcached", 0.0), ("memcached", 0.5)):
        xs = []
        for t_us in (0.0, 0.1, 1.0, 6.3, 20.0):
            plat = BARE if t_us == 0 else replace(BARE, vm_exit_s=t_us * 1e-6, vm_exits_per_message=1.0)
            m = _build(plat, system=system, read_fraction=f, iodepth=16, clients=4096, thread_cap=threads)
            xs.append(solve(m).throughput[0])
            if system == "redis":
                assert xs[-1] <= _redis_bound(m, p) * (1 + 1e-9)
        assert all(b <= a * (1 + 1e-9) for a, b in zip(xs, xs[1:], strict=False)), (system, f, xs)


def test_the_cpu_stage_counts_the_exits_in_redis_io_threads_work():
    """Redis's efficiency is the I/O-thread law's at the sockets' work with the exits as cycles at
    the clock before contention: the exits load the I/O threads, not the main thread. Saturated
    at pipeline 1 with three threads the two I/O threads bind, so the model's throughput is
    ``2 / (m + e + h)`` commands per cycle at that clock on the guest, ``2 / (m + h)`` on bare metal."""
    from perfmodel.mechanisms import scaling

    p = perfmodel.load_parameters("default")
    handoff = p["cpu_cycles_handoff[redis]"]
    w = replace(_workload(), clients=8192)
    m = chain.build(GUEST, w, system="redis", params="default", thread_cap=3)
    c = m.cpu
    clock = (c.thread_hz / c.usl_efficiency)[0]
    stall, exits = np.array([c.dram_stall[0] * clock]), np.array([EXITS * EXIT_S * clock])
    command, sockets, _ = chain._command_and_message(m.inputs, stall, c.client_share, exits)
    bare_cmd, bare_sockets, _ = chain._command_and_message(m.inputs, stall, c.client_share)
    assert command[0] == bare_cmd[0] and sockets[0] - bare_sockets[0] == pytest.approx(exits[0])
    expected = scaling.io_thread_efficiency(c.threads, command, sockets, handoff)[0]
    assert c.usl_efficiency[0] == pytest.approx(expected, rel=1e-12)
    bare = chain.build(BARE, w, system="redis", params="default", thread_cap=3)
    assert (bare.cpu.thread_hz / bare.cpu.usl_efficiency)[0] == pytest.approx(clock, rel=1e-12)
    assert 2 / (bare_sockets[0] + handoff) < 1 / command[0]  # the I/O threads bind on both
    x_guest, x_bare = solve(m).throughput[0], solve(bare).throughput[0]
    assert x_guest == pytest.approx(2 * clock / (sockets[0] + handoff), rel=1e-5)
    assert x_bare == pytest.approx(2 * clock / (bare_sockets[0] + handoff), rel=1e-5)


@pytest.mark.parametrize(("f", "rf"), [(0.5, 3), (0.0, 2), (0.9, 3)])
def test_a_replicated_write_pays_each_replicas_exits_and_the_load_generators_once(f, rf):
    """Per operation a node set runs ``f + (1 - f) R`` request messages (a write's on every replica),
    each with its exits, and the co-located load generator's reply exits once (``1 / R`` on each
    write replica): ``f d_r + (1 - f) R d_w = (f + (1 - f) R) e / q + share e / q``."""
    w = replace(_workload(read_fraction=f, iodepth=4), replication_factor=rf)
    m = chain.build(BARE, w, nodes=3, system="memcached", params="default", client_colocated=True)
    inp, share, e = m.inputs, m.cpu.client_share[0], 5000.0
    r0, w0 = chain._operation_cycles(inp, share)
    r1, w1 = chain._operation_cycles(inp, share, e)
    total = f * (r1 - r0)[0] + (1 - f) * rf * (w1 - w0)[0]
    assert total == pytest.approx((f + (1 - f) * rf) * e / 4 + share * e / 4, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.1, 50.0), st.floats(0.1, 50.0), st.sampled_from([1, 4, 32]))
def test_throughput_never_rises_with_the_exit_time(a_us, b_us, iodepth):
    lo, hi = sorted((a_us, b_us))
    guests = [replace(BARE, vm_exit_s=t * 1e-6, vm_exits_per_message=1.0) for t in (lo, hi)]
    x = [solve(_build(g, iodepth=iodepth)).throughput[0] for g in guests]
    assert x[1] <= x[0] * (1 + 1e-12)


def _entry(**fields):
    entry = {
        "id": "vm", "name": "a guest", "arch": "x86", "sockets": 1, "cores_per_socket": 4, "cores": 4,
        "threads_per_core": 2, "smt_modes": [2], "threads": 8, "numa_nodes": 1, "base_ghz": 2.0,
        "ram_gib": 16, "network": "eth-10g", "storage": [{"device": "dram-in-memory", "count": 1}],
    }  # fmt: skip
    entry.update(fields)
    entry["sources"] = {
        k: "assumption: a test" for k in entry if k not in ("id", "name", "storage", "smt_modes", "sources")
    }
    return entry


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"vm_exit_us": 3.7}, "vm_exits_per_message.*is required with vm_exit_us"),
        ({"vm_exits_per_message": 1.7}, "vm_exit_us.*is required with vm_exits_per_message"),
        ({"vm_exit_us": 0.01, "vm_exits_per_message": 1.7}, "must be >= 0.05"),
        ({"vm_exit_us": 0, "vm_exits_per_message": 1.7}, "must be positive"),
        ({"vm_exit_us": 3.7, "vm_exits_per_message": -1}, "must be positive"),
        ({"vm_exit_us": 3.7e6, "vm_exits_per_message": 1.7}, "must be <="),
    ],
)
def test_the_catalog_rejects_half_or_impossible_exit_fields(tmp_path, fields, message):
    path = tmp_path / "hw.yaml"
    path.write_text(yaml.safe_dump({"platforms": [_entry(**fields)]}))
    with pytest.raises(perfmodel.CatalogError, match=message) as err:
        catalog.load_platform(path)
    if len(fields) == 2:  # an invalid value is one problem, not also a missing partner
        assert "is required with" not in str(err.value)


def test_the_catalog_reads_a_guests_exits_in_si(tmp_path):
    path = tmp_path / "hw.yaml"
    path.write_text(yaml.safe_dump({"platforms": [_entry(vm_exit_us=3.7, vm_exits_per_message=1.5)]}))
    p = catalog.load_platform(path)
    assert (p.vm_exit_s, p.vm_exits_per_message) == (pytest.approx(3.7e-6, rel=1e-15), 1.5)


def test_the_recorded_snp_guest_takes_its_exits_from_other_labs():
    """sevmc's guest: 3.72 us a exit (CVM_eval, mean of four SNP exits), 1.69 exits a request
    (cvm-net-perf); both sources named, neither derived from the figures it predicts."""
    p = catalog.load_platform("x86-epyc-9124-sevsnp-30vcpu")
    mean_ns = np.mean([3859, 3573, 3553, 3885])
    assert p.vm_exit_s == pytest.approx(mean_ns * 1e-9, abs=5e-9)  # entered as 3.72 us
    assert p.vm_exits_per_message == pytest.approx(834_020 / 493_675, abs=0.005)
    assert "CVM_eval" in p.sources["vm_exit_us"] and "cvm-net-perf" in p.sources["vm_exits_per_message"]
    assert not p.derived_from.get("vm_exit_us") and not p.derived_from.get("vm_exits_per_message")
    assert math.isnan(catalog.load_platform("arm-graviton4-c8g-8xlarge").vm_exit_s)
