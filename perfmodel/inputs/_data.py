"""Where the shipped data (hardware catalog, recorded benchmarks) lives.

In an installed wheel the top-level ``data/`` folder is packaged as
``perfmodel/_data/`` (see ``[tool.hatch.build.targets.wheel.force-include]`` in
pyproject.toml); in a source checkout or an editable install it is the
repository's ``data/`` folder.
"""

from __future__ import annotations

from pathlib import Path

#: the installed package's folder (``perfmodel/``) and its stored parameter sets and runs
PACKAGE_DIR = Path(__file__).resolve().parents[1]
PARAMETERS_DIR = PACKAGE_DIR / "parameters"


def data_dir() -> Path:
    """Return the folder holding ``hardware/`` and ``benchmarks/``."""
    package = PACKAGE_DIR
    for candidate in (package / "_data", package.parent / "data"):
        if (candidate / "hardware").is_dir():
            return candidate
    raise FileNotFoundError(
        f"perfmodel data folder not found (looked in {package / '_data'} and "
        f"{package.parent / 'data'}); the installation is incomplete"
    )
