"""Commits that wait for more than one log flush (system spec ``log_flushes``, knob ``log_flushes``):
MySQL with its binary log on (the 8.0 default, sync_binlog=1) flushes the redo log's prepare record and
then the binary log, one after the other. Checked in closed form on the log station's demand and on
the recorded single-client commits that show it."""

from pathlib import Path

import numpy as np
import pytest

import perfmodel
from perfmodel.evidence.figure_plan import figure_config
from perfmodel.evidence.recorded import corpus_benchmarks
from perfmodel.inputs.systems import load_system
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

PLATFORM = "x86-dl380-e5-2630v4"
LOG = chain.IX["log"]


def _model(system="mysql", **knobs):
    w = Workload(operation="write", read_fraction=0.0, object_bytes=200, dataset_bytes=1e9, clients=1,
                 replication_factor=1)  # fmt: skip
    return chain.build(PLATFORM, w, nodes=1, system=system, params="default", **knobs)


def test_mysql_commits_wait_two_flushes_postgresql_one():
    assert load_system("mysql").log_flushes == 2 and "log_flushes" in load_system("mysql").sources
    assert load_system("postgresql").log_flushes == 1 and load_system("opengauss").log_flushes == 1


def test_flushes_without_a_redo_log_are_refused(tmp_path):
    import yaml

    from perfmodel.inputs.errors import DataError

    doc = yaml.safe_load(Path(load_system("mysql").path).read_text())
    doc.update(id="mysql-data-sync", sync_writes_to="data")
    path = tmp_path / "mysql-data-sync.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(DataError, match="log_flushes.*needs sync_writes_to: log"):
        load_system(path)


def test_each_flush_in_a_vm_also_pays_the_vm_io_path():
    params = perfmodel.load_parameters("default").values
    virt = params["virt_io_overhead_s[untuned]"]
    one, two = (_model(log_flushes=k, virtualization="untuned").net.d_write[0, LOG] for k in (1, 2))
    latency = _model().devices.data.write_latency[0]
    assert two - one == pytest.approx(latency + virt, rel=1e-9)
    # the k flushes in turn, each exponential: the log station's SCV is 1 / k
    assert _model(log_flushes=2).net.scv[0, LOG] == pytest.approx(0.5)
    assert _model("postgresql").net.scv[0, LOG] == pytest.approx(1.0)


@pytest.mark.parametrize("system", ["mysql", "postgresql"])
def test_each_flush_costs_the_devices_write_latency(system):
    one, two, three = (_model(system, log_flushes=k).net.d_write[0, LOG] for k in (1, 2, 3))
    latency = _model(system).devices.data.write_latency[0]  # bare metal: no VM I/O path
    assert two - one == pytest.approx(latency, rel=1e-9)
    assert three - two == pytest.approx(latency, rel=1e-9)
    default = _model(system).net.d_write[0, LOG]
    assert default == pytest.approx(two if system == "mysql" else one, rel=1e-12)


def test_a_single_client_update_waits_both_flushes_on_the_cloud_volume():
    """mysqlonarm 2020, sysbench oltp_update_index / non_index at 1 thread on a 16,500-IOPS cloud
    volume: 328 (Arm) and 373 (x86) transactions/s, 2.7-3.0 ms each. One flush per commit predicted
    654 tps (1.5 ms); the redo and binary-log flushes in turn predict within 15% of both. A weak
    check of the count, not of the flush time: the volume's 1 ms write latency is an assumption
    (data/hardware/corpus_devices_sql.yaml) and the calibrated set saw these figures; with the
    priors alone two flushes still land nearer than one."""
    rows = corpus_benchmarks()
    rows = rows[rows.figure_id.str.match(r"mysqlonarm-2020-x86-vs-arm-u(n)?i-(arm|x86)-1t$")]
    assert len(rows) == 4
    for row in rows.to_dict("records"):
        out = perfmodel.predict(**figure_config(row), params="calibrated").iloc[0]
        assert out.throughput_ops_s == pytest.approx(row["value"], rel=0.15), row["figure_id"]
        one = perfmodel.predict(**figure_config(row), params="calibrated", log_flushes=1).iloc[0]
        assert one.throughput_ops_s > 1.6 * row["value"]  # one flush: far too fast
        prior = perfmodel.predict(**figure_config(row), params="default").iloc[0].throughput_ops_s
        prior_one = perfmodel.predict(**figure_config(row), params="default", log_flushes=1).iloc[0]
        assert abs(np.log(prior / row["value"])) < abs(np.log(prior_one.throughput_ops_s / row["value"]))
