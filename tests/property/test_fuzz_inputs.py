"""Fuzzing the public boundary (issue 16): any input gives a result without NaN or a clear error.

For arbitrary values of every workload field and knob, arbitrary YAML documents as workload
files and arbitrary command lines, the outcome is either a result whose throughput, overall
latencies and utilisations are numbers (``inf`` only where ``saturated``), or a ValueError /
KeyError whose message names the field (the command line: exit status 2 and one line, no
traceback). Derandomised, small corpora: the suite stays fast.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.cli import main
from perfmodel.inputs import knobs as knob_settings
from perfmodel.inputs.workload import Workload, load_workload_file

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
PLATFORM = "power8-s821lc-10c"
NUMERIC_FIELDS = (
    "read_fraction", "object_bytes", "dataset_bytes", "io_bytes", "message_bytes", "zipf_s", "clients",
    "threads_per_client", "iodepth", "think_time_s", "arrival_rate", "replication_factor",
)  # fmt: skip

anything = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e3, max_value=1e3),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.sampled_from([0, 1, 2, 3, 0.5, 1e30, -1, True, False, None, "", "abc", "1e6", "nan", [], [1, 2], {}]),
    st.text(max_size=5),
)


def _checked(frame) -> None:
    """A result: throughput, overall latencies and utilisations are numbers, inf only if saturated."""
    cols = ["throughput_ops_s", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms"]
    cols += [c for c in frame.columns if c.startswith("util_")]
    values = frame[cols].to_numpy(dtype=float)
    assert not np.isnan(values).any(), frame[cols]
    inf_rows = np.isinf(values).any(axis=1)
    assert (frame["saturated"].to_numpy()[inf_rows]).all(), frame[cols + ["saturated"]]


def _names(exc: BaseException, name: str) -> bool:
    return name in str(exc)


@SETTINGS
@given(field=st.sampled_from(NUMERIC_FIELDS), value=anything)
def test_any_workload_field_value_is_a_result_or_an_error_naming_it(field, value):
    base = dict(operation="mixed", read_fraction=0.8, object_bytes=1000.0, dataset_bytes=1e11, clients=64,
                replication_factor=3)  # fmt: skip
    if field == "arrival_rate":
        base.pop("clients")
    base[field] = value
    try:
        w = Workload(**base)
    except ValueError as exc:
        assert _names(exc, field) or _names(exc, "clients"), exc
        return
    try:
        frame = perfmodel.predict(PLATFORM, w, nodes=3, system="scylla")
    except ValueError as exc:  # a valid workload the configuration cannot take (e.g. RF > nodes)
        assert "replication_factor" in str(exc) or "consistency" in str(exc), exc
        return
    _checked(frame)


@SETTINGS
@given(knob=st.sampled_from(sorted(knob_settings.KNOBS)), value=anything)
def test_any_knob_value_is_a_result_or_an_error_naming_it(knob, value):
    w = Workload(read_fraction=0.8, object_bytes=1000.0, dataset_bytes=1e11, clients=64, replication_factor=3)
    try:
        frame = perfmodel.predict(PLATFORM, w, nodes=3, system="scylla", **{knob: value})
    except (ValueError, KeyError) as exc:
        assert _names(exc, knob) or (knob == "device" and "device" in str(exc)) or "unknown" in str(exc), exc
        return
    _checked(frame)


yaml_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(allow_nan=True), st.integers(), st.text(max_size=6)),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
workload_docs = st.fixed_dictionaries(
    {},
    optional={
        "system": st.one_of(st.just("scylla"), yaml_values),
        "nodes": st.one_of(st.just(3), yaml_values),
        "workload": st.one_of(
            st.fixed_dictionaries(
                {"read_fraction": st.just(0.8)},
                optional={f: yaml_values for f in ("clients", "object_bytes")},
            ),
            yaml_values,
        ),
        "knobs": st.one_of(
            st.dictionaries(st.sampled_from(sorted(knob_settings.KNOBS)), yaml_values), yaml_values
        ),
    },
)


@SETTINGS
@given(doc=st.one_of(workload_docs, yaml_values))
def test_any_workload_file_loads_or_names_the_file(tmp_path, doc):
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    try:
        spec = load_workload_file(str(path))
    except ValueError as exc:
        assert str(path) in str(exc), exc
        return
    assert isinstance(spec["workload"], Workload) and spec["nodes"] >= 1


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00\x01\x02binary", "system: scylla\n".encode("utf-16"),
     b"system: scylla\nworkload: {x: \xff}\n", b"[1, 2]\n", b"system: scylla\nworkload: read\n",
     b"system: scylla\nworkload: {clients: 8}\nnodes: 2.5\n",
     b"system: scylla\nworkload: {clients: 8}\nnodes: .nan\n",
     b"system: scylla\nworkload: {clients: 8}\nknobs: 8\n",
     b"system: scylla\nworkload: {clients: 8}\nknobs: {cores: .nan}\n",
     b"system: scylla\nworkload: {clients: 8, object_bytes: 1e30}\n"],
)  # fmt: skip
def test_malformed_workload_files_are_one_line_errors_on_every_verb(tmp_path, capsys, content):
    path = tmp_path / "w.yaml"
    path.write_bytes(content)
    for verb in (["predict"], ["simulate", "--requests", "2000", "--replications", "2"], ["size"]):
        args = [verb[0], str(path), "--platform", PLATFORM, *verb[1:]]
        if verb[0] == "size":
            args = ["size", str(path), "--target-ops", "1e5", "--slo-p99-ms", "20"]
        code = main(args)
        err = capsys.readouterr().err
        assert code == 2, (verb, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert str(path) in err, err


cli_tokens = st.lists(
    st.sampled_from(
        ["predict", "size", "simulate", "data", "platforms", "validate", "notebooks", "list", "--platform",
         PLATFORM, "--format", "json", "table", "--set", "cores=nan", "threads_per_core=3", "cores=2",
         "--target-ops", "-1", "1e5", "nan", "--slo-p99-ms", "0", "20", "--rf", "0", "3", "--requests", "10",
         "--seed", "-1", "--by", "bogus", "data/workloads/scylla-read-heavy.yaml", "/no/such/file.yaml"]
    ),
    max_size=7,
)  # fmt: skip


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(argv=cli_tokens)
def test_any_command_line_ends_with_an_exit_status_and_no_traceback(capsys, argv):
    if "simulate" in argv and "--requests" not in argv:
        argv = [*argv, "--requests", "2000"]
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse: usage errors exit 2, --help 0
        code = stop.code
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2 and err and not err.startswith("usage:"):  # (no verb: the help, on stdout)
        assert err.startswith("perfmodel") and len(err.strip().splitlines()) == 1, err


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    arg=st.sampled_from(
        ["target_ops_s", "slo_p99_ms", "max_utilization", "failure_tolerance", "dataset_gib",
         "replication_factor", "max_nodes", "interval"]
    ),
    value=anything,
)  # fmt: skip
def test_any_sizing_request_is_an_answer_or_an_error_naming_the_argument(arg, value):
    w = Workload(read_fraction=0.8, object_bytes=1000.0, dataset_bytes=1e11, clients=64, replication_factor=3)
    request = dict(target_ops_s=2e5, slo_p99_ms=20.0, max_nodes=24, interval=None)
    request[arg] = value
    try:
        out = perfmodel.size(w, system="scylla", platforms=[PLATFORM], **request)
    except ValueError as exc:
        assert str(exc).startswith(arg), exc
        return
    assert len(out) > 0 and out["feasible"].dtype == bool
    assert (out.loc[~out.feasible, "reason"].str.len() > 0).all()  # every "no" says why
    assert not out.loc[out.feasible, ["nodes", "latency_p99_ms"]].isna().any().any()


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    arg=st.sampled_from(
        ["requests", "warmup", "replications", "seed", "level", "engine", "family", "interval"]
    ),
    value=anything,
)
def test_any_simulation_request_is_a_result_or_an_error_naming_the_argument(arg, value):
    w = Workload(read_fraction=1.0, operation="read", object_bytes=1000.0, arrival_rate=1e5)
    request = dict(requests=2_000, replications=2, keep_records=False, workers=1)
    request[arg] = value
    try:
        result = perfmodel.simulate(PLATFORM, w, nodes=3, system="scylla", **request)
    except ValueError as exc:
        assert str(exc).startswith(arg) or arg in str(exc), exc
        return
    _checked(result.summary)
