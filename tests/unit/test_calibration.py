"""Calibration: recovers known parameters from model-generated data; bad input."""

from __future__ import annotations

import numpy as np
import pytest

import perfmodel
from perfmodel.evidence.calibration import calibrate, figure_residuals
from perfmodel.evidence.figure_plan import predict_figures

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
    assert result.converged_ and result.provenance_["status"] > 0


def test_a_fit_stopped_by_its_cap_says_it_did_not_converge(synthetic):
    result = calibrate(synthetic, params="default", free=list(TRUE), max_nfev=1)
    assert not result.converged_ and result.provenance_["status"] == 0
    assert "NOT CONVERGED" in result.report()


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
    assert (
        "role not fitted" in result.excluded_.set_index("figure_id").loc[data.loc[0, "figure_id"], "reason"]
    )
    path = tmp_path / "fit.json"
    result.save(path)
    import json

    saved = json.loads(path.read_text())
    assert saved["parameter_set"]["name"] == "calibrated"
    assert saved["provenance"]["uncertainty"].startswith("Jacobian")
    assert "calibrated 1 parameters" in result.report()


def test_one_sided_and_relative_residuals():
    import pandas as pd

    table = pd.DataFrame(
        {
            "unit": ["iops", "ratio", "pct_change", "ratio", "ratio"],
            "value": [1.0, 1.68, -29.0, 1.0, 1.0],
            "value_si": [100.0, 1.68, -29.0, 1.0, 1.0],
            "predicted": [110.0, 1.5, -20.0, 0.8, 1.3],
            "relation": ["", "", "", "gt", "gt"],
        }
    )
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


USER_PLATFORM = """
references:
  lab: "my lab inventory, 2026"
platforms:
  - id: lab-box
    name: Lab box
    arch: x86
    sockets: 1
    cores_per_socket: 16
    cores: 16
    threads_per_core: 2
    smt_modes: [1, 2]
    threads: 32
    numa_nodes: 1
    base_ghz: 2.6
    ram_gib: 256
    network: eth-25g
    storage:
      - {device: intel-p4500-4tb, count: 2}
    sources: {sockets: lab, cores_per_socket: lab, cores: lab, threads_per_core: lab, threads: lab,
              numa_nodes: lab, base_ghz: lab, ram_gib: lab}
"""


def test_users_calibrate_on_their_own_platform_and_measurements(tmp_path):
    """End to end: a user's platform YAML and measurement CSV, fitted back to known values."""
    import csv

    from perfmodel.evidence.figure_plan import predict_figures as predict_with
    from perfmodel.inputs.catalog import Catalog, default_catalog

    (tmp_path / "lab.yaml").write_text(USER_PLATFORM)
    catalog = Catalog.from_files([tmp_path / "lab.yaml"], base=default_catalog())
    rows = []
    for i, (clients, rf) in enumerate([(c, r) for c in (4, 16, 64, 256) for r in (0.5, 0.9, 1.0)]):
        rows.append(
            {
                "figure_id": f"lab-{i}",
                "source_id": "lab",
                "source": "my lab",
                "locator": f"run {i}",
                "role": "measured",
                "system": "cassandra",
                "platform_id": "lab-box",
                "device_id": "intel-p4500-4tb",
                "operation": "mixed",
                "read_fraction": rf,
                "object_bytes": 1024,
                "dataset_gb": 2000,
                "clients": clients,
                "level": "client",
                "metric": "throughput",
                "value": 1.0,
                "unit": "ops/s",
            }
        )
    path = tmp_path / "lab.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    data = perfmodel.load_benchmarks(path, catalog=catalog)
    truth = perfmodel.load_parameters("default").with_values(**{"cpu_cycles_read[cassandra]": 180e3})
    noise = np.exp(np.random.default_rng(11).normal(0.0, 0.02, len(data)))  # 2% measurement noise
    data["value_si"] = predict_with(data, truth, catalog)["predicted"].to_numpy() * noise
    result = calibrate(
        data, params="default", free=["cpu_cycles_read[cassandra]"], catalog=catalog, max_nfev=40
    )
    row = result.table().iloc[0]
    assert row.ci_low <= 180e3 <= row.ci_high and row.value == pytest.approx(180e3, rel=0.05)


def test_lab_weights_give_every_lab_the_same_share():
    from perfmodel.evidence.calibration import lab_weights

    labs = ["a"] * 90 + ["b"] * 9 + ["c"]
    w = lab_weights(labs)
    shares = {lab: float(np.sum(w[np.array(labs) == lab] ** 2)) for lab in "abc"}
    assert shares == pytest.approx({"a": 100 / 3, "b": 100 / 3, "c": 100 / 3})
    assert np.sum(w**2) == pytest.approx(100)
    assert lab_weights([]).size == 0


def test_a_figure_of_weight_zero_is_as_if_it_were_not_there(synthetic):
    """``fit_weight`` scales a figure's share of the objective: weight 0 on one source, which a lab
    offset put 2x high, gives the fit on the other source alone; weight 1 on all, the plain fit."""
    part2 = (synthetic["source_id"] == "ctx-ceph-part2").to_numpy()
    data = synthetic.assign(value_si=np.where(part2, 2 * synthetic["value_si"], synthetic["value_si"]))
    free = ["cpu_cycles_write[ceph]"]

    def value(frame):
        return calibrate(frame, params="default", free=free, max_nfev=80).values_[0]

    alone = value(data[~part2].reset_index(drop=True))
    assert value(data.assign(fit_weight=np.where(part2, 0.0, 1.0))) == pytest.approx(alone, rel=1e-6)
    assert value(data.assign(fit_weight=1.0)) == pytest.approx(value(data), rel=1e-9)
    assert value(data) != pytest.approx(alone, rel=1e-3)
