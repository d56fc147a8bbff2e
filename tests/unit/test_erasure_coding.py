"""Erasure-coded Ceph pools (issue 17): k + m chunks on writes, k sub-reads per read, read-modify-write
of partial stripes, (k + m) / k capacity -- checked against what those mechanisms imply in closed form."""

import numpy as np
import pytest

import perfmodel
from perfmodel.evidence import figure_plan as figures
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

PLATFORM = "x86-ceph-osd-c220m5"
NAN = float("nan")


def _model(io, read_fraction, ec_k, ec_m, rf=3, nodes=8, clients=8, **extra):
    w = Workload(read_fraction=read_fraction, object_bytes=io, io_bytes=io, dataset_bytes=1e12,
                 clients=clients, replication_factor=rf)  # fmt: skip
    knobs = {} if np.isnan(ec_k) else {"ec_k": ec_k, "ec_m": ec_m}
    return chain.build(PLATFORM, w, nodes=nodes, system="ceph", **knobs, **extra)


def test_replicated_pools_are_unchanged_by_the_ec_knobs_left_unset():
    a = _model(4096, 0.7, NAN, NAN)
    assert a.inputs.layout.read_chunks[0] == 1 and a.inputs.layout.shard_fraction[0] == 1
    assert a.inputs.layout.data_copies[0] == 3 and a.inputs.layout.rmw_reads[0] == 0


def test_a_full_stripe_write_sends_k_plus_m_chunks_of_one_kth():
    ec = _model(4 << 20, 0.0, 6, 2)
    pool = ec.inputs.layout
    assert pool.write_shards[0] == 8 and pool.acks_waited[0] == 8  # every shard acknowledges
    # the pool's replication factor and the workload's acks are never rewritten
    assert ec.inputs.cfg.replication_factor[0] == 3 and ec.inputs.cfg.acks[0] == 1
    assert pool.shard_fraction[0] == pytest.approx(1 / 6) and pool.rmw_reads[0] == 0
    rep = _model(4 << 20, 0.0, NAN, NAN)
    # bytes on the wire per write: (k + m) / k = 1.33x the object against 3x for three replicas
    net = chain.IX["network"]
    ec_bytes = ec.net.d_write[0, net] * pool.write_shards[0]
    rep_bytes = rep.net.d_write[0, net] * rep.inputs.layout.write_shards[0]
    assert ec_bytes / rep_bytes == pytest.approx((8 / 6) / 3, rel=0.01)  # headers are 128 B of 4 MiB


def test_a_partial_write_reads_the_stripe_and_rewrites_one_chunk_and_the_coding_chunks():
    pool = _model(4096, 0.0, 6, 2).inputs.layout
    assert pool.write_shards[0] == 3  # the touched data chunk + m = 2 coding chunks
    assert pool.rmw_reads[0] == 6 and pool.shard_fraction[0] == 1


def test_a_read_is_k_sub_reads_each_an_osd_operation():
    params = perfmodel.load_parameters()
    # everything cached (data and onodes), so the difference is the sub-read operations alone
    ec = _model(4096, 1.0, 6, 2, clients=1, cache_bytes=1e13)
    rep = _model(4096, 1.0, NAN, NAN, clients=1, cache_bytes=1e13)
    assert ec.inputs.layout.read_chunks[0] == 6
    cpu = chain.IX["cpu"]
    # in reference cycles, each at its own clock: the pools' data per node differ (k + m over k
    # against 3 copies), and with it the share of accesses the NUMA penalty applies to
    extra = ec.net.d_read[0, cpu] * ec.cpu.thread_hz[0] - rep.net.d_read[0, cpu] * rep.cpu.thread_hz[0]
    # five more sub-read operations
    assert extra == pytest.approx(5 * params["cpu_cycles_read[ceph]"], rel=1e-9)


def test_capacity_overhead_is_k_plus_m_over_k():
    assert _model(4096, 1.0, 4, 2).inputs.layout.data_copies[0] == pytest.approx(1.5)


def test_network_bound_large_writes_gain_what_the_bytes_say():
    """4 MiB writes on links that saturate first: throughput scales with 1 / bytes on the wire."""
    w = Workload(read_fraction=0.0, object_bytes=4 << 20, io_bytes=4 << 20, dataset_bytes=1e12,
                 arrival_rate=1e9, replication_factor=3)  # fmt: skip
    # even placement (units huge): 8 shards on 8 nodes are balanced, 3 replicas would not be
    knobs = {"ec_k": [NAN, 6], "ec_m": [NAN, 2], "network": "eth-1g", "placement_units": 1e15}
    out = perfmodel.predict(PLATFORM, w, nodes=8, system="ceph", **knobs)
    assert out["saturated"].all() and (out["bottleneck"] == "network").all()
    ratio = out["throughput_ops_s"].iloc[1] / out["throughput_ops_s"].iloc[0]
    assert ratio == pytest.approx(3 / (8 / 6), rel=0.01)


def test_bad_profiles_are_named():
    w = Workload(read_fraction=1.0, object_bytes=4096, clients=1, replication_factor=1)
    with pytest.raises(ValueError, match="ec_k / ec_m"):
        perfmodel.predict(PLATFORM, w, nodes=8, system="ceph", ec_k=6)
    with pytest.raises(ValueError, match="erasure-coded shards exceed nodes"):
        perfmodel.predict(PLATFORM, w, nodes=4, system="ceph", ec_k=6, ec_m=2)
    assert np.isfinite(perfmodel.predict(PLATFORM, w, nodes=8, system="ceph", ec_k=6, ec_m=2)
                       ["throughput_ops_s"]).all()  # fmt: skip


def test_placement_error_names_what_cannot_be_placed_one_per_node():
    from perfmodel.model.chain import placement_error

    assert placement_error(3, 3) == ""
    assert placement_error(1, 3) == "replication_factor: 3 exceeds nodes (1)"
    assert (
        placement_error([4, 8], 1, [4, 6], [2, 2]) == "ec_k + ec_m: 6 erasure-coded shards exceed nodes (4)"
    )
    assert placement_error(8, 1, 6, 2) == "" and placement_error(0, 1) == "nodes: must be >= 1"
    # a figure's configuration is refused where it is built, with the predictor's words
    row = {"system": "ceph", "platform_id": "x86-xeon-8276m-2s-sepia-o05", "nodes": 1, "operation": "read",
           "read_fraction": 1.0, "io_bytes": 4096, "object_bytes": 4096, "clients": 1, "iodepth": 1,
           "ec_profile": "6+2", "level": "client"}  # fmt: skip
    with pytest.raises(ValueError, match="8 erasure-coded shards exceed nodes"):
        figures.figure_config(row)


def test_copies_per_node_lets_a_pool_live_on_one_host():
    """crush-failure-domain=osd: an EC 6+2 pool on one node is placed once the node may hold 8 chunks,
    and each node then carries every chunk's work (per-node load scales as k + m over nodes)."""
    from perfmodel.model.chain import placement_error

    assert placement_error(1, 1, 6, 2, copies_per_node=8) == ""
    assert placement_error(1, 3, copies_per_node=3) == ""
    assert placement_error(1, 1, 6, 2, copies_per_node=4) == (
        "ec_k + ec_m: 8 erasure-coded shards exceed nodes (1) x copies_per_node (4)"
    )
    w = Workload(read_fraction=0.0, object_bytes=4096, io_bytes=4096, clients=64, replication_factor=1)
    one = perfmodel.predict(
        "x86-ceph-osd-c220m5", w, nodes=1, system="ceph", ec_k=2, ec_m=1, copies_per_node=3
    )
    three = perfmodel.predict("x86-ceph-osd-c220m5", w, nodes=3, system="ceph", ec_k=2, ec_m=1)
    assert one.throughput_ops_s.iloc[0] < three.throughput_ops_s.iloc[0]  # one host does all three's work
    with pytest.raises(ValueError, match="copies_per_node"):
        perfmodel.predict("x86-ceph-osd-c220m5", w, nodes=1, system="ceph", ec_k=2, ec_m=1, copies_per_node=2)
    with pytest.raises(ValueError, match="copies_per_node"):  # a knob of the pools Ceph has, not Redis
        perfmodel.predict("x86-dl380-e5-2630v4", w, nodes=1, system="redis", copies_per_node=2)
