"""A system that runs on the load's own threads (spec key ``load_threads``: fio's jobs).

fio(1): ``numjobs`` clones of a job, "each clone of job is spawned as an independent thread or
process", and an asynchronous engine keeps ``iodepth`` I/Os in flight per job, submitted and
reaped by that job. So one job's CPU work per I/O runs on one core however deep its queue:
on a device that is never the bottleneck (tmpfs-ram) the throughput of one job stops rising
with iodepth once that core is busy, and k jobs run k times one job's rate until the cores
run out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import perfmodel
from perfmodel import Workload
from perfmodel.inputs.systems import load_system

PLATFORM = "x86-dl380-e5-2630v4"


def _fio(jobs, iodepth, system="fio", clients=1):
    w = Workload(read_fraction=1.0, object_bytes=4096, io_bytes=4096, dataset_bytes=1e11,
                 clients=clients, threads_per_client=jobs, iodepth=iodepth)  # fmt: skip
    return perfmodel.predict(PLATFORM, w, nodes=1, system=system, device="tmpfs-ram")


def test_fio_declares_load_threads():
    assert load_system("fio").load_threads
    assert not any(load_system(s).load_threads for s in ("redis", "postgresql", "scylla", "ceph"))


def test_worker_threads_are_the_jobs():
    out = _fio(np.array([1, 2, 4, 8]), np.array([64, 32, 16, 8]), clients=np.array([1, 1, 1, 2]))
    np.testing.assert_array_equal(out["shards"], [1, 2, 4, 16])


def test_one_job_is_one_core_whatever_its_depth():
    out = _fio(np.array([1, 1, 1]), np.array([8, 32, 128]))
    x = out["throughput_ops_s"].to_numpy()
    assert (out["bottleneck"] == "cpu").all()
    np.testing.assert_allclose(out["util_cpu"], 1.0, atol=0.02)  # the job's one core is busy
    np.testing.assert_allclose(x / x[-1], 1.0, rtol=0.02)  # deeper queues add no CPU
    # Little's law on the one core: the queue waits iodepth / X
    np.testing.assert_allclose(out["latency_mean_ms"] * 1e-3, [8, 32, 128] / x, rtol=1e-6)


def test_jobs_add_cores_until_they_run_out():
    out = _fio(np.array([1, 2, 4]), np.array([128, 64, 32]))
    x = out["throughput_ops_s"].to_numpy()
    ratio = x[1:] / x[0]
    # each job brings a core (the clock falls a little as more cores are busy: below k x)
    assert (ratio <= np.array([2.0, 4.0]) + 1e-9).all()
    assert (ratio >= 0.85 * np.array([2.0, 4.0])).all()


def test_without_load_threads_the_queue_spreads_over_every_core(tmp_path):
    """The same spec without the key: 128 I/Os of one job on every hardware thread."""
    text = Path(load_system("fio").path).read_text()
    assert "load_threads: true" in text
    pooled = tmp_path / "fio.yaml"
    pooled.write_text(text.replace("load_threads: true", "load_threads: false"))
    capped = _fio(1, 128)["throughput_ops_s"].iloc[0]
    spread = _fio(1, 128, system=str(pooled))["throughput_ops_s"].iloc[0]
    assert spread > 5 * capped


def test_open_arrivals_are_not_capped():
    """An open workload has no fixed threads: the cap does not apply."""
    w = Workload(read_fraction=1.0, object_bytes=4096, io_bytes=4096, dataset_bytes=1e11, arrival_rate=1e5)
    out = perfmodel.predict(PLATFORM, w, nodes=1, system="fio", device="tmpfs-ram")
    assert out["shards"].iloc[0] > 1


@pytest.mark.parametrize("knob", [1, 64])
def test_thread_cap_knob_cannot_add_threads_beyond_the_jobs(knob):
    w = Workload(read_fraction=1.0, object_bytes=4096, io_bytes=4096, dataset_bytes=1e11,
                 clients=1, threads_per_client=4, iodepth=32)  # fmt: skip
    out = perfmodel.predict(PLATFORM, w, nodes=1, system="fio", device="tmpfs-ram", thread_cap=knob)
    assert out["shards"].iloc[0] == min(knob, 4)
