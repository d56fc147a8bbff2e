"""docs/guide.md's "From this machine to a sized cluster", run exactly as written (issue 39 point 6):
probe this machine, run fio and a Redis on loopback, ingest the outputs, fit the lab, size the cluster.

The tools are Debian packages (``make bench-tools``); where they are missing the test skips, unless
``PERFMODEL_REQUIRE_TOOLS`` is set (``.ci/run``), where it fails.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import perfmodel
from perfmodel.cli import main

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("fio", "redis-server", "redis-benchmark", "redis-cli")
#: a shell command's limit [s]: fio runs 3 s, redis-benchmark about 2 s here
TIMEOUT_S = 60


def _blocks() -> dict[str, str]:
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    return dict(re.findall(r"<!-- machine: (\S+) -->\s*```[a-z]*\n(.*?)```", text, flags=re.S))


@pytest.fixture()
def machine(tmp_path, monkeypatch):
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        if os.environ.get("PERFMODEL_REQUIRE_TOOLS"):
            pytest.fail(f"{', '.join(missing)} not installed (make bench-tools)")
        pytest.skip(f"{', '.join(missing)} not installed: run make bench-tools")
    blocks = _blocks()
    for name, body in blocks.items():
        if name != "commands":
            (tmp_path / name).write_text(body, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    yield blocks
    pid = tmp_path / "redis.pid"  # a Redis left behind by a failed step
    if pid.is_file():
        try:
            os.kill(int(pid.read_text().strip()), signal.SIGTERM)
        except (ProcessLookupError, ValueError):
            pass


@pytest.mark.slow  # end to end (probe, ingest, calibrate, size): 10-13 s; make test, not test-fast
def test_the_walkthrough_runs_as_written_and_ends_with_a_sized_cluster(machine, capsys):
    outputs = {}
    for line in filter(str.strip, machine["commands"].splitlines()):
        argv = shlex.split(line)
        if argv[0] == ".venv/bin/perfmodel":
            capsys.readouterr()
            assert main(argv[1:]) == 0, line
            outputs[argv[1]] = capsys.readouterr().out
        else:
            done = subprocess.run(line, shell=True, capture_output=True, text=True, timeout=TIMEOUT_S)
            assert done.returncode == 0, f"{line}\n{done.stderr[-2000:]}"
    box = perfmodel.load_platform("here.yaml")
    assert box.id == "my-box" and box.threads == os.cpu_count()
    fio = pd.read_csv("fio-runs.csv")
    redis = pd.read_csv("redis-runs.csv")
    assert set(fio["platform_id"]) == {"my-box"} and "iops" in set(fio["metric"])
    assert set(redis["system"]) == {"redis"} and "latency_p50" in set(redis["metric"])
    # the lab's fit: a lab-scoped set whose free parameters moved from the shipped set's
    lab = json.loads(Path("my-lab.json").read_text())
    assert lab["scope"] == "lab"
    fitted = perfmodel.load_parameters("my-lab.json")
    shipped = perfmodel.load_parameters("calibrated")
    free = lab["fit"]["fit"]
    assert free and all(row["parameter"] in fitted.values for row in free)
    assert any(fitted[row["parameter"]] != shipped[row["parameter"]] for row in free)
    assert "free (the figures move and can tell apart):" in outputs["calibrate"]
    # the sized cluster: my-box's node count, and the band a lab fitted on its own runs takes
    out = outputs["size"]
    assert re.search(r"my-box: \d+ nodes", out), out
    assert re.search(r"my-box SMT\d\s+\d+ \(\d+-\d+\)", out), out  # the 50% range, printed
    assert "fitted on your own runs" in out, out  # the caveat of a lab's own fit, not a new lab's
