"""Discrete-event simulation of the station networks :func:`perfmodel.predict` solves.

The analytic engine gives means exactly but tails only approximately; the
simulator is the ground truth for tails, replica order statistics, flush
bursts and shard imbalance, and the tool for configurations outside what the
formulas cover. It runs exactly the networks of :func:`perfmodel.model.predict.build_model`
(no second way to describe a system).

Modules
-------
distributions  service times by mean and SCV (deterministic, exponential,
               gamma, lognormal, empirical), with analytic moments
config         :class:`SimConfig`: one configuration as plain numbers, from a
               ``NodeModel`` row or a hand-built ``StationNetwork``
engine         the SimPy engine (closed / open clients, FCFS c-server stations,
               replication with a consistency-level wait, explicit flushes)
fast           the compiled Kiefer-Wolfowitz / Lindley recursion for open tandems
results        per-request records, per-replication metrics, t intervals
run            :func:`simulate` and :func:`simulate_config`

See docs/simulator.md for the method and the analytic-versus-simulated errors.
"""

from perfmodel.sim.config import SimConfig, config_from_model, config_from_network
from perfmodel.sim.distributions import (
    Deterministic,
    Distribution,
    Empirical,
    Exponential,
    Gamma,
    Lognormal,
    from_moments,
)
from perfmodel.sim.engine import run_simpy
from perfmodel.sim.fast import lindley, run_fast
from perfmodel.sim.results import Records, records_frame, replication_metrics, t_interval
from perfmodel.sim.run import SimulationResult, replication_rng, simulate, simulate_config

__all__ = [
    "Deterministic",
    "Distribution",
    "Empirical",
    "Exponential",
    "Gamma",
    "Lognormal",
    "Records",
    "SimConfig",
    "SimulationResult",
    "config_from_model",
    "config_from_network",
    "from_moments",
    "lindley",
    "records_frame",
    "replication_metrics",
    "replication_rng",
    "run_fast",
    "run_simpy",
    "simulate",
    "simulate_config",
    "t_interval",
]
