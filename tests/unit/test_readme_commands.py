"""Every perfmodel command in the code blocks of the README and docs/guide.md runs and exits 0.

Run from a scratch folder that holds the repository's ``data/`` and
``notebooks/`` (symlinks) and the files of the "Bring your own data"
walk-through. Not run here, with the reason: ``make`` (CI runs both targets),
``dask`` (starts a cluster), commands addressed to the placeholder scheduler
``tcp://scheduler.example`` (tests/distributed runs the same verbs on a real
cluster), the 9-notebook grid (tests/notebooks/test_batch.py runs grids), and the machine
walk-through, whose own test runs it in order.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from perfmodel.cli import main

ROOT = Path(__file__).resolve().parents[2]
SKIP = ("tcp://scheduler.example", "notebooks run --grid")

pytestmark = pytest.mark.slow


def readme_commands() -> list[str]:
    text = "".join((ROOT / page).read_text(encoding="utf-8") for page in ("README.md", "docs/guide.md"))
    # the machine walk-through's commands need the files its fio and Redis runs write: its own test
    # (tests/unit/test_machine_walkthrough.py) runs them in order
    text = re.sub(r"<!-- machine: commands -->\s*```sh\n.*?```", "", text, flags=re.S)
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        block = block.replace("\\\n", " ")
        for line in block.splitlines():
            line = line.strip()
            if line.startswith(".venv/bin/perfmodel"):
                lines.append(line)
    return lines


def test_the_readme_has_commands_and_each_skip_is_a_placeholder_or_covered_elsewhere():
    commands = readme_commands()
    assert len(commands) >= 15
    assert sum(any(s in c for s in SKIP) for c in commands) <= 2


def test_every_readme_command_runs(readme_walkthrough, tmp_path, capsys):
    for name in ("data", "notebooks"):
        (tmp_path / name).symlink_to(ROOT / name)
    ran = 0
    for line in readme_commands():
        if any(s in line for s in SKIP):
            continue
        argv = shlex.split(line, comments=True)[1:]
        if argv[:2] == ["notebooks", "run"]:
            argv += ["--out", str(tmp_path / "out"), "--no-html"]
        capsys.readouterr()
        assert main(argv) == 0, (line, capsys.readouterr().err[-2000:])
        ran += 1
    assert ran >= 15
