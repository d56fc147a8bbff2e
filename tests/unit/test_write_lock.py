"""A system whose writes allocate under one process-wide lock (spec ``serial: write_lock``,
memcached's ``slabs_lock``): Amdahl's law with the writes' locked share of the CPU as the serial
fraction -- GETs scale with threads, SETs level off at ``hz / cpu_cycles_write_lock`` per node.
Checked against the closed form (Gunther 2007, eq. 4.1), on the saturated throughput, and on the
spec's validation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.inputs.workload import Workload
from perfmodel.mechanisms import scaling
from perfmodel.model import chain

PLATFORM = "arm-graviton4-c8g-8xlarge"


def _workload(read_fraction, iodepth=1, clients=512):
    op = {1.0: "read", 0.0: "write"}.get(read_fraction, "mixed")
    return Workload(operation=op, read_fraction=read_fraction, object_bytes=64, dataset_bytes=1e8,
                    clients=clients, iodepth=iodepth, replication_factor=1)  # fmt: skip


def _model(read_fraction, threads, iodepth=1, nodes=1, rf=1, **values):
    knobs = {k: values.pop(k) for k in list(values) if k in ("statements_per_op", "read_statements_per_op")}
    values.setdefault("dram_misses_per_op[memcached]", 0.0)  # the lock alone (test_dram_stall.py: both)
    params = perfmodel.load_parameters("default").with_values(**values)
    w = replace(_workload(read_fraction, iodepth), replication_factor=rf)
    return chain.build(PLATFORM, w, nodes=nodes, system="memcached", params=params, thread_cap=threads,
                       **knobs)  # fmt: skip


@pytest.mark.parametrize(("f", "iodepth"), [(0.0, 1), (0.5, 4), (0.95, 10), (1.0, 1)])
def test_serial_share_is_the_writes_locked_cycles_over_the_request(f, iodepth):
    p = perfmodel.load_parameters("default")
    c_r, c_w, c_m = (p[f"cpu_cycles_{k}[memcached]"] for k in ("read", "write", "message"))
    lock = p["cpu_cycles_write_lock[memcached]"]
    expected = (1 - f) * lock / (f * c_r + (1 - f) * c_w + c_m / iodepth)
    share = chain._write_lock_share(_model(f, 8, iodepth).inputs)
    assert share[0] == pytest.approx(expected, rel=1e-12)
    # the threads' speed carries Amdahl's efficiency at that share: the lock's only effect
    small = 10.0  # the bound's floor
    with_lock, short = (
        _model(f, 8, iodepth),
        _model(f, 8, iodepth, **{"cpu_cycles_write_lock[memcached]": small}),
    )
    ratio = with_lock.cpu.thread_hz[0] / short.cpu.thread_hz[0]
    threads = with_lock.cpu.threads[0]
    assert threads == 8
    exact = scaling.usl_efficiency(threads, expected, 0.0) / scaling.usl_efficiency(
        threads, expected * small / lock, 0.0
    )
    assert ratio == pytest.approx(exact, rel=1e-9)


def test_the_share_counts_replicas_and_only_the_writing_statements():
    """Per node, a request brings ``(1 - f) RF`` write replicas, each holding the lock once per
    writing statement; the reads a writing operation runs (``read_statements_per_op``) take no
    lock but cost CPU: the share is over the CPU the node is charged (chain.demands)."""
    p = perfmodel.load_parameters("default")
    c_r, c_w, c_m = (p[f"cpu_cycles_{k}[memcached]"] for k in ("read", "write", "message"))
    lock, f = p["cpu_cycles_write_lock[memcached]"], 0.5
    two = chain._write_lock_share(_model(f, 8, nodes=2, rf=2).inputs)[0]
    assert two == pytest.approx((1 - f) * 2 * lock / (f * (c_r + c_m) + (1 - f) * 2 * (c_w + c_m)), rel=1e-12)
    one = chain._write_lock_share(_model(f, 8).inputs)[0]
    assert two > one  # the same request mix locks more per node with two replicas per write
    mixed = chain._write_lock_share(_model(f, 8, statements_per_op=4, read_statements_per_op=3).inputs)[0]
    c_w4 = c_w + 3 * c_r + 4 * c_m  # one writing statement, three reading ones, four messages
    assert mixed == pytest.approx((1 - f) * lock / (f * 4 * (c_r + c_m) + (1 - f) * c_w4), rel=1e-12)


def test_gets_scale_with_threads_and_sets_level_off_at_the_lock():
    """Saturated (512 clients), GET-only throughput grows with the threads as the CPU allows; a
    SET-only load levels off below ``hz / c_lock`` -- the lock's capacity, whatever the threads."""
    p = perfmodel.load_parameters("default")
    lock = p["cpu_cycles_write_lock[memcached]"]
    x = {}
    for f in (1.0, 0.0):
        for n in (1, 4, 16):
            m = _model(f, n)
            x[f, n] = float(chain.solve(m).throughput[0])
    assert x[1.0, 16] / x[1.0, 1] > 10  # nothing serial: 16 threads on 16 idle cores
    hz = _model(0.0, 1).cpu.thread_hz[0]  # one thread: no lock wait, its own clock
    assert x[0.0, 1] < x[0.0, 4] < x[0.0, 16] < hz / lock * 1.0001
    assert x[0.0, 16] / x[0.0, 1] < x[1.0, 16] / x[1.0, 1] / 2  # the SETs scale far less


def test_a_system_spec_names_the_serial_kinds(tmp_path):
    path = tmp_path / "odd.yaml"
    text = Path(perfmodel.load_system("memcached").path).read_text(encoding="utf-8")
    path.write_text(text.replace("serial: write_lock", "serial: writes"))
    kinds = "command, command_io_threads, write_lock"
    with pytest.raises(perfmodel.DataError, match=f"field 'serial' must be one of {kinds}"):
        perfmodel.load_system(str(path))
    assert perfmodel.load_system("memcached").serial == "write_lock"
    assert "cpu_cycles_write_lock" in perfmodel.load_system("memcached").required_parameters()
    assert "cpu_cycles_write_lock" not in perfmodel.load_system("redis").required_parameters()


def test_other_systems_keep_their_usl_sigma():
    """Only a write_lock spec takes the lock's share; a pooled SQL system keeps ``usl_sigma``."""
    w = Workload(operation="mixed", read_fraction=0.5, object_bytes=200, dataset_bytes=1e8, clients=64)
    m = chain.build(PLATFORM, w, nodes=1, system="mysql", params="default", thread_cap=8)
    assert not m.inputs.sys.serial_write_lock.any()
    assert np.all(chain._write_lock_share(m.inputs) == 0.0)


@settings(max_examples=25, deadline=None)
@given(
    f=st.floats(0.0, 1.0),
    lock=st.floats(10.0, 20_000.0),
    more=st.floats(1.01, 4.0),
    threads=st.integers(1, 32),
)
def test_a_longer_lock_never_helps_and_the_share_stays_a_fraction(f, lock, more, threads):
    """Monotonicity: a longer hold never raises saturated throughput; the serial fraction is in
    [0, 1] and grows with the hold (Amdahl's capacity falls as its serial fraction rises)."""
    a = _model(f, threads, **{"cpu_cycles_write_lock[memcached]": lock})
    b = _model(f, threads, **{"cpu_cycles_write_lock[memcached]": min(lock * more, 100_000.0)})
    sa, sb = chain._write_lock_share(a.inputs)[0], chain._write_lock_share(b.inputs)[0]
    assert 0.0 <= sa <= sb <= 1.0
    xa, xb = float(chain.solve(a).throughput[0]), float(chain.solve(b).throughput[0])
    assert xb <= xa * (1 + 1e-9)
    if f == 1.0:
        assert sa == sb == 0.0 and xa == pytest.approx(xb, rel=1e-12)  # GETs take no lock
