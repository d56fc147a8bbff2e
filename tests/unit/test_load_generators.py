"""The load generator's own CPU per request, by tool (data/load_generators.yaml, knob client_time)."""

import csv
import statistics

import pytest

from perfmodel.evidence import figure_plan
from perfmodel.inputs import load_generators as lg
from perfmodel.inputs._data import data_dir
from perfmodel.inputs.errors import UnknownNameError
from perfmodel.inputs.params import load_parameters
from perfmodel.model.predict import predict

# the printed totals each cost is derived from: CPU time (total) [s] over 10,000,000 inserts
# (pkolaczk/latte @0eb287f5 BENCHMARKS.md lines 87-93)
LATTE_TABLE_CPU_S = {"cassandra-stress": 364.20, "nosqlbench": 784.63, "latte": 64.54}


@pytest.mark.parametrize("tool", sorted(LATTE_TABLE_CPU_S))
def test_cost_is_the_printed_cpu_time_over_the_requests(tool):
    entry = lg.cost(tool)
    assert entry.cpu_us_per_request == pytest.approx(LATTE_TABLE_CPU_S[tool] / 1e7 * 1e6, abs=5e-3)
    assert entry.clock_ghz == 3.0 and "@0eb287f5a67fafc364a2922e0b70e6ca636c6871" in entry.source
    assert f"{LATTE_TABLE_CPU_S[tool]:.2f} s" in entry.source  # the quote carries the printed number


def test_redis_benchmark_cost_is_the_median_of_this_projects_runs():
    text = (data_dir() / "microbench" / "redis-benchmark-cpu.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    median = statistics.median(float(r["cpu_us_per_request"]) for r in rows)
    assert lg.cost("redis-benchmark").cpu_us_per_request == pytest.approx(median, abs=5e-3)
    assert lg.cost("redis-benchmark").clock_ghz * 1e3 == float(rows[0]["nominal_mhz"])


def test_a_jvm_loader_costs_more_than_a_native_one_on_the_same_machine():
    """The one run that measured three tools on one machine: c-s 5.6x, NoSQLBench 12.2x latte."""
    native = lg.cost("latte").cpu_us_per_request
    assert lg.cost("cassandra-stress").cpu_us_per_request / native == pytest.approx(5.64, abs=0.01)
    assert lg.cost("nosqlbench").cpu_us_per_request / native == pytest.approx(12.16, abs=0.01)


def test_client_time_in_seconds_and_tools_without_a_cost():
    assert lg.client_time_s("cassandra-stress") == pytest.approx(36.42e-6)
    for tool in ("ycsb", "memtier", "pgbench", "sysbench", "fio", "db_bench"):
        assert lg.client_time_s(tool) is None, tool
    assert len(set(lg.names())) == len(lg.names())
    with pytest.raises(UnknownNameError, match="load generator 'ycsb-cql'"):
        lg.cost("ycsb-cql")


# --- the knob client_time and the column load_generator -----------------------------------------

#: a Cassandra write run of the Azure lab (corpus_azure-cass-vm-experiments-2019.csv), as a figure row
ROW = {
    "system": "cassandra", "platform_id": "x86-azure-ds14-v2-4xp30",
    "device_id": "azure-premium-ssd-p30-1tib", "nodes": "6", "operation": "write", "read_fraction": "0",
    "object_bytes": "4090", "dataset_gb": "40.9",
    "clients": "1", "threads_per_client": "256", "replication_factor": "1", "consistency": "LOCAL_QUORUM",
    "access_pattern": "sequential",
}  # fmt: skip
#: the same lab's loader against one node: a closed loop of 4 threads (light load, Little's law exact)
LIGHT = {**ROW, "nodes": "1", "threads_per_client": "4", "consistency": "ONE"}


def _predict(row, **knobs):
    config = {**figure_plan.figure_config(row), **knobs}
    return predict(params=load_parameters("default"), **config).iloc[0]


def test_the_column_sets_the_tools_cost_as_the_knob():
    with_column = _predict({**ROW, "load_generator": "cassandra-stress", "client_cores": "16"})
    with_knob = _predict({**ROW, "client_cores": "16"}, client_time=36.42e-6)
    for column in ("throughput_ops_s", "latency_mean_ms", "latency_p99_ms", "util_cpu", "util_client"):
        assert with_column[column] == pytest.approx(with_knob[column], rel=1e-12), column
    assert with_column.util_client > 0
    config = figure_plan.figure_config({**ROW, "load_generator": "nosqlbench"})
    assert config["client_time"] == pytest.approx(78.46e-6, rel=1e-12)


def test_the_client_stations_utilisation_is_throughput_times_time_over_cores():
    for tool, cores in (("cassandra-stress", 16), ("nosqlbench", 8), ("latte", 1)):
        out = _predict({**ROW, "load_generator": tool, "client_cores": str(cores)})
        cost = lg.client_time_s(tool)
        # the utilisation law: U = X D / c
        assert out.util_client == pytest.approx(out.throughput_ops_s * cost / cores, rel=1e-9), tool
        assert out.util_client <= 1.0
    # NoSQLBench on one hardware thread: the load generator is the bottleneck, at its asymptote 1 / D
    one = _predict({**ROW, "load_generator": "nosqlbench", "client_cores": "1"})
    assert one.bottleneck == "client" and one.throughput_ops_s == pytest.approx(1 / 78.46e-6, rel=1e-2)


def test_on_its_own_cores_the_time_is_inside_the_latency_else_between_requests():
    """Little's law over the loop: N = X R with the station client, N = X (R + Z) without."""
    own = _predict({**LIGHT, "load_generator": "cassandra-stress", "client_cores": "16"})
    assert 4 == pytest.approx(own.throughput_ops_s * own.latency_mean_ms * 1e-3, rel=1e-6)
    think = _predict({**LIGHT, "load_generator": "cassandra-stress"})
    assert think.util_client == 0.0
    assert 4 == pytest.approx(think.throughput_ops_s * (think.latency_mean_ms * 1e-3 + 36.42e-6), rel=1e-6)
    bare = _predict(LIGHT)
    # outside the latency: it only lightens the load
    assert think.latency_mean_ms <= bare.latency_mean_ms and think.throughput_ops_s <= bare.throughput_ops_s
    assert own.latency_mean_ms > bare.latency_mean_ms


def test_on_the_servers_cores_the_time_is_the_servers_cycles():
    """A co-located loader's time is server CPU: no think time, and at one thread (no queueing,
    no SMT sharing) the latency grows by about its time at the server's clock."""
    one = {**LIGHT, "threads_per_client": "1", "client_colocated": "true"}
    bare = _predict(one)  # the peer-protocol estimate of chain.client_cycles
    tool = _predict({**one, "load_generator": "latte"})
    assert tool.util_client == 0.0
    assert 1 == pytest.approx(tool.throughput_ops_s * tool.latency_mean_ms * 1e-3, rel=1e-6)  # Z = 0
    assert tool.util_cpu > bare.util_cpu * (tool.throughput_ops_s / bare.throughput_ops_s)
    dearer = _predict({**one, "load_generator": "nosqlbench"})
    # per request the server's CPU takes (78.46 - 6.454) us more at the base clock, scaled by the
    # thread's clock: between half and twice that on any catalog platform
    extra_ms = dearer.latency_mean_ms - tool.latency_mean_ms
    assert 0.5 * (78.46 - 6.454) * 1e-3 < extra_ms < 2.0 * (78.46 - 6.454) * 1e-3


@pytest.mark.parametrize("tool", ["ycsb", "sysbench", "memtier", "pgbench"])
def test_a_tool_without_a_cost_changes_nothing(tool):
    for extra in ({}, {"client_cores": "16"}, {"client_colocated": "true"}):
        bare, named = _predict({**ROW, **extra}), _predict({**ROW, **extra, "load_generator": tool})
        pd_cols = ("throughput_ops_s", "latency_mean_ms", "latency_p99_ms", "util_cpu", "util_client")
        assert all(bare[c] == named[c] for c in pd_cols), (tool, extra)
    assert "client_time" not in figure_plan.figure_config({**ROW, "load_generator": tool})
