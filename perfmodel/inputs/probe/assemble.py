"""The assembler of ``perfmodel probe``: the collected texts become a platform in the catalog's schema.

Every value written names where it was read (``sources``: a ``references`` key per command or
file, with the field it came from) or says it was derived or given by the user. A value the
machine cannot tell is not invented: an optional field stays blank (the catalog's documented
default applies: no turbo credit, the family's default core, no VM exits counted) and is listed
as not read; a required one (``base_ghz``, ``ram_gib``, ``network``, ``storage``, the
topology) is left out and named in :attr:`Draft.missing` with what to fill in.

Drives become catalog device ids: a drive whose model carries a catalog device's part number
gets that device; another NVMe, SATA SSD or hard disk gets the catalog's generic device of its
kind, said to be a placeholder. Probe never writes a device's IOPS or latency: they come from the
catalog, or from a fio run written as a device entry. NICs become the platform's network: the
catalog's Ethernet link of the fastest NIC's speed, or a network entry of that speed in the file.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace

import perfmodel.inputs.probe.parse as parse
from perfmodel.inputs import catalog as hw
from perfmodel.inputs.probe.collect import NOT_DRIVES, Raw
from perfmodel.inputs.probe.identify import Identity, identify
from perfmodel.inputs.units import GIB, MIB

#: the catalog's generic device per kind of drive: placeholders of their class, sourced there
GENERIC_DEVICES = {"nvme": "nvme-1p6tb-generic", "sata-ssd": "sata-ssd-800gb", "hdd": "hdd-unspecified"}
#: each reference key of a probed file: (what it stands for, the attempts it covers by prefix)
REFERENCES = {
    "probe-lscpu": ("lscpu", "lscpu"),
    "probe-cpuinfo": ("/proc/cpuinfo", "/proc/cpuinfo"),
    "probe-meminfo": ("/proc/meminfo", "/proc/meminfo"),
    "probe-sys-memory": (
        "/sys/devices/system/memory (online blocks x block_size_bytes)",
        "/sys/devices/system/memory",
    ),
    "probe-sys-cpu": (
        "/sys/devices/system/cpu (cpu*/topology, cpu*/cache, cpu0/cpufreq, smt/control)",
        "/sys/devices/system/cpu",
    ),
    "probe-sys-node": ("/sys/devices/system/node (node*/cpulist)", "/sys/devices/system/node"),
    "probe-lsblk": ("lsblk", "lsblk"),
    "probe-sys-block": ("/sys/block/*/queue and /sys/block/*/mq", "/sys/block"),
    "probe-nvme": ("nvme id-ctrl -o json", "nvme id-ctrl"),
    "probe-sys-net": ("/sys/class/net/*/speed, operstate, device", "/sys/class/net"),
    "probe-dmi": ("/sys/class/dmi/id/sys_vendor, product_name", "/sys/class/dmi"),
}


@dataclass(frozen=True)
class Choices:
    """What the user gave ``perfmodel probe``: the platform ``id``, and values the machine
    cannot tell: ``network`` (a catalog network id), ``devices`` (catalog device ids, one per
    data drive), ``base_ghz``."""

    platform_id: str | None = None
    network: str | None = None
    devices: tuple[str, ...] = ()
    base_ghz: float | None = None


@dataclass
class Draft:
    """A probed platform: ``entry`` (the YAML platform entry, file units), ``references`` (key ->
    what was run or read, and when), ``networks`` (network entries of the file's own),
    ``missing`` (required field -> what to fill in), ``unread`` (what could not be read, or was
    left blank, and why) and ``inventory`` (the drives and NICs found)."""

    entry: dict = field(default_factory=dict)
    references: dict[str, str] = field(default_factory=dict)
    networks: list[dict] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)
    inventory: list[str] = field(default_factory=list)
    #: where and when the machine was read (``host 'db07', 2026-11-20T10:00:00Z``)
    origin: str = ""

    @property
    def complete(self) -> bool:
        """Whether every required field has a value (the file then loads in the catalog)."""
        return not self.missing

    def put(self, key: str, value, source: str) -> None:
        """Set ``key`` to ``value`` with its ``source`` (``probe-x, detail``, ``derived: ...``)."""
        self.entry[key] = value
        self.entry.setdefault("sources", {})[key] = source


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "machine"


# ---------------------------------------------------------------------------------------------
# CPU
# ---------------------------------------------------------------------------------------------


def cpu_facts(raw: Raw) -> dict:
    """lscpu's, /proc/cpuinfo's and sysfs's views of the CPU, parsed (empty where not read)."""
    lscpu = {}
    if raw.lscpu:
        pairs = parse.lscpu_json_pairs(raw.lscpu) if raw.lscpu_json else parse.lscpu_pairs(raw.lscpu)
        lscpu = parse.lscpu_summary(pairs)
    cpuinfo = parse.cpuinfo_summary(parse.cpuinfo_blocks(raw.cpuinfo)) if raw.cpuinfo else {}
    topo = parse.sysfs_topology(raw.cpus) if raw.cpus else {}
    return {"lscpu": lscpu, "cpuinfo": cpuinfo, "sysfs": topo}


def _first(
    facts: dict,
    key: str,
    order=(("lscpu", "probe-lscpu"), ("sysfs", "probe-sys-cpu"), ("cpuinfo", "probe-cpuinfo")),
):
    """The first source in ``order`` that knows ``key``: ``(value, reference key)``."""
    for view, ref in order:
        value = facts[view].get(key)
        if value is not None:
            return value, ref
    return None, ""


def topology(facts: dict, draft: Draft) -> None:
    """Sockets, cores, threads per core and threads; a disagreement between sources is noted."""
    sockets, s_ref = _first(facts, "sockets")
    cores, c_ref = _first(facts, "cores")
    if cores is None and facts["lscpu"].get("cores_per_socket") and sockets:
        cores, c_ref = facts["lscpu"]["cores_per_socket"] * sockets, "probe-lscpu"
    tpc, t_ref = _first(facts, "threads_per_core")
    ci = facts["cpuinfo"]
    if tpc is None and ci.get("logical_cpus") and ci.get("cores"):
        tpc, t_ref = ci["logical_cpus"] // ci["cores"], "probe-cpuinfo"
    for key, value in (("sockets", sockets), ("cores", cores), ("threads_per_core", tpc)):
        other = facts["sysfs"].get(key)
        if value is not None and other is not None and other != value:
            draft.unread.append(f"{key}: lscpu says {value}, sysfs topology {other} (lscpu's value kept)")
    if not (sockets and cores and tpc) or cores % sockets:
        what = f"sockets {sockets}, cores {cores}, threads per core {tpc}"
        for key in ("sockets", "cores_per_socket", "cores", "threads_per_core", "threads"):
            draft.missing[key] = (
                f"the CPU topology could not be read whole ({what}); fill it from the spec sheet"
            )
        return
    draft.put(
        "sockets", sockets, f"{s_ref}, Socket(s)" if s_ref == "probe-lscpu" else f"{s_ref}, physical packages"
    )
    draft.put("cores_per_socket", cores // sockets, f"derived: cores / sockets ({c_ref}, {s_ref})")
    draft.put(
        "cores",
        cores,
        f"{c_ref}, " + ("Core(s) per socket x Socket(s)" if c_ref == "probe-lscpu" else "cores"),
    )
    draft.put(
        "threads_per_core", tpc, f"{t_ref}, Thread(s) per core" if t_ref == "probe-lscpu" else f"{t_ref}"
    )
    draft.put("threads", cores * tpc, "derived: cores x threads_per_core")


def smt_modes(draft: Draft, arch: str | None, control: str | None) -> None:
    """SMT modes: SMT off (1) and the mode running; on x86 with SMT switchable, 2 as well."""
    tpc = draft.entry.get("threads_per_core")
    if tpc is None:
        return
    modes = {1, tpc} | ({2} if arch == "x86" and control in ("on", "off") else set())
    why = f"/sys/devices/system/cpu/smt/control '{control}'" if control else "no SMT control file"
    draft.put("smt_modes", sorted(modes), f"derived: the running mode ({tpc}) and SMT off (1); {why}")
    if arch and arch.startswith("power"):
        draft.unread.append(
            "smt_modes: other SMT modes of this POWER CPU are not read (ppc64_cpu --smt): add them"
        )


def identity(facts: dict, draft: Draft) -> Identity:
    """``arch``, ``cpu_model`` and ``microarchitecture`` (:func:`.identify.identify`)."""
    lscpu, ci = facts["lscpu"], facts["cpuinfo"]
    model = lscpu.get("model")
    cpu = {
        "machine": lscpu.get("architecture"),
        "vendor": lscpu.get("vendor") or ci.get("vendor"),
        "family": lscpu.get("family") if lscpu.get("family") is not None else ci.get("family"),
        "model": int(model) if model and str(model).isdigit() else ci.get("model"),
        "stepping": int(lscpu["stepping"])
        if str(lscpu.get("stepping", "")).isdigit()
        else ci.get("stepping"),
        "implementer": ci.get("implementer"),
        "part": ci.get("part"),
        "model_name": lscpu.get("model_name") or ci.get("model_name"),
    }
    found = identify(cpu)
    name_ref = "probe-lscpu" if lscpu.get("model_name") else "probe-cpuinfo"
    if cpu["model_name"]:
        draft.put("cpu_model", str(cpu["model_name"]), f"{name_ref}, Model name")
    if found.arch is None:
        draft.missing["arch"] = (
            f"{found.label} is none of the catalog's families {hw.ARCHES}; fill arch with "
            "the nearest (its SMT yield and per-GHz factor)"
        )
        return found
    draft.put("arch", found.arch, f"derived: {found.label}")
    if found.core:
        why = "is" if found.fit == "same" else "is nearest to"
        draft.put(
            "microarchitecture",
            found.core,
            f"derived: {found.label} {why} core {found.core} "
            f"(data/cpu_ids.yaml: {found.reference or 'power'})",
        )
        if found.fit == "nearest":
            draft.unread.append(
                f"microarchitecture: {found.label} has no score of its own in data/microarchitectures.yaml; "
                f"{found.core} is the nearest known core" + (f" ({found.note})" if found.note else "")
            )
    else:
        draft.unread.append(
            f"microarchitecture: {found.label} is not in data/cpu_ids.yaml; left blank (the "
            f"catalog uses the {found.arch} family's default core)"
        )
    return found


# ---------------------------------------------------------------------------------------------
# clocks, memory, caches, NUMA
# ---------------------------------------------------------------------------------------------


def clocks(raw: Raw, facts: dict, arch: str | None, draft: Draft, base_ghz: float | None) -> None:
    """``base_ghz`` from the first that holds it: the user's ``--base-ghz``, intel_pstate's
    ``base_frequency``, the ``@ x.xxGHz`` of an Intel brand string, ACPI CPPC's
    ``nominal_freq``, or -- on x86 without cpufreq and without APERF/MPERF, where
    /proc/cpuinfo's ``cpu MHz`` is the kernel's calibrated TSC clock, the rated (base) clock on
    Intel and AMD parts with an invariant TSC -- that. ``turbo_ghz`` only from a driver whose
    ``cpuinfo_max_freq`` is the highest boost clock (intel_pstate, amd-pstate)."""
    freq, ci = raw.cpufreq, facts["cpuinfo"]
    name = str(facts["lscpu"].get("model_name") or ci.get("model_name") or "")
    brand = re.search(r"@\s*([0-9.]+)\s*GHz", name)
    flags = ci.get("flags", set())
    tsc = (
        arch == "x86" and not freq and ci.get("mhz") and "aperfmperf" not in flags and "constant_tsc" in flags
    )
    candidates = [
        (base_ghz and base_ghz * 1e9, "assumption: given on the command line (perfmodel probe --base-ghz)"),
        (
            parse.khz_hz(freq.get("base_frequency")),
            "probe-sys-cpu, cpu0/cpufreq/base_frequency (intel_pstate)",
        ),
        (brand and float(brand.group(1)) * 1e9, f"probe-lscpu, the brand string '{name}'"),
        (
            parse._number(freq.get("nominal_freq_mhz")) and float(freq["nominal_freq_mhz"]) * 1e6,
            "probe-sys-cpu, cpu0/acpi_cppc/nominal_freq (ACPI CPPC nominal clock)",
        ),
        (
            tsc and ci["mhz"] * 1e6,
            "probe-cpuinfo, cpu MHz (no cpufreq, no APERF/MPERF: the kernel's calibrated "
            "TSC clock, which runs at the rated base clock on x86 parts with constant_tsc)",
        ),
    ]
    base, source = next(((hz, s) for hz, s in candidates if hz), (None, ""))
    if base:
        draft.put("base_ghz", round(base / 1e9, 3), source)
    else:
        seen = facts["lscpu"].get("max_hz") or ci.get("power_clock_hz")
        hint = f" (cpufreq's highest clock is {seen / 1e9:.3g} GHz, not the base)" if seen else ""
        draft.missing["base_ghz"] = (
            "the rated base clock could not be read"
            + hint
            + "; rerun with --base-ghz GHZ from the CPU's spec sheet"
        )
    driver = freq.get("scaling_driver", "")
    top = parse.khz_hz(freq.get("cpuinfo_max_freq"))
    if (
        top
        and base
        and top > base
        and driver in ("intel_pstate", "intel_cpufreq", "amd-pstate", "amd-pstate-epp")
    ):
        draft.put(
            "turbo_ghz", round(top / 1e9, 3), f"probe-sys-cpu, cpu0/cpufreq/cpuinfo_max_freq ({driver})"
        )
    else:
        why = f"driver {driver or 'none'}" + (f", highest clock {top / 1e9:.3g} GHz" if top else "")
        draft.unread.append(
            f"turbo_ghz: left blank ({why}; only intel_pstate / amd-pstate report the boost "
            "clock): no boost credited"
        )
    draft.unread.append(
        "all_core_ghz: the clock with every core busy is not readable at rest; left blank (base)"
    )


def memory(raw: Raw, draft: Draft) -> None:
    """``ram_gib``: online memory blocks x block size (installed RAM less firmware holes), else
    MemTotal (less again: the kernel's own reservations)."""
    if raw.memory_blocks:
        size, online = raw.memory_blocks
        total = int(size, 16) * online
        source = f"probe-sys-memory, {online} online blocks x {int(size, 16)} B"
    else:
        total = parse.meminfo_bytes(raw.meminfo).get("MemTotal") if raw.meminfo else None
        source = "probe-meminfo, MemTotal (a little below the RAM installed)"
    if total:
        draft.put("ram_gib", round(total / GIB, 2), source)
    else:
        draft.missing["ram_gib"] = "memory could not be read (/proc/meminfo); fill ram_gib [GiB]"


def caches(raw: Raw, facts: dict, draft: Draft, virtual: bool) -> None:
    """``l3_mib``: the last-level cache over all its instances (sysfs, else lscpu's sum)."""
    sysfs = parse.sysfs_caches(raw.caches) if raw.caches else {}
    levels = sorted((k for k in sysfs if k[1:].isdigit()), key=lambda k: int(k[1:]))
    if levels and int(levels[-1][1:]) >= 3:
        total, instances = sysfs[levels[-1]]
        draft.put(
            "l3_mib",
            round(total / MIB, 2),
            f"probe-sys-cpu, cpu*/cache {levels[-1]}, {instances} instance(s)",
        )
    else:
        size, instances = facts["lscpu"].get("caches", {}).get("L3", (None, None))
        if size and instances:
            draft.put("l3_mib", round(size / MIB, 2), f"probe-lscpu, L3 cache ({instances} instances)")
        else:
            draft.unread.append(
                "l3_mib: no L3 size over all its instances (old lscpu prints one instance); blank"
            )
    if virtual and "l3_mib" in draft.entry:
        draft.unread.append("l3_mib: a guest sees the host's L3, shared with other guests")


def numa(raw: Raw, facts: dict, draft: Draft) -> None:
    """``numa_nodes``: nodes holding CPUs (sysfs; else lscpu); memory-only nodes are not counted."""
    if raw.nodes:
        with_cpus = [n for n, t in raw.nodes.items() if _node_cpus(t)]
        draft.put(
            "numa_nodes",
            len(with_cpus) or 1,
            f"probe-sys-node, {len(with_cpus)} of {len(raw.nodes)} nodes hold CPUs",
        )
    elif facts["lscpu"].get("numa_nodes"):
        draft.put("numa_nodes", facts["lscpu"]["numa_nodes"], "probe-lscpu, NUMA node(s)")
    else:
        draft.put("numa_nodes", 1, "assumption: no NUMA information (a kernel without NUMA has one node)")


def _node_cpus(text: str) -> list[int]:
    return parse.cpu_mask(text[5:]) if text.startswith("mask:") else parse.cpu_list(text)


# ---------------------------------------------------------------------------------------------
# drives
# ---------------------------------------------------------------------------------------------


def drive_kind(drive: parse.Drive) -> str:
    """``nvme``, ``sata-ssd``, ``hdd``, ``virtual`` (a guest's disk: virtio, Xen, Hyper-V, a
    hypervisor's emulated SCSI) or ``other`` (USB, iSCSI, FC, unknown)."""
    text = f"{drive.subsystems} {drive.model}".lower()
    if drive.name.startswith(("vd", "xvd")) or re.search(r"virtio|vmbus|xen|qemu|vmware|virtual", text):
        return "virtual"
    if drive.name.startswith("nvme") or drive.transport == "nvme":
        return "nvme"
    if drive.transport in ("sata", "ata", "sas"):
        return "hdd" if drive.rotational else "sata-ssd"
    return "other"


def _part_numbers(device: hw.Device) -> set[str]:
    """Part numbers in a catalog device's model (``MZQL23T8HCLS``), none for a proxy's."""
    if "proxy" in device.model.lower() or device.vendor.lower().startswith("unnamed"):
        return set()
    tokens = re.split(r"[^A-Z0-9]+", device.model.upper())
    return {t for t in tokens if len(t) >= 8 and re.search(r"[A-Z]", t) and re.search(r"\d", t)}


def match_device(drive: parse.Drive, kind: str, devices: dict[str, hw.Device]) -> tuple[str | None, str]:
    """The catalog device for a drive and why: its part number's, else its kind's generic one."""
    probed = re.sub(r"[^A-Z0-9]", "", drive.model.upper())
    hits = [d for d in devices.values() if probed and any(p in probed for p in _part_numbers(d))]
    if hits:
        best = min(hits, key=lambda d: abs(math.log(max(drive.size_bytes, 1.0) / d.capacity_bytes)))
        return (
            best.id,
            f"derived: the model '{drive.model}' carries the part number of catalog device {best.id}",
        )
    generic = GENERIC_DEVICES.get(kind)
    if generic in devices:
        return generic, (
            f"assumption: the catalog's generic {kind} device for {drive.name} ('{drive.model}'): "
            "a placeholder; its IOPS and latency are not this drive's"
        )
    return None, ""


def _data_drives(raw: Raw, draft: Draft) -> list[parse.Drive]:
    """The whole disks that can hold data: not RAM/loop/optical, not removable, not empty; the
    disk holding ``/`` is left out when there are others."""
    if raw.lsblk is None:
        return []
    drives = parse.lsblk_json_drives(raw.lsblk) if raw.lsblk_json else parse.lsblk_pairs_drives(raw.lsblk)
    kept = [
        d
        for d in drives
        if d.kind == "disk" and not d.name.startswith(NOT_DRIVES) and d.size_bytes > 0 and not d.removable
    ]
    if len(kept) > 1 and any(d.holds_root for d in kept) and not all(d.holds_root for d in kept):
        system = [d.name for d in kept if d.holds_root]
        draft.unread.append(f"storage: {', '.join(system)} holds / (the system drive): left out")
        kept = [d for d in kept if not d.holds_root]
    return kept


def _with_id_ctrl(raw: Raw, drive: parse.Drive, draft: Draft) -> parse.Drive:
    """An NVMe namespace's drive with its controller's ``nvme id-ctrl`` model where lsblk had none;
    the controller's identity goes to the inventory."""
    ctrl = re.match(r"(nvme\d+)n\d+", drive.name)
    if not ctrl or ctrl.group(1) not in raw.nvme:
        return drive
    ident = parse.nvme_id_ctrl(raw.nvme[ctrl.group(1)])
    size = f"{ident['capacity_bytes'] / 1e9:.0f} GB" if ident["capacity_bytes"] else "capacity not reported"
    draft.inventory.append(f"nvme {ctrl.group(1)}: '{ident['model']}', {size}, firmware {ident['firmware']}")
    return drive if drive.model else replace(drive, model=ident["model"])


def storage(raw: Raw, draft: Draft, devices: dict[str, hw.Device], given: tuple[str, ...]) -> None:
    """``storage``: one slot per catalog device, from the user's ``--device`` ids or the drives."""
    drives = _data_drives(raw, draft)
    ids: list[str] = []
    reasons: list[str] = []
    unplaced: list[str] = []
    for drive in drives:
        drive = _with_id_ctrl(raw, drive, draft)
        kind = drive_kind(drive)
        queues = raw.block.get(drive.name, {})
        draft.inventory.append(
            f"drive {drive.name}: {kind}, {drive.size_bytes / 1e9:.1f} GB, model '{drive.model or '?'}', "
            f"rotational {queues.get('rotational', drive.rotational)}, "
            f"{queues.get('mq', '?')} hardware queues, "
            f"nr_requests {queues.get('nr_requests', '?')}"
        )
        device, why = match_device(drive, kind, devices)
        if device is None:
            unplaced.append(f"{drive.name} ({kind})")
        else:
            ids.append(device)
            reasons.append(why)
    if given:
        ids, reasons = list(given), ["assumption: given on the command line (perfmodel probe --device)"]
    elif unplaced or not ids:
        found = ", ".join(unplaced) or "no data drive"
        draft.missing["storage"] = (
            f"{found}: no catalog device fits (a guest's virtual disk performs as its host "
            "and its volume type do); rerun with --device ID (perfmodel devices lists them; "
            "repeat it per drive)"
        )
        return
    layout = "raid0" if any(d.layout == "raid0" for d in drives) and not given else "jbod"
    slots = [
        {"device": d, "count": n, "layout": layout if n > 1 else "single"} for d, n in Counter(ids).items()
    ]
    draft.put("storage", slots, "; ".join(dict.fromkeys(reasons)))
    if any(r.startswith("assumption: the catalog's generic") for r in reasons):
        draft.unread.append(
            "storage: drive performance is the catalog's, not measured here: run fio on the "
            "drive and write a device entry to model it"
        )


# ---------------------------------------------------------------------------------------------
# network
# ---------------------------------------------------------------------------------------------


def _links(networks: dict[str, hw.Network]) -> dict[float, str]:
    """The catalog's single Ethernet links by speed [b/s]: ``{1e9: 'eth-1g', ...}``."""
    return {n.bandwidth_bytes_s * 8: n.id for n in networks.values() if re.fullmatch(r"eth-\d+g", n.id)}


def nics(raw: Raw, draft: Draft) -> tuple[str, float] | None:
    """The fastest physical NIC that is up and reports a speed: ``(name, bits per second)``."""
    best = None
    for name, info in raw.nics.items():
        speed = parse.net_speed_bps(info.get("speed"))
        kind = "physical" if info.get("physical") == "yes" else "software"
        if kind == "software" and not speed:
            continue  # loopback, bridges, tunnels: no link of their own
        shown = f"{speed / 1e9:g} Gb/s" if speed else "speed unknown"
        draft.inventory.append(
            f"nic {name}: {kind}, driver {info.get('driver', '?')}, {info.get('operstate') or '?'}, {shown}"
        )
        if kind == "physical" and not speed:
            draft.unread.append(f"network: {name} reports no speed (a virtual NIC, or the link is down)")
        if (
            kind == "physical"
            and speed
            and info.get("operstate") in ("up", "unknown")
            and (not best or speed > best[1])
        ):
            best = (name, speed)
    return best


def network(
    raw: Raw, draft: Draft, networks: dict[str, hw.Network], given: str | None, platform_id: str
) -> None:
    """``network``: the user's ``--network``, the catalog link of the fastest NIC's speed, or a
    network entry of that speed in this file (its one-way latency the nearest catalog link's)."""
    best = nics(raw, draft)
    if given:
        draft.put("network", given, "assumption: given on the command line (perfmodel probe --network)")
        return
    if best is None:
        draft.missing["network"] = (
            "no physical NIC that is up reports its speed; rerun with --network ID (the link "
            "the cluster will use: " + ", ".join(sorted(_links(networks).values())) + ")"
        )
        return
    name, speed = best
    links = _links(networks)
    if speed in links:
        draft.put("network", links[speed], f"probe-sys-net, {name} speed {speed / 1e6:g} Mb/s")
        return
    near = min(links, key=lambda s: abs(math.log(s / speed)))
    own = f"{platform_id}-net"
    draft.networks.append(
        {
            "id": own,
            "name": f"{speed / 1e9:g} Gb/s link ({name}, probed)",
            "gbps": speed / 1e9,
            "latency_us": networks[links[near]].latency_s * 1e6,
            "sources": {
                "gbps": f"probe-sys-net, {name} speed {speed / 1e6:g} Mb/s",
                "latency_us": f"assumption: one way as catalog network {links[near]} (the nearest speed; "
                "probe does not measure latency)",
            },
        }
    )
    draft.put(
        "network", own, f"probe-sys-net, {name} speed {speed / 1e6:g} Mb/s (no catalog link of that speed)"
    )


# ---------------------------------------------------------------------------------------------
# the platform
# ---------------------------------------------------------------------------------------------


def _virtual(facts: dict, draft: Draft) -> bool:
    """Whether this is a guest; its VM exits are then unmeasured (blank: none counted)."""
    hypervisor = facts["lscpu"].get("hypervisor")
    if not hypervisor and "hypervisor" not in facts["cpuinfo"].get("flags", set()):
        return False
    draft.unread.append(
        f"vm_exit_us, vm_exits_per_message: a guest ({hypervisor or 'hypervisor flag'}) whose VM "
        "exits are not measured: left blank (the model counts none)"
    )
    return True


def _references(raw: Raw, draft: Draft) -> None:
    """One reference per source used or cited: the commands run and files read, the host, the date."""
    texts = [
        *draft.entry.get("sources", {}).values(),
        *(s for n in draft.networks for s in n["sources"].values()),
    ]
    cited = {re.split(r"[\s(;,]", text, maxsplit=1)[0] for text in texts}
    used = [a.what for a in raw.attempts if a.used]
    where = f"on host '{raw.host}'" if raw.root in ("/", "") else f"in the snapshot {raw.root}"
    draft.origin = f"{where}, {raw.when}"
    for key, (what, prefix) in REFERENCES.items():
        ran = [u for u in used if u.startswith(prefix)]
        if key not in cited and not ran:
            continue
        if ran and not prefix.startswith("/"):  # a command: as it was run
            what = "; ".join(dict.fromkeys(ran))
        if key == "probe-lscpu" and raw.lscpu_version:
            what += f" ({raw.lscpu_version})"
        draft.references[key] = f"{what}, read by perfmodel probe {draft.origin}"


def assemble(raw: Raw, choices: Choices | None = None, catalog: hw.Catalog | None = None) -> Draft:
    """The platform entry ``raw`` describes, what the user must still fill in, and what could not
    be read (:class:`Draft`)."""
    catalog = catalog or hw.default_catalog()
    choices = choices or Choices()
    draft = Draft()
    platform_id = choices.platform_id or f"probe-{_slug(raw.host)}"
    if platform_id in catalog.platforms:
        raise ValueError(
            f"--id {platform_id}: the catalog has a platform of that id; give your machine another"
        )
    facts = cpu_facts(raw)
    draft.entry["id"] = platform_id
    cpu = identity(facts, draft)
    vendor, product = raw.dmi.get("sys_vendor"), raw.dmi.get("product_name")
    draft.entry["name"] = f"{raw.host}: {product or 'server'} ({draft.entry.get('cpu_model', 'CPU unknown')})"
    if vendor:
        draft.put("vendor", vendor, "probe-dmi, sys_vendor")
    if product:
        draft.put("model", product, "probe-dmi, product_name")
    topology(facts, draft)
    smt_modes(draft, cpu.arch, raw.smt_control)
    numa(raw, facts, draft)
    clocks(raw, facts, cpu.arch, draft, choices.base_ghz)
    memory(raw, draft)
    caches(raw, facts, draft, _virtual(facts, draft))
    network(raw, draft, dict(catalog.networks), choices.network, platform_id)
    storage(raw, draft, dict(catalog.devices), choices.devices)
    draft.unread.append(
        "mem_bandwidth_gbs: needs the DIMM channels and speed (dmidecode -t memory, as root); blank"
    )
    draft.unread += [f"{a.what}: {a.reason}" for a in raw.attempts if not a.used]
    draft.entry["notes"] = (
        f"Probed by perfmodel probe on {raw.when}. Not read or left blank: "
        + "; ".join(u.split(":", 1)[0] for u in draft.unread[:12])
        + ". See the comments at the "
        "top of this file."
    )
    _references(raw, draft)
    return draft
