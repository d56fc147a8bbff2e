"""Pure parsers for ``perfmodel probe``: each takes the text of one source and returns plain data.

No parser reads a file or runs a command (:mod:`.collect` does); each accepts the text exactly as
the tool or kernel printed it, and returns numbers in SI units (bytes, hertz) or counts. A value
the text does not hold comes back as ``None``, never as a guess.

Sources and their formats:

* ``lscpu`` (util-linux): the classic flat ``Key: value`` list (cache sizes per instance, e.g.
  ``L3 cache: 32768K``) and the indented layout of util-linux 2.37+ (cache sizes summed over
  instances, e.g. ``L3: 128 MiB (16 instances)``); ``lscpu -J`` (``{"lscpu": [{"field",
  "data", "children"}]}``).
* ``/proc/cpuinfo``: one ``key : value`` block per logical CPU (x86, Arm and POWER keys).
* ``/proc/meminfo``: ``Key: value kB`` lines (kB here is KiB: the kernel prints pages x 4).
* sysfs: CPU lists (``0-3,8``) and masks (``00000000,003f0000``), cache ``size`` (``48K``),
  cpufreq kHz, ``/sys/class/net/*/speed`` (Mb/s, ``-1`` when unknown).
* ``lsblk -J -b -O`` (a tree of block devices) and ``lsblk -P -b -o ...`` (``KEY="value"``).
* ``nvme id-ctrl -o json`` (nvme-cli): the Identify Controller fields ``mn``, ``sn``, ``fr``,
  ``tnvmcap`` [B], ``nn``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

#: binary multiples of the suffixes lscpu and sysfs print (``K`` is KiB in both)
_BINARY = {
    "": 1,
    "B": 1,
    "K": 2**10,
    "KIB": 2**10,
    "M": 2**20,
    "MIB": 2**20,
    "G": 2**30,
    "GIB": 2**30,
    "T": 2**40,
    "TIB": 2**40,
}
_CACHE_KEYS = ("L1d", "L1i", "L2", "L3", "L4")


# ---------------------------------------------------------------------------------------------
# lscpu
# ---------------------------------------------------------------------------------------------


def lscpu_pairs(text: str) -> list[tuple[str, str]]:
    """``(field, value)`` pairs of ``lscpu`` text output, flat or indented, in order.

    Section headers of the indented layout (``Caches (sum of all):``) come back with an empty
    value; its cache rows (``L3: 128 MiB (16 instances)``) are renamed ``L3 cache`` as in the
    flat layout. Wrapped continuation lines (the tail of ``Flags``) and comments are skipped.
    """
    pairs = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or ":" not in stripped:
            continue
        key, _, value = stripped.partition(":")
        key = key.strip()
        if key in _CACHE_KEYS:
            key += " cache"
        pairs.append((key, value.strip()))
    return pairs


def lscpu_json_pairs(text: str) -> list[tuple[str, str]]:
    """``(field, value)`` pairs of ``lscpu -J``, its ``children`` flattened in order."""
    doc = json.loads(text)
    pairs: list[tuple[str, str]] = []

    def walk(entries: Iterable[Mapping]) -> None:
        for entry in entries:
            key = str(entry.get("field", "")).strip().rstrip(":").strip()
            if key in _CACHE_KEYS:
                key += " cache"
            data = entry.get("data")
            pairs.append((key, "" if data is None else str(data).strip()))
            walk(entry.get("children") or [])

    walk(doc.get("lscpu") or [])
    return pairs


def byte_size(text: str) -> float | None:
    """Bytes of a size as lscpu or sysfs print it: ``48K``, ``1.5 MiB``, ``32768K``, ``8192 KB``."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?I?B?)\s*", text.upper())
    if not match:
        return None
    unit = match.group(2)
    unit = {"KB": "K", "MB": "M", "GB": "G", "TB": "T"}.get(unit, unit)
    return float(match.group(1)) * _BINARY[unit]


def lscpu_cache(value: str) -> tuple[float | None, int | None]:
    """An lscpu cache row's ``(bytes, instances)``.

    The indented layout prints the sum over all instances and their count (``128 MiB (16
    instances)``); the flat layout of util-linux before 2.34 prints one instance (``32768K``):
    its instance count is ``None`` (lscpu did not say).
    """
    match = re.fullmatch(r"(.*?)\s*\((\d+) instances?\)\s*", value)
    if match:
        return byte_size(match.group(1)), int(match.group(2))
    return byte_size(value), None


def _number(value: str | None) -> float | None:
    try:
        return float(str(value).strip())
    except (TypeError, ValueError):
        return None


def _whole(value: str | None) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number == int(number) else None


def lscpu_summary(pairs: Sequence[tuple[str, str]]) -> dict:
    """The numbers ``perfmodel probe`` uses from lscpu's pairs (:func:`lscpu_pairs`).

    Keys: ``architecture``, ``vendor``, ``model_name``, ``family``, ``model``, ``stepping``,
    ``cpus`` [count], ``threads_per_core``, ``cores_per_socket``, ``sockets`` (None where lscpu
    prints ``-``: some Arm boxes give clusters instead), ``cores_per_cluster``, ``clusters``,
    ``cores`` [count] (summed over the core types of a hybrid CPU, each its own ``Model name``
    block), ``core_types`` [count], ``numa_nodes`` (nodes that hold CPUs; lscpu's ``NUMA
    node(s)`` counts memory-only nodes too), ``max_hz``, ``min_hz``, ``hypervisor`` and
    ``caches`` (``{"L3": (bytes, instances or None)}``).
    """
    first: dict[str, str] = {}
    every: dict[str, list[str]] = {}
    for key, value in pairs:
        first.setdefault(key, value)
        every.setdefault(key, []).append(value)
    per_type = _per_core_type(every)
    node_rows = [v for k, v in pairs if re.fullmatch(r"NUMA node\d+ CPU\(s\)", k)]
    caches = {k[: -len(" cache")]: lscpu_cache(first[k]) for k in first if k.endswith(" cache")}
    max_mhz, min_mhz = _number(first.get("CPU max MHz")), _number(first.get("CPU min MHz"))
    return {
        "architecture": first.get("Architecture"),
        "vendor": first.get("Vendor ID"),
        "model_name": first.get("Model name") or first.get("BIOS Model name"),
        "family": _whole(first.get("CPU family")),
        "model": first.get("Model"),
        "stepping": first.get("Stepping"),
        "cpus": _whole(first.get("CPU(s)")),
        "threads_per_core": max((t for t, _, _ in per_type if t), default=None),
        "cores_per_socket": _whole(first.get("Core(s) per socket")),
        "sockets": _whole(first.get("Socket(s)")),
        "cores_per_cluster": _whole(first.get("Core(s) per cluster")),
        "clusters": _whole(first.get("Cluster(s)")),
        "cores": sum(c * n for _, c, n in per_type)
        if per_type and all(c and n for _, c, n in per_type)
        else None,
        "core_types": len(every.get("Model name", [])) or 1,
        "numa_nodes": sum(1 for v in node_rows if v.strip())
        if node_rows
        else _whole(first.get("NUMA node(s)")),
        "max_hz": max_mhz * 1e6 if max_mhz else None,
        "min_hz": min_mhz * 1e6 if min_mhz else None,
        "hypervisor": first.get("Hypervisor vendor"),
        "caches": caches,
    }


def _per_core_type(every: Mapping[str, list[str]]) -> list[tuple[int | None, int | None, int | None]]:
    """``(threads per core, cores per socket or cluster, sockets or clusters)`` of each core type."""
    threads = [_whole(v) for v in every.get("Thread(s) per core", [])]
    cores = [_whole(v) for v in every.get("Core(s) per socket", []) or every.get("Core(s) per cluster", [])]
    sockets = [_whole(v) for v in every.get("Socket(s)", [])]
    if not sockets or all(s is None for s in sockets):
        sockets = [_whole(v) for v in every.get("Cluster(s)", [])] or sockets
    n = max(len(threads), len(cores), len(sockets))
    if n == 0:
        return []

    def pad(values: list) -> list:
        return values + [values[-1] if values else None] * (n - len(values))

    return list(zip(pad(threads), pad(cores), pad(sockets), strict=True))


# ---------------------------------------------------------------------------------------------
# /proc/cpuinfo, /proc/meminfo
# ---------------------------------------------------------------------------------------------


def cpuinfo_blocks(text: str) -> list[dict[str, str]]:
    """One ``{key: value}`` per blank-line separated block of ``/proc/cpuinfo``."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
            current = {}
            continue
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip()] = value.strip()
    if current:
        blocks.append(current)
    return blocks


def _hex_or_int(value: str | None) -> int | None:
    try:
        return int(str(value).strip(), 0)
    except (TypeError, ValueError):
        return None


def cpuinfo_summary(blocks: Sequence[Mapping[str, str]]) -> dict:
    """What ``/proc/cpuinfo`` says about the CPU, from its blocks (:func:`cpuinfo_blocks`).

    Keys: ``logical_cpus`` [count], ``vendor`` (x86 ``vendor_id``), ``family``, ``model``,
    ``stepping`` (x86, as integers), ``model_name`` (x86 ``model name``, POWER ``cpu``),
    ``mhz`` (x86 ``cpu MHz`` of the first CPU: the running clock, or the calibrated TSC clock
    where there is no cpufreq and no APERF/MPERF), ``power_clock_hz`` (POWER ``clock``),
    ``flags`` (set), ``implementer`` and ``part`` (Arm, integers), ``sockets`` and ``cores``
    (x86 distinct ``physical id`` and ``(physical id, core id)``; None without them).
    """
    cpus = [b for b in blocks if "processor" in b]
    head = cpus[0] if cpus else (blocks[0] if blocks else {})
    packages = {b["physical id"] for b in cpus if "physical id" in b}
    cores = {(b.get("physical id"), b["core id"]) for b in cpus if "core id" in b}
    clock = re.match(r"\s*([0-9.]+)\s*MHz", head.get("clock", ""))
    return {
        "logical_cpus": len(cpus) or None,
        "vendor": head.get("vendor_id"),
        "family": _whole(head.get("cpu family")),
        "model": _whole(head.get("model")),
        "stepping": _whole(head.get("stepping")),
        "model_name": head.get("model name") or head.get("cpu"),
        "mhz": _number(head.get("cpu MHz")),
        "power_clock_hz": float(clock.group(1)) * 1e6 if clock else None,
        "flags": set((head.get("flags") or head.get("Features") or "").split()),
        "implementer": _hex_or_int(head.get("CPU implementer")),
        "part": _hex_or_int(head.get("CPU part")),
        "sockets": len(packages) or None,
        "cores": len(cores) if cores and packages else None,
    }


def meminfo_bytes(text: str) -> dict[str, float]:
    """``/proc/meminfo`` as ``{key: bytes}`` (``kB`` there is KiB); counts without a unit as is."""
    out = {}
    for line in text.splitlines():
        match = re.match(r"\s*([^:]+):\s*([0-9]+)\s*(kB)?\s*$", line)
        if match:
            out[match.group(1)] = float(match.group(2)) * (1024 if match.group(3) else 1)
    return out


# ---------------------------------------------------------------------------------------------
# sysfs
# ---------------------------------------------------------------------------------------------


def cpu_list(text: str) -> list[int]:
    """CPU numbers of a sysfs list: ``0-3,8,10-11`` -> [0, 1, 2, 3, 8, 10, 11]; blank -> []."""
    out: list[int] = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def cpu_mask(text: str) -> list[int]:
    """CPU numbers of a sysfs mask: 32-bit hex words, most significant first
    (``00000000,003f0000,0000003f`` -> 0-5 and 48-53)."""
    value = int(text.strip().replace(",", "") or "0", 16)
    return [i for i in range(value.bit_length()) if value >> i & 1]


def sysfs_topology(cpus: Mapping[int, Mapping[str, str]]) -> dict:
    """Sockets, cores and threads per core from each CPU's ``topology/`` files.

    ``cpus`` maps a CPU number to its ``physical_package_id`` and ``thread_siblings_list`` (or
    ``core_cpus_list``). A core is one distinct set of thread siblings, as lscpu counts them;
    ``threads_per_core`` is the largest set. Keys: ``cpus``, ``sockets`` (None where every
    package id is -1, as on some Arm boxes), ``cores``, ``threads_per_core``.
    """
    siblings = set()
    packages = set()
    for files in cpus.values():
        text = files.get("thread_siblings_list") or files.get("core_cpus_list")
        if text is not None:
            siblings.add(tuple(cpu_list(text)))
        package = _whole(files.get("physical_package_id"))
        if package is not None and package >= 0:
            packages.add(package)
    return {
        "cpus": len(cpus),
        "sockets": len(packages) or None,
        "cores": len(siblings) or None,
        "threads_per_core": max((len(s) for s in siblings), default=None),
    }


def sysfs_caches(entries: Iterable[Mapping[str, str]]) -> dict[str, tuple[float, int]]:
    """``{"L3": (bytes over all instances, instances)}`` from ``cpu*/cache/index*/`` files
    (``level``, ``type``, ``size``, ``shared_cpu_list``): one instance per distinct CPU set."""
    seen: dict[str, dict[str, float]] = {}
    for entry in entries:
        level, kind = entry.get("level", "").strip(), entry.get("type", "").strip()
        size = byte_size(entry.get("size", ""))
        if not level or size is None:
            continue
        name = f"L{level}" + {"Data": "d", "Instruction": "i"}.get(kind, "")
        seen.setdefault(name, {})[entry.get("shared_cpu_list", "").strip()] = size
    return {name: (sum(sizes.values()), len(sizes)) for name, sizes in seen.items()}


def khz_hz(text: str | None) -> float | None:
    """Hertz of a cpufreq value in kHz (``2300000`` -> 2.3e9); None for blank or bad text."""
    number = _number(text)
    return number * 1e3 if number and number > 0 else None


def net_speed_bps(text: str | None) -> float | None:
    """Bits per second of ``/sys/class/net/IF/speed`` (Mb/s); None where the driver does not
    know it (``-1``, blank; virtual NICs report -1 or refuse the read)."""
    number = _number(text)
    return number * 1e6 if number and number > 0 else None


# ---------------------------------------------------------------------------------------------
# drives
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Drive:
    """One whole block device as lsblk lists it.

    ``size_bytes`` [B]; ``rotational`` None where lsblk did not say; ``transport`` lsblk's TRAN
    (``nvme``, ``sata``, ``sas``, ``usb``, blank for virtual disks); ``subsystems`` lsblk's
    SUBSYSTEMS (``block:virtio:pci``); ``holds_root`` whether ``/`` is mounted on it or on one
    of its partitions or volumes; ``layout`` ``raid0``/``raid1``/... where it is an md member.
    """

    name: str
    kind: str
    size_bytes: float
    rotational: bool | None
    model: str
    transport: str
    subsystems: str = ""
    removable: bool = False
    holds_root: bool = False
    layout: str = ""


def _flag(value) -> bool | None:
    if isinstance(value, bool):
        return value
    if value in (None, ""):
        return None
    return str(value).strip() in ("1", "true")


def _text(value) -> str:
    return "" if value is None else str(value).strip()


def _under(entry: Mapping) -> list[Mapping]:
    """Every entry below ``entry`` in lsblk's tree (partitions, md arrays, volumes)."""
    out = []
    for child in entry.get("children") or []:
        out += [child, *_under(child)]
    return out


def _mounts(entry: Mapping) -> set[str]:
    points = entry.get("mountpoints") or [entry.get("mountpoint")]
    return {str(p) for p in points if p}


def lsblk_json_drives(text: str) -> list[Drive]:
    """The top-level devices of ``lsblk -J -b -O`` (older lsblk prints every value as a string)."""
    drives = []
    for entry in json.loads(text).get("blockdevices") or []:
        below = _under(entry)
        raid = next((_text(c.get("type")) for c in below if _text(c.get("type")).startswith("raid")), "")
        drives.append(
            Drive(
                name=_text(entry.get("name") or entry.get("kname")),
                kind=_text(entry.get("type")),
                size_bytes=_number(entry.get("size")) or 0.0,
                rotational=_flag(entry.get("rota")),
                model=_text(entry.get("model")),
                transport=_text(entry.get("tran")),
                subsystems=_text(entry.get("subsystems")),
                removable=bool(_flag(entry.get("rm"))),
                holds_root="/" in set().union(*(_mounts(e) for e in [entry, *below])),
                layout=raid,
            )
        )
    return drives


def lsblk_pairs_drives(text: str) -> list[Drive]:
    """The devices of ``lsblk -P -b -o NAME,TYPE,SIZE,ROTA,MODEL,TRAN,RM,MOUNTPOINT,PKNAME``
    (``KEY="value"`` per line; ``KNAME`` is taken for ``NAME``), whole disks only, each listed
    once; a disk holds ``/`` when a row whose ``PKNAME`` is the disk is mounted there."""
    rows = [dict(re.findall(r'([A-Z:%-]+)="([^"]*)"', line)) for line in text.splitlines() if "=" in line]
    rooted = {r.get("PKNAME", "") for r in rows if r.get("MOUNTPOINT") == "/"}
    drives, seen = [], set()
    for row in rows:
        name = row.get("NAME") or row.get("KNAME", "")
        if name in seen or row.get("TYPE") not in ("disk", None):
            continue
        seen.add(name)
        drives.append(
            Drive(
                name=name,
                kind=row.get("TYPE", "disk"),
                size_bytes=_number(row.get("SIZE")) or 0.0,
                rotational=_flag(row.get("ROTA")),
                model=row.get("MODEL", "").strip(),
                transport=row.get("TRAN", ""),
                removable=bool(_flag(row.get("RM"))),
                holds_root=name in rooted or row.get("MOUNTPOINT") == "/",
            )
        )
    return drives


def nvme_id_ctrl(text: str) -> dict:
    """Model, serial, firmware, ``capacity_bytes`` (``tnvmcap``, 0 where the drive does not
    report it: None) and ``namespaces`` (``nn``) of ``nvme id-ctrl -o json``."""
    doc = json.loads(text)
    capacity = _number(doc.get("tnvmcap"))
    return {
        "model": _text(doc.get("mn")),
        "serial": _text(doc.get("sn")),
        "firmware": _text(doc.get("fr")),
        "capacity_bytes": capacity if capacity else None,
        "namespaces": _whole(doc.get("nn")),
    }
