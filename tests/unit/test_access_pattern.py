"""Sequential access (perfmodel.mechanisms.ordering): the workload field, the figure column, and
what it changes -- only where the store keeps key order."""

from __future__ import annotations

import numpy as np
import pytest

import perfmodel as pm
from perfmodel import Workload
from perfmodel.evidence.figure_plan import figure_config
from perfmodel.inputs.systems import load_system
from perfmodel.mechanisms import ordering

PLATFORM = "x86-xeon-x5650-2s"


def _predict(system, access, read_fraction, **kw):
    w = Workload(
        operation="mixed",
        read_fraction=read_fraction,
        object_bytes=kw.pop("object_bytes", 800.0),
        dataset_bytes=1e12,  # far beyond the cache: reads go to the device
        clients=16,
        access_pattern=access,
    )
    return pm.predict(platform=PLATFORM, workload=w, system=system, nodes=1, **kw).iloc[0]


def test_pages_per_key_is_the_keys_share_of_a_page_only_in_order():
    share = ordering.pages_per_key([800.0, 800.0, 8192.0], 4096.0, np.array([True, False, True]))
    np.testing.assert_allclose(share, [800 / 4096, 1.0, 1.0])


def test_background_factor_caps_only_an_ordered_lsm_tree():
    got = ordering.background_write_factor(
        np.array([12.0, 12.0, 12.0, 1.5]),
        np.array([True, False, True, True]),
        np.array([True, True, False, True]),
    )
    np.testing.assert_allclose(got, [ordering.SEQUENTIAL_LSM_WRITE_FACTOR, 12.0, 12.0, 1.5])


def test_workload_refuses_an_unknown_pattern_and_takes_arrays():
    with pytest.raises(ValueError, match="access_pattern: must be one of random, sequential"):
        Workload(clients=1, access_pattern="strided")
    w = Workload(clients=1, access_pattern=["random", "sequential"])
    assert list(w.access_pattern) == ["random", "sequential"]


def test_sequential_reads_of_an_ordered_store_read_a_keys_share_of_a_block():
    """RocksDB keeps keys sorted: a scan reads each 4 KiB block once for its 5 keys of 800 B."""
    rnd, seq = _predict("rocksdb", "random", 1.0), _predict("rocksdb", "sequential", 1.0)
    per_op_rnd = rnd.device_read_iops / rnd.throughput_ops_s
    per_op_seq = seq.device_read_iops / seq.throughput_ops_s
    assert per_op_seq == pytest.approx(per_op_rnd * 800 / 4096, rel=1e-9)


def test_sequential_inserts_into_an_lsm_tree_write_only_the_log_and_the_flush():
    rnd, seq = _predict("rocksdb", "random", 0.0), _predict("rocksdb", "sequential", 0.0)
    params = pm.load_parameters()
    factor = load_system("rocksdb").parameter(params, "background_write_factor")
    assert factor > ordering.SEQUENTIAL_LSM_WRITE_FACTOR  # else the test shows nothing
    bytes_rnd = rnd.device_write_bytes_s / rnd.throughput_ops_s
    bytes_seq = seq.device_write_bytes_s / seq.throughput_ops_s
    assert bytes_rnd == pytest.approx(800 * factor, rel=1e-6)
    assert bytes_seq == pytest.approx(800 * ordering.SEQUENTIAL_LSM_WRITE_FACTOR, rel=1e-6)
    assert seq.throughput_ops_s >= rnd.throughput_ops_s


@pytest.mark.parametrize("system", ["cassandra", "scylla", "redis", "ceph", "postgresql"])
def test_a_store_that_does_not_keep_key_order_sees_no_difference(system):
    assert load_system(system).key_order != "ordered"
    for rf in (0.0, 1.0):
        rnd, seq = _predict(system, "random", rf), _predict(system, "sequential", rf)
        assert seq.throughput_ops_s == rnd.throughput_ops_s
        assert seq.latency_p99_ms == rnd.latency_p99_ms


def test_the_figure_column_reaches_the_workload():
    row = {
        "system": "rocksdb", "platform_id": PLATFORM, "nodes": 1, "operation": "write",
        "read_fraction": 0.0, "object_bytes": 800, "clients": 1, "access_pattern": "sequential",
        "level": "client", "metric": "throughput", "value": 1.0, "unit": "ops/s",
    }  # fmt: skip
    assert figure_config(row)["workload"].access_pattern == "sequential"
    row["access_pattern"] = float("nan")  # blank: random
    assert figure_config(row)["workload"].access_pattern == "random"


def test_a_spec_refuses_an_unknown_key_order(tmp_path):
    from pathlib import Path

    text = Path(load_system("rocksdb").path).read_text().replace("key_order: ordered", "key_order: sorted")
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match="key_order"):
        load_system(str(path))


def test_a_range_reads_the_pages_its_rows_fill_in_an_ordered_store():
    """InnoDB's clustered index: 100 more rows of 200 B fill 100 x 200 / 16 KiB more of a page."""
    w = Workload(operation="read", read_fraction=1.0, object_bytes=200.0, dataset_bytes=1e12, clients=16)

    def reads_per_op(system, **kw):
        r = pm.predict(platform=PLATFORM, workload=w, system=system, nodes=1, **kw).iloc[0]
        return r.device_read_iops / r.throughput_ops_s

    page = load_system("mysql").page_bytes
    one, rng = reads_per_op("mysql"), reads_per_op("mysql", rows_per_op=101)
    assert rng == pytest.approx(one * (1 + 100 * 200 / page), rel=1e-9)
    np.testing.assert_allclose(
        ordering.range_pages([100, 100], 200.0, page, [True, False]), [100 * 200 / page, 0]
    )
    # a heap (PostgreSQL): where a range's rows lie is not modelled, no page is added
    assert reads_per_op("postgresql", rows_per_op=101) == pytest.approx(reads_per_op("postgresql"), rel=1e-12)
