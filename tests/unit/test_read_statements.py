"""A writing operation's SELECTs (knob / figure column ``read_statements_per_op``): a sysbench
oltp_read_write transaction runs 14 SELECTs and 4 writes and commits once; pgbench's TPC-B runs 1
SELECT and 4 writes. Its read statements cost the system's read cycles, write no redo and dirty no
page; the operation still commits. Checked in closed form on the CPU demand and the redo bytes, and
on the figure rows that state it."""

import numpy as np
import pytest

from perfmodel.evidence import figure_plan as figures
from perfmodel.evidence import recorded as benchmarks
from perfmodel.inputs.params import load_parameters
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

PLATFORM = "x86-dl380-e5-2630v4"


def _model(system="mysql", params=None, **knobs):
    w = Workload(operation="write", read_fraction=0.0, object_bytes=200, dataset_bytes=1e9, clients=8,
                 replication_factor=1)  # fmt: skip
    return chain.build(PLATFORM, w, nodes=1, system=system, params=params, **knobs)


@pytest.mark.parametrize("system", ["mysql", "postgresql"])
def test_read_statements_cost_read_cycles_instead_of_write_cycles(system):
    params = load_parameters("default")
    c_read = params.values[f"cpu_cycles_read[{system}]"]
    c_write = params.values[f"cpu_cycles_write[{system}]"]
    assert c_read != c_write  # otherwise the test could not tell them apart
    writes_only = _model(system, params, statements_per_op=18)
    txn = _model(system, params, statements_per_op=18, read_statements_per_op=14)
    hz = txn.cpu.thread_hz
    np.testing.assert_allclose(
        (writes_only.demands.cpu_write - txn.demands.cpu_write) * hz, 14 * (c_write - c_read), rtol=1e-9
    )
    # the same CPU as 4 writing statements plus the per-statement costs of 14 reads
    four = _model(system, params, statements_per_op=4)
    np.testing.assert_allclose(
        (txn.demands.cpu_write - four.demands.cpu_write) * hz,
        14 * (c_read + params.values.get(f"cpu_cycles_message[{system}]", 0.0)),  # prepared: no parse
        rtol=1e-9,
    )


def test_redo_and_dirty_pages_come_from_the_writing_statements_only():
    params = load_parameters("default")
    txn = _model("mysql", params, statements_per_op=18, read_statements_per_op=14)
    four = _model("mysql", params, statements_per_op=4)
    eighteen = _model("mysql", params, statements_per_op=18)
    # the commit's flush carries the redo of 4 statements, not 18
    np.testing.assert_allclose(txn.paths.log_write, four.paths.log_write, rtol=1e-12)
    assert (eighteen.paths.log_write > txn.paths.log_write).all()
    np.testing.assert_allclose(txn.devices.bg_bytes_per_write, four.devices.bg_bytes_per_write, rtol=1e-12)
    np.testing.assert_allclose(eighteen.devices.bg_bytes_per_write, 18 / 4 * txn.devices.bg_bytes_per_write)


def test_no_writing_statement_is_refused():
    with pytest.raises(ValueError, match="read_statements_per_op"):
        _model("mysql", statements_per_op=5, read_statements_per_op=5)
    with pytest.raises(ValueError, match="read_statements_per_op"):
        _model("mysql", read_statements_per_op=0.5)


def test_figure_rows_carry_the_read_statements():
    rows = benchmarks.load_benchmarks()
    rw = rows[rows["figure_id"] == "mysqlonarm-2020-x86-vs-arm-rw-arm-1t"].iloc[0]
    assert float(rw["read_statements_per_op"]) == 14 and float(rw["read_fraction"]) == 0
    kwargs = figures.figure_config(rw.to_dict())
    assert kwargs["read_statements_per_op"] == 14 and kwargs["statements_per_op"] == 18
    assert kwargs["workload"].read_fraction == 0
    pgbench = rows[rows["figure_id"].str.startswith("percona-thp-pg-2019-pgbench")]
    assert len(pgbench) > 0
    assert (pgbench["read_statements_per_op"].astype(float) == 1).all()
    assert (pgbench["read_fraction"].astype(float) == 0).all()


def test_a_blank_in_a_list_is_the_default_no_read_statement():
    """A NaN in a list of knob values means unset (settings): 0 read statements, not NaN demands."""
    both = _model("mysql", statements_per_op=18, read_statements_per_op=[14.0, float("nan")])
    eighteen = _model("mysql", statements_per_op=18)
    txn = _model("mysql", statements_per_op=18, read_statements_per_op=14)
    assert np.isfinite(both.demands.cpu_write).all()
    expected = [txn.demands.cpu_write[0], eighteen.demands.cpu_write[0]]
    np.testing.assert_allclose(both.demands.cpu_write, expected)
