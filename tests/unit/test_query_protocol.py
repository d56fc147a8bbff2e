"""The query protocol (knob ``prepared``, figure column ``query_protocol``): a statement sent as SQL text
(PostgreSQL's simple query protocol: pgbench's default mode) is parsed, analysed, rewritten and planned
each time, ``cpu_cycles_parse`` of the system; a server-side prepared statement skips that. Checked in
closed form on the CPU demand, and on the recorded figures that state their protocol."""

import numpy as np
import pytest

from perfmodel.evidence.figure_plan import figure_config
from perfmodel.evidence.recorded import corpus_benchmarks
from perfmodel.inputs.params import load_parameters
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

PLATFORM = "x86-dl380-e5-2630v4"


def _model(system="postgresql", read_fraction=0.5, **knobs):
    w = Workload(read_fraction=read_fraction, object_bytes=200, dataset_bytes=1e9, clients=8,
                 replication_factor=1)  # fmt: skip
    return chain.build(PLATFORM, w, nodes=1, system=system, params="default", **knobs)


@pytest.mark.parametrize("system", ["postgresql", "opengauss"])
def test_each_unprepared_statement_costs_the_parse_cycles_at_the_threads_clock(system):
    parse = load_parameters("default").values[f"cpu_cycles_parse[{system}]"]
    assert parse > 0
    prepared = _model(system, statements_per_op=5)
    assert np.array_equal(
        prepared.demands.cpu_read, _model(system, statements_per_op=5, prepared=1.0).demands.cpu_read
    )
    text = _model(system, statements_per_op=5, prepared=0.0)
    half = _model(system, statements_per_op=5, prepared=0.5)
    hz = prepared.cpu.thread_hz[0]
    for field in ("cpu_read", "cpu_write"):
        extra = (getattr(text.demands, field) - getattr(prepared.demands, field))[0]
        assert extra == pytest.approx(5 * parse / hz, rel=1e-9)
        assert (getattr(half.demands, field) - getattr(prepared.demands, field))[0] == pytest.approx(
            extra / 2
        )


def test_systems_without_a_parse_cost_are_unchanged():
    for system in ("mysql", "redis", "rocksdb"):
        a, b = _model(system), _model(system, prepared=0.0)
        np.testing.assert_array_equal(a.demands.cpu_read, b.demands.cpu_read)


def test_the_knob_is_a_share():
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="^prepared"):
            _model(prepared=bad)


def test_recorded_figures_name_their_protocol_and_it_reaches_the_model():
    rows = corpus_benchmarks()
    pg = rows[rows.system == "postgresql"]
    by_source = pg.groupby("source_id")["query_protocol"].unique()
    # pgbench's default simple mode; sysbench-tpcc's con:query; Small Datum's prepared sysbench
    assert list(by_source["percona-thp-pg-2019"]) == ["simple"]
    assert list(by_source["percona-pg-checkpoint-2020"]) == ["simple"]
    assert list(by_source["smalldatum-pg18b2-sysbench-2025"]) == ["prepared"]
    simple = pg[pg.source_id == "percona-thp-pg-2019"].iloc[0].to_dict()
    assert figure_config(simple)["prepared"] == 0.0
    prepared = pg[pg.source_id == "smalldatum-pg18b2-sysbench-2025"].iloc[0].to_dict()
    assert figure_config(prepared)["prepared"] == 1.0
