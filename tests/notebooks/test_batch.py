"""The batch runner: grid files, parameter checks before any kernel, failures kept, resume."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

from perfmodel.cli import main
from perfmodel.run import batch

# ---------------------------------------------------------------------- fast: no kernel


def test_grid_file_structured_and_shorthand(tmp_path):
    full = tmp_path / "full.yaml"
    full.write_text("notebooks: [a.ipynb]\nparameters: {t: 1e6}\ngrid: {x: [1, 2], y: [[a], [b, c]]}\n")
    spec = batch.load_grid(full)
    assert spec["notebooks"] == ["a.ipynb"] and spec["parameters"] == {"t": 1e6}
    runs = batch.expand(spec["grid"], spec["parameters"])
    assert len(runs) == 4 and runs[1] == {"t": 1e6, "x": 1, "y": ["b", "c"]}
    short = tmp_path / "short.yaml"
    short.write_text("x: [1, 2, 3]\nz: [1_000]\n")
    assert batch.expand(batch.load_grid(short)["grid"]) == [{"x": i, "z": 1000} for i in (1, 2, 3)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x: 3\n", "grid axis 'x' must be a non-empty list"),
        ("grid: {x: [1]}\nextra: 1\n", "unknown key 'extra'"),
        ("parameters: {x: 1}\ngrid: {x: [1]}\n", "'x' is both"),
        ("[1, 2]\n", "expected a mapping"),
        ("x: [1\n", "not valid YAML"),
    ],
)
def test_bad_grid_files(tmp_path, text, message):
    path = tmp_path / "g.yaml"
    path.write_text(text)
    with pytest.raises(batch.GridError, match=message):
        batch.load_grid(path)


def test_parse_value_reads_yaml():
    assert batch.parse_value("1e6") == 1e6 and batch.parse_value("[a, b]") == ["a", "b"]
    assert batch.parse_value("true") is True and batch.parse_value("QUORUM") == "QUORUM"


def test_parameter_checks_name_the_notebook_and_parameter(tmp_path, tiny_notebook):
    path = tiny_notebook(tmp_path)
    assert batch.check_parameters(path, {"x": 3.0}) == {"x": 3}  # integral float -> int
    with pytest.raises(batch.GridError, match=r"tiny.ipynb: unknown parameter 'y'"):
        batch.check_parameters(path, {"y": 1})
    with pytest.raises(batch.GridError, match=r"tiny.ipynb: parameter 'x' expects int"):
        batch.check_parameters(path, {"x": "three"})
    with pytest.raises(batch.GridError, match=r"tiny.ipynb: parameter 'x' expects int"):
        batch.check_parameters(path, {"x": 2.5})
    with pytest.raises(batch.GridError, match="set by the runner"):
        batch.check_parameters(path, {"output_dir": "elsewhere"})


def test_parameter_types_of_the_shipped_sizing_notebook():
    path = batch.resolve_notebook("05-sizing")
    ok = batch.check_parameters(path, {"platforms": ["kunpeng-r722"], "target_ops_s": 1e5, "slo_p99_ms": 5})
    assert ok["slo_p99_ms"] == 5
    with pytest.raises(batch.GridError, match="05-sizing.ipynb: parameter 'platforms'"):
        batch.check_parameters(path, {"platforms": "kunpeng-r722"})  # a list is expected
    with pytest.raises(batch.GridError, match="05-sizing.ipynb: parameter 'platforms'"):
        batch.check_parameters(path, {"platforms": [1, 2]})  # of strings
    with pytest.raises(batch.GridError, match="05-sizing.ipynb: parameter 'replication_factor'"):
        batch.check_parameters(path, {"replication_factor": True})


def test_run_folders_are_deterministic_and_distinct():
    a = batch.run_folder("n/05-sizing.ipynb", {"x": 1, "platforms": ["p"]})
    assert a == batch.run_folder("other/05-sizing.ipynb", {"platforms": ["p"], "x": 1})
    assert a != batch.run_folder("n/05-sizing.ipynb", {"x": 2, "platforms": ["p"]})
    assert a.startswith("05-sizing/") and batch.run_folder("n/a.ipynb", {}).startswith("a/defaults-")


def test_bad_parameter_fails_fast_before_any_kernel(tmp_path, monkeypatch, capsys):
    import papermill

    def no_kernel(*args, **kwargs):
        raise AssertionError("a kernel was started")

    monkeypatch.setattr(papermill, "execute_notebook", no_kernel)
    out = tmp_path / "out"
    code = main(["notebooks", "run", "05-sizing", "--out", str(out), "-p", "no_such_knob=1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "05-sizing.ipynb" in err and "no_such_knob" in err
    assert not out.exists()
    grid = tmp_path / "g.yaml"
    grid.write_text("grid: {slo_p99_ms: [10, fast]}\n")
    code = main(["notebooks", "run", "05-sizing", "--grid", str(grid), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "05-sizing.ipynb: parameter 'slo_p99_ms' expects float" in err
    assert not out.exists()


def _record(run: str, status: str = "ok", **results) -> dict:
    return dict(notebook="a.ipynb", run=run, status=status, error="", duration_s=1.0,
                output_dir=f"/o/{run}", reused=False, parameters={"x": run}, results=results)  # fmt: skip


def test_summary_accumulates_runs_and_replaces_a_rerun_in_place(tmp_path):
    path = tmp_path / "summary.csv"
    batch.update_summary([_record("r1", value_ms=1.0), _record("r2", "failed")], path)
    batch.update_summary([_record("r3", value_ms=3.0)], path)  # another grid into the same folder
    batch.update_summary([_record("r2", value_ms=2.0, other=7)], path)  # r2 again, now ok, a new key
    table = pd.read_csv(path)
    assert list(table["run"]) == ["r1", "r2", "r3"]
    assert list(table["status"]) == ["ok", "ok", "ok"] and list(table["value_ms"]) == [1.0, 2.0, 3.0]
    assert table["other"].tolist()[1] == 7 and table["other"].isna().tolist() == [True, False, True]
    batch.update_summary([], path)  # an interrupted batch that finished nothing keeps the rows
    assert len(pd.read_csv(path)) == 3
    assert [p.name for p in tmp_path.iterdir()] == ["summary.csv"]  # no temporary file left behind
    path.write_text("not,a\nsummary\x00\n")
    with pytest.raises(batch.GridError, match="summary.csv"):
        batch.update_summary([_record("r4")], path)


def test_notebooks_are_found_in_an_installed_layout(tmp_path, monkeypatch):
    """A wheel ships them as perfmodel/_notebooks (pyproject force-include); list and resolve use it."""
    pkg = tmp_path / "site" / "perfmodel"
    (pkg / "_notebooks").mkdir(parents=True)
    for name in ("01-a.ipynb", "05-sizing.ipynb"):
        (pkg / "_notebooks" / name).write_text("{}")
    monkeypatch.setattr(batch, "PACKAGE_DIR", pkg)
    assert batch.notebook_dir() == pkg / "_notebooks"
    assert [p.name for p in batch.list_notebooks()] == ["01-a.ipynb", "05-sizing.ipynb"]
    assert batch.resolve_notebook("05") == pkg / "_notebooks" / "05-sizing.ipynb"
    (pkg / "_notebooks" / "01-a.ipynb").unlink()
    (pkg / "_notebooks" / "05-sizing.ipynb").unlink()
    with pytest.raises(FileNotFoundError, match="installation is incomplete"):
        batch.notebook_dir()


def test_run_says_which_file_it_runs_and_takes_a_checkout_path(tmp_path, monkeypatch):
    shipped = batch.resolve_notebook("05-sizing")
    monkeypatch.chdir(tmp_path)
    assert batch.describe_notebook(shipped) == f"notebook {shipped} (shipped with perfmodel)"
    local = tmp_path / "notebooks" / "05-sizing.ipynb"
    local.parent.mkdir()
    local.write_bytes(shipped.read_bytes())
    assert "differs" not in batch.describe_notebook(shipped)  # the same file: nothing to say
    local.write_bytes(shipped.read_bytes().replace(b"05 Sizing", b"05 Sizing, edited"))
    assert batch.describe_notebook(shipped).endswith(
        "./notebooks/05-sizing.ipynb differs -- pass its path to run it instead"
    )
    assert batch.resolve_notebook("notebooks/05-sizing.ipynb") == local.resolve()
    assert batch.describe_notebook(local) == f"notebook {local.resolve()} (given by path)"
    with pytest.raises(batch.GridError, match="'notebooks/05-typo.ipynb': no such notebook file"):
        batch.resolve_notebook("notebooks/05-typo.ipynb")


def test_run_names_its_notebook_and_refuses_a_grid_over_max_runs(tmp_path, capsys):
    grid = tmp_path / "g.yaml"
    grid.write_text("grid: {target_ops_s: [1e5, 2e5, 3e5], slo_p99_ms: [5, 10, 20, 40]}\n")
    out = tmp_path / "out"
    code = main(["notebooks", "run", "05-sizing", "--grid", str(grid), "--out", str(out), "--max-runs", "10"])
    err = capsys.readouterr().err
    assert f"notebook {batch.resolve_notebook('05-sizing')} (shipped with perfmodel)" in err
    assert (
        code == 2
        and "12 runs (1 notebooks x 3 target_ops_s x 4 slo_p99_ms)" in err
        and "--max-runs 10" in err
    )
    assert not out.exists()


def test_ctrl_c_keeps_finished_runs_and_says_how_to_resume(tmp_path, capsys, monkeypatch):
    from perfmodel.run.execution import Interrupted

    def interrupted(jobs, out, **kw):
        raise Interrupted([{"status": "ok"}, None], [True, False])

    monkeypatch.setattr(batch, "run_batch", interrupted)
    grid = tmp_path / "g.yaml"
    grid.write_text("grid: {slo_p99_ms: [10, 20]}\n")
    code = main(["notebooks", "run", "05-sizing", "--grid", str(grid), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 130 and "Traceback" not in err
    assert "notebook " in err and "05-sizing.ipynb" in err  # which file runs
    assert "1 of 2 runs finished" in err and "run the same command again to resume" in err


# ---------------------------------------------------------------------- slow: real kernels


@pytest.mark.slow
def test_a_failing_run_is_recorded_and_the_rest_resume(tmp_path, tiny_notebook):
    path = tiny_notebook(tmp_path)
    out = tmp_path / "out"
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"notebooks: [{path}]\nparameters: {{fail_on: 2}}\ngrid: {{x: [1, 2, 3]}}\n")
    code = main(["notebooks", "run", "--grid", str(grid), "--out", str(out), "--workers", "2"])
    assert code == 1  # one run failed
    summary = pd.read_csv(out / "summary.csv").set_index("param.x")
    assert list(summary.index) == [1, 2, 3]
    assert list(summary["status"]) == ["ok", "failed", "ok"]
    assert "RuntimeError: deliberate failure at x=2" in summary.loc[2, "error"]
    assert list(summary.loc[[1, 3], "double"]) == [2, 6]  # the notebooks' summary.json keys
    folders = {
        x: out / "tiny" / batch.run_folder(path, {"fail_on": 2, "x": x}).split("/")[1] for x in (1, 2, 3)
    }
    for x in (1, 3):
        assert (folders[x] / batch.MARKER).is_file()
        assert (folders[x] / "tiny.html").is_file() and (folders[x] / "tiny.ipynb").is_file()
    assert not (folders[2] / batch.MARKER).exists() and (folders[2] / "tiny.ipynb").is_file()
    stamps = {x: (folders[x] / batch.MARKER).stat().st_mtime_ns for x in (1, 3)}

    # second run: the completed runs are reused (markers untouched), the failed one runs again
    records = batch.run_batch(
        batch.plan_jobs([path], batch.expand({"x": [1, 2, 3]}, {"fail_on": 2}), out), out, progress=False
    )
    assert [r["reused"] for r in records] == [True, False, True]
    assert [r["status"] for r in records] == ["ok", "failed", "ok"]
    assert {x: (folders[x] / batch.MARKER).stat().st_mtime_ns for x in (1, 3)} == stamps
    again = pd.read_csv(out / "summary.csv")
    assert list(again["reused"]) == [True, False, True] and list(again["double"].dropna()) == [2, 6]

    # --force re-runs everything
    code = main(["notebooks", "run", "--grid", str(grid), "--out", str(out), "--force", "-p", "fail_on=-1"])
    assert code == 0
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 6  # the earlier runs' rows are kept beside the new ones
    assert list(summary["param.fail_on"]) == [2, 2, 2, -1, -1, -1]
    forced = summary[summary["param.fail_on"] == -1].reset_index(drop=True)
    assert (forced["status"] == "ok").all() and not forced["reused"].any()
    assert json.loads((out / "tiny" / forced["run"][1] / "summary.json").read_text()) == {"double": 4}


def test_a_kernel_that_dies_before_it_answers_is_started_again(tmp_path, tiny_notebook, monkeypatch):
    """Two kernels started at once can pick the same port (ZMQError: Address already in use) and one
    dies before replying to kernel_info: no cell ran, so the run starts again (up to
    KERNEL_START_TRIES times) instead of being reported failed; a notebook's own error is not retried.
    (execute_run is what run_job's child process runs; called here in this process.)"""
    import papermill

    real = papermill.execute_notebook
    calls = []

    def flaky(*args, **kwargs):
        calls.append(kwargs["parameters"]["x"])
        if len(calls) == 1:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return real(*args, **kwargs)

    monkeypatch.setattr(papermill, "execute_notebook", flaky)
    path = tiny_notebook(tmp_path)
    job = dict(
        notebook=str(path), parameters={"x": 1, "fail_on": 2}, output_dir=str(tmp_path / "a"), html=False
    )
    assert batch.execute_run(job) == ("ok", "") and calls == [1, 1]
    assert batch.read_results(tmp_path / "a") == {"double": 2}
    calls.clear()
    status, error = batch.execute_run(
        dict(job, parameters={"x": 2, "fail_on": 2}, output_dir=str(tmp_path / "b"))
    )
    assert status == "failed" and "deliberate failure" in error and calls == [2, 2]

    def dead(*args, **kwargs):
        calls.append(0)
        raise RuntimeError("Kernel died before replying to kernel_info")

    monkeypatch.setattr(papermill, "execute_notebook", dead)
    calls.clear()
    status, error = batch.execute_run(dict(job, output_dir=str(tmp_path / "c")))
    assert status == "failed" and "Kernel died" in error
    assert len(calls) == batch.KERNEL_START_TRIES


def _sleepy_notebook(folder, seconds: float = 60.0):
    """A notebook whose second cell sleeps ``seconds`` [s] (parameters ``x``, ``output_dir``)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell('x = 1  # a number [-]\noutput_dir = "."  # result folder')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(f"import time\ntime.sleep({seconds})")]
    path = folder / "sleepy.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_run_past_its_time_limit_is_stopped_and_the_batch_goes_on(tmp_path, tiny_notebook):
    """A run that reaches its limit is killed with its kernel and recorded as "timeout"; the next run
    of the batch completes (serially: it starts once the stopped one is gone)."""
    import psutil

    sleepy, tiny = _sleepy_notebook(tmp_path, seconds=600), tiny_notebook(tmp_path)
    out = tmp_path / "out"
    jobs = batch.plan_jobs([sleepy], [{}], out, timeout_s=3.0, html=False)
    jobs += batch.plan_jobs([tiny], [{"x": 3}], out, html=False)
    started = time.monotonic()
    records = batch.run_batch(jobs, out, workers=1, progress=False)
    took = time.monotonic() - started
    stopped, done = records
    assert stopped["status"] == "timeout" and 3.0 <= stopped["duration_s"] < 8.0
    assert stopped["error"].startswith("timed out after 3 s (the run's time limit, --timeout)")
    assert not (Path(stopped["output_dir"]) / batch.MARKER).exists()
    assert done["status"] == "ok" and done["results"] == {"double": 6}
    assert took < 60.0  # the stopped run's 3 s and the tiny run, not the sleep's 600 s
    folder = str(Path(stopped["output_dir"]).resolve())
    left = [p for p in psutil.process_iter(["cwd"]) if p.info["cwd"] == folder]  # its kernel ran there
    assert not left, f"a process of the stopped run is still running: {left}"
    summary = pd.read_csv(out / batch.SUMMARY_CSV)
    assert list(summary["status"]) == ["timeout", "ok"] and "timed out after 3 s" in summary["error"][0]


def test_a_timeout_names_the_cell_that_was_running(tmp_path):
    import nbformat

    nb = nbformat.read(_sleepy_notebook(tmp_path), as_version=4)
    job = {"notebook": "sleepy.ipynb", "output_dir": str(tmp_path / "run")}
    text = batch._timeout_text(job, 3.0)
    assert text.startswith("timed out after 3 s") and text.endswith("before its first cell ran")
    for i, cell in enumerate(nb.cells):  # as papermill saves it when cell 1 starts
        cell.metadata["papermill"] = {"status": ["completed", "running"][i]}
    (tmp_path / "run").mkdir()
    nbformat.write(nb, tmp_path / "run" / "sleepy.ipynb")
    assert batch._timeout_text(job, 3.0).endswith("while cell 1 ran ('import time')")


def test_the_time_limit_is_a_flag_with_a_default(tmp_path, monkeypatch, capsys):
    seen = {}

    def no_run(jobs, out, **kw):
        seen["limits"] = [job["timeout_s"] for job in jobs]
        return []

    monkeypatch.setattr(batch, "run_batch", no_run)
    out = str(tmp_path / "o")
    assert main(["notebooks", "run", "05-sizing", "--out", out]) == 0
    assert seen["limits"] == [batch.DEFAULT_TIMEOUT_S] == [900.0]
    assert main(["notebooks", "run", "05-sizing", "--out", out, "--timeout", "30"]) == 0
    assert seen["limits"] == [30.0]
    with pytest.raises(SystemExit) as stop:
        main(["notebooks", "run", "05-sizing", "--out", out, "--timeout", "0"])
    assert stop.value.code == 2 and "--timeout: must be a number of seconds > 0" in capsys.readouterr().err
    with pytest.raises(batch.GridError, match="time limit must be a number of seconds > 0"):
        batch.plan_jobs(["05-sizing"], [{}], out, timeout_s=-1)
