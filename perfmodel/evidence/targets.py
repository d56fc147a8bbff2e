"""Accuracy targets and regression guards per system and metric group (``data/validation/targets.yaml``).

The measure is the median of lab medians on labs held out of the fit
(:func:`perfmodel.evidence.lab_bands.system_record`); the target is one factor for every cell (where the
answer's caveat stops warning); a guard is the worst a cell may be. :func:`table` sets the three
side by side with the first-look median (:mod:`perfmodel.evidence.first_look`), and :func:`raised_guards`
reads the file's git history for the commits that loosened a guard, which the tests hold to the
rule in the file's header.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd

from perfmodel.evidence import lab_bands
from perfmodel.inputs._data import data_dir, load_yaml
from perfmodel.model import caveats

__all__ = ["GROUPS", "PATH", "load", "markdown", "raised_guards", "table"]

PATH = data_dir() / "validation" / "targets.yaml"
#: the metric groups with a guard (those an answer rests on)
GROUPS = ("throughput", "mean latency", "tail latency")


def load(text: str | None = None) -> dict:
    """``{"target": factor, "guards": {system: {group: factor}}}`` from the file (or ``text``)."""
    doc = load_yaml(PATH.read_text(encoding="utf-8") if text is None else text) or {}
    return {
        "target": float(doc.get("target", 1.5)),
        "guards": {s: {g: float(v) for g, v in cells.items()} for s, cells in doc.get("guards", {}).items()},
    }


def table() -> pd.DataFrame:
    """Per system and group: ``now`` (median of lab medians, held out), ``labs``, ``guard``,
    ``target``, ``met`` (now <= target) and ``first_look`` (the first look's median, NaN if none)."""

    spec = load()
    rec = lab_bands.system_record()
    rec = rec[rec["group"].isin(GROUPS)]
    looked = caveats.record().set_index(["system", "group"])["first_look_median"]
    rows = []
    for r in rec.itertuples(index=False):
        rows.append({
            "system": r.system, "group": r.group, "labs": int(r.labs), "now": float(r.median_of_lab_medians),
            "guard": spec["guards"].get(r.system, {}).get(r.group, float("nan")), "target": spec["target"],
            "first_look": float(looked.get((r.system, r.group), float("nan"))),
        })  # fmt: skip
    out = pd.DataFrame(rows)
    out["met"] = out["now"] <= out["target"]
    return out.sort_values(["system", "group"]).reset_index(drop=True)


def markdown(frame: pd.DataFrame | None = None) -> str:
    """The table as docs/validation.md prints it."""
    frame = table() if frame is None else frame
    lines = ["| system | metric group | labs | now (held out) | first look | guard | target 1.5x |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in frame.itertuples(index=False):
        look = f"{r.first_look:.2f}x" if pd.notna(r.first_look) else "-"
        lines.append(f"| {r.system} | {r.group} | {r.labs} | {r.now:.2f}x | {look} | {r.guard:.2f}x | "
                     f"{'met' if r.met else 'not yet'} |")  # fmt: skip
    return "\n".join(lines)


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def raised_guards(root: Path | None = None) -> list[dict]:
    """Every commit in the file's history that raised a guard: ``commit``, ``raised``
    (``{system/group: (old, new)}``), ``files`` (every path the commit changed) and ``message``.
    Raises ``RuntimeError`` when git or the history cannot be read."""
    root = Path(root or PATH.parents[2])
    rel = PATH.relative_to(root).as_posix()
    try:
        commits = _git("log", "--format=%H", "--", rel, cwd=root).split()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RuntimeError(f"git history of {rel} cannot be read: {exc}") from exc
    out = []
    for commit in commits:
        new = load(_git("show", f"{commit}:{rel}", cwd=root))["guards"]
        try:
            old = load(_git("show", f"{commit}^:{rel}", cwd=root))["guards"]
        except subprocess.CalledProcessError:  # the commit that created the file
            continue
        raised = {f"{s}/{g}": (old[s][g], v) for s, cells in new.items() for g, v in cells.items()
                  if s in old and g in old[s] and v > old[s][g]}  # fmt: skip
        if raised:
            files = _git("show", "--format=", "--name-only", commit, cwd=root).split()
            message = _git("show", "-s", "--format=%B", commit, cwd=root)
            out.append({"commit": commit, "raised": raised, "files": files, "message": message})
    return out
