"""A request message's socket work depends on its transport (catalog network ``message_cost_share``):
kernel TCP, on a NIC or over loopback, is the unit ``cpu_cycles_message`` is calibrated in; a unix
socket skips the TCP/IP layers and costs ``s`` of it (``torusware-redis-uds``: 0.44, derived from a
single-threaded Redis's printed rates). Checked against the closed form on the demands and on a
saturated server, on the load generator's mirror, for monotonicity, in the catalog's bounds, and
against the corpus rows that name their socket."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import perfmodel
from perfmodel.inputs.errors import CatalogError
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

PLATFORM = "arm-graviton4-c8g-8xlarge"
SHARE = 0.44


def _workload(read_fraction=1.0, iodepth=1, clients=64):
    op = {1.0: "read", 0.0: "write"}.get(read_fraction, "mixed")
    return Workload(operation=op, read_fraction=read_fraction, object_bytes=64, dataset_bytes=1e9,
                    clients=clients, iodepth=iodepth, replication_factor=1)  # fmt: skip


def _build(network, system="memcached", read_fraction=1.0, iodepth=1, clients=64, **knobs):
    w = _workload(read_fraction, iodepth, clients)
    return chain.build(PLATFORM, w, system=system, params="default", network=network, **knobs)


def test_the_catalog_prices_a_unix_socket_below_tcp():
    assert perfmodel.load_network("unix-socket").message_cost_share == SHARE
    for name in perfmodel.list_networks():
        share = perfmodel.load_network(name).message_cost_share
        assert 0 < share <= 1
        if name != "unix-socket":
            assert share == 1.0, name  # TCP, on a NIC or over loopback: the unit


@pytest.mark.parametrize("iodepth", [1, 4, 32])
def test_a_unix_sockets_message_costs_its_share_of_tcps(iodepth):
    """``(s m + e) / p`` per command: the share scales the socket work only."""
    p = perfmodel.load_parameters("default")
    m = p["cpu_cycles_message[memcached]"]
    tcp, uds = (_build(n, iodepth=iodepth).inputs for n in ("loopback", "unix-socket"))
    assert chain._message_cycles(tcp)[0] == pytest.approx(m / iodepth, rel=1e-12)
    assert chain._message_cycles(uds)[0] == pytest.approx(SHARE * m / iodepth, rel=1e-12)
    assert chain._message_cycles(uds, 1000.0)[0] == pytest.approx((SHARE * m + 1000.0) / iodepth, rel=1e-12)


def test_a_co_located_load_generator_sends_over_the_same_socket():
    """The load generator's mirror of the message shrinks with the server's; its mirror of the
    command does not."""
    p = perfmodel.load_parameters("default")
    m, c = p["cpu_cycles_message[memcached]"], p["cpu_cycles_read[memcached]"]
    tcp, uds = (_build(n, iodepth=2, client_colocated=True).inputs for n in ("loopback", "unix-socket"))
    assert chain.client_cycles(tcp)[0] == pytest.approx(m / 2 + c, rel=1e-12)
    assert chain.client_cycles(uds)[0] == pytest.approx(SHARE * m / 2 + c, rel=1e-12)


@pytest.mark.parametrize("iodepth", [1, 8])
def test_the_demand_and_the_saturated_rate_follow_the_closed_form(iodepth):
    """memcached GETs take no lock, so the threads' clock is the same on both sockets: the CPU
    demand falls by exactly ``(1 - s) m / p`` cycles at that clock, and CPU-bound throughput rises
    by the ratio of the demands."""
    p = perfmodel.load_parameters("default")
    tcp, uds = (_build(n, iodepth=iodepth, thread_cap=4) for n in ("loopback", "unix-socket"))
    assert tcp.cpu.thread_hz[0] == uds.cpu.thread_hz[0]
    saved = (1 - SHARE) * p["cpu_cycles_message[memcached]"] / iodepth / tcp.cpu.thread_hz[0]
    assert tcp.demands.cpu_read[0] - uds.demands.cpu_read[0] == pytest.approx(saved, rel=1e-9)
    w = _workload(iodepth=iodepth, clients=4096)
    x = {
        n: perfmodel.predict(PLATFORM, w, system="memcached", params="default", network=n, thread_cap=4)[
            "throughput_ops_s"
        ].iloc[0]
        for n in ("loopback", "unix-socket")
    }
    assert x["unix-socket"] / x["loopback"] == pytest.approx(
        tcp.demands.cpu_read[0] / uds.demands.cpu_read[0], rel=1e-5
    )


@settings(max_examples=25, deadline=None)
@given(
    f=st.sampled_from([0.0, 0.5, 1.0]),
    clients=st.sampled_from([8, 512]),
    system=st.sampled_from(["memcached", "redis"]),
    threads=st.sampled_from([1, 4, 16]),
    colocated=st.booleans(),
)
def test_a_unix_socket_is_never_slower_and_pipelining_shrinks_its_gain(
    f, clients, system, threads, colocated
):
    def run(network, iodepth):
        w = _workload(f, iodepth, clients)
        return perfmodel.predict(PLATFORM, w, system=system, params="default", network=network,
                                 thread_cap=threads, client_colocated=colocated).iloc[0]  # fmt: skip

    gain = {}
    for iodepth in (1, 64):
        tcp, uds = run("loopback", iodepth), run("unix-socket", iodepth)
        assert uds["throughput_ops_s"] >= tcp["throughput_ops_s"] * (1 - 1e-9)
        assert uds["latency_mean_ms"] <= tcp["latency_mean_ms"] * (1 + 1e-9)
        gain[iodepth] = uds["throughput_ops_s"] / tcp["throughput_ops_s"]
    assert gain[64] <= gain[1] * (1 + 1e-9)


NETWORK = """\
references:
  mine: "my lab"
networks:
  - id: my-socket
    name: "a local socket"
    gbps: 80
    latency_us: 1
    message_cost_share: {share}
    sources: {{gbps: mine, latency_us: mine, message_cost_share: mine}}
"""


def test_a_user_network_sets_its_share(tmp_path):
    path = tmp_path / "net.yaml"
    path.write_text(NETWORK.format(share=0.5))
    assert perfmodel.load_network(path).message_cost_share == 0.5
    path.write_text(NETWORK.format(share=0.5).replace("    message_cost_share: 0.5\n", ""))
    assert perfmodel.load_network(path).message_cost_share == 1.0  # unset: TCP


@pytest.mark.parametrize(("share", "says"), [(1.5, "<= 1"), (0.001, ">= 0.01"), (0, "positive")])
def test_a_share_outside_its_bounds_is_named(tmp_path, share, says):
    path = tmp_path / "net.yaml"
    path.write_text(NETWORK.format(share=share))
    with pytest.raises(CatalogError) as info:
        perfmodel.load_network(path)
    assert "message_cost_share" in str(info.value) and says in str(info.value)


def test_corpus_rows_name_the_socket_their_source_names():
    """Rows on ``unix-socket`` say so in their notes; rows whose notes say unix socket and not TCP
    are on it (metadata from the source, not a fitted choice)."""
    data = perfmodel.load_benchmarks()
    text = (data["notes"].fillna("") + " " + data["source"].fillna("")).str.lower()
    on = data["network_id"].eq("unix-socket")
    assert on.sum() >= 200
    assert text[on].str.contains("unix socket|unix domain socket").all()
    says = text.str.contains("unix socket|unix domain socket") & ~text.str.contains("tcp")
    assert (data.loc[says, "network_id"] == "unix-socket").all()


@pytest.mark.parametrize("network", ["loopback", "unix-socket"])
def test_a_single_threaded_redis_serves_at_its_clock_over_command_and_message(network):
    """Saturated on one thread: ``hz / (c + stall + s m)`` commands per second, ``s`` the transport's
    share (1 over TCP), so the unix socket's gain is ``(c + stall + m) / (c + stall + s m)``."""
    p = perfmodel.load_parameters("default")
    s = perfmodel.load_network(network).message_cost_share
    w = _workload(iodepth=1, clients=4096)
    m = chain.build(PLATFORM, w, system="redis", params="default", network=network, thread_cap=1)
    hz = m.cpu.thread_hz[0]
    stall = m.cpu.dram_stall[0] * hz / m.cpu.usl_efficiency[0]
    cycles = p["cpu_cycles_read[redis]"] + stall + s * p["cpu_cycles_message[redis]"]
    x = perfmodel.predict(PLATFORM, w, system="redis", params="default", network=network, thread_cap=1)
    assert x["throughput_ops_s"].iloc[0] == pytest.approx(hz / cycles, rel=1e-5)
