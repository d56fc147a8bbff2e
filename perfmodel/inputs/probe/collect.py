"""The collector of ``perfmodel probe``: runs the commands and reads the files, keeping every text.

Each command runs with a timeout through a *runner* (:func:`run_command`, or a test's stand-in);
each file is read under a *root* (``/``, or a folder holding a snapshot of ``/proc`` and
``/sys``, such as util-linux's lscpu test dumps). Nothing here interprets a value beyond what it
needs to find the next file (which CPUs, disks and NICs there are): the parsers
(:mod:`.parse`) and the assembler (:mod:`.assemble`) do that. Every command and file group
tried is recorded as an :class:`Attempt`, used or not and why: a missing binary, a permission
refused, a virtual device without a speed, a timeout.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import socket
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: a runner takes an argv and a timeout [s] and returns (exit status, stdout, stderr); it raises
#: FileNotFoundError for a missing binary and subprocess.TimeoutExpired when the time is up
Runner = Callable[[Sequence[str], float], tuple[int, str, str]]

#: seconds each command may take
DEFAULT_TIMEOUT_S = 10.0
#: cpufreq files read for the clock (cpu0's policy), in kHz but for ``scaling_driver``
CPUFREQ_FILES = ("base_frequency", "cpuinfo_max_freq", "cpuinfo_min_freq", "scaling_driver")
#: block-device names that are never data drives (RAM disks, loop files, floppies, optical)
NOT_DRIVES = ("loop", "ram", "zram", "nbd", "fd", "sr")


def run_command(argv: Sequence[str], timeout_s: float) -> tuple[int, str, str]:
    """Run ``argv`` without a shell; ``(exit status, stdout, stderr)``."""
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s, check=False)
    return done.returncode, done.stdout, done.stderr


@dataclass(frozen=True)
class Attempt:
    """One command or group of files tried: ``what`` (``lscpu -J``, ``/proc/cpuinfo``), whether
    it was ``used``, and ``reason`` when it was not."""

    what: str
    used: bool
    reason: str = ""


@dataclass
class Raw:
    """Every text the collector got, keyed as the assembler reads them; None where it got none.

    ``cpus``: CPU number -> its ``topology/`` files; ``caches``: one mapping per
    ``cpu*/cache/index*/`` (``level``, ``type``, ``size``, ``shared_cpu_list``); ``cpufreq``:
    cpu0's :data:`CPUFREQ_FILES` and ``acpi_cppc/nominal_freq``; ``nodes``: node -> its CPU list
    text; ``memory_blocks``: (block size text, online blocks); ``block``: disk -> its
    ``queue/rotational``, ``queue/nr_requests`` and ``mq`` (hardware queue count as text);
    ``nvme``: controller -> ``nvme id-ctrl -o json``; ``nics``: interface -> ``speed``,
    ``operstate``, ``driver`` and ``physical`` (``yes`` when it sits on a device); ``dmi``:
    ``sys_vendor`` and ``product_name``.
    """

    root: str = "/"
    when: str = ""
    host: str = ""
    lscpu: str | None = None
    lscpu_json: bool = False
    lscpu_version: str | None = None
    cpuinfo: str | None = None
    meminfo: str | None = None
    memory_blocks: tuple[str, int] | None = None
    cpus: dict[int, dict[str, str]] = field(default_factory=dict)
    caches: list[dict[str, str]] = field(default_factory=list)
    cpufreq: dict[str, str] = field(default_factory=dict)
    smt_control: str | None = None
    nodes: dict[int, str] = field(default_factory=dict)
    lsblk: str | None = None
    lsblk_json: bool = False
    block: dict[str, dict[str, str]] = field(default_factory=dict)
    nvme: dict[str, str] = field(default_factory=dict)
    nics: dict[str, dict[str, str]] = field(default_factory=dict)
    dmi: dict[str, str] = field(default_factory=dict)
    attempts: list[Attempt] = field(default_factory=list)


class Reader:
    """Reads files under ``root`` and runs commands through ``runner``, recording attempts.

    With a root other than ``/`` (a snapshot) no command runs: its output would describe this
    machine, not the snapshot's.
    """

    def __init__(
        self,
        root: Path | str = "/",
        runner: Runner | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        run_commands: bool | None = None,
    ):
        self.root = Path(root)
        self.runner = runner or run_command
        self.timeout_s = timeout_s
        self.attempts: list[Attempt] = []
        #: commands run on the live machine only, unless a test asks (its runner answers them)
        self.run_commands = self.live if run_commands is None else run_commands

    @property
    def live(self) -> bool:
        """Whether this reads the running machine (root ``/``)."""
        return self.root.resolve() == Path("/")

    def note(self, what: str, used: bool, reason: str = "") -> None:
        self.attempts.append(Attempt(what, used, reason))

    def path(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def text(self, path: str, record: bool = True) -> str | None:
        """The text of ``path`` (absolute, read under the root), or None with the reason noted."""
        try:
            out = self.path(path).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return self._failed(path, "not present", record)
        except PermissionError:
            return self._failed(path, "permission denied (run as root to read it)", record)
        except OSError as exc:  # sysfs refuses some reads: a virtual NIC's speed (EINVAL)
            return self._failed(path, f"read refused: {exc.strerror or exc}", record)
        if record:
            self.note(path, True)
        return out

    def _failed(self, path: str, reason: str, record: bool) -> None:
        if record:
            self.note(path, False, reason)
        return None

    def names(self, folder: str, pattern: str) -> list[str]:
        """Entries of ``folder`` whose name matches ``pattern`` (a regex), sorted naturally."""
        try:
            found = [p.name for p in self.path(folder).iterdir() if re.fullmatch(pattern, p.name)]
        except OSError:
            return []
        return sorted(found, key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)])

    def command(self, argv: Sequence[str]) -> str | None:
        """Stdout of ``argv``, or None with the reason noted (not run on a snapshot)."""
        what = " ".join(argv)
        if not self.run_commands:
            return self._failed(what, f"not run: reading a snapshot under {self.root}", True)
        try:
            status, out, err = self.runner(argv, self.timeout_s)
        except FileNotFoundError:
            return self._failed(what, f"{argv[0]} is not installed", True)
        except subprocess.TimeoutExpired:
            return self._failed(what, f"no answer within {self.timeout_s:g} s", True)
        except OSError as exc:
            return self._failed(what, f"could not run: {exc.strerror or exc}", True)
        if status != 0:
            first = (err.strip().splitlines() or [f"exit status {status}"])[0]
            return self._failed(what, f"failed: {first}", True)
        self.note(what, True)
        return out


def collect(
    root: Path | str = "/",
    runner: Runner | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    run_commands: bool | None = None,
) -> Raw:
    """Everything ``perfmodel probe`` reads about the machine at ``root``, with its attempts.

    Commands run when ``root`` is ``/`` (or where ``run_commands`` says so: a test's runner
    answers them).
    """
    reader = Reader(root, runner, timeout_s, run_commands)
    raw = Raw(root=str(root), when=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    raw.host = socket.gethostname() if reader.live else Path(root).resolve().name
    _cpu_commands(reader, raw)
    raw.cpuinfo = reader.text("/proc/cpuinfo")
    raw.meminfo = reader.text("/proc/meminfo")
    _memory_blocks(reader, raw)
    _cpu_files(reader, raw)
    _nodes(reader, raw)
    _drives(reader, raw)
    _nics(reader, raw)
    raw.dmi = {
        k: v.strip()
        for k in ("sys_vendor", "product_name")
        if (v := reader.text(f"/sys/class/dmi/id/{k}")) is not None
    }
    raw.attempts = reader.attempts
    return raw


def _cpu_commands(reader: Reader, raw: Raw) -> None:
    """``lscpu -J``, else plain ``lscpu`` (util-linux before 2.30 has no -J), and its version."""
    raw.lscpu = reader.command(["lscpu", "-J"])
    raw.lscpu_json = raw.lscpu is not None
    if raw.lscpu is None and reader.run_commands:
        raw.lscpu = reader.command(["lscpu"])
    if raw.lscpu is not None:
        version = reader.command(["lscpu", "--version"])
        raw.lscpu_version = version.strip() if version else None


def _memory_blocks(reader: Reader, raw: Raw) -> None:
    """The memory-hotplug blocks: their size and how many are online (installed RAM less holes)."""
    size = reader.text("/sys/devices/system/memory/block_size_bytes", record=False)
    blocks = reader.names("/sys/devices/system/memory", r"memory\d+")
    if size is None or not blocks:
        reader.note("/sys/devices/system/memory", False, "not present (no memory hotplug blocks)")
        return
    online = sum(
        1
        for b in blocks
        if (reader.text(f"/sys/devices/system/memory/{b}/online", False) or "1").strip() == "1"
    )
    raw.memory_blocks = (size.strip(), online)
    reader.note("/sys/devices/system/memory", True)


def _cpu_files(reader: Reader, raw: Raw) -> None:
    """Per-CPU topology and caches, cpu0's cpufreq and CPPC, and the SMT control."""
    base = "/sys/devices/system/cpu"
    for name in reader.names(base, r"cpu\d+"):
        files = {
            k: v.strip()
            for k in ("physical_package_id", "thread_siblings_list", "core_cpus_list", "core_id")
            if (v := reader.text(f"{base}/{name}/topology/{k}", False)) is not None
        }
        if files:
            raw.cpus[int(name[3:])] = files
        for index in reader.names(f"{base}/{name}/cache", r"index\d+"):
            entry = {
                k: v.strip()
                for k in ("level", "type", "size", "shared_cpu_list")
                if (v := reader.text(f"{base}/{name}/cache/{index}/{k}", False)) is not None
            }
            raw.caches.append(entry)
    reader.note(f"{base}/cpu*/topology", bool(raw.cpus), "" if raw.cpus else "not present")
    reader.note(f"{base}/cpu*/cache", bool(raw.caches), "" if raw.caches else "not present")
    for folder in (f"{base}/cpu0/cpufreq", f"{base}/cpufreq/policy0"):
        for key in CPUFREQ_FILES:
            if key not in raw.cpufreq and (v := reader.text(f"{folder}/{key}", False)) is not None:
                raw.cpufreq[key] = v.strip()
    nominal = reader.text(f"{base}/cpu0/acpi_cppc/nominal_freq", False)
    if nominal is not None:
        raw.cpufreq["nominal_freq_mhz"] = nominal.strip()
    reader.note(
        f"{base}/cpu0/cpufreq",
        bool(raw.cpufreq),
        "" if raw.cpufreq else "not present (no cpufreq driver: a VM, or frequency scaling off)",
    )
    control = reader.text(f"{base}/smt/control", False)
    raw.smt_control = control.strip() if control is not None else None


def _nodes(reader: Reader, raw: Raw) -> None:
    """Each NUMA node's CPUs: ``cpulist``, or ``cpumap`` (a mask) in older snapshots."""
    base = "/sys/devices/system/node"
    for name in reader.names(base, r"node\d+"):
        text = reader.text(f"{base}/{name}/cpulist", False)
        if text is None and (mask := reader.text(f"{base}/{name}/cpumap", False)) is not None:
            text = "mask:" + mask.strip()
        if text is not None:
            raw.nodes[int(name[4:])] = text.strip()
    reader.note(base, bool(raw.nodes), "" if raw.nodes else "not present (a kernel without NUMA)")


def _drives(reader: Reader, raw: Raw) -> None:
    """lsblk (JSON, else key="value" pairs), each disk's queue files and hardware queues, and
    ``nvme id-ctrl`` of each NVMe controller where nvme-cli is installed."""
    raw.lsblk = reader.command(["lsblk", "-J", "-b", "-O"])
    raw.lsblk_json = raw.lsblk is not None
    if raw.lsblk is None and reader.run_commands:
        fields = "NAME,KNAME,PKNAME,TYPE,SIZE,ROTA,MODEL,TRAN,RM,MOUNTPOINT"
        raw.lsblk = reader.command(["lsblk", "-P", "-b", "-o", fields])
    for disk in reader.names("/sys/block", r"[^.].*"):
        if disk.startswith(NOT_DRIVES):
            continue
        files = {
            k: v.strip()
            for k in ("rotational", "nr_requests")
            if (v := reader.text(f"/sys/block/{disk}/queue/{k}", False)) is not None
        }
        queues = reader.names(f"/sys/block/{disk}/mq", r"\d+")
        if queues:
            files["mq"] = str(len(queues))
        raw.block[disk] = files
    reader.note("/sys/block/*/queue, /sys/block/*/mq", bool(raw.block), "" if raw.block else "no disks")
    controllers = reader.names("/sys/class/nvme", r"nvme\d+")
    if not controllers:
        return
    for ctrl in controllers:
        text = reader.command(["nvme", "id-ctrl", f"/dev/{ctrl}", "-o", "json"])
        if text is not None:
            raw.nvme[ctrl] = text
        elif reader.attempts[-1].reason.endswith("not installed"):
            break  # one note is enough


def _nics(reader: Reader, raw: Raw) -> None:
    """Each interface's speed, state and driver; ``physical`` where it sits on a device (NICs,
    virtio-net) rather than being software (loopback, bridges, veth, bonds' slaves included)."""
    base = "/sys/class/net"
    for nic in reader.names(base, r"[^.].*"):
        device = reader.path(f"{base}/{nic}/device")
        info = {"physical": "yes" if device.exists() else "no"}
        driver = reader.path(f"{base}/{nic}/device/driver")
        if driver.exists():
            info["driver"] = os.path.basename(os.path.realpath(driver))
        for key in ("speed", "operstate"):
            value = reader.text(f"{base}/{nic}/{key}", record=False)
            info[key] = value.strip() if value is not None else ""
        raw.nics[nic] = info
    reader.note(base, bool(raw.nics), "" if raw.nics else "not present")
