"""Packaging: declared dependencies agree, the wheel ships the data, the README's commands."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _name_spec(requirement: str) -> tuple[str, str]:
    match = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)", requirement)
    assert match, requirement
    return match.group(1).lower().replace("_", "-"), match.group(2).replace(" ", "")


def test_environment_yml_lists_the_same_packages_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = dict(_name_spec(r) for r in project["dependencies"])
    declared.update(_name_spec(r) for r in project["optional-dependencies"]["test"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "conda-forge" in env["channels"]
    conda = dict(_name_spec(d) for d in env["dependencies"] if isinstance(d, str))
    python_spec = conda.pop("python")
    assert python_spec == project["requires-python"]
    assert conda == declared, "environment.yml and pyproject.toml disagree"


def test_readme_quick_start_is_exactly_make_run_and_make_test():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```(?:sh|bash)?\n(.*?)```", quick, re.S)
    assert block, "no code block in the quick start"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["make run", "make test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


@pytest.mark.slow
def test_wheel_ships_the_catalog_and_data(tmp_path):
    """Build the wheel, install it alone into a throw-away venv, load from it."""
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(dist),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    wheel = next(dist.glob("perfmodel-*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    env_python = env_dir / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = subprocess.run(
        [str(env_python), "-c", purelib], check=True, capture_output=True, text=True
    ).stdout.strip()
    # The wheel goes in alone; its dependencies (numpy, pandas, yaml) come from this
    # test's environment through a plain path entry (no .pth processing there, so the
    # editable checkout of perfmodel is not visible).
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", site, str(wheel)],
        check=True,
        capture_output=True,
        text=True,
    )
    script = (
        "import perfmodel, sys\n"
        "assert perfmodel.__file__.startswith(sys.argv[1]), perfmodel.__file__\n"
        "p = perfmodel.load_platform('kunpeng-r722')\n"
        "n_figures = len(perfmodel.load_benchmarks())\n"
        "from perfmodel.evidence.stored_runs import load_cv\n"
        "from perfmodel.evidence import corpus\n"
        "assert {'mysql', 'redis', 'scylla'} <= set(perfmodel.list_systems())\n"
        "assert len(load_cv('group')) > 100\n"
        "assert len(corpus.load()) > 250\n"
        "print(p.cores, p.numa_nodes, len(perfmodel.list_platforms()), n_figures)\n"
    )
    out = subprocess.run(
        [str(env_python), "-c", script, site],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": ""},
    )
    cores, numa, platforms, figures = map(int, out.stdout.split())
    assert (cores, numa) == (96, 4)
    assert platforms >= 8 and figures > 400
    assert len(list((ROOT / "data" / "systems").glob("*.yaml"))) == len(
        subprocess.run([str(env_python), "-c", "import perfmodel; print(*perfmodel.list_systems())"],
                       check=True, capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": ""}).stdout.split()
    )  # fmt: skip
    # the notebooks ship too: listed and run from the installed package, outside the repository;
    # the kernel imports the installed perfmodel (PYTHONPATH puts the wheel first)
    cli = [str(env_python), "-m", "perfmodel.cli", "notebooks"]
    env = {**os.environ, "PYTHONPATH": site}
    listed = subprocess.run([*cli, "list"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    assert [line.split(":")[0] for line in listed.stdout.splitlines()] == [
        p.name for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    ]
    run = subprocess.run(
        [*cli, "run", "03-queue-depth", "--out", "nb", "--no-html", "-p", "queue_depths=[1, 32]"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr + run.stdout
    assert f"notebook {site}" in run.stderr  # it says which file runs: the installed one
    summary = (tmp_path / "nb" / "summary.csv").read_text()
    assert "03-queue-depth.ipynb" in summary and ",ok," in summary
