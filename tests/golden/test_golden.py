"""The model's numbers are pinned: every predict output column on a wide grid, to 1e-9 relative.

A refactor of the composition must not move a number (tests/golden/make_golden.py
regenerates the file for a deliberate model change; its commit says what moved).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

HERE = Path(__file__).resolve().parent


def _maker():
    spec = importlib.util.spec_from_file_location("make_golden", HERE / "make_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def frames():
    stored = pd.read_csv(HERE / "predict_grid.csv", keep_default_na=False, na_values=[""])
    return stored, _maker().golden()


def test_every_golden_number_is_unchanged(frames):
    stored, now = frames
    assert list(now.columns) == list(stored.columns)
    assert list(now["case"]) == list(stored["case"])
    for col in stored.columns:
        a, b = stored[col], now[col]
        if pd.api.types.is_numeric_dtype(a) and not pd.api.types.is_bool_dtype(a):
            x, y = a.to_numpy(float), b.to_numpy(float)
            same = (x == y) | (np.isnan(x) & np.isnan(y))
            close = np.isclose(x, y, rtol=1e-9, atol=1e-12) | same
            bad = np.flatnonzero(~close)
            assert not len(bad), (
                f"{col}: {len(bad)} rows moved, first {now['case'][bad[0]]}: {x[bad[0]]} -> {y[bad[0]]}"
            )
        else:
            assert (a.astype(str).to_numpy() == b.astype(str).to_numpy()).all(), col


def test_the_grid_covers_every_system_platform_and_knob(frames):
    import perfmodel

    stored, _ = frames
    maker = _maker()
    assert set(stored["platform"]) == set(maker.platforms()) | set(maker.SPECIAL_PLATFORMS)
    assert perfmodel.load_platform(maker.SPECIAL_PLATFORMS[0]).vm_exits_per_message > 0
    # every architecture family of the catalog, every shipped system
    arches = {perfmodel.load_platform(p).arch for p in perfmodel.list_platforms()}
    assert {perfmodel.load_platform(p).arch for p in set(stored["platform"])} == arches
    assert set(stored["system"]) == set(perfmodel.list_systems())
    assert stored["saturated"].any() and (~stored["saturated"]).any()
    for knob in (
        "virtualization",
        "wal_device",
        "osds_per_device",
        "threads_per_core",
        "thread_cap",
        "devices",
        "token_aware",
        "placement_units",
        "statements_per_op",
        "network",
        "ec_k",
    ):
        assert stored["case"].str.contains(knob).any(), knob
