"""db_bench's ``micros/op`` by release: wall time or the threads' time per operation."""

from __future__ import annotations

import pytest

from perfmodel.evidence.figure_plan import predict_figure
from perfmodel.evidence.ingest.db_bench import micros_per_op_metric

ROW = {
    "figure_id": "t-1", "source_id": "lab", "source": "lab", "locator": "run", "role": "measured",
    "system": "rocksdb", "platform_id": "x86-xeon-x5650-2s", "device_id": "", "nodes": 1,
    "operation": "read", "read_fraction": 1.0, "object_bytes": 800, "dataset_gb": 1.0,
    "clients": 2, "threads_per_client": 5, "level": "client", "metric": "throughput",
    "value": 1.0, "unit": "ops/s",
}  # fmt: skip


@pytest.mark.parametrize(
    ("header", "metric"),
    [
        ("RocksDB:    version 5.18.3", "time_per_op"),  # 2.0-5.x: elapsed / ops
        ("RocksDB:    version 2.0", "time_per_op"),
        ("RocksDB:    version 6.0.1", "thread_time_per_op"),  # d9c9f3c (#4949) is in 6.0.1
        ("RocksDB:    version 8.4.0", "thread_time_per_op"),
        ("RocksDB:    version 1.5.9", "thread_time_per_op"),  # before 4985a9f, as LevelDB
        ("LevelDB:    version 1.23", "thread_time_per_op"),
    ],
)
def test_the_version_line_decides_what_micros_per_op_is(header, metric):
    assert micros_per_op_metric(f"{header}\nDate: x\n") == (metric, "")


def test_without_a_version_line_the_current_meaning_is_assumed_and_said():
    metric, note = micros_per_op_metric("fillrandom : 1.0 micros/op 1000 ops/sec;\n")
    assert metric == "thread_time_per_op" and "no 'RocksDB: version' line" in note


def test_threads_time_per_op_is_the_threads_over_the_predicted_throughput():
    rate = predict_figure(ROW)[0]
    wall = predict_figure({**ROW, "metric": "time_per_op", "unit": "us"})[0]
    threads = predict_figure({**ROW, "metric": "thread_time_per_op", "unit": "us"})[0]
    assert wall == pytest.approx(1 / rate, rel=1e-12)
    assert threads == pytest.approx(10 / rate, rel=1e-12)  # 2 clients x 5 threads
    single = {**ROW, "clients": 1, "threads_per_client": ""}
    assert predict_figure({**single, "metric": "thread_time_per_op", "unit": "us"})[0] == pytest.approx(
        1 / predict_figure(single)[0], rel=1e-12
    )
