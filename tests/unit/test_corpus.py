"""The public benchmark corpus (issue 17): size, schema additions, the stored run and its docs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import perfmodel
from perfmodel.evidence import corpus
from perfmodel.evidence import recorded as bm
from perfmodel.evidence.figure_plan import figure_config, predict_figure
from perfmodel.evidence.stored_runs import read_block
from tools import docs_blocks

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return perfmodel.load_benchmarks()


def test_corpus_holds_at_least_400_figures_from_17_sources(frame):
    assert len(frame) >= 400
    assert frame["source_id"].nunique() >= 17
    corpus_rows = frame[frame["collection"] == "corpus"]
    assert len(corpus_rows) >= 250 and corpus_rows["source_id"].nunique() >= 12
    # one source per file, and every row says where in the source it is
    assert (corpus_rows.groupby("file")["source_id"].nunique() == 1).all()
    assert (corpus_rows["locator"].str.len() > 0).all() and (corpus_rows["source"].str.len() > 0).all()


def test_corpus_covers_the_required_hardware_and_systems(frame):
    corpus_rows = frame[frame["collection"] == "corpus"]
    assert {"kunpeng", "arm", "x86"} <= set(corpus_rows["family"])
    assert {"mysql", "postgresql", "opengauss", "redis", "memcached"} <= set(corpus_rows["system"])
    assert not set(corpus_rows["file"].map(lambda f: Path(f).name)) & set(
        p.name for p in bm.calibration_files()
    )


def test_data_summarises_by_system_and_platform_family(capsys):
    from perfmodel.cli import main

    assert main(["data", "--by", "system,family", "--format", "csv"]) == 0
    out = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert {"system", "family", "figures"} <= set(out.columns)
    assert out["figures"].sum() == len(perfmodel.load_benchmarks())


def test_throttled_run_is_an_open_loop_at_its_target_rate():
    row = {"system": "scylla", "operation": "read", "platform_id": "x86-dl380-e5-2630v4", "target_rate": 5e4,
           "clients": 10, "replication_factor": 1, "nodes": 1, "metric": "latency_p99", "level": "client",
           "unit": "ms", "value": 1.0, "role": "measured"}  # fmt: skip
    cfg = figure_config(row)
    assert not cfg["workload"].closed and cfg["workload"].arrival_rate == 5e4


def test_consistency_and_statements_and_p999_reach_the_model():
    base = {"system": "cassandra", "operation": "write", "platform_id": "x86-dl380-e5-2630v4", "clients": 64,
            "replication_factor": 3, "nodes": 3, "level": "client", "unit": "ms", "value": 1.0,
            "role": "measured", "metric": "latency_mean"}  # fmt: skip
    one = predict_figure({**base, "consistency": "ONE"})[0]
    everyone = predict_figure({**base, "consistency": "ALL"})[0]
    assert one < everyone  # the fastest of three replicas answers first
    p99 = predict_figure({**base, "metric": "latency_p99"})[0]
    p999 = predict_figure({**base, "metric": "latency_p999"})[0]
    assert p999 > p99 > 0
    sql = {"system": "mysql", "operation": "read", "platform_id": "x86-dl380-e5-2630v4", "clients": 8,
           "dataset_gb": 1, "level": "client", "unit": "ops/s", "value": 1.0, "role": "measured",
           "metric": "throughput"}  # fmt: skip
    single = predict_figure(sql)[0]
    fourteen = predict_figure({**sql, "statements_per_op": 14})[0]
    assert fourteen == pytest.approx(single / 14, rel=0.05)  # 14x the work per operation


def test_erasure_coded_figures_are_predicted(frame):
    ec = frame[(frame["ec_profile"] != "") & (frame["source_id"] == "clyso-1tibps-2024")]
    assert len(ec) == 4
    for row in ec.to_dict("records"):
        value, reason = predict_figure(row)
        assert reason == "" and value > 0


def test_bad_ec_profile_is_named(tmp_path):
    src = bm.data_dir() / "benchmarks" / "corpus_clyso-1tibps-2024.csv"
    text = src.read_text(encoding="utf-8").splitlines()
    header = text[0].split(",")
    i = header.index("ec_profile")
    cells = next(line for line in text[1:] if ",6+2," in line)
    bad = cells.replace(",6+2,", ",six+two,", 1)
    path = tmp_path / "bad.csv"
    path.write_text(text[0] + "\n" + bad + "\n", encoding="utf-8")
    with pytest.raises(Exception, match="ec_profile"):
        perfmodel.load_benchmarks(path)
    assert i >= 0


# ---------------------------------------------------------------------------------------
# the stored corpus run
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stored() -> pd.DataFrame:
    return corpus.load()


def test_stored_run_is_current(stored):
    doc = json.loads(corpus.RUN_PATH.read_text(encoding="utf-8"))
    assert doc["fingerprint"] == corpus.fingerprint(), "rerun: python -m tools.run_corpus"
    assert set(stored["figure_id"]) == set(bm.corpus_benchmarks()["figure_id"])


def test_shipped_set_holds_the_corpus_fits(stored):
    shipped = perfmodel.load_parameters("calibrated")
    for system, fit in stored.attrs["fits"].items():
        assert set(fit) == set(corpus.SYSTEM_FREE[system])
        for key, value in fit.items():
            assert shipped[key] == pytest.approx(value, rel=1e-12)


def test_docs_show_the_stored_run(stored):
    text = docs_blocks.home("corpus").read_text(encoding="utf-8")
    assert read_block(text, "corpus") == corpus.markdown(stored).strip("\n")


def test_zero_shot_never_uses_a_corpus_fit(stored):
    start = corpus.starting_set()
    prior = perfmodel.load_parameters("default")
    for keys in corpus.SYSTEM_FREE.values():
        for key in keys:
            assert start[key] == prior[key]
    seed = ~stored["corpus_system"].astype(bool)
    same = stored.loc[seed, ["zero_shot", "loso", "in_sample"]].to_numpy(float)
    finite = np.isfinite(same[:, 0])
    # a seed system's corpus figures are never fitted: all three predictions are the zero-shot one
    assert np.array_equal(same[finite, 0], same[finite, 1]) and np.array_equal(
        same[finite, 0], same[finite, 2]
    )


def test_every_corpus_gap_names_figures_that_exist(frame):
    import fnmatch

    ids = list(frame.loc[frame["collection"] == "corpus", "figure_id"])
    for gap in corpus.load_gaps():
        assert {"id", "mechanism", "evidence", "figures"} <= set(gap), gap.get("id")
        for pattern in gap["figures"]:
            assert fnmatch.filter(ids, pattern), f"{gap['id']}: {pattern} matches no corpus figure"


def test_gap_report_counts_every_miss_once(stored):
    report = corpus.gap_report(stored)
    misses = (stored["loso_factor"] > 1.25) | (stored["reason"] != "")
    assert report["figures"].sum() == int(misses.sum())
    assert "undiagnosed" in set(report["gap"])  # the misses no mechanism explains yet are counted, not hidden


# The leave-one-source-out target (1.35x) and ratchet (LOSO_REACHED) that stood here were replaced on
# 2026-11-28 by data/validation/targets.yaml (tests/unit/test_targets.py): a 1.5x target and a guard
# per system and metric group on the median of lab medians held out, raised only by a commit of its
# own that quotes first-look numbers. The ratchet's history of raises and their reasons is in git.
