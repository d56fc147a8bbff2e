"""Sizing under uncertainty (perfmodel.plan.uncertain): ranged inputs and the model's own error."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import perfmodel as pm
from perfmodel import Workload
from perfmodel.plan.uncertain import _count_at, size_uncertain, uncertain

PLATFORM = "x86-dl380-e5-2630v4"
WORKLOAD = Workload(read_fraction=0.9, object_bytes=1024, dataset_bytes=200e9, replication_factor=3,
                    consistency="QUORUM", arrival_rate=1.0)  # fmt: skip


def _point(target, platform=PLATFORM, **kw):
    out = pm.size(WORKLOAD, system="scylla", target_ops_s=target, slo_p99_ms=20, platforms=[platform],
                  interval=None, **kw)  # fmt: skip
    return out.set_index("threads_per_core")["nodes"]


# ---------------------------------------------------------------------------------------- inputs


def test_a_number_is_a_point_and_two_percentiles_are_reproduced():
    assert uncertain("target_ops_s", 5e5).ppf([0.01, 0.99]).tolist() == [5e5, 5e5]
    rate = uncertain("target_ops_s", {"p50": 8e5, "p95": 1.5e6})
    assert rate.kind == "lognormal"
    np.testing.assert_allclose(rate.ppf([0.5, 0.95]), [8e5, 1.5e6], rtol=1e-12)
    share = uncertain("read_fraction", {"p5": 0.8, "p95": 0.95})
    assert share.kind == "logitnormal"
    np.testing.assert_allclose(share.ppf([0.05, 0.95]), [0.8, 0.95], rtol=1e-12)
    assert 0.8 < share.median() < 0.95


def test_a_range_is_uniform_on_a_log_scale_for_a_quantity_and_on_the_line_for_a_share():
    size = uncertain("dataset_gib", {"low": 100, "high": 400})
    assert size.kind == "loguniform"
    # 200: the middle doubling
    np.testing.assert_allclose(size.ppf([0.0, 0.5, 1.0]), [100, 200, 400], rtol=1e-12)
    share = uncertain("read_fraction", {"low": 0.5, "high": 0.9})
    np.testing.assert_allclose(share.ppf([0.0, 0.5, 1.0]), [0.5, 0.7, 0.9], rtol=1e-12)


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("target_ops_s", {"low": 5, "high": 5}, "below high"),
        ("target_ops_s", -1.0, "positive"),
        ("target_ops_s", {"p50": 9e5, "p95": 8e5}, "higher percentile"),
        ("target_ops_s", {"p50": 1, "p95": 2, "p99": 3}, "two percentiles"),
        ("target_ops_s", {"p50": 1, "q95": 2}, "not a percentile"),
        ("target_ops_s", {"p0": 1, "p95": 2}, "strictly between"),
        ("read_fraction", 1.5, r"\[0, 1\]"),
        ("read_fraction", {"p50": 0.0, "p95": 0.5}, "strictly inside"),
        ("slo_p99_ms", 5.0, "not an input"),
        ("target_ops_s", "fast", "finite number"),
    ],
)
def test_malformed_inputs_are_refused_with_their_name(name, value, match):
    with pytest.raises(ValueError, match=match):
        uncertain(name, value)


def test_the_count_at_a_confidence_is_the_least_that_covers_it():
    n = np.array([3, 5, 4, 8, 6, 7, 5, 4, 9, 10], dtype=float)
    assert _count_at(n, 0.9) == 9.0  # 9 of 10 at or below 9
    assert _count_at(n, 0.5) == 5.0
    assert _count_at(np.array([1.0, np.inf, 2.0, 3.0]), 0.9) == np.inf  # a quarter infeasible


# ---------------------------------------------------------------------------------------- sizing


@pytest.mark.slow
def test_inputs_and_model_error_combine_as_a_brute_force_monte_carlo_says():
    """Target lognormal (p50 600 k, p95 1.2 M) and a lognormal model error of log-sd 0.3 on the
    throughput: the count is monotone in ``target x f``, so the count at 90% is the point answer at
    the 0.9-quantile of ``target x f``. A million-draw Monte Carlo of the product gives that quantile
    (and agrees with the closed form, a lognormal of summed variances); the sampled plan must land
    between the point answers at its 0.85- and 0.95-quantiles (64 Latin-hypercube samples)."""
    rate = uncertain("target_ops_s", {"p50": 6e5, "p95": 1.2e6})
    rng = np.random.default_rng(7)
    product = rate.ppf(rng.random(1_000_000)) * np.exp(0.3 * rng.standard_normal(1_000_000))
    closed = stats.lognorm(s=np.hypot(rate.b, 0.3), scale=np.exp(rate.a))
    for q in (0.85, 0.9, 0.95):
        assert np.quantile(product, q) == pytest.approx(closed.ppf(q), rel=0.01)
    out = size_uncertain(WORKLOAD, system="scylla", target_ops_s={"p50": 6e5, "p95": 1.2e6}, slo_p99_ms=20,
                         platforms=[PLATFORM], samples=64, model_error={"throughput": 0.3})  # fmt: skip
    low, high = _point(np.quantile(product, 0.85)), _point(np.quantile(product, 0.95))
    mid = _point(np.quantile(product, 0.9))
    for row in out.itertuples():
        assert low[row.threads_per_core] <= row.nodes <= high[row.threads_per_core]
        assert abs(row.nodes - mid[row.threads_per_core]) <= max(1, 0.1 * mid[row.threads_per_core])
        assert row.nodes_point == _point(6e5)[row.threads_per_core]  # the medians, no error
        assert row.nodes_p05 <= row.nodes_p50 <= row.nodes <= row.nodes_p95


@pytest.mark.slow
def test_more_confidence_never_needs_fewer_servers_and_counts_follow_the_effective_target():
    kw = dict(system="scylla", target_ops_s={"p50": 6e5, "p95": 1.2e6}, slo_p99_ms=20, platforms=[PLATFORM],
              samples=32, seed=3)  # fmt: skip
    base = size_uncertain(WORKLOAD, model_error=None, **kw).set_index("threads_per_core")
    sure = size_uncertain(WORKLOAD, model_error=None, confidence=0.97, **kw).set_index("threads_per_core")
    wide = size_uncertain(WORKLOAD, model_error={"throughput": 0.5}, **kw)
    assert (sure["nodes"] >= base["nodes"]).all()
    # what the answer rests on: each sample's count is monotone in its effective target, target x f
    for _, part in wide.attrs["samples"].groupby("threads_per_core"):
        part = part.assign(effective=part["target_ops_s"] * part["f"]).sort_values("effective")
        counts = np.where(part["feasible"], part["nodes"], np.inf)
        assert (np.diff(counts) >= 0).all()
    again = size_uncertain(WORKLOAD, model_error=None, **kw).set_index("threads_per_core")
    same = again[["nodes", "nodes_p50"]] == base[["nodes", "nodes_p50"]]
    assert same.all().all()  # the same seed, the same answer


@pytest.mark.slow
def test_a_plan_whose_samples_are_too_often_infeasible_is_infeasible():
    out = size_uncertain(WORKLOAD, system="scylla", target_ops_s={"p50": 6e5, "p95": 3e6}, slo_p99_ms=20,
                         platforms=[PLATFORM], samples=16, model_error=None, max_nodes=12)  # fmt: skip
    for row in out.itertuples():
        if row.share_feasible < 0.9:
            assert not row.feasible and row.nodes == 0
        else:
            assert row.feasible and row.nodes <= 12


def test_bad_confidence_and_samples_are_refused():
    with pytest.raises(ValueError, match="confidence"):
        size_uncertain(WORKLOAD, system="scylla", target_ops_s=1e5, slo_p99_ms=20, confidence=1.0)
    with pytest.raises(ValueError, match="samples"):
        size_uncertain(WORKLOAD, system="scylla", target_ops_s=1e5, slo_p99_ms=20, samples=3)
    with pytest.raises(ValueError, match="model_error"):
        size_uncertain(WORKLOAD, system="scylla", target_ops_s=1e5, slo_p99_ms=20, model_error="lab")


@pytest.mark.slow
def test_a_priced_plan_costs_its_count_at_the_confidence_and_the_cheapest_is_marked():
    priced, unpriced = "x86-aws-i3-4xlarge", PLATFORM
    out = size_uncertain(WORKLOAD, system="scylla", target_ops_s={"low": 3e5, "high": 6e5}, slo_p99_ms=20,
                         platforms=[priced, unpriced], samples=8, model_error=None,
                         prices="shipped")  # fmt: skip
    one = pm.size(WORKLOAD, system="scylla", target_ops_s=3e5, slo_p99_ms=20, platforms=[priced],
                  interval=None, prices="shipped")["price_usd_per_month"].iloc[0]  # fmt: skip
    mine = out[out.platform == priced]
    assert (mine["price_usd_per_month"] == one).all()
    np.testing.assert_allclose(mine["cost_usd_per_month"], one * mine["nodes"])
    assert out[out.platform == unpriced]["cost_usd_per_month"].isna().all()
    assert out["cheapest"].sum() == 1
    cheapest = out[out["cheapest"]].iloc[0]
    assert cheapest.cost_usd_per_month == mine["cost_usd_per_month"].min()


def test_the_command_line_reads_ranges():
    from perfmodel.cli import _ranges

    assert _ranges(["target_ops_s=500k:1.5M"]) == {"target_ops_s": {"low": 5e5, "high": 1.5e6}}
    assert _ranges(["read-fraction=p5=0.8,p95=0.95"]) == {"read_fraction": {"p5": 0.8, "p95": 0.95}}
    for bad in ("target=1:2", "target_ops_s", "target_ops_s=p50", "dataset_gib=a:b"):
        with pytest.raises(ValueError, match="--range"):
            _ranges([bad])


@pytest.mark.slow
def test_perfmodel_size_with_a_range_prints_the_count_at_the_confidence(capsys):
    from pathlib import Path

    from perfmodel.cli import main

    workload = Path(__file__).resolve().parents[2] / "data" / "workloads" / "scylla-read-heavy.yaml"
    code = main(["size", str(workload), "--range", "target_ops_s=p50=300k,p95=600k", "--slo-p99-ms", "20",
                 "--platform", PLATFORM, "--samples", "8", "--model-error", "none",
                 "--confidence", "0.8"])  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0
    assert "probability 80%" in text and "target_ops_s: lognormal" in text and PLATFORM in text
