"""The simulators against closed forms, with confidence intervals from seeded replications.

Every check asks whether the exact value lies in the simulator's own Student t
interval over independent replications (Law 2015, sec. 9.4). A test that makes
m such checks uses level 1 - 0.05 / m for each (Bonferroni), so that each test
as a whole holds at 95 %: a chance miss then has probability <= 5 % per test.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from perfmodel.mechanisms import bursts
from perfmodel.queueing import (
    closed_network,
    mm1_response_time,
    mm1_response_time_quantile,
    mmc_response_time,
    mmc_response_time_quantile,
)
from perfmodel.sim import SimConfig, config_from_network, lindley, simulate_config
from perfmodel.solve.network import STATIONS, StationNetwork

REPS = 10


def level(checks: int) -> float:
    """Per-check confidence level for a 95 % family-wise level over ``checks`` checks."""
    return 1 - 0.05 / checks


def one_station(arrival_rate, service_time, servers=1, **kw):
    return SimConfig(
        d_read=(service_time,),
        d_write=(0.0,),
        servers=(float(servers),),
        mult=(1,),
        scv=(1.0,),
        read_fraction=1.0,
        arrival_rate=arrival_rate,
        stations=("cpu",),
        device_station=0,
        **kw,
    )


def assert_in_ci(row, name, exact):
    lo, hi = row[f"{name}_ci_low"], row[f"{name}_ci_high"]
    assert lo <= exact <= hi, f"{name}: exact {exact:.6g} outside the 95% CI [{lo:.6g}, {hi:.6g}]"


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_mm1_mean_and_percentiles_in_ci(engine):
    lam, mu = 0.7, 1.0
    res = simulate_config(
        one_station(lam, 1 / mu),
        requests=20_000,
        warmup=2_000,
        replications=REPS,
        seed=11,
        engine=engine,
        level=level(4),
    )
    row = res.summary.iloc[0]
    assert_in_ci(row, "latency_mean_ms", mm1_response_time(lam, mu) * 1e3)
    for q, name in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99")):
        assert_in_ci(row, f"latency_{name}_ms", mm1_response_time_quantile(q, lam, mu) * 1e3)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_mmc_mean_and_percentiles_in_ci(engine):
    lam, mu, c = 6.4, 1.0, 8  # utilisation 0.8
    res = simulate_config(
        one_station(lam, 1 / mu, c),
        requests=20_000,
        warmup=2_000,
        replications=REPS,
        seed=5,
        engine=engine,
        level=level(4),
    )
    row = res.summary.iloc[0]
    assert_in_ci(row, "latency_mean_ms", mmc_response_time(lam, mu, c) * 1e3)
    for q, name in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99")):
        assert_in_ci(row, f"latency_{name}_ms", float(mmc_response_time_quantile(q, lam, mu, c)) * 1e3)
    assert row.util_cpu == pytest.approx(0.8, rel=0.02)


def tandem(arrival_rate):
    """Open tandem: 4 hashed shards, a 3-server device (gamma, SCV 0.5), a fixed delay; reads and writes."""
    k = len(STATIONS)
    d_read, d_write, servers, mult, scv = (np.zeros(k) for _ in range(5))
    servers[:], mult[:], scv[:] = 1.0, 1, 1.0
    cpu, dev, fixed = STATIONS.index("cpu"), STATIONS.index("device"), STATIONS.index("fixed")
    d_read[[cpu, dev, fixed]] = 1.0, 2.0, 0.5
    d_write[[cpu, dev, fixed]] = 0.5, 4.0, 0.5
    servers[dev], servers[fixed], mult[cpu], scv[dev], scv[fixed] = 3, np.inf, 4, 0.5, 0.0
    net = StationNetwork(
        d_read[None],
        d_write[None],
        servers[None],
        mult[None],
        scv[None],
        np.array([0.7]),
        np.array([1.0]),
        np.array([1.0]),
    )
    visit = [1.0] * k
    visit[dev] = 0.5  # half the reads reach the device (cache misses), needing 2 x d_read there
    return dataclasses.replace(config_from_network(net, arrival_rate=arrival_rate), read_visit=tuple(visit))


def welch_interval(a, b, level):
    """CI of mean(a) - mean(b) from independent replications (Welch)."""
    a, b = np.asarray(a), np.asarray(b)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    dof = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = stats.t.ppf(0.5 + level / 2, dof) * np.sqrt(va + vb)
    diff = a.mean() - b.mean()
    return diff - half, diff + half


def test_fast_path_and_simpy_path_give_the_same_distribution():
    cfg = tandem(0.45)  # device utilisation 0.45 * (0.7 * 2 + 0.3 * 4) / 3 = 0.39, shards 0.09
    assert cfg.offered_utilization()[STATIONS.index("device")] == pytest.approx(0.45 * 2.6 / 3)
    kw = dict(requests=20_000, warmup=2_000, replications=REPS)
    fast = simulate_config(cfg, engine="fast", seed=1, **kw).replication_metrics
    slow = simulate_config(cfg, engine="simpy", seed=2, **kw).replication_metrics
    for name in (
        "latency_mean_ms",
        "latency_p50_ms",
        "latency_p95_ms",
        "latency_p99_ms",
        "read_latency_mean_ms",
        "write_latency_p95_ms",
        "util_device",
    ):
        lo, hi = welch_interval(fast[name], slow[name], level(7))
        assert lo <= 0 <= hi, f"{name}: fast - simpy in [{lo:.4g}, {hi:.4g}]"


def test_auto_engine_picks_the_fast_path_for_an_open_tandem_only():
    cfg = tandem(0.3)
    assert simulate_config(cfg, requests=500, replications=1).runs[0][3].engine == "fast"
    closed = config_from_network(_tandem_net(), population=4)
    assert simulate_config(closed, requests=500, replications=1).runs[0][3].engine == "simpy"
    with pytest.raises(ValueError, match="fast path"):
        simulate_config(closed, requests=500, replications=1, engine="fast")


def _tandem_net():
    cfg = tandem(1.0)
    arr = lambda v: np.array([v], dtype=float)  # noqa: E731
    return StationNetwork(
        arr(cfg.d_read),
        arr(cfg.d_write),
        arr(cfg.servers),
        arr(cfg.mult),
        arr(cfg.scv),
        np.array([cfg.read_fraction]),
        np.array([1.0]),
        np.array([1.0]),
    )


def test_lindley_recursion_by_hand():
    # arrivals 0, 1, 2 with services 2, 2, 0.5: waits 0, 1, 2
    assert np.allclose(lindley([0.0, 1.0, 2.0], [2.0, 2.0, 0.5]), [0.0, 1.0, 2.0])


def test_closed_product_form_network_against_exact_mva():
    """Exponential FCFS stations (one 4-server), a fixed delay and think time: X and R in CI of exact MVA."""
    k = len(STATIONS)
    d = np.zeros(k)
    cpu, dev, fixed = STATIONS.index("cpu"), STATIONS.index("device"), STATIONS.index("fixed")
    d[[cpu, dev, fixed]] = 4e-3, 1.5e-3, 1e-3
    servers = np.ones(k)
    servers[cpu], servers[fixed] = 4, np.inf
    scv = np.ones(k)
    scv[fixed] = 0.0
    net = StationNetwork(
        d[None],
        np.zeros((1, k)),
        servers[None],
        np.ones((1, k)),
        scv[None],
        np.array([1.0]),
        np.array([1.0]),
        np.array([1.0]),
    )
    population, think = 12, 2e-3
    cfg = config_from_network(net, population=population, think_time=think)
    row = simulate_config(
        cfg, requests=20_000, warmup=2_000, replications=REPS, seed=3, level=level(2)
    ).summary.iloc[0]
    used = d > 0
    exact = closed_network(d[used], servers[used], think, population)
    assert_in_ci(row, "throughput_ops_s", float(exact.throughput[-1]))
    assert_in_ci(row, "latency_mean_ms", float(exact.response_time[-1]) * 1e3)


def test_write_completes_at_the_kth_replica():
    """Exponential delay-only replicas: a write takes the 2nd of 3 order statistics, mean d (1/3 + 1/2)."""
    k = len(STATIONS)
    fixed = STATIONS.index("fixed")
    d = np.zeros(k)
    d[fixed] = 1.0
    servers = np.ones(k)
    servers[fixed] = np.inf
    net = StationNetwork(
        np.zeros((1, k)),
        d[None],
        servers[None],
        np.ones((1, k)),
        np.ones((1, k)),
        np.array([0.0]),
        np.array([3.0]),
        np.array([2.0]),
    )
    cfg = config_from_network(net, arrival_rate=1.0, nodes=3)
    row = simulate_config(
        cfg, requests=5_000, warmup=0, replications=REPS, seed=9, level=level(2)
    ).summary.iloc[0]
    assert_in_ci(row, "write_latency_mean_ms", (1 / 3 + 1 / 2) * 1e3)
    # median of the 2nd of 3 Exp(1): P(T <= t) = 3 p^2 - 2 p^3 = 1/2 with p = 1 - e^-t -> p = 1/2
    assert_in_ci(row, "write_latency_p50_ms", np.log(2) * 1e3)


def test_flushes_load_the_device_as_the_analytic_background_demand():
    """An open LSM-like config: the device's busy time includes the flush I/Os (offered utilisation)."""
    k = len(STATIONS)
    cpu, dev = STATIONS.index("cpu"), STATIONS.index("device")
    d_r, d_w = np.zeros(k), np.zeros(k)
    d_r[[cpu, dev]] = 1e-4, 2e-4
    d_w[cpu] = 1e-4
    servers = np.ones(k)
    servers[dev] = 4
    mult = np.ones(k, dtype=int)
    mult[[cpu, dev]] = 2  # two nodes: one shard and one device each
    base = config_from_network(
        StationNetwork(
            d_r[None],
            d_w[None],
            servers[None],
            mult[None],
            np.ones((1, k)),
            np.array([0.5]),
            np.array([2.0]),
            np.array([1.0]),
        ),
        arrival_rate=3000.0,
        nodes=2,
    )
    cfg = SimConfig(
        **{**base.__dict__, "flush_bytes_per_write": 64 * 1024.0, "flush_ios": 64, "flush_io_time": 1e-3}
    )
    offered = cfg.offered_utilization()[dev]
    bg_share = 3000 * 0.5 * 2 * (64 * 1024 / bursts.FLUSH_IO_BYTES) * 1e-3 / (4 * 2)
    assert offered == pytest.approx(3000 * 0.5 * 2e-4 / 8 + bg_share)
    res = simulate_config(cfg, requests=20_000, warmup=2_000, replications=REPS, seed=4)
    util = res.replication_metrics["util_device"]
    mean, half = util.mean(), stats.t.ppf(0.975, REPS - 1) * util.std(ddof=1) / np.sqrt(REPS)
    assert abs(mean - offered) <= half
    assert res.summary.burst_duty.iloc[0] > 0
    # reads meet bursts: their tail is far above the no-flush configuration's
    quiet = simulate_config(base, requests=20_000, warmup=2_000, replications=3, seed=4).summary.iloc[0]
    assert res.summary.read_latency_p99_ms.iloc[0] > 2 * quiet.read_latency_p99_ms


def _flushing_config(size_scv: float) -> SimConfig:
    """One node, one device: reads of 10 us behind flushes of 20 x 1 ms I/Os (B = 20 ms);
    writes fill the memtable (CPU only) so that the device is in bursts 20% of the time."""
    rate, f, ios, io_time = 500.0, 0.5, 20, 1e-3
    duty = 0.2
    per_write = duty / (ios * io_time) * ios * bursts.FLUSH_IO_BYTES / (rate * (1 - f))
    return SimConfig(
        d_read=(0.0, 1e-5),
        d_write=(1e-5, 0.0),
        servers=(1.0, 1.0),
        mult=(1, 1),
        scv=(0.0, 0.0),
        read_fraction=f,
        arrival_rate=rate,
        stations=("cpu", "device"),
        device_station=1,
        flush_bytes_per_write=per_write,
        flush_ios=ios,
        flush_io_time=io_time,
        flush_size_scv=size_scv,
    )


def test_flush_sizes_are_drawn_with_their_mean_and_scv():
    from perfmodel.sim.engine import Engine

    for scv in (0.0, 0.25, 1.0):
        eng = Engine(_flushing_config(scv), 10, 0, np.random.default_rng(3))
        sizes = np.array([eng._flush_size() for _ in range(40_000)], dtype=float)
        assert sizes.mean() == pytest.approx(20.0, rel=0.01)
        assert sizes.var() / sizes.mean() ** 2 == pytest.approx(scv, abs=0.03 + 0.05 * scv)


def test_reads_behind_flushes_of_varying_size_wait_the_length_biased_backlog():
    """Open arrivals see time averages: a read meets a flush with probability duty (not
    changed by the sizes) and then waits U x B*, B* the length-biased size: Gamma(k + 1) for
    Gamma(k) sizes, so the mean wait is duty E[B] (1 + scv) / 2 (twice the one-size wait at
    scv = 1) and P(W > t) = duty P(U B* > t) -- the p95 is its quantile (Monte Carlo of
    that formula, independent of the simulator)."""
    rng = np.random.default_rng(11)
    duty, backlog = 0.2, 20e-3
    checks = 4
    for scv in (0.0, 1.0):
        row = simulate_config(
            _flushing_config(scv),
            requests=60_000,
            warmup=3_000,
            replications=REPS,
            seed=5,
            level=level(checks),
        ).summary.iloc[0]
        body = 1e-5  # a read's own service at the device (its CPU demand is 0)
        wait = duty * backlog * (1 + scv) / 2
        assert_in_ci(row, "read_latency_mean_ms", (body + wait) * 1e3)
        k = np.inf if scv == 0 else 1 / scv
        b_star = np.full(400_000, backlog) if scv == 0 else rng.gamma(k + 1, backlog / k, 400_000)
        w = np.where(rng.random(b_star.size) < duty, rng.random(b_star.size) * b_star, 0.0)
        assert_in_ci(row, "read_latency_p95_ms", (np.quantile(w, 0.95) + body) * 1e3)


def test_write_destage_holds_the_server_but_not_the_write():
    """A write's visit is its ack; its destage holds the same server right after it. Open
    arrivals at one FCFS server are then an M/D/1 of service S = ack + destage in which the write
    leaves after its ack: its latency is the Pollaczek-Khinchine wait rho S / (2 (1 - rho)) plus
    the ack, and the server is busy rho = rate x S (Kleinrock 1975, eq. 5.105)."""
    ack, destage, rate = 20e-6, 180e-6, 3000.0
    cfg = SimConfig(
        d_read=(0.0,), d_write=(ack,), servers=(1.0,), mult=(1,), scv=(0.0,), read_fraction=0.0,
        arrival_rate=rate, stations=("device",), device_station=0, destage=(destage,),
    )  # fmt: skip
    assert not cfg.fast_path_applies
    assert cfg.offered_utilization()[0] == pytest.approx(rate * (ack + destage))
    res = simulate_config(cfg, requests=60_000, warmup=3_000, replications=REPS, seed=7, level=level(2))
    s, rho = ack + destage, rate * (ack + destage)
    row = res.summary.iloc[0]
    assert_in_ci(row, "write_latency_mean_ms", (rho * s / (2 * (1 - rho)) + ack) * 1e3)
    util = res.replication_metrics["util_device"]
    half = stats.t.ppf(1 - 0.05 / 4, REPS - 1) * util.std(ddof=1) / np.sqrt(REPS)
    assert abs(util.mean() - rho) <= half


def test_write_background_occupies_the_station_but_no_one_waits_for_it():
    """A write passes a fixed delay D and leaves an exponential job of mean b at a device it
    never visits (a checkpoint's page writes). Departures of Poisson arrivals from a fixed delay
    are Poisson, so the device is an M/G/1 fed by reads (exponential, mean s) and background jobs:
    a read waits the Pollaczek-Khinchine lambda E[S^2] / (2 (1 - rho)), a write only D, and the
    device is busy rho = rate (f s + (1 - f) b) (Kleinrock 1975, eq. 5.105)."""
    s, b, delay, rate, f = 200e-6, 400e-6, 1e-3, 2500.0, 0.6
    cfg = SimConfig(
        d_read=(0.0, s), d_write=(delay, 0.0), servers=(np.inf, 1.0), mult=(1, 1), scv=(0.0, 1.0),
        read_fraction=f, arrival_rate=rate, stations=("network", "device"), device_station=1,
        background=(0.0, b),
    )  # fmt: skip
    assert not cfg.fast_path_applies  # the background jobs need the event engine
    rho = rate * (f * s + (1 - f) * b)
    assert cfg.offered_utilization()[1] == pytest.approx(rho)
    res = simulate_config(cfg, requests=60_000, warmup=3_000, replications=REPS, seed=17, level=level(3))
    row = res.summary.iloc[0]
    wait = rate * (f * 2 * s**2 + (1 - f) * 2 * b**2) / (2 * (1 - rho))
    assert_in_ci(row, "read_latency_mean_ms", (wait + s) * 1e3)
    assert row["write_latency_mean_ms"] == pytest.approx(delay * 1e3)  # nobody waits for it
    util = res.replication_metrics["util_device"]
    half = stats.t.ppf(1 - 0.05 / 6, REPS - 1) * util.std(ddof=1) / np.sqrt(REPS)
    assert abs(util.mean() - rho) <= half


def test_background_needs_a_queueing_station_and_one_value_per_station():
    base = dict(d_read=(0.0, 1e-4), d_write=(1e-3, 0.0), servers=(np.inf, 1.0), mult=(1, 1),
                scv=(0.0, 1.0), read_fraction=0.5, arrival_rate=10.0, stations=("network", "device"),
                device_station=1)  # fmt: skip
    with pytest.raises(ValueError, match="background: needs one"):
        SimConfig(**base, background=(1e-4,))
    with pytest.raises(ValueError, match="background: needs one"):
        SimConfig(**base, background=(0.0, float("nan")))
    with pytest.raises(ValueError, match="background: a delay station"):
        SimConfig(**base, background=(1e-4, 0.0))
    assert SimConfig(**base, background=(0.0, 0.0)).fast_path_applies
