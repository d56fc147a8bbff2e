"""An operation's CPU time is the sum of its statements' bursts (gap transaction-spread): SCV
``c_s / k + c_K`` for ``k`` statements of SCV ``c_s`` (``chain.STATEMENT_CPU_SCV``, 0: a
statement's CPU time is fixed) whose count has SCV ``c_K`` -- checked on the network the solver and
the simulator share, on the TPC-C mix's arithmetic, and on the tail it gives."""

import numpy as np
import pytest
from scipy import special

from perfmodel import chain, systems
from perfmodel.chain import IX
from perfmodel.figures import figure_config
from perfmodel.workload import Workload

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
