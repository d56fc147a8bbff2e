"""The hardware catalog: its own sanity, loading by name and path, bad input."""

from __future__ import annotations

import textwrap

import pytest

import perfmodel
from perfmodel.inputs import catalog as cat
from perfmodel.inputs.errors import CatalogError, UnknownNameError

REQUIRED_PLATFORMS = {
    "power8-s821lc-10c",
    "power8-s821lc-8c-test",
    "power8-s822lc-16c-prod",
    "power8-s822lc-22c-analytics",
    "x86-dl380-e5-2630v4",
    "x86-epyc-7351p",
    "kunpeng-r722",
    "x86-ceph-osd-c220m5",
}
REQUIRED_DEVICES = {
    "nvme-1p6tb-generic",
    "pblaze5-700-4tb",
    "sata-ssd-800gb",
    "micron-6500-ion-30tb",
    "intel-p4500-4tb",
    "intel-optane-p4800x-375gb",
}
REQUIRED_NETWORKS = {"eth-1g", "eth-10g", "eth-25g", "eth-40g"}


def test_catalog_has_the_issue_platforms_devices_networks():
    assert REQUIRED_PLATFORMS <= set(perfmodel.list_platforms())
    assert REQUIRED_DEVICES <= set(perfmodel.list_devices())
    assert REQUIRED_NETWORKS <= set(perfmodel.list_networks())


@pytest.mark.parametrize("pid", sorted(cat.default_catalog().platforms))
def test_platform_sanity(pid):
    p = perfmodel.load_platform(pid)
    assert p.cores == p.sockets * p.cores_per_socket
    assert p.threads == p.cores * p.threads_per_core
    assert p.threads_per_core in p.smt_modes
    assert 1 <= p.numa_nodes <= p.cores
    assert 1e9 <= p.base_hz <= 6e9  # a server core clocks between 1 and 6 GHz
    ram_per_core_gib = p.ram_bytes / 2**30 / p.cores
    assert 1 <= ram_per_core_gib <= 64, f"{pid}: {ram_per_core_gib:.1f} GiB per core"
    assert p.storage, f"{pid} has no storage"
    # SMT modes are consistent within an architecture family (Kunpeng 920's 2024 parts, e.g. the
    # 7285Z, run two threads per core; POWER9 scale-out parts run SMT4)
    expected_modes = {
        "power8": [(1, 2, 4, 8)],
        "power9": [(1, 2, 4), (1, 2, 4, 8)],
        "power10": [(1, 2, 4, 8)],
        "x86": [(1, 2), (1,), (2,)],  # (2,): a VM whose vCPUs are pinned on sibling pairs
        "kunpeng": [(1,), (1, 2)],
        "arm": [(1,)],
    }[p.arch]
    assert p.smt_modes in expected_modes


@pytest.mark.parametrize("did", sorted(cat.default_catalog().devices))
def test_device_sanity(did):
    d = perfmodel.load_device(did)
    assert d.capacity_bytes >= 1e10  # a 10 GB placeholder at least (in-memory stores)
    if d.interface == "sata":
        assert (d.hardware_queues, d.queue_depth_limit) == (1, 32)  # AHCI: one queue, NCQ 32
        assert d.seq_read_bytes_s <= 600e6  # SATA 6 Gb/s line rate after 8b/10b
    else:
        assert d.hardware_queues > 1
    # Little's law at the spec sheet's peak: parallelism ~ IOPS x latency
    little = d.read_iops_4k * d.read_latency_s
    assert 0.2 <= d.internal_parallelism / little <= 5
    # flash answers within a millisecond; spinning disks and cloud HDD volumes (corpus) within 50 ms
    # (and the in-memory placeholder of Redis / memcached figures, a DRAM copy, within a microsecond)
    assert 1e-7 <= d.read_latency_s <= (1e-3 if d.read_iops_4k > 10_000 else 5e-2)


def test_known_values_convert_to_si():
    p8 = perfmodel.load_platform("power8-s821lc-10c")
    assert (p8.cores, p8.threads_per_core, p8.threads, p8.arch) == (10, 8, 80, "power8")
    assert p8.ram_bytes == 128 * 2**30
    x86 = perfmodel.load_platform("x86-dl380-e5-2630v4")
    assert (x86.cores, x86.threads_per_core, x86.threads) == (10, 2, 20)
    assert x86.base_hz == pytest.approx(2.2e9)
    kp = perfmodel.load_platform("kunpeng-r722")
    assert (kp.sockets, kp.cores, kp.threads_per_core, kp.numa_nodes) == (2, 96, 1, 4)
    assert kp.cores_per_numa_node == 24
    sata = perfmodel.load_device("sata-ssd-800gb")
    assert sata.interface == "sata"
    net = perfmodel.load_network("eth-40g")
    assert net.bandwidth_bytes_s == pytest.approx(40e9 / 8)


def test_unknown_name_lists_valid_names():
    with pytest.raises(UnknownNameError) as info:
        perfmodel.load_platform("power9-nonexistent")
    message = str(info.value)
    assert "power9-nonexistent" in message
    assert "power8-s821lc-10c" in message and "kunpeng-r722" in message
    with pytest.raises(UnknownNameError, match="intel-p4500-4tb"):
        perfmodel.load_device("nope")


USER_PLATFORM = """
references:
  mine: "my lab notes, 2026"
platforms:
  - id: my-box
    name: My test box
    arch: x86
    sockets: 1
    cores_per_socket: 12
    cores: 12
    threads_per_core: 2
    smt_modes: [1, 2]
    threads: 24
    numa_nodes: 1
    base_ghz: 2.5
    ram_gib: 96
    network: eth-10g
    storage:
      - {device: my-ssd, count: 2, layout: raid0}
    sources: {sockets: mine, cores_per_socket: mine, cores: mine, threads_per_core: mine,
              threads: "derived: cores x threads_per_core", numa_nodes: mine,
              base_ghz: mine (spec), ram_gib: "assumption: typical"}
devices:
  - id: my-ssd
    name: My SSD
    interface: nvme
    capacity_gb: 1920
    hardware_queues: 32
    queue_depth_limit: 1024
    internal_parallelism: 40
    read_iops_4k: 400000
    write_iops_4k: 100000
    seq_read_mbs: 3000
    seq_write_mbs: 2000
    read_latency_us: 90
    write_latency_us: 20
    sources: {capacity_gb: mine, hardware_queues: mine, queue_depth_limit: mine,
              internal_parallelism: mine, read_iops_4k: mine, write_iops_4k: mine,
              seq_read_mbs: mine, seq_write_mbs: mine, read_latency_us: mine, write_latency_us: mine}
"""


def test_user_yaml_file_loads(tmp_path):
    path = tmp_path / "mybox.yaml"
    path.write_text(USER_PLATFORM)
    p = perfmodel.load_platform(path)
    assert (p.id, p.cores, p.threads) == ("my-box", 12, 24)
    assert p.storage[0].device == "my-ssd" and p.storage[0].count == 2
    assert p.ram_bytes == 96 * 2**30
    assert perfmodel.load_platform(str(path)).id == "my-box"


def _broken(tmp_path, old, new):
    assert old in USER_PLATFORM
    path = tmp_path / "broken.yaml"
    path.write_text(USER_PLATFORM.replace(old, new, 1))
    with pytest.raises(CatalogError) as info:
        perfmodel.load_platform(path)
    return str(info.value)


@pytest.mark.parametrize(
    ("old", "new", "field", "says"),
    [
        ("    cores: 12\n", "    cores: 0\n", "cores", "positive"),
        ("    cores: 12\n", "    cores: -4\n", "cores", "positive"),
        ("    threads: 24\n", "    threads: 20\n", "threads", "cores x threads_per_core"),
        ("    cores: 12\n", "    cores: 10\n", "cores", "sockets x cores_per_socket"),
        ('ram_gib: "assumption: typical"', "ram_gib: nowhere", "sources.ram_gib", "references"),
        (" numa_nodes: mine,", "", "numa_nodes", "sources"),
        ("{device: my-ssd,", "{device: no-such-ssd,", "storage[0].device", "unknown device"),
        ("network: eth-10g", "network: eth-7g", "network", "unknown network"),
        ("    base_ghz: 2.5\n", "    base_ghz: fast\n", "base_ghz", "number"),
        ("    arch: x86\n", "    arch: sparc\n", "arch", "must be one of"),
        ("    base_ghz: 2.5\n", "    base_ghz: 2.5\n    frequency: 3\n", "frequency", "unknown key"),
        (
            "    arch: x86\n",
            "    arch: x86\n    microarchitecture: netburst\n",
            "microarchitecture",
            "unknown core",
        ),
        ("    arch: x86\n", "    arch: x86\n    microarchitecture: zen4\n", "microarchitecture", "sources"),
    ],
)
def test_bad_platform_yaml_names_file_entry_and_field(tmp_path, old, new, field, says):
    message = _broken(tmp_path, old, new)
    assert "broken.yaml" in message
    assert f"field '{field}'" in message
    assert says in message


def _clocks(tmp_path, turbo, all_core):
    """USER_PLATFORM with a turbo and an all-core clock [GHz], each with a source."""
    text = USER_PLATFORM.replace(
        "    base_ghz: 2.5\n", f"    base_ghz: 2.5\n    turbo_ghz: {turbo}\n    all_core_ghz: {all_core}\n", 1
    ).replace("base_ghz: mine (spec),", "base_ghz: mine (spec), turbo_ghz: mine, all_core_ghz: mine,", 1)
    path = tmp_path / "clocks.yaml"
    path.write_text(text)
    return perfmodel.load_platform(path)


def test_an_all_core_clock_between_base_and_turbo_is_taken(tmp_path):
    p = _clocks(tmp_path, 3.5, 3.0)
    assert (p.base_hz, p.all_core_hz, p.turbo_hz) == (2.5e9, 3.0e9, 3.5e9)


@pytest.mark.parametrize(
    ("turbo", "all_core", "field"),
    [(3.5, 3.6, "all_core_ghz"), (3.5, 2.4, "all_core_ghz"), (2.0, 2.5, "turbo_ghz")],
)
def test_clocks_out_of_order_are_refused(tmp_path, turbo, all_core, field):
    with pytest.raises(CatalogError, match=f"field '{field}'"):
        _clocks(tmp_path, turbo, all_core)


def test_malformed_yaml_names_the_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("platforms:\n  - id: x\n    cores: [1,\n")
    with pytest.raises(CatalogError, match=r"bad\.yaml:\d+: .*not valid YAML"):
        perfmodel.load_platform(path)


def test_duplicate_ids_are_rejected(tmp_path):
    path = tmp_path / "dup.yaml"
    body = USER_PLATFORM.split("devices:")[0]
    path.write_text(body + body.split("platforms:")[1] + "devices:" + USER_PLATFORM.split("devices:")[1])
    with pytest.raises(CatalogError, match="duplicate id"):
        perfmodel.load_platform(path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothere.yaml"):
        perfmodel.load_platform(tmp_path / "nothere.yaml")


def test_every_shipped_entry_cites_sources():
    catalog = cat.default_catalog()
    for entry in [*catalog.platforms.values(), *catalog.devices.values(), *catalog.networks.values()]:
        assert entry.sources, entry.id
        for field_, ref in entry.sources.items():
            assert isinstance(ref, str) and ref.strip(), (entry.id, field_)


def test_tables_render_in_catalog_units():
    table = cat.platforms_table()
    row = table.set_index("id").loc["power8-s821lc-10c"]
    assert row["threads"] == 80 and row["ram_gib"] == 128
    assert row["message_exit_us"] != row["message_exit_us"]  # NaN: bare metal counts no VM exits
    guest = table.set_index("id").loc["x86-epyc-9124-sevsnp-30vcpu", "message_exit_us"]
    assert guest == pytest.approx(1.69 * 3.72, rel=1e-12)
    dev = cat.devices_table().set_index("id")
    assert set(REQUIRED_DEVICES) <= set(dev.index)


def test_yaml_file_with_two_platforms_is_ambiguous(tmp_path):
    text = USER_PLATFORM.replace("  - id: my-box", "  - id: my-box", 1)
    second = textwrap.indent(
        USER_PLATFORM.split("platforms:\n")[1].split("devices:")[0].replace("my-box", "my-box-2"), ""
    )
    path = tmp_path / "two.yaml"
    path.write_text(text.replace("devices:", second + "devices:", 1))
    with pytest.raises(CatalogError, match="exactly one platform"):
        perfmodel.load_platform(path)
