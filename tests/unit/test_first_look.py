"""The first-look record (perfmodel.evidence.first_look): taken as the model is, append-only, reported."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfmodel.evidence import first_look
from perfmodel.evidence.recorded import load_benchmarks
from tools import docs_blocks

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "libtpa-redis-doc"  # a corpus source (already in the corpus: here only to exercise the code)


def test_a_first_look_is_the_shipped_models_prediction_of_the_sources_figures():
    rows = first_look.take(
        [SOURCE], commit="abc123", today="2026-11-28", record=first_look.load(Path("/nonexistent"))
    )
    figures = load_benchmarks()
    mine = figures[figures.source_id == SOURCE]
    assert list(rows.columns) == first_look.COLUMNS
    assert sorted(rows.figure_id) == sorted(mine.figure_id)
    assert (rows.commit == "abc123").all() and (rows.recorded_on == "2026-11-28").all()
    assert (rows.params == "calibrated").all()
    scored = rows.dropna(subset=["factor_error"])
    ratio = np.exp(np.abs(np.log(scored.predicted_si / scored.value_si)))  # a plain metric: the factor
    assert scored.factor_error.to_numpy() == pytest.approx(ratio.to_numpy(), rel=1e-9)
    assert (scored.factor_error >= 1).all()


def test_a_source_is_looked_at_once_and_must_exist():
    record = pd.DataFrame({"source_id": [SOURCE]})
    with pytest.raises(ValueError, match="already has a first look"):
        first_look.take([SOURCE], commit="x", record=record)
    with pytest.raises(ValueError, match="no-such-source has no recorded figures"):
        first_look.take(["no-such-source"], commit="x", record=first_look.load(Path("/nonexistent")))


def test_append_keeps_every_row_and_writes_one_header(tmp_path):
    path = tmp_path / "first-look.csv"
    a = first_look.take([SOURCE], commit="c1", today="2026-11-28", record=first_look.load(path))
    first_look.append(a, path)
    first_look.append(a.assign(commit="c2"), path)
    text = path.read_text().splitlines()
    assert text[0] == ",".join(first_look.COLUMNS) and len(text) == 1 + 2 * len(a)
    back = first_look.load(path)
    assert list(back.commit.unique()) == ["c1", "c2"]
    lines = first_look.report_lines(back)
    assert lines[0].startswith(f"first look: {2 * len(a)} figures of 1 sources")
    assert any("redis / throughput" in line for line in lines)


def _in_order(old: list[str], now: list[str]) -> bool:
    """Whether every line of ``old`` is in ``now``, unchanged and in the same order (a subsequence)."""
    lines = iter(now)
    return all(line in lines for line in old)


def test_the_record_is_append_only_in_the_history():
    """Every committed version of the record is in today's, row for row and in order: no row is ever
    edited or removed. The header and the first version's rows stay the file's first lines; rows two
    branches appended side by side are kept both, so a merged version holds the other branch's rows
    between its own (a subsequence, not a prefix)."""
    rel = "data/validation/first-look.csv"
    try:
        commits = subprocess.run(["git", "log", "--format=%H", "--", rel], cwd=ROOT, check=True,
                                 capture_output=True, text=True).stdout.split()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the history cannot be read")
    now = (ROOT / rel).read_text(encoding="utf-8").splitlines()
    for commit in commits:
        old = subprocess.run(["git", "show", f"{commit}:{rel}"], cwd=ROOT, capture_output=True, text=True)
        if old.returncode:  # the commit deleted it: that is an edit too
            pytest.fail(f"{commit[:10]} removed {rel}")
        lines = old.stdout.splitlines()
        assert _in_order(lines, now), f"{commit[:10]}'s rows were changed, removed or reordered since"
    first = subprocess.run(["git", "show", f"{commits[-1]}:{rel}"], cwd=ROOT, capture_output=True, text=True)
    assert now[: len(first.stdout.splitlines())] == first.stdout.splitlines()


def test_the_history_check_refuses_an_edit_a_removal_and_a_swap():
    old = ["h", "a,1", "b,2"]
    assert _in_order(old, ["h", "a,1", "x,9", "b,2", "c,3"])  # rows merged in between, rows appended
    assert not _in_order(old, ["h", "a,1", "b,3"])  # edited
    assert not _in_order(old, ["h", "b,2"])  # removed
    assert not _in_order(old, ["h", "b,2", "a,1"])  # reordered


def test_the_model_must_be_committed_to_be_looked_at(monkeypatch):
    status = " M perfmodel/model/chain.py\n"
    monkeypatch.setattr(first_look, "_git", lambda *a: status if a[0] == "status" else "x")
    with pytest.raises(ValueError, match="the model differs from HEAD"):
        first_look.current_commit()


def test_docs_print_the_record_by_source():

    from perfmodel.evidence.stored_runs import read_block

    text = docs_blocks.home("first-look").read_text(encoding="utf-8")
    assert read_block(text, "first-look") == first_look.markdown(), "rerun: python -m tools.run_corpus"
    record = first_look.load()
    assert record["source_id"].nunique() >= 14  # two, then twelve recorded on 2026-11-28
    # one row per source in the table, in the order they were recorded
    rows = [line.split(" | ")[2] for line in read_block(text, "first-look").splitlines()[2:] if "|" in line]
    assert rows == list(dict.fromkeys(record["source_id"]))


def test_the_docs_table_lists_a_source_the_model_could_not_predict():
    """A source with no prediction keeps its row (dashes), a partly predicted one says 'n of N', and
    the medians and band share are over the predicted figures only."""
    rows = []
    for source, errors in (("a", [1.5, 2.0, 3.0]), ("b", [np.nan, np.nan]), ("c", [1.2, np.nan])):
        for e in errors:
            band = 1.0 if np.isfinite(e) else np.nan
            rows.append({"source_id": source, "group": f"lab-{source}", "system": "redis",
                         "recorded_on": "2026-11-28", "commit": "0123456789", "factor_error": e,
                         "in_band90": band})  # fmt: skip
    text = first_look.markdown(pd.DataFrame(rows))
    assert "| b | lab-b | redis | 0 of 2 | - | - | - |" in text
    assert "| c | lab-c | redis | 1 of 2 | 1.20x | 1.20x | 100% |" in text
    assert "| a | lab-a | redis | 3 | 2.00x |" in text
    assert "All 4 figures of 2 sources from 2 labs" in text
