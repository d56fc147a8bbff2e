"""Shared fixtures: seeded randomness and paths to the repository and seeds."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(autouse=True)
def _seed_randomness():
    """Every test starts from the same random state."""
    random.seed(12345)
    np.random.seed(12345)  # noqa: NPY002 -- legacy global state, for any code that still uses it


@pytest.fixture
def shared_dir() -> Path:
    """The project's shared/ folder (seed documents); skip when not beside the checkout."""
    if not (SHARED / "seeds").is_dir():
        pytest.skip("shared/ (seed documents) is not beside this checkout")
    return SHARED
