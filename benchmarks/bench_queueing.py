"""Speed and accuracy benchmarks of perfmodel.queueing, as ratios in one run.

Run from the repository root:

    python -m benchmarks.bench_queueing            # everything (~1 min)
    python -m benchmarks.bench_queueing --quick    # skip the error studies

Figures (issue 3):
1. Erlang C mean response over 1,000,000 (servers, load) combinations:
   configurations/s, target >= 5e6 on one core; baselines: the Erlang B
   recursion vectorised in plain numpy, and a scipy closed form.
2. Exact closed network (4 stations + delay, one with 80 servers),
   populations 1..3,200: target < 10 ms; baselines: the same stable algorithm
   in plain numpy, the textbook load-dependent MVA (numpy, and its error).
3. Populations 1..20,000 with an 80- and a 1024-server station: error of the
   MVA against the extended-precision log-domain convolution.
4. numba cold start (empty cache) and warm start (cache present), target < 2 s.
5. Error studies quoted in docs/queueing.md: approximate MVA versus exact,
   path-quantile approximations versus exact.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy import special

from perfmodel import queueing as qn
from perfmodel.queueing import closed as closed_mod


def best_of(fn, repeat=5):
    best = np.inf
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


# ----------------------------------------------------------------------------
# 1. Erlang C
# ----------------------------------------------------------------------------


def erlang_c_numpy_recursion(c, a):
    """Baseline: Erlang B forward recursion over k = 1..max(c), vectorised."""
    b = np.ones_like(a)
    out = np.empty_like(a)
    cmax = int(c.max())
    for k in range(1, cmax + 1):
        b = a * b / (k + a * b)
        hit = c == k
        out[hit] = b[hit]
    rho = a / c
    return out / (1.0 - rho * (1.0 - out))


def mmc_response_scipy_closed_form(lam, mu, c):
    """Baseline: the textbook closed form through scipy's Poisson cdf/pmf."""
    a = lam / mu
    pmf = np.exp(special.xlogy(c, a) - a - special.gammaln(c + 1))
    cdf = special.pdtr(c - 1, a)
    ec = pmf / (pmf + (1 - a / c) * cdf)
    return ec / (c * mu - lam) + 1 / mu


def bench_erlang():
    rng = np.random.default_rng(0)
    n = 1_000_000
    c = rng.integers(1, 1025, n).astype(np.float64)
    rho = rng.uniform(0.01, 0.99, n)
    mu = 1.0
    lam = rho * c * mu
    t_ours, ours = best_of(lambda: qn.mmc_response_time(lam, mu, c), 5)
    t_sc, sc = best_of(lambda: mmc_response_scipy_closed_form(lam, mu, c), 5)
    t_rec, ec_rec = best_of(lambda: erlang_c_numpy_recursion(c, lam / mu), 1)
    rec = ec_rec / (c * mu - lam) + 1 / mu
    print("1. Erlang C mean response, 1,000,000 (servers 1..1024, load 0.01..0.99) configs")
    print(
        f"   perfmodel.mmc_response_time   {n / t_ours / 1e6:8.2f} M configs/s "
        f"({t_ours * 1e3:.0f} ms)  target >= 5 M/s: {'PASS' if n / t_ours >= 5e6 else 'FAIL'}"
    )
    print(
        f"   plain-numpy Erlang B recursion {n / t_rec / 1e6:7.2f} M configs/s "
        f"-> ratio {t_rec / t_ours:6.1f}x"
    )
    print(
        f"   scipy closed form (pdtr)      {n / t_sc / 1e6:8.2f} M configs/s -> ratio {t_sc / t_ours:6.2f}x"
    )
    print(
        f"   max rel. difference vs recursion {np.max(np.abs(ours / rec - 1)):.1e}, "
        f"vs scipy closed form {np.max(np.abs(ours / sc - 1)):.1e}"
    )


# ----------------------------------------------------------------------------
# 2-3. closed networks
# ----------------------------------------------------------------------------

NET_D = [0.010, 0.008, 0.005, 1.6]
NET_S = [1, 1, 1, 80]
NET_Z = 5.0


def textbook_ld_mva(demands, servers, think, n_max):
    """Baseline: load-dependent MVA with p(0|n) = 1 - sum_j p(j|n) (Lazowska ch. 8)."""
    demands = np.asarray(demands, dtype=float)
    k = demands.size
    p = np.zeros((k, n_max + 1))
    p[:, 0] = 1.0
    cs = np.asarray(servers, dtype=float)[:, None]
    xs = np.zeros(n_max)
    for n in range(1, n_max + 1):
        j = np.arange(1, n + 1)
        coef = j[None, :] * demands[:, None] / np.minimum(j[None, :], cs)
        r = (coef * p[:, :n]).sum(axis=1)
        x = n / (think + r.sum())
        xs[n - 1] = x
        new = np.zeros_like(p)
        new[:, 1 : n + 1] = x * demands[:, None] / np.minimum(j[None, :], cs) * p[:, :n]
        new[:, 0] = 1.0 - new[:, 1:].sum(axis=1)
        p = new
    return xs


def bench_closed():
    n_max = 3200
    qn.closed_network(NET_D, NET_S, NET_Z, 10)  # compile / load the cache
    t_ours, ours = best_of(lambda: qn.closed_network(NET_D, NET_S, NET_Z, n_max), 20)
    net = closed_mod._Net(np.array(NET_D), NET_S, NET_Z)
    t_np, np_res = best_of(lambda: closed_mod._run_mva(net, n_max, (0,), {}, closed_mod._mva_numpy), 3)
    t_conv, conv = best_of(lambda: qn.closed_network(NET_D, NET_S, NET_Z, n_max, method="convolution"), 1)
    t_tb, tb = best_of(lambda: textbook_ld_mva(NET_D, NET_S, NET_Z, n_max), 1)
    ref = conv.throughput
    err_ours = np.max(np.abs(ours.throughput / ref - 1))
    err_np = np.max(np.abs(np_res[0][1:] / ref - 1))
    with np.errstate(invalid="ignore"):
        err_tb = np.abs(tb / ref - 1)
    bad = np.flatnonzero(~(err_tb < 1e-6))
    print("2. Exact closed network, 4 stations (one with 80 servers) + delay, N = 1..3,200")
    backend = "numba" if qn.HAVE_NUMBA else "numpy (numba missing)"
    print(
        f"   perfmodel.closed_network [{backend}] {t_ours * 1e3:8.2f} ms  "
        f"target < 10 ms: {'PASS' if t_ours < 0.010 else 'FAIL'}; "
        f"max rel. err vs convolution {err_ours:.1e}"
    )
    print(
        f"   same stable MVA, plain numpy      {t_np * 1e3:8.2f} ms -> ratio "
        f"{t_np / t_ours:6.1f}x; max rel. err {err_np:.1e}"
    )
    print(f"   log-domain convolution (longdouble) {t_conv * 1e3:6.0f} ms -> ratio {t_conv / t_ours:6.0f}x")
    first_bad = f"first n with error > 1e-6: {bad[0] + 1}" if bad.size else "no error > 1e-6"
    print(
        f"   textbook LD-MVA, numpy            {t_tb * 1e3:8.0f} ms -> ratio "
        f"{t_tb / t_ours:6.0f}x; max rel. err {np.nanmax(err_tb):.1e} ({first_bad})"
    )

    n_big = 20_000
    d_big, s_big = [0.010, 0.008, 1.6, 10.0], [1, 1, 80, 1024]
    qn.closed_network(d_big, s_big, NET_Z, 10)
    t_big, big = best_of(lambda: qn.closed_network(d_big, s_big, NET_Z, n_big), 3)
    t_bc, big_conv = best_of(lambda: qn.closed_network(d_big, s_big, NET_Z, n_big, method="convolution"), 1)
    ex = np.max(np.abs(big.throughput / big_conv.throughput - 1))
    eq = np.max(np.abs(big.queue_length - big_conv.queue_length) / np.maximum(big_conv.queue_length, 1e-300))
    print("3. N = 1..20,000, stations 1, 1, 80 and 1024 servers + delay")
    print(
        f"   MVA {t_big * 1e3:.0f} ms, convolution {t_bc:.1f} s; max rel. difference "
        f"X {ex:.1e}, Q {eq:.1e}  target <= 1e-9: {'PASS' if max(ex, eq) <= 1e-9 else 'FAIL'}"
    )


# ----------------------------------------------------------------------------
# 4. numba start-up
# ----------------------------------------------------------------------------


def bench_numba_startup():
    if not qn.HAVE_NUMBA:
        print("4. numba not installed: the numpy kernel is used (no compile step)")
        return
    code = (
        "import time; t=time.perf_counter(); from perfmodel import queueing as q; "
        "q.closed_network([0.01,0.008,0.005,1.6],[1,1,1,80],5.0,3200); "
        "print(time.perf_counter()-t)"
    )
    env = dict(os.environ)
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        env["NUMBA_CACHE_DIR"] = tmp
        for label in ("cold (empty cache)", "warm (cache present)"):
            out = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            times[label] = float(out.stdout.strip())
    print("4. numba start-up: import perfmodel.queueing + first closed_network call")
    for label, t in times.items():
        print(f"   {label:22s} {t:6.2f} s  target < 2 s: {'PASS' if t < 2 else 'FAIL'}")


# ----------------------------------------------------------------------------
# 5. error studies for docs/queueing.md
# ----------------------------------------------------------------------------


def amva_error_study():
    """Same seeded sample as tests/unit/test_queueing_amva.py."""
    print("5a. Approximate MVA vs exact: max (median) relative error, 120 random networks")
    for method, multi in (("schweitzer", False), ("schweitzer", True), ("bard", False), ("bard", True)):
        rng = np.random.default_rng(0)
        errs = []
        for _ in range(120):
            k = int(rng.integers(2, 5))
            d = rng.uniform(0.01, 1.0, k)
            z = rng.uniform(0.0, 5.0)
            s = np.ones(k)
            if multi:
                s[rng.integers(k)] = rng.choice([2, 4, 8, 16])
            n = int(rng.integers(1, 60))
            ex = qn.closed_network(d, s, z, n)
            ap = qn.amva(d, s, z, n, method=method)
            errs.append(
                (
                    abs(ap.throughput[0] / ex.throughput[-1] - 1),
                    abs(ap.response_time[0] / ex.response_time[-1] - 1),
                )
            )
        e = np.array(errs)
        label = f"{method}{' + Seidmann (one 2-16 server station)' if multi else ''}"
        print(
            f"    {label:45s} X {e[:, 0].max():6.3f} ({np.median(e[:, 0]):.4f})  "
            f"R {e[:, 1].max():6.3f} ({np.median(e[:, 1]):.4f})"
        )
    rng = np.random.default_rng(1)
    errs = []
    for _ in range(40):
        k = int(rng.integers(2, 4))
        d = rng.uniform(0.01, 1.0, (2, k))
        z = rng.uniform(0.0, 3.0, 2)
        n = rng.integers(1, 10, 2)
        ex = qn.multiclass_mva(d, 1, z, n)
        ap = qn.amva(d, 1, z, n)
        errs.append(
            (
                np.max(np.abs(ap.throughput / ex.throughput - 1)),
                np.max(np.abs(ap.response_time / ex.response_time - 1)),
            )
        )
    e = np.array(errs)
    print(
        f"    {'schweitzer, 2 classes (40 networks)':45s} X {e[:, 0].max():6.3f} "
        f"({np.median(e[:, 0]):.4f})  R {e[:, 1].max():6.3f} ({np.median(e[:, 1]):.4f})"
    )


def hypoexp_quantile(rates, q):
    from scipy import optimize

    rates = np.asarray(rates, dtype=float)

    def sf(t):
        return sum(
            np.prod([rj / (rj - ri) for j, rj in enumerate(rates) if j != i]) * np.exp(-ri * t)
            for i, ri in enumerate(rates)
        )

    return optimize.brentq(lambda t: sf(t) - (1 - q), 0.0, 100 / rates.min(), xtol=1e-15)


def path_error_study():
    qs = np.array([0.5, 0.95, 0.99, 0.999])
    print("5b. Path quantiles: relative error at p50 / p95 / p99 / p99.9")
    cases = [
        ("tandem M/M/1 rho .8/.67/.89", 800.0, [1000.0, 1200.0, 900.0]),
        ("tandem M/M/1 rho .33/.5/.2/.67", 1.0, [3.0, 2.0, 5.0, 1.5]),
    ]
    for label, lam, mus in cases:
        st = [qn.Sojourn.mmc(lam, mu) for mu in mus]
        want = np.array([hypoexp_quantile([mu - lam for mu in mus], q) for q in qs])
        conv = qn.path_response_time_quantile(qs, st)
        gam = qn.path_response_time_quantile(qs, st, method="gamma")
        fmt = " / ".join
        print(f"    {label:32s} convolution(rtol 1e-3) {fmt(f'{v:.1e}' for v in np.abs(conv / want - 1))}")
        print(f"    {'':32s} gamma moment match      {fmt(f'{v:+.3f}' for v in gam / want - 1)}")
    # M/M/c paths: the convolution is exact under independence -> reference for gamma
    st = [qn.Sojourn.mmc(60.0, 1.0, 64), qn.Sojourn.mmc(7.2, 1.0, 8), qn.Sojourn.mmc(800, 1000)]
    conv = qn.path_response_time_quantile(qs, st, rtol=1e-4)
    gam = qn.path_response_time_quantile(qs, st, method="gamma")
    print(
        f"    {'M/M/64 + M/M/8 + M/M/1 (gamma vs conv.)':32s}  "
        f"{' / '.join(f'{v:+.3f}' for v in gam / conv - 1)}"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the error studies")
    args = parser.parse_args(argv)
    print(f"numpy {np.__version__}; numba available: {qn.HAVE_NUMBA}")
    bench_erlang()
    bench_closed()
    bench_numba_startup()
    if not args.quick:
        amva_error_study()
        path_error_study()


if __name__ == "__main__":
    main()
