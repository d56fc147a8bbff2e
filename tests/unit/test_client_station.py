"""The load generator's cores as a station (knob client_cores, parameter client_time_s)."""

from __future__ import annotations

import dataclasses

import pytest

import perfmodel as pm
from perfmodel import Workload
from perfmodel.inputs.params import load_parameters

PLATFORM = "x86-xeon-x5650-2s"
CLIENT_S = 50e-6  # the load generator's time per request [s]


def _params(client_time_s):
    p = load_parameters()
    return dataclasses.replace(p, values={**p.values, "client_time_s": client_time_s})


def _run(client_time_s=CLIENT_S, threads=64, **knobs):
    w = Workload(operation="mixed", read_fraction=0.9, object_bytes=1000, dataset_bytes=1e9, clients=1,
                 threads_per_client=threads)  # fmt: skip
    return pm.predict(platform=PLATFORM, workload=w, system="redis", nodes=1, params=_params(client_time_s),
                      **knobs).iloc[0]  # fmt: skip


def test_without_its_cores_the_client_time_is_spent_between_requests():
    bare, lab = _run(0.0), _run()
    assert lab.util_client == 0.0
    # the time between requests only lightens the load: never a longer latency than without it
    assert lab.latency_mean_ms < bare.latency_mean_ms and lab.throughput_ops_s <= bare.throughput_ops_s
    # closed loop, Little's law over the whole cycle: N = X (R + Z)
    assert 64 == pytest.approx(lab.throughput_ops_s * (lab.latency_mean_ms * 1e-3 + CLIENT_S), rel=1e-6)


def test_on_its_own_cores_the_client_time_is_inside_the_latency():
    lab = _run(client_cores=1000)  # plenty of cores: no queueing at the client
    assert lab.util_client == pytest.approx(lab.throughput_ops_s * CLIENT_S / 1000, rel=1e-6)  # U = X D / c
    assert 64 == pytest.approx(lab.throughput_ops_s * lab.latency_mean_ms * 1e-3, rel=1e-6)  # no think time
    one = _run(threads=1, client_cores=1000)
    bare = _run(0.0, threads=1)
    assert one.latency_mean_ms == pytest.approx(bare.latency_mean_ms + CLIENT_S * 1e3, rel=1e-3)


def test_a_load_generator_short_of_cores_is_the_bottleneck():
    cores = 2
    lab = _run(threads=256, client_cores=cores)
    assert lab.bottleneck == "client"
    assert lab.throughput_ops_s <= cores / CLIENT_S * (1 + 1e-9)
    # 256 threads on 2 cores: far past the knee, the rate is the client's asymptote c / D (Denning &
    # Buzen 1978, the closed network's throughput bound)
    assert lab.throughput_ops_s == pytest.approx(cores / CLIENT_S, rel=1e-3)
    more = _run(threads=256, client_cores=4 * cores)
    assert more.throughput_ops_s > lab.throughput_ops_s


def test_the_knob_is_checked():
    with pytest.raises(ValueError, match="client_cores"):
        _run(client_cores=0)
