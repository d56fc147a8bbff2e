"""tools.sim_agreement: the helpers behind docs/simulator.md's generated tables (the runs are minutes)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from perfmodel.inputs._data import data_dir
from perfmodel.inputs.workload import load_workload_file
from perfmodel.model import chain
from perfmodel.sim.config import config_from_model
from tools import sim_agreement as agreement


def _model(file, platform):
    spec = load_workload_file(str(data_dir() / "workloads" / file))
    args = dict(nodes=spec["nodes"], system=spec["system"], **spec["knobs"])
    return chain.build(platform, spec["workload"], **args)


def test_nodes_for_slo_is_the_first_count_within_it():
    nodes = np.array([4, 5, 6, 7])
    assert agreement.nodes_for_slo(np.array([np.inf, 30.0, 0.6, 0.5]), nodes, 20.0) == 6
    assert agreement.nodes_for_slo(np.array([np.inf, 0.4, 30.0, 0.5]), nodes, 20.0) == 5  # first, not last
    assert math.isnan(agreement.nodes_for_slo(np.array([40.0, 30.0, 25.0, 21.0]), nodes, 20.0))


def test_without_flushes_removes_the_bursts_and_their_bytes_only():
    model = _model("scylla-read-heavy.yaml", "power8-s821lc-10c")
    assert config_from_model(model).flushes
    quiet, cfg = agreement.without_flushes(model)
    assert not cfg.flushes
    assert np.all(np.asarray(quiet.net.burst_backlog) == 0) and np.all(quiet.net.load_write == 0)
    np.testing.assert_array_equal(quiet.net.d_read, model.net.d_read)  # the requests' own work kept
    # bursts cost the closed loop throughput: without them it can only be faster
    assert chain.solve(quiet).throughput[0] > chain.solve(model).throughput[0]
    # DM8's checkpoints are not flushes: their background writes stay
    dm8 = _model("dm8-tpcc.yaml", "kunpeng-r722")
    quiet_dm8, _ = agreement.without_flushes(dm8)
    assert quiet_dm8.net.load_write.max() > 0
    np.testing.assert_array_equal(quiet_dm8.net.load_write, dm8.net.load_write)


def test_shipped_markdown_states_the_error_and_the_control():
    table = pd.DataFrame(
        [
            dict(workload="a.yaml", platform="p", requests=1_000, throughput_ops_s_predict=130.0,
                 throughput_ops_s_sim=100.0, throughput_ci=(95.0, 105.0), latency_mean_ms_predict=1.0,
                 latency_mean_ms_sim=1.2, latency_p99_ms_predict=5.0, latency_p99_ms_sim=4.0,
                 warning="", flushes=True, quiet_predict=99.0, quiet_sim=100.0),
            dict(workload="b.yaml", platform="q", requests=2_000, throughput_ops_s_predict=50.0,
                 throughput_ops_s_sim=50.0, throughput_ci=(49.0, 51.0), latency_mean_ms_predict=2.0,
                 latency_mean_ms_sim=2.0, latency_p99_ms_predict=3.0, latency_p99_ms_sim=3.0,
                 warning="too short", flushes=False, quiet_predict=np.nan, quiet_sim=np.nan),
        ]
    )  # fmt: skip
    text = agreement.shipped_markdown(table)
    assert "| 130 / 100 (95-105) | +30.0% |" in text
    assert "99 / 100, -1.0% |" in text and "no flushes |" in text
    assert "Warning: b.yaml: too short" in text


def _table(name, p99_predict, p99_sim):
    n = len(p99_predict)
    return pd.DataFrame({"case": name, "nodes": np.arange(4, 4 + n), "tail_event_share": 0.0,
                         "p95_predict": 0.1, "p95_sim": 0.1, "p99_predict": p99_predict, "p99_sim": p99_sim,
                         "p99_sim_low": p99_sim, "p99_sim_high": p99_sim, "p95_agrees": True,
                         "p99_agrees": True})  # fmt: skip


def test_merge_block_reruns_the_named_cases_and_keeps_the_others():
    names = list(agreement.CASES)
    old = agreement.markdown([_table(n, [30.0, 1.0], [30.0, 1.0]) for n in names])
    rerun = _table(names[2], [25.0, 9.0], [26.0, 8.0])
    merged = agreement.merge_block(old, [rerun])
    full = agreement.markdown(
        [rerun if n == names[2] else _table(n, [30.0, 1.0], [30.0, 1.0]) for n in names]
    )
    assert merged == full  # the same block as a full rerun with those numbers, in the cases' order
    assert f"| {names[2]} | 5 | 0.00% | 0.1 / 0.1 | 9 / 8 (8-8) | yes |" in merged
    assert f"| {names[2]} | p99 <= 20 ms | 5 | 5 | 2 of 2 node counts |" in merged
    with pytest.raises(ValueError, match="neither rerun nor in the existing block"):
        agreement.merge_block(old.replace(f"| {names[0]} |", "| other |"), [rerun])
