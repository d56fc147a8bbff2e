"""Argument checks for the system models (built on the queueing engine's checks).

Every failure is a ValueError whose message starts with the argument's name.
"""

from __future__ import annotations

import numpy as np

from perfmodel.queueing._validate import as_array, broadcast

__all__ = ["as_array", "broadcast", "in_range"]


def in_range(
    value, name: str, lo: float | None = None, hi: float | None = None, *, allow_inf: bool = False
) -> np.ndarray:
    """``value`` as a float array with every element in ``[lo, hi]``."""
    arr = as_array(value, name, allow_inf=allow_inf)
    if lo is not None and (arr < lo).any():
        raise ValueError(f"{name}: must be >= {lo:g} (got min {arr.min()!r})")
    if hi is not None and (arr > hi).any():
        raise ValueError(f"{name}: must be <= {hi:g} (got max {arr.max()!r})")
    return arr
