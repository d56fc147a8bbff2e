"""Throttled runs of a fixed number of clients (perfmodel.evidence.figure_plan.throttled)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from perfmodel.evidence.figure_plan import FigurePlan, predict_figure, throttled

ROW = {
    "figure_id": "t-1", "source_id": "lab", "source": "lab", "locator": "run", "role": "measured",
    "system": "rocksdb", "platform_id": "x86-xeon-x5650-2s", "device_id": "", "nodes": 1,
    "operation": "read", "read_fraction": 1.0, "object_bytes": 800, "dataset_gb": 1.0,
    "clients": 1, "threads_per_client": 4, "level": "client", "metric": "throughput",
    "value": 1.0, "unit": "ops/s",
}  # fmt: skip


def _row(**kw):
    return {**ROW, **kw}


def test_a_target_the_clients_cannot_reach_is_the_loop_flat_out():
    at = {"saturated": True, "throughput_ops_s": 1e6, "latency_mean_ms": math.inf}
    flat = {"saturated": False, "throughput_ops_s": 5e5, "latency_mean_ms": 0.008}
    assert throttled(at, flat, 1e6) is flat


def test_a_reachable_target_keeps_its_rate_and_the_smaller_latency():
    at = {"saturated": False, "throughput_ops_s": 1e5, "latency_mean_ms": 0.05, "latency_p99_ms": 0.2}
    flat = {"saturated": False, "throughput_ops_s": 3e5, "latency_mean_ms": 0.013, "latency_p99_ms": 0.5}
    out = throttled(at, flat, 1e5)
    assert out["throughput_ops_s"] == 1e5
    assert (out["latency_mean_ms"], out["latency_p99_ms"]) == (0.013, 0.2)


def test_a_saturating_target_is_predicted_finite_at_the_loops_rate():
    flat_out = predict_figure(_row())[0]  # the closed loop of 4 threads
    assert math.isfinite(flat_out) and flat_out > 0
    assert predict_figure(_row(target_rate=100 * flat_out))[0] == pytest.approx(flat_out, rel=1e-9)
    assert predict_figure(_row(target_rate=0.5 * flat_out))[0] == pytest.approx(0.5 * flat_out, rel=1e-9)
    # latency counted from the actual start: the flat-out loop's (Little: 4 threads / its rate)
    late = _row(target_rate=100 * flat_out, metric="latency_mean", unit="ms")
    assert predict_figure(late)[0] == pytest.approx(4 / flat_out, rel=1e-6)
    # counted from the intended start: the backlog grows without bound
    assert predict_figure({**late, "latency_start": "intended"})[0] == math.inf


def test_the_vectorised_plan_agrees_with_one_figure_at_a_time():
    flat_out = predict_figure(_row())[0]
    rows = [
        _row(figure_id=f"t-{i}", target_rate=f * flat_out, metric=m, unit=u)
        for i, (f, m, u) in enumerate(
            [
                (0.3, "throughput", "ops/s"),
                (3.0, "throughput", "ops/s"),
                (0.9, "latency_mean", "ms"),
                (3.0, "latency_p99", "ms"),
                (0.5, "latency_p99", "ms"),
            ]  # fmt: skip
        )
    ]
    plan, _ = FigurePlan(pd.DataFrame(rows)).evaluate()
    one = [predict_figure(r)[0] for r in rows]
    assert plan == pytest.approx(one, rel=1e-9)
