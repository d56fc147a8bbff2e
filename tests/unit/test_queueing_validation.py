"""Bad input raises ValueError naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

from perfmodel import queueing as qn

BAD_SINGLE = [
    (lambda: qn.erlang_c(0, 1.0), "servers"),
    (lambda: qn.erlang_c(2.5, 1.0), "servers"),
    (lambda: qn.erlang_c(4, -1.0), "offered_load"),
    (lambda: qn.erlang_c(4, np.nan), "offered_load"),
    (lambda: qn.erlang_c([1, 2, 3], [1.0, 2.0]), "servers, offered_load"),
    (lambda: qn.erlang_b(-3, 1.0), "servers"),
    (lambda: qn.mmc_response_time(-1.0, 1.0, 2), "arrival_rate"),
    (lambda: qn.mmc_response_time(1.0, -1.0, 2), "service_rate"),
    (lambda: qn.mmc_response_time(1.0, 0.0, 2), "service_rate"),
    (lambda: qn.mmc_response_time(1.0, 1.0, 0), "servers"),
    (lambda: qn.mmc_response_time(np.nan, 1.0, 2), "arrival_rate"),
    (lambda: qn.mmc_response_time(1.0, np.inf, 2), "service_rate"),
    (lambda: qn.mmc_response_time([1.0, 2.0], [1.0, 2.0, 3.0], 4), "arrival_rate, service_rate"),
    (lambda: qn.mmc_response_time("fast", 1.0, 2), "arrival_rate"),
    (lambda: qn.mmc_response_time_quantile(1.0, 1.0, 2.0, 1), "q"),
    (lambda: qn.mmc_response_time_quantile(0.0, 1.0, 2.0, 1), "q"),
    (lambda: qn.mmc_response_time_quantile(-0.5, 1.0, 2.0, 1), "q"),
    (lambda: qn.mmc_response_time_quantile(np.nan, 1.0, 2.0, 1), "q"),
    (lambda: qn.mmc_response_time_quantile([0.5, 0.9], [1.0, 2.0, 3.0], 9.0, 1), "q"),
    (lambda: qn.mmc_response_time_quantile(0.9, 1.0, 2.0, 0), "servers"),
    (lambda: qn.mm1_response_time_quantile(1.5, 1.0, 2.0), "q"),
    (lambda: qn.mm1_response_time(1.0, -2.0), "service_rate"),
    (lambda: qn.mg1_waiting_time(1.0, 0.5, -1.0), "service_scv"),
    (lambda: qn.ggc_waiting_time(1.0, 0.5, 2, arrival_scv=np.nan), "arrival_scv"),
    (lambda: qn.usl_throughput(4, -1.0, 0.1, 0.01), "lam"),
    (lambda: qn.usl_throughput(4, 1.0, np.nan, 0.01), "sigma"),
    (lambda: qn.usl_throughput(4, 1.0, 0.1, -0.01), "kappa"),
    (lambda: qn.usl_throughput([1, 2], 1.0, [0.1, 0.2, 0.3], 0.0), "n, lam, sigma, kappa"),
]


@pytest.mark.parametrize("call, name", BAD_SINGLE)
def test_bad_input_names_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        call()


BAD_NETWORK = [
    (lambda: qn.closed_network([0.1, -0.2], 1, 1.0, 10), "demands"),
    (lambda: qn.closed_network([0.1, np.nan], 1, 1.0, 10), "demands"),
    (lambda: qn.closed_network([0.1, 0.2], [1, 0], 1.0, 10), "servers"),
    (lambda: qn.closed_network([0.1, 0.2], [1, 2.5], 1.0, 10), "servers"),
    (lambda: qn.closed_network([0.1, 0.2], [1, 2, 3], 1.0, 10), "servers"),
    (lambda: qn.closed_network([0.1, 0.2], [1, "x"], 1.0, 10), "servers"),
    (lambda: qn.closed_network([0.1, 0.2], 1, -1.0, 10), "think_time"),
    (lambda: qn.closed_network([0.1, 0.2], 1, 1.0, 0), "population"),
    (lambda: qn.closed_network([0.1, 0.2], 1, 1.0, 2.5), "population"),
    (lambda: qn.closed_network([0.1, 0.2], 1, 1.0, 5, method="magic"), "method"),
    (lambda: qn.closed_network([[0.1, 0.2]] * 3, 1, [1.0, 2.0], 5), "think_time"),
    (lambda: qn.closed_network([0.0, 0.0], 1, 0.0, 5), "demands"),
    (lambda: qn.open_network(-1.0, [1.0], [0.1], 1), "arrival_rate"),
    (lambda: qn.open_network(1.0, [1.0, 2.0], [0.1], 1), "visits, service_times"),
    (lambda: qn.open_network(1.0, [1.0], [0.0], 1), "service_times"),
    (lambda: qn.amva([[0.1, 0.2]], [1, 0], 1.0, [3]), "servers"),
    (lambda: qn.amva([[0.1, 0.2]], 1, 1.0, [2.5]), "populations"),
    (lambda: qn.multiclass_mva([[0.1, 0.2]], [1, 3], 1.0, [2]), "servers"),
    (lambda: qn.LoadDependentRate.from_values([1.0, -2.0]), "multipliers"),
    (lambda: qn.LoadDependentRate.multi_server(0), "servers"),
    (lambda: qn.LoadDependentRate.saturating(-1.0, 1.0, 4), "peak"),
    (lambda: qn.path_response_time_quantile(1.2, [qn.Sojourn.mmc(1, 2)]), "q"),
    (lambda: qn.path_response_time_quantile(0.5, []), "stations"),
    (lambda: qn.Sojourn.mmc(-1.0, 2.0), "arrival_rate"),
    (lambda: qn.Sojourn(1.5, 1.0, 1.0), "wait_probability"),
    (lambda: qn.traffic_equations([1.0, 1.0], [[0.5, 0.6], [0.0, 0.0]]), "routing"),
]


@pytest.mark.parametrize("call, name", BAD_NETWORK)
def test_bad_network_input_names_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        call()
