"""The load generator's own CPU per request, by tool (``data/load_generators.yaml``).

A recorded figure names its load generator in the column ``load_generator``; where the tool has a
measured cost (:func:`cost`), the figure predictor sets the knob ``client_time`` to it
(:func:`client_time_s`), and the model spends it on the load generator's cores (knob
``client_cores``), on the server's (``client_colocated``) or between a reply and the next request.
A tool without one (:data:`WITHOUT_COST`: YCSB, sysbench, ...) sets nothing. Each cost is a
measurement from outside the recorded-figure corpus with the CPU and clock it ran on; a JVM loader
and a native one are separate tools, never borrowed for each other.

>>> round(client_time_s("cassandra-stress") * 1e6, 2)
36.42
>>> client_time_s("ycsb") is None
True
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from perfmodel.inputs._data import data_dir, load_yaml
from perfmodel.inputs.errors import UnknownNameError

KINDS = ("measurement",)


@dataclass(frozen=True)
class LoadGenerator:
    """One tool's measured CPU per completed request [us], the CPU and clock [GHz] it ran on, and
    where it comes from (``source``: file@commit:lines and the quote; ``derivation``: the
    arithmetic)."""

    id: str
    name: str
    cpu_us_per_request: float
    kind: str
    cpu: str
    clock_ghz: float
    source: str
    derivation: str
    caveats: str = ""


@dataclass(frozen=True)
class Table:
    """The tools with a cost and the tools a figure may name without one (id -> why none)."""

    costs: Mapping[str, LoadGenerator]
    without_cost: Mapping[str, str]


def _entry(entry: Mapping) -> LoadGenerator:
    tool = LoadGenerator(
        str(entry["id"]), str(entry["name"]), float(entry["cpu_us_per_request"]), str(entry["kind"]),
        str(entry["cpu"]), float(entry["clock_ghz"]), str(entry["source"]), str(entry["derivation"]),
        str(entry.get("caveats", "")),
    )  # fmt: skip
    if not tool.cpu_us_per_request > 0 or not tool.clock_ghz > 0:
        raise ValueError(f"load generator {tool.id}: cpu_us_per_request and clock_ghz must be > 0")
    if tool.kind not in KINDS or not tool.source.strip():
        raise ValueError(f"load generator {tool.id}: kind must be one of {', '.join(KINDS)}, with a source")
    return tool


@functools.lru_cache(maxsize=1)
def table() -> Table:
    """The shipped table, validated: positive costs with a kind and a source, no id twice."""
    doc = load_yaml((data_dir() / "load_generators.yaml").read_text(encoding="utf-8"))
    costs: dict[str, LoadGenerator] = {}
    for entry in doc["load_generators"]:
        tool = _entry(entry)
        if tool.id in costs:
            raise ValueError(f"data/load_generators.yaml: load generator {tool.id} given twice")
        costs[tool.id] = tool
    without = {str(k): str(v) for k, v in doc.get("tools_without_cost", {}).items()}
    both = sorted(set(costs) & set(without))
    if both:
        raise ValueError(f"data/load_generators.yaml: {', '.join(both)} both with and without a cost")
    return Table(costs, without)


def names() -> tuple[str, ...]:
    """Every tool a figure may name: those with a cost, then those without, each in file order."""
    t = table()
    return (*t.costs, *t.without_cost)


def cost(tool: str) -> LoadGenerator | None:
    """The tool's measured cost, None for a known tool without one; UnknownNameError otherwise."""
    t = table()
    if tool not in t.costs and tool not in t.without_cost:
        raise UnknownNameError("load generator", tool, list(names()))
    return t.costs.get(tool)


def client_time_s(tool: str) -> float | None:
    """The tool's CPU per request [s] (the knob ``client_time``), None where it has no cost."""
    found = cost(tool)
    return None if found is None else found.cpu_us_per_request * 1e-6
