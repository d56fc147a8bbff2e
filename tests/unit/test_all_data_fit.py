"""The all-data trial (issue 37 point 5): every held-out lab is predicted by a fit that never saw it."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

from perfmodel.evidence import all_data_fit


def test_no_refit_sees_the_lab_it_predicts(monkeypatch):
    """The fits are recorded, not run: the first fit takes every lab (seeds and corpus), each later
    one every lab but the one whose figures are then scored."""
    seen = []

    def fake_fit(figures, start, free):
        assert np.allclose(figures["fit_weight"] ** 2 @ np.ones(len(figures)), len(figures))
        seen.append(set(figures["group"]))
        return types.SimpleNamespace(params_=start)

    monkeypatch.setattr(all_data_fit, "_fit", lambda f, s, fr: fake_fit(f.assign(
        fit_weight=all_data_fit.lab_weights(f["group"])), s, fr))  # fmt: skip
    table = all_data_fit.trial(["memcached"], progress=False)
    labs = sorted(set(table["lab"]))
    assert len(labs) >= 3 and seen[0] >= set(labs)
    assert len(seen) == 1 + len(labs)
    for lab, trained in zip(labs, seen[1:], strict=True):
        assert lab not in trained and trained == seen[0] - {lab}
    # refits that are the starting set predict what the stored zero-shot did
    from perfmodel.evidence import corpus

    zero = corpus.load().set_index("figure_id")["zero_shot_factor"].reindex(table["figure_id"]).to_numpy()
    ok = np.isfinite(zero) & np.isfinite(table["trial"].to_numpy())
    assert ok.sum() > 50
    assert np.allclose(table["trial"].to_numpy()[ok], zero[ok], rtol=1e-9)


def test_summary_is_the_median_of_lab_medians():
    table = pd.DataFrame({
        "system": "redis", "lab": ["a", "a", "a", "b", "c"], "figure_id": list("vwxyz"),
        "metric": "throughput", "unit": "ops/s", "reason": ["", "", "", "", "derived"],
        "shipped": [1.0, 2.0, 9.0, 4.0, 100.0], "trial": [1.5, 1.5, 1.5, 3.0, 100.0],
    })  # fmt: skip
    row = all_data_fit.summary(table).iloc[0]
    assert (row.labs, row.figures) == (2, 4)  # the unscored figure's lab is gone
    assert row.shipped == pytest.approx((2.0 + 4.0) / 2) and row.trial == pytest.approx((1.5 + 3.0) / 2)
    assert row.worst_lab_trial == pytest.approx(3.0)
