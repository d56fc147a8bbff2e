"""Durability (perfmodel.mechanisms.durability): asynchronous commits and no log at all."""

from __future__ import annotations

import pytest

import perfmodel as pm
from perfmodel import Workload
from perfmodel.evidence.figure_plan import figure_config
from perfmodel.inputs.systems import load_system
from perfmodel.mechanisms import durability, ordering

PLATFORM = "x86-xeon-x5650-2s"


def _write(system, setting, access="random"):
    w = Workload(operation="write", read_fraction=0.0, object_bytes=800.0, dataset_bytes=1e11, clients=16,
                 access_pattern=access)  # fmt: skip
    return pm.predict(platform=PLATFORM, workload=w, system=system, nodes=1, durability=setting).iloc[0]


def _bytes_per_write(row):
    return row.device_write_bytes_s / row.throughput_ops_s


@pytest.mark.parametrize("system", ["mysql", "postgresql"])
def test_an_asynchronous_commit_does_not_wait_for_the_log_but_still_writes_it(system):
    spec, lazy, off = _write(system, "spec"), _write(system, "async"), _write(system, "off")
    assert lazy.write_latency_mean_ms < spec.write_latency_mean_ms
    assert lazy.throughput_ops_s >= spec.throughput_ops_s  # never slower than waiting
    # the log's bytes still load it, at its bandwidth a batch at a time: U = X x bytes / bandwidth / c,
    # c its servers (group commit: a flush slot per outstanding request, the 16 clients)
    s = load_system(system)
    redo = s.parameter(pm.load_parameters(), s.log_bytes_per_write)
    plat = pm.load_platform(PLATFORM)
    bandwidth = plat.device_spec(plat.storage[0].device).seq_write_bytes_s
    assert load_system(system).group_commit
    assert lazy.util_log == pytest.approx(lazy.throughput_ops_s * redo / bandwidth / 16, rel=1e-6)
    assert 0 < lazy.util_log < spec.util_log
    assert off.util_log == 0.0 and off.throughput_ops_s == pytest.approx(lazy.throughput_ops_s, rel=1e-3)
    assert _bytes_per_write(lazy) == pytest.approx(_bytes_per_write(spec), rel=1e-6)  # data device


def test_an_lsm_tree_without_its_log_writes_one_byte_per_user_byte_less():
    factor = load_system("rocksdb").parameter(pm.load_parameters(), "background_write_factor")
    spec, off = _write("rocksdb", "spec"), _write("rocksdb", "off")
    assert _bytes_per_write(spec) == pytest.approx(800 * factor, rel=1e-6)
    assert _bytes_per_write(off) == pytest.approx(800 * (factor - durability.LOG_COPY), rel=1e-6)
    # RocksDB's writes never waited for the log (sync = false): async changes nothing
    assert _write("rocksdb", "async").throughput_ops_s == spec.throughput_ops_s
    # sequential inserts without the log: the flush's copy alone
    seq = _write("rocksdb", "off", access="sequential")
    assert _bytes_per_write(seq) == pytest.approx(800 * (ordering.SEQUENTIAL_LSM_WRITE_FACTOR - 1), rel=1e-6)


def test_the_knob_is_refused_where_there_is_no_log():
    with pytest.raises(ValueError, match="durability"):
        _write("redis", "off")
    with pytest.raises(ValueError, match="durability"):
        _write("mysql", "lazy")


def test_the_figure_column_sets_the_knob():
    row = {"system": "rocksdb", "platform_id": PLATFORM, "nodes": 1, "operation": "write",
           "read_fraction": 0.0, "object_bytes": 800, "clients": 1, "durability": "off",
           "level": "client", "metric": "throughput", "value": 1.0, "unit": "ops/s"}  # fmt: skip
    assert figure_config(row)["durability"] == "off"
    del row["durability"]
    assert "durability" not in figure_config(row)
