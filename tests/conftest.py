"""Shared fixtures: seeded randomness and paths to the repository and seeds; Hypothesis profiles."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

#: ``--hypothesis-profile=fast`` (``make test-fast``): a tenth of the default examples, for the tests
#: that ask for a multiple of the profile's (``settings.default.max_examples``)
settings.register_profile("fast", max_examples=10)

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(autouse=True)
def _seed_randomness():
    """Every test starts from the same random state."""
    random.seed(12345)
    np.random.seed(12345)  # noqa: NPY002 -- legacy global state, for any code that still uses it


@pytest.fixture
def readme_walkthrough(tmp_path, monkeypatch) -> dict[str, str]:
    """docs/guide.md's "Bring your own data" files written into a scratch folder (the cwd); returns
    ``{name: body}`` of every fenced block after a ``<!-- walkthrough: name -->`` marker."""
    import re

    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    blocks = dict(re.findall(r"<!-- walkthrough: (\S+) -->\s*```[a-z]*\n(.*?)```", text, flags=re.S))
    for name, body in blocks.items():
        if name != "commands":
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(body, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return blocks


@pytest.fixture
def shared_dir() -> Path:
    """The project's shared/ folder (seed documents); skip when not beside the checkout."""
    if not (SHARED / "seeds").is_dir():
        pytest.skip("shared/ (seed documents) is not beside this checkout")
    return SHARED


def _tiny_notebook(folder, name="tiny.ipynb"):
    """A notebook that writes summary.json and raises when x == fail_on."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell(
        'x = 1  # a number [-]\nfail_on = -1  # the x that raises [-]\noutput_dir = "."  # result folder'
    )
    params.metadata["tags"] = ["parameters"]
    body = nbformat.v4.new_code_cell(
        "import json, pathlib\n"
        "if x == fail_on:\n"
        "    raise RuntimeError(f'deliberate failure at x={x}')\n"
        "pathlib.Path(output_dir, 'summary.json').write_text(json.dumps({'double': 2 * x}))"
    )
    nb.cells = [params, body]
    path = folder / name
    nbformat.write(nb, path)
    return path


@pytest.fixture
def tiny_notebook():
    """Factory ``tiny_notebook(folder, name=...) -> path`` of a one-cell papermill notebook
    (parameters ``x``, ``fail_on``, ``output_dir``; writes ``{"double": 2 x}``)."""
    return _tiny_notebook
