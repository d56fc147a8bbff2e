"""Style is part of the test suite: ruff must pass on the package, tests and benchmarks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_is_clean():
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        pytest.skip("ruff is not installed beside this interpreter")
    targets = [p for p in ("perfmodel", "tools", "tests", "benchmarks") if (ROOT / p).exists()]
    result = subprocess.run([str(ruff), "check", *targets], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
