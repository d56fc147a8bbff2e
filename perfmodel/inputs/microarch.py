"""Work per clock cycle of server cores, per microarchitecture (``data/microarchitectures.yaml``).

A thread's useful clock is ``clock(busy cores) x perf_per_ghz x ghz_factor[arch]``
(:func:`perfmodel.model.chain.core_clock`): ``perf_per_ghz`` is the
core's single-thread integer work per GHz relative to the reference core (Broadwell-EP), from one
consistent published benchmark family (SPECrate2017_int_base with one copy, clocks measured by
perf; older Intel cores chained in from SPECint_base2006); ``ghz_factor[arch]`` is the calibrated
residual per architecture family (prior 1). A platform names its core in the catalog field
``microarchitecture``; without one it gets its architecture family's default core.

>>> round(perf_per_ghz("neoverse-v2") / perf_per_ghz("nehalem-ep"), 2)
2.82
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from perfmodel.inputs._data import data_dir, load_yaml
from perfmodel.inputs.errors import UnknownNameError


@dataclass(frozen=True)
class Microarchitecture:
    """One core design: its SPECrate2017_int_base (1 copy) per GHz [1/GHz] and where it comes from."""

    id: str
    name: str
    int_rate1_per_ghz: float
    confidence: str
    source: str


@dataclass(frozen=True)
class Table:
    """Every known core, the reference core's id and each architecture family's default core."""

    cores: Mapping[str, Microarchitecture]
    reference: str
    family_defaults: Mapping[str, str]


@functools.lru_cache(maxsize=1)
def table() -> Table:
    """The shipped table, validated: positive scores, a source each, defaults and reference known."""
    doc = load_yaml((data_dir() / "microarchitectures.yaml").read_text(encoding="utf-8"))
    cores = {}
    for entry in doc["microarchitectures"]:
        core = Microarchitecture(
            str(entry["id"]), str(entry["name"]), float(entry["int_rate1_per_ghz"]),
            str(entry["confidence"]), str(entry["source"]),
        )  # fmt: skip
        if not core.int_rate1_per_ghz > 0 or not core.source.strip():
            raise ValueError(f"microarchitecture {core.id}: needs a positive int_rate1_per_ghz and a source")
        cores[core.id] = core
    out = Table(cores, str(doc["reference"]), dict(doc["family_defaults"]))
    for name in (out.reference, *out.family_defaults.values()):
        if name not in cores:
            raise ValueError(f"data/microarchitectures.yaml names unknown microarchitecture {name!r}")
    return out


def names() -> list[str]:
    """The known microarchitecture ids."""
    return sorted(table().cores)


def check(name: str) -> str:
    """``name`` if it is a known microarchitecture, else UnknownNameError listing the valid ones."""
    if name not in table().cores:
        raise UnknownNameError("microarchitecture", name, names())
    return name


def family_default(arch: str) -> str:
    """The core assumed for a platform of family ``arch`` that names none."""
    return table().family_defaults[arch]


def perf_per_ghz(name: str) -> float:
    """Single-thread integer work per GHz of core ``name`` relative to the reference core [-]."""
    t = table()
    return t.cores[check(name)].int_rate1_per_ghz / t.cores[t.reference].int_rate1_per_ghz
