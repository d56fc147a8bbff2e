"""Validation report: columns, summaries, cross-validation mechanics."""

from __future__ import annotations

import numpy as np
import pytest

import perfmodel
from perfmodel.validation import validate

COLUMNS = ["figure_id", "source", "metric", "recorded", "predicted", "rel_error", "in_band"]


@pytest.fixture(scope="module")
def ceph():
    figures = perfmodel.load_benchmarks()
    return figures[figures.source_id.isin(["ctx-ceph-part1", "ctx-ceph-part2", "seed004"])].reset_index(
        drop=True
    )


def test_in_sample_report_lists_every_usable_figure(ceph):
    report = validate(ceph)
    assert set(COLUMNS) <= set(report.figures.columns)
    assert len(report.figures) + len(report.excluded) == len(ceph)
    # summary figures come from the table: recompute one by hand
    errors = np.abs(report.figures.rel_error)
    overall = report.summary().iloc[0]
    assert overall.figures == len(report.figures)
    assert overall.median_abs_rel_error == pytest.approx(np.median(errors))
    assert overall.p90_abs_rel_error == pytest.approx(np.percentile(errors, 90))
    lines = report.summary_lines()
    assert lines[0].startswith("validation (in-sample)") and "free parameters" in lines[0]


def test_percent_changes_are_compared_on_the_ratio_scale(ceph):
    report = validate(ceph).figures.set_index("figure_id")
    row = report.loc["seed004-t2-randwrite-rf3-vs-rf2-iops"]
    assert row.rel_error == pytest.approx((1 + row.predicted / 100) / (1 + row.recorded / 100) - 1)


def test_leave_one_source_out_refits_without_the_source(ceph):
    free = ["cpu_cycles_write[ceph]"]
    report = validate(ceph, cv="source", free=free, workers=1, max_nfev=8)
    assert report.cv == "cv=source"
    assert report.figures.predicted.notna().all()
    # predictions differ from in-sample ones: each source was predicted by a fit that never saw it
    in_sample = validate(ceph).figures.set_index("figure_id").predicted
    moved = (report.figures.set_index("figure_id").predicted - in_sample).abs() > 0
    assert moved.any()
    # a miss the full fit explains is labelled as such, never as a model gap
    ok_in_sample = validate(ceph).figures.set_index("figure_id").rel_error.abs() <= 0.25
    gap = report.figures.set_index("figure_id").gap
    out_only = gap[gap == "out-of-sample-only"].index
    assert ok_in_sample[out_only].all()
    assert not ok_in_sample[gap[(gap != "") & (gap != "out-of-sample-only")].index].any()


def test_bad_cv_value():
    with pytest.raises(ValueError, match="^cv"):
        validate(cv="kfold")


def test_predicted_vs_recorded_plot_has_one_point_per_positive_figure(ceph, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from perfmodel.validation import plot_predicted_vs_recorded

    report = validate(ceph)
    ax = plot_predicted_vs_recorded(report)
    from matplotlib.collections import PathCollection

    points = sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection))
    table = report.figures
    pct = table.unit == "pct_change"
    rec = table.recorded.where(~pct, 1 + table.recorded / 100)
    pred = table.predicted.where(~pct, 1 + table.predicted / 100)
    expected = int(((rec > 0) & (pred > 0)).sum())
    assert points == expected
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    ax.figure.savefig(tmp_path / "pvr.png")


def test_misses_are_named_with_their_gap(tmp_path):
    from perfmodel.validation import MISS_THRESHOLD, gap_of, load_gaps

    gaps = load_gaps()
    ids = [g["id"] for g in gaps]
    assert len(ids) == len(set(ids))
    assert gap_of("seed000-table3-x86-disk-p99", gaps) == "cache-warmup"  # wildcard pattern
    assert gap_of("no-such-figure", gaps) == ""
    report = validate()
    missed = report.missed()
    assert (missed["rel_error"].abs() > MISS_THRESHOLD).all()
    rest = report.figures[report.figures["gap"] == ""]
    assert (rest["rel_error"].abs() <= MISS_THRESHOLD).all()
    assert any(line.startswith("beyond 25%") for line in report.summary_lines())
    bad = tmp_path / "gaps.yaml"
    bad.write_text("gaps:\n  - id: x\n    figures: [a]\n")
    with pytest.raises(ValueError, match="lacks"):
        load_gaps(bad)
