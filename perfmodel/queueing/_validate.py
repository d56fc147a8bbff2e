"""Input checks shared by the queueing functions.

Every check raises :class:`ValueError` whose message starts with the name of the
offending argument, so a caller sweeping a grid sees which input is wrong.
The helpers return float64 numpy arrays (0-d for scalars) so the models can
broadcast them.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "as_array",
    "as_probability",
    "as_servers",
    "broadcast",
]


def as_array(
    value,
    name: str,
    *,
    positive: bool = False,
    nonnegative: bool = False,
    allow_inf: bool = False,
) -> np.ndarray:
    """Return ``value`` as a float64 array after checking it.

    Parameters
    ----------
    value : array_like
        The argument to check.
    name : str
        Argument name used in the error message.
    positive, nonnegative : bool
        Require every element to be > 0 (resp. >= 0).
    allow_inf : bool
        Accept +inf (never -inf).

    Raises
    ------
    ValueError
        If ``value`` is not numeric, contains NaN, -inf, +inf (unless
        ``allow_inf``), or violates the sign requirement.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected a number or an array of numbers") from exc
    if np.isnan(arr).any():
        raise ValueError(f"{name}: contains NaN")
    if allow_inf:
        if np.isneginf(arr).any():
            raise ValueError(f"{name}: contains -inf")
    elif np.isinf(arr).any():
        raise ValueError(f"{name}: contains inf")
    if positive and (arr <= 0).any():
        raise ValueError(f"{name}: must be > 0 (got min {arr.min()!r})")
    if nonnegative and (arr < 0).any():
        raise ValueError(f"{name}: must be >= 0 (got min {arr.min()!r})")
    return arr


def as_servers(value, name: str = "servers", *, allow_inf: bool = False) -> np.ndarray:
    """Return a server count array (float64 holding integers >= 1).

    ``allow_inf`` accepts ``inf`` as an infinite-server (delay) station.

    Raises
    ------
    ValueError
        If an element is NaN, < 1, not an integer, or inf when not allowed.
    """
    arr = as_array(value, name, allow_inf=allow_inf)
    if (arr < 1).any():
        raise ValueError(f"{name}: server counts must be >= 1 (got min {arr.min()!r})")
    finite = arr[np.isfinite(arr)]
    if (finite != np.floor(finite)).any():
        raise ValueError(f"{name}: server counts must be integers")
    return arr


def as_probability(value, name: str = "q") -> np.ndarray:
    """Return a probability level array, each element strictly inside (0, 1).

    Raises
    ------
    ValueError
        If an element is NaN or outside the open interval (0, 1).
    """
    arr = as_array(value, name)
    if ((arr <= 0) | (arr >= 1)).any():
        raise ValueError(f"{name}: must lie strictly between 0 and 1")
    return arr


def broadcast(**arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Broadcast the named arrays against each other.

    Returns the broadcast arrays in the order given. Raises ValueError naming
    every argument and its shape when the shapes are incompatible.
    """
    try:
        return tuple(np.broadcast_arrays(*arrays.values()))
    except ValueError as exc:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"{', '.join(arrays)}: shapes do not broadcast ({shapes})") from exc
