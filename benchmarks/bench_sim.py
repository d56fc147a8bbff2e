"""Speed and memory of the discrete-event simulator (issue 5), as ratios in one run.

Run from the repository root::

    python -m benchmarks bench_sim              # speed and memory (~1 min)
    python -m benchmarks.bench_sim --errors     # also the analytic-vs-simulated table (minutes)

Figures:
1. Baseline: a plain SimPy M/M/8 at utilisation 0.8 (one process per request,
   a ``simpy.Resource`` with 8 servers), written below.
2. The simulator's SimPy engine on the same M/M/8, same requests: target no
   slower than the baseline.
3. The fast path (compiled Kiefer-Wolfowitz recursion) on the same M/M/8 with
   per-request response times kept: target >= 2 million requests/s.
4. The full node model (ScyllaDB, 3 nodes, RF 3 at QUORUM, flush bursts) on
   the SimPy engine: target >= 100,000 requests/s on one core.
5. 10 million requests on the fast path, records as numpy columns and the
   tidy DataFrame: peak resident memory (a fresh process), target < 2 GiB.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import numpy as np
import simpy

from perfmodel.sim import SimConfig, config_from_model, replication_rng, run_fast, run_simpy

SERVERS, UTIL, SERVICE = 8, 0.8, 1.0
RATE = UTIL * SERVERS / SERVICE


def plain_simpy_mmc(requests: int, seed: int = 0) -> np.ndarray:
    """The baseline: textbook SimPy M/M/c (a process per request, a Resource), response times [s]."""
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1 / RATE, requests)
    services = rng.exponential(SERVICE, requests)
    env = simpy.Environment()
    server = simpy.Resource(env, capacity=SERVERS)
    response = np.empty(requests)

    def customer(i):
        arrive = env.now
        with server.request() as req:
            yield req
            yield env.timeout(services[i])
        response[i] = env.now - arrive

    def source():
        for i in range(requests):
            yield env.timeout(gaps[i])
            env.process(customer(i))

    env.process(source())
    env.run()
    return response


def mmc_config() -> SimConfig:
    return SimConfig(
        d_read=(SERVICE,),
        d_write=(0.0,),
        servers=(float(SERVERS),),
        mult=(1,),
        scv=(1.0,),
        read_fraction=1.0,
        arrival_rate=RATE,
        stations=("cpu",),
        device_station=0,
    )


def node_config():
    from perfmodel.inputs.workload import Workload
    from perfmodel.model.predict import build_model

    w = Workload(
        read_fraction=0.8,
        object_bytes=1024,
        dataset_bytes=500 * 2**30,
        clients=100,
        threads_per_client=8,
        replication_factor=3,
        consistency="QUORUM",
    )
    return config_from_model(build_model("power8-s821lc-10c", w, nodes=3, system="scylla"))


def rate(fn, requests, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(requests)
        best = min(best, time.perf_counter() - t0)
    return requests / best


def memory_child(requests: int) -> None:
    """Run in a fresh process: 10M requests on the fast path, records frame built; print peak RSS."""
    from perfmodel.sim import records_frame

    cfg = mmc_config()
    t0 = time.perf_counter()
    rec = run_fast(cfg, requests, requests // 10, replication_rng(0, 0))
    frame = records_frame(rec, cfg)
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"{len(frame)} {dt:.3f} {rss:.3f}")


def error_table(requests: int = 1_000_000, replications: int = 3) -> None:
    """Analytic (predict) versus simulated (CI) for seed-like configurations; prints a Markdown table."""
    import perfmodel
    from perfmodel.inputs.workload import Workload

    mixed = dict(object_bytes=1024, dataset_bytes=500 * 2**30, replication_factor=3, consistency="QUORUM")
    cases = [
        (
            "fio 4K reads, closed 40 (pooled, RF 1)",
            "power8-s821lc-10c",
            1,
            "fio",
            Workload(operation="read", read_fraction=1.0, object_bytes=4096, dataset_bytes=100e9, clients=40),
        ),
        (
            "fio 4K reads, open 300k/s (pooled, RF 1)",
            "power8-s821lc-10c",
            1,
            "fio",
            Workload(
                operation="read", read_fraction=1.0, object_bytes=4096, dataset_bytes=100e9, arrival_rate=3e5
            ),
        ),
        (
            "scylla cached reads, closed 800 (hashed shards, RF 1)",
            "power8-s821lc-10c",
            1,
            "scylla",
            Workload(operation="read", read_fraction=1.0, object_bytes=1024, dataset_bytes=1e9, clients=800),
        ),
        (
            "ceph 80/20, closed 800 (hashed PGs, RF 3 ALL)",
            "x86-ceph-osd-c220m5",
            3,
            "ceph",
            Workload(read_fraction=0.8, clients=100, threads_per_client=8, **{**mixed, "consistency": "ALL"}),
        ),
        (
            "cassandra 80/20, closed 800 (RF 3 QUORUM, flushes)",
            "x86-micron-cassandra-testbed",
            3,
            "cassandra",
            Workload(read_fraction=0.8, clients=100, threads_per_client=8, **mixed),
        ),
        (
            "scylla 80/20, closed 800 (RF 3 QUORUM, flushes)",
            "power8-s821lc-10c",
            3,
            "scylla",
            Workload(read_fraction=0.8, clients=100, threads_per_client=8, **mixed),
        ),
        (
            "rocksdb 50/50, closed 64 (flushes)",
            "x86-epyc-7351p",
            1,
            "rocksdb",
            Workload(read_fraction=0.5, object_bytes=4096, dataset_bytes=100e9, clients=64),
        ),
    ]
    cols = (
        "throughput_ops_s",
        "latency_mean_ms",
        "latency_p50_ms",
        "latency_p99_ms",
        "read_latency_p99_ms",
        "write_latency_p99_ms",
    )
    print("| configuration | metric | predict | simulated (95% CI) | analytic error |")
    print("|---|---|---|---|---|")
    for label, plat, nodes, system, w in cases:
        pred = perfmodel.predict(plat, w, nodes=nodes, system=system).iloc[0]
        sim = perfmodel.simulate(
            plat,
            w,
            nodes=nodes,
            system=system,
            requests=requests,
            replications=replications,
            keep_records=False,
            progress=False,
        ).summary.iloc[0]
        for c in cols:
            if not np.isfinite(sim[c]):
                continue
            err = (pred[c] - sim[c]) / sim[c]
            print(
                f"| {label} | {c} | {pred[c]:.4g} | {sim[c]:.4g} [{sim[c + '_ci_low']:.4g}, "
                f"{sim[c + '_ci_high']:.4g}] | {err:+.1%} |",
                flush=True,
            )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="bench_sim")
    parser.add_argument("--errors", action="store_true", help="also print the analytic-vs-simulated table")
    parser.add_argument("--memory-child", type=int, default=0, help=argparse.SUPPRESS)
    # `python -m benchmarks bench_sim` leaves "bench_sim" in sys.argv: ignore what is not ours
    args, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if args.memory_child:
        memory_child(args.memory_child)
        return
    n = 200_000
    cfg = mmc_config()
    run_fast(cfg, 1_000, 100, replication_rng(0, 0))  # compile / load the numba cache
    base = rate(lambda r: plain_simpy_mmc(r), n, repeat=2)
    ours = rate(lambda r: run_simpy(cfg, r, r // 10, replication_rng(0, 0)), n, repeat=2)
    print(f"baseline: plain SimPy M/M/8 at utilisation 0.8: {base:,.0f} requests/s")
    print(
        f"SimPy engine, same M/M/8: {ours:,.0f} requests/s -> {ours / base:.2f}x baseline "
        f"(target >= 1x: {'PASS' if ours >= base else 'FAIL'})"
    )
    big = 2_000_000
    fast = rate(lambda r: run_fast(cfg, r, r // 10, replication_rng(0, 0)), big)
    print(
        f"fast path, same M/M/8, {big:,} requests, response times kept: {fast / 1e6:.2f} M requests/s "
        f"-> {fast / base:.0f}x baseline (target >= 2 M/s: {'PASS' if fast >= 2e6 else 'FAIL'})"
    )
    node = node_config()
    full = rate(lambda r: run_simpy(node, r, r // 10, replication_rng(0, 0)), n, repeat=2)
    print(
        f"node model (scylla, 3 nodes, RF 3 QUORUM, flush bursts), SimPy engine: {full:,.0f} requests/s "
        f"-> {full / base:.2f}x baseline (target >= 100k/s: {'PASS' if full >= 1e5 else 'FAIL'})"
    )
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_sim", "--memory-child", "10000000"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    rows, secs, gib = int(out[0]), float(out[1]), float(out[2])
    print(
        f"fast path, {rows:,} requests with the records DataFrame: {secs:.2f} s, peak memory {gib:.2f} GiB "
        f"(target < 2 GiB: {'PASS' if gib < 2 else 'FAIL'})"
    )
    if args.errors:
        error_table()


if __name__ == "__main__":
    main()
