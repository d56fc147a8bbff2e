"""``perfmodel ingest`` on real outputs kept in tests/data/ingest/ (their sources: SOURCES.md).

Each parser must give the numbers the output prints, with the load it states; where a person
already transcribed the same output into the corpus, ingest must agree with them. What an output
does not say must be asked for by flag, never guessed.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from perfmodel.cli import main
from perfmodel.evidence import ingest
from perfmodel.evidence.ingest.common import IngestError
from perfmodel.evidence.recorded import load_benchmarks
from perfmodel.inputs._data import data_dir
from perfmodel.inputs.errors import DataError

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "ingest"
PLATFORM = "x86-azure-ds14-v2-localssd"
#: sample -> (its format, the context flags its output cannot carry)
CASES = {
    "ycsb_benchant_scylla_hotspot_run0.txt": ("ycsb", {}),
    "cassandra_stress_datastax_write.txt": ("cassandra-stress", {"system": "cassandra"}),
    "cassandra_stress_armlp_c4a_write.txt": ("cassandra-stress", {"system": "cassandra"}),
    "rados_bench_cephio_2013_write.txt": ("rados-bench", {}),
    "rados_bench_osiris_vai_write.txt": ("rados-bench", {"fields": {"iodepth": "16"}}),
    "hammerdb_docs_mariadb_tprocc.txt": ("hammerdb", {"system": "mysql"}),
    "benchmarksql_howto_postgres.txt": (
        "benchmarksql",
        {"system": "postgresql", "fields": {"terminals": "1", "warehouses": "30"}},
    ),
    "memtier_redis_loopback.json": ("memtier-json", {}),
    "local_fio_randrw_jobs.json": ("fio-json", {}),
    "local_fio_randrw_group.json": ("fio-json", {}),
    "local_sysbench_oltp_pgsql.txt": ("sysbench", {"system": "postgresql"}),
    "local_sysbench_fileio_rndrw.txt": ("sysbench", {"system": "fio"}),
    "local_pgbench_tpcb.txt": ("pgbench", {}),
    "local_pgbench_select_only.txt": ("pgbench", {}),
    "local_redis_benchmark.csv": (
        "redis-benchmark-csv",
        {"fields": {"clients": "10", "object_bytes": "3", "iodepth": "1"}},
    ),
    "local_redis_benchmark_p4.txt": ("redis-benchmark", {"fields": {"iodepth": "4"}}),
    "local_redis_benchmark_q.txt": (
        "redis-benchmark",
        {"fields": {"clients": "50", "object_bytes": "3", "iodepth": "1"}},
    ),
    "local_memaslap_stats.txt": ("memaslap", {}),
    "local_db_bench_fill_read.txt": ("db_bench", {"fields": {"clients": "2"}}),
}
#: samples a parser must refuse, with the reason
REFUSED = {"local_sysbench_cpu.txt": "sysbench cpu measures the processor alone"}


def _read(name: str, **given) -> ingest.Ingested:
    fmt, extra = CASES[name]
    context = {"platform_id": PLATFORM, "device_id": "intel-p3700-2tb", **extra, **given}
    path = SAMPLES / name
    return ingest.read(path.read_text(encoding="utf-8"), ingest.context_for(path, **context))


def _rows(name: str, **given) -> dict[tuple[str, str], dict]:
    """(operation, metric) -> row; a figure per pair in these samples' runs of one test."""
    rows = _read(name, **given).rows
    out = {(r["operation"], r["metric"]): r for r in rows}
    assert len(out) == len(rows), "two figures of one operation and metric"
    return out


def _value(row: dict) -> float:
    return float(row["value"])


def test_every_sample_is_listed_in_sources_and_the_cases():
    sources = (SAMPLES / "SOURCES.md").read_text(encoding="utf-8")
    files = sorted(p.name for p in SAMPLES.iterdir() if p.name != "SOURCES.md")
    assert files == sorted([*CASES, *REFUSED])
    assert all(f"`{name}`" in sources for name in files)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_format_is_detected(name):
    assert ingest.detect((SAMPLES / name).read_text(encoding="utf-8")).name == CASES[name][0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_rows_load_as_a_users_figure_file(name, tmp_path):
    done = _read(name)
    frame = ingest.validate_csv(done.rows, path=tmp_path / "figures.csv")
    assert len(frame) == len(done.rows) > 0
    assert frame["figure_id"].is_unique
    assert set(frame["role"]) == {"measured"} and set(frame["level"]) == {"client"}
    assert (frame["source"] == name).all() and (frame["value_si"] > 0).all()


#: format -> the load generator its figures name (column load_generator)
TOOLS = {
    "ycsb": "ycsb", "cassandra-stress": "cassandra-stress", "rados-bench": "rados-bench",
    "hammerdb": "hammerdb", "benchmarksql": "benchmarksql", "memtier-json": "memtier", "fio-json": "fio",
    "sysbench": "sysbench", "pgbench": "pgbench", "redis-benchmark-csv": "redis-benchmark",
    "redis-benchmark": "redis-benchmark", "memaslap": "memaslap", "db_bench": "db_bench",
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_ingest_names_the_tool_as_the_load_generator(name):
    assert {r["load_generator"] for r in _read(name).rows} == {TOOLS[CASES[name][0]]}


def test_every_format_names_a_known_tool_and_set_overrides_it():
    assert {f.name: f.tool for f in ingest.FORMATS.values()} == TOOLS
    fork = _read("cassandra_stress_armlp_c4a_write.txt", fields={"load_generator": "latte"})
    assert {r["load_generator"] for r in fork.rows} == {"latte"}


def test_nothing_else_is_detected():
    with pytest.raises(IngestError, match="give --format"):
        ingest.detect("hello\nworld\n")


# --- cited samples -------------------------------------------------------------------------------


def test_ycsb_summary_and_command_line():
    rows = _rows("ycsb_benchant_scylla_hotspot_run0.txt")
    assert rows["mixed", "throughput"]["value"] == "137191.97518705422"
    read, update = rows["read", "latency_mean"], rows["write", "latency_mean"]
    assert (_value(read), _value(update)) == (2407.243450776857, 1954.6939380194374)
    assert _value(rows["read", "latency_p95"]) == 3799 and _value(rows["read", "latency_p99"]) == 14399
    assert _value(rows["write", "latency_max"]) == 180863 and read["unit"] == "us"
    assert ("read", "latency_min") not in rows  # CLEANUP and minima are not figures
    load = rows["mixed", "throughput"]
    assert (load["system"], load["threads_per_client"], load["clients"], load["target_rate"]) == (
        "scylla", "300", "1", "140000")  # fmt: skip
    assert (load["object_bytes"], load["dataset_gb"], load["read_fraction"]) == ("1000", "1000", "0.5")
    assert load["consistency"] == load["read_consistency"] == "QUORUM"
    # -p requestdistribution=hotspot -p hotspotdatafraction=0.013 -p hotspotopnfraction=0.95
    assert (load["key_distribution"], load["hot_data_fraction"], load["hot_op_fraction"]) == (
        "hotspot", "0.013", "0.95")  # fmt: skip
    assert read["same_measurement"] == ""  # a throttled run's latency does not restate its rate


def test_ycsb_intended_latencies_are_recorded_as_such():
    """measurement.interval=both adds '[Intended-<OP>]' sections, counted from each request's
    intended start (YCSB's Measurements; 'op', the default, counts from the actual start). The
    benchANT run above did not use it: two such lines are appended here, in YCSB's format."""
    text = (SAMPLES / "ycsb_benchant_scylla_hotspot_run0.txt").read_text(encoding="utf-8")
    text += "[Intended-READ], AverageLatency(us), 5100.5\n[Intended-READ], 99thPercentileLatency(us), 31000\n"
    done = ingest.read(text, ingest.context_for("ycsb.txt", platform_id=PLATFORM, device_id="x"))
    intended = [r for r in done.rows if r["latency_start"] == "intended"]
    assert sorted((r["metric"], _value(r)) for r in intended) == [
        ("latency_mean", 5100.5),
        ("latency_p99", 31000),
    ]
    assert all(r["operation"] == "read" for r in intended)
    plain = [
        r
        for r in done.rows
        if r["metric"] == "latency_mean" and r["operation"] == "read" and r not in intended
    ]
    assert [_value(r) for r in plain] == [2407.243450776857] and plain[0]["latency_start"] == ""


def test_ycsb_agrees_with_the_corpus_transcription_of_the_same_run():
    corpus = load_benchmarks(data_dir() / "benchmarks" / "corpus_benchant-mongodb-scylladb-2023.csv")
    same = corpus[corpus["locator"].str.contains("caching-hotspot_scylladb-medium_0_a9QhmOsa/0_run.txt")]
    assert len(same) == 4
    rows = _rows("ycsb_benchant_scylla_hotspot_run0.txt")
    for fig in same.itertuples():
        ours = rows[fig.operation, fig.metric]
        assert (_value(ours), ours["unit"]) == (fig.value, fig.unit)
        assert float(ours["threads_per_client"]) == fig.threads_per_client
        assert float(ours["object_bytes"]) == fig.object_bytes and float(ours["dataset_gb"]) == fig.dataset_gb


def test_cassandra_stress_before_4_0():
    rows = _rows("cassandra_stress_datastax_write.txt")
    assert _value(rows["write", "throughput"]) == 46751
    got = {
        m: _value(rows["write", m]) for m in ("latency_mean", "latency_p95", "latency_p99", "latency_p999")
    }
    assert got == {"latency_mean": 4.3, "latency_p95": 7.2, "latency_p99": 60.5, "latency_p999": 223.2}
    assert _value(rows["write", "latency_max"]) == 503.1 and rows["write", "latency_max"]["unit"] == "ms"
    assert rows["write", "throughput"]["threads_per_client"] == "200"
    assert _value(rows["write", "latency_p50"]) == 1.3  # "latency median", a metric of the format


def test_cassandra_stress_5_with_its_settings_agrees_with_the_corpus():
    rows = _rows("cassandra_stress_armlp_c4a_write.txt")
    corpus = load_benchmarks(data_dir() / "benchmarks" / "corpus_armlp-cassandra-gcp-c4a.csv")
    arm_write = corpus[corpus["figure_id"].str.startswith("armlp-cassandra-gcp-c4a-write")]
    assert len(arm_write) == 4
    for fig in arm_write.itertuples():
        ours = rows["write", fig.metric]
        assert (_value(ours), ours["unit"]) == (fig.value, fig.unit)
        assert float(ours["threads_per_client"]) == fig.threads_per_client
        assert float(ours["object_bytes"]) == fig.object_bytes == 5 * 34
        assert ours["consistency"] == fig.consistency and float(ours["replication_factor"]) == 1
        # 'Population: Sequence: 1..10000': each key once, in order, as the helper recorded it
        assert ours["access_pattern"] == fig.access_pattern == "sequential"
    assert _value(rows["write", "latency_max"]) == 38.4


def test_rados_bench_old_summary_computes_its_iops_and_obeys_littles_law():
    rows = _rows("rados_bench_cephio_2013_write.txt")
    bw, iops, mean = rows["write", "bandwidth"], rows["write", "iops"], rows["write", "latency_mean"]
    assert (bw["value"], bw["unit"]) == ("82.480", "MiB/s")
    assert math.isclose(_value(iops), 6188 / 300.097605, rel_tol=1e-9)
    assert math.isclose(_value(iops) * 4194304 / 2**20, _value(bw), rel_tol=1e-3)  # ops x 4 MiB = MiB/s
    assert (_value(mean), mean["unit"], _value(rows["write", "latency_max"])) == (0.0484891, "s", 0.329817)
    assert (iops["iodepth"], iops["io_bytes"]) == ("1", "4194304")
    assert math.isclose(1 / _value(iops), _value(mean), rel_tol=0.01)  # Little: depth 1 / rate = latency
    assert mean["same_measurement"] == iops["figure_id"]


def test_rados_bench_asks_for_the_concurrency_it_does_not_print():
    path = SAMPLES / "rados_bench_osiris_vai_write.txt"
    context = ingest.context_for(path, platform_id=PLATFORM, device_id="intel-p3700-2tb")
    with pytest.raises(IngestError, match=r"iodepth: --set iodepth=VALUE \(rados bench -t"):
        ingest.read(path.read_text(encoding="utf-8"), context)
    rows = _rows("rados_bench_osiris_vai_write.txt")
    assert (_value(rows["write", "iops"]), _value(rows["write", "bandwidth"])) == (93, 375.289)
    assert math.isclose(16 / 93, _value(rows["write", "latency_mean"]), rel_tol=0.02)  # 16 in flight


def test_hammerdb_nopm_and_tpm_with_the_virtual_users_and_warehouses():
    rows = _rows("hammerdb_docs_mariadb_tprocc.txt")
    nopm, tpm = rows["tpcc", "tpmc"], rows["tpcc", "throughput"]
    assert (_value(nopm), nopm["unit"], _value(tpm), tpm["unit"]) == (128176, "tpm", 298394, "tpm")
    assert (nopm["terminals"], nopm["warehouses"]) == ("24", "120")
    path = SAMPLES / "hammerdb_docs_mariadb_tprocc.txt"
    context = ingest.context_for(path, platform_id=PLATFORM, device_id="intel-p3700-2tb")
    with pytest.raises(IngestError, match="system: --system") as err:  # MariaDB is no shipped spec
        ingest.read(path.read_text(encoding="utf-8"), context)
    assert "terminals" not in str(err.value) and "platform_id" not in str(err.value)


def test_benchmarksql_result_lines_ask_for_what_they_do_not_print():
    rows = _rows("benchmarksql_howto_postgres.txt")
    assert (_value(rows["tpcc", "tpmc"]), _value(rows["tpcc", "throughput"])) == (179.55, 329.17)
    path = SAMPLES / "benchmarksql_howto_postgres.txt"
    with pytest.raises(IngestError) as err:
        ingest.read(path.read_text(encoding="utf-8"), ingest.context_for(path))
    message = str(err.value)
    for flag in ("--system", "--platform", "--device", "--set terminals=", "--set warehouses="):
        assert flag in message


# --- outputs of the real tools run on this machine ----------------------------------------------


def test_memtier_json_per_command_and_totals():
    doc = json.loads((SAMPLES / "memtier_redis_loopback.json").read_text(encoding="utf-8"))
    stats = doc["ALL STATS"]
    rows = _rows("memtier_redis_loopback.json")
    assert _value(rows["write", "throughput"]) == stats["Sets"]["Ops/sec"]
    assert _value(rows["read", "throughput"]) == stats["Gets"]["Ops/sec"]
    assert _value(rows["mixed", "throughput"]) == stats["Totals"]["Ops/sec"]
    assert _value(rows["read", "latency_p99"]) == stats["Gets"]["Percentile Latencies"]["p99.00"]
    totals = stats["Totals"]  # memtier prints 0 as the totals' mean: ingest takes its own sums
    assert math.isclose(
        _value(rows["mixed", "latency_mean"]), totals["Accumulated Latency"] / totals["Count"]
    )
    load = rows["mixed", "throughput"]
    assert (load["clients"], load["iodepth"], load["object_bytes"], load["read_fraction"]) == (
        "8",
        "1",
        "64",
        "0.8",
    )
    assert load["system"] == "redis"
    # key_pattern R:R, memtier's default: uniform random keys for SETs and GETs
    assert (load["key_distribution"], load["access_pattern"]) == ("uniform", "random")


@pytest.mark.parametrize(
    ("pattern", "operation", "expected"),
    [
        ("Z:Z", "mixed", {"key_distribution": "zipf", "access_pattern": "random", "zipf_s": 0.9}),
        ("S:R", "write", {"key_distribution": "uniform", "access_pattern": "sequential"}),
        ("S:R", "read", {"key_distribution": "uniform", "access_pattern": "random"}),
        ("P:P", "read", {"key_distribution": "uniform", "access_pattern": "sequential"}),
        ("S:R", "mixed", {}),
        ("G:G", "read", {}),
    ],
)
def test_memtier_key_patterns(pattern, operation, expected):
    from perfmodel.evidence.ingest import memtier

    keys, note = memtier._keys({"key_pattern": pattern, "key_zipf_exp": 0.9}, operation)
    assert keys == expected
    assert bool(note) == (not expected)  # what is not recorded is said


def _fio_doc(name: str) -> dict:
    return json.loads((SAMPLES / name).read_text(encoding="utf-8"))


def test_fio_group_reporting_job():
    job = _fio_doc("local_fio_randrw_group.json")["jobs"][0]
    rows = _rows("local_fio_randrw_group.json")
    iops = rows["mixed", "iops"]
    assert math.isclose(_value(iops), job["read"]["iops"] + job["write"]["iops"], rel_tol=1e-12)
    assert _value(rows["read", "latency_mean"]) == job["read"]["lat_ns"]["mean"]
    assert _value(rows["write", "latency_p99"]) == job["write"]["clat_ns"]["percentile"]["99.000000"]
    assert (iops["clients"], iops["iodepth"], iops["io_bytes"], iops["read_fraction"]) == (
        "2",
        "4",
        "4096",
        "0.7",
    )
    assert float(iops["dataset_gb"]) == 16 * 2**20 / 1e9 and iops["system"] == "fio"
    assert iops["access_pattern"] == "random"  # rw=randrw
    for op in ("read", "write"):
        tail = [_value(rows[op, m]) for m in ("latency_p95", "latency_p99", "latency_p999", "latency_max")]
        assert tail == sorted(tail)


def test_fio_jobs_of_one_group_are_summed_and_their_percentiles_left_out():
    jobs = _fio_doc("local_fio_randrw_jobs.json")["jobs"]
    done = _read("local_fio_randrw_jobs.json")
    rows = {(r["operation"], r["metric"]): r for r in done.rows}
    assert len(jobs) == 2 and rows["mixed", "iops"]["clients"] == "2"
    expected = sum(j[d]["iops"] for j in jobs for d in ("read", "write"))
    assert math.isclose(_value(rows["mixed", "iops"]), expected, rel_tol=1e-12)
    n = [j["read"]["lat_ns"]["N"] for j in jobs]
    mean = sum(j["read"]["lat_ns"]["mean"] * k for j, k in zip(jobs, n, strict=True)) / sum(n)
    assert math.isclose(_value(rows["read", "latency_mean"]), mean, rel_tol=1e-12)
    assert not any(m.startswith("latency_p") for _, m in rows)
    assert any("group_reporting" in note for note in done.notes)


def test_sysbench_oltp_statements_come_from_its_counts():
    rows = _rows("local_sysbench_oltp_pgsql.txt")
    rate, mean = rows["mixed", "throughput"], rows["mixed", "latency_mean"]
    assert (rate["value"], rate["statements_per_op"], rate["read_statements_per_op"]) == (
        "803.32",
        "18",
        "14",
    )
    assert (rate["clients"], rate["read_fraction"], _value(rows["mixed", "latency_p99"])) == ("2", "0", 6.09)
    assert mean["same_measurement"] == rate["figure_id"]
    assert math.isclose(2 / _value(rate), _value(mean) / 1e3, rel_tol=0.02)  # Little: 2 threads


def test_sysbench_fileio_and_what_it_cannot_record():
    done = _read("local_sysbench_fileio_rndrw.txt")
    rows = {(r["operation"], r["metric"]): r for r in done.rows}
    assert math.isclose(_value(rows["mixed", "iops"]), 74297.28 + 49531.52)
    assert (rows["mixed", "iops"]["io_bytes"], rows["mixed", "iops"]["read_fraction"]) == ("4096", "0.6")
    assert rows["mixed", "iops"]["access_pattern"] == "random"  # rndrw
    assert ("fileio", "latency_p95", "printed as 0.00, below the output's resolution") in done.left_out
    for name, why in REFUSED.items():
        text = (SAMPLES / name).read_text(encoding="utf-8")
        with pytest.raises(IngestError, match=why):
            ingest.read(text, ingest.context_for(name, platform_id=PLATFORM, device_id="x", system="fio"))


def test_pgbench_builtin_scripts():
    tpcb, select = _rows("local_pgbench_tpcb.txt"), _rows("local_pgbench_select_only.txt")
    row = tpcb["mixed", "throughput"]
    assert (row["value"], row["statements_per_op"], row["read_statements_per_op"]) == (
        "2476.834781",
        "5",
        "1",
    )
    assert (row["clients"], row["query_protocol"], row["system"]) == ("4", "simple", "postgresql")
    assert _value(tpcb["mixed", "latency_mean"]) == 1.609
    assert math.isclose(4 / _value(row) * 1e3, 1.609, rel_tol=0.02)  # Little: 4 clients
    one = select["read", "throughput"]
    assert (one["value"], one["query_protocol"], one["read_fraction"]) == ("35871.999005", "prepared", "1")


def test_redis_benchmark_csv_needs_the_load_and_keeps_every_cell():
    path = SAMPLES / "local_redis_benchmark.csv"
    context = ingest.context_for(path, platform_id=PLATFORM, device_id="dram-in-memory")
    with pytest.raises(IngestError) as err:
        ingest.read(path.read_text(encoding="utf-8"), context)
    assert all(f"--set {c}=VALUE" in str(err.value) for c in ("clients", "object_bytes", "iodepth"))
    rows = _rows("local_redis_benchmark.csv")
    cells = {r["test"]: r for r in csv.DictReader(path.read_text(encoding="utf-8").splitlines())}
    for test, op in (("SET", "write"), ("GET", "read")):
        assert rows[op, "throughput"]["value"] == cells[test]["rps"]
        assert rows[op, "latency_p99"]["value"] == cells[test]["p99_latency_ms"]
        assert rows[op, "latency_max"]["value"] == cells[test]["max_latency_ms"]


def test_redis_benchmark_text_states_clients_and_payload():
    rows = _rows("local_redis_benchmark_p4.txt")
    row = rows["write", "throughput"]
    assert (row["value"], row["clients"], row["object_bytes"], row["iodepth"]) == (
        "465116.25",
        "10",
        "64",
        "4",
    )
    tail = [_value(rows["read", m]) for m in ("latency_p95", "latency_p99", "latency_max")]
    assert tail == sorted(tail) == [0.071, 0.103, 0.303]
    with pytest.raises(IngestError, match="--set clients=50: the output says clients=10"):
        _read("local_redis_benchmark_p4.txt", fields={"iodepth": "4", "clients": "50"})


def test_redis_benchmark_quiet_lines():
    done = _read("local_redis_benchmark_q.txt")
    by_test = {r["figure_id"].split("-q-", 1)[1]: r for r in done.rows}
    assert by_test["lrange-100-first-100-elements-throughput"]["rows_per_op"] == "100"
    assert by_test["mset-10-keys-throughput"]["keys_per_op"] == "10"
    assert by_test["set-throughput"]["value"] == "91743.12"
    assert not any("ping" in key for key in by_test)


def test_memaslap_rate_and_latencies():
    rows = _rows("local_memaslap_stats.txt")
    rate = rows["mixed", "throughput"]
    assert (rate["value"], rate["clients"], rate["read_fraction"]) == ("128795", "8", "0.9")
    assert rate["object_bytes"] == str(round(28033408 / 25766)) and rate["system"] == "memcached"
    assert math.isclose(257619 / 2.0, _value(rate), rel_tol=1e-3)
    assert (_value(rows["read", "latency_mean"]), _value(rows["write", "latency_max"])) == (61, 2372)


def test_db_bench_result_lines_and_histograms():
    done = _read("local_db_bench_fill_read.txt")
    fill = {r["metric"]: r for r in done.rows if "-fillrandom-" in r["figure_id"]}
    # RocksDB 7.8.3: micros/op is the two threads' time per operation, 2 / ops/sec (not 1 / ops/sec)
    per_op = fill["thread_time_per_op"]
    assert (fill["throughput"]["value"], per_op["value"], fill["bandwidth"]["unit"]) == (
        "179081", "11.159", "MiB/s")  # fmt: skip
    assert "time_per_op" not in fill
    assert math.isclose(2 / _value(fill["throughput"]) * 1e6, _value(per_op), rel_tol=0.01)
    assert per_op["same_measurement"] == fill["throughput"]["figure_id"]
    assert math.isclose(100000 / 0.558, _value(fill["throughput"]), rel_tol=0.01)
    assert (_value(fill["latency_mean"]), _value(fill["latency_p99"]), _value(fill["latency_max"])) == (
        11.1574, 29.22, 5000)  # fmt: skip
    rate = fill["throughput"]
    assert (rate["object_bytes"], rate["operation"], rate["system"], rate["clients"]) == (
        "100",
        "write",
        "rocksdb",
        "2",
    )
    assert math.isclose(float(rate["dataset_gb"]), 50000 * (16 + 100) / 1e9)
    reads = {r["metric"]: r for r in done.rows if "-readrandom-" in r["figure_id"]}
    assert (reads["throughput"]["value"], reads["throughput"]["operation"]) == ("533074", "read")
    assert rate["access_pattern"] == reads["throughput"]["access_pattern"] == "random"


# --- the context the user gives -----------------------------------------------------------------


def test_every_missing_context_flag_is_named_at_once():
    path = SAMPLES / "cassandra_stress_datastax_write.txt"
    with pytest.raises(IngestError) as err:
        ingest.read(path.read_text(encoding="utf-8"), ingest.context_for(path))
    message = str(err.value)
    assert "system: --system" in message and "cassandra" in message  # the shipped specs are listed
    assert "platform_id: --platform" in message and "device_id: --device" in message


def test_set_must_name_a_configuration_column():
    with pytest.raises(IngestError, match="--set colour: not a configuration column"):
        _read("local_pgbench_tpcb.txt", fields={"colour": "red"})


def test_context_columns_reach_every_row():
    done = _read("local_pgbench_tpcb.txt", nodes=3, network_id="loopback", group="mylab", variant="v1")
    for row in done.rows:
        assert (row["nodes"], row["network_id"], row["group"], row["variant"]) == (
            "3",
            "loopback",
            "mylab",
            "v1",
        )
        assert row["source_id"] == "local-pgbench-tpcb" and row["figure_id"].startswith("local-pgbench-tpcb-")


def test_an_unknown_platform_fails_as_load_benchmarks_fails():
    done = _read("local_pgbench_tpcb.txt", platform_id="no-such-server")
    with pytest.raises(DataError, match="platform 'no-such-server' is not in the hardware catalog"):
        ingest.validate_csv(done.rows)


# --- the command line ----------------------------------------------------------------------------


def test_cli_writes_figures_that_validate_reads(tmp_path, capsys):
    out = tmp_path / "figures.csv"
    files = [str(SAMPLES / "local_pgbench_tpcb.txt"), str(SAMPLES / "rados_bench_cephio_2013_write.txt")]
    code = main(["ingest", *files, "--platform", PLATFORM, "--device", "intel-p3700-2tb", "--lab", "mylab",
                 "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert "local_pgbench_tpcb.txt (pgbench): 2 figures" in err and f"wrote 6 figures to {out}" in err
    frame = load_benchmarks(out)
    assert (
        len(frame) == 6
        and set(frame["group"]) == {"mylab"}
        and set(frame["system"]) == {"postgresql", "ceph"}
    )
    assert main(["validate", "--data", str(out), "--format", "csv"]) == 0
    table = capsys.readouterr().out.splitlines()
    shown = {line.split(",")[0] for line in table[1:] if not line.startswith("#")}
    assert "local-pgbench-tpcb-run-throughput" in shown and shown <= set(frame["figure_id"])


def test_cli_names_the_missing_flag_and_exits_2(capsys):
    code = main(["ingest", str(SAMPLES / "local_redis_benchmark.csv"), "--platform", PLATFORM])
    err = capsys.readouterr().err
    assert code == 2
    assert "device_id: --device" in err and "--set clients=VALUE (redis-benchmark -c" in err


def test_cli_prints_the_csv_without_out(capsys):
    code = main(["ingest", str(SAMPLES / "local_pgbench_select_only.txt"), "--platform", PLATFORM,
                 "--device", "intel-p3700-2tb", "--format", "pgbench"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    rows = list(csv.DictReader(out.splitlines()))
    assert [r["metric"] for r in rows] == ["throughput", "latency_mean"]
