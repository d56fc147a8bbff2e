"""Hypothesis properties of the CPU scaling and storage sub-models."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.mechanisms import bursts, scaling, storage

alpha = st.floats(0.0, 1.0)
threads = st.integers(1, 8)
cores = st.integers(1, 256)


@settings(max_examples=200, deadline=None)
@given(alpha, threads)
def test_smt_yield_is_monotone_and_bounded(a, t):
    y, y_next = scaling.smt_yield(t, a), scaling.smt_yield(t + 1, a)
    assert y_next >= y - 1e-12
    assert 1.0 <= y <= t + 1e-12


@settings(max_examples=200, deadline=None)
@given(cores, cores, threads, alpha, st.floats(0, 0.1))
def test_more_cores_never_lower_cpu_capacity_under_contention_only(c1, c2, t, a, sigma):
    """Without coherency (kappa = 0) capacity never falls with cores (with kappa > 0 the
    USL is retrograde by design, so the property is stated for contention only)."""
    lo, hi = sorted((c1, c2))
    cap_lo = scaling.cpu_capacity(lo, t, np.inf, 1e4, a, sigma, 0.0)[0]
    cap_hi = scaling.cpu_capacity(hi, t, np.inf, 1e4, a, sigma, 0.0)[0]
    assert cap_hi >= cap_lo * (1 - 1e-12)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 2048), st.integers(1, 2048), st.floats(1, 512), st.floats(1e-6, 1e-2))
def test_queue_depth_never_lowers_device_throughput_below_qd1(n1, n2, p, s):
    lo, hi = sorted((n1, n2))
    x_lo, x_hi = storage.device_throughput(lo, p, s), storage.device_throughput(hi, p, s)
    assert x_hi >= x_lo
    assert x_hi >= storage.device_throughput(1, p, s)
    assert x_hi <= p / s * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1e10), st.floats(1e6, 1e10), st.floats(0, 2000))
def test_burst_duty_is_a_fraction_and_delay_grows_with_depth(rate, bw, qd):
    duty, delay, backlog = bursts.burst_profile(rate, bw, qd)
    assert 0 <= duty <= 1
    assert 0 <= delay <= backlog
    assert bursts.burst_profile(rate, bw, qd + 1)[1] >= delay
