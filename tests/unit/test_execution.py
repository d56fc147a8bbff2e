"""The execution layer (perfmodel.run.execution), sweeps and simulate through it, on this machine.

Real worker processes throughout (no mocks): a task that kills its own
process breaks the pool for real, and Ctrl-C is a real SIGINT. The Dask
cluster tests are in tests/distributed/.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import perfmodel
from perfmodel.cli import main
from perfmodel.plan.sweeps import flatten_grid, iter_sweep
from perfmodel.run import execution
from perfmodel.run.execution import Interrupted, auto_chunk_size, choose_backend, chunk_slices, map_tasks
from perfmodel.sim.run import replication_rng

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = perfmodel.Workload(
    read_fraction=0.8,
    object_bytes=1024,
    dataset_bytes=50e9,
    clients=np.array([20, 80]),
    replication_factor=3,
    consistency="QUORUM",
)


# -------------------------------------------------------------------- tasks (top level: picklable)
def square_after(task):
    """x**2 after sleeping ``delay`` [s] (later tasks finish first when delays fall)."""
    x, delay = task
    time.sleep(delay)
    return x * x


def fail_on_three(x):
    if x == 3:
        raise ValueError("task 3 fails")
    return x


def die_once(task):
    """Kills its own worker process the first time it runs (a marker file remembers)."""
    x, marker, log = task
    with open(log, "a") as f:
        f.write(f"{x}\n")
    if x == 5 and not os.path.exists(marker):
        Path(marker).write_text("died")
        os._exit(1)
    return x + 100


def slow_with_pid(task):
    """Writes its pid, then sleeps ``delay`` [s]."""
    x, folder, delay = task
    (Path(folder) / f"{x}.pid").write_text(str(os.getpid()))
    time.sleep(delay)
    return x


def rng_draw(seed_index):
    seed, index = seed_index
    return execution.task_rng(seed, index).random(3).tolist()


# -------------------------------------------------------------------- pure helpers
def test_chunks_cover_the_range_once_in_order():
    for n, size in [(0, 3), (1, 1), (10, 3), (10, 10), (10, 20)]:
        covered = [i for s in chunk_slices(n, size) for i in range(s.start, s.stop)]
        assert covered == list(range(n))
        assert all(0 < s.stop - s.start <= size for s in chunk_slices(n, size))
    with pytest.raises(ValueError, match="chunk size"):
        chunk_slices(5, 0)


def test_auto_chunk_size_gives_each_worker_about_four_units():
    assert auto_chunk_size(400, 2) == 50
    assert auto_chunk_size(400, 100) == 1
    assert auto_chunk_size(3, 2) == 1
    assert len(chunk_slices(100_000, auto_chunk_size(100_000, 100))) == 400


def test_backend_choice():
    assert choose_backend(10, workers=1) == ("serial", 1)
    assert choose_backend(1) == ("serial", 1)
    assert choose_backend(10, workers=2) == ("processes", 2)
    assert choose_backend(3, workers=8) == ("processes", 3)
    assert choose_backend(10, scheduler="tcp://10.0.0.1:8786") == ("dask", None)
    assert choose_backend(10, scheduler="10.0.0.1:8786") == ("dask", None)
    assert choose_backend(10, scheduler="local", workers=2) == ("dask", 2)
    with pytest.raises(ValueError, match="scheduler"):
        choose_backend(10, scheduler="nowhere")
    with pytest.raises(ValueError, match="workers"):
        choose_backend(10, workers=0)


def test_task_rng_is_the_replication_seeding_and_depends_on_identity_only():
    a = execution.task_rng(7, 3).random(5)
    assert np.array_equal(a, replication_rng(7, 3).random(5))
    assert not np.array_equal(a, execution.task_rng(7, 4).random(5))
    tasks = [(7, i) for i in range(6)]
    assert map_tasks(rng_draw, tasks, workers=2, progress=False) == [rng_draw(t) for t in tasks]


# -------------------------------------------------------------------- map_tasks
@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_back_in_task_order(workers):
    tasks = [(x, 0.02 * (8 - x)) for x in range(8)]  # the last tasks finish first
    assert map_tasks(square_after, tasks, workers=workers, chunk_size=1, progress=False) == [
        x * x for x in range(8)
    ]
    assert map_tasks(square_after, [], workers=workers, progress=False) == []


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_task_raises_or_is_returned_in_place(workers):
    with pytest.raises(ValueError, match="task 3 fails"):
        map_tasks(fail_on_three, range(6), workers=workers, progress=False)
    out = map_tasks(fail_on_three, range(6), workers=workers, progress=False, errors="return")
    assert [type(r) for r in out] == [int, int, int, ValueError, int, int]
    assert out[:3] + out[4:] == [0, 1, 2, 4, 5]


def test_a_worker_process_that_dies_is_replaced_and_every_result_comes_once(tmp_path):
    marker, log = tmp_path / "died", tmp_path / "runs.log"
    tasks = [(x, str(marker), str(log)) for x in range(12)]
    out = map_tasks(die_once, tasks, workers=2, chunk_size=2, progress=False)
    assert out == [x + 100 for x in range(12)]
    assert marker.exists()  # the worker running task 5 did die
    runs = [int(line) for line in log.read_text().split()]
    assert runs.count(5) == 2  # task 5 ran twice, its result was taken once
    assert set(runs) == set(range(12))


def test_a_pool_that_keeps_breaking_gives_up(tmp_path):
    from concurrent.futures.process import BrokenProcessPool

    # no restarts allowed: the first death is final, and says how far the run got
    tasks = [(x, str(tmp_path / "died"), str(tmp_path / "log")) for x in range(8)]
    with pytest.raises(BrokenProcessPool, match="died 1 times"):
        map_tasks(die_once, tasks, workers=2, chunk_size=1, progress=False, retries=0)
    (tmp_path / "died").unlink()
    out = map_tasks(die_once, tasks, workers=2, chunk_size=1, progress=False, retries=0, errors="return")
    assert isinstance(out[5], BrokenProcessPool)  # the task that killed its worker
    finished = [r for r in out if not isinstance(r, BaseException)]
    assert finished and set(finished) <= {x + 100 for x in range(8)}


@pytest.fixture(autouse=True)
def _ctrl_c_raises():
    """Python's own SIGINT handler for the test: a test run started in the background by a
    non-interactive shell inherits SIGINT ignored, and Ctrl-C would then never arrive."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _interrupt_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_in_process_keeps_the_finished_tasks():
    tasks = [(x, 0.05) for x in range(200)]  # 10 s in all; interrupted at 0.5 s
    timer = _interrupt_after(0.5)
    try:
        with pytest.raises(Interrupted) as caught:
            map_tasks(square_after, tasks, workers=1, progress=False)
    finally:
        timer.cancel()
    done = caught.value.done
    assert 0 < sum(done) < len(tasks)
    assert all(done[: sum(done)]) and not any(done[sum(done) :])
    assert caught.value.results[: sum(done)] == [x * x for x in range(sum(done))]


def test_ctrl_c_stops_local_workers_and_keeps_the_finished_tasks(tmp_path):
    # four quick tasks, then long ones that would run for a minute if not stopped
    tasks = [(x, str(tmp_path), 0.05 if x < 4 else 60.0) for x in range(8)]
    timer = _interrupt_after(2.5)
    try:
        with pytest.raises(Interrupted) as caught:
            map_tasks(slow_with_pid, tasks, workers=2, chunk_size=1, progress=False)
    finally:
        timer.cancel()
    stop = caught.value
    assert stop.done[:4] == [True] * 4 and stop.results[:4] == [0, 1, 2, 3]
    assert not any(stop.done[4:])
    pids = {int(p.read_text()) for p in tmp_path.glob("*.pid")}
    time.sleep(0.5)
    alive = [pid for pid in pids if _alive(pid)]
    assert not alive, f"worker processes left running: {alive}"


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# -------------------------------------------------------------------- simulate and sweep through it
def test_simulate_is_identical_in_process_and_on_local_workers():
    kwargs = dict(nodes=3, system="scylla", requests=4000, replications=3, seed=11, progress=False)
    one = perfmodel.simulate("power8-s821lc-10c", WORKLOAD, workers=1, cores=[4, 8], **kwargs)
    two = perfmodel.simulate("power8-s821lc-10c", WORKLOAD, workers=2, cores=[4, 8], **kwargs)
    pd.testing.assert_frame_equal(one.summary, two.summary, check_exact=True)
    pd.testing.assert_frame_equal(one.replication_metrics, two.replication_metrics, check_exact=True)
    pd.testing.assert_frame_equal(one.records, two.records, check_exact=True)
    assert one.summary["replications"].tolist() == [3, 3]


def test_flatten_grid_broadcasts_like_predict():
    n, flat = flatten_grid({"a": np.arange(3)[:, None], "b": [1, 2], "c": "x"})
    assert n == 6 and flat["a"].tolist() == [0, 0, 1, 1, 2, 2] and flat["b"].tolist() == [1, 2] * 3
    assert flat["c"] == "x"
    with pytest.raises(ValueError, match="do not broadcast"):
        flatten_grid({"a": [1, 2], "b": [1, 2, 3]})


def test_sweep_predict_in_chunks_equals_one_predict_call():
    """Chunks equal one call to solver precision (the closed-loop solver stops per batch, so a
    different batch can differ by ~1e-10); the same chunks give identical numbers anywhere."""
    cores = np.arange(1, 11)[:, None]
    table = perfmodel.sweep(
        "power8-s821lc-10c", WORKLOAD, system="scylla", nodes=3, cores=cores, chunk_size=3, workers=1
    )
    assert table["configuration"].tolist() == list(range(20))
    assert table["clients"].tolist() == [20, 80] * 10  # a varying input predict does not show
    import dataclasses

    flat = perfmodel.predict(
        "power8-s821lc-10c",
        dataclasses.replace(WORKLOAD, clients=np.tile([20, 80], 10)),
        system="scylla",
        nodes=3,
        cores=np.repeat(np.arange(1, 11), 2),
    )
    pd.testing.assert_frame_equal(table.drop(columns=["configuration", "clients"]), flat, rtol=1e-9)
    parallel = perfmodel.sweep(
        "power8-s821lc-10c", WORKLOAD, system="scylla", nodes=3, cores=cores, chunk_size=3, workers=2
    )
    pd.testing.assert_frame_equal(table, parallel, check_exact=True)
    assert isinstance(table["bottleneck"].dtype, pd.CategoricalDtype)


def test_a_streamed_sweep_yields_the_sweeps_rows_chunk_by_chunk():
    """iter_sweep: chunks of chunk_size in grid order, each with sweep's columns; together, sweep's table
    (the same chunks, so the same numbers exactly)."""
    cores = np.arange(1, 11)[:, None]
    chunks = list(
        iter_sweep("power8-s821lc-10c", WORKLOAD, system="scylla", nodes=3, cores=cores, chunk_size=3)
    )
    assert [len(c) for c in chunks] == [3] * 6 + [2]
    assert chunks[1]["configuration"].tolist() == [3, 4, 5] and chunks[1]["clients"].tolist() == [80, 20, 80]
    table = perfmodel.sweep(
        "power8-s821lc-10c", WORKLOAD, system="scylla", nodes=3, cores=cores, chunk_size=3, workers=1
    )
    streamed = pd.concat(chunks, ignore_index=True)
    pd.testing.assert_frame_equal(streamed, table, check_exact=True, check_categorical=False)


def test_sweep_simulate_is_simulate_with_the_grid_as_columns():
    kwargs = dict(system="scylla", nodes=3, method="simulate", requests=3000, replications=2, seed=3)
    a = perfmodel.sweep(
        ["power8-s821lc-10c", "x86-dl380-e5-2630v4"], WORKLOAD, workers=1, progress=False, **kwargs
    )
    b = perfmodel.sweep(
        ["power8-s821lc-10c", "x86-dl380-e5-2630v4"], WORKLOAD, workers=2, progress=False, **kwargs
    )
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert a["platform"].astype(str).tolist() == ["power8-s821lc-10c", "x86-dl380-e5-2630v4"]
    assert (a["replications"] == 2).all() and a["throughput_ops_s"].gt(0).all()


def test_sweep_rejects_an_unknown_method():
    with pytest.raises(ValueError, match="method"):
        perfmodel.sweep("power8-s821lc-10c", WORKLOAD, system="scylla", method="guess")


def test_cli_results_do_not_depend_on_workers(capsys):
    wl = str(ROOT / "data" / "workloads" / "scylla-read-heavy.yaml")
    outputs = []
    for verb, extra in [("predict", []), ("simulate", ["--requests", "3000", "--replications", "3"])]:
        for workers in ("1", "2"):
            argv = [verb, wl, "--platform", "power8-s821lc-10c", "--platform", "x86-dl380-e5-2630v4"]
            assert main([*argv, *extra, "--workers", workers, "--format", "csv"]) == 0
            outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and outputs[2] == outputs[3]
    assert "throughput_ops_s" in outputs[0] and "replications" in outputs[2]
    assert main(["predict", wl, "--platform", "power8-s821lc-10c", "--format", "csv"]) == 0
    assert "configuration" not in capsys.readouterr().out.splitlines()[0]


def test_a_script_read_from_stdin_runs_in_process_with_a_warning():
    # workers re-import __main__ from its file; '<stdin>' has none, so the pool could never start
    import subprocess
    import sys

    script = (
        "from perfmodel.run.execution import map_tasks\n"
        "print(map_tasks(abs, [-1, -2, 3], workers=2, progress=False))\n"
    )
    out = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1, 2, 3]"
    assert "standard input" in out.stderr


def test_line_progress_for_logs_is_silent_for_short_work_and_counts_long_work():
    import io

    from perfmodel.run.execution import LineProgress

    quiet = io.StringIO()
    with LineProgress(5, "runs", "run", every_s=3600, stream=quiet) as bar:
        for _ in range(5):
            bar.update(1)
    assert quiet.getvalue() == ""  # shorter than the interval: nothing
    log = io.StringIO()
    with LineProgress(4, "notebooks", "run", every_s=0.0, stream=log) as bar:
        bar.update(1)
        bar.update(3)
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("notebooks: 1 / 4 runs (25%)") and "left" in lines[0]
    assert lines[-1].startswith("notebooks: 4 / 4 runs (100%)") and "left" not in lines[-1]
