"""The shipped parameter sets: loadable, sourced, and the calibrated one is not stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import perfmodel
from perfmodel.evidence.calibration import DEFAULT_FREE, _code_digest, check_changes, fit_check, stale_reasons

PARAMETERS = Path(perfmodel.__file__).resolve().parent / "parameters"


def test_default_set_cites_a_source_and_bounds_every_value():
    params = perfmodel.load_parameters("default")
    for key, value in params.values.items():
        info = params.info[key]
        assert info.source.strip(), key
        assert info.bounds[0] <= value <= info.bounds[1], key


def test_predict_uses_the_calibrated_set_by_default():
    assert "calibrated" in perfmodel.list_parameter_sets()
    assert perfmodel.load_parameters().name == "calibrated"


def test_calibrated_set_is_not_stale():
    """Refit with `python -m tools.refit` when figures, priors, catalog or predictions change."""
    reasons = stale_reasons()
    assert not reasons, (
        "perfmodel/parameters/calibrated.json is stale: "
        + "; ".join(reasons)
        + "; regenerate it with `python -m tools.refit`"
    )
    doc = json.loads((PARAMETERS / "calibrated.json").read_text())
    fitted = {row["parameter"] for row in doc["fit"]["fit"]}
    assert fitted == set(DEFAULT_FREE)


def test_the_fit_check_sees_a_changed_prediction_not_a_changed_layout(monkeypatch):
    """Staleness is about numbers: the check equals itself, and moves when the model's code computes
    something else (here the network stack's fixed latency made 1% slower, as an edit would)."""
    from perfmodel.model import chain

    doc = json.loads((PARAMETERS / "calibrated.json").read_text())
    assert check_changes(doc["check"], fit_check("calibrated")) == []
    real = chain.load_parameters

    def slower(name=None):
        params = real(name)
        return params.with_values(net_stack_s=params["net_stack_s"] * 1.01)

    monkeypatch.setattr(chain, "load_parameters", slower)
    changes = check_changes(doc["check"], fit_check("calibrated"))
    assert changes and changes[0].startswith("residuals of")


def test_calibrated_values_lie_inside_the_documented_bounds():
    calibrated, default = perfmodel.load_parameters("calibrated"), perfmodel.load_parameters("default")
    assert set(calibrated.values) == set(default.values)
    for key in DEFAULT_FREE:
        lo, hi = default.info[key].bounds
        assert lo <= calibrated[key] <= hi, key


@pytest.mark.parametrize("name", ["default", "calibrated"])
def test_every_seed_system_predicts_with_each_set(name):
    from perfmodel.evidence.figure_plan import predict_figures

    out = predict_figures(perfmodel.load_benchmarks(), name)
    assert out.predicted.notna().sum() >= 150


def test_the_code_digest_sees_code_not_layout_comments_or_docstrings():
    base = _code_digest('def f(x):\n    """Doc."""\n    return 2 * x\n')
    assert _code_digest('def f(x):\n    """Other doc."""\n\n    return 2 * x  # comment\n') == base
    assert _code_digest("def f(x):\n    return 3 * x\n") != base
    assert _code_digest('def f(x):\n    """Doc."""\n    return 2 * x\nK = 1\n') != base
