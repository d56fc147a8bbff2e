"""Hardware catalog: platforms (servers), storage devices and networks.

The catalog is data: YAML files in ``data/hardware/`` (shipped in the wheel),
with units in their keys (``ram_gib``, ``read_latency_us``) and a source for
every number (see ``data/hardware/README.md``). This module loads them into
frozen dataclasses **in SI units** (bytes, seconds, hertz, bytes per second),
converting once, here.

>>> p = load_platform("power8-s821lc-10c")
>>> p.threads, p.threads_per_core
(80, 8)

A user's own YAML file in the same layout works wherever a catalog name does:
``load_platform("mybox.yaml")``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from perfmodel.inputs import microarch
from perfmodel.inputs._data import data_dir, load_yaml
from perfmodel.inputs.errors import CatalogError, Problem, TextFileError, UnknownNameError, read_text
from perfmodel.inputs.units import GB, GIB

ARCHES = ("power8", "power9", "power10", "x86", "kunpeng", "arm")
INTERFACES = ("nvme", "sata", "optane-nvme")
LAYOUTS = ("single", "raid0", "jbod")


@dataclass(frozen=True)
class StorageSlot:
    """``count`` devices of catalog id ``device`` in a ``layout``."""

    device: str
    count: int
    layout: str = "single"


@dataclass(frozen=True)
class Device:
    """A storage device, in SI units.

    Attributes: ``capacity_bytes`` [B]; ``hardware_queues`` [count] submission
    queues the host can use (SATA AHCI: 1); ``queue_depth_limit`` [count]
    commands per queue (SATA NCQ: 32); ``internal_parallelism`` [count]
    requests served at once; ``read_iops_4k``, ``write_iops_4k`` [1/s];
    ``seq_read_bytes_s``, ``seq_write_bytes_s`` [B/s]; ``read_latency_s``,
    ``write_latency_s`` [s] at queue depth 1.
    """

    id: str
    name: str
    interface: str
    capacity_bytes: float
    hardware_queues: int
    queue_depth_limit: int
    internal_parallelism: float
    read_iops_4k: float
    write_iops_4k: float
    seq_read_bytes_s: float
    seq_write_bytes_s: float
    read_latency_s: float
    write_latency_s: float
    vendor: str = ""
    model: str = ""
    notes: str = ""
    sources: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: field -> ids of recorded figures its value was derived from (not out of sample for them)
    derived_from: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Network:
    """A network link: ``bandwidth_bytes_s`` [B/s], ``latency_s`` [s] one way."""

    id: str
    name: str
    bandwidth_bytes_s: float
    latency_s: float
    #: a request message's socket work on this transport as a share of it over kernel TCP [-]
    #: (the unit ``cpu_cycles_message`` is calibrated in): 1 for TCP, on a NIC or on loopback
    message_cost_share: float = 1.0
    notes: str = ""
    sources: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: field -> ids of recorded figures its value was derived from (not out of sample for them)
    derived_from: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Platform:
    """A server configuration, in SI units.

    ``cores`` [count] are the physical cores the configuration uses
    (``sockets * cores_per_socket``); ``threads`` [count] = ``cores *
    threads_per_core`` in the default SMT mode; ``smt_modes`` the modes the
    architecture allows. ``base_hz`` [Hz], ``ram_bytes`` [B],
    ``mem_bandwidth_bytes_s`` [B/s]; ``storage`` the devices attached;
    ``network`` a network id.
    """

    id: str
    name: str
    arch: str
    sockets: int
    cores_per_socket: int
    cores: int
    threads_per_core: int
    smt_modes: tuple[int, ...]
    threads: int
    numa_nodes: int
    base_hz: float
    ram_bytes: float
    network: str
    storage: tuple[StorageSlot, ...]
    turbo_hz: float = math.nan
    #: the clock with every core busy (Intel's all-core turbo, AMD's all-core boost) [Hz]; blank:
    #: the base clock (no boost credited under full load)
    all_core_hz: float = math.nan
    l3_bytes: float = math.nan
    mem_bandwidth_bytes_s: float = math.nan
    rack_units: float = math.nan
    vendor: str = ""
    model: str = ""
    cpu_model: str = ""
    #: a virtual machine's exits: the host time one takes, exit to re-entry [s], and the exits a
    #: request message causes on the vCPU that receives it (interrupt, wakeup IPI, halt, timer);
    #: blank: none counted (bare metal, or a guest whose exits were not measured)
    vm_exit_s: float = math.nan
    vm_exits_per_message: float = math.nan
    #: a cloud platform's round trip between two availability zones of its region [s] (a
    #: cluster spread over zones: knob ``zones``); blank: no zones (one site)
    zone_rtt_s: float = math.nan
    #: the core design (``data/microarchitectures.yaml``); blank: the family's default core
    microarchitecture: str = ""
    notes: str = ""
    sources: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: field -> ids of recorded figures its value was derived from (not out of sample for them)
    derived_from: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    #: the devices and networks of the catalog the platform was loaded with (a user's file may
    #: define its own); :meth:`device_spec` / :meth:`network_spec` resolve ids through them
    known_devices: Mapping[str, Device] = field(default_factory=dict, repr=False, compare=False)
    known_networks: Mapping[str, Network] = field(default_factory=dict, repr=False, compare=False)

    @property
    def message_exit_s(self) -> float:
        """A request message's VM exits on the vCPU that receives it, ``vm_exits_per_message x
        vm_exit_s`` [s]; NaN where the catalog counts none."""
        return self.vm_exits_per_message * self.vm_exit_s

    def device_spec(self, name: str) -> Device:
        """A device by id -- this platform's catalog first, then the shipped one -- or a YAML path."""
        if name in self.known_devices:
            return self.known_devices[name]
        return load_device(name)

    def network_spec(self) -> Network:
        """This platform's network, resolved like :meth:`device_spec`."""
        if self.network in self.known_networks:
            return self.known_networks[self.network]
        return load_network(self.network)

    @property
    def core(self) -> str:
        """The core design: ``microarchitecture``, or the architecture family's default core."""
        return self.microarchitecture or microarch.family_default(self.arch)

    @property
    def perf_per_ghz(self) -> float:
        """Single-thread work per GHz of a core relative to the reference core [-]
        (:func:`perfmodel.inputs.microarch.perf_per_ghz`)."""
        return microarch.perf_per_ghz(self.core)

    @property
    def family(self) -> str:
        """The platform family, e.g. ``power8`` (same as ``arch``)."""
        return self.arch

    @property
    def cores_per_numa_node(self) -> float:
        """Physical cores per NUMA node [count]."""
        return self.cores / self.numa_nodes


# ---------------------------------------------------------------------------
# Field specifications: YAML key -> (dataclass attribute, SI factor, kind)
# kind: "int" positive integer, "float" positive number, "str", "optfloat"
# (positive number, may be absent), "optstr"
# ---------------------------------------------------------------------------

_PLATFORM_FIELDS: dict[str, tuple[str, float, str]] = {
    "id": ("id", 1, "str"),
    "name": ("name", 1, "str"),
    "arch": ("arch", 1, "str"),
    "sockets": ("sockets", 1, "int"),
    "cores_per_socket": ("cores_per_socket", 1, "int"),
    "cores": ("cores", 1, "int"),
    "threads_per_core": ("threads_per_core", 1, "int"),
    "threads": ("threads", 1, "int"),
    "numa_nodes": ("numa_nodes", 1, "int"),
    "base_ghz": ("base_hz", 1e9, "float"),
    "ram_gib": ("ram_bytes", GIB, "float"),
    "network": ("network", 1, "str"),
    "turbo_ghz": ("turbo_hz", 1e9, "optfloat"),
    "all_core_ghz": ("all_core_hz", 1e9, "optfloat"),
    "l3_mib": ("l3_bytes", 2.0**20, "optfloat"),
    "mem_bandwidth_gbs": ("mem_bandwidth_bytes_s", GB, "optfloat"),
    "rack_units": ("rack_units", 1, "optfloat"),
    "vm_exit_us": ("vm_exit_s", 1e-6, "optfloat"),
    "vm_exits_per_message": ("vm_exits_per_message", 1, "optfloat"),
    "zone_rtt_us": ("zone_rtt_s", 1e-6, "optfloat"),
    "vendor": ("vendor", 1, "optstr"),
    "model": ("model", 1, "optstr"),
    "cpu_model": ("cpu_model", 1, "optstr"),
    "microarchitecture": ("microarchitecture", 1, "optstr"),
    "notes": ("notes", 1, "optstr"),
}

_DEVICE_FIELDS: dict[str, tuple[str, float, str]] = {
    "id": ("id", 1, "str"),
    "name": ("name", 1, "str"),
    "interface": ("interface", 1, "str"),
    "capacity_gb": ("capacity_bytes", GB, "float"),
    "hardware_queues": ("hardware_queues", 1, "int"),
    "queue_depth_limit": ("queue_depth_limit", 1, "int"),
    "internal_parallelism": ("internal_parallelism", 1, "float"),
    "read_iops_4k": ("read_iops_4k", 1, "float"),
    "write_iops_4k": ("write_iops_4k", 1, "float"),
    "seq_read_mbs": ("seq_read_bytes_s", 1e6, "float"),
    "seq_write_mbs": ("seq_write_bytes_s", 1e6, "float"),
    "read_latency_us": ("read_latency_s", 1e-6, "float"),
    "write_latency_us": ("write_latency_s", 1e-6, "float"),
    "vendor": ("vendor", 1, "optstr"),
    "model": ("model", 1, "optstr"),
    "notes": ("notes", 1, "optstr"),
}

_NETWORK_FIELDS: dict[str, tuple[str, float, str]] = {
    "id": ("id", 1, "str"),
    "name": ("name", 1, "str"),
    "gbps": ("bandwidth_bytes_s", 1e9 / 8.0, "float"),
    "latency_us": ("latency_s", 1e-6, "float"),
    "message_cost_share": ("message_cost_share", 1, "optfloat"),
    "notes": ("notes", 1, "optstr"),
}

_EXTRA_KEYS = {
    "platforms": {"smt_modes", "storage", "sources", "derived_from"},
    "devices": {"sources", "derived_from"},
    "networks": {"sources", "derived_from"},
}
#: fields with a floor above 0: (least value, why), in the file's units
_MINIMUM = {
    "internal_parallelism": (1.0, "I/Os the device serves at once, at least one"),
    "base_ghz": (0.1, "a server core's clock"),
    "turbo_ghz": (0.1, "a server core's clock"),
    "all_core_ghz": (0.1, "a server core's clock"),
    "read_latency_us": (0.1, "no storage device answers faster"),
    "write_latency_us": (0.1, "no storage device answers faster"),
    "latency_us": (0.01, "one way on a wire"),
    "vm_exit_us": (0.05, "an exit to the host and back"),
    "zone_rtt_us": (1.0, "a round trip between two sites"),
    "message_cost_share": (0.01, "a transport's share of a TCP message's socket work"),
    # the model keeps a system's memtable (memtable_bytes, up to 256 MiB: Cassandra, ScyllaDB) and
    # its cache (a share of RAM) in memory beside the OS: less than twice the largest memtable
    # leaves no room for them, and a prediction on it would be a cache of nothing
    "ram_gib": (0.5, "twice the largest memtable the systems keep in RAM, 256 MiB"),
}
#: physical upper bounds: (largest value, why), in the file's units -- a typo (MB/s for B/s,
#: a missing decimal point) fails here instead of giving throughputs of 1e-7 or p99s of 1e13 ms
_MAXIMUM = {
    "base_ghz": (10.0, "a server core's clock"),
    "turbo_ghz": (10.0, "a server core's clock"),
    "all_core_ghz": (10.0, "a server core's clock"),
    "sockets": (64, "sockets in one server"),
    "cores": (8192, "cores in one server"),
    "cores_per_socket": (1024, "cores in one socket"),
    "threads_per_core": (16, "SMT modes up to 8 today"),
    "threads": (65536, "hardware threads in one server"),
    "numa_nodes": (256, "NUMA nodes in one server"),
    "ram_gib": (1e6, "memory of one server"),
    "capacity_gb": (1e7, "one device"),
    "read_iops_4k": (1e8, "one device"),
    "write_iops_4k": (1e8, "one device"),
    "seq_read_mbs": (1e6, "1 TB/s, one device"),
    "seq_write_mbs": (1e6, "1 TB/s, one device"),
    "read_latency_us": (1e6, "a second per I/O"),
    "write_latency_us": (1e6, "a second per I/O"),
    "gbps": (1e5, "one link"),
    "vm_exit_us": (1e4, "10 ms, a scheduler slice: one VM exit"),
    "vm_exits_per_message": (100.0, "exits one message causes"),
    "latency_us": (1e6, "a second one way"),
    "zone_rtt_us": (1e5, "100 ms, farther than the zones of one region"),
    "message_cost_share": (1.0, "no transport costs more than TCP here (the reference)"),
}

_SPECS = {"platforms": _PLATFORM_FIELDS, "devices": _DEVICE_FIELDS, "networks": _NETWORK_FIELDS}


class _Checker:
    """Collects problems for one file so that a single error reports them all."""

    def __init__(self, file: str):
        self.file = file
        self.problems: list[Problem] = []

    def add(self, where: str, field_: str, message: str) -> None:
        self.problems.append(Problem(self.file, where, field_, message))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


_SOURCE_KEY = re.compile(r"[^\s(;,]+")


def _valid_source(ref: Any, refs: Mapping[str, str]) -> bool:
    """A source cites a reference key first, or says it is an assumption / derived."""
    if not isinstance(ref, str) or not ref.strip():
        return False
    text = ref.strip()
    if text.startswith(("assumption:", "derived:")):
        return True
    match = _SOURCE_KEY.match(text)
    return bool(match) and match.group(0) in refs


def _convert_entry(kind: str, entry: Any, refs: Mapping[str, str], check: _Checker):
    """Validate one YAML entry and return ``(kwargs for the dataclass, raw)``."""
    spec = _SPECS[kind]
    if not isinstance(entry, Mapping):
        check.add(f"{kind}[?]", "", f"each entry must be a mapping, got {type(entry).__name__}")
        return None
    where = str(entry.get("id", "?"))
    unknown = set(entry) - set(spec) - _EXTRA_KEYS[kind]
    for key in sorted(unknown):
        check.add(where, key, f"unknown key (valid keys: {', '.join(sorted(spec))})")
    sources = entry.get("sources") or {}
    if not isinstance(sources, Mapping):
        check.add(where, "sources", "must be a mapping from field name to a reference")
        sources = {}
    kwargs: dict[str, Any] = {"sources": dict(sources)}
    for key, (attr, factor, ftype) in spec.items():
        present = key in entry and entry[key] is not None
        value = entry.get(key)
        if not present:
            if ftype in ("str", "int", "float"):
                check.add(where, key, "is required")
            continue
        if ftype in ("str", "optstr"):
            if not isinstance(value, str) or (ftype == "str" and not value.strip()):
                check.add(where, key, f"must be a non-empty string, got {value!r}")
                continue
            kwargs[attr] = value
            continue
        if not _is_number(value):
            check.add(where, key, f"must be a number, got {value!r}")
            continue
        if value <= 0:
            check.add(where, key, f"must be positive, got {value!r}")
            continue
        if ftype == "int" and int(value) != value:
            check.add(where, key, f"must be a whole number, got {value!r}")
            continue
        if key in _MINIMUM and value < _MINIMUM[key][0]:
            check.add(where, key, f"must be >= {_MINIMUM[key][0]:g} ({_MINIMUM[key][1]}), got {value!r}")
            continue
        if key in _MAXIMUM and value > _MAXIMUM[key][0]:
            check.add(where, key, f"must be <= {_MAXIMUM[key][0]:g} ({_MAXIMUM[key][1]}), got {value!r}")
            continue
        if key not in sources:
            check.add(where, key, "has no entry in 'sources' (cite a reference or 'assumption: why')")
        kwargs[attr] = int(value) if ftype == "int" else float(value) * factor
    derived = entry.get("derived_from") or {}
    if not isinstance(derived, Mapping):
        check.add(where, "derived_from", "must map a field name to a list of figure ids")
        derived = {}
    kwargs["derived_from"] = {}
    for key, ids in derived.items():
        if key not in spec:
            check.add(where, f"derived_from.{key}", "names a field that does not exist")
        elif not isinstance(ids, list) or not all(isinstance(i, str) and i.strip() for i in ids):
            check.add(where, f"derived_from.{key}", f"must be a list of figure ids, got {ids!r}")
        else:
            kwargs["derived_from"][key] = tuple(ids)
    for key, ref in sources.items():
        if key not in spec and key not in _EXTRA_KEYS[kind]:
            check.add(where, f"sources.{key}", "names a field that does not exist")
        if not _valid_source(ref, refs):
            check.add(
                where,
                f"sources.{key}",
                f"{ref!r} must start with a key of 'references' (optionally followed by "
                "details), or with 'assumption:' or 'derived:'",
            )
    return kwargs


def _build_platform(kwargs: dict, entry: Mapping, check: _Checker) -> Platform | None:
    where = kwargs.get("id", "?")
    modes = entry.get("smt_modes")
    if (
        not isinstance(modes, list)
        or not modes
        or not all(isinstance(m, int) and not isinstance(m, bool) and m > 0 for m in modes)
    ):
        check.add(where, "smt_modes", f"must be a list of positive whole numbers, got {modes!r}")
        return None
    storage = []
    slots = entry.get("storage")
    if not isinstance(slots, list) or not slots:
        check.add(where, "storage", f"must be a non-empty list of {{device, count}} entries, got {slots!r}")
        return None
    for i, slot in enumerate(slots):
        if not isinstance(slot, Mapping) or "device" not in slot:
            check.add(where, f"storage[{i}]", "must be a mapping with 'device' and 'count'")
            continue
        count = slot.get("count", 1)
        if not (isinstance(count, int) and not isinstance(count, bool) and count > 0):
            check.add(where, f"storage[{i}].count", f"must be a positive whole number, got {count!r}")
            continue
        layout = slot.get("layout", "single")
        if layout not in LAYOUTS:
            check.add(where, f"storage[{i}].layout", f"must be one of {LAYOUTS}, got {layout!r}")
            continue
        storage.append(StorageSlot(str(slot["device"]), count, layout))
    required = ("sockets", "cores_per_socket", "cores", "threads_per_core", "threads")
    if any(k not in kwargs for k in required):
        return None  # already reported
    if kwargs.get("arch") not in ARCHES:
        check.add(where, "arch", f"must be one of {ARCHES}, got {kwargs.get('arch')!r}")
    core = kwargs.get("microarchitecture")
    if core is not None and core not in microarch.names():
        check.add(where, "microarchitecture", f"unknown core {core!r}; valid: {', '.join(microarch.names())}")
    elif core is not None and "microarchitecture" not in kwargs["sources"]:
        check.add(where, "microarchitecture", "has no entry in 'sources' (why this core: cite or derive)")
    if kwargs["cores"] != kwargs["sockets"] * kwargs["cores_per_socket"]:
        check.add(where, "cores", "must equal sockets x cores_per_socket")
    if kwargs["threads"] != kwargs["cores"] * kwargs["threads_per_core"]:
        check.add(where, "threads", "must equal cores x threads_per_core")
    if kwargs["threads_per_core"] not in modes:
        check.add(where, "threads_per_core", f"must be one of smt_modes {modes}")
    if "numa_nodes" in kwargs and kwargs["numa_nodes"] > kwargs["cores"]:
        check.add(where, "numa_nodes", "cannot exceed cores")
    base, turbo = kwargs.get("base_hz", math.nan), kwargs.get("turbo_hz", math.nan)
    if turbo < base:
        check.add(where, "turbo_ghz", "cannot be below base_ghz (the clock one busy core may reach)")
    all_core = kwargs.get("all_core_hz", math.nan)
    if all_core < base or all_core > (turbo if turbo == turbo else base):
        check.add(where, "all_core_ghz", "must lie between base_ghz and turbo_ghz (turbo_ghz must be given)")
    given = {k: entry.get(k) is not None for k in ("vm_exit_us", "vm_exits_per_message")}
    if len(set(given.values())) > 1:  # one without the other (an invalid value is reported above)
        missing = next(k for k, v in given.items() if not v)
        other = next(k for k, v in given.items() if v)
        check.add(where, missing, f"is required with {other} (a guest's exits: their time and their count)")
    try:
        return Platform(smt_modes=tuple(sorted(modes)), storage=tuple(storage), **kwargs)
    except TypeError:
        return None  # a required field is missing; already reported


def _build_device(kwargs: dict, check: _Checker) -> Device | None:
    where = kwargs.get("id", "?")
    if kwargs.get("interface") not in INTERFACES:
        check.add(where, "interface", f"must be one of {INTERFACES}, got {kwargs.get('interface')!r}")
    try:
        return Device(**kwargs)
    except TypeError:
        return None


def _read_catalog_file(path: Path, problems: list[Problem]) -> Mapping | None:
    """The YAML mapping in ``path``, or None with the reason added to ``problems``."""
    try:
        doc = load_yaml(read_text(path, "catalog file"))
    except TextFileError as exc:
        problems.append(Problem(str(path), str(exc.line or ""), "", exc.reason))
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f"{mark.line + 1}" if mark is not None else ""
        problems.append(Problem(str(path), line, "", f"is not valid YAML: {exc}"))
        return None
    except OSError as exc:
        problems.append(Problem(str(path), "", "", f"cannot be read: {exc}"))
        return None
    if not isinstance(doc, Mapping):
        problems.append(Problem(str(path), "", "", "must be a YAML mapping"))
        return None
    return doc


def _top_level(doc: Mapping, path: Path, check: _Checker, paths: list[Path], seen: set[Path]) -> Mapping:
    """A file's ``references`` (returned), its unknown top-level keys, and the files it ``include``s
    (appended to ``paths`` once)."""
    refs = doc.get("references") or {}
    if not isinstance(refs, Mapping):
        check.add("", "references", "must be a mapping from key to citation")
        refs = {}
    for key in set(doc) - {"references", "platforms", "devices", "networks", "family", "include"}:
        check.add("", key, "unknown top-level key")
    included = doc.get("include") or []
    if not isinstance(included, list) or not all(isinstance(i, str) for i in included):
        check.add("", "include", "must be a list of catalog YAML files (relative to this file)")
        included = []
    for name in included:
        other = (path.parent / name).resolve()
        if not other.is_file():
            check.add("", "include", f"{name!r}: no such file next to {path.name}")
        elif other not in seen:
            seen.add(other)
            paths.append(other)
    return refs


def _new_id(kind: str, ident: str, path: Path, origin: dict, base, override: bool, check: _Checker) -> bool:
    """Whether entry ``ident`` of ``kind`` may be added: not a duplicate, and not shadowing ``base``'s
    entry unless ``override`` (recorded in ``origin`` when it may)."""
    if (kind, ident) in origin:
        check.add(ident, "id", f"duplicate id (also in {origin[(kind, ident)]})")
        return False
    if base is not None and ident in getattr(base, kind) and not override:
        whose = "shipped" if ident in getattr(default_catalog(), kind) else "catalog"
        check.add(
            ident,
            "id",
            f"shadows the {whose} {kind[:-1]} {ident!r} (it would replace it in every "
            "prediction); give yours another id, or replace it on purpose with "
            "--override (Python: Catalog.from_files(..., override=True))",
        )
        return False
    origin[(kind, ident)] = str(path)
    return True


def _build_entry(kind: str, kwargs: dict, entry, check: _Checker):
    """The platform, device or network an entry describes (None where it is invalid)."""
    if kind == "platforms":
        return _build_platform(kwargs, entry, check)
    if kind == "devices":
        return _build_device(kwargs, check)
    try:
        return Network(**kwargs)
    except TypeError:
        return None


def _unresolved(raw_platforms, items: dict) -> list[Problem]:
    """Cross references: each platform's storage devices and network must resolve."""
    problems = []
    for platform, check in raw_platforms:
        for i, slot in enumerate(platform.storage):
            if slot.device not in items["devices"]:
                problems.append(
                    Problem(
                        check.file,
                        platform.id,
                        f"storage[{i}].device",
                        f"unknown device {slot.device!r}; valid: " + ", ".join(sorted(items["devices"])),
                    )
                )
        if platform.network not in items["networks"]:
            problems.append(
                Problem(
                    check.file,
                    platform.id,
                    "network",
                    f"unknown network {platform.network!r}; valid: " + ", ".join(sorted(items["networks"])),
                )
            )
    return problems


@dataclass(frozen=True)
class Catalog:
    """All platforms, devices and networks, keyed by id."""

    platforms: Mapping[str, Platform]
    devices: Mapping[str, Device]
    networks: Mapping[str, Network]
    files: tuple[str, ...] = ()

    @classmethod
    def from_files(
        cls, paths: Iterable[Path], base: Catalog | None = None, *, override: bool = False
    ) -> Catalog:
        """Load YAML files (and resolve references against ``base`` too).

        An entry whose id ``base`` already has (a user's platform, device or network named as a
        shipped one) is an error: it would silently change every prediction that names the id.
        ``override=True`` (the command line's ``--override``) replaces ``base``'s entry on purpose.
        """
        items: dict[str, dict[str, Any]] = {
            "platforms": dict(base.platforms) if base else {},
            "devices": dict(base.devices) if base else {},
            "networks": dict(base.networks) if base else {},
        }
        origin: dict[tuple[str, str], str] = {}
        problems: list[Problem] = []
        raw_platforms: list[tuple[Platform, _Checker]] = []
        paths = [Path(p) for p in paths]
        seen_paths = {p.resolve() for p in paths}
        for path in paths:  # grows while files ``include`` others
            check = _Checker(str(path))
            doc = _read_catalog_file(path, problems)
            if doc is None:
                continue
            refs = _top_level(doc, path, check, paths, seen_paths)
            for kind in ("platforms", "devices", "networks"):
                entries = doc.get(kind) or []
                if not isinstance(entries, list):
                    check.add("", kind, "must be a list of entries")
                    continue
                for entry in entries:
                    kwargs = _convert_entry(kind, entry, refs, check)
                    if kwargs is None or "id" not in kwargs:
                        continue
                    if not _new_id(kind, kwargs["id"], path, origin, base, override, check):
                        continue
                    obj = _build_entry(kind, kwargs, entry, check)
                    if kind == "platforms" and obj is not None:
                        raw_platforms.append((obj, check))
                    if obj is not None:
                        items[kind][kwargs["id"]] = obj
            problems.extend(check.problems)
        problems.extend(_unresolved(raw_platforms, items))
        if problems:
            raise CatalogError(problems)
        for platform, _ in raw_platforms:  # a user's platform resolves the devices its catalog defines
            items["platforms"][platform.id] = replace(
                platform, known_devices=dict(items["devices"]),
                known_networks=dict(items["networks"]),
            )  # fmt: skip
        files = (base.files if base else ()) + tuple(str(p) for p in paths)
        return cls(items["platforms"], items["devices"], items["networks"], files)

    def platform(self, name: str) -> Platform:
        """Return platform ``name``; raise UnknownNameError listing valid ids."""
        return _lookup("platform", self.platforms, name)

    def device(self, name: str) -> Device:
        """Return device ``name``; raise UnknownNameError listing valid ids."""
        return _lookup("device", self.devices, name)

    def network(self, name: str) -> Network:
        """Return network ``name``; raise UnknownNameError listing valid ids."""
        return _lookup("network", self.networks, name)


def _lookup(kind: str, table: Mapping[str, Any], name: str):
    try:
        return table[name]
    except KeyError:
        raise UnknownNameError(kind, name, list(table)) from None


@functools.lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The catalog shipped with perfmodel (``data/hardware/*.yaml``)."""
    return Catalog.from_files(sorted((data_dir() / "hardware").glob("*.yaml")))


def _is_path(name_or_path: str | Path) -> bool:
    text = str(name_or_path)
    return isinstance(name_or_path, Path) or text.endswith((".yaml", ".yml")) or "/" in text


def _load(kind: str, name_or_path: str | Path):
    catalog = default_catalog()
    if not _is_path(name_or_path):
        return getattr(catalog, kind)(str(name_or_path))
    path = Path(name_or_path)
    if not path.is_file():
        raise FileNotFoundError(f"{kind} file not found: {path}")
    # the file names its own platform: its entries are what the caller asked for
    user = Catalog.from_files([path], base=catalog, override=True)
    shipped = getattr(catalog, kind + "s")
    own = [k for k, v in getattr(user, kind + "s").items() if shipped.get(k) is not v]
    if len(own) != 1:
        raise CatalogError(
            Problem(str(path), "", kind + "s", f"must define exactly one {kind}, found {own or 0}")
        )
    return getattr(user, kind + "s")[own[0]]


def load_platform(name_or_path: str | Path) -> Platform:
    """Load a platform by catalog id, or from a user's YAML file.

    Parameters
    ----------
    name_or_path : a catalog id (see :func:`list_platforms`) or the path of a
        YAML file in the catalog layout defining one platform (its devices
        and network may be catalog ids or defined in the same file).

    Raises
    ------
    UnknownNameError : unknown id (the message lists the valid ids).
    CatalogError : a malformed file (names the file, entry and field).
    """
    return _load("platform", name_or_path)


def load_device(name_or_path: str | Path) -> Device:
    """Load a storage device by catalog id or from a YAML file (see load_platform)."""
    return _load("device", name_or_path)


def load_network(name_or_path: str | Path) -> Network:
    """Load a network by catalog id or from a YAML file (see load_platform)."""
    return _load("network", name_or_path)


def list_platforms() -> list[str]:
    """Ids of the catalog's platforms, sorted."""
    return sorted(default_catalog().platforms)


def list_devices() -> list[str]:
    """Ids of the catalog's storage devices, sorted."""
    return sorted(default_catalog().devices)


def list_networks() -> list[str]:
    """Ids of the catalog's networks, sorted."""
    return sorted(default_catalog().networks)


def platforms_table(catalog: Catalog | None = None):
    """The platforms as a DataFrame in the catalog's display units."""
    import pandas as pd

    catalog = catalog or default_catalog()
    rows = []
    for p in sorted(catalog.platforms.values(), key=lambda p: p.id):
        storage = ", ".join(
            f"{s.count}x {s.device}" + (f" ({s.layout})" if s.layout != "single" else "") for s in p.storage
        )
        rows.append(
            {
                "id": p.id,
                "arch": p.arch,
                "sockets": p.sockets,
                "cores": p.cores,
                "threads_per_core": p.threads_per_core,
                "smt_modes": "/".join(map(str, p.smt_modes)),
                "threads": p.threads,
                "numa_nodes": p.numa_nodes,
                "base_ghz": p.base_hz / 1e9,
                "core": p.core,
                "perf_per_ghz": round(p.perf_per_ghz, 3),
                "ram_gib": p.ram_bytes / GIB,
                "network": p.network,
                "storage": storage,
                "message_exit_us": p.message_exit_s / 1e-6,  # NaN: no VM exits counted
                "zone_rtt_us": p.zone_rtt_s / 1e-6,  # NaN: no availability zones
            }
        )
    return pd.DataFrame(rows)


def devices_table(catalog: Catalog | None = None):
    """The storage devices as a DataFrame in the catalog's display units."""
    import pandas as pd

    catalog = catalog or default_catalog()
    rows = [
        {
            "id": d.id,
            "interface": d.interface,
            "capacity_gb": d.capacity_bytes / GB,
            "hardware_queues": d.hardware_queues,
            "queue_depth_limit": d.queue_depth_limit,
            "read_iops_4k": d.read_iops_4k,
            "write_iops_4k": d.write_iops_4k,
            "seq_read_mbs": d.seq_read_bytes_s / 1e6,
            "seq_write_mbs": d.seq_write_bytes_s / 1e6,
            "read_latency_us": d.read_latency_s * 1e6,
        }
        for d in sorted(catalog.devices.values(), key=lambda d: d.id)
    ]
    return pd.DataFrame(rows)


def networks_table(catalog: Catalog | None = None):
    """The networks as a DataFrame in the catalog's display units."""
    import pandas as pd

    catalog = catalog or default_catalog()
    rows = [
        {
            "id": n.id,
            "name": n.name,
            "gbps": n.bandwidth_bytes_s * 8 / 1e9,
            "latency_us": n.latency_s * 1e6,
            "message_cost_share": n.message_cost_share,
        }
        for n in sorted(catalog.networks.values(), key=lambda n: n.id)
    ]
    return pd.DataFrame(rows)
