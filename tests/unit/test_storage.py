"""Storage devices: queue-depth curves, SATA vs NVMe paths, flush bursts."""

from __future__ import annotations

import numpy as np
import pytest

import perfmodel
from perfmodel.inputs._data import data_dir
from perfmodel.mechanisms import bursts, storage


def test_littles_law_parallelism():
    assert storage.device_parallelism(450_000, 80e-6) == pytest.approx(36.0)
    assert storage.device_parallelism(1000, 1e-4) == 1.0  # never below one unit


def test_occupancy_reproduces_spec_iops_and_bandwidth():
    p, iops, bw = 36.0, 450_000.0, 2.8e9
    s4k = storage.io_occupancy(4096, p, iops, bw)
    assert p / s4k == pytest.approx(iops, rel=1e-12)
    s_big = storage.io_occupancy(64 * 2**20, p, iops, bw)
    assert p / s_big * 64 * 2**20 == pytest.approx(bw, rel=2e-3)  # large I/Os: bandwidth bound
    # monotone in size
    sizes = np.array([512, 4096, 8192, 65536, 524288])
    assert np.all(np.diff(storage.io_occupancy(sizes, p, iops, bw)) > 0)


def test_queue_depth_curve_rises_then_saturates():
    p, s = 32.0, 100e-6
    qd = np.array([1, 2, 4, 8, 16, 32, 64, 256])
    x = storage.device_throughput(qd, p, s)
    assert x[0] == pytest.approx(1 / s)  # QD1: one I/O at a time
    assert np.all(np.diff(x) >= 0)
    assert x[-1] == pytest.approx(p / s)  # saturated at P / s


def test_sata_single_queue_caps_parallelism_nvme_does_not():
    sata = perfmodel.load_device("sata-ssd-800gb")
    nvme = perfmodel.load_device("pblaze5-700-4tb")
    assert storage.effective_parallelism(100, sata.hardware_queues, sata.queue_depth_limit) == 32
    assert storage.effective_parallelism(100, nvme.hardware_queues, nvme.queue_depth_limit) == 100
    # the single-queue submission path serialises: capacity 1/cost, NVMe scales with queues
    assert storage.host_path_capacity(5e-6, 1, 16) == pytest.approx(200_000)
    assert storage.host_path_capacity(5e-6, 32, 16) == pytest.approx(16 * 200_000)


def test_mixed_occupancy_is_the_harmonic_iops_mix():
    p, r_iops, w_iops = 10.0, 100_000.0, 25_000.0
    s = storage.mixed_occupancy(0.8, p / r_iops, p / w_iops)
    assert p / s == pytest.approx(1 / (0.8 / r_iops + 0.2 / w_iops))


def test_burst_profile_seed003_orders_of_magnitude():
    """Seed 003: 136 MB/s mean writes drained in bursts at up to 5.6 GB/s with QD up to 800.
    The duty cycle is a few percent (so p99 reads see bursts, p95 barely), and a full
    800 x 512 KiB backlog takes ~75 ms to drain -- the 40-50 ms read peaks sit inside that."""
    duty, delay, backlog = bursts.burst_profile(136e6, 5.6e9, 800)
    assert duty == pytest.approx(136e6 / 5.6e9)
    assert 0.01 < duty < 0.05
    assert backlog == pytest.approx(800 * 512 * 1024 / 5.6e9)
    assert 0.040 < backlog < 0.090
    assert delay == pytest.approx(backlog / 2)
    assert bursts.burst_profile(1e12, 1e9, 10)[0] == 1.0  # duty cannot exceed 1


def test_background_write_rate():
    assert bursts.background_write_rate(100e6, 10.0) == pytest.approx(1e9)
    with pytest.raises(ValueError, match="^write_amplification"):
        bursts.background_write_rate(100e6, 0.5)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: storage.device_throughput(-1, 4, 1e-4), "outstanding"),
        (lambda: storage.device_throughput(1, 0.5, 1e-4), "parallelism"),
        (lambda: storage.io_occupancy(0, 4, 1e5, 1e9), "io_bytes"),
        (lambda: storage.mixed_occupancy(1.2, 1e-4, 1e-4), "read_fraction"),
        (lambda: bursts.burst_profile(1e6, 0, 10), "burst_bandwidth_bytes_s"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        call()


def test_closed_loop_burst_matches_a_monte_carlo_of_its_definition():
    """A client free at a burst's start sends its next read after T ~ Exp(lambda); caught if
    T < B, it waits B - T. Share, conditional mean / variance and h from 2e6 draws."""
    rng = np.random.default_rng(7)
    for y in (0.05, 0.7, 3.0, 20.0):
        t = rng.exponential(1.0 / y, 2_000_000)  # B = 1
        caught = t < 1.0
        wait = 1.0 - t[caught]
        share, mean, var, h = bursts.closed_loop_burst(y)
        assert share == pytest.approx(caught.mean() / y, rel=5e-3)
        assert mean == pytest.approx(wait.mean(), rel=5e-3)
        assert var == pytest.approx(wait.var(), rel=1e-2)
        assert h == pytest.approx(wait.sum() / t.size / y, rel=5e-3)


def test_closed_loop_burst_limits_and_slope():
    y = np.array([0.0, 1e-6, 9.99e-4, 1.001e-3, 0.5, 5.0, 50.0, 5e3])
    share, mean, var, h = bursts.closed_loop_burst(y)
    # open loop at y = 0: every read meets bursts at their time share and waits U(0, B)
    assert (share[0], mean[0], var[0], h[0]) == (1.0, 0.5, pytest.approx(1 / 12), 0.5)
    np.testing.assert_allclose(h, share * mean, rtol=1e-9)
    # continuous across the switch from series to closed form
    np.testing.assert_allclose(h[2], h[3], rtol=1e-5)
    np.testing.assert_allclose(var[2], var[3], rtol=1e-5)
    # a client loses at most one backlog per burst: h -> 1 / y
    assert h[-1] * y[-1] == pytest.approx(1.0, rel=1e-3)
    assert np.all(np.diff(h) <= 0) and np.all(np.diff(share) <= 0) and np.all(np.diff(mean) >= 0)
    eps = 1e-6
    for v in (0.3, 4.0, 40.0):
        fd = (bursts.closed_loop_burst(v + eps)[3] - bursts.closed_loop_burst(v - eps)[3]) / (2 * eps)
        assert bursts.closed_loop_burst_slope(v) == pytest.approx(fd, rel=1e-5)


@pytest.mark.parametrize("scv", [0.0, 0.004, 0.05, 0.25, 1.0, 3.0])
def test_burst_size_points_have_the_gamma_moments(scv):
    b, w = bursts.burst_size_points(np.array([scv]))
    assert b.shape == w.shape == (1, bursts.BURST_POINTS)
    assert np.all(b > 0) and np.all(w > 0)
    # E[b] = 1, E[b^2] = 1 + scv, E[b^3] = (1 + scv)(1 + 2 scv): gamma of mean 1
    assert (w * b).sum() == pytest.approx(1.0, rel=1e-12)
    assert (w * b**2).sum() == pytest.approx(1 + scv, rel=1e-10)
    # below scv = 0.01 the nodes are a normal's (Gauss-Hermite): its skewness is 0, the gamma's
    # third moment has 2 scv^2 more
    third = (1 + scv) * (1 + 2 * scv)
    assert (w * b**3).sum() == pytest.approx(third, rel=1e-9, abs=2.01 * scv**2 if scv < 0.01 else 0)


def test_mixed_burst_wait_and_starvation_against_direct_integration():
    """h_b(y) = E[b^2 h(y b)] and the starvation average, by quadrature of the gamma density
    (scipy.integrate.quad), independent of the Gauss nodes; one size is the one-size formula."""
    from scipy import integrate, stats

    for scv in (0.3, 1.0, 2.0):
        k = 1 / scv
        dens = stats.gamma(k, scale=scv).pdf
        b, w = bursts.burst_size_points(np.array([scv] * 4))
        y = np.array([0.0, 0.4, 3.0, 25.0])
        h, dh = bursts.burst_wait_mixed(y, b, w)
        for j, yj in enumerate(y):
            exact = integrate.quad(
                lambda v, yj=yj, dens=dens: v * v * bursts._burst_h(np.array(yj * v))[0] * dens(v), 0, np.inf
            )[0]
            # 12 nodes: within 3e-4 for y <= 3; at y = 25 the integrand turns from b^2 / 2 to
            # b / y near b = 1 / y, where the gamma of scv >= 1 has mass: resolved to ~1%
            assert h[j] == pytest.approx(exact, rel=1e-2 if yj > 10 else 1e-3)
        assert h[0] == pytest.approx((1 + scv) / 2)
        eps = 1e-5
        fd = (
            bursts.burst_wait_mixed(y[1:] + eps, b[1:], w[1:])[0]
            - bursts.burst_wait_mixed(y[1:] - eps, b[1:], w[1:])[0]
        ) / (2 * eps)
        np.testing.assert_allclose(dh[1:], fd, rtol=1e-4)
        log_ratio = np.array([0.0, 0.2, 1.0, 2.0])
        loss = bursts.burst_starvation_mixed(np.full(4, 0.01), np.full(4, 2.0), y, log_ratio, b, w)
        for j in range(1, 4):

            def lost(v, yj=y[j], ratio=log_ratio[j], dens=dens):
                u = max(yj * v - ratio, 0.0)
                return (u - 1 + np.exp(-u)) * dens(v)

            exact = 2 * 0.01 * integrate.quad(lost, 0, np.inf)[0] / y[j]
            # (y b - ln(N / N*))^+ has a kink: 12 Gauss nodes converge only algebraically there
            assert loss[j] == pytest.approx(exact, rel=2e-2)
    one_b, one_w = np.ones((3, 1)), np.ones((3, 1))
    y = np.array([0.5, 4.0, 30.0])
    assert bursts.burst_wait_mixed(y, one_b, one_w)[0] == pytest.approx(bursts.closed_loop_burst(y)[3])
    np.testing.assert_array_equal(
        bursts.burst_starvation_mixed(np.full(3, 0.1), np.full(3, 3.0), y, np.full(3, 0.5), one_b, one_w),
        bursts.burst_starvation(0.1, 3.0, y, np.exp(0.5)),
    )


def test_predict_open_loop_burst_wait_grows_with_the_flush_size_variance():
    """Open arrivals: a read's extra wait is p_burst E[B] (1 + scv) / 2 (length-biased backlog),
    so read latency is linear in the flush-size scv with slope p_burst x E[B] / 2, and the share
    of reads meeting a flush (its time share) does not change. Cassandra (the kernel's queue holds
    the flush; ScyllaDB's own I/O scheduler would hold it back) on a SATA drive (one queue: every
    read shares the flush's) at 10 nodes and 300 k ops/s: 5% of the requests meet a flush, so the
    p99 lies in the bursts and grows with their variance."""
    from dataclasses import replace

    from perfmodel.inputs._data import data_dir
    from perfmodel.inputs.workload import load_workload_file
    from perfmodel.model.predict import build_model

    spec = load_workload_file(str(data_dir() / "workloads" / "scylla-read-heavy.yaml"))
    w = replace(spec["workload"], arrival_rate=3e5, clients=None)
    args = dict(nodes=10, system="cassandra", threads_per_core=2, device="sata-ssd-800gb")
    rows = [
        perfmodel.predict("power8-s821lc-10c", w, flush_size_scv=s, **args).iloc[0] for s in (0.0, 1.0, 2.0)
    ]
    assert rows[0].tail_event_share > 0.01
    model = build_model("power8-s821lc-10c", w, **args)
    p_read = rows[0].tail_event_share / w.read_fraction
    slope = p_read * model.devices.bursts.backlog[0] / 2 * 1e3  # [ms]
    means = [r.read_latency_mean_ms for r in rows]
    assert means[1] - means[0] == pytest.approx(slope, rel=1e-6)
    assert means[2] - means[1] == pytest.approx(slope, rel=1e-6)
    assert [r.tail_event_share for r in rows] == pytest.approx([rows[0].tail_event_share] * 3, rel=1e-12)
    assert rows[2].read_latency_p99_ms > rows[1].read_latency_p99_ms > rows[0].read_latency_p99_ms


def test_flush_queue_share_is_one_over_the_queues_the_cpus_use():
    # blk-mq maps the CPUs onto min(queues, CPUs) hardware queues; a flush fills one of them
    assert bursts.flush_queue_share(1, 64) == 1.0  # SATA: one queue, every read behind the flush
    assert bursts.flush_queue_share(32, 16) == pytest.approx(1 / 16)  # i4g: 32 queues, 16 vCPUs
    assert bursts.flush_queue_share(128, 128) == pytest.approx(1 / 128)
    np.testing.assert_allclose(bursts.flush_queue_share(np.array([4, 64]), 8), [1 / 4, 1 / 8])
    with pytest.raises(ValueError):
        bursts.flush_queue_share(0, 8)


def test_only_reads_on_the_flushs_queue_wait_for_its_backlog(tmp_path):
    """Two drives that differ only in their queue count, under the same open load: the share of
    reads meeting a flush, and their extra mean wait (duty x share x B / 2), shrink by
    ``1 / min(queues, CPUs)`` (31 queues on 20 CPUs: 1 / 20); the backlog and duty stay. Cassandra,
    whose flushes the kernel queues whole (ScyllaDB's own I/O scheduler caps the wait instead)."""
    import yaml

    from perfmodel.inputs.workload import Workload
    from perfmodel.model import chain

    spec = yaml.safe_load((data_dir() / "hardware" / "devices.yaml").read_text())
    nvme = next(d for d in spec["devices"] if d["id"] == "nvme-1p6tb-generic")
    paths = []
    for queues in (1, 31):
        entry = dict(nvme, id=f"mq-test-{queues}", hardware_queues=queues)
        path = tmp_path / f"q{queues}.yaml"
        path.write_text(yaml.safe_dump({"references": spec.get("references", {}), "devices": [entry]}))
        paths.append(str(path))
    # 4 TB on 4 nodes: every read reaches a drive; 30% writes at 100 k ops/s keep it in flushes 9% of the time
    w = Workload(read_fraction=0.7, object_bytes=1024, dataset_bytes=4e12, arrival_rate=1e5, clients=None)
    args = dict(nodes=4, system="cassandra", threads_per_core=2)
    one, many = (chain.build("power8-s821lc-10c", w, device=p, **args) for p in paths)
    assert one.devices.bursts.queue_share[0] == 1.0
    assert many.devices.bursts.queue_share[0] == pytest.approx(1 / 20)  # 10 cores x SMT2
    np.testing.assert_allclose(many.devices.bursts.backlog, one.devices.bursts.backlog)
    rows = [chain.report(m, chain.solve(m)).iloc[0] for m in (one, many)]
    assert rows[0].burst_duty == pytest.approx(rows[1].burst_duty, rel=1e-9)
    p_one, p_many = (r.tail_event_share / w.read_fraction for r in rows)
    assert p_one > 0.01 and p_many == pytest.approx(p_one / 20, rel=1e-9)
    extra = [r.read_latency_mean_ms for r in rows]
    backlog_ms = one.devices.bursts.backlog[0] * 1e3
    # the read mean without bursts is the same on both drives: the difference is the burst wait
    assert extra[0] - extra[1] == pytest.approx(p_one * backlog_ms / 2 * (1 - 1 / 20), rel=1e-6)


def _scylla_on_sata(clients=None):
    """ScyllaDB 80/20 on 3 POWER8 nodes with a SATA drive each and a 16 MiB memtable: open at
    100 k ops/s (``clients`` None) or a closed loop; 14% of the reads meet a flush when open."""
    from dataclasses import replace

    from perfmodel.inputs.params import load_parameters
    from perfmodel.inputs.workload import load_workload_file
    from perfmodel.model import chain

    spec = load_workload_file(str(data_dir() / "workloads" / "scylla-read-heavy.yaml"))
    load = (
        dict(arrival_rate=1e5, clients=None) if clients is None else dict(clients=clients, arrival_rate=None)
    )
    w = replace(spec["workload"], **load)
    params = load_parameters("calibrated").with_values(**{"memtable_bytes[scylla]": 16 * 2**20})
    return chain.build("power8-s821lc-10c", w, nodes=3, system="scylla", threads_per_core=2, params=params,
                       device="sata-ssd-800gb", cache_bytes=2 * 2**30)  # fmt: skip


def _without_cap(model):
    """The same model with the kernel's queue holding the whole flush (no I/O scheduler)."""
    from dataclasses import replace

    bursts = replace(model.devices.bursts, read_cap=np.full_like(model.devices.bursts.read_cap, np.inf))
    return replace(
        model, net=replace(model.net, burst_read_cap=np.inf), devices=replace(model.devices, bursts=bursts)
    )


@pytest.mark.parametrize("clients", [None, 60])
def test_a_servers_io_scheduler_caps_what_a_read_waits_of_a_flush(clients):
    """ScyllaDB's spec goal (0.75 ms): a read meeting a flush waits that, in the mean (the closed
    solver too) and in the p99; without the cap it waits its share of a ~34 ms backlog."""
    from perfmodel.model import chain

    capped = _scylla_on_sata(clients)
    kernel = _without_cap(capped)
    t_cap, t_kernel = (chain.tails(m, chain.solve(m)) for m in (capped, kernel))
    goal = float(capped.devices.bursts.read_cap[0])
    assert goal == pytest.approx(0.75e-3)
    assert float(capped.devices.bursts.backlog[0]) > 30 * goal
    assert (
        t_cap.quantiles["p99"][0][0]
        < 2e-3
        < 5 * t_cap.quantiles["p99"][0][0]
        < t_kernel.quantiles["p99"][0][0]
    )
    assert t_kernel.mean_read[0] > t_cap.mean_read[0]
    if clients is None:  # open: a read meeting a flush waits the goal, so doubling it adds share x goal
        share = t_cap.tail_event_share[0] / capped.inputs.cfg.read_fraction[0]
        doubled = _with_cap(capped, 2 * goal)
        t2 = chain.tails(doubled, chain.solve(doubled))
        assert t2.mean_read[0] - t_cap.mean_read[0] == pytest.approx(share * goal, rel=1e-6)


def _with_cap(model, cap):
    from dataclasses import replace

    bursts = replace(model.devices.bursts, read_cap=np.full_like(model.devices.bursts.read_cap, cap))
    return replace(
        model, net=replace(model.net, burst_read_cap=cap), devices=replace(model.devices, bursts=bursts)
    )
