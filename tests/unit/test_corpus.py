"""The public benchmark corpus (issue 17): size, schema additions, the stored run and its docs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import perfmodel
from perfmodel import benchmarks as bm
from perfmodel import corpus
from perfmodel.figures import figure_config, predict_figure
from perfmodel.validation_runs import read_block

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
    assert doc["fingerprint"] == corpus.fingerprint(), "rerun: python -m perfmodel.corpus"
    assert set(stored["figure_id"]) == set(bm.corpus_benchmarks()["figure_id"])


def test_shipped_set_holds_the_corpus_fits(stored):
    shipped = perfmodel.load_parameters("calibrated")
    for system, fit in stored.attrs["fits"].items():
        assert set(fit) == set(corpus.SYSTEM_FREE[system])
        for key, value in fit.items():
            assert shipped[key] == pytest.approx(value, rel=1e-12)


def test_docs_show_the_stored_run(stored):
    text = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
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


#: the issue's target: each corpus system predicts its own figures with a leave-one-source-out median
#: factor error of at most 1.35x. Systems that do not meet it yet are listed with what they lack
#: (strict: a system that starts meeting it must be taken off the list).
LOSO_TARGET = 1.35
NOT_YET: dict[str, str] = {}
# memcached came off again at 1.22x (1.3574 -> 1.2196, 2026-11-24) when a request's wait at an event-loop
# store got the spread its order of service gives it (spec wait_scv 0.30, from five closed-loop runs of
# other labs; first come, first served had left a saturated loop's p99 at its mean, below all five).
# It had gone back on the list at 1.36x (1.2654 -> 1.3574, 2026-11-24) when the EPYC 9124 got its
# all-core boost (3.6 GHz, AMD's table; the catalog had its 3.0 GHz base): sevmc held out 1.70 -> 1.52,
# but tidwall held out 1.14 -> 1.22, fitted on sevmc's rows at the faster clock (higher cycle costs,
# which its too-narrow tails reward).
# memcached came off the list at 1.27x (2026-11-24): a unix socket's message costs its share of kernel
# TCP's (catalog network message_cost_share, 0.44 from a single-threaded Redis's printed rates, another
# lab's): tidwall's memtier reaches memcached over a unix socket, sevmc's over TCP loopback, and the
# one message cost fitted to both had been a compromise too dear for tidwall and too cheap for sevmc.
# Still missing for it: sevmc's deep pipelines (a load generator on the server's vCPUs, charged a whole
# command's mirror, 0.55-0.6x under held out) and its tails (p99 three times the mean at every depth).
# MySQL came off the list at 1.33x (2026-11-23): NUMA charged only on accesses that leave the L3, and
# a statement's CPU time fixed (chain.STATEMENT_CPU_SCV). Still missing for it: dirty-page write-back
# sharing the data device with the log flushes (mysqlonarm's updates past 64 threads; Percona's TPC-C
# held out is 7x under), the memory latency SPECint does not show (cpu-generation: m5 vs m5a), and
# the plateau of 24-vCPU cloud VMs past 32 threads (mysqlonarm).
# Redis came off the list at 1.24x (2026-11-23): its commands' DRAM stalls in time, not cycles
# (chain.dram_stall), inside the threads' contention. Still missing for it: kernel-bypass networking
# (libtpa, 4.4x), the co-located load generator's tails (tidwall's p99 step), io-threads 2.


@pytest.mark.parametrize("system", sorted(corpus.SYSTEM_FREE))
def test_corpus_systems_meet_the_leave_one_source_out_target(system, stored, request):
    if system in NOT_YET:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"missing mechanisms: {NOT_YET[system]}"))
    part = stored[(stored["system"] == system) & (stored["reason"] == "")]
    assert part["loso_factor"].median() <= LOSO_TARGET


#: leave-one-source-out medians reached on 2026-11-23 (docs/validation.md): a ratchet -- lower a bound
#: when a mechanism improves a system, never raise one without recording why in docs/validation.md
LOSO_REACHED = {
    "cassandra": 10.06, "ceph": 1.47, "fio": 2.32, "memcached": 1.22, "mysql": 1.33, "opengauss": 1.16,
    "postgresql": 1.15, "redis": 1.27, "rocksdb": 5.48, "scylla": 2.25,
}  # fmt: skip
# raised 2026-11-28, no model change: Cassandra 7.65 -> 10.06 (7.6412 -> 10.0529) with a new source,
# armlp-cassandra-gcp-c4a (Arm Learning Paths, cassandra-stress on a 4-vCPU GCP VM), whose first look
# (data/validation/first-look.csv, commit 51e329d) is a median 19.8x: the model predicts 51-126 k ops/s
# where 4.3-10.7 k were printed. A source added is what the corpus is for; its miss is kept.
# raised 2026-11-28, no model change: Ceph 1.41 -> 1.47 (1.4054 -> 1.4620) and fio 2.31 -> 2.32
# (2.3037 -> 2.3155) because figures that never were out of sample stopped being scored as if they
# were (issue 37's bookkeeping, corpus.not_out_of_sample): the 21 figures of the RHCS 3.2 Part 3 post,
# whose lab (rhcs32-bluestore-lab) the shipped fit was fitted on (held out 1.12x), and the wanghenshui
# fio figure the Kioxia RC20's read IOPS were derived from (1.01x). The first-look record, not this
# ratchet, measures model progress from now on (docs/validation.md).
# lowered 2026-11-24 (third session, last): memcached 1.36 -> 1.22 (1.3574 -> 1.2196) when an event-loop
# store's waits got the spread of its order of service (spec wait_scv 0.30, the median of five other
# labs' closed-loop key-value runs; it moves no mean): sevmc held out 1.52 -> 1.19 (its p99s 0.50x ->
# 1.10x of the recorded, its means 1.41x -> 1.16x: the fit no longer raises the costs to reach its
# tails), tidwall held out 1.22 -> 1.26 (its narrow runs' p99s 0.93x -> 1.60x). Raised with it: Redis
# 1.26 -> 1.27 (1.2582 -> 1.2691): tidwall's Redis p99s held out 0.68x -> 1.92x of the recorded (its
# one-thread runs have p99 / mean 1.15-1.2, the narrow end), oeAware 1.15 -> 1.32 (throughputs only,
# moved by the refit), redis-doc 1.40 -> 1.24, libtpa 4.23 -> 6.29 (its kernel-TCP p99 0.83x -> 1.74x, its
# kernel-bypass p99s ~4x -> 8.5-8.9x over: gap kernel-bypass-network)
# raised 2026-11-24 (third session of the day, later): memcached 1.27 -> 1.36 (1.2654 -> 1.3574), Redis
# 1.23 -> 1.26 (1.2237 -> 1.2582), Cassandra 7.38 -> 7.65 (7.3712 -> 7.6412) and Ceph 1.40 -> 1.41
# (1.3894 -> 1.4054), PostgreSQL lowered 1.18 -> 1.15 (1.1644 -> 1.1478), when four CPU models got the
# all-core clocks their vendors print (EPYC 9124 3.6 GHz, EPYC 9454P 3.65, Alibaba g7's Ice Lake 3.5,
# Xeon 8260 3.1; they had run at base, or at base for one busy core): faster cores where the model
# already came out fast or its latency floor low -- sevmc's fitted costs rise and tidwall held out falls
# 1.14 -> 1.22, benchANT's g7 Cassandra latencies (gap cloud-client-latency) fall further, Clyso's Ceph
# on the 9454P 1.10 -> 1.24; libtpa's Redis on the 8260 improves 5.43 -> 4.23, Small Datum's PostgreSQL
# 2.33 -> 2.23
# lowered 2026-11-24 (third session of the day): memcached 1.44 -> 1.27 (1.4306 -> 1.2654) when a unix
# socket's message came to cost 0.44 of a kernel TCP one (catalog network unix-socket,
# message_cost_share; tidwall's and redis-doc's unix-socket rows): tidwall held out 1.29 -> 1.15, sevmc
# held out 1.71 -> 1.70 (its pipeline-1 throughput 1.54x -> 1.06x; tidwall's 0.48-0.69x -> 0.70-1.49x),
# dormando 1.28 -> 1.65 (one row: its TCP message is now fitted dearer from tidwall's). Raised with it:
# Redis 1.20 -> 1.23 (1.1978 -> 1.2237): tidwall's Redis 8.2 held out 1.13 -> 1.21, its one- and
# two-thread pipeline-1 runs now 1.4-1.8x over (Redis's message on a unix socket costs as much as on the
# TCP labs'), oeAware 1.30 -> 1.19,
# redis-doc 1.34 -> 1.35 (its own pair: 1.87x predicted for the unix socket over TCP, 1.39x printed)
# raised the same day: ScyllaDB 2.24 -> 2.25 (2.2380 -> 2.2426; its LOSO p90 39.5x -> 6.98x, 58% ->
# 66% of its figures in their 90% band) when its own I/O scheduler came to hold flushes back (spec
# io_latency_goal_ms: a read meeting a flush waits Seastar's 0.75 ms goal, not its share of a
# 0.3-0.6 s backlog) and its QUORUM reads to wait for a digest from another zone (read_consistency):
# benchANT's read p99s, 14.6x over, came down to the others' level, and the read means, which the
# backlog had put 1.33x over, to 0.45x -- the YCSB client's floor (gap cloud-client-latency) that the
# backlog had stood in for now shows in every latency alike
# lowered 2026-11-24 (later): ScyllaDB 11.05 -> 2.24 (11.0463 -> 2.2380) when a cluster over
# availability zones crossed them (knob zones; placement.cross_zone_*): benchANT's ScyllaDB Cloud nodes
# sat on racks in three us-west-2 zones (two of us-west-1's), one replica per zone, the YCSB VMs in one
# zone -- every QUORUM request waits for another zone, two in three reach a coordinator in another,
# each crossing AWS's 0.73 ms (1.16 ms) round trip between zones, measured by another lab
# lowered 2026-11-24: Cassandra 9.24 -> 7.38 (9.2325 -> 7.3712) and ScyllaDB 13.04 -> 11.05 (13.0394 ->
# 11.0463) when only the reads on a flush's hardware queue came to wait for its backlog and its load
# (storage.flush_queue_share: 1 / min(queues, CPUs) of them on multi-queue NVMe): benchant's i4g
# Cassandra read means went from 2.6-2.9x over to 1.0-1.4x, its read p99s from 34-65x over (a 0.33 s
# flush backlog) to 11-14x under at 100-200 threads (gap cloud-client-latency: the client, the
# network, the JVM) and 13-14x over at 250-400 (more than 1% of the reads still on a flush's queue).
# Raised with it: RocksDB 5.47 -> 5.48 (5.4698 -> 5.4705), its figures zero-shot, moved by the seeds'
# refit (seed 001's RocksDB on NVMe: its flushes' reads now pass the backlog)
# raised: postgresql 1.80 -> 1.81 (1.7995 -> 1.8022) when an operation's CPU time got the SCV of its
# statements (MySQL 1.92 -> 1.69); PostgreSQL's TPC-C p95s had leaned on the exponential spread.
# Cassandra 4.58 -> 5.78 and RocksDB 5.78 -> 5.84 when a closed loop's wait got its finite-population
# variance (exact against M/M/c//N and the simulator; Redis 1.80 -> 1.60, memcached 2.04 -> 1.79,
# ScyllaDB 12.31 -> 11.82): the cloud YCSB p99s the gap cloud-client-latency already under-predicts
# 10-100x came out lower still where a station saturates. PostgreSQL 1.80 -> 1.90 when its reads went
# through the OS page cache (in-sample 1.20x -> 1.08x): Percona's pgbench at scale 7000 stopped being
# predicted device-bound, and the held-out lab's CPU-bound runs are over-predicted 1.9x by CPU costs
# fitted to Small Datum's prepared statements (pgbench ran in simple query mode) -- then 1.90 -> 1.27
# once the query protocol was modelled (cpu_cycles_parse per statement sent as SQL text) (docs/validation.md)
# PostgreSQL 1.27 -> 1.29 (1.2716 -> 1.2848; zero-shot 1.20 -> 1.16, MySQL 1.60 -> 1.53) when pgbench's
# TPC-B and sysbench's oltp_read_write became the transactions they are (read_statements_per_op): a
# blank read_fraction had made half of the pgbench transactions read-only, commit-free.
# Cassandra 5.78 -> 6.03 (5.7719 -> 6.0292; MySQL 1.53 -> 1.43, PostgreSQL 1.28 -> 1.18, seeds'
# leave-one-group-out 1.2253 -> 1.2037) when a core's clock came to depend on its busy cores (turbo
# with one, the all-core clock with all): the cloud YCSB latencies the gap cloud-client-latency
# under-predicts came out lower still on the Azure Dv4 VMs (all-core turbo 3.4 GHz, base 2.6);
# RocksDB 5.84 -> 5.85 (5.8429), moved by the seeds' refit (its figures are zero-shot).
# Cassandra 6.03 -> 6.51 (6.5002) and ScyllaDB 11.82 -> 12.11 (12.1027) when the small AWS M5 VMs
# got the same documented 3.1 GHz all-core clock as m5.4xlarge (they had 2.5 GHz, "not stated"):
# benchant's YCSB latencies on them, under-predicted by the gap cloud-client-latency, fell further.
# memcached 1.77 -> 1.84 (1.7605 -> 1.8391; in-sample 1.43 -> 1.30) when its SETs got their process-wide
# locks (serial: write_lock, replacing usl_sigma): fitted without tidwall, the message cost comes from
# sevmc's pipeline-1/8 runs alone, a load generator on the server's vCPUs in an SEV-SNP guest (gap
# colocated-guest-messages, ~43 us per message against tidwall's ~2 us), so tidwall comes out slow.
# Cassandra 6.51 -> 9.24 (9.2325), ScyllaDB 12.11 -> 13.04 (13.0394) and Redis 1.60 -> 1.67 (1.6696)
# when a statement's CPU time became fixed (chain.STATEMENT_CPU_SCV 0, was exponential) and the solver
# came to use a station's service SCV in its waits (MVA residual correction, Pollaczek-Khinchine for
# open arrivals, the finite-population wait variance of c^2 services; MySQL 1.43 -> 1.33, Ceph 1.44 ->
# 1.39, RocksDB 5.85 -> 5.47, every corpus figure 1.63x -> 1.53x, latencies 1.95x -> 1.80x):
# benchant's cloud YCSB p95/p99, already 10-17x under (gap cloud-client-latency: the client, the
# cloud network, the JVM's pauses), lost the exponential spread that had partly stood in for what
# is missing; tidwall's Redis p99s, whose step to twice the mean for the slowest 1-2% no queue makes
# (gap colocated-load-generator), lost the same at 256 connections, where a fixed service time's
# saturated wait is narrow (as the simulator's).
# memcached 1.84 -> 1.88 (1.8390 -> 1.8745; zero-shot 1.95 -> 1.77, Redis 1.67 -> 1.24) when an in-memory
# store's commands came to wait for DRAM in time, not cycles (chain.dram_stall: 2 dependent misses per
# memcached command, 90 ns each, counted from the code, slowed by the threads' contention): fitted
# without tidwall, the message cost still comes from sevmc's SEV-SNP guest (gap
# colocated-guest-messages), and the stall, which a Graviton4 core does not shorten, takes tidwall's
# held-out throughputs further below the recorded ones.
# memcached lowered 1.88 -> 1.54 (1.8745 -> 1.5358) when a load generator on the server's cores came to
# take its work from them (chain.client_cycles; sevmc's memtier shares memcached's 30 vCPUs).
# memcached lowered 1.54 -> 1.44 (1.5358 -> 1.4306) when a guest's request messages came to cost their
# VM exits (catalog vm_exit_us x vm_exits_per_message, from CVM_eval and cvm-net-perf; only sevmc's
# SEV-SNP guest has them): the fit no longer reads sevmc's exits as message cost and carries them to
# tidwall (1.44 -> 1.29 held out) and dormando (1.33 -> 1.29). The first version read 1.4222: a
# review found its demand charged the exits unslowed by the threads' contention while the serial
# shares counted them at the clock before it, so more exit time could raise Redis's throughput.
# Redis 1.25 -> 1.20 (1.2400 -> 1.1978) when its threads followed Redis 8's threaded I/O (the main
# thread runs only the commands, the I/O threads every socket and a handoff at its prior;
# iothread.c): tidwall held out 1.21 -> 1.13, Redis's documentation 1.28 -> 1.34.


def test_corpus_leave_one_source_out_does_not_regress(stored):
    out = corpus.summary(stored, ["system"]).set_index("system")["leave-one-source-out median"]
    assert set(out.index) == set(LOSO_REACHED)
    worse = {s: round(float(out[s]), 3) for s, bound in LOSO_REACHED.items() if out[s] > bound}
    assert not worse, f"leave-one-source-out got worse than reached: {worse}"
