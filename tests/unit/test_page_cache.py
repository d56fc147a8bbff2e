"""Buffered I/O (system spec ``page_cache``): a PostgreSQL page that misses shared_buffers may be in
the OS page cache, which with shared_buffers holds the RAM share ``cache_share_of_ram``. Those reads
cost a miss's CPU and no device I/O -- checked in closed form on the hit ratios, the device reads and
the CPU demand, and on the recorded figures it explains."""

from pathlib import Path

import numpy as np
import pytest

import perfmodel
from perfmodel.inputs.params import load_parameters
from perfmodel.inputs.systems import load_system
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

PLATFORM = "x86-dl380-e5-2630v4"  # 128 GiB of RAM
GIB = 2**30


def _model(system="postgresql", dataset=100e9, cache=16e9, **kw):
    w = Workload(operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=dataset, clients=8,
                 replication_factor=1)  # fmt: skip
    return chain.build(PLATFORM, w, nodes=1, system=system, params="default", cache_bytes=cache, **kw)


def test_postgresql_and_opengauss_read_through_the_page_cache_mysql_does_not():
    assert load_system("postgresql").page_cache and load_system("opengauss").page_cache
    assert not load_system("mysql").page_cache  # O_DIRECT in the recorded configurations
    for system in ("postgresql", "opengauss"):
        assert "page_cache" in load_system(system).sources  # every structural fact has a source


def test_uniform_hits_split_between_shared_buffers_and_the_page_cache():
    params = load_parameters("default")
    share = params.values["cache_share_of_ram[postgresql]"]
    m = _model()
    ram_share = share * 128 * GIB
    # uniform keys: the hit ratio is the cache over the data set (mechanisms.cache.uniform_hit_ratio)
    assert m.cache.data_hit[0] == pytest.approx(16e9 / 100e9, rel=1e-6)
    # double buffering: the two caches hold the larger of shared_buffers and the rest of the share
    in_memory = min(max(16e9, ram_share - 16e9) / 100e9, 1.0)
    assert m.cache.data_hit[0] + m.cache.page_cache_hit[0] == pytest.approx(in_memory, rel=1e-6)
    per_miss = params.values["device_reads_per_miss[postgresql]"]
    assert m.devices.reads_per_read[0] == pytest.approx((1 - in_memory) * per_miss, rel=1e-6)
    assert m.devices.page_cache_reads[0] == pytest.approx(m.cache.page_cache_hit[0] * per_miss, rel=1e-6)


def test_double_buffering_makes_half_the_share_the_worst_shared_buffers():
    """Pages read or written back through the kernel keep a copy there, so shared_buffers and the
    page cache hold the larger of the two, not their sum: with uniform keys the memory hit ratio
    is lowest at shared_buffers = half the RAM share (PostgreSQL's documentation expects nothing
    from more than 40% of RAM)."""
    share = load_parameters("default").values["cache_share_of_ram[postgresql]"] * 128 * GIB
    hits = {}
    for frac in (0.1, 0.3, 0.5, 0.7, 0.9):
        m = _model(dataset=200e9, cache=frac * share)
        hits[frac] = m.cache.data_hit[0] + m.cache.page_cache_hit[0]
        assert hits[frac] == pytest.approx(max(frac, 1 - frac) * share / 200e9, rel=1e-6)
    assert min(hits, key=hits.get) == 0.5


def test_a_page_cache_read_costs_a_miss_cpu_but_no_device_time():
    params = load_parameters("default")
    pg = _model(dataset=60e9)  # fits the RAM share (0.7 x 128 GiB): no device read at all
    assert pg.devices.reads_per_read[0] == pytest.approx(0.0, abs=1e-12)
    assert pg.devices.d_read[0] == pytest.approx(0.0, abs=1e-15)
    no_miss = _model(dataset=60e9, cache=100e9)  # all in shared_buffers
    extra = (pg.demands.cpu_read - no_miss.demands.cpu_read)[0]
    cyc = params.values["cpu_cycles_miss[postgresql]"] * pg.devices.page_cache_reads[0]
    assert extra == pytest.approx(cyc / pg.cpu.thread_hz[0], rel=1e-9)


def test_without_the_page_cache_the_misses_go_to_the_device():
    mysql = _model("mysql", dataset=60e9)
    assert np.all(mysql.cache.page_cache_hit == 0)
    assert mysql.devices.reads_per_read[0] > 0.5
    cold = _model(dataset=60e9, cache_state="cold")  # a cold start: neither cache holds the data
    assert cold.cache.page_cache_hit[0] == 0 and cold.devices.reads_per_read[0] > 0.9


def test_the_default_cache_is_the_ram_share_and_adds_no_page_cache():
    w = Workload(operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=200e9, clients=8,
                 replication_factor=1)  # fmt: skip
    m = chain.build(PLATFORM, w, nodes=1, system="postgresql", params="default")
    assert m.cache.page_cache_hit[0] == 0.0  # cache_share_of_ram already counts both


def test_percona_pgbench_scale_7000_is_served_from_memory():
    """Percona's pgbench scale 7000 (~112 GB) with 64 GiB shared_buffers on a 252 GiB server: the
    page cache holds the rest, so the run stays CPU-bound as at scale 3000 (recorded 32,388-33,709
    and 35,744-35,958 tps at 64 clients) instead of reading from the SATA SSD."""
    from perfmodel.evidence.figure_plan import predict_figure
    from perfmodel.evidence.recorded import corpus_benchmarks

    rows = corpus_benchmarks()
    rows = rows[rows.figure_id.str.startswith("percona-thp-pg-2019") & (rows.metric == "throughput")]
    big = rows[(rows.dataset_gb == 112) & (rows.clients == 64)].iloc[0].to_dict()
    small = rows[(rows.dataset_gb == 48) & (rows.clients == 64)].iloc[0].to_dict()
    x_big, _ = predict_figure(big, "default")
    x_small, _ = predict_figure(small, "default")
    assert x_big > 0.85 * x_small  # recorded: 0.91-0.94 of scale 3000
    w = perfmodel.evidence.figure_plan.figure_config(big)
    out = perfmodel.predict(**w, params="default").iloc[0]
    assert out.bottleneck == "cpu" and out.util_device < 0.1


def test_a_page_cache_without_a_system_cache_is_refused(tmp_path):
    import yaml

    from perfmodel.inputs.errors import DataError

    doc = yaml.safe_load(Path(load_system("postgresql").path).read_text())
    doc.update(id="pg-nocache", data_cache=False)
    path = tmp_path / "pg-nocache.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(DataError, match="page_cache.*needs data_cache"):
        load_system(path)
