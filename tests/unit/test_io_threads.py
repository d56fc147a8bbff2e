"""Redis 8's threaded I/O (spec ``serial: command_io_threads``): the main thread runs every command
and, with more than one thread, the ``n - 1`` I/O threads carry every client's socket work and the
main thread none. Checked against the closed form of
:func:`~perfmodel.mechanisms.scaling.io_thread_efficiency`,
its bounds (the I/O threads' and the main thread's), monotonicity in the thread count, the CPU-bound
throughput of the whole model, and against Amdahl's law, which the spec no longer follows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.inputs import catalog
from perfmodel.inputs.workload import Workload
from perfmodel.mechanisms import scaling
from perfmodel.model import chain
from perfmodel.model.chain import solve

BARE = catalog.load_platform("arm-graviton4-c8g-8xlarge")


def test_one_thread_does_everything_and_two_split_the_sockets_from_the_commands():
    c, m, h = 3000.0, 9000.0, 1500.0
    assert scaling.io_thread_efficiency(1, c, m, h) == 1.0
    # two threads: one I/O thread carries m + h per command, the main thread c
    assert 2 * scaling.io_thread_efficiency(2, c, m, h) == pytest.approx((c + m) / (m + h), rel=1e-15)
    assert 2 * scaling.io_thread_efficiency(2, 9000.0, 3000.0, 0.0) == pytest.approx(12 / 9, rel=1e-15)
    # many threads: the main thread's bound (c + m) / c single threads
    assert 64 * scaling.io_thread_efficiency(64, c, m, h) == pytest.approx((c + m) / c, rel=1e-15)
    # four threads: three I/O threads, 3 x 12000 / 10500 = 3.43 below the main thread's 4
    assert 4 * scaling.io_thread_efficiency(4, c, m, h) == pytest.approx(3 * (c + m) / (m + h), rel=1e-15)


def test_a_load_generator_on_the_cores_time_shares_every_thread_alike():
    """``g`` per command, ``g / n`` on each thread: ``X = 1 / max((m + h) / (n - 1) + g / n,
    c + g / n)`` commands per cycle, the efficiency ``X (c + m + g) / n``."""
    c, m, h, g = 3000.0, 9000.0, 1500.0, 4000.0
    for n, x in ((2, 1 / (m + h + g / 2)), (4, 1 / ((m + h) / 3 + g / 4)), (16, 1 / (c + g / 16))):
        assert scaling.io_thread_efficiency(n, c, m, h, g) == pytest.approx(x * (c + m + g) / n, rel=1e-15)
    assert scaling.io_thread_efficiency(1, c, m, h, g) == 1.0


def test_a_second_thread_gains_less_than_amdahl_says_and_many_threads_more():
    """The pattern of tidwall's Redis 8 GETs at pipeline 1 (1.11x from the second thread, about 3x
    from four): with the commands a fifth of the work, Amdahl's law gives 1.67 and 2.5."""
    c, m = 2000.0, 8000.0
    sigma = c / (c + m)
    law = {n: n * scaling.io_thread_efficiency(n, c, m, 0.0) for n in (2, 4, 8)}
    amdahl = {n: n * scaling.usl_efficiency(n, sigma, 0.0) for n in (2, 4, 8)}
    assert law[2] == pytest.approx(1.25) and amdahl[2] == pytest.approx(1 / 0.6)
    assert law[4] == pytest.approx(3.75) and amdahl[4] == pytest.approx(2.5)
    assert law[8] == pytest.approx(5.0) and amdahl[8] == pytest.approx(8 / 2.4)


WORK = st.one_of(st.just(0.0), st.floats(1e-3, 1e6))


@settings(max_examples=200, deadline=None)
@given(st.floats(1.0, 1e6), WORK, WORK, st.integers(1, 63), st.integers(1, 64))
def test_the_threads_capacity_never_falls_with_more_threads_nor_passes_either_bound(c, m, h, n, more):
    """From two threads on; from one to two it may fall when the handoff outweighs what the main
    thread sheds (a second thread costs ``h`` per command and saves the main thread ``m``), and
    does not when the handoff is free."""
    cap = [k * scaling.io_thread_efficiency(k, c, m, h) for k in (n, n + more)]
    assert 0 < cap[0] / n <= 1 + 1e-12
    if n >= 2:
        assert cap[1] >= cap[0] * (1 - 1e-12)
    else:
        assert 2 * scaling.io_thread_efficiency(2, c, m, 0.0) >= 1.0 - 1e-12
    assert cap[1] <= (c + m) / c * (1 + 1e-12)  # the main thread's commands
    if n + more > 1:
        io = (n + more - 1) * (c + m) / (m + h) if m + h > 0 else np.inf
        assert cap[1] <= io * (1 + 1e-12)  # the I/O threads'


#: a saturated closed loop (8192 clients) reaches its CPU bound to within ~1e-6 here; the checks
#: against the closed forms take 1e-5, far below what a wrong term moves (0.16% and more)


def _saturated(threads, iodepth=1, params="default"):
    w = Workload(operation="read", read_fraction=1.0, object_bytes=64, dataset_bytes=1e6,
                 clients=8192, iodepth=iodepth, replication_factor=1)  # fmt: skip
    return chain.build(BARE, w, system="redis", params=params, thread_cap=threads)


@pytest.mark.parametrize(("threads", "iodepth"), [(2, 1), (3, 1), (16, 1), (2, 16), (16, 16)])
def test_cpu_bound_redis_reaches_the_io_threads_or_the_main_threads_bound(threads, iodepth):
    """Saturated GETs run at ``min((n - 1) / (m + h), 1 / c) x clock`` commands per second, ``c``
    the command with its DRAM stall as cycles at the clock, ``m = c_msg / iodepth`` and ``h`` the
    handoff per message over the commands in it: with two or three threads at pipeline 1 the I/O
    threads bind, with sixteen the main thread; at pipeline 16 the main thread from two on."""
    p = perfmodel.load_parameters("default")
    m, h = p["cpu_cycles_message[redis]"] / iodepth, p["cpu_cycles_handoff[redis]"] / iodepth
    model = _saturated(threads, iodepth)
    assert model.cpu.threads[0] == threads
    clock = (model.cpu.thread_hz / model.cpu.usl_efficiency)[0]
    c = p["cpu_cycles_read[redis]"] + model.cpu.dram_stall[0] * clock
    bound = min((threads - 1) / (m + h), 1 / c) * clock
    x = solve(model).throughput[0]
    assert x == pytest.approx(bound, rel=1e-5) and x <= bound * (1 + 1e-9)
    io_bound = (threads - 1) / (m + h) < 1 / c
    assert io_bound == (iodepth == 1 and threads <= 3)


@pytest.mark.parametrize(("f", "rf", "nodes"), [(0.5, 1, 1), (0.0, 1, 1), (0.5, 3, 3), (0.2, 2, 3)])
@pytest.mark.parametrize("threads", [2, 16])
def test_mixed_and_replicated_writes_reach_the_same_bounds_per_command(f, rf, nodes, threads):
    """A node runs ``f + (1 - f) R`` commands per operation (a write on every replica), each with
    a request message and its handoff: ``nodes x min((n - 1) / (m + h), 1 / c) x clock / (f + (1 -
    f) R)`` operations per second, ``c`` the commands' mean cycles with the stall."""
    p = perfmodel.load_parameters("default")
    op = {1.0: "read", 0.0: "write"}.get(f, "mixed")
    w = Workload(operation=op, read_fraction=f, object_bytes=64, dataset_bytes=1e6, clients=8192,
                 iodepth=1, replication_factor=rf)  # fmt: skip
    model = chain.build(BARE, w, nodes=nodes, system="redis", params="default", thread_cap=threads)
    clock = (model.cpu.thread_hz / model.cpu.usl_efficiency)[0]
    per_op = f + (1 - f) * rf
    c = (f * p["cpu_cycles_read[redis]"] + (1 - f) * rf * p["cpu_cycles_write[redis]"]) / per_op
    c += model.cpu.dram_stall[0] * clock
    m, h = p["cpu_cycles_message[redis]"], p["cpu_cycles_handoff[redis]"]
    bound = nodes * min((threads - 1) / (m + h), 1 / c) * clock / per_op
    assert solve(model).throughput[0] == pytest.approx(bound, rel=1e-5)


@pytest.mark.parametrize("threads", [2, 3, 8])
@pytest.mark.parametrize(
    ("key", "values"),
    [("dram_misses_per_op[redis]", (0.0, 4.0, 16.0)), ("cpu_cycles_write[redis]", (1e3, 4e3, 12e3)),
     ("cpu_cycles_read[redis]", (1e3, 4e3, 12e3)), ("cpu_cycles_handoff[redis]", (0.0, 5e3, 2e4))],
)  # fmt: skip
def test_no_cost_raises_throughput_with_a_load_generator_on_the_cores(threads, key, values):
    """A dearer command, stall or handoff never raises throughput, the load generator on the cores
    or not (charged outside the law, a co-located load generator had let a dearer command raise
    it where the I/O threads bind: 325 k -> 332 k GET/s from 0 to 16 DRAM misses at two threads)."""
    p = perfmodel.load_parameters("default")
    w = Workload(operation="mixed", read_fraction=0.5, object_bytes=64, dataset_bytes=1e9, clients=4096,
                 iodepth=1, replication_factor=1)  # fmt: skip
    for colocated in (False, True):
        x = [
            solve(
                chain.build(
                    BARE,
                    w,
                    system="redis",
                    params=p.with_values(**{key: v}),
                    thread_cap=threads,
                    client_colocated=colocated,
                )  # fmt: skip
            ).throughput[0]
            for v in values
        ]
        assert all(b <= a * (1 + 1e-9) for a, b in zip(x, x[1:], strict=False)), (colocated, x)


@pytest.mark.parametrize(("rf", "nodes"), [(1, 1), (3, 3)])
@pytest.mark.parametrize("clients", [64, 4096])
@pytest.mark.parametrize("threads", [2, 3, 16])
def test_a_dearer_write_never_raises_throughput_nor_makes_a_read_cheaper(rf, nodes, clients, threads):
    """The law applies per request class: a read's CPU demand is ``n max(io_r, main_r) / clock``
    whatever a write costs. With one efficiency for both classes, where the I/O threads bind, a
    dearer SET raised the efficiency and so cut every GET's demand (38% at one replica), and with
    three replicas raised throughput (511.8 k -> 515.5 k at 64 clients, two threads)."""
    p = perfmodel.load_parameters("default")
    w = Workload(operation="mixed", read_fraction=0.5, object_bytes=64, dataset_bytes=1e9, clients=clients,
                 iodepth=1, replication_factor=rf)  # fmt: skip
    x, read = [], []
    for cycles in (1e3, 4e3, 12e3):
        q = p.with_values(**{"cpu_cycles_write[redis]": cycles})
        model = chain.build(BARE, w, nodes=nodes, system="redis", params=q, thread_cap=threads)
        x.append(solve(model).throughput[0])
        read.append(model.demands.cpu_read[0])
    assert x[1] <= x[0] * (1 + 1e-9) and x[2] <= x[1] * (1 + 1e-9)
    assert read[0] == read[1] == read[2]


@pytest.mark.parametrize("threads", [2, 3])
def test_a_co_located_load_generator_slows_the_io_threads_by_its_share(threads):
    """Where the I/O threads bind (pipeline 1, two or three threads) a load generator on the cores
    adds ``g / n`` to each I/O thread's work per command: ``(n - 1) / (m + h + (n - 1) g / n)``
    commands per cycle of the clock, ``g`` its cycles per command (the mirror of the message and
    the GET, times the threads' share of the cores it is pinned to)."""
    p = perfmodel.load_parameters("default")
    w = Workload(operation="read", read_fraction=1.0, object_bytes=64, dataset_bytes=1e6, clients=8192,
                 iodepth=1, replication_factor=1)  # fmt: skip
    model = chain.build(BARE, w, system="redis", params="default", thread_cap=threads, client_colocated=True)
    clock = (model.cpu.thread_hz / model.cpu.usl_efficiency)[0]
    share = model.cpu.client_share[0]
    assert share == threads / 32  # threads on the c8g.8xlarge's 32 cores
    m, h = p["cpu_cycles_message[redis]"], p["cpu_cycles_handoff[redis]"]
    g = share * (m + p["cpu_cycles_read[redis]"])
    n = threads
    assert (n - 1) / (m + h + (n - 1) * g / n) < 1 / (p["cpu_cycles_read[redis]"] + g / n)  # I/O binds
    x = solve(model).throughput[0]
    assert x == pytest.approx((n - 1) / (m + h + (n - 1) * g / n) * clock, rel=1e-5)


def test_the_handoff_costs_only_the_io_threads():
    """A dearer handoff lowers the I/O threads' bound (two threads at pipeline 1) and leaves the
    main thread's (sixteen) where it was."""
    p = perfmodel.load_parameters("default")
    dear = p.with_values(**{"cpu_cycles_handoff[redis]": 4 * p["cpu_cycles_handoff[redis]"]})
    sets = (("p", p), ("dear", dear))
    x = {(n, k): solve(_saturated(n, params=q)).throughput[0] for n in (2, 16) for k, q in sets}
    assert x[(2, "dear")] < x[(2, "p")] * 0.9
    assert x[(16, "dear")] == pytest.approx(x[(16, "p")], rel=1e-5)


def test_one_thread_is_unchanged_by_the_handoff_and_the_io_law():
    """``io-threads 1`` (the default): the main thread does everything, no handoff."""
    p = perfmodel.load_parameters("default")
    dear = p.with_values(**{"cpu_cycles_handoff[redis]": 1e5})
    one, one_dear = _saturated(1), _saturated(1, params=dear)
    assert one.cpu.usl_efficiency[0] == one_dear.cpu.usl_efficiency[0] == 1.0
    assert solve(one).throughput[0] == solve(one_dear).throughput[0]


def test_only_a_spec_with_io_threads_follows_the_law(tmp_path):
    """Redis's spec as ``serial: command`` (Redis 6 and 7: the main thread takes its share of the
    sockets) keeps Amdahl's efficiency at the same command share."""
    from pathlib import Path

    text = Path(perfmodel.load_system("redis").path).read_text()
    assert "\nserial: command_io_threads" in text
    spec = tmp_path / "redis7.yaml"
    spec.write_text(text.replace("\nserial: command_io_threads", "\nserial: command", 1))
    w = Workload(operation="read", read_fraction=1.0, object_bytes=64, dataset_bytes=1e6, clients=64,
                 iodepth=1, replication_factor=1)  # fmt: skip
    old = chain.build(BARE, w, system=str(spec), params="default", thread_cap=4)
    new = chain.build(BARE, w, system="redis", params="default", thread_cap=4)

    def stall(m):  # the command's DRAM stall as cycles at the thread's clock before contention
        return m.cpu.dram_stall * m.cpu.thread_hz / m.cpu.usl_efficiency

    sigma = chain._command_share(old.inputs, stall(old))
    assert old.cpu.usl_efficiency[0] == pytest.approx(scaling.usl_efficiency(4, sigma, 0.0)[0], rel=1e-12)
    command, sockets, _ = chain._command_and_message(new.inputs, stall(new))
    p = perfmodel.load_parameters("default")
    expected = scaling.io_thread_efficiency(4, command, sockets, p["cpu_cycles_handoff[redis]"])[0]
    assert new.cpu.usl_efficiency[0] == pytest.approx(expected, rel=1e-12)
    assert not np.isclose(old.cpu.usl_efficiency[0], new.cpu.usl_efficiency[0])
