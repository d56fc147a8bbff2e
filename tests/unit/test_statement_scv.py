"""An operation's CPU time is the sum of its statements' bursts (gap transaction-spread): SCV
``c_s / k + c_K`` for ``k`` statements of SCV ``c_s`` (``chain.STATEMENT_CPU_SCV``, 0: a
statement's CPU time is fixed) whose count has SCV ``c_K`` -- checked on the network the solver and
the simulator share, on the TPC-C mix's arithmetic, and on the tail it gives."""

from dataclasses import replace

import numpy as np
import pytest
from scipy import special

import perfmodel
from perfmodel.evidence.figure_plan import figure_config
from perfmodel.inputs import systems
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain
from perfmodel.model.chain import IX

PLATFORM = "x86-dl380-e5-2630v4"


def _model(clients=1, **knobs):
    w = Workload(operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=1e8, clients=clients,
                 replication_factor=1)  # fmt: skip
    return chain.build(PLATFORM, w, nodes=1, system="mysql", params="default", **knobs)


CASES = [
    ({}, 0.0),
    ({"statements_per_op": 14}, 0.0),
    ({"statements_per_op": 27, "statements_scv": 0.69}, 0.69),
]


@pytest.mark.parametrize(("knobs", "scv"), CASES)
def test_cpu_service_scv_is_the_statement_mix(knobs, scv):
    assert chain.STATEMENT_CPU_SCV == 0.0
    assert _model(**knobs).net.scv[0, IX["cpu"]] == pytest.approx(scv, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("c_s", [1.0, 0.3])
def test_the_random_sum_of_statement_bursts(monkeypatch, c_s):
    """Were a statement's CPU time spread (SCV c_s), k of them sum to c_s / k + c_K."""
    monkeypatch.setattr(chain, "STATEMENT_CPU_SCV", c_s)
    m = _model(statements_per_op=[1, 14, 27], statements_scv=[0.0, 0.0, 0.69])
    np.testing.assert_allclose(m.net.scv[:, IX["cpu"]], [c_s, c_s / 14, c_s / 27 + 0.69], rtol=1e-12)


def test_tpcc_mix_scv_follows_from_its_profiles():
    """TPC-C rev. 5.11: New-Order 6 + 4 x items statements, items uniform on 5..15 (clause 2.4.1.3),
    w.p. 0.45; Payment 8 w.p. 0.43; Order-Status 4, Delivery 70, Stock-Level 2 w.p. 0.04 each."""
    items = np.arange(5, 16)
    k = np.concatenate([6 + 4 * items, [8, 4, 70, 2]])
    p = np.concatenate([np.full(items.size, 0.45 / items.size), [0.43, 0.04, 0.04, 0.04]])
    mean = (p * k).sum()
    scv = ((p * k * k).sum() - mean**2) / mean**2
    for name in ("mysql", "postgresql", "opengauss"):
        spec = systems.load_system(name)
        assert spec.tpcc_statements == round(mean)
        assert spec.tpcc_statements_scv == pytest.approx(scv, abs=0.005)
    # DM8's costs are per transaction (one "statement"), but its mix is the same BenchmarkSQL one
    assert systems.load_system("dm8").tpcc_statements_scv == pytest.approx(scv, abs=0.005)
    row = {"system": "postgresql", "operation": "tpcc", "platform_id": PLATFORM, "terminals": 8,
           "warehouses": 10, "nodes": 1, "replication_factor": 1}  # fmt: skip
    assert figure_config(row)["statements_scv"] == pytest.approx(scv, abs=0.005)


def test_a_lone_transaction_has_its_mixes_gamma_tail_and_a_fixed_one_none():
    """One client, CPU the only spread: a fixed 14-statement transaction's p99 is its mean (no
    queue, no spread), and one whose statement count has SCV 0.5 has the p99 of a gamma of that
    SCV (shape 2) above the fixed part."""
    for knobs, shape in (
        ({"statements_per_op": 14}, None),
        ({"statements_per_op": 14, "statements_scv": 0.5}, 2),
    ):
        m = _model(**knobs)
        out = chain.report(m, chain.solve(m)).iloc[0]
        cpu = m.net.d_read[0, IX["cpu"]]
        shift = out["latency_mean_ms"] / 1e3 - cpu  # no queue at one client: the rest is fixed
        p99 = out["latency_p99_ms"] / 1e3 - shift
        expected = cpu if shape is None else cpu * special.gammaincinv(shape, 0.99) / shape
        assert p99 == pytest.approx(expected, rel=0.02)


def test_an_unset_entry_of_statements_scv_is_zero():
    """A grid with a NaN entry (unset) gets the default, not a NaN p99."""
    m = _model(statements_per_op=[14, 14], statements_scv=[0.5, np.nan])
    np.testing.assert_allclose(m.net.scv[:, IX["cpu"]], [0.5, 0.0], atol=1e-15)


@pytest.mark.parametrize("system", ["mysql", "postgresql", "opengauss", "dm8"])
def test_a_tpcc_operation_takes_the_systems_statements_when_unset(system):
    """``predict`` of a TPC-C workload (a workload file, the API) runs the system's mix, as its
    recorded figures are fitted with: ``tpcc_statements`` statements of SCV ``tpcc_statements_scv``
    (a MySQL TPC-C transaction predicted as one statement ran 5x too fast); set knobs still win,
    and other operations keep one fixed statement."""
    spec = systems.load_system(system)
    w = Workload(operation="tpcc", read_fraction=0.08, object_bytes=8192, dataset_bytes=1e10, clients=16)
    knobs = chain.build(PLATFORM, w, nodes=1, system=system, params="default").inputs.knobs
    assert knobs.statements_per_op[0] == spec.tpcc_statements
    assert knobs.statements_scv[0] == spec.tpcc_statements_scv > 0  # every TPC-C mix spreads
    set_ = chain.build(PLATFORM, w, nodes=1, system=system, params="default", statements_per_op=3,
                       statements_scv=0.0).inputs.knobs  # fmt: skip
    assert (set_.statements_per_op[0], set_.statements_scv[0]) == (3.0, 0.0)
    other = chain.build(PLATFORM, replace(w, operation="mixed"), nodes=1, system=system,
                        params="default").inputs.knobs  # fmt: skip
    assert (other.statements_per_op[0], other.statements_scv[0]) == (1.0, 0.0)


def test_a_tpcc_figure_and_the_same_prediction_agree():
    """The figure path (knobs from the row) and ``predict`` of the same TPC-C workload give one number."""
    row = {"system": "mysql", "operation": "tpcc", "platform_id": PLATFORM, "terminals": 8,
           "warehouses": 10, "nodes": 1, "replication_factor": 1}  # fmt: skip
    cfg = figure_config(row)
    extra = {k: v for k, v in cfg.items() if k not in ("platform", "workload", "nodes", "system",
                                                       "statements_per_op", "statements_scv")}  # fmt: skip
    direct = perfmodel.predict(cfg["platform"], cfg["workload"], nodes=cfg["nodes"], system="mysql",
                               params="default", **extra).iloc[0]  # fmt: skip
    via_knobs = perfmodel.predict(cfg["platform"], cfg["workload"], nodes=cfg["nodes"], system="mysql",
                                  params="default", **{k: v for k, v in cfg.items() if k not in
                                  ("platform", "workload", "nodes", "system")}).iloc[0]  # fmt: skip
    assert direct.throughput_ops_s == pytest.approx(via_knobs.throughput_ops_s, rel=1e-12)
    assert direct.latency_p99_ms == pytest.approx(via_knobs.latency_p99_ms, rel=1e-12)
