"""perfmodel.simulate: predict's columns with CIs, the node model against exact and analytic, bad input."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pandas as pd
import pytest

import perfmodel
from perfmodel.cli import main
from perfmodel.inputs.workload import Workload
from perfmodel.model.predict import OUTPUT_COLUMNS, build_model
from perfmodel.queueing import closed_network
from perfmodel.sim import run as sim_run
from perfmodel.sim.config import config_from_model

FIO_READ = dict(operation="read", read_fraction=1.0, object_bytes=4096, dataset_bytes=100e9)
SCYLLA = Workload(
    read_fraction=0.8,
    object_bytes=1024,
    dataset_bytes=500 * 2**30,
    clients=100,
    threads_per_client=8,
    replication_factor=3,
    consistency="QUORUM",
)


def in_ci(row, name, value):
    return row[f"{name}_ci_low"] <= value <= row[f"{name}_ci_high"]


def test_summary_has_predicts_columns_and_intervals():
    w = Workload(**FIO_READ, clients=8)
    res = perfmodel.simulate("power8-s821lc-10c", w, system="fio", requests=2_000, replications=3)
    assert list(res.summary.columns)[: len(OUTPUT_COLUMNS)] == list(OUTPUT_COLUMNS)
    row = res.summary.iloc[0]
    for name in ("throughput_ops_s", "latency_p99_ms", "read_latency_mean_ms"):
        assert row[f"{name}_ci_low"] <= row[name] <= row[f"{name}_ci_high"]
    assert np.isnan(row.write_latency_mean_ms) and row.replications == 3 and not row.saturated
    rec = res.records
    assert {
        "configuration",
        "replication",
        "request",
        "operation",
        "start_s",
        "end_s",
        "response_time_s",
        "wait_cpu_s",
        "wait_device_s",
        "warmup",
    } <= set(rec.columns)
    assert len(rec) == 3 * 2_000 and rec.warmup.sum() == 3 * 200
    assert np.allclose(rec.end_s - rec.start_s, rec.response_time_s)


def test_prediction_bands_add_the_model_discrepancy_to_the_simulation_error():
    from perfmodel.evidence import discrepancy as disc

    w = Workload(**FIO_READ, clients=8)
    res = perfmodel.simulate(
        "power8-s821lc-10c", w, system="fio", requests=2_000, replications=3, interval=0.9, workers=1
    )
    row = res.summary.iloc[0]
    entry = disc.load_discrepancy()["throughput"]
    for name in ("throughput_ops_s", "latency_p99_ms"):
        assert row[f"{name}_lower"] < row[f"{name}_ci_low"] <= row[name]
        assert row[name] <= row[f"{name}_ci_high"] < row[f"{name}_upper"]
    # the discrepancy alone sets the band's least width: m_q * sigma of its metric group
    half = disc.band_multiplier(entry["scores"], 0.9) * entry["sigma_log"]
    assert np.log(row.throughput_ops_s_upper / row.throughput_ops_s) >= half
    assert np.isnan(row.write_latency_p99_ms_lower)  # a read-only workload has no write band


def test_same_seed_same_answer_and_another_seed_differs():
    w = Workload(**FIO_READ, arrival_rate=2e5)
    kw = dict(system="fio", requests=3_000, replications=2)
    a = perfmodel.simulate("power8-s821lc-10c", w, seed=7, **kw)
    b = perfmodel.simulate("power8-s821lc-10c", w, seed=7, **kw)
    c = perfmodel.simulate("power8-s821lc-10c", w, seed=8, **kw)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    pd.testing.assert_frame_equal(a.records, b.records)
    assert a.summary.latency_mean_ms.iloc[0] != c.summary.latency_mean_ms.iloc[0]
    s = perfmodel.simulate(
        "power8-s821lc-10c", SCYLLA, nodes=3, system="scylla", requests=3_000, replications=1, seed=3
    )
    t = perfmodel.simulate(
        "power8-s821lc-10c", SCYLLA, nodes=3, system="scylla", requests=3_000, replications=1, seed=3
    )
    pd.testing.assert_frame_equal(s.records, t.records)


def test_pooled_node_model_closed_loop_matches_exact_mva_of_the_same_network():
    """fio reads, pooled CPU + 35-server device, RF 1, no bursts: product form, so exact MVA is the truth."""
    w = Workload(**FIO_READ, clients=40)
    res = perfmodel.simulate(
        "power8-s821lc-10c", w, system="fio", requests=20_000, replications=8, seed=2, level=1 - 0.05 / 2
    )
    row = res.summary.iloc[0]
    net = build_model("power8-s821lc-10c", w, system="fio").net
    used = net.d_read[0] > 0
    exact = closed_network(net.d_read[0][used], net.servers[0][used], 0.0, 40)
    assert in_ci(row, "throughput_ops_s", float(exact.throughput[-1]))
    assert in_ci(row, "latency_mean_ms", float(exact.response_time[-1]) * 1e3)


def test_pooled_node_model_open_loop_matches_predict_means():
    """Open M/M/c stations in series (Jackson): predict's means are exact, so they lie in the CI."""
    w = Workload(**FIO_READ, arrival_rate=3e5)
    res = perfmodel.simulate(
        "power8-s821lc-10c", w, system="fio", requests=50_000, replications=8, seed=1, level=1 - 0.05 / 2
    )
    row, pred = res.summary.iloc[0], perfmodel.predict("power8-s821lc-10c", w, system="fio").iloc[0]
    assert res.runs[0][3].engine == "fast"
    assert in_ci(row, "latency_mean_ms", pred.latency_mean_ms)
    assert in_ci(row, "throughput_ops_s", pred.throughput_ops_s)
    assert row.util_device == pytest.approx(pred.util_device, rel=0.02)


def test_lsm_node_model_runs_flushes_and_replicas():
    res = perfmodel.simulate(
        "power8-s821lc-10c", SCYLLA, nodes=3, system="scylla", requests=20_000, replications=2, seed=0
    )
    row = res.summary.iloc[0]
    cfg = config_from_model(build_model("power8-s821lc-10c", SCYLLA, nodes=3, system="scylla"))
    assert cfg.flushes and cfg.copies == 3 and cfg.acks == 2 and cfg.d_write[2] == 0.0
    assert row.burst_duty > 0 and row.util_device > 0
    assert 0 < row.write_latency_p50_ms < row.write_latency_p99_ms < np.inf
    assert row.bottleneck in {"cpu", "device", "network"}


def test_a_grid_is_one_simulation_per_configuration():
    w = Workload(**FIO_READ, clients=[4, 16])
    res = perfmodel.simulate(
        "power8-s821lc-10c", w, system="fio", requests=1_000, replications=2, threads_per_core=[1, 2]
    )
    assert len(res.summary) == 2 and list(res.summary.replications) == [2, 2]
    assert set(res.records.configuration) == {0, 1}


def test_unstable_open_configuration_is_flagged_not_simulated():
    w = Workload(**FIO_READ, arrival_rate=5e5)  # device utilisation 1.1
    row = perfmodel.simulate("power8-s821lc-10c", w, system="fio", requests=1_000).summary.iloc[0]
    assert row.saturated and row.replications == 0 and row.latency_p99_ms == np.inf


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(requests=0), "requests"),
        (dict(requests=-5), "requests"),
        (dict(requests=100, warmup=100), "warmup"),
        (dict(requests=100, warmup=200), "warmup"),
        (dict(requests=100, warmup=99), "requests"),
        (dict(requests=1.5), "requests"),
        (dict(replications=0), "replications"),
        (dict(engine="warp"), "engine"),
    ],
)
def test_bad_run_lengths_raise(kw, match):
    w = Workload(**FIO_READ, clients=2)
    with pytest.raises(ValueError, match=match):
        perfmodel.simulate("power8-s821lc-10c", w, system="fio", **{"requests": 500, **kw})


def test_the_fast_engine_refuses_a_closed_loop():
    w = Workload(**FIO_READ, clients=2)
    with pytest.raises(ValueError, match="fast path"):
        perfmodel.simulate("power8-s821lc-10c", w, system="fio", requests=500, engine="fast")


def test_ctrl_c_keeps_the_finished_replications(monkeypatch):
    calls = {"n": 0}
    real = sim_run.run_simpy

    def interrupted(*args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(sim_run, "run_simpy", interrupted)
    w = Workload(**FIO_READ, clients=2)
    res = perfmodel.simulate("power8-s821lc-10c", w, system="fio", requests=500, replications=5)
    assert res.interrupted and res.summary.replications.iloc[0] == 2
    assert np.isfinite(res.summary.throughput_ops_s_ci_low.iloc[0])


def test_cli_simulate_verb(capsys):
    from pathlib import Path

    workload = Path(__file__).resolve().parents[2] / "data" / "workloads" / "scylla-read-heavy.yaml"
    code = main(
        [
            "simulate",
            str(workload),
            "--platform",
            "power8-s821lc-10c",
            "--requests",
            "2000",
            "--replications",
            "2",
            "--seed",
            "4",
            "--format",
            "csv",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    assert len(table) == 1 and table.replications.iloc[0] == 2
    assert {"throughput_ops_s_ci_low", "latency_p99_ms_ci_high"} <= set(table.columns)
    code = main(["simulate", str(workload), "--platform", "power8-s821lc-10c", "--requests", "0"])
    assert code == 2 and "requests" in capsys.readouterr().err


def test_intervals_of_positive_metrics_never_reach_below_zero_and_split_runs_are_named():
    from perfmodel.sim.results import spread_warning, t_interval

    wide = [264e3, 881e3, 264e3]  # the README workload's replications at 100k requests
    mean, lo, hi = t_interval(wide, 0.95, positive=True)
    assert mean == pytest.approx(np.mean(wide)) and 0 < lo < mean < hi
    plain = t_interval(wide, 0.95)
    assert plain[1] < 0  # the symmetric interval would have gone below zero
    # same relative half-width on the log scale: log(mean / lo) = log(hi / mean)
    assert np.log(mean / lo) == pytest.approx(np.log(hi / mean))  # the symmetric one reached below zero
    assert "replications split: 2 near 2.64e+05 and 1 near 8.81e+05" in spread_warning(wide)
    assert spread_warning([100.0, 103.0, 98.0]) == ""


def test_the_default_run_length_spans_several_flushes_of_every_node():
    # the README workload: a node flushes 512 x 512 KiB = 256 MiB of memtable, and each request
    # brings it 0.2 writes x 3 replicas / 3 nodes of 6,144 background bytes (WA 6 x 1 KiB rows)
    cfg = config_from_model(build_model("power8-s821lc-10c", SCYLLA, nodes=3, system="scylla"), 0)
    per_flush = 512 * 512 * 2**10 / (0.2 * 3 / 3 * 6144)
    assert cfg.requests_per_flush == pytest.approx(per_flush, rel=1e-12)
    expected = int(np.ceil(sim_run.FLUSH_CYCLES * per_flush / 0.9))  # measured after the 10% warm-up
    assert sim_run.auto_requests([cfg, None]) == expected
    assert sim_run.DEFAULT_REQUESTS < expected < sim_run.MAX_AUTO_REQUESTS
    # without flushes the floor; with a memtable that fills every few writes, the ceiling
    no_flush = config_from_model(
        build_model("power8-s821lc-10c", Workload(**FIO_READ, clients=8), system="fio")
    )
    assert no_flush.requests_per_flush == np.inf
    assert sim_run.auto_requests([no_flush]) == sim_run.DEFAULT_REQUESTS
    tiny = dataclasses.replace(cfg, flush_ios=1, flush_bytes_per_write=1.0)
    assert sim_run.auto_requests([tiny]) == sim_run.MAX_AUTO_REQUESTS


def test_a_run_too_short_to_see_flushes_says_so():
    res = perfmodel.simulate(
        "power8-s821lc-10c", SCYLLA, nodes=3, system="scylla", requests=20_000, replications=1, workers=1
    )
    row = res.summary.iloc[0]
    assert row["requests"] == 20_000
    assert "flushes per node" in row["replication_warning"]
    assert "use requests >= 1,213,630" in row["replication_warning"]  # the default run length
    fio = perfmodel.simulate(
        "power8-s821lc-10c", Workload(**FIO_READ, clients=8), system="fio", requests=2_000, replications=2
    )
    assert fio.summary.iloc[0]["replication_warning"] == ""  # nothing flushes: no warning
