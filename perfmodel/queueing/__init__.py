"""Analytic queueing engine: exact, numerically stable, vectorised.

Pure numpy functions in SI units (seconds, 1/s) that broadcast their
arguments, so one call evaluates a whole grid of configurations.

Modules
-------
single     M/M/1, M/M/c (Erlang B / C, stable for c >= 1024), M/G/1
           (Pollaczek-Khinchine), G/G/c (Allen-Cunneen / Kingman) means.
quantiles  Exact M/M/1 and M/M/c response- and waiting-time distributions and
           quantiles (p50, p95, p99, p99.9).
stations   :class:`LoadDependentRate`: rate alpha(n) with n present (c servers,
           a k-parallel device, a single-queue device, a saturating curve).
closed     Exact single-class closed networks for every population 1..N:
           MVA with stable marginals and log-domain convolution.
amva       Multi-class exact MVA (small) and Schweitzer / Bard approximate MVA
           with Seidmann's multi-server correction.
open       Open product-form networks with saturation flags; open
           load-dependent stations.
usl        Universal Scalability Law and Amdahl, with least-squares fits.
path       End-to-end response-time quantiles along a path of stations.

Contract (called by name by the rest of perfmodel): :func:`erlang_c`,
:func:`mmc_response_time`, :func:`mmc_response_time_quantile`,
:func:`closed_network`, :func:`usl_throughput`.

Glossary: ``arrival_rate`` lambda [1/s]; ``service_rate`` mu [1/s];
``service_time`` S [s]; ``servers`` c [count]; ``offered_load`` a = lambda/mu
[Erlang]; ``demands`` D_k = V_k S_k [s]; ``think_time`` Z [s]; ``population``
N [count]; utilisation rho [-]; ``q`` a probability level in (0, 1).
See docs/queueing.md for methods, references and measured errors.
"""

from perfmodel.queueing.amva import AMVAResult, amva, multiclass_mva
from perfmodel.queueing.closed import HAVE_NUMBA, ClosedNetworkResult, closed_network
from perfmodel.queueing.open import (
    OpenNetworkResult,
    ld_station_number_in_system,
    ld_station_response_time,
    open_network,
    traffic_equations,
)
from perfmodel.queueing.path import (
    Sojourn,
    gamma_quantile,
    path_response_time_mean,
    path_response_time_quantile,
    sojourn_moments,
)
from perfmodel.queueing.quantiles import (
    mm1_response_time_quantile,
    mm1_waiting_time_quantile,
    mmc_response_time_cdf,
    mmc_response_time_quantile,
    mmc_response_time_sf,
    mmc_waiting_time_quantile,
)
from perfmodel.queueing.single import (
    erlang_b,
    erlang_c,
    erlang_c_unchecked,
    ggc_response_time,
    ggc_waiting_time,
    mg1_response_time,
    mg1_waiting_time,
    mm1_response_time,
    mm1_waiting_time,
    mmc_number_in_system,
    mmc_response_time,
    mmc_waiting_time,
    utilization,
)
from perfmodel.queueing.stations import LoadDependentRate
from perfmodel.queueing.usl import (
    ScalabilityFit,
    amdahl_throughput,
    fit_amdahl,
    fit_usl,
    usl_peak_concurrency,
    usl_throughput,
)

__all__ = [
    "HAVE_NUMBA",
    "AMVAResult",
    "ClosedNetworkResult",
    "LoadDependentRate",
    "OpenNetworkResult",
    "ScalabilityFit",
    "Sojourn",
    "amdahl_throughput",
    "amva",
    "closed_network",
    "erlang_b",
    "erlang_c",
    "erlang_c_unchecked",
    "fit_amdahl",
    "fit_usl",
    "ggc_response_time",
    "ggc_waiting_time",
    "ld_station_number_in_system",
    "ld_station_response_time",
    "mg1_response_time",
    "mg1_waiting_time",
    "mm1_response_time",
    "mm1_response_time_quantile",
    "mm1_waiting_time",
    "mm1_waiting_time_quantile",
    "mmc_number_in_system",
    "mmc_response_time",
    "mmc_response_time_cdf",
    "mmc_response_time_quantile",
    "mmc_response_time_sf",
    "mmc_waiting_time",
    "mmc_waiting_time_quantile",
    "multiclass_mva",
    "open_network",
    "gamma_quantile",
    "path_response_time_mean",
    "path_response_time_quantile",
    "sojourn_moments",
    "traffic_equations",
    "usl_peak_concurrency",
    "usl_throughput",
    "utilization",
]
