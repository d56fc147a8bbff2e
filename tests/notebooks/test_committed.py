"""The committed notebooks: stripped, one unit-commented parameters cell, lint-clean, indexed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from perfmodel.run import batch

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = batch.list_notebooks()


def test_the_seven_notebooks_are_there():
    assert [p.name[:3] for p in NOTEBOOKS] == ["01-", "02-", "03-", "04-", "05-", "06-", "07-"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_outputs_and_one_parameters_cell(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: outputs not stripped"
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: {len(tagged)} cells tagged 'parameters'"
    assert nb.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_parameter_has_a_comment_and_output_dir_exists(path):
    nb = nbformat.read(path, as_version=4)
    (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    declared = batch.declared_parameters(path)
    assert "output_dir" in declared
    assert len(declared) == len([line for line in cell.source.splitlines() if line.strip()])
    for line in cell.source.splitlines():
        assert re.search(r"  # \S", line), f"{path.name}: parameter without a comment: {line}"


def test_notebook_code_calls_the_library_and_seaborn_only():
    for path in NOTEBOOKS:
        code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        assert "import seaborn" in code or path.name.startswith("06"), path.name
        assert not re.search(r"^\s*(def |class )", code, re.M), (
            f"{path.name}: defines functions or classes; put them in the library"
        )


def test_ruff_is_clean_on_the_notebooks():
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        pytest.skip("ruff is not installed beside this interpreter")
    result = subprocess.run([str(ruff), "check", "notebooks"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_index_lists_every_notebook_and_the_example_grid_is_valid():
    index = (ROOT / "notebooks" / "README.md").read_text()
    for path in NOTEBOOKS:
        assert path.name in index
    for grid_file in sorted((ROOT / "notebooks" / "grids").glob("*.yaml")):
        spec = batch.load_grid(grid_file)
        notebooks = spec["notebooks"] or [p.name for p in NOTEBOOKS]
        jobs = batch.plan_jobs(notebooks, batch.expand(spec["grid"], spec["parameters"]), "/tmp/unused")
        assert len(jobs) == len(notebooks) * len(batch.expand(spec["grid"]))
