"""The load generator's own CPU per request, by tool (data/load_generators.yaml, knob client_time)."""

import csv
import statistics

import pytest

from perfmodel.inputs import load_generators as lg
from perfmodel.inputs._data import data_dir
from perfmodel.inputs.errors import UnknownNameError

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
    assert lg.cost("latte").cycles_per_request == pytest.approx(19_362)
    for tool in ("ycsb", "memtier", "pgbench", "sysbench", "fio", "db_bench"):
        assert lg.client_time_s(tool) is None, tool
    assert len(set(lg.names())) == len(lg.names())
    with pytest.raises(UnknownNameError, match="load generator 'ycsb-cql'"):
        lg.cost("ycsb-cql")
