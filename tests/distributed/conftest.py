"""A real Dask cluster on loopback: ``dask scheduler`` and two ``dask worker`` processes.

Each is its own process group (scheduler; nanny + worker), started as a real
deployment would be, and killed with its group at the end, so nothing is
left behind. Workers find the test task functions (``cluster_tasks.py``)
through PYTHONPATH.

Hook for the notebook batch: the ``dask_cluster`` fixture gives the
scheduler address; a batch test passes it as ``scheduler=`` (or
``--scheduler``) and compares with the local run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
START_TIMEOUT_S = 60.0


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen] = field(default_factory=list)

    def worker_pids(self, worker: subprocess.Popen) -> set[int]:
        """Pids of a ``dask worker`` command: the nanny and its worker process."""
        import psutil

        proc = psutil.Process(worker.pid)
        return {worker.pid, *(c.pid for c in proc.children(recursive=True))}

    def kill(self, proc: subprocess.Popen) -> None:
        """SIGKILL a process group (no clean shutdown: a machine lost)."""
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=10)


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH", "")]))
    return env


def _spawn(argv: list[str], tmp: Path) -> subprocess.Popen:
    """A process in its own session (group), output appended to tmp/cluster.log."""
    with open(tmp / "cluster.log", "ab") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [sys.executable, "-m", *argv], stdout=log, stderr=log, env=_env(), start_new_session=True, cwd=tmp
        )


def start_cluster(tmp: Path, n_workers: int = 2) -> Cluster:
    """Scheduler on 127.0.0.1 (random port, address via a scheduler file) and workers."""
    scheduler_file = tmp / "scheduler.json"
    scheduler = _spawn(
        [
            "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
            "--no-dashboard", "--scheduler-file", str(scheduler_file),
        ],
        tmp,
    )  # fmt: skip
    cluster = Cluster(address="", scheduler=scheduler)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not scheduler_file.exists():
            if time.monotonic() > deadline or scheduler.poll() is not None:
                raise RuntimeError(f"dask scheduler did not start: {(tmp / 'cluster.log').read_text()}")
            time.sleep(0.1)
        time.sleep(0.2)  # let the scheduler finish writing the file
        cluster.address = json.loads(scheduler_file.read_text())["address"]
        for k in range(n_workers):
            cluster.workers.append(
                _spawn(
                    [
                        "distributed.cli.dask_worker",
                        cluster.address,
                        "--nthreads",
                        "1",
                        "--nworkers",
                        "1",
                        "--no-dashboard",
                        "--memory-limit",
                        "0",
                        "--name",
                        f"w{k}",
                        "--local-directory",
                        str(tmp / f"w{k}"),
                    ],
                    tmp,
                )  # fmt: skip
            )
        from distributed import Client

        with Client(cluster.address, timeout="30s") as client:
            client.wait_for_workers(n_workers, timeout=START_TIMEOUT_S)
    except BaseException:
        stop_cluster(cluster)
        raise
    return cluster


def stop_cluster(cluster: Cluster) -> None:
    for proc in [*cluster.workers, cluster.scheduler]:
        cluster.kill(proc)


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """A scheduler and two single-threaded worker processes on loopback, for a test module."""
    cluster = start_cluster(tmp_path_factory.mktemp("dask"))
    yield cluster
    stop_cluster(cluster)


@pytest.fixture
def fresh_cluster(tmp_path):
    """A cluster of its own (for a test that kills a worker)."""
    cluster = start_cluster(tmp_path)
    yield cluster
    stop_cluster(cluster)
