"""Out-of-sample accuracy and band coverage, from the stored cross-validation runs.

Leave-one-out refits the model ~120 times (minutes), so the suite reads the
runs ``python -m tools.refit`` stores in ``data/validation/`` --
after checking they are not stale -- and rebuilds their tables with today's
scoring code. docs/validation.md's tables and the shipped discrepancy must
be what those runs give.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import perfmodel
from perfmodel.evidence import discrepancy as disc
from perfmodel.evidence import stored_runs as runs
from perfmodel.evidence import validation as val
from tools import docs_blocks

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "regenerate with `python -m tools.refit`"


@pytest.fixture(scope="module")
def stored():
    out = {}
    for cv in runs.STORED:
        try:
            out[cv] = runs.load_cv(cv)
        except runs.StaleRunError as exc:
            pytest.fail(str(exc))
    return out


def test_every_refit_started_from_the_priors_and_converged(stored):
    for cv, table in stored.items():
        refits = table.attrs["refits"]
        assert all(r["converged"] for r in refits), cv
        assert refits[-1]["fold"] == "all" and refits[-1]["figures"] == len(table)
        assert table.converged.all()
    # one refit per fold: groups, or figures with the figures they restate
    assert len(stored["group"].attrs["refits"]) == stored["group"]["group"].nunique() + 1
    assert stored["loo"]["fold"].nunique() == len(stored["loo"].attrs["refits"]) - 1


def test_out_of_sample_accuracy_does_not_regress(stored):
    """Out-of-sample accuracy at the level reached (docs/validation.md): refits from the priors to
    convergence, a lab's sources left out together. Improve the mechanisms and lower these bounds;
    raise one only for a mechanism change whose reason and out-of-sample gains docs/validation.md
    records. Raised (2026-11-23, leave-one-group-out median 1.20x -> 1.22x, p90 2.25x
    -> 2.30x): SMT by busy threads and each core's work per GHz took the corpus's leave-one-source-
    out from 2.44x to 1.79x (Redis), 2.07x to 1.92x (MySQL), 5.38x to 4.57x (Cassandra); the old SMT
    mechanism had let the seeds' low-concurrency figures set x86's SMT yield (0.40 with the Ceph
    lab held out), which now comes from its published prior. Raised again (median 1.22x -> 1.23x,
    1.2179 -> 1.2253) when a closed loop's wait got its finite-population variance (exact against
    M/M/c//N and the simulator): six seed000 x86 p95 / p99 figures moved 3-5% and the median moved
    with them; the corpus's Redis went 1.80x -> 1.60x. Lowered (1.23x -> 1.21x, 1.2253 -> 1.2037,
    p90 2.29x -> 2.28x) when a core's clock came to depend on its busy cores (turbo with one busy
    core, the all-core clock -- base where no source gives one -- with all). Kept at 1.21x (1.2037
    -> 1.2046, leave-one-out median |rel| 18.6% -> 18.4%) when a statement's CPU time became fixed
    and the solver came to use a station's service SCV in its waits. Median lowered (1.21x ->
    1.20x, 1.2046 -> 1.1973) and p90 raised (2.30x -> 2.37x, 2.2778 -> 2.3605) on 2026-11-24, when
    only the reads on a flush's hardware queue came to wait for its backlog and its load (storage.
    flush_queue_share; corpus Cassandra 9.23x -> 7.37x, ScyllaDB 13.04x -> 11.05x): seed 003's mean
    write bandwidth, at the p90's rank, went from 2.33x to 2.44x over (fewer clients held by
    bursts: more writes) while its queue depths improved (flush QD 32.2x -> 30.8x under). The
    validation issue's goals (leave-one-out median 10%, p90 25%; leave-one-group-out median factor
    1.25x) are in docs/validation.md."""
    group = val.summarize(stored["group"]).iloc[0]
    loo = val.summarize(stored["loo"]).iloc[0]
    assert group.figures >= 120 and loo.figures >= 120
    assert group.median_factor_error <= 1.20
    assert group.p90_factor_error <= 2.37
    assert loo.median_abs_rel_error <= 0.20
    assert loo.p90_abs_rel_error <= 0.90
    by_source = val.summarize(stored["group"]).query("scope == 'source'").set_index("name")
    assert by_source.loc["seed004", "median_factor_error"] <= 1.06  # replicas, cores, cache, Optane
    undiagnosed = stored["loo"].query("gap == 'undiagnosed'")
    assert undiagnosed.empty, "misses without a mechanism in data/model_gaps.yaml: " + ", ".join(
        undiagnosed.figure_id
    )


def test_ninety_percent_bands_hold_what_they_claim_out_of_sample(stored):
    """Leave-one-group-out: every lab's bands calibrated on the other labs only. No metric group
    with at least 15 figures may under-cover (below 85%), and overall the 90% band holds 85-95%.
    Mean latency and ratios over-cover today (docs/validation.md says why): a ratchet, lower the
    excess by adding labs, never accept under-coverage."""
    s = val.summarize(stored["group"])
    metric = s[(s.scope == "metric") & (s.figures >= 15)]
    assert len(metric) >= 4
    for row in metric.itertuples():
        assert 0.85 <= row.coverage_90 <= 1.0, (row.name, row.coverage_90)
    assert 0.85 <= s.iloc[0].coverage_90 <= 0.95
    # leave-one-out: split-conformal bands cover about their level by construction (an arithmetic check)
    s = val.summarize(stored["loo"])
    for row in s[(s.scope == "metric") & (s.figures >= 15)].itertuples():
        assert 0.85 <= row.coverage_90 <= 0.95, (row.name, row.coverage_90)
        assert 0.40 <= row.coverage_50 <= 0.60, (row.name, row.coverage_50)


def test_derived_figures_are_not_counted_out_of_sample(stored):
    table = stored["group"]
    derived = table[table.derived != ""]
    assert {"S-IBM-x86-2", "seed002-fio-nvme-vs-sata-write"} <= set(derived.figure_id)
    assert val.summarize(table).iloc[0].figures == int(
        ((table.derived == "") & (table.bound == "") & np.isfinite(table.log_error)).sum()
    )


def test_the_shipped_discrepancy_is_the_stored_runs(stored):
    doc = json.loads((ROOT / "perfmodel" / "parameters" / "calibrated.json").read_text())
    block = doc["discrepancy"]
    assert block["cv"] == runs.DISCREPANCY_CV
    expected = runs.shipped_discrepancy(stored[runs.DISCREPANCY_CV])
    for group, entry in expected.items():
        got = block["groups"][group]
        assert got["sigma_log"] == pytest.approx(entry["sigma_log"], abs=1e-6), REGENERATE
        np.testing.assert_allclose(got["scores"], entry["scores"], atol=1e-4, err_msg=REGENERATE)


def test_docs_tables_are_the_stored_runs(stored):
    for name, body in runs.docs_blocks(stored).items():
        text = docs_blocks.home(name).read_text(encoding="utf-8")
        assert runs.read_block(text, name) == body, f"docs block {name!r} is stale; {REGENERATE}"


def test_a_stale_run_is_refused(tmp_path, monkeypatch):
    doc = json.loads(runs.run_path("group").read_text())
    doc["fingerprint"] = "0" * 64
    (tmp_path / "validation").mkdir()
    (tmp_path / "validation" / "cv-group.json").write_text(json.dumps(doc))
    monkeypatch.setattr(runs, "run_path", lambda cv: tmp_path / "validation" / f"cv-{cv}.json")
    with pytest.raises(runs.StaleRunError, match="python -m tools.refit"):
        runs.load_cv("group")


def test_predict_bands_carry_the_discrepancy():
    w = perfmodel.Workload(operation="read", read_fraction=1.0, io_bytes=4096, dataset_bytes=1e12, clients=84,
                           iodepth=32, replication_factor=2)  # fmt: skip
    stored = disc.load_discrepancy()
    frame = perfmodel.predict("x86-ceph-osd-c220m5", w, nodes=5, system="ceph", interval=0.9).iloc[0]
    # the documented priors have no fit: their band is the discrepancy alone, exactly
    prior = perfmodel.predict(
        "x86-ceph-osd-c220m5", w, nodes=5, system="ceph", interval=0.9, params="default"
    ).iloc[0]
    entry = stored["throughput"]
    from perfmodel.evidence import lab_bands

    # the discrepancy's half-width, and at least the band a new lab's figures fell in (lab_bands)
    half = max(disc.band_multiplier(entry["scores"], 0.9) * entry["sigma_log"],
               lab_bands.half_width("ceph", "throughput", 0.9))  # fmt: skip
    assert np.log(prior.throughput_ops_s_upper / prior.throughput_ops_s) == pytest.approx(half)
    assert np.log(prior.throughput_ops_s / prior.throughput_ops_s_lower) == pytest.approx(half)
    # with the shipped fit the parameter part adds to it (or the lab band still sets it)
    assert np.log(frame.throughput_ops_s_upper / frame.throughput_ops_s) >= half * (1 - 1e-9)
