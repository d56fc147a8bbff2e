"""Workload: validation on construction, derived values, YAML-style and benchmark-row building."""

from __future__ import annotations

import numpy as np
import pytest

import perfmodel
from perfmodel.inputs.workload import Workload


def test_closed_loop_concurrency_and_defaults():
    w = Workload(operation="read", read_fraction=1.0, object_bytes=310, clients=16, threads_per_client=200)
    assert w.closed and w.concurrency == 3200
    assert w.io_bytes == 310  # defaults to the object size
    assert w.acks == 1


def test_open_loop():
    w = Workload(arrival_rate=5e4, read_fraction=0.9)
    assert not w.closed
    with pytest.raises(ValueError, match="^concurrency"):
        _ = w.concurrency


@pytest.mark.parametrize(
    ("rf", "level", "acks"),
    [(3, "QUORUM", 2), (5, "QUORUM", 3), (3, "ALL", 3), (2, "ONE", 1), (3, 2, 2), (1, "quorum", 1)],
)
def test_consistency_levels(rf, level, acks):
    assert Workload(clients=1, replication_factor=rf, consistency=level).acks == acks


def test_array_fields_broadcast():
    w = Workload(clients=np.array([1, 8, 64]), read_fraction=np.array([0.5, 0.7, 0.9]))
    assert np.array_equal(w.concurrency, [1, 8, 64])


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"clients": 1, "read_fraction": 1.5}, "read_fraction"),
        ({"clients": 1, "read_fraction": np.nan}, "read_fraction"),
        ({"clients": 0}, "clients"),
        ({"clients": 2.5}, "clients"),
        ({}, "clients"),
        ({"clients": 1, "arrival_rate": 10}, "clients"),
        ({"arrival_rate": 0}, "arrival_rate"),
        ({"clients": 1, "object_bytes": 0}, "object_bytes"),
        ({"clients": 1, "dataset_bytes": -1}, "dataset_bytes"),
        ({"clients": 1, "replication_factor": 0}, "replication_factor"),
        ({"clients": 1, "replication_factor": 2, "consistency": "ALL"}, None),
        ({"clients": 1, "replication_factor": 2, "consistency": 3}, "consistency"),
        ({"clients": 1, "consistency": "SOME"}, "consistency"),
        ({"clients": 1, "operation": "scan"}, "operation"),
        ({"clients": 1, "key_distribution": "pareto"}, "key_distribution"),
        ({"clients": 1, "think_time_s": -1}, "think_time_s"),
        ({"clients": 1, "object_bytes": "big"}, "object_bytes"),
    ],
)
def test_impossible_values_name_the_field(kwargs, field):
    if field is None:
        Workload(**kwargs)  # valid: ALL of 2 replicas
        return
    with pytest.raises(ValueError, match=f"^{field}"):
        Workload(**kwargs)


def test_from_dict_converts_units_and_rejects_unknown_keys():
    w = Workload.from_dict(
        {"operation": "read", "read_fraction": 1, "dataset_gib": 2, "think_time_ms": 5, "clients": 4}
    )
    assert w.dataset_bytes == 2 * 2**30 and w.think_time_s == pytest.approx(0.005)
    with pytest.raises(ValueError, match="^datasize: unknown workload key"):
        Workload.from_dict({"clients": 1, "datasize": 3})
    with pytest.raises(ValueError, match="^dataset_gb"):
        Workload.from_dict({"clients": 1, "dataset_gb": 3, "dataset_bytes": 1})


@pytest.mark.parametrize(
    "figure_id",
    [
        "S-IBM-P8-1",
        "seed001-p2-nvme-ops",
        "S-RH2-QD32-m",
        "seed002-hci-untuned-max-tpmc",
        "seed003-read-iops-mean",
    ],
)
def test_every_seed_system_builds_from_its_recorded_row(figure_id):
    row = perfmodel.load_benchmarks().set_index("figure_id").loc[figure_id].to_dict()
    w = Workload.from_benchmark(row)
    assert w.closed and w.concurrency >= 1
    expected = {
        "S-IBM-P8-1": 3200,
        "seed001-p2-nvme-ops": 16,
        "S-RH2-QD32-m": 105 * 32,
        "seed002-hci-untuned-max-tpmc": 300,
        "seed003-read-iops-mean": 32,
    }[figure_id]
    assert w.concurrency == expected


def test_with_changes_derives_the_request_sizes_again_for_a_new_object_size():
    w = Workload(object_bytes=1024, arrival_rate=1.0)
    bigger = w.with_changes(object_bytes=4096)
    assert (bigger.io_bytes, bigger.message_bytes) == (4096.0, 4096.0)
    # a size the caller gave stays: an fio block size is not the object size
    fio = Workload(object_bytes=1024, io_bytes=65536, arrival_rate=1.0).with_changes(object_bytes=4096)
    assert (fio.io_bytes, fio.message_bytes) == (65536.0, 65536.0)
    assert w.with_changes(io_bytes=512).message_bytes == 512.0
    tpcc = Workload(operation="tpcc", arrival_rate=1.0)
    assert tpcc.with_changes(object_bytes=4096).message_bytes == tpcc.message_bytes
    with pytest.raises(ValueError, match="object_bytes"):
        w.with_changes(object_bytes=-1.0)
