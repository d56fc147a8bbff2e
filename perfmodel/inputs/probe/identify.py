"""Which catalog architecture family and core design a probed CPU is (``data/cpu_ids.yaml``).

x86 CPUs are named by vendor, family, model and stepping, Arm CPUs by implementer and part,
POWER CPUs by the name ``/proc/cpuinfo`` prints. The answer says how well it fits (``same``
core, or the ``nearest`` known one) and why, or that the CPU is not in the table.

>>> identify({"machine": "x86_64", "vendor": "GenuineIntel", "family": 6, "model": 0x4F}).core
'broadwell-ep'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from perfmodel.inputs._data import data_dir, load_yaml

#: lscpu / uname machine names per instruction set
X86_MACHINES = ("x86_64", "amd64", "i686", "i386")
ARM_MACHINES = ("aarch64", "arm64")
POWER_MACHINES = ("ppc64", "ppc64le")


@dataclass(frozen=True)
class Identity:
    """A probed CPU: catalog ``arch`` (None where it is none of the catalog's families), ``core``
    (a ``data/microarchitectures.yaml`` id, or None), ``fit`` (``same``/``nearest``/``""``),
    ``label`` (what the CPU was identified as), ``reference`` (the ``cpu_ids.yaml`` reference
    key behind the mapping) and ``note`` (why a nearest core is only near)."""

    arch: str | None
    core: str | None
    fit: str
    label: str
    reference: str = ""
    note: str = ""


@functools.lru_cache(maxsize=1)
def table() -> dict:
    """The shipped ``data/cpu_ids.yaml``."""
    return load_yaml((data_dir() / "cpu_ids.yaml").read_text(encoding="utf-8"))


def _in(value: int | None, ranges: list) -> bool:
    """Whether ``value`` is one of ``ranges`` (numbers, or ``[low, high]`` pairs inclusive)."""
    if value is None:
        return False
    for item in ranges:
        low, high = (item, item) if isinstance(item, int) else item
        if low <= value <= high:
            return True
    return False


def _x86(cpu: Mapping) -> Identity:
    vendor, family, model, stepping = (cpu.get(k) for k in ("vendor", "family", "model", "stepping"))
    what = (
        f"{vendor} family {family} model {model:#x}"
        if isinstance(model, int)
        else f"{vendor} (model unknown)"
    )
    for row in table()["x86"]:
        if row["vendor"] != vendor or row["family"] != family or not _in(model, row["models"]):
            continue
        if "steppings" in row and not _in(stepping, row["steppings"]):
            continue
        label = f"{what} ({row['name']})"
        return Identity("x86", row["core"], row["fit"], label, row["source"], row.get("note", ""))
    return Identity("x86", None, "", what)


def _arm(cpu: Mapping) -> Identity:
    implementer, part = cpu.get("implementer"), cpu.get("part")
    what = (
        f"Arm implementer {implementer:#x} part {part:#x}"
        if implementer is not None and part is not None
        else f"Arm CPU {cpu.get('model_name') or '(implementer and part unknown)'}"
    )
    for row in table()["arm"]:
        if row["implementer"] == implementer and row["part"] == part:
            return Identity(row["arch"], row["core"], row["fit"], f"{what} ({row['name']})", row["source"])
    vendor = str(cpu.get("vendor") or cpu.get("model_name") or "")
    kunpeng = implementer in table()["kunpeng_implementers"] or re.search(r"hisilicon|kunpeng", vendor, re.I)
    return Identity("kunpeng" if kunpeng else "arm", None, "", what)


def _power(cpu: Mapping) -> Identity:
    name = str(cpu.get("model_name") or "")
    for row in table()["power"]:
        if re.match(rf"\s*{row['pattern']}(?!\d)", name, re.I):
            return Identity(row["arch"], row["core"], row["fit"], f"{name} ({row['name']})")
    return Identity(None, None, "", name or "POWER CPU (name unknown)")


def identify(cpu: Mapping) -> Identity:
    """The catalog family and core of a CPU described by ``cpu``: ``machine`` (lscpu's
    Architecture), ``vendor``, ``family``, ``model``, ``stepping`` (x86 integers),
    ``implementer``, ``part`` (Arm integers) and ``model_name``."""
    machine = str(cpu.get("machine") or "")
    if machine in X86_MACHINES or cpu.get("vendor") in ("GenuineIntel", "AuthenticAMD", "HygonGenuine"):
        return _x86(cpu)
    if machine in ARM_MACHINES or cpu.get("implementer") is not None:
        return _arm(cpu)
    if machine in POWER_MACHINES or re.match(r"\s*POWER", str(cpu.get("model_name") or ""), re.I):
        return _power(cpu)
    return Identity(None, None, "", machine or "unknown instruction set")
