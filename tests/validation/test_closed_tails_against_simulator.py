"""A closed loop's tail latency: ``predict`` against the simulator on the same stations.

When the clients saturate a station, each arrival finds nearly the whole population ahead
of it, so its wait is close to N service times and barely varies: the p99 is a little
above the mean. The analytic model's wait variance is capped by that finite population
(:func:`perfmodel.solve.network.finite_population_found_var`); the simulator, which queues each
request explicitly, is the reference. The exponential wait an open queue would have
(the form before the cap) put the p99 at four times the simulated one.
"""

from __future__ import annotations

import pytest

import perfmodel
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

pytestmark = pytest.mark.slow

PLATFORM = "x86-dl380-e5-2630v4"
#: single-threaded Redis GETs from 256 connections: the one server thread is saturated
SATURATED = Workload(read_fraction=1.0, object_bytes=512, dataset_bytes=1e9, clients=256)
#: 8 connections: the thread is 83% busy, the wait still close to exponential (the two-moment
#: gamma is 16% above the simulated p99 here, the uncapped form was 30%)
KNEE = Workload(read_fraction=1.0, object_bytes=512, dataset_bytes=1e9, clients=8)


def _both(workload):
    # first come, first served, as the simulator serves (Redis's spec spreads its waits by its event
    # loop's order, spec wait_scv, which the simulator has no counterpart for)
    kwargs = dict(system="redis", params="default", wait_scv=0.0)
    row = perfmodel.predict(PLATFORM, workload, **kwargs).iloc[0]
    sim = perfmodel.simulate(
        PLATFORM,
        workload,
        requests=20_000,
        replications=3,
        seed=5,
        keep_records=False,
        progress=False,
        **kwargs,
    ).summary.iloc[0]
    return row, sim


@pytest.mark.parametrize("statement_scv", [0.0, 1.0])
@pytest.mark.parametrize("workload, tolerance", [(SATURATED, 0.05), (KNEE, 0.25)])
def test_closed_loop_p99_agrees_with_the_simulator(workload, tolerance, statement_scv, monkeypatch):
    """Fixed command times (the model's, ``chain.STATEMENT_CPU_SCV`` 0) and exponential ones.

    At the knee a fixed service time with the fixed wire delays makes the simulated loop
    deterministic: the 8 requests settle into a periodic schedule and every one takes the same
    time (p99 = mean, 0.0393 ms), which the AMVA's arrivals (a queue found as in a product-form
    network, less the residual of the one in service) cannot see -- there it is an upper bound
    (0.0462 ms mean, 0.082 ms p99), checked as such."""
    monkeypatch.setattr(chain, "STATEMENT_CPU_SCV", statement_scv)
    row, sim = _both(workload)
    if workload is KNEE and statement_scv == 0.0:
        assert sim.latency_p99_ms == pytest.approx(sim.latency_mean_ms, rel=1e-3)  # the periodic schedule
        assert row.latency_mean_ms >= sim.latency_mean_ms and row.latency_p99_ms >= sim.latency_p99_ms
        # and the bound stays as close as the AMVA's own errors elsewhere at a knee (docs/simulator.md:
        # the closed fio device, +12% on the mean, +21% on the p50)
        assert row.latency_mean_ms <= 1.25 * sim.latency_mean_ms
        return
    # the mean: within the Schweitzer AMVA bound docs/queueing.md measures (6.6%)
    assert row.latency_mean_ms == pytest.approx(sim.latency_mean_ms, rel=0.066)
    assert row.latency_p99_ms == pytest.approx(sim.latency_p99_ms, rel=tolerance)
    if workload is SATURATED:
        # the saturated tail is narrow: p99 within 25% of the mean, in both
        assert row.latency_p99_ms < 1.25 * row.latency_mean_ms
        assert sim.latency_p99_ms < 1.25 * sim.latency_mean_ms
