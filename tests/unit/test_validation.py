"""Validation table: columns, errors, bounds, folds, provenance, refits that really leave data out."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import perfmodel
from perfmodel.evidence import validation as val
from perfmodel.evidence.recorded import calibration_benchmarks
from perfmodel.evidence.validation import validate

REQUIRED = ["figure_id", "source", "group", "metric", "recorded", "predicted", "rel_error", "factor_error",
            "lower", "upper", "in_band", "converged", "gap"]  # fmt: skip
CEPH_FREE = ["cpu_cycles_read[ceph]", "cpu_cycles_write[ceph]"]


@pytest.fixture(scope="module")
def figures():
    return perfmodel.load_benchmarks()


@pytest.fixture(scope="module")
def in_sample():
    return validate()


@pytest.fixture(scope="module")
def small():
    """Twelve Part 2 queue-depth figures of the Ceph lab (IOPS and their mean latencies)."""
    b = perfmodel.load_benchmarks()
    return b[b.figure_id.str.match(r"S-RH2-QD(16|32)-")].reset_index(drop=True)


def test_the_public_interface(in_sample):
    assert perfmodel.validate is val.validate
    assert perfmodel.calibrate is perfmodel.evidence.calibration.calibrate
    assert set(REQUIRED) <= set(in_sample.columns)
    assert in_sample.attrs["cv"] == "in-sample"
    # the seed documents and their context; the public corpus is validated by perfmodel.evidence.corpus
    assert len(in_sample) + len(in_sample.attrs["excluded"]) == len(calibration_benchmarks())


def test_summary_is_recomputed_from_the_table(in_sample):
    values = in_sample[in_sample.bound == ""]
    overall = val.summarize(in_sample).iloc[0]
    assert overall.figures == len(values)
    assert overall.median_abs_rel_error == pytest.approx(np.median(np.abs(values.rel_error)))
    assert overall.p90_factor_error == pytest.approx(np.percentile(values.factor_error, 90))
    assert overall.coverage_90 == pytest.approx(values.in_band.mean())
    lines = val.summary_lines(in_sample)
    assert lines[0].startswith("validation (in-sample)") and "free parameters" in lines[0]


def test_factor_error_does_not_hide_an_under_prediction(in_sample):
    t = in_sample[in_sample.bound == ""]
    pct = t.unit == "pct_change"
    ratio = np.where(pct, (1 + t.predicted / 100) / (1 + t.recorded / 100), t.predicted / t.recorded)
    np.testing.assert_allclose(t.factor_error, np.maximum(ratio, 1 / ratio), rtol=1e-12)
    np.testing.assert_allclose(t.rel_error, ratio - 1, rtol=1e-9, atol=1e-12)
    # a 10x under-prediction reads -90% but 10x
    table = _toy_score(recorded=10.0, predicted=1.0)
    assert table.rel_error.iloc[0] == pytest.approx(-0.9)
    assert table.factor_error.iloc[0] == pytest.approx(10.0)


def _toy_score(recorded, predicted, aggregate="", level="client", relation=""):
    b = perfmodel.load_benchmarks()
    row = b[b.figure_id == "S-IBM-x86-1"].reset_index(drop=True).copy()
    row["value"], row["value_si"] = recorded, recorded
    row["aggregate"], row["level"], row["relation"] = aggregate, level, relation
    raw = pd.DataFrame({"figure_id": row.figure_id, "fold": 0, "predicted": predicted, "param_sd": 0.0,
                        "converged": True, "in_sample": predicted})  # fmt: skip
    return val.score(raw, row, perfmodel.load_parameters("default"), scales={})


def test_a_run_maximum_or_minimum_is_a_bound():
    inside = _toy_score(650.0, 600.0, aggregate="max", level="device")
    assert inside.bound.iloc[0] == "lt" and inside.factor_error.iloc[0] == 1.0
    outside = _toy_score(650.0, 2600.0, aggregate="max", level="device")
    assert outside.factor_error.iloc[0] == pytest.approx(4.0)  # measured from the bound
    low = _toy_score(20.0, 5.0, aggregate="min", level="device")
    assert low.bound.iloc[0] == "gt" and low.rel_error.iloc[0] == pytest.approx(-0.75)
    # a client-level maximum is a configuration's best result: a value, not a bound
    assert _toy_score(650.0, 600.0, aggregate="max").bound.iloc[0] == ""


def test_the_shipped_bounds_are_validated(in_sample):
    bounds = in_sample.set_index("figure_id")
    for fid in ("seed001-p1-nvme-t28-iostat-write-bw-max", "seed001-p1-nvme-t28-iostat-write-bw-min",
                "seed003-qd-low", "seed003-qd-max", "seed003-read-bw-max"):  # fmt: skip
        assert bounds.loc[fid, "bound"] in ("lt", "gt")
        assert np.isfinite(bounds.loc[fid, "predicted"])


def test_percent_changes_are_compared_on_the_ratio_scale(in_sample):
    row = in_sample.set_index("figure_id").loc["seed004-t2-randwrite-rf3-vs-rf2-iops"]
    assert row.rel_error == pytest.approx((1 + row.predicted / 100) / (1 + row.recorded / 100) - 1)


def test_folds_keep_groups_and_linked_figures_together(figures):
    used = figures[figures.role == "measured"].reset_index(drop=True)
    groups = val.cv_folds(used, "group")
    for fold in groups:
        assert used.iloc[fold]["group"].nunique() == 1
    assert sorted(np.concatenate(groups)) == list(range(len(used)))
    labels = dict(zip(used.figure_id, range(len(used)), strict=True))
    loo = {i: k for k, fold in enumerate(val.cv_folds(used, "loo")) for i in fold}
    # seed 000's ratio is the two IBM absolutes divided: one fold
    assert loo[labels["seed000-fig1-ratio-cache"]] == loo[labels["S-IBM-P8-2"]] == loo[labels["S-IBM-x86-2"]]
    assert loo[labels["seed001-p2-nvme-micros-per-op"]] == loo[labels["seed001-p2-nvme-ops"]]
    assert loo[labels["S-IBM-P8-1"]] != loo[labels["S-IBM-P8-2"]]
    # the lab's three posts and seed 000 with its IBM absolutes are groups
    group_of = dict(zip(used.source_id, used.group, strict=True))
    assert group_of["seed000"] == group_of["ctx-ibm-scylla"]
    assert group_of["seed004"] == group_of["ctx-ceph-part1"] == group_of["ctx-ceph-part2"]
    with pytest.raises(ValueError, match="^cv"):
        val.cv_folds(used, "kfold")


def test_figures_behind_a_prior_or_catalog_number_are_marked_and_not_summarised(figures):
    derived = dict(zip(figures.figure_id, val.derived_figures(figures, perfmodel.load_parameters("default")),
                       strict=True))  # fmt: skip
    assert "prior cpu_cycles_read[scylla]" in derived["S-IBM-x86-2"]
    assert derived["seed000-fig1-ratio-cache"]  # the same measurement as S-IBM-x86-2
    assert "catalog nvme-ssd-dm8.write_iops_4k" in derived["seed002-fio-nvme-vs-sata-write"]
    assert derived["seed004-t3-randread-cache8-vs-4-p99"]  # onode_bytes was chosen from them
    assert derived["S-IBM-x86-1"] == ""


def test_bad_cv_value():
    with pytest.raises(ValueError, match="^cv"):
        validate(cv="kfold")


@pytest.mark.slow  # full refits: make test runs it, make test-fast does not
def test_a_held_out_figure_cannot_influence_its_own_prediction(small):
    """Perturb a held-out figure 10x: its out-of-sample prediction is unchanged, while the fit
    that sees it (in-sample) moves -- so the test would catch a leak."""
    base = validate(small, cv="loo", free=CEPH_FREE, workers=1).set_index("figure_id")
    target = "S-RH2-QD32-w"
    moved = small.copy()
    moved.loc[moved.figure_id == target, ["value", "value_si"]] *= 10
    after = validate(moved, cv="loo", free=CEPH_FREE, workers=1).set_index("figure_id")
    assert after.loc[target, "predicted"] == base.loc[target, "predicted"]
    assert after.loc[target, "in_sample"] != pytest.approx(base.loc[target, "in_sample"], rel=1e-3)
    assert after.loc[target, "recorded"] == pytest.approx(10 * base.loc[target, "recorded"])
    # its linked latency is held out with it, so it does not move either
    assert after.loc["S-RH2-QD32-wl", "predicted"] == base.loc["S-RH2-QD32-wl", "predicted"]
    # every other figure's refit saw the perturbed figure and moved
    others = [f for f in base.index if f not in (target, "S-RH2-QD32-wl")]
    assert (after.loc[others, "predicted"] != base.loc[others, "predicted"]).all()
    assert base.converged.all() and len(base.attrs["refits"]) == 7  # 6 linked pairs + the full fit


@pytest.mark.slow  # full refits: make test runs it, make test-fast does not
def test_refits_start_from_the_priors_not_from_a_fit(small):
    """The table depends on the starting set only: the in-sample parameter set plays no part."""
    a = validate(small, cv="loo", free=CEPH_FREE, workers=1, params="calibrated")
    b = validate(small, cv="loo", free=CEPH_FREE, workers=1, params="default")
    np.testing.assert_array_equal(a.predicted, b.predicted)
    c = validate(small, cv="loo", free=CEPH_FREE, workers=1, start="calibrated")
    assert not np.allclose(a.predicted, c.predicted)  # another start, other priors, other refit


def test_a_refit_that_does_not_converge_is_flagged_and_left_out(small):
    table = validate(small, cv="loo", free=CEPH_FREE, workers=1, max_nfev=1)
    assert not table.converged.any()
    assert not any(r["converged"] for r in table.attrs["refits"])
    assert val.summarize(table).iloc[0].figures == 0
    assert "NOT CONVERGED" in "\n".join(val.summary_lines(table))


def test_skill_against_no_change():
    t = pd.DataFrame({"metric_group": "ratios", "bound": "", "unit": "ratio",
                      "recorded": [1.5, 0.8, 1.2], "log_error": 0.0})  # fmt: skip
    perfect = val.skill_vs_no_change(t)
    assert perfect["skill"] == 1.0 and perfect["right_direction"] == 3
    t["log_error"] = -np.log(t.recorded)  # predicting 1.0x everywhere
    assert val.skill_vs_no_change(t)["skill"] == pytest.approx(0.0)
    assert val.skill_vs_no_change(t)["right_direction"] == 0


def test_predicted_vs_recorded_plot_has_one_point_per_positive_figure(in_sample, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.collections import PathCollection

    ax = val.plot_predicted_vs_recorded(in_sample)
    points = sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))
    pct = in_sample.unit == "pct_change"
    rec = in_sample.recorded.where(~pct, 1 + in_sample.recorded / 100)
    pred = in_sample.predicted.where(~pct, 1 + in_sample.predicted / 100)
    assert points == int(((rec > 0) & (pred > 0)).sum())
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    ax.figure.savefig(tmp_path / "pvr.png")


def test_misses_are_named_with_their_gap(tmp_path, in_sample):
    gaps = val.load_gaps()
    ids = [g["id"] for g in gaps]
    assert len(ids) == len(set(ids))
    assert val.gap_of("seed000-table3-x86-disk-p99", gaps) == "cache-warmup"  # wildcard pattern
    assert val.gap_of("no-such-figure", gaps) == ""
    missed = val.missed_figures(in_sample)
    assert (missed.factor_error > val.MISS_FACTOR).all()
    rest = in_sample[in_sample.gap == ""]
    assert (rest.factor_error <= val.MISS_FACTOR).all()
    undiagnosed = in_sample.query("gap == 'undiagnosed'")
    assert undiagnosed.empty, "misses without a mechanism in data/model_gaps.yaml: " + ", ".join(
        undiagnosed.figure_id
    )
    bad = tmp_path / "gaps.yaml"
    bad.write_text("gaps:\n  - id: x\n    figures: [a]\n")
    with pytest.raises(ValueError, match="lacks"):
        val.load_gaps(bad)


def test_gap_report_quotes_computed_values(in_sample):
    report = val.gap_report(in_sample).set_index("gap")
    row = in_sample.set_index("figure_id").loc["seed000-table3-x86-disk-p99"]
    quote = report.loc["cache-warmup", "figures_quoted"]
    assert f"seed000-table3-x86-disk-p99: {row.recorded * 1e3:.3g} ms recorded" in quote
    assert f"{row.predicted * 1e3:.3g} ms predicted" in quote
    assert report.loc["cache-warmup", "figures"] == (in_sample.gap == "cache-warmup").sum()


def test_gap_evidence_types_no_model_number():
    """The gap file quotes recorded facts; predicted values are computed (gap_report)."""
    import re

    typed = re.compile(r"(modell?ed|predicted|predicts)\W{0,3}[+-]?\d|\d[\d.,%]*\s*(modell?ed|predicted)")
    for gap in val.load_gaps():
        text = " ".join([gap["mechanism"], gap["evidence"]]).lower()
        assert not typed.search(text), (gap["id"], typed.search(text).group(0))
    assert typed.search("+51% measured vs +30% modelled") and typed.search("predicted 2.1x")


def test_in_sample_band_uses_the_shipped_discrepancy(in_sample):
    from perfmodel.evidence.discrepancy import load_discrepancy

    stored = load_discrepancy()
    assert stored is not None
    row = in_sample.iloc[0]
    assert row.sigma == pytest.approx(stored[row.metric_group]["sigma_log"])
    assert row.lower <= row.predicted <= row.upper
    assert math.isfinite(row.upper)
