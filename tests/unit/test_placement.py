"""Placement imbalance and coordinator forwarding (perfmodel.mechanisms.placement) against independent truth.

Closed forms: the maximum of n iid exponentials has mean H_n (Renyi); Monte Carlo
of the two placements the module models (CRUSH-like random PG placement, a token
ring with random tokens and replicas on the next distinct nodes).
"""

import numpy as np
import pytest

from perfmodel.mechanisms import placement


def test_busiest_of_exponential_loads_is_the_harmonic_number():
    # loads Exp(1) = Gamma(shape 1): E[max of n] = H_n = 1 + 1/2 + ... + 1/n
    for n in (2, 3, 10, 100):
        harmonic = sum(1.0 / k for k in range(1, n + 1))
        assert placement.expected_max_load(n, 1.0) == pytest.approx(harmonic, rel=1e-6)


def test_no_imbalance_without_spread():
    assert placement.imbalance(1, 1, 100) == 1.0  # one instance holds everything
    assert placement.imbalance(3, 3, 100, "ring") == 1.0  # every node holds every range
    assert placement.imbalance(5, 5, 10) == 1.0
    assert placement.imbalance(50, 3, np.inf) == 1.0
    assert placement.imbalance(50, 3, 16, "even") == 1.0


def test_imbalance_grows_with_instances_and_falls_with_units():
    n = np.array([2, 4, 8, 16, 64, 256])
    by_n = placement.imbalance(n, 1, 100)
    assert (np.diff(by_n) > 0).all()
    u = np.array([4, 16, 64, 256, 1024])
    by_u = placement.imbalance(64, 3, u)
    assert (np.diff(by_u) < 0).all()


def _random_pgs(rng, n, units, r, trials):
    pgs = n * units // r
    out = []
    for _ in range(trials):
        picks = np.argsort(rng.random((pgs, n)), axis=1)[:, :r].ravel()
        count = np.bincount(picks, minlength=n)
        out.append(count.max() / count.mean())
    return np.mean(out), np.std(out) / np.sqrt(trials)


@pytest.mark.parametrize("n,units,r", [(10, 100, 3), (40, 50, 2), (24, 200, 3)])
def test_random_placement_matches_monte_carlo(n, units, r):
    # the variance is exact for independent placement; the Gamma shape is the approximation
    mc, se = _random_pgs(np.random.default_rng(7), n, units, r, 300)
    model = float(placement.imbalance(n, r, units, "random"))
    assert abs(model - mc) <= 3 * se + 0.01 * mc


def _ring(rng, n, v, r, trials):
    out = []
    for _ in range(trials):
        tokens = rng.random(n * v)
        owner = np.repeat(np.arange(n), v)
        order = np.argsort(tokens)
        tokens, owner = tokens[order], owner[order]
        arc = np.diff(np.append(tokens, tokens[0] + 1.0))  # range after token i, up to token i + 1
        load = np.zeros(n)
        m = len(tokens)
        for i in range(m):
            seen, j = [], (i + 1) % m
            while len(seen) < r:  # replicas: the next r distinct owners clockwise
                if owner[j] not in seen:
                    seen.append(owner[j])
                j = (j + 1) % m
            load[seen] += arc[i]
        out.append(load.max() / load.mean())
    return np.mean(out)


@pytest.mark.parametrize("n,v,r", [(12, 16, 3), (24, 8, 3), (8, 32, 1)])
def test_ring_placement_within_its_stated_accuracy(n, v, r):
    # the module doc states cv2 = 1 / (r v) within 10% from n = 2 r: the excess load
    # (imbalance - 1 ~ sqrt(cv2)) is then within 20% once Monte Carlo noise is allowed for
    mc = _ring(np.random.default_rng(3), n, v, r, 60)
    model = float(placement.imbalance(n, r, r * v, "ring"))
    assert model - 1 == pytest.approx(mc - 1, rel=0.2)


def test_forwarded_share():
    assert placement.forwarded_share(12, 3, 1.0) == 0.0  # token-aware: always a replica
    assert placement.forwarded_share(12, 3, 0.0) == pytest.approx(0.75)
    assert placement.forwarded_share(3, 3, 0.0) == 0.0  # every node is a replica
    shares = placement.forwarded_share(np.arange(3, 100), 3, 0.0)
    assert (np.diff(shares) > 0).all()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="placement"):
        placement.load_cv2(4, 1, 10, "hashed")
    with pytest.raises(ValueError, match="token_aware"):
        placement.forwarded_share(4, 1, 1.5)
