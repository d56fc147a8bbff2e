"""Calibration: recovers known parameters from model-generated data; bad input."""

from __future__ import annotations

import numpy as np
import pytest

import perfmodel
from perfmodel.calibration import calibrate, figure_residuals
from perfmodel.figures import predict_figures

TRUE = {"cpu_cycles_read[ceph]": 450e3, "cpu_cycles_write[ceph]": 1.3e6}


@pytest.fixture(scope="module")
def synthetic():
    """Ceph context figures whose 'recorded' values the model produced from TRUE (+1% noise)."""
    figures = perfmodel.load_benchmarks()
    figures = figures[figures.source_id.isin(["ctx-ceph-part1", "ctx-ceph-part2"])].reset_index(drop=True)
    truth = perfmodel.load_parameters("default").with_values(name="truth", **TRUE)
    predicted = predict_figures(figures, truth)["predicted"].to_numpy()
    noise = np.exp(np.random.default_rng(3).normal(0.0, 0.01, len(figures)))
    synthetic = figures.copy()
    synthetic["value_si"] = predicted * noise
    return synthetic


def test_parameter_recovery_within_confidence_intervals(synthetic):
    result = calibrate(synthetic, params="default", free=list(TRUE), max_nfev=80)
    table = result.table().set_index("parameter")
    for key, true in TRUE.items():
        assert table.loc[key, "ci_low"] <= true <= table.loc[key, "ci_high"], (key, table.loc[key].to_dict())
        assert table.loc[key, "value"] == pytest.approx(true, rel=0.1)
    # the noise is 1% in log terms: the fit explains the data to about that level
    assert np.median(np.abs(result.residuals_["log_residual"])) < 0.02
    assert result.provenance_["figures"] == len(synthetic)
    assert not result.flags_


def test_a_parameter_no_figure_informs_is_flagged(synthetic):
    """These Ceph figures never overflow the onode cache, so they cannot inform its size."""
    result = calibrate(synthetic, params="default", free=[*TRUE, "onode_bytes[ceph]"], max_nfev=80)
    assert result.flags_["onode_bytes[ceph]"] == "no figure is sensitive to it"
    assert np.isinf(result.table().set_index("parameter").loc["onode_bytes[ceph]", "stderr"])


def test_result_serialises_to_json_and_names_exclusions(synthetic, tmp_path):
    data = synthetic.copy()
    data.loc[0, "role"] = "summary"  # reported, not fitted
    result = calibrate(data, params="default", free=["cpu_cycles_read[ceph]"], max_nfev=10)
    assert data.loc[0, "figure_id"] in set(result.excluded_.figure_id)
    assert "role not fitted" in result.excluded_.set_index("figure_id").loc[data.loc[0, "figure_id"], "reason"]
    path = tmp_path / "fit.json"
    result.save(path)
    import json

    saved = json.loads(path.read_text())
    assert saved["parameter_set"]["name"] == "calibrated"
    assert saved["provenance"]["uncertainty"].startswith("Jacobian")
    assert "calibrated 1 parameters" in result.report()


def test_one_sided_and_relative_residuals():
    import pandas as pd

    table = pd.DataFrame({
        "unit": ["iops", "ratio", "pct_change", "ratio", "ratio"], "value": [1.0, 1.68, -29.0, 1.0, 1.0],
        "value_si": [100.0, 1.68, -29.0, 1.0, 1.0], "predicted": [110.0, 1.5, -20.0, 0.8, 1.3],
        "relation": ["", "", "", "gt", "gt"],
    })
    r, w = figure_residuals(table)
    assert r[0] == pytest.approx(np.log(1.1))
    assert r[1] == pytest.approx(np.log(1.5 / 1.68))
    assert r[2] == pytest.approx(np.log(0.80 / 0.71))
    assert r[3] == pytest.approx(np.log(0.8)) and r[4] == 0.0  # "greater than" only penalises below
    assert list(w) == [1.0] * 5


def test_bad_free_parameters():
    with pytest.raises(ValueError, match="^free: 'warp_factor'"):
        calibrate(free=["warp_factor"])
    with pytest.raises(ValueError, match="^free: 'cpu_cycles_miss\\[dm8\\]' must be positive"):
        calibrate(free=["cpu_cycles_miss[dm8]"])
