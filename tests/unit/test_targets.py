"""Accuracy targets and regression guards (data/validation/targets.yaml, issue 37 point 7).

A cell (system x metric group) whose median of lab medians on held-out labs is worse than its guard
fails here; a guard is raised only by a commit of its own that quotes first-look numbers, which the
file's git history must show.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import perfmodel
from perfmodel.evidence import lab_bands, targets
from tools import docs_blocks

ROOT = Path(perfmodel.__file__).resolve().parents[1]


def test_every_measured_cell_has_a_guard_and_every_guard_a_measure():
    rec = lab_bands.system_record()
    measured = {(r.system, r.group) for r in rec.itertuples() if r.group in targets.GROUPS}
    guarded = {(s, g) for s, cells in targets.load()["guards"].items() for g in cells}
    assert measured - guarded == set(), "add a guard for each new cell (at its measure, rounded up)"
    assert guarded - measured == set(), "a guard with nothing measured"
    assert targets.load()["target"] == 1.5


def test_no_cell_is_worse_than_its_guard():
    frame = targets.table()
    worse = frame[frame["now"] > frame["guard"] + 1e-9]
    assert worse.empty, (
        "worse than the guard (raise a guard only in a commit of its own quoting first-look numbers): "
        + "; ".join(f"{r.system}/{r.group} {r.now:.3f} > {r.guard:.2f}" for r in worse.itertuples())
    )


def test_a_guard_is_raised_only_alone_and_with_first_look_numbers():
    try:
        raised = targets.raised_guards(ROOT)
    except RuntimeError as exc:
        pytest.skip(f"no git history here: {exc}")
    for commit in raised:
        assert commit["files"] == ["data/validation/targets.yaml"], (commit["commit"], commit["files"])
        text = commit["message"].lower()
        assert "first look" in text or "first-look" in text, commit["commit"]
        # the numbers quoted: at least one factor per raised cell
        assert sum(ch == "x" for ch in text) >= len(commit["raised"]), commit["commit"]


def test_raised_guards_sees_a_raise(tmp_path):
    """The history reader on a scratch repository: a raise in a commit of its own is found, with
    its old and new value; a lowered guard is not a raise."""
    import subprocess

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    path = tmp_path / "data" / "validation" / "targets.yaml"
    path.parent.mkdir(parents=True)
    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    for guards, message in (("{a: {throughput: 1.2}}", "create"), ("{a: {throughput: 1.1}}", "lower"),
                            ("{a: {throughput: 1.4}}", "raise: first look 1.9x")):  # fmt: skip
        path.write_text(f"target: 1.5\nguards: {guards}\n")
        git("add", "-A")
        git("commit", "-q", "-m", message)
    old_path = targets.PATH
    try:
        targets.PATH = path
        raised = targets.raised_guards(tmp_path)
    finally:
        targets.PATH = old_path
    assert [c["raised"] for c in raised] == [{"a/throughput": (1.1, 1.4)}]
    assert raised[0]["message"].startswith("raise")


def test_docs_print_the_targets():
    from perfmodel.evidence.stored_runs import read_block

    text = docs_blocks.home("targets").read_text(encoding="utf-8")
    assert read_block(text, "targets") == targets.markdown(), "regenerate: python -m tools.lab_bands"
    assert all(math.isfinite(v) for cells in targets.load()["guards"].values() for v in cells.values())
