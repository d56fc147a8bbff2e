"""Consistency levels: how many replica answers a request waits for (the workload's vocabulary).

A workload names a level (``ONE``, ``QUORUM``, ``ALL``, ...) or an integer; the replication
mechanism (:mod:`perfmodel.mechanisms.replication`) turns the answer count into latency.
"""

from __future__ import annotations

import numpy as np

from perfmodel.inputs._validate import as_array, broadcast

#: Named consistency levels (single data centre: LOCAL_* equal their global forms).
CONSISTENCY_LEVELS = ("ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_ONE", "LOCAL_QUORUM")
#: the levels a system spec's ``write_consistency`` and the planner offer
COMMON_LEVELS = ("ONE", "QUORUM", "ALL")


def counts(value, name: str, *, minimum: int = 1) -> np.ndarray:
    """An integer count array (float64 holding integers >= ``minimum``)."""
    arr = as_array(value, name)
    if (arr < minimum).any():
        raise ValueError(f"{name}: must be >= {minimum} (got min {arr.min():g})")
    if (arr != np.floor(arr)).any():
        raise ValueError(f"{name}: must be integers")
    return arr


def acks_required(consistency, replication_factor) -> np.ndarray:
    """Replica answers a request waits for at a consistency level [count].

    Parameters
    ----------
    consistency : str or array_like of int
        ``"ONE"``, ``"TWO"``, ``"THREE"``, ``"QUORUM"``, ``"ALL"`` (also
        ``"LOCAL_ONE"``, ``"LOCAL_QUORUM"``, equal to ONE and QUORUM in a single
        data centre), case-insensitive, or an explicit integer k >= 1.
    replication_factor : array_like
        Replication factor RF [count], integer >= 1.

    Returns
    -------
    numpy.ndarray
        k [count] as int64, broadcast over ``replication_factor``: ONE -> 1,
        TWO -> 2, THREE -> 3, QUORUM -> floor(RF / 2) + 1, ALL -> RF, k -> k.

    Raises
    ------
    ValueError
        Unknown level (the message lists the valid ones), or k > RF.

    References
    ----------
    Apache Cassandra documentation, "Tunable consistency"; DataStax, "How is
    the consistency level configured?" (quorum = floor(RF / 2) + 1).
    """
    rf = counts(replication_factor, "replication_factor")
    if isinstance(consistency, str):
        level = consistency.strip().upper()
        if level not in CONSISTENCY_LEVELS:
            raise ValueError(
                f"consistency: unknown level {consistency!r}; valid: {', '.join(CONSISTENCY_LEVELS)} "
                "or an integer"
            )
        if level in ("ONE", "LOCAL_ONE"):
            k = np.ones_like(rf)
        elif level == "TWO":
            k = np.full_like(rf, 2.0)
        elif level == "THREE":
            k = np.full_like(rf, 3.0)
        elif level in ("QUORUM", "LOCAL_QUORUM"):
            k = np.floor(rf / 2.0) + 1.0
        else:  # ALL
            k = rf.copy()
    else:
        if isinstance(consistency, bool | np.bool_):
            raise ValueError("consistency: expected a level name or an integer, got a bool")
        try:
            k = counts(consistency, "consistency")
        except ValueError as exc:
            raise ValueError(f"{exc}; valid levels: {', '.join(CONSISTENCY_LEVELS)} or an integer") from exc
        k, rf = broadcast(consistency=k, replication_factor=rf)
    k, rf = broadcast(consistency=k, replication_factor=rf)
    bad = k > rf
    if bad.any():
        raise ValueError(
            f"consistency: needs {int(k[bad].flat[0])} answers but replication_factor is "
            f"{int(rf[bad].flat[0])}; k must be <= replication_factor"
        )
    return k.astype(np.int64)
