"""``perfmodel probe``: parsers on captured outputs, CPU identification, the collector's notes on
what it could not read, and the written file loading in the catalog (tests/data/probe/README.md
names each fixture's source)."""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from perfmodel.cli import main
from perfmodel.inputs import catalog, microarch
from perfmodel.inputs.probe import Choices, assemble, collect, to_yaml
from perfmodel.inputs.probe import parse as p
from perfmodel.inputs.probe.assemble import GENERIC_DEVICES, drive_kind, match_device
from perfmodel.inputs.probe.collect import Raw
from perfmodel.inputs.probe.identify import identify, table

DATA = Path(__file__).resolve().parents[1] / "data" / "probe"
WORKLOADS = Path(__file__).resolve().parents[2] / "data" / "workloads"
MIB = 2**20


def text(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def lscpu(name: str) -> dict:
    return p.lscpu_summary(p.lscpu_pairs(text(name)))


@pytest.fixture
def epyc_root(tmp_path) -> Path:
    """util-linux's EPYC 7451 dump (a subset): its /proc and /sys under a folder."""
    with tarfile.open(DATA / "util-linux-epyc7451-root.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "x86_64-epyc_7451"


# --------------------------------------------------------------------------------------------
# lscpu
# --------------------------------------------------------------------------------------------


def test_lscpu_text_and_json_of_this_vm_say_the_same():
    flat = lscpu("kvm-emr-2vcpu-lscpu.txt")
    js = p.lscpu_summary(p.lscpu_json_pairs(text("kvm-emr-2vcpu-lscpu-json.txt")))
    keys = (
        "sockets",
        "cores_per_socket",
        "cores",
        "threads_per_core",
        "numa_nodes",
        "cpus",
        "family",
        "caches",
    )
    assert {k: flat[k] for k in keys} == {k: js[k] for k in keys}
    assert (flat["sockets"], flat["cores"], flat["threads_per_core"], flat["numa_nodes"]) == (1, 2, 1, 1)
    assert flat["caches"]["L3"] == (300 * MIB, 1) and flat["caches"]["L2"] == (4 * MIB, 2)
    assert flat["hypervisor"] == "KVM" and flat["max_hz"] is None


def test_lscpu_of_a_two_socket_epyc_with_eight_numa_nodes():
    s = lscpu("util-linux-epyc7451-lscpu.txt")
    assert (s["sockets"], s["cores_per_socket"], s["cores"], s["threads_per_core"]) == (2, 24, 48, 2)
    assert s["numa_nodes"] == 8 and s["cpus"] == 96
    assert s["caches"]["L3"] == (128 * MIB, 16) and s["caches"]["L1d"] == (1.5 * MIB, 48)
    assert s["max_hz"] == 2.3e9 and s["family"] == 23 and s["model"] == "1"


def test_lscpu_of_a_power7_lpar_counts_numa_nodes_that_hold_cpus():
    s = lscpu("util-linux-power7-64cpu-lscpu.txt")
    assert (s["sockets"], s["cores_per_socket"], s["threads_per_core"], s["cpus"]) == (16, 1, 4, 64)
    assert s["numa_nodes"] == 1  # "NUMA node(s): 2", but node1 holds no CPU
    assert s["caches"]["L1d"] == (512 * 1024, 16)
    found = identify({"machine": "ppc64", "model_name": s["model_name"]})
    assert found.arch is None and "POWER7" in found.label  # not a catalog family: probe asks for arch


def test_lscpu_indented_layout_of_a_power9():
    s = lscpu("power9-blackbird-lscpu.txt")
    assert (s["sockets"], s["cores_per_socket"], s["cores"], s["threads_per_core"]) == (1, 8, 8, 4)
    assert s["caches"]["L3"] == (80 * MIB, 8) and s["numa_nodes"] == 1
    assert (s["max_hz"], s["min_hz"]) == (3.8e9, 2.166e9)
    found = identify({"machine": s["architecture"], "model_name": s["model_name"]})
    assert (found.arch, found.core) == ("power9", "power9")


def test_lscpu_flat_layout_of_a_kunpeng_prints_one_cache_instance():
    s = lscpu("kunpeng920-4826-lscpu.txt")
    assert (s["sockets"], s["cores_per_socket"], s["cores"], s["threads_per_core"]) == (2, 48, 96, 1)
    assert s["numa_nodes"] == 4
    assert s["caches"]["L3"] == (32 * MIB, None)  # one instance's size; the count is not printed
    assert s["vendor"] is None and s["model_name"] is None  # this old lscpu named no Arm CPU


def test_lscpu_of_an_arm_box_with_clusters_instead_of_sockets():
    s = lscpu("a64fx-lscpu.txt")
    assert s["sockets"] is None and (s["clusters"], s["cores_per_cluster"], s["cores"]) == (4, 12, 48)
    assert s["numa_nodes"] == 4
    found = identify({"machine": "aarch64", "vendor": s["vendor"], "model_name": s["model_name"]})
    assert (found.arch, found.core) == ("arm", None)


def test_cache_and_size_texts():
    assert p.lscpu_cache("1.5 MiB (48 instances)") == (1.5 * MIB, 48)
    assert p.lscpu_cache("48 KiB (1 instance)") == (48 * 1024, 1)
    assert p.lscpu_cache("25600K") == (25 * MIB, None)
    assert p.byte_size("307200K") == 300 * MIB and p.byte_size("n/a") is None


# --------------------------------------------------------------------------------------------
# /proc, sysfs
# --------------------------------------------------------------------------------------------


def test_cpuinfo_of_this_vm():
    c = p.cpuinfo_summary(p.cpuinfo_blocks(text("kvm-emr-2vcpu-cpuinfo.txt")))
    assert (c["logical_cpus"], c["vendor"], c["family"], c["model"], c["stepping"]) == (
        2,
        "GenuineIntel",
        6,
        207,
        2,
    )
    assert c["mhz"] == 2100.0 and {"hypervisor", "constant_tsc"} <= c["flags"]
    assert (c["sockets"], c["cores"]) == (1, 2)


def test_cpuinfo_of_a_kunpeng_names_implementer_and_part():
    c = p.cpuinfo_summary(p.cpuinfo_blocks(text("kunpeng920-taishan2280-cpuinfo-excerpt.txt")))
    assert (c["logical_cpus"], c["implementer"], c["part"]) == (4, 0x48, 0xD01)
    assert (identify({"machine": "aarch64", **c}).arch, identify({"machine": "aarch64", **c}).core) == (
        "kunpeng",
        "taishan-v110",
    )


def test_cpuinfo_of_a_power9():
    c = p.cpuinfo_summary(p.cpuinfo_blocks(text("power9-cpuinfo-excerpt.txt")))
    assert c["logical_cpus"] == 12 and c["power_clock_hz"] == 2233e6
    assert identify({"machine": "ppc64le", **c}).core == "power9"


def test_meminfo_is_in_kibibytes():
    line = next(x for x in text("kvm-emr-2vcpu-meminfo.txt").splitlines() if x.startswith("MemTotal:"))
    assert p.meminfo_bytes(text("kvm-emr-2vcpu-meminfo.txt"))["MemTotal"] == int(line.split()[1]) * 1024


def test_cpu_lists_and_masks():
    assert p.cpu_list("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11] and p.cpu_list(" \n") == []
    assert p.cpu_mask("00000000,003f0000,0000003f") == [*range(6), *range(48, 54)]


def test_sysfs_of_the_epyc_dump_agrees_with_its_lscpu(epyc_root):
    raw = collect(epyc_root)
    topo = p.sysfs_topology(raw.cpus)
    assert (topo["cpus"], topo["sockets"], topo["cores"], topo["threads_per_core"]) == (96, 2, 48, 2)
    assert p.sysfs_caches(raw.caches)["L3"] == (128 * MIB, 16)
    rows = {int(k[9:-7]): set(p.cpu_list(v)) for k, v in p.lscpu_pairs(text("util-linux-epyc7451-lscpu.txt"))
            if re.fullmatch(r"NUMA node\d+ CPU\(s\)", k)}  # fmt: skip
    assert {n: set(p.cpu_mask(t[5:])) for n, t in raw.nodes.items()} == rows
    assert raw.cpufreq["scaling_driver"] == "acpi-cpufreq" and raw.smt_control == "on"


def test_net_speed():
    assert p.net_speed_bps("25000\n") == 25e9
    assert p.net_speed_bps("-1") is None and p.net_speed_bps("") is None and p.net_speed_bps(None) is None


# --------------------------------------------------------------------------------------------
# drives
# --------------------------------------------------------------------------------------------


def test_lsblk_json_of_this_vm():
    drives = {d.name: d for d in p.lsblk_json_drives(text("kvm-emr-2vcpu-lsblk-json.txt"))}
    vda = drives["vda"]
    assert vda.size_bytes == 274877906944 and vda.holds_root and vda.rotational is True
    assert drive_kind(vda) == "virtual" and drives["zram0"].size_bytes == 0


def test_lsblk_pairs_leave_out_ram_loop_floppy_and_empty_disks():
    raw = Raw(lsblk=text("ironic-lsblk-pairs.txt"), lsblk_json=False)
    draft = assemble(raw, Choices(platform_id="t"))
    listed = [line.split(":")[0] for line in draft.inventory if line.startswith("drive ")]
    assert listed == ["drive sda", "drive sdb", "drive sdc", "drive sdd"]
    assert "storage" in draft.missing  # no transport in this sample: no catalog device fits


def test_nvme_id_ctrl():
    n = p.nvme_id_ctrl(text("nvme-id-ctrl-wdc-sn730.json"))
    assert n["model"] == "WDC PC SN730 SDBQNTY-256G-1001" and n["serial"] == "1951B3444502"
    assert n["capacity_bytes"] == 256060514304 and n["namespaces"] == 1


def test_a_drive_gets_the_catalog_device_of_its_part_number_else_its_kind_generic():
    devices = dict(catalog.default_catalog().devices)
    pm9a3 = p.Drive("nvme0n1", "disk", 3.84e12, False, "SAMSUNG MZQL23T8HCLS-00A07", "nvme")
    assert match_device(pm9a3, "nvme", devices)[0] == "samsung-pm9a3-3p84tb"
    sn730 = p.Drive("nvme1n1", "disk", 256e9, False, "WDC PC SN730 SDBQNTY-256G-1001", "nvme")
    device, why = match_device(sn730, "nvme", devices)
    assert device == GENERIC_DEVICES["nvme"] and why.startswith("assumption:")
    hdd = p.Drive("sdb", "disk", 4e12, True, "ST4000NM0035", "sata")
    assert drive_kind(hdd) == "hdd" and match_device(hdd, "hdd", devices)[0] == "hdd-unspecified"
    assert match_device(p.Drive("vdb", "disk", 1e11, True, "", ""), "virtual", devices) == (None, "")


# --------------------------------------------------------------------------------------------
# CPU identification
# --------------------------------------------------------------------------------------------


def test_cpu_ids_name_known_cores_and_families():
    for row in table()["x86"] + table()["arm"] + table()["power"]:
        assert microarch.check(row["core"]) and row["fit"] in ("same", "nearest")
        assert row.get("arch", "x86") in catalog.ARCHES


@pytest.mark.parametrize(
    ("cpu", "core", "fit"),
    [
        ({"vendor": "GenuineIntel", "family": 6, "model": 0x55, "stepping": 4}, "skylake-sp", "same"),
        ({"vendor": "GenuineIntel", "family": 6, "model": 0x55, "stepping": 7}, "cascade-lake", "same"),
        ({"vendor": "GenuineIntel", "family": 6, "model": 79, "stepping": 1}, "broadwell-ep", "same"),
        ({"vendor": "GenuineIntel", "family": 6, "model": 207, "stepping": 2}, "sapphire-rapids", "nearest"),
        ({"vendor": "AuthenticAMD", "family": 23, "model": 1}, "zen1", "same"),
        ({"vendor": "AuthenticAMD", "family": 23, "model": 0x31}, "zen2", "same"),
        ({"vendor": "AuthenticAMD", "family": 25, "model": 0x11}, "zen4", "same"),
        ({"vendor": "GenuineIntel", "family": 6, "model": 0x9A}, None, ""),  # a hybrid client part
    ],
)
def test_x86_identification(cpu, core, fit):
    found = identify({"machine": "x86_64", **cpu})
    assert (found.arch, found.core, found.fit) == ("x86", core, fit)


# --------------------------------------------------------------------------------------------
# the collector's notes: missing tools, NICs without a speed
# --------------------------------------------------------------------------------------------


def _runner(answers: dict[str, str], missing=(), slow=()):
    """A stand-in for :func:`collect.run_command`: canned stdout per command, a missing binary
    (FileNotFoundError), or one that never answers (TimeoutExpired)."""

    def run(argv, timeout_s):
        if argv[0] in missing:
            raise FileNotFoundError(argv[0])
        if argv[0] in slow:
            raise subprocess.TimeoutExpired(argv, timeout_s)
        key = " ".join(argv)
        return (0, answers[key], "") if key in answers else (1, "", f"{argv[0]}: cannot do {key}\n")

    return run


def _fake_root(tmp_path: Path, speed: str | None) -> Path:
    """A root with one NVMe controller, a NIC ``eth0`` (``speed`` None: its read is refused,
    as a virtual NIC's is), a loopback, /proc/cpuinfo and /proc/meminfo."""
    root = tmp_path / "root"
    (root / "sys/class/nvme/nvme0").mkdir(parents=True)
    for nic, device in (("eth0", True), ("lo", False)):
        (root / f"sys/class/net/{nic}").mkdir(parents=True)
        (root / f"sys/class/net/{nic}/operstate").write_text("up\n")
        if device:
            (root / f"sys/class/net/{nic}/device").mkdir()
    if speed is not None:
        (root / "sys/class/net/eth0/speed").write_text(speed + "\n")
    (root / "proc").mkdir()
    (root / "proc/cpuinfo").write_text(text("kvm-emr-2vcpu-cpuinfo.txt"))
    (root / "proc/meminfo").write_text(text("kvm-emr-2vcpu-meminfo.txt"))
    return root


def test_a_missing_nvme_cli_and_a_nic_without_speed_are_said(tmp_path):
    answers = {
        "lscpu -J": text("kvm-emr-2vcpu-lscpu-json.txt"),
        "lsblk -J -b -O": text("kvm-emr-2vcpu-lsblk-json.txt"),
    }
    raw = collect(_fake_root(tmp_path, None), _runner(answers, missing=("nvme",)), run_commands=True)
    failed = {a.what: a.reason for a in raw.attempts if not a.used}
    assert failed["nvme id-ctrl /dev/nvme0 -o json"] == "nvme is not installed"
    assert failed["lscpu --version"].startswith("failed: lscpu: cannot do")
    draft = assemble(raw, Choices(platform_id="t"))
    assert "nvme id-ctrl /dev/nvme0 -o json: nvme is not installed" in draft.unread
    assert any(u.startswith("network: eth0 reports no speed") for u in draft.unread)
    assert set(draft.missing) == {"network", "storage"} and "--network" in draft.missing["network"]


def test_nvme_id_ctrl_names_a_namespace_lsblk_left_unnamed(tmp_path):
    """A synthetic lsblk (one NVMe namespace without a model, as some lsblk versions print it)
    and the SN730's real ``nvme id-ctrl``: the drive is named by its controller."""
    lsblk = '{"blockdevices": [{"name": "nvme0n1", "type": "disk", "size": 256060514304, "rota": false,'
    lsblk += ' "model": null, "tran": "nvme", "subsystems": "block:nvme:pci", "rm": false}]}'
    answers = {
        "lsblk -J -b -O": lsblk,
        "nvme id-ctrl /dev/nvme0 -o json": text("nvme-id-ctrl-wdc-sn730.json"),
    }
    raw = collect(_fake_root(tmp_path, "10000"), _runner(answers), run_commands=True)
    draft = assemble(raw, Choices(platform_id="t"))
    assert "nvme nvme0: 'WDC PC SN730 SDBQNTY-256G-1001', 256 GB, firmware 11170101" in draft.inventory
    assert draft.entry["storage"] == [{"device": GENERIC_DEVICES["nvme"], "count": 1, "layout": "single"}]
    assert "SN730" in draft.entry["sources"]["storage"] and "nvme id-ctrl" in draft.references["probe-nvme"]


def test_a_command_that_does_not_answer_is_said(tmp_path):
    raw = collect(
        _fake_root(tmp_path, "10000"), _runner({}, slow=("lscpu",)), timeout_s=0.5, run_commands=True
    )
    assert ("lscpu -J", "no answer within 0.5 s") in [(a.what, a.reason) for a in raw.attempts]
    draft = assemble(raw, Choices(platform_id="t"))  # the topology then comes from /proc/cpuinfo
    assert (draft.entry["sockets"], draft.entry["cores"], draft.entry["threads_per_core"]) == (1, 2, 1)
    assert draft.entry["network"] == "eth-10g" and draft.entry["sources"]["network"].startswith(
        "probe-sys-net"
    )


def test_a_nic_speed_without_a_catalog_link_gets_a_network_entry_of_the_file(tmp_path):
    answers = {"lscpu -J": text("kvm-emr-2vcpu-lscpu-json.txt")}
    raw = collect(_fake_root(tmp_path, "50000"), _runner(answers), run_commands=True)
    draft = assemble(raw, Choices(platform_id="probe-fifty", devices=("nvme-1p6tb-generic",)))
    (own,) = draft.networks
    assert draft.entry["network"] == own["id"] and own["gbps"] == 50.0
    assert own["latency_us"] == catalog.load_network("eth-40g").latency_s * 1e6  # the nearest speed's
    path = tmp_path / "fifty.yaml"
    path.write_text(to_yaml(draft))
    assert catalog.load_platform(path).network_spec().bandwidth_bytes_s == 50e9 / 8


# --------------------------------------------------------------------------------------------
# whole files: a snapshot, and this machine
# --------------------------------------------------------------------------------------------


def test_the_epyc_snapshot_asks_for_what_it_lacks_then_loads(epyc_root, tmp_path, capsys):
    out = tmp_path / "epyc.yaml"
    assert main(["probe", "--root", str(epyc_root), "--out", str(out), "--id", "epyc-dump"]) == 2
    err = capsys.readouterr().err
    for name in ("base_ghz", "ram_gib", "network", "storage"):
        assert name in err
    assert yaml.safe_load(out.read_text())["platforms"][0]["id"] == "epyc-dump"  # the draft is written
    (epyc_root / "proc/meminfo").write_text("MemTotal:       131072000 kB\n")
    argv = ["probe", "--root", str(epyc_root), "--out", str(out), "--id", "epyc-dump", "--base-ghz", "2.3",
            "--network", "eth-10g", "--device", "pblaze5-700-4tb"]  # fmt: skip
    assert main(argv) == 0
    box = catalog.load_platform(out)
    assert (box.sockets, box.cores, box.threads_per_core, box.numa_nodes) == (2, 48, 2, 8)
    assert (box.arch, box.microarchitecture, box.smt_modes) == ("x86", "zen1", (1, 2))
    assert box.l3_bytes == 128 * MIB and box.base_hz == 2.3e9 and box.ram_bytes == 131072000 * 1024
    assert box.turbo_hz != box.turbo_hz  # acpi-cpufreq's highest clock is not taken for the boost clock


def test_the_brand_string_gives_the_base_clock():
    raw = Raw(lscpu=text("e5-2630v4-2s-lscpu.txt"))
    draft = assemble(raw, Choices(platform_id="t"))
    assert draft.entry["base_ghz"] == 2.2 and "brand string" in draft.entry["sources"]["base_ghz"]
    assert (draft.entry["arch"], draft.entry["microarchitecture"]) == ("x86", "broadwell-ep")
    assert "turbo_ghz" not in draft.entry and "ram_gib" in draft.missing


def test_an_id_of_the_shipped_catalog_is_refused():
    with pytest.raises(ValueError, match="x86-dl380-e5-2630v4"):
        assemble(Raw(), Choices(platform_id="x86-dl380-e5-2630v4"))


def test_probe_this_machine_and_predict_on_it(tmp_path, capsys):
    """End to end: the file probe writes here loads in the catalog like a shipped platform, its
    CPU count is the OS's, and ``perfmodel predict`` runs on it."""
    out = tmp_path / "here.yaml"
    argv = ["probe", "--out", str(out), "--id", "probe-test-here", "--network", "eth-10g",
            "--device", "nvme-1p6tb-generic"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    here = catalog.load_platform(out)
    doc = yaml.safe_load(out.read_text())
    assert here.id == "probe-test-here" and set(doc["references"]) >= {"probe-cpuinfo"}
    if len(os.sched_getaffinity(0)) == os.cpu_count():  # every CPU online and ours
        assert here.threads == os.cpu_count()
    capsys.readouterr()
    assert (
        main(["predict", str(WORKLOADS / "scylla-read-heavy.yaml"), "--platform", str(out), "--workers", "1"])
        == 0
    )
    assert "probe-test-here" in capsys.readouterr().out
