"""The perfmodel command line."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import perfmodel
from perfmodel.cli import main

WORKLOADS = Path(__file__).resolve().parents[2] / "data" / "workloads"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_help_lists_the_verbs(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for verb in ("platforms", "devices", "networks", "data", "report"):
        assert verb in out


def test_no_verb_prints_help_and_fails(capsys):
    code, out, _ = run(capsys)
    assert code == 2 and "usage" in out


def test_platforms_csv_round_trips(capsys):
    code, out, _ = run(capsys, "platforms", "--format", "csv")
    assert code == 0
    table = pd.read_csv(io.StringIO(out)).set_index("id")
    assert table.loc["power8-s821lc-10c", "threads"] == 80
    assert table.loc["kunpeng-r722", "numa_nodes"] == 4


def test_the_platforms_table_leaves_a_missing_value_blank(capsys):
    """Only the SEV-SNP guest counts VM exits: the other rows' message_exit_us prints blank, not NaN."""
    code, out, _ = run(capsys, "platforms")
    assert code == 0 and "NaN" not in out
    snp = next(line for line in out.splitlines() if "x86-epyc-9124-sevsnp-30vcpu" in line)
    assert snp.split()[-1] == f"{3.72 * 1.69:.4f}"


def test_devices_json(capsys):
    code, out, _ = run(capsys, "devices", "--format", "json")
    records = {r["id"]: r for r in json.loads(out)}
    assert code == 0
    assert records["sata-ssd-800gb"]["queue_depth_limit"] == 32


def test_data_summary_by_source_and_metric(capsys):
    code, out, _ = run(capsys, "data", "--format", "csv")
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    assert {"source_id", "metric", "figures", "relative"} <= set(table.columns)
    by_source = table.groupby("source_id")["figures"].sum()
    assert by_source["seed004"] >= 48 and by_source["ctx-ceph-part2"] == 48
    code, out, _ = run(capsys, "data")
    n = perfmodel.load_benchmarks()
    assert f"{len(n)} figures from {n['source_id'].nunique()} sources" in out


def test_data_on_a_bad_file_is_one_clear_error(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("figure_id,value\nx,1\n")
    code, out, err = run(capsys, "data", "--path", str(bad))
    assert code == 2
    assert "bad.csv:1: field 'source_id' required column is missing" in err
    assert "Traceback" not in err


def test_report_prints_the_answer_first_then_catalog_and_data(capsys):
    code, out, _ = run(capsys, "report")
    assert code == 0
    lines = out.rstrip("\n").splitlines()
    assert len(lines) <= 40 and max(map(len, lines)) <= 100  # the first screen is the whole short report
    assert lines[0].startswith("perfmodel") and "servers per platform" in " ".join(lines[:3])
    assert any(line.startswith("Answer: Fewest nodes:") for line in lines)
    assert any(line.startswith("Caveat: ") for line in lines)
    assert "kunpeng-r722" in out and "eth-1g" in out  # each candidate on its own network
    code, full, _ = run(capsys, "report", "--full")
    assert code == 0 and full.startswith(out.rsplit("\n\nEvery SMT mode", 1)[0])  # the answer first
    assert "power8-s821lc-10c" in full and "seed002" in full and "== Platforms ==" in full


def test_console_script_is_installed():
    exe = shutil.which("perfmodel", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("perfmodel console script not installed beside this interpreter")
    out = subprocess.run(
        [exe, "platforms", "--format", "csv"], check=True, capture_output=True, text=True
    ).stdout
    assert "x86-dl380-e5-2630v4" in out


def test_predict_verb_on_a_workload_file(capsys):
    code, out, _ = run(
        capsys, "predict", str(WORKLOADS / "dm8-tpcc.yaml"), "--platform", "kunpeng-r722", "--format", "csv"
    )
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    assert table.platform.tolist() == ["kunpeng-r722"] and table.shards.iloc[0] == 48
    assert table.throughput_ops_s.iloc[0] > 0 and "tpmc" in table.columns
    code, out, _ = run(
        capsys,
        "predict",
        str(WORKLOADS / "scylla-read-heavy.yaml"),
        "--platform",
        "power8-s821lc-10c",
        "--platform",
        "x86-dl380-e5-2630v4",
        "--set",
        "threads_per_core=2",
    )
    assert code == 0 and "power8-s821lc-10c" in out and "x86-dl380-e5-2630v4" in out


def test_predict_verb_bad_input_is_one_clear_error(capsys, tmp_path):
    code, _, err = run(
        capsys,
        "predict",
        str(WORKLOADS / "dm8-tpcc.yaml"),
        "--platform",
        "kunpeng-r722",
        "--set",
        "cores=500",
    )
    assert code == 2 and "cores: 500 is outside 1..96" in err and "Traceback" not in err
    bad = tmp_path / "w.yaml"
    bad.write_text("system: scylla\nworkload: {clients: 0}\n")
    code, _, err = run(capsys, "predict", str(bad), "--platform", "kunpeng-r722")
    assert code == 2 and "clients" in err and "w.yaml" in err


def test_validate_verb_csv_has_the_figure_table_and_commented_summary(capsys):
    from perfmodel.cli import VALIDATE_COLUMNS

    code, out, _ = run(capsys, "validate", "--format", "csv")
    assert code == 0
    lines = out.splitlines()
    summary = [line for line in lines if line.startswith("#")]
    table = pd.read_csv(io.StringIO("\n".join(line for line in lines if not line.startswith("#"))))
    assert list(table.columns) == VALIDATE_COLUMNS
    assert {"group", "factor_error", "lower", "upper", "in_band", "converged", "gap"} <= set(table.columns)
    assert len(table) >= 140 and table.predicted.notna().all()
    assert summary[0].startswith("# validation (in-sample)")
    assert (
        "|rel error| median" in summary[1] and "factor median" in summary[1] and "band coverage" in summary[1]
    )
    assert any(line.startswith("# metric tail latency:") for line in summary)


def test_validate_verb_prints_the_stored_out_of_sample_run(capsys):
    code, out, _ = run(capsys, "validate", "--cv", "group", "--cached")
    assert code == 0
    assert "validation (cv=group)" in out and "refits: 6 from the priors, 6 converged" in out
    assert "ceph-write-path" in out  # the gaps with their mechanism
    code, _, err = run(capsys, "validate", "--cached")
    assert code == 2 and "--cached" in err


def test_calibrate_verb_writes_a_loadable_parameter_set(capsys, tmp_path):
    out_file = tmp_path / "mine.json"
    code, out, _ = run(
        capsys,
        "calibrate",
        "--free",
        "cpu_cycles_read[ceph]",
        "--max-evaluations",
        "5",
        "--out",
        str(out_file),
    )
    assert code == 0 and "calibrated 1 parameters" in out
    mine = perfmodel.load_parameters(out_file)
    assert mine.name == "calibrated" and mine["cpu_cycles_read[ceph]"] > 0
    code, out, _ = run(
        capsys,
        "predict",
        str(WORKLOADS / "dm8-tpcc.yaml"),
        "--platform",
        "kunpeng-r722",
        "--params",
        str(out_file),
    )
    assert code == 0


def test_size_verb(capsys):
    code, out, _ = run(
        capsys,
        "size",
        str(WORKLOADS / "scylla-read-heavy.yaml"),
        "--target-ops",
        "200000",
        "--slo-p99-ms",
        "50",
        "--platform",
        "x86-dl380-e5-2630v4",
        "--format",
        "csv",
    )
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    assert set(table.threads_per_core) == {1, 2} and (table.nodes >= 4).all()
    code, _, err = run(
        capsys, "size", str(WORKLOADS / "scylla-read-heavy.yaml"), "--target-ops", "-5", "--slo-p99-ms", "50"
    )
    assert code == 2 and "target_ops_s" in err


def test_table_shows_saturated_and_a_saturated_row_reports_the_capacity(tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text(
        "system: scylla\nworkload: {operation: mixed, read_fraction: 0.8, arrival_rate: 5.0e6, "
        "object_bytes: 1000, dataset_gib: 100, replication_factor: 3}\nnodes: [3, 12]\n"
    )
    assert main(["predict", str(path), "--platform", "power8-s821lc-10c", "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    over, under = frame.iloc[0], frame.iloc[1]
    assert over.saturated and not under.saturated
    util = over[[c for c in frame.columns if c.startswith("util_")]].max()
    assert util > 1 and over.throughput_ops_s == pytest.approx(5e6 / util, rel=1e-9)  # the capacity
    assert under.throughput_ops_s == pytest.approx(5e6) and over.arrival_rate == 5e6
    assert main(["predict", str(path), "--platform", "power8-s821lc-10c"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert "saturated" in header and header.index("arrival_rate") == header.index("throughput_ops_s") - 1


def test_every_numeric_workload_field_sweeps_from_a_file(tmp_path, capsys):
    """A list in any numeric workload field is a sweep through the chunked CLI path (message_bytes
    was missing from the sweep's fields and crashed on a length mismatch)."""
    from perfmodel.plan.sweeps import WORKLOAD_ARRAYS

    numeric = {"read_fraction", "object_bytes", "dataset_bytes", "io_bytes", "message_bytes", "zipf_s",
               "clients", "threads_per_client", "iodepth", "think_time_s", "arrival_rate",
               "replication_factor"}  # fmt: skip
    assert numeric <= set(WORKLOAD_ARRAYS)
    path = tmp_path / "w.yaml"
    path.write_text("system: scylla\nworkload: {clients: 8, message_bytes: [1000, 2000]}\nnodes: 3\n")
    assert main(["predict", str(path), "--platform", "power8-s821lc-10c", "--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(frame["message_bytes"]) == [1000, 2000]


def test_size_takes_a_target_in_planners_units_and_says_how_servers_are_deployed(capsys, tmp_path):
    tpcc = str(WORKLOADS / "dm8-tpcc.yaml")
    code, out, _ = run(capsys, "size", tpcc, "--target", "100k", "--target-unit", "tpmC", "--slo-p99-ms",
                       "500", "--platform", "kunpeng-r722", "--format", "csv")  # fmt: skip
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    assert table.topology.eq("primary_replicas").all()
    assert table.throughput_target_unit[table.feasible].to_numpy() == pytest.approx(1e5)
    code, _, err = run(capsys, "size", str(WORKLOADS / "dm8-tpcc.yaml"), "--target", "lots",
                       "--target-unit", "tpmC", "--slo-p99-ms", "500")  # fmt: skip
    assert code == 2 and "--target: expected a number such as 500000, 500k or 1.5M, got 'lots'" in err
    pinned = tmp_path / "w.yaml"
    pinned.write_text("system: scylla\nnodes: 3\nworkload: {operation: read, read_fraction: 1, "
                      "object_bytes: 1024, dataset_gib: 10, clients: 1, replication_factor: 3}\n"
                      "knobs: {network: eth-40g}\n")  # fmt: skip
    code, out, _ = run(capsys, "size", str(pinned), "--target-ops", "1e5", "--slo-p99-ms", "20",
                       "--platform", "kunpeng-r722", "--format", "csv")  # fmt: skip
    assert code == 0 and set(pd.read_csv(io.StringIO(out)).network) == {"eth-40g"}
    code, _, err = run(capsys, "size", str(pinned), "--target-ops", "1e5", "--slo-p99-ms", "20",
                       "--network", "eth-10g")  # fmt: skip
    assert code == 2 and "the workload file sets network: 'eth-40g'" in err


def test_a_reader_that_stops_early_gets_no_traceback():
    """`perfmodel data --list | head`: the CLI stops quietly with 141 (128 + SIGPIPE), as a shell reports."""
    import subprocess
    import sys

    code = "import sys; from perfmodel.cli import main; sys.exit(main())"
    cmd = [sys.executable, "-c", code, "data", "--list"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline()  # the header: then the reader goes away with ~3,000 rows unread
    proc.stdout.close()
    status = proc.wait(timeout=120)
    with proc.stderr:
        stderr = proc.stderr.read().decode()
    assert status == 141 and "Traceback" not in stderr, stderr
