"""The clock falls as cores get busy (``chain.core_clock``): turbo with one busy core, the
all-core clock with all of them, base where the catalog gives neither -- checked at the ends, for
monotonicity, and end to end on a closed loop's CPU demand (the catalog's checks of the clocks
are in tests/unit/test_catalog.py)."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.inputs.catalog import default_catalog
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

GHZ = 1e9


def _plat(cores, base, turbo=math.nan, all_core=math.nan):
    n = np.size(cores)
    turbo = base if math.isnan(turbo) else turbo
    all_core = base if math.isnan(all_core) else all_core
    return dataclasses.make_dataclass("P", ["cores", "turbo_hz", "all_core_hz"])(
        np.full(n, float(cores)), np.full(n, turbo * GHZ), np.full(n, all_core * GHZ)
    )


def test_one_busy_core_runs_at_turbo_and_all_at_the_all_core_clock():
    p = _plat(10, 2.2, turbo=3.1, all_core=2.4)
    clock = chain.core_clock(p, np.array([1.0, 10.0, 5.5, 40.0]))
    np.testing.assert_allclose(clock / GHZ, [3.1, 2.4, 3.1 - 0.7 * 0.5, 2.4])


def test_without_an_all_core_clock_a_busy_node_runs_at_base_and_without_turbo_always():
    busy = np.array([1.0, 4.0, 32.0])
    no_all_core = chain.core_clock(_plat(32, 2.5, turbo=3.5), busy)
    assert no_all_core[0] == pytest.approx(3.5 * GHZ) and no_all_core[-1] == pytest.approx(2.5 * GHZ)
    np.testing.assert_allclose(chain.core_clock(_plat(32, 2.5), busy), 2.5 * GHZ)


def test_a_one_core_node_runs_at_its_all_core_clock():
    assert chain.core_clock(_plat(1, 2.6, turbo=3.4, all_core=3.0), np.array([1.0]))[0] == pytest.approx(
        3.0 * GHZ
    )


@settings(max_examples=200, deadline=None)
@given(
    cores=st.integers(1, 256),
    base=st.floats(0.5, 4.0),
    boost=st.floats(0.0, 2.0),
    all_share=st.floats(0.0, 1.0),
    a=st.floats(0.0, 300.0),
    b=st.floats(0.0, 300.0),
)
def test_the_clock_never_rises_with_busier_cores_and_stays_between_base_and_turbo(
    cores, base, boost, all_share, a, b
):
    p = _plat(cores, base, turbo=base + boost, all_core=base + all_share * boost)
    lo, hi = sorted((a, b))
    c_lo, c_hi = chain.core_clock(p, np.array([lo])), chain.core_clock(p, np.array([hi]))
    assert c_hi[0] <= c_lo[0] * (1 + 1e-12)
    assert base * GHZ * (1 - 1e-12) <= c_hi[0] <= (base + boost) * GHZ * (1 + 1e-12)


@pytest.mark.parametrize(("clients", "ratio"), [(1, 3.1 / 2.2), (640, 1.0)])
def test_a_single_client_gets_the_turbo_clock_and_a_full_node_the_base_clock(clients, ratio):
    """End to end on the dl380's E5-2630 v4 (2.2 GHz base, 3.1 turbo, no all-core clock in the
    catalog): against the same platform without turbo, one client's thread runs 3.1 / 2.2 faster;
    640 clients keep all 10 cores busy, at base."""
    plat = default_catalog().platform("x86-dl380-e5-2630v4")
    assert (plat.base_hz, plat.turbo_hz) == (2.2e9, 3.1e9) and math.isnan(plat.all_core_hz)
    flat = dataclasses.replace(plat, turbo_hz=math.nan)
    w = Workload(operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=1e8, clients=clients,
                 replication_factor=1)  # fmt: skip

    def hz(p):
        return float(chain.build(p, w, nodes=1, system="mysql", params="default").cpu.thread_hz[0])

    assert hz(plat) / hz(flat) == pytest.approx(ratio, rel=1e-12)
