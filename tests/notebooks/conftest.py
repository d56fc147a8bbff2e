"""Execute every shipped notebook once per session, through the batch runner, on small parameters.

The runs go through :func:`perfmodel.run.batch.run_batch` (two worker processes),
so the notebook tests also exercise the runner on the real notebooks. Each
test then checks what a notebook *wrote* against direct library calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from perfmodel.run import batch

#: small parameters per notebook (the rest keep their defaults)
SMALL = {
    "01-calibration.ipynb": {"mode": "shipped", "cv": "stored"},
    "02-shard-per-core-scaling.ipynb": {
        "platforms": ["power8-s821lc-10c", "x86-dl380-e5-2630v4"],
        "cores": [2, 4],
    },
    "03-queue-depth.ipynb": {
        "devices": ["nvme-1p6tb-generic", "sata-ssd-800gb"],
        "queue_depths": [1, 8, 32, 128],
        "write_fractions": [0.0, 0.1],
        "tail_devices": ["micron-6500-ion-30tb", "micron-5400-pro"],
    },
    "04-replication-and-cache.ipynb": {
        "replication_factors": [2, 3],
        "cache_gb": [4, 8],
        "read_fractions": [1.0, 0.0],
        "dm8_buffer_gb": [4, 16],
    },
    "05-sizing.ipynb": {
        "platforms": ["power8-s821lc-10c", "x86-dl380-e5-2630v4", "kunpeng-r722"],
        "target_ops_s": 2e5,
        "dataset_gib": 100.0,
    },
    "07-plan-under-uncertainty.ipynb": {
        "platforms": ["x86-aws-i3-4xlarge", "x86-dl380-e5-2630v4"],
        "samples": 12,
    },
    "06-interactive-planner.ipynb": {
        "platforms": ["x86-dl380-e5-2630v4"],
        "target_ops_s": 1e5,
        "dataset_gib": 100.0,
    },
}


class Run:
    """One executed notebook: its folder, parameters and readers for what it wrote."""

    def __init__(self, record: dict):
        self.record = record
        self.dir = Path(record["output_dir"])
        self.params = record["parameters"]

    def csv(self, name: str) -> pd.DataFrame:
        return pd.read_csv(self.dir / name, keep_default_na=False, na_values=[""])

    def json(self, name: str = "summary.json") -> dict:
        return json.loads((self.dir / name).read_text())


@pytest.fixture(scope="session")
def executed(tmp_path_factory) -> dict[str, Run]:
    """Every notebook executed once (small parameters, 2 workers); keyed by notebook file name."""
    out = tmp_path_factory.mktemp("notebooks")
    jobs = []
    for path in batch.list_notebooks():
        jobs += batch.plan_jobs([path], [SMALL.get(path.name, {})], out)
    records = batch.run_batch(jobs, out, workers=2, progress=False)
    failed = {r["notebook"]: r["error"] for r in records if r["status"] != "ok"}
    assert not failed, f"notebooks failed: {failed}"
    runs = {r["notebook"]: Run(r) for r in records}
    runs["_summary"] = pd.read_csv(out / batch.SUMMARY_CSV)
    return runs
