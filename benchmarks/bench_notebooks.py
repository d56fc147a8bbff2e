"""Speed of the whole notebook suite (issue 7): every notebook, default parameters, headless.

Target: under 60 s on 2 cores, through the batch runner with 2 workers
(``perfmodel notebooks run --workers 2``), HTML export included. Baseline in
the same run: the fixed cost of one papermill run -- a notebook with only a
parameters cell and ``import perfmodel`` (kernel start, import, HTML export) --
times the number of notebooks, run the same way; the ratio says how much of
the suite is the analyses themselves.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import nbformat

from perfmodel.run import batch


def _bare_notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell('output_dir = "."  # result folder')
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, nbformat.v4.new_code_cell("import perfmodel  # noqa: F401")]
    path = folder / "bare.ipynb"
    nbformat.write(nb, path)
    return path


def main(argv=None, workers: int = 2):
    notebooks = batch.list_notebooks()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bare = _bare_notebook(tmp)
        (template,) = batch.plan_jobs([bare], [{}], tmp / "base")
        # the same bare notebook once per shipped notebook, each in its own folder
        base_jobs = [dict(template, output_dir=str(tmp / "base" / f"run{i}")) for i in range(len(notebooks))]
        t0 = time.perf_counter()
        base = batch.run_batch(base_jobs, tmp / "base", workers=workers, progress=False)
        baseline = time.perf_counter() - t0
        jobs = batch.plan_jobs(notebooks, [{}], tmp / "suite")
        t0 = time.perf_counter()
        records = batch.run_batch(jobs, tmp / "suite", workers=workers, progress=False)
        suite = time.perf_counter() - t0
    failed = [r["notebook"] for r in records + base if r["status"] != "ok"]
    per = ", ".join(f"{r['notebook'][:2]} {r['duration_s']:.1f} s" for r in records)
    print(
        f"notebook suite: {len(notebooks)} notebooks, default parameters, {workers} workers: {suite:.1f} s "
        f"({per}) target < 60 s: {'PASS' if suite < 60 and not failed else 'FAIL'}"
    )
    print(
        f"baseline: {len(notebooks)} bare runs (kernel + import perfmodel + HTML) {baseline:.1f} s "
        f"-> ratio {suite / baseline:.2f}x" + (f"; FAILED: {failed}" if failed else "")
    )


if __name__ == "__main__":
    main()
