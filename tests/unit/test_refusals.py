"""Inputs that do not apply are refused, never used silently (issue 36, item 5).

Each case is checked in Python (a ``ValueError`` / :class:`perfmodel.DataError` naming the
knob or the file and field) and on the command line (one line ``perfmodel VERB: error: ...``,
exit status 2): a knob of another system, a ``--catalog`` id that shadows a shipped one, a
share above 1 in a system spec, RAM below the model's floor, and a load that drives the
throughput to zero.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import perfmodel
from perfmodel.cli import EXIT_BAD_INPUT, main
from perfmodel.evidence import figure_plan as figures
from perfmodel.inputs import knobs as settings
from perfmodel.inputs.catalog import Catalog, default_catalog, load_platform
from perfmodel.inputs.errors import CatalogError, DataError
from perfmodel.inputs.systems import list_systems, load_system
from perfmodel.inputs.workload import Workload, load_workload_file

ROOT = Path(__file__).resolve().parents[2]
SCYLLA = str(ROOT / "data" / "workloads" / "scylla-read-heavy.yaml")
PLATFORM = "power8-s821lc-10c"
READS = Workload(operation="read", read_fraction=1.0, object_bytes=1024, dataset_bytes=1e10, clients=8,
                 replication_factor=1)  # fmt: skip


def refused(capsys, *argv) -> str:
    """The one error line of a command that must be refused with exit status 2."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == EXIT_BAD_INPUT, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"perfmodel {argv[0]}: error: "), lines[0]
    return lines[0]


# ---------------------------------------------------------------------------------------
# knobs of another system
# ---------------------------------------------------------------------------------------

#: (knob, value, a shipped system without the spec field that makes it apply, that field)
OTHER_SYSTEMS = [
    ("ec_k", 2, "scylla", r"daemons and placement \{kind: random\}"),
    ("ec_m", 1, "cassandra", r"daemons and placement \{kind: random\}"),
    ("osds_per_device", 4, "scylla", "daemons"),
    ("log_files", 8, "scylla", "sync_writes_to: log"),
    ("log_flushes", 2, "redis", "sync_writes_to: log"),
    ("token_aware", 0.5, "ceph", "coordinator: true"),
    ("placement_units", 16, "mysql", "placement"),
    ("flush_size_scv", 1.0, "mysql", "lsm: true"),
    ("zones", 3, "rocksdb", "remote: true"),
    ("zone_rtt_s", 1e-3, "fio", "remote: true"),
    ("client_link_gbps", 10.0, "fio", "remote: true"),
    ("client_colocated", True, "rocksdb", "remote: true"),
    ("cache_bytes", 8e9, "fio", "data_cache: true or metadata_cache"),
]


@pytest.mark.parametrize(("knob", "value", "system", "field"), OTHER_SYSTEMS)
def test_a_knob_of_another_system_is_refused_naming_knob_and_system(knob, value, system, field):
    nodes = 3 if knob in ("ec_k", "ec_m", "zones") else 1
    extra = {"ec_m": 1} if knob == "ec_k" else {"ec_k": 2} if knob == "ec_m" else {}
    with pytest.raises(ValueError, match=rf"^{knob}: does not apply to system {system}: it needs a "
                                         rf"system spec with {field} "):  # fmt: skip
        perfmodel.predict(PLATFORM, READS, nodes=nodes, system=system, **{knob: value}, **extra)


def test_the_issue_case_ec_on_scylla_is_refused_on_the_command_line(capsys):
    line = refused(capsys, "predict", SCYLLA, "--platform", PLATFORM, "--set", "ec_k=2", "--set", "ec_m=1")
    assert line == (
        "perfmodel predict: error: ec_k: does not apply to system scylla: it needs a system spec with "
        "daemons and placement {kind: random} (objects' chunks on daemons placed at random: erasure-coded "
        "pools; shipped: ceph); leave it unset"
    )
    line = refused(capsys, "size", SCYLLA, "--platform", PLATFORM, "--target-ops", "1e5",
                   "--slo-p99-ms", "10", "--set", "osds_per_device=4")  # fmt: skip
    assert "osds_per_device: does not apply to system scylla" in line


def test_every_knob_that_applies_somewhere_names_a_declared_rule_a_shipped_system_meets():
    specs = [load_system(n) for n in list_systems()]
    for knob in settings.KNOBS.values():
        if knob.applies:
            test = settings.APPLIES[knob.applies][0]
            assert any(test(s) for s in specs), knob.name  # applies to some shipped system
            assert not all(test(s) for s in specs), knob.name  # else it would apply everywhere


def test_a_knob_applies_per_configuration_and_false_or_unset_is_no_use():
    w = Workload(operation="read", read_fraction=1.0, object_bytes=4096, dataset_bytes=1e10, clients=8,
                 replication_factor=1)  # fmt: skip
    mixed = perfmodel.predict(PLATFORM, w, nodes=3, system=np.array(["ceph", "scylla"], dtype=object),
                              ec_k=[2, np.nan], ec_m=[1, np.nan])  # fmt: skip
    assert np.isfinite(mixed["throughput_ops_s"]).all()
    both = np.array(["ceph", "scylla"], dtype=object)
    with pytest.raises(ValueError, match="^ec_k: does not apply to system scylla"):
        perfmodel.predict(PLATFORM, w, nodes=3, system=both, ec_k=2, ec_m=1)
    # a bool knob off is what a system without it does: not a use of the knob
    off = perfmodel.predict(PLATFORM, READS, system="rocksdb", client_colocated=False)
    assert (
        off["throughput_ops_s"].iloc[0]
        == perfmodel.predict(PLATFORM, READS, system="rocksdb")["throughput_ops_s"].iloc[0]
    )


def test_a_users_spec_without_the_field_is_named_by_its_path(tmp_path):
    spec = (ROOT / "data" / "systems" / "scylla.yaml").read_text(encoding="utf-8")
    spec = spec.replace("id: scylla", "id: mine")
    path = tmp_path / "mine.yaml"
    path.write_text(spec, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^ec_k: does not apply to system {path}: "):
        perfmodel.predict(PLATFORM, READS, nodes=3, system=str(path), ec_k=2, ec_m=1)


@pytest.mark.slow  # every recorded figure's configuration (about 3,200): 6-9 s; make test, not test-fast
def test_no_recorded_figure_sets_a_knob_its_system_does_not_have():
    frame = perfmodel.load_benchmarks()
    for row in frame.to_dict("records"):
        if figures.missing_load(row) or row.get("role") == "claim":
            continue
        try:
            config = figures.figure_config(row)
        except (ValueError, KeyError):
            continue  # a configuration the predictor reports as not buildable, for its own reason
        spec = load_system(str(config["system"]))
        for name in set(config) & set(settings.KNOBS):
            rule = settings.KNOBS[name].applies
            if rule and settings.is_set(name, config[name]):
                assert settings.APPLIES[rule][0](spec), (row["figure_id"], name)
    # and the vectorised predictor builds every figure and baseline in one call per kind of load
    # (a refusal there would send it row by row)
    plan = figures.FigurePlan(frame)
    assert not any("does not apply" in r for r in plan.reasons)
    for _, call in plan._groups:
        with np.errstate(all="ignore"):
            assert len(perfmodel.predict(params="default", **call)) == len(call["system"])


# ---------------------------------------------------------------------------------------
# a --catalog id that shadows a shipped one
# ---------------------------------------------------------------------------------------

SHADOW = """\
references:
  mine: "our own box"
platforms:
  - id: power8-s821lc-10c
    name: "a smaller box under a shipped id"
    arch: x86
    sockets: 1
    cores_per_socket: 4
    cores: 4
    threads_per_core: 2
    smt_modes: [1, 2]
    threads: 8
    numa_nodes: 1
    base_ghz: 2.0
    ram_gib: RAM
    network: eth-10g
    storage:
      - {device: nvme-1p6tb-generic, count: 1}
    sources: {sockets: mine, cores_per_socket: mine, cores: mine, threads_per_core: mine, threads: mine,
              numa_nodes: mine, base_ghz: mine, ram_gib: mine}
"""


def _hardware(tmp_path, ram="32", name="power8-s821lc-10c") -> Path:
    folder = tmp_path / "hw"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mine.yaml").write_text(SHADOW.replace("RAM", ram).replace("power8-s821lc-10c", name),
                                      encoding="utf-8")  # fmt: skip
    return folder


def test_a_catalog_entry_that_shadows_a_shipped_id_is_refused_unless_override(tmp_path):
    path = _hardware(tmp_path) / "mine.yaml"
    with pytest.raises(CatalogError) as info:
        Catalog.from_files([path], base=default_catalog())
    (problem,) = info.value.problems
    assert (problem.file, problem.where, problem.field) == (str(path), PLATFORM, "id")
    assert "shadows the shipped platform 'power8-s821lc-10c'" in problem.message
    mine = Catalog.from_files([path], base=default_catalog(), override=True).platform(PLATFORM)
    assert mine.cores == 4 and default_catalog().platform(PLATFORM).cores == 10


def test_a_shadowing_catalog_is_refused_on_the_command_line_unless_override(tmp_path, capsys):
    folder = str(_hardware(tmp_path))
    line = refused(capsys, "predict", SCYLLA, "--catalog", folder, "--platform", PLATFORM)
    assert line.startswith(f"perfmodel predict: error: {folder}/mine.yaml:{PLATFORM}: field 'id' shadows the "
                           f"shipped platform '{PLATFORM}'")  # fmt: skip
    assert "--override" in line
    assert "shadows" in refused(capsys, "data", "--catalog", folder)
    assert main(["predict", SCYLLA, "--catalog", folder, "--override", "--platform", PLATFORM,
                 "--format", "csv"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "\n" + PLATFORM + ",scylla,3.0,4.0," in out  # the user's 4-core box, on purpose
    # a new id is what --catalog is for: no --override needed
    folder = str(_hardware(tmp_path / "new", name="my-box"))
    assert main(["predict", SCYLLA, "--catalog", folder, "--platform", "my-box", "--format", "csv"]) == 0


# ---------------------------------------------------------------------------------------
# a share above 1 in a system spec
# ---------------------------------------------------------------------------------------


def _spec(tmp_path, share="0.6", unit='"-"', name="cache_share_of_ram") -> Path:
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    body = text[text.index("<!-- walkthrough: my-db.yaml -->") :]
    body = body[body.index("```yaml\n") + len("```yaml\n") : body.index("```\n", body.index("```yaml\n") + 8)]
    body = body.replace('cache_share_of_ram: {value: 0.6, unit: "-"',
                        f"{name}: {{value: {share}, unit: {unit}")  # fmt: skip
    if name != "cache_share_of_ram":
        body = body.replace("parameters:\n", 'parameters:\n  cache_share_of_ram: {value: 0.6, unit: "-", '
                                             'source: "assumption"}\n')  # fmt: skip
    path = tmp_path / "my-db.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_a_share_above_one_in_a_spec_is_refused_naming_file_and_field(tmp_path):
    assert load_system(str(_spec(tmp_path))).parameters["cache_share_of_ram"] == 0.6
    for path in (_spec(tmp_path, "1.7"), _spec(tmp_path, "1.7", "share", name="buffer_hit")):
        with pytest.raises(DataError) as info:
            load_system(str(path))
        (problem,) = info.value.problems
        assert problem.file == str(path.resolve()) and problem.field.startswith("parameters.")
        assert "is a share of a whole: must be between 0 and 1, got 1.7" in problem.message
    assert load_system(str(_spec(tmp_path, "1"))).parameters["cache_share_of_ram"] == 1.0  # the whole


def test_a_share_above_one_is_refused_on_the_command_line(tmp_path, capsys):
    path = _spec(tmp_path, "1.7")
    workload = tmp_path / "w.yaml"
    workload.write_text("system: my-db.yaml\nnodes: 1\nworkload: {operation: mixed, read_fraction: 0.7, "
                        "object_bytes: 512, dataset_gib: 200, clients: 64}\nknobs: {}\n")  # fmt: skip
    line = refused(capsys, "predict", str(workload), "--platform", PLATFORM)
    assert line.startswith(f"perfmodel predict: error: {path.resolve()}:")
    assert line.endswith("field 'parameters.cache_share_of_ram' is a share of a whole: must be between "
                         "0 and 1, got 1.7")  # fmt: skip


# ---------------------------------------------------------------------------------------
# RAM below what the model needs
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("ram", ["1.0e-9", "0.25"])  # YAML: 1e-9 is text
def test_ram_below_the_floor_is_refused_naming_file_and_field(tmp_path, ram, capsys):
    path = _hardware(tmp_path, ram=ram, name="tiny") / "mine.yaml"
    with pytest.raises(CatalogError) as info:
        load_platform(path)
    (problem,) = info.value.problems
    assert (problem.where, problem.field) == ("tiny", "ram_gib")
    assert problem.message.startswith("must be >= 0.5 (twice the largest memtable")
    line = refused(capsys, "predict", SCYLLA, "--platform", str(path))
    assert line.startswith(f"perfmodel predict: error: {path}:tiny: field 'ram_gib' must be >= 0.5 (")
    assert line.endswith(f"got {float(ram)!r}")


def test_ram_at_the_floor_is_accepted(tmp_path):
    assert load_platform(_hardware(tmp_path, ram="0.5", name="small") / "mine.yaml").ram_bytes == 2**29


# ---------------------------------------------------------------------------------------
# a load that drives the throughput to zero
# ---------------------------------------------------------------------------------------


def test_statements_per_op_is_bounded_with_its_reason(capsys):
    spec = load_workload_file(SCYLLA)
    with pytest.raises(ValueError, match=r"^statements_per_op: must be at most 10000 \[count\] \(more is a"):
        perfmodel.predict(PLATFORM, spec["workload"], nodes=3, system="scylla", statements_per_op=1e9)
    line = refused(capsys, "predict", SCYLLA, "--platform", PLATFORM, "--set", "statements_per_op=1e9")
    assert line == (
        "perfmodel predict: error: --set 'statements_per_op=1e9': statements_per_op: must be at most 10000 "
        "[count] (more is a batch job, not a request: the throughput goes to zero), got 1000000000.0"
    )
    at_most = perfmodel.predict(PLATFORM, spec["workload"], nodes=3, system="scylla", statements_per_op=1e4)
    assert at_most["throughput_ops_s"].iloc[0] > 0 and not at_most["saturated"].iloc[0]


def test_a_row_with_no_throughput_or_an_infinite_latency_is_saturated():
    w = Workload(operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=1e8, clients=64,
                 replication_factor=1)  # fmt: skip
    with np.errstate(all="ignore"):
        out = perfmodel.predict(PLATFORM, w, system="postgresql", rows_per_op=np.array([1.0, 1e250]))
    assert out["saturated"].tolist() == [False, True]
    assert np.isinf(out["latency_p99_ms"].iloc[1]) and np.isinf(out["latency_mean_ms"].iloc[1])
    assert np.isfinite(out["latency_p99_ms"].iloc[0])
