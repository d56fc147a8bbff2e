"""An operation's CPU time is the sum of its statements' bursts (gap transaction-spread): SCV
``1 / k + c_K`` for ``k`` statements whose count has SCV ``c_K`` -- checked on the network the
solver and the simulator share, on the TPC-C mix's arithmetic, and on the tail it gives."""

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
    ({}, 1.0),
    ({"statements_per_op": 14}, 1 / 14),
    ({"statements_per_op": 27, "statements_scv": 0.69}, 1 / 27 + 0.69),
]


@pytest.mark.parametrize(("knobs", "scv"), CASES)
def test_cpu_service_scv_is_one_over_statements_plus_the_mix(knobs, scv):
    assert _model(**knobs).net.scv[0, IX["cpu"]] == pytest.approx(scv, rel=1e-12)


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


def test_a_lone_fourteen_statement_transaction_has_an_erlang_tail():
    """One client, CPU the only spread: the p99 above the fixed part is the Erlang-14 quantile of the
    CPU time, and a one-statement operation of the same mean has the exponential one."""
    one, many = _model(), _model(statements_per_op=14)
    for m, k in ((one, 1), (many, 14)):
        out = chain.report(m, chain.solve(m)).iloc[0]
        cpu = m.net.d_read[0, IX["cpu"]]
        shift = out["latency_mean_ms"] / 1e3 - cpu  # no queue at one client: the rest is fixed
        p99 = out["latency_p99_ms"] / 1e3 - shift
        assert p99 == pytest.approx(cpu * special.gammaincinv(k, 0.99) / k, rel=0.02)


def test_an_unset_entry_of_statements_scv_is_zero():
    """A grid with a NaN entry (unset) gets the default, not a NaN p99."""
    m = _model(statements_per_op=[14, 14], statements_scv=[0.5, np.nan])
    np.testing.assert_allclose(m.net.scv[:, IX["cpu"]], [1 / 14 + 0.5, 1 / 14])
