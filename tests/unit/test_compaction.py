"""Compactions deferred during a load (perfmodel.mechanisms.compaction): the knob compactions."""

from __future__ import annotations

import csv
import statistics

import numpy as np
import pytest

import perfmodel as pm
from perfmodel import Workload
from perfmodel.evidence.figure_plan import figure_config
from perfmodel.inputs._data import data_dir
from perfmodel.inputs.systems import load_system
from perfmodel.mechanisms import compaction, durability, ordering

PLATFORM = "aws-m5d-2xlarge"


def _load(system="rocksdb", access="random", **knobs):
    w = Workload(operation="write", read_fraction=0.0, object_bytes=400.0, dataset_bytes=1e11, clients=1,
                 access_pattern=access)  # fmt: skip
    return pm.predict(platform=PLATFORM, workload=w, system=system, nodes=1, **knobs).iloc[0]


def _bytes_per_write(row):
    return row.device_write_bytes_s / row.throughput_ops_s


def test_a_load_without_compactions_writes_the_log_and_the_flush_only():
    factor = load_system("rocksdb").parameter(pm.load_parameters(), "background_write_factor")
    assert factor > compaction.LOAD_WRITE_FACTOR  # the steady state's compactions rewrite more
    auto, off = _load(), _load(compactions="off")
    assert _bytes_per_write(auto) == pytest.approx(400 * factor, rel=1e-6)
    assert _bytes_per_write(off) == pytest.approx(400 * compaction.LOAD_WRITE_FACTOR, rel=1e-6)
    # benchmark.sh's bulk load: the WAL off as well -- the flush's copy alone
    bulk = _load(compactions="off", durability="off")
    assert _bytes_per_write(bulk) == pytest.approx(400 * compaction.FLUSH_COPY, rel=1e-6)
    # fewer bytes behind each write: a device-bound load runs faster, never slower
    assert off.throughput_ops_s >= auto.throughput_ops_s
    assert bulk.throughput_ops_s >= off.throughput_ops_s


def test_in_key_order_nothing_more_is_saved():
    """Sequential inserts already write the log's and the flush's copies only (trivial moves)."""
    seq, seq_off = _load(access="sequential"), _load(access="sequential", compactions="off")
    assert compaction.LOAD_WRITE_FACTOR == ordering.SEQUENTIAL_LSM_WRITE_FACTOR
    assert _bytes_per_write(seq_off) == pytest.approx(_bytes_per_write(seq), rel=1e-12)


def test_the_function_leaves_other_stores_and_small_factors_alone():
    got = compaction.background_factor(
        [4.5, 4.5, 1.5, 4.5], ["off", "auto", "off", "off"], [True, True, True, False]
    )
    np.testing.assert_allclose(got, [compaction.LOAD_WRITE_FACTOR, 4.5, 1.5, 4.5])
    assert compaction.LOAD_WRITE_FACTOR == durability.LOG_COPY + compaction.FLUSH_COPY


def test_the_knob_is_refused_for_a_store_that_is_not_an_lsm_tree():
    with pytest.raises(ValueError, match="compactions"):
        _load(system="postgresql", compactions="off")
    with pytest.raises(ValueError, match="compactions"):
        _load(compactions="never")


def test_the_figure_column_sets_the_knob():
    row = {"system": "rocksdb", "platform_id": PLATFORM, "nodes": 1, "operation": "write",
           "read_fraction": 0.0, "object_bytes": 400, "clients": 1, "compactions": "off",
           "level": "client", "metric": "throughput", "value": 1.0, "unit": "ops/s"}  # fmt: skip
    assert figure_config(row)["compactions"] == "off"
    del row["compactions"]
    assert "compactions" not in figure_config(row)


def test_the_microbenchmark_record_shows_a_flush_copy_and_compaction_rewrites():
    """tools.rocksdb_write_amp's recorded runs: with auto compactions off a load writes about one
    byte per user byte (its flushes: FLUSH_COPY), with them on several."""
    text = (data_dir() / "microbench" / "rocksdb-write-amp.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    off = statistics.median(float(r["written_per_user_byte"]) for r in rows if r["auto_compactions"] == "0")
    on = statistics.median(float(r["written_per_user_byte"]) for r in rows if r["auto_compactions"] == "1")
    assert off == pytest.approx(compaction.FLUSH_COPY, abs=0.1)
    assert on > 2 * off
