"""docs/guide.md's "Bring your own data": the files and commands, run exactly as written.

A new server with its own drive and NIC, and a new database, added as YAML
only -- no Python code -- then predicted and sized from the command line.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pandas as pd
import pytest

import perfmodel
from perfmodel.cli import main


@pytest.fixture()
def workdir(readme_walkthrough, tmp_path):
    return tmp_path


def test_the_walkthrough_has_hardware_a_system_a_workload_and_commands(readme_walkthrough):
    assert {"hw/db07.yaml", "my-db.yaml", "my-workload.yaml", "my-runs.csv", "commands"} <= set(
        readme_walkthrough
    )


def test_every_command_runs_as_written(readme_walkthrough, workdir, capsys):
    commands = [c for c in readme_walkthrough["commands"].splitlines() if c.strip()]
    assert commands
    for line in commands:
        argv = shlex.split(line)
        assert argv[0] == ".venv/bin/perfmodel", line
        capsys.readouterr()
        assert main(argv[1:]) == 0, line
        out = capsys.readouterr().out
        if argv[1] == "calibrate":  # the user's system's own parameters, fitted to the user's figures
            assert "cpu_cycles_read[my-db]" in out and Path("my-params.json").is_file(), line
            fitted = perfmodel.load_parameters("my-params.json")["cpu_cycles_read[my-db]"]
            assert fitted != 400000, line  # moved from the spec's default
        else:
            assert "db07" in out, line  # the user's platform is the one predicted / sized / listed
        assert argv[1] != "predict" or "my-db" in out, line  # ... with the user's system


def test_the_users_drive_nic_and_system_are_the_ones_predicted(workdir):
    w = perfmodel.Workload(operation="mixed", read_fraction=0.7, object_bytes=512, dataset_bytes=200 * 2**30,
                           clients=64)  # fmt: skip
    mine = perfmodel.predict("hw/db07.yaml", w, system="my-db.yaml").iloc[0]
    assert mine.device == "db07-nvme" and mine.system == "my-db" and mine.platform == "db07"
    # the spec's parameters are used: more CPU per read, lower throughput, all else equal
    slower = Path("slow-db.yaml")
    slower.write_text(Path("my-db.yaml").read_text().replace("value: 400000", "value: 4000000").replace(
        "id: my-db", "id: slow-db"))  # fmt: skip
    slow = perfmodel.predict("hw/db07.yaml", w, system="slow-db.yaml").iloc[0]
    assert slow.throughput_ops_s < mine.throughput_ops_s
    # the drive is the one the file defines: a slower copy of it lowers the device's capacity
    text = Path("hw/db07.yaml").read_text()
    Path("hw2").mkdir()
    Path("hw2/db07.yaml").write_text(text.replace("read_iops_4k: 700000", "read_iops_4k: 7000"))
    cold = dict(cache_state="cold")
    fast = perfmodel.predict("hw/db07.yaml", w, system="my-db.yaml", **cold).iloc[0]
    slow_dev = perfmodel.predict("hw2/db07.yaml", w, system="my-db.yaml", **cold).iloc[0]
    assert slow_dev.throughput_ops_s < fast.throughput_ops_s
    # the redo-log station of sync_writes_to: log is busy, the data device takes no sync writes
    assert mine.util_log > 0


def test_a_platform_can_include_its_devices_from_a_file_beside_it(workdir):
    import yaml

    doc = yaml.safe_load(Path("hw/db07.yaml").read_text())
    Path("hw/my-devices.yaml").write_text(yaml.safe_dump({"references": doc["references"],
                                                          "devices": doc.pop("devices")}))  # fmt: skip
    doc["include"] = ["my-devices.yaml"]
    Path("hw/db07-split.yaml").write_text(yaml.safe_dump(doc))
    split = perfmodel.load_platform("hw/db07-split.yaml")
    assert split.device_spec("db07-nvme").read_iops_4k == 700000


def test_a_bad_system_spec_names_the_file_line_and_field(workdir):
    bad = Path("bad.yaml")
    bad.write_text(Path("my-db.yaml").read_text().replace("threading: pooled", "threading: forked"))
    with pytest.raises(perfmodel.DataError) as info:
        perfmodel.load_system(str(bad))
    message = str(info.value)
    assert "bad.yaml:3: field 'threading' must be one of hashed, pooled" in message
    incomplete = Path("incomplete.yaml")
    structure = "threading: pooled\nremote: true\ndata_cache: true\nread_before_write: false\nlsm: false\n"
    incomplete.write_text("id: x\nname: x\n" + structure + "write_consistency: ONE\npage_bytes: 4096\n")
    w = perfmodel.Workload(read_fraction=1.0, operation="read", clients=4)
    with pytest.raises(KeyError, match=r"incomplete.yaml.*cpu_cycles_read\[x\], cpu_cycles_miss\[x\]"):
        perfmodel.predict("x86-dl380-e5-2630v4", w, system=str(incomplete))


def test_the_shipped_systems_are_listed_and_loaded():
    assert perfmodel.list_systems() == [
        "cassandra", "ceph", "dm8", "fio", "memcached", "mysql", "opengauss", "postgresql", "redis",
        "rocksdb", "scylla",
    ]  # fmt: skip
    ceph = perfmodel.load_system("ceph")
    assert ceph.threading == "hashed" and ceph.metadata_cache is not None and ceph.daemons is not None
    assert isinstance(
        pd.DataFrame([vars(perfmodel.load_system(s)) for s in perfmodel.list_systems()]), pd.DataFrame
    )
