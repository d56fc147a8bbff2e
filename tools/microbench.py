"""What the microbenchmark tools share: the machine's CPU and appending runs to their record.

``tools/rocksdb_write_path.py``, ``tools/rocksdb_write_amp.py`` and ``tools/fio_job_cpu.py`` each
append their runs to a CSV under ``data/microbench/`` (the evidence the model's mechanisms cite),
with the date, the tool's version and this CPU.
"""

from __future__ import annotations

import csv
import platform
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what Python knows of it."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def append_runs(out: Path, columns: Sequence[str], rows: Iterable[Mapping]) -> int:
    """Append ``rows`` to the CSV ``out`` (its header ``columns`` written when the file is new);
    returns how many were written."""
    rows = list(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    with out.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns))
        if new:
            writer.writeheader()
        writer.writerows(rows)
    return len(rows)
