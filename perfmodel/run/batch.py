"""Batch execution of the papermill notebooks over a parameter grid.

``perfmodel notebooks run`` is a thin wrapper around :func:`run_batch`:

1. :func:`load_grid` reads a grid file and :func:`expand` turns it into
   parameter sets (the cartesian product of the axes, plus fixed values);
2. :func:`plan_jobs` checks every parameter name and value against what each
   notebook declares in its ``parameters`` cell (:func:`check_parameters`,
   via ``papermill.inspect_notebook``, no kernel started) and gives each run
   a deterministic output folder (:func:`run_folder`);
3. :func:`run_job` executes one run: papermill into the folder (with
   ``output_dir`` "." and the folder as its working directory), an HTML export
   readable offline, and a marker file written last; the run happens in a
   child process that is killed, with its kernel, at the run's time limit
   (``timeout_s``, default :data:`DEFAULT_TIMEOUT_S` = 900 s, counting
   kernel start, every cell, the save and the export), and is then recorded
   with status ``timeout`` and an error naming the limit and the running
   cell; it takes a plain dict and returns a plain dict, so any executor (a
   process pool, a Dask cluster) can run it;
4. :func:`run_batch` runs the jobs in worker processes with a progress bar,
   skips completed runs (their marker exists) unless ``force``, and writes
   ``summary.csv`` at the top of the output folder. A run that fails or times
   out is recorded (``status`` ``failed`` or ``timeout``, ``error``) and the
   others go on: no run can hold up a batch for longer than its limit.

Grid file (YAML)::

    notebooks: [05-sizing.ipynb]        # optional; command-line notebooks take precedence
    parameters:                         # optional; the same value in every run
      slo_p99_ms: 20
    grid:                               # axes: each a list of values; runs = their product
      platforms: [[power8-s821lc-10c], [x86-dl380-e5-2630v4], [kunpeng-r722]]
      read_fraction: [0.95, 0.5]

A file without any of the keys ``notebooks``, ``parameters``, ``grid`` is read
as the ``grid`` mapping itself. Every name must be a parameter of every
notebook run with it. ``1e6`` is read as a number (plain YAML 1.1 reads it as
a string).

Results convention: a notebook writes ``summary.json`` -- a flat JSON object
of scalars with unit-suffixed keys -- into ``output_dir``; its keys become
columns of ``summary.csv`` (after ``notebook, run, status, error,
duration_s, output_dir, reused`` and one ``param.<name>`` column per
parameter).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from itertools import product
from pathlib import Path
from typing import Any

import yaml

from perfmodel.inputs._data import PACKAGE_DIR
from perfmodel.inputs.errors import InputError, read_text
from perfmodel.run.execution import Interrupted, map_tasks

#: the file a run writes last; its presence means the run completed
MARKER = "_run.json"
#: the flat results file a notebook writes into output_dir
RESULTS_FILE = "summary.json"
SUMMARY_CSV = "summary.csv"
GRID_KEYS = ("notebooks", "parameters", "grid")
#: the parameter the runner sets itself
OUTPUT_PARAMETER = "output_dir"


def notebook_dir() -> Path:
    """The shipped notebooks' folder: ``perfmodel/_notebooks`` in an installed wheel (see
    ``[tool.hatch.build.targets.wheel.force-include]``), the repository's ``notebooks/`` in a
    checkout or an editable install."""
    package = PACKAGE_DIR
    for candidate in (package / "_notebooks", package.parent / "notebooks"):
        if any(candidate.glob("[0-9][0-9]-*.ipynb")):
            return candidate
    raise FileNotFoundError(
        f"perfmodel notebooks not found (looked in {package / '_notebooks'} and "
        f"{package.parent / 'notebooks'}); the installation is incomplete"
    )


DEFAULT_KERNEL = "python3"
#: the wall-clock limit of one notebook run by default [s] (the slowest shipped notebook takes ~25 s)
DEFAULT_TIMEOUT_S = 900.0


class GridError(ValueError):
    """A grid file, a parameter name or a parameter value is wrong (raised before any kernel starts)."""


# ------------------------------------------------------------------------------------------
# grid files and parameter values
# ------------------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """SafeLoader that also reads ``1e6`` and ``1_000_000`` as numbers."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def parse_value(text: str) -> Any:
    """A command-line value (``-p name=value``) as YAML: ``1e6`` -> 1000000.0, ``[a, b]`` -> list."""
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 -- a SafeLoader subclass
    except yaml.YAMLError:
        return text


def load_grid(path: str | Path) -> dict:
    """Read a grid file into ``{"notebooks": [...], "parameters": {...}, "grid": {...}}``.

    Raises :class:`GridError` naming the file for anything malformed.
    """
    path = Path(path)

    try:
        doc = yaml.load(read_text(path, "grid file"), Loader=_Loader)  # noqa: S506
    except (OSError, InputError) as exc:
        raise GridError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise GridError(f"grid file {path}: not valid YAML: {exc}") from None
    if doc is None:
        raise GridError(f"grid file {path}: is empty; give 'grid:' axes (and optionally 'parameters:')")
    if not isinstance(doc, dict):
        raise GridError(f"grid file {path}: expected a mapping of parameter names to lists of values")
    if not set(doc) & set(GRID_KEYS):
        doc = {"grid": doc}
    unknown = sorted(set(doc) - set(GRID_KEYS))
    if unknown:
        raise GridError(
            f"grid file {path}: unknown key {unknown[0]!r} (top-level keys: {', '.join(GRID_KEYS)})"
        )
    notebooks = doc.get("notebooks") or []
    if isinstance(notebooks, str):
        notebooks = [notebooks]
    fixed = doc.get("parameters") or {}
    axes = doc.get("grid") or {}
    for key, value in (("parameters", fixed), ("grid", axes)):
        if not isinstance(value, dict):
            raise GridError(f"grid file {path}: {key!r} must be a mapping of parameter names")
    for name, values in axes.items():
        if not isinstance(values, list) or not values:
            raise GridError(
                f"grid file {path}: grid axis {name!r} must be a non-empty list of values "
                f"(put a fixed value under 'parameters')"
            )
    both = sorted(set(fixed) & set(axes))
    if both:
        raise GridError(f"grid file {path}: {both[0]!r} is both a fixed parameter and a grid axis")
    return {"notebooks": [str(n) for n in notebooks], "parameters": dict(fixed), "grid": dict(axes)}


def expand(grid: Mapping[str, Sequence[Any]], fixed: Mapping[str, Any] | None = None) -> list[dict]:
    """The cartesian product of the axes, each combined with the fixed values.

    >>> expand({"a": [1, 2], "b": ["x"]}, {"c": 0})
    [{'c': 0, 'a': 1, 'b': 'x'}, {'c': 0, 'a': 2, 'b': 'x'}]
    """
    names = list(grid)
    return [
        {**dict(fixed or {}), **dict(zip(names, combo, strict=True))}
        for combo in product(*(grid[n] for n in names))
    ]


def resolve_notebook(name: str | Path) -> Path:
    """A notebook path, or a name in :func:`notebook_dir` (``05-sizing``, ``05-sizing.ipynb``, ``05``);
    a path that is not a file is an error (naming it), not a name."""
    path = Path(name)
    if path.suffix == ".ipynb" and path.is_file():
        return path.resolve()
    if len(path.parts) > 1:  # a path, not a name: never fall back silently to perfmodel's own copy
        raise GridError(f"notebook {str(name)!r}: no such notebook file")
    stem = path.name.removesuffix(".ipynb")
    matches = sorted(notebook_dir().glob(f"{stem}*.ipynb"))
    exact = [m for m in matches if m.stem == stem]
    if exact or len(matches) == 1:
        return (exact or matches)[0]
    known = ", ".join(p.name for p in list_notebooks())
    what = "matches several notebooks" if matches else "is not a notebook"
    raise GridError(f"notebook {str(name)!r} {what}; known: {known}")


def describe_notebook(path: str | Path) -> str:
    """Which file a run executes, in words: the path, and whether it is perfmodel's own copy or a
    file given by path; when a name resolved to perfmodel's copy while the current directory has a
    different ``notebooks/<file>`` (a checkout beside an installed perfmodel), says so and how to
    run that one instead."""
    path = Path(path).resolve()
    shipped = path.parent == notebook_dir().resolve()
    text = f"notebook {path} ({'shipped with perfmodel' if shipped else 'given by path'})"
    local = Path.cwd() / "notebooks" / path.name
    if shipped and local.is_file() and local.resolve() != path and local.read_bytes() != path.read_bytes():
        text += f"; ./notebooks/{path.name} differs -- pass its path to run it instead"
    return text


def list_notebooks() -> list[Path]:
    """The shipped notebooks (``notebooks/NN-*.ipynb``), in order."""
    return sorted(notebook_dir().glob("[0-9][0-9]-*.ipynb"))


# ------------------------------------------------------------------------------------------
# parameter checks (before any kernel starts)
# ------------------------------------------------------------------------------------------


def declared_parameters(notebook: str | Path) -> dict[str, dict]:
    """The notebook's ``parameters`` cell: ``{name: {"default": value, "type": type or None, "help"}}``.

    Uses ``papermill.inspect_notebook`` (no kernel). ``type`` is the annotated
    type, else the type of the default literal; ``None`` when the default is
    ``None`` or not a literal (any value is then accepted).
    """
    import papermill

    info = papermill.inspect_notebook(str(notebook))
    out = {}
    for name, entry in info.items():
        try:
            default = ast.literal_eval(entry["default"])
            literal = True
        except (ValueError, SyntaxError):
            default, literal = entry["default"], False
        annotated = entry.get("inferred_type_name") or "None"
        kind = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "dict": dict}.get(
            annotated
        )
        if kind is None and literal and default is not None:
            kind = list if isinstance(default, tuple) else type(default)
        out[name] = {"default": default, "type": kind, "help": entry.get("help", "")}
    return out


def _type_ok(value: Any, kind: type | None, default: Any) -> bool:
    if kind is None:
        return True
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is list:
        if not isinstance(value, list | tuple):
            return False
        kinds = {type(x) for x in default} if isinstance(default, list | tuple) else set()
        if len(kinds) == 1:  # a homogeneous default: the elements must match it
            (element,) = kinds
            return all(_type_ok(x, element, None) for x in value)
        return True
    return isinstance(value, kind)


def check_parameters(notebook: str | Path, parameters: Mapping[str, Any], declared=None) -> dict:
    """Check names and value types against the notebook's parameters cell; return the values to pass.

    Integral floats for ``int`` parameters become ints (``1e6`` -> 1000000).
    Raises :class:`GridError` naming the notebook and the parameter.
    """
    name = Path(notebook).name
    declared = declared_parameters(notebook) if declared is None else declared
    out = {}
    for key, value in parameters.items():
        if key == OUTPUT_PARAMETER:
            raise GridError(f"{name}: parameter {key!r} is set by the runner (one folder per run)")
        if key not in declared:
            raise GridError(
                f"{name}: unknown parameter {key!r}; its parameters: "
                f"{', '.join(k for k in declared if k != OUTPUT_PARAMETER)}"
            )
        spec = declared[key]
        if not _type_ok(value, spec["type"], spec["default"]):
            raise GridError(
                f"{name}: parameter {key!r} expects {spec['type'].__name__} "
                f"(default {spec['default']!r}), got {value!r}"
            )
        out[key] = int(value) if spec["type"] is int and isinstance(value, float) else value
    return out


# ------------------------------------------------------------------------------------------
# jobs
# ------------------------------------------------------------------------------------------


def _slug(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "+".join(_slug(v) for v in value)
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1000:
        value = int(value)
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", str(value)).strip("-")


def run_folder(notebook: str | Path, parameters: Mapping[str, Any], max_slug: int = 60) -> str:
    """Deterministic folder name of a run: ``<notebook stem>/<slug of values>-<8 hex of hash>``.

    The hash covers the notebook name and every parameter (sorted), so two
    different runs never share a folder and re-running finds the same one.
    """
    stem = Path(notebook).stem
    canonical = json.dumps(
        {"notebook": Path(notebook).name, "parameters": parameters}, sort_keys=True, default=str
    )
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:8]
    slug = "_".join(_slug(v) for _, v in sorted(parameters.items()))[:max_slug].strip("_-") or "defaults"
    return f"{stem}/{slug}-{digest}"


def plan_jobs(
    notebooks: Sequence[str | Path],
    parameter_sets: Sequence[Mapping[str, Any]],
    out: str | Path,
    *,
    kernel_name: str = DEFAULT_KERNEL,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    html: bool = True,
) -> list[dict]:
    """One job spec (a plain dict) per notebook x parameter set, checked before anything runs.

    ``timeout_s``: the wall-clock limit of each run [s] (kernel start, every cell, the save and the
    HTML export); a run that reaches it is stopped and recorded as ``"timeout"`` (:func:`run_job`).

    Raises :class:`GridError` for an unknown notebook, parameter name or a
    value of the wrong type -- naming the notebook and the parameter.
    """
    if not (isinstance(timeout_s, int | float) and 0 < timeout_s < float("inf")):
        raise GridError(f"timeout: a run's time limit must be a number of seconds > 0, got {timeout_s!r}")
    out = Path(out).resolve()
    jobs = []
    for nb in notebooks:
        path = resolve_notebook(nb)
        declared = declared_parameters(path)
        if OUTPUT_PARAMETER not in declared:
            raise GridError(f"{path.name}: its parameters cell has no {OUTPUT_PARAMETER!r}")
        for params in parameter_sets or [{}]:
            checked = check_parameters(path, params, declared)
            folder = out / run_folder(path, checked)
            jobs.append(
                {
                    "notebook": str(path),
                    "parameters": checked,
                    "output_dir": str(folder),
                    "kernel_name": kernel_name,
                    "timeout_s": timeout_s,
                    "html": html,
                }
            )
    return jobs


def is_complete(job: Mapping[str, Any]) -> bool:
    """Whether the job's marker file exists (the run completed successfully)."""
    return (Path(job["output_dir"]) / MARKER).is_file()


def read_results(folder: str | Path) -> dict:
    """The flat results a notebook wrote (``summary.json``), scalars only; {} if none."""
    path = Path(folder) / RESULTS_FILE
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        return {}
    return {k: v for k, v in doc.items() if v is None or isinstance(v, str | int | float | bool)}


def time_limit(job: Mapping[str, Any]) -> float:
    """The wall-clock limit of one run [s]: ``job["timeout_s"]``, else :data:`DEFAULT_TIMEOUT_S`."""
    limit = job.get("timeout_s")
    return DEFAULT_TIMEOUT_S if limit is None else float(limit)


def run_job(job: Mapping[str, Any]) -> dict:
    """Execute one notebook run within its time limit; never raises for a failing notebook.

    ``job``: a spec from :func:`plan_jobs` (``notebook``, ``parameters``,
    ``output_dir``, ``kernel_name``, ``timeout_s``, ``html``). The run
    (:func:`execute_run`: papermill, then the HTML export) happens in a child
    process of its own; when it lasts ``timeout_s`` seconds (default
    :data:`DEFAULT_TIMEOUT_S`) that process and its kernel are killed and the
    run is recorded with status ``"timeout"`` and an error naming the limit and
    the cell that was running. Writes the executed notebook, its HTML export and
    the notebook's own result files into ``output_dir``; on success writes the
    marker file last. Returns a plain dict: ``notebook, run, status ("ok" |
    "failed" | "timeout"), error, duration_s, output_dir, reused`` plus the
    notebook's ``summary.json`` keys.
    """
    started = time.perf_counter()
    folder = Path(job["output_dir"])
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER
    marker.unlink(missing_ok=True)
    notebook = Path(job["notebook"])
    status, error = _run_in_child(job, time_limit(job))
    record = {
        "notebook": notebook.name,
        "run": folder.name,
        "status": status,
        "error": error,
        "duration_s": round(time.perf_counter() - started, 3),
        "output_dir": str(folder),
        "reused": False,
        "parameters": job["parameters"],
        "results": read_results(folder) if status == "ok" else {},
    }
    if status == "ok":
        marker.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
    return record


def execute_run(job: Mapping[str, Any]) -> tuple[str, str]:
    """The run itself, in this process and without a time limit of its own: papermill into
    ``output_dir`` (the kernel started again when it dies before it answers), the executed
    notebook's machine paths dropped, the HTML export. Returns ``(status, error)``, status
    ``"ok"`` or ``"failed"``; never raises for a failing notebook. :func:`run_job` calls it in a
    child process, which it kills at the run's time limit."""
    import papermill

    folder = Path(job["output_dir"])
    folder.mkdir(parents=True, exist_ok=True)
    notebook = Path(job["notebook"])
    executed = folder / notebook.name
    status, error = "ok", ""
    for _ in range(KERNEL_START_TRIES):
        try:
            papermill.execute_notebook(
                str(notebook),
                str(executed),
                # the run's folder is the kernel's working directory: "." keeps this machine's paths out
                # of the executed notebook and its export
                parameters={**job["parameters"], OUTPUT_PARAMETER: "."},
                kernel_name=job.get("kernel_name") or DEFAULT_KERNEL,
                cwd=str(folder),
                progress_bar=False,
                # a cell's limit too (the run's limit, which counts from before the kernel starts,
                # comes first; this one still holds where execute_run is called directly)
                execution_timeout=time_limit(job),
                # the kernel's own start-up warnings (e.g. about plain-TCP transport) are noise here
                extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
            )
            status, error = "ok", ""
            break
        except Exception as exc:  # a failing notebook is a result, not a crash
            status, error = "failed", _error_text(exc)
            if not _kernel_never_started(exc):
                break
    if executed.is_file():
        _drop_machine_paths(executed)
    if job.get("html", True) and executed.is_file():
        try:
            export_html(executed, executed.with_suffix(".html"))
        except Exception as exc:
            if status == "ok":
                status, error = "failed", f"HTML export: {_error_text(exc)}"
    return status, error


#: what the child process of a run executes: ``python -c CHILD_CODE job.json result.json``
CHILD_CODE = "from perfmodel.run.batch import _child_main; _child_main()"


def _run_in_child(job: Mapping[str, Any], limit: float) -> tuple[str, str]:
    """:func:`execute_run` in a child process killed, with its kernel, after ``limit`` seconds."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="perfmodel-run-") as tmp:
        spec, result = Path(tmp) / "job.json", Path(tmp) / "result.json"
        spec.write_text(json.dumps(dict(job), default=str), encoding="utf-8")
        # a session of its own: Ctrl-C at a terminal reaches this process, which then stops the run
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD_CODE, str(spec), str(result)], start_new_session=True
        )
        try:
            code = child.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            _kill_tree(child)
            return "timeout", _timeout_text(job, limit)
        except BaseException:  # Ctrl-C, or this worker being stopped: the run goes with it
            _kill_tree(child)
            raise
        if result.is_file():
            outcome = json.loads(result.read_text(encoding="utf-8"))
            return outcome["status"], outcome["error"]
        return "failed", f"the run's process ended with exit status {code} before it reported"


def _child_main() -> None:
    """The child process of a run (:data:`CHILD_CODE`): :func:`execute_run` on the job file,
    ``{"status", "error"}`` into the result file. Exits at once after writing it (nothing left
    running can hold it up), and ends the run when its parent goes (a stopped worker)."""
    import sys
    import threading

    spec, result = (Path(a) for a in sys.argv[1:3])
    parent = os.getppid()

    def orphaned():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                _kill_tree(None)
                os._exit(1)

    threading.Thread(target=orphaned, name="perfmodel-parent-watch", daemon=True).start()
    job = json.loads(spec.read_text(encoding="utf-8"))
    status, error = execute_run(job)
    tmp = result.with_suffix(".tmp")
    tmp.write_text(json.dumps({"status": status, "error": error}), encoding="utf-8")
    os.replace(tmp, result)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _kill_tree(child) -> None:
    """Kill ``child`` (a ``Popen``; ``None``: this process's children only) and every process
    under it -- the kernel runs in a session of its own, so a process group is not enough."""
    try:
        import psutil

        root = psutil.Process(child.pid if child is not None else os.getpid())
        family = root.children(recursive=True)
    except Exception:  # psutil missing, or the child already gone
        family = []
    if child is not None:
        child.kill()
    for process in family:
        try:
            process.kill()
        except Exception:  # already gone
            pass
    if child is not None:
        child.wait()


def _timeout_text(job: Mapping[str, Any], limit: float) -> str:
    """The error of a run stopped at its time limit: the limit and the cell that was running."""
    text = f"timed out after {limit:g} s (the run's time limit, --timeout); it was stopped with its kernel"
    executed = Path(job["output_dir"]) / Path(job["notebook"]).name
    try:
        import nbformat

        nb = nbformat.read(str(executed), as_version=4)
    except Exception:  # not saved yet: the kernel had not started
        return text + " before its first cell ran"
    for index, cell in enumerate(nb.cells):
        if cell.get("metadata", {}).get("papermill", {}).get("status") == "running":
            first = next((line for line in cell.source.splitlines() if line.strip()), "")
            return text + f" while cell {index} ran ({first[:60]!r})"
    return text + " after its cells ran (saving or exporting)"


def _drop_machine_paths(executed: Path) -> None:
    """Papermill's record of the input and output paths as file names: an executed notebook (and
    its export) does not carry the folders of the machine that ran it."""
    import nbformat

    nb = nbformat.read(str(executed), as_version=4)
    record = nb.metadata.get("papermill", {})
    for key in ("input_path", "output_path"):
        if record.get(key):
            record[key] = Path(record[key]).name
    nbformat.write(nb, str(executed))


#: times a run is started when its kernel dies before it answers (no cell has run then)
KERNEL_START_TRIES = 3


def _kernel_never_started(exc: BaseException) -> bool:
    """Whether ``exc`` is a kernel that died before replying to ``kernel_info`` (jupyter_client):
    no cell ran. Two kernels started at once can pick the same free port and one fails to bind it
    (``ZMQError: Address already in use``: jupyter_client chooses the ports before the kernel
    binds them), so such a run is started again rather than reported failed."""
    return isinstance(exc, RuntimeError) and "Kernel died before replying to kernel_info" in str(exc)


def _error_text(exc: BaseException) -> str:
    """One line: the notebook's exception name and message when papermill reports one."""
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    if ename:
        return f"{ename}: {evalue}"
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text.splitlines()[-1] if text else type(exc).__name__


#: the display data of a live widget; an export shows the output's static alternative instead
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def static_outputs(nb):
    """The notebook with its widgets made static, for an export read offline: every output that
    offers a widget view *and* a static alternative (text/html, an image, text) keeps only the
    static one, and the saved widget state goes, so no widget script is fetched from a CDN (the
    planner's display data carry its last plan as text/html, :mod:`perfmodel.plan.planner`). Changes
    ``nb`` in place and returns it."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and set(data) - {WIDGET_VIEW, "text/plain"}:
                del data[WIDGET_VIEW]
    nb.metadata.pop("widgets", None)
    return nb


def export_html(notebook: str | Path, target: str | Path) -> Path:
    """Write an executed notebook as HTML (nbconvert's ``HTMLExporter``), readable offline: widgets
    shown by their static copies (:func:`static_outputs`), no remote scripts
    (:func:`drop_remote_scripts`)."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = static_outputs(nbformat.read(str(notebook), as_version=4))
    body, _ = HTMLExporter().from_notebook_node(nb)
    Path(target).write_text(drop_remote_scripts(body), encoding="utf-8")
    return Path(target)


def drop_remote_scripts(page: str) -> str:
    """An HTML export without the ``<script src="http...">`` tags nbconvert's template adds
    (require.js, MathJax from a CDN): the notebooks need neither (no widgets once static, no
    math), and a page read offline should not reach for them."""
    import re

    return re.sub(r'<script[^>]*\ssrc="https?://[^"]*"[^>]*>\s*</script>\n?', "", page)


def _reused(job: Mapping[str, Any]) -> dict:
    record = json.loads((Path(job["output_dir"]) / MARKER).read_text(encoding="utf-8"))
    record["reused"] = True
    record["duration_s"] = 0.0
    return record


def run_batch(
    jobs: Sequence[Mapping[str, Any]],
    out: str | Path,
    *,
    workers: int = 1,
    scheduler=None,
    force: bool = False,
    progress: bool = True,
) -> list[dict]:
    """Run jobs (skipping completed ones unless ``force``) and write ``summary.csv`` into ``out``.

    Runs in ``workers`` processes (1: in this process; every notebook still
    runs in its own kernel). A failing run is recorded with its error; the
    others go on. Returns the records in job order.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records: list[dict | None] = [None] * len(jobs)
    todo = []
    for i, job in enumerate(jobs):
        if not force and is_complete(job):
            records[i] = _reused(job)
        else:
            todo.append(i)

    interrupted = None
    try:
        results = map_tasks(
            run_job, [dict(jobs[i]) for i in todo], scheduler=scheduler, workers=workers,
            chunk_size=1, progress=progress, desc="notebooks", unit="run", errors="return",
        )  # fmt: skip
    except Interrupted as stop:  # Ctrl-C: finished runs are on disk; summarise them, then stop
        results, interrupted = stop.results, stop
    for i, r in zip(todo, results, strict=True):
        if r is not None:
            records[i] = _failed(jobs[i], r) if isinstance(r, BaseException) else r
    done = [r for r in records if r is not None]
    update_summary(done, out / SUMMARY_CSV)
    if interrupted is not None:
        raise interrupted
    return done


def _failed(job: Mapping[str, Any], exc: BaseException) -> dict:
    return {
        "notebook": Path(job["notebook"]).name,
        "run": Path(job["output_dir"]).name,
        "status": "failed",
        "error": _error_text(exc),
        "duration_s": float("nan"),
        "output_dir": job["output_dir"],
        "reused": False,
        "parameters": job["parameters"],
        "results": {},
    }


def summary_frame(records: Iterable[Mapping[str, Any]]):
    """One row per run: fixed columns, ``param.<name>`` columns, then the notebooks' result keys."""
    import pandas as pd

    rows = []
    for r in records:
        row = {k: r[k] for k in ("notebook", "run", "status", "error", "duration_s", "output_dir", "reused")}
        for key, value in r.get("parameters", {}).items():
            row[f"param.{key}"] = json.dumps(value) if isinstance(value, list | dict) else value
        row.update(r.get("results", {}))
        rows.append(row)
    return pd.DataFrame(rows)


def write_summary(records: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Write :func:`summary_frame` as CSV (atomically: a reader never sees half a file)."""
    return _write_atomic(summary_frame(records), Path(path))


def update_summary(records: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """Add ``records`` to the summary CSV at ``path``, keeping the rows of earlier runs.

    A run is its ``output_dir``: a record for a run already in the file replaces that
    row in place; the others are appended in order. Written atomically (a temporary
    file renamed over the old one), so an interrupted write leaves the old summary.
    """
    import pandas as pd

    path = Path(path)
    new = summary_frame(records)
    if not path.is_file() or path.stat().st_size == 0:
        return _write_atomic(new, path)
    try:
        old = pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise GridError(
            f"{path}: not a summary this program wrote ({exc}); move it away to start anew"
        ) from None
    if "output_dir" not in old.columns:
        raise GridError(f"{path}: has no output_dir column; move it away to start anew")
    if new.empty:
        return path
    by_dir = new.set_index("output_dir", drop=False)
    keep = ~old["output_dir"].isin(by_dir.index)
    replaced = old["output_dir"].where(~keep)
    rows = []
    for i, row in old.iterrows():
        rows.append(row.to_dict() if keep[i] else by_dir.loc[replaced[i]].to_dict())
    seen = set(old["output_dir"])
    rows += [r for r in new.to_dict("records") if r["output_dir"] not in seen]
    columns = list(old.columns) + [c for c in new.columns if c not in old.columns]
    return _write_atomic(pd.DataFrame(rows, columns=columns), path)


def _write_atomic(frame, path: Path) -> Path:
    """``frame`` as CSV at ``path``, through a temporary file in the same folder."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        frame.to_csv(tmp, index=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def default_workers() -> int:
    """Worker processes by default: the cores, at most 4 (each run also starts a kernel)."""
    return max(1, min(4, os.cpu_count() or 1))
