"""Every command-line verb over a corpus of malformed files (issue 16): one line (or a list of
problems, one per line) naming the file, exit status 2, never a traceback or a silent default.

File kinds: workload YAML (every verb that takes one), platform YAML (``--platform PATH``),
a catalog folder (``--catalog``), a parameter file (``--params``), a figure CSV (``data --path``,
``validate --data``, ``calibrate --data``) and a notebook grid (``notebooks run --grid``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfmodel.cli import main

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = str(ROOT / "data" / "workloads" / "scylla-read-heavy.yaml")
PLATFORM = "power8-s821lc-10c"

BROKEN_TEXT = {
    "empty": b"",
    "binary": b"\x00\x01\x02\x03 binary",
    "utf-16": "platforms: []\n".encode("utf-16"),
    "latin-1": "name: caf\xe9\n".encode("latin-1"),
    "list": b"- 1\n- 2\n",
    "scalar": b"42\n",
    "bad-yaml": b"key: [unclosed\n",
}

PLATFORM_FIELDS = """platforms:
  - id: my-box
    name: my box
    arch: x86
    sockets: 1
    cores_per_socket: 8
    cores: 8
    threads_per_core: 2
    smt_modes: [1, 2]
    threads: 16
    numa_nodes: 1
    base_ghz: {ghz}
    ram_gib: 64
    network: eth-10g
    storage: {storage}
    sources: {{sockets: a, cores_per_socket: a, cores: a, threads_per_core: a, threads: a, numa_nodes: a,
               base_ghz: a, ram_gib: a, network: a, id: a}}
"""
BAD_PLATFORMS = {
    **BROKEN_TEXT,
    "no-storage": PLATFORM_FIELDS.format(ghz=2.5, storage="[]").encode(),
    "storage-string": PLATFORM_FIELDS.format(ghz=2.5, storage="nvme").encode(),
    "ghz-nan": PLATFORM_FIELDS.format(ghz=".nan", storage="[{device: sata-ssd-800gb, count: 1}]").encode(),
    "ghz-negative": PLATFORM_FIELDS.format(ghz=-1, storage="[{device: sata-ssd-800gb, count: 1}]").encode(),
    "ghz-implausible": PLATFORM_FIELDS.format(
        ghz=1e-12, storage="[{device: sata-ssd-800gb, count: 1}]"
    ).encode(),
    "count-fraction": PLATFORM_FIELDS.format(
        ghz=2.5, storage="[{device: sata-ssd-800gb, count: 1.5}]"
    ).encode(),
}
BAD_PARAMS = {
    **BROKEN_TEXT,
    "no-parameters": b'{"name": "x"}',
    "value-nan": b'{"name": "x", "parameters": [{"key": "net_stack_s", "value": NaN}]}',
    "outside-bounds": b'{"name": "x", "parameters": [{"key": "net_stack_s", "value": -1}]}',
}
HEADER = (ROOT / "data" / "benchmarks" / "context_ceph_part1.csv").read_text().splitlines()[0]
ROW = (ROOT / "data" / "benchmarks" / "context_ceph_part1.csv").read_text().splitlines()[1]
BAD_CSV = {
    **{k: v for k, v in BROKEN_TEXT.items() if k not in ("list", "scalar", "bad-yaml")},
    "header-only": (HEADER + "\n").encode(),
    "missing-column": b"figure_id,value\nx,1\n",
    "value-nan": (HEADER + "\n" + ROW.replace(",1323000,", ",nan,") + "\n").encode(),
    "value-negative": (HEADER + "\n" + ROW.replace(",1323000,", ",-5,") + "\n").encode(),
    "nodes-fraction": (HEADER + "\n" + ROW.replace(",5,default,", ",2.5,default,") + "\n").encode(),
}
BAD_GRIDS = {
    **BROKEN_TEXT,
    "axis-scalar": b"grid: {slo_p99_ms: 20}\n",
    "unknown-key": b"grid: {slo_p99_ms: [20]}\nextra: 1\n",
}


def _check(capsys, argv, path) -> None:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, (argv, code, err)
    assert "Traceback" not in err, err
    first = err.strip().splitlines()[0]
    assert first.startswith("perfmodel ") and " error: " in first, err
    assert str(path) in err, err


@pytest.mark.parametrize("name", sorted(BAD_PLATFORMS))
def test_platform_files(tmp_path, capsys, name):
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(BAD_PLATFORMS[name])
    _check(capsys, ["predict", WORKLOAD, "--platform", str(path)], path)
    _check(
        capsys, ["size", WORKLOAD, "--platform", str(path), "--target-ops", "1e5", "--slo-p99-ms", "20"], path
    )
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / path.name).write_bytes(BAD_PLATFORMS[name])
    _check(
        capsys, ["predict", WORKLOAD, "--platform", PLATFORM, "--catalog", str(folder)], folder / path.name
    )


@pytest.mark.parametrize("name", sorted(BAD_PARAMS))
def test_parameter_files(tmp_path, capsys, name):
    path = tmp_path / f"{name}.json"
    path.write_bytes(BAD_PARAMS[name])
    _check(capsys, ["predict", WORKLOAD, "--platform", PLATFORM, "--params", str(path)], path)
    _check(capsys, ["validate", "--params", str(path)], path)
    _check(
        capsys,
        ["simulate", WORKLOAD, "--platform", PLATFORM, "--params", str(path), "--requests", "2000"],
        path,
    )


@pytest.mark.parametrize("name", sorted(BAD_CSV))
def test_figure_files(tmp_path, capsys, name):
    path = tmp_path / f"{name}.csv"
    path.write_bytes(BAD_CSV[name])
    _check(capsys, ["data", "--path", str(path)], path)
    _check(capsys, ["validate", "--data", str(path)], path)
    _check(capsys, ["calibrate", "--data", str(path), "--max-evaluations", "1"], path)


@pytest.mark.parametrize("name", sorted(BAD_GRIDS))
def test_grid_files(tmp_path, capsys, name):
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(BAD_GRIDS[name])
    _check(capsys, ["notebooks", "run", "05-sizing", "--grid", str(path), "--out", str(tmp_path / "o")], path)
    assert not (tmp_path / "o").exists()  # nothing ran, nothing written
