"""What a lab's figures can pin (perfmodel.evidence.identify) and the split cross-validation that fits
a lab on a third of its figures (perfmodel.evidence.split_cv), checked on synthetic labs whose truth is
known: the model itself with some parameters moved."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import perfmodel as pm
from perfmodel.cli import main
from perfmodel.evidence import identify, split_cv
from perfmodel.evidence.calibration import calibrate
from perfmodel.evidence.figure_plan import predict_figures
from perfmodel.inputs._data import data_dir
from perfmodel.inputs.units import UNITS

SCYLLA = data_dir() / "benchmarks" / "corpus_sitano-scylla-ycsb-2020.csv"


@pytest.fixture(scope="module")
def lab():
    figures = pm.load_benchmarks(SCYLLA)
    return figures[figures["role"] == "measured"].reset_index(drop=True)


def _synthetic(figures: pd.DataFrame, truth) -> pd.DataFrame:
    """``figures`` with the values ``truth`` predicts (SI and as printed)."""
    predicted = predict_figures(figures, truth)["predicted"].to_numpy()
    relative = figures["unit"].map(lambda u: UNITS[u].dimension in ("ratio", "pct_change")).to_numpy()
    scale = np.array([UNITS[u].to_si for u in figures["unit"]])
    return figures.assign(value=np.where(relative, predicted, predicted / scale), value_si=predicted)


@pytest.fixture(scope="module")
def truth_and_lab(lab):
    start = pm.load_parameters("calibrated")
    moved = {"cpu_cycles_read[scylla]": 1.5, "net_stack_s": 4.0}
    # the lab's YCSB loaders (client_cores recorded) spend 30 us per request: a lab parameter too
    truth = start.with_values(name="truth", client_time_s=3e-5, **{k: start[k] * f for k, f in moved.items()})
    return start, truth, _synthetic(lab, truth)


def test_the_chosen_parameters_recover_a_known_lab(truth_and_lab):
    """The parameters the figures can pin, fitted without priors, give back the truth exactly, and
    what the choice leaves fixed is either insensitive or a combination of what it kept."""
    start, truth, syn = truth_and_lab
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        choice = identify.choose_free(syn, start)
    assert {"cpu_cycles_read[scylla]", "net_stack_s"} <= set(choice.free)
    assert all(
        ("under" in why) or ("cannot tell" in why) or ("bounds" in why) for why in choice.fixed.values()
    )
    fit = calibrate(syn, params=identify.fit_start(start, choice.free), free=choice.free, priors=None)
    for key in choice.free:
        assert math.isclose(fit.params_[key], truth[key], rel_tol=1e-4), key
    assert "free (the figures move and can tell apart):" in choice.lines()


def test_an_insensitive_parameter_is_left_fixed_with_its_reason(lab):
    start = pm.load_parameters("calibrated")
    choice = identify.choose_free(lab, start, ["cpu_cycles_read[scylla]", "cpu_cycles_read[redis]"])
    assert choice.free == ("cpu_cycles_read[scylla]",)
    assert (
        choice.effect["cpu_cycles_read[redis]"] == 0.0
        and "under 5%" in choice.fixed["cpu_cycles_read[redis]"]
    )


def test_collinearity_is_the_cosine_with_the_span_kept():
    jac = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    assert identify._collinearity(jac, [], 2) == (0.0, -1)
    cosine, _ = identify._collinearity(jac, [0, 1], 2)  # column 2 = column 0 + column 1
    assert math.isclose(cosine, 1.0)
    cosine, nearest = identify._collinearity(jac, [0, 1], 3)  # (1, 0, 1): half outside the span
    assert math.isclose(cosine, 1 / math.sqrt(2)) and nearest == 0


def test_split_takes_a_third_of_each_metric_group_and_keeps_restatements_together(lab):
    train = split_cv.split(lab)
    assert abs(train.mean() - 1 / 3) < 0.05
    groups = [split_cv._group(r) for r in lab.to_dict("records")]
    for g in set(groups):
        mine = np.array(groups) == g
        assert 0 < train[mine].sum() < mine.sum()
    ids = dict(zip(lab["figure_id"], train, strict=True))
    for fid, same in zip(lab["figure_id"], lab["same_measurement"].fillna(""), strict=True):
        for other in filter(None, str(same).split(";")):
            if other in ids:
                assert ids[other] == ids[fid], (fid, other)


def test_split_cv_carries_a_known_lab_to_its_held_out_figures(truth_and_lab):
    """On a lab the model explains exactly once three parameters move, fitting a third brings the other
    two thirds to within 5% (the priors hold the fit back a little), where zero-shot misses by more."""
    start, _truth, syn = truth_and_lab
    table = split_cv.run(syn, start=start, workers=1, progress=False)
    assert len(table) == (~split_cv.split(syn)).sum()
    assert table["split_factor"].median() < 1.05 < table["zero_shot_factor"].median()
    frame = split_cv.summary(table, ("system",))
    assert frame.loc[0, "labs"] == 1 and math.isclose(
        frame.loc[0, "split_pooled"], table["split_factor"].median()
    )


@pytest.mark.slow  # about 11 s: make test runs it, make test-fast does not
def test_cli_split_and_auto_calibrate(tmp_path, capsys):
    assert main(["validate", "--cv", "split", "--data", str(SCYLLA), "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "Split cross-validation: 1 labs" in out and "| scylla |" in out
    assert main(["calibrate", "--data", str(SCYLLA), "--max-evaluations", "5"]) == 0
    out = capsys.readouterr().out
    assert "free (the figures move and can tell apart):" in out and "net_stack_s" in out
    assert main(["calibrate", "--free", "auto"]) == 2
    assert "--free auto: needs --data" in capsys.readouterr().err


def test_the_stored_split_run_is_current_and_in_the_docs():
    """Regenerate with `python -m tools.run_corpus` when the corpus or the shipped fit changes."""
    from perfmodel.evidence import corpus

    stored = split_cv.load()
    assert stored.attrs["fingerprint"] == corpus.fingerprint()
    assert stored["group"].nunique() >= 30 and np.isfinite(stored["split_factor"]).all()
    docs = (Path(__file__).resolve().parents[2] / "docs" / "validation.md").read_text(encoding="utf-8")
    assert split_cv.markdown(stored) in docs


def test_a_lab_scoped_set_round_trips_and_bad_scopes_are_refused(tmp_path):
    shipped = pm.load_parameters("calibrated")
    lab = replace(shipped, name="my-lab", scope="lab")
    lab.save(tmp_path / "lab.json")
    assert pm.load_parameters(tmp_path / "lab.json").scope == "lab"
    doc = json.loads((tmp_path / "lab.json").read_text())
    doc["scope"] = "world"
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="scope must be 'lab'"):
        pm.load_parameters(tmp_path / "bad.json")


def test_a_lab_fit_takes_the_own_lab_band_and_caveat(tmp_path):
    """The same values saved as a lab's own fit and as an ordinary set: the lab's throughput band is the
    split run's (about 17x wide at 90% over all systems) where ScyllaDB's new-lab band is wider, so it
    is strictly narrower; and its caveat says how fits on a lab's own runs carried."""
    from perfmodel.model import bands

    shipped = pm.load_parameters("calibrated")
    replace(shipped, name="my-lab", scope="lab").save(tmp_path / "lab.json")
    replace(shipped, name="plain").save(tmp_path / "plain.json")
    w = pm.Workload(operation="read", read_fraction=1.0, object_bytes=1000, dataset_bytes=1e11, clients=64)

    def band(name):
        out = pm.predict("x86-aws-i3-4xlarge", w, system="scylla", params=str(tmp_path / name), interval=0.9)
        return out["throughput_ops_s_upper"][0] / out["throughput_ops_s"][0], out.attrs["caveat"]

    own, new = bands.own_lab_half_width("throughput", 0.9), bands.half_width("scylla", "throughput", 0.9)
    assert 0 < own < new  # the precondition the comparison rests on (the stored runs)
    (lab_ratio, lab_caveat), (plain_ratio, plain_caveat) = band("lab.json"), band("plain.json")
    assert lab_ratio < plain_ratio
    assert math.isclose(plain_ratio, math.exp(new), rel_tol=1e-9) or plain_ratio > math.exp(new)
    assert "fitted on your own runs" in lab_caveat and "fitted on your own" not in plain_caveat


def test_client_time_is_the_closed_loops_think_time_and_nothing_else():
    """client_time_s (the load generator's time per request outside the latency it measures) is a
    think time in a closed loop -- N / X = R + Z, Little's law over the cycle -- and moves no open loop."""
    shipped = pm.load_parameters("calibrated")
    z = 1e-4
    lab = shipped.with_values(name="lab", client_time_s=z)
    closed = dict(operation="read", read_fraction=1.0, object_bytes=100, dataset_bytes=1e9, clients=20)
    with_z = pm.predict("x86-aws-i3-4xlarge", pm.Workload(**closed), system="redis", params=lab).iloc[0]
    think = pm.predict("x86-aws-i3-4xlarge", pm.Workload(**closed, think_time_s=z), system="redis",
                       params=shipped).iloc[0]  # fmt: skip
    for col in ("throughput_ops_s", "latency_mean_ms", "latency_p99_ms"):
        assert math.isclose(with_z[col], think[col], rel_tol=1e-12), col
    assert math.isclose(20 / with_z["throughput_ops_s"], with_z["latency_mean_ms"] / 1e3 + z, rel_tol=1e-6)
    opened = pm.Workload(
        operation="read", read_fraction=1.0, object_bytes=100, dataset_bytes=1e9, arrival_rate=5e4
    )
    a = pm.predict("x86-aws-i3-4xlarge", opened, system="redis", params=lab).iloc[0]
    b = pm.predict("x86-aws-i3-4xlarge", opened, system="redis", params=shipped).iloc[0]
    assert a["latency_p99_ms"] == b["latency_p99_ms"]


def test_a_lab_parameter_starts_above_zero_only_when_freed():
    shipped = pm.load_parameters("calibrated")
    assert shipped["client_time_s"] == 0
    assert identify.fit_start(shipped, ["cpu_cycles_read[redis]"])["client_time_s"] == 0
    assert (
        identify.fit_start(shipped, ["client_time_s"])["client_time_s"]
        == identify.LAB_STARTS["client_time_s"]
    )
