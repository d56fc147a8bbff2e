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


def test_without_its_log_a_rocksdb_write_spends_less_cpu_by_the_measured_share():
    """log_cpu_share and ordered_insert_saving come from db_bench run here (tools.rocksdb_write_path),
    not from the corpus; a write's CPU is cpu_cycles_write less the shares it does not spend."""
    spec = load_system("rocksdb")
    log = spec.parameter(pm.load_parameters(), "log_cpu_share")
    ordered = spec.parameter(pm.load_parameters(), "ordered_insert_saving")
    assert 0 < log < 1 and 0 < ordered < 1

    def cpu_per_write(access, setting):
        w = Workload(operation="write", read_fraction=0.0, object_bytes=400.0, dataset_bytes=1e9, clients=1,
                     access_pattern=access)  # fmt: skip
        r = pm.predict(platform="aws-m5d-2xlarge", workload=w, system="rocksdb", nodes=1, durability=setting)
        return r.util_cpu.iloc[0] / r.throughput_ops_s.iloc[0]

    base = cpu_per_write("random", "spec")
    assert cpu_per_write("random", "off") == pytest.approx(base * (1 - log), rel=1e-9)
    assert cpu_per_write("sequential", "spec") == pytest.approx(base * (1 - ordered), rel=1e-9)
    assert cpu_per_write("sequential", "off") == pytest.approx(base * (1 - log - ordered), rel=1e-9)
    # async keeps the append (only the wait goes), and a system that does not measure it spends the same
    assert cpu_per_write("random", "async") == pytest.approx(base, rel=1e-12)


def test_the_microbenchmark_record_gives_the_shipped_shares():
    """The spec's shares are what the recorded db_bench runs give (medians per run kind)."""
    import csv
    import statistics

    from perfmodel.inputs._data import data_dir
    from tools.rocksdb_write_path import shares

    text = (data_dir() / "microbench" / "rocksdb-write-path.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    first = rows[0]["date"]
    medians = {
        name: statistics.median(
            float(r["micros_per_op"]) for r in rows if r["run"] == name and r["date"] == first
        )
        for name in {r["run"] for r in rows}
    }
    got = shares(medians)
    spec = load_system("rocksdb")
    assert round(got["log_cpu_share"], 3) == spec.parameter(pm.load_parameters(), "log_cpu_share")
    for name in ("ordered_insert_saving", "vector_insert_saving"):
        assert round(got[name], 3) == spec.parameter(pm.load_parameters(), name)


def test_a_vector_memtable_appends_without_the_search():
    params = pm.load_parameters()
    saving = load_system("rocksdb").parameter(params, "vector_insert_saving")
    ordered = load_system("rocksdb").parameter(params, "ordered_insert_saving")

    def cpu_per_write(access, **knobs):
        w = Workload(operation="write", read_fraction=0.0, object_bytes=400.0, dataset_bytes=1e9, clients=1,
                     access_pattern=access)  # fmt: skip
        r = pm.predict(platform="aws-m5d-2xlarge", workload=w, system="rocksdb", nodes=1, **knobs)
        return r.util_cpu.iloc[0] / r.throughput_ops_s.iloc[0]

    base = cpu_per_write("random")
    assert cpu_per_write("random", memtable="vector") == pytest.approx(base * (1 - saving), rel=1e-9)
    # in key order the search is skipped once, not twice
    both = cpu_per_write("sequential", memtable="vector")
    assert both == pytest.approx(base * (1 - max(saving, ordered)), rel=1e-9)
    with pytest.raises(ValueError, match="memtable"):
        w = Workload(operation="write", read_fraction=0.0, clients=1)
        pm.predict(platform="aws-m5d-2xlarge", workload=w, system="cassandra", nodes=1, memtable="vector")
