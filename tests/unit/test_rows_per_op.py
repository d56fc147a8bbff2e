"""Index lookups and rows per operation (issue 17, gap rows-per-statement): an index lookup beyond one
per statement (an IN-list key) costs the system's ``cpu_cycles_key`` and, uncached, a page read; a row
beyond one per lookup (the next row of a range or scan) costs ``cpu_cycles_row`` -- checked in closed
form on the CPU demand and the page reads, and on the recorded figures that state them."""

import numpy as np
import pytest

import perfmodel
from perfmodel.inputs.params import load_parameters
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

PLATFORM = "x86-dl380-e5-2630v4"


def _model(system="postgresql", params=None, **knobs):
    w = Workload(operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=1e9, clients=8,
                 replication_factor=1)  # fmt: skip
    return chain.build(PLATFORM, w, nodes=1, system=system, params=params, **knobs)


def test_one_row_per_statement_is_the_default_and_costs_nothing_extra():
    base = _model()
    same = _model(rows_per_op=1.0)
    fourteen = _model(statements_per_op=14)
    also = _model(statements_per_op=14, rows_per_op=14)
    np.testing.assert_allclose(same.demands.cpu_read, base.demands.cpu_read)
    np.testing.assert_allclose(also.demands.cpu_read, fourteen.demands.cpu_read)
    fewer = _model(statements_per_op=14, keys_per_op=2, rows_per_op=3)  # fewer than statements: no credit
    np.testing.assert_allclose(fewer.demands.cpu_read, fourteen.demands.cpu_read)


@pytest.mark.parametrize("system", ["mysql", "postgresql", "opengauss"])
def test_each_extra_lookup_and_row_costs_its_cycles_at_the_threads_clock(system):
    params = load_parameters("default")
    per_key, per_row = params.values[f"cpu_cycles_key[{system}]"], params.values[f"cpu_cycles_row[{system}]"]
    base = _model(system, params, statements_per_op=14)
    hz = base.cpu.thread_hz
    ranges = _model(system, params, statements_per_op=14, rows_per_op=410)  # sysbench oltp_read_only
    extra = (ranges.demands.cpu_read - base.demands.cpu_read) * hz
    np.testing.assert_allclose(extra, per_row * (410 - 14), rtol=1e-9)
    np.testing.assert_allclose(ranges.demands.cpu_write - base.demands.cpu_write,
                               per_row * (410 - 14) / hz, rtol=1e-9)  # fmt: skip
    inlist = _model(system, params, keys_per_op=100)  # one statement, 100 keys, a row each
    one = _model(system, params)
    np.testing.assert_allclose((inlist.demands.cpu_read - one.demands.cpu_read) * hz, per_key * 99, rtol=1e-9)
    both = _model(system, params, keys_per_op=10, rows_per_op=1000)  # 10 ranges of 100 rows in one statement
    np.testing.assert_allclose((both.demands.cpu_read - one.demands.cpu_read) * hz,
                               per_key * 9 + per_row * 990, rtol=1e-9)  # fmt: skip


def test_uncached_lookups_read_a_page_each():
    """Every index lookup that misses the cache reads (device_reads_per_miss) pages: an IN list of 100
    keys reads 100x a point lookup's pages; the rows of a range share their lookup's pages."""
    w = Workload(operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=1e13, clients=8,
                 replication_factor=1)  # fmt: skip
    one = chain.build(PLATFORM, w, nodes=1, system="postgresql", params="default")
    keys = chain.build(PLATFORM, w, nodes=1, system="postgresql", params="default", keys_per_op=100)
    rows = chain.build(PLATFORM, w, nodes=1, system="postgresql", params="default", rows_per_op=100)
    assert one.devices.reads_per_read[0] > 0.5  # 10 TB: mostly misses
    np.testing.assert_allclose(keys.devices.reads_per_read, 100 * one.devices.reads_per_read, rtol=1e-9)
    np.testing.assert_allclose(rows.devices.reads_per_read, one.devices.reads_per_read, rtol=1e-12)


def test_systems_without_a_row_cost_are_unchanged():
    base = _model("redis")
    many = _model("redis", keys_per_op=10, rows_per_op=100)
    np.testing.assert_allclose(many.demands.cpu_read, base.demands.cpu_read)


def test_cpu_bound_throughput_falls_with_rows():
    """A cached, CPU-bound read: more rows per statement, fewer operations per second."""
    w = Workload(operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=1e8, clients=64,
                 replication_factor=1)  # fmt: skip
    out = perfmodel.predict(
        PLATFORM, w, system="postgresql", params="default", rows_per_op=np.array([1.0, 10.0, 100.0, 1000.0])
    )
    x = out["throughput_ops_s"].to_numpy()
    assert np.all(np.diff(x) < 0)


def test_figures_that_state_their_rows():
    frame = perfmodel.load_benchmarks()
    stated = frame[frame["rows_per_op"].notna()]
    assert len(stated) >= 250 and set(stated["system"]) <= {"mysql", "postgresql", "opengauss"}
    read_only = stated[stated["notes"].str.contains("oltp_read_only") & (stated["statements_per_op"] == 14)]
    assert (read_only["rows_per_op"] == 410).all()  # 10 point SELECTs + 4 ranges of 100 rows
