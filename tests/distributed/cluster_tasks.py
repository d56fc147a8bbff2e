"""Task functions for the cluster tests, importable by the Dask workers (on their PYTHONPATH)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def logged_square(task):
    """x**2 after ``delay`` [s]; appends ``start x pid`` and ``end x pid`` lines to ``log``."""
    x, log, delay = task
    with open(log, "a") as f:
        f.write(f"start {x} {os.getpid()}\n")
    time.sleep(delay)
    with open(log, "a") as f:
        f.write(f"end {x} {os.getpid()}\n")
    return x * x


def read_log(log) -> list[tuple[str, int, int]]:
    """The log's lines as (event, task, pid)."""
    if not Path(log).exists():
        return []
    out = []
    for line in Path(log).read_text().splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.append((parts[0], int(parts[1]), int(parts[2])))
    return out
