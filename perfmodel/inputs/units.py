"""Units of recorded figures and their conversion to SI.

perfmodel computes in SI (seconds, bytes, operations per second). Recorded
figures keep the unit their source printed (``kops/s``, ``ms``, ``MB/s``,
``tpm``); :func:`to_si` converts them once, when data is loaded.

Decimal prefixes follow the sources (storage vendors and iostat print
MB = 1e6 B); binary units are spelled ``KiB``, ``MiB``, ``GiB``.

Relative units describe a figure measured against a baseline configuration:
``ratio`` (measured / baseline, e.g. 1.68x), ``pct_change`` (100 x (measured /
baseline - 1), e.g. -29.08 %). ``pct`` is a plain percentage of a whole (a
share of I/Os, a utilisation) and converts to a fraction.
"""

from __future__ import annotations

from dataclasses import dataclass

#: byte multiples [B]: decimal (``GB``, as figures state sizes) and binary (``KIB``, ``MIB``, ``GIB``)
KIB = 1024.0
MIB = 2.0**20
GIB = 2.0**30
GB = 1e9


@dataclass(frozen=True)
class Unit:
    """A unit: its dimension, the factor to SI and the SI unit's name."""

    name: str
    dimension: str
    to_si: float
    si: str


_UNITS = [
    # rates of operations (requests, transactions, I/Os)
    Unit("ops/s", "rate", 1.0, "1/s"),
    Unit("kops/s", "rate", 1e3, "1/s"),
    Unit("iops", "rate", 1.0, "1/s"),
    Unit("kiops", "rate", 1e3, "1/s"),
    Unit("Mops/s", "rate", 1e6, "1/s"),
    Unit("Miops", "rate", 1e6, "1/s"),
    Unit("tpm", "rate", 1.0 / 60.0, "1/s"),
    # bandwidth
    Unit("B/s", "bandwidth", 1.0, "B/s"),
    Unit("MB/s", "bandwidth", 1e6, "B/s"),
    Unit("GB/s", "bandwidth", 1e9, "B/s"),
    Unit("MiB/s", "bandwidth", 2.0**20, "B/s"),
    Unit("GiB/s", "bandwidth", 2.0**30, "B/s"),
    Unit("Gb/s", "bandwidth", 1e9 / 8.0, "B/s"),
    # time
    Unit("s", "time", 1.0, "s"),
    Unit("ms", "time", 1e-3, "s"),
    Unit("us", "time", 1e-6, "s"),
    Unit("ns", "time", 1e-9, "s"),
    Unit("min", "time", 60.0, "s"),
    # sizes
    Unit("B", "size", 1.0, "B"),
    Unit("KB", "size", 1e3, "B"),
    Unit("MB", "size", 1e6, "B"),
    Unit("GB", "size", 1e9, "B"),
    Unit("TB", "size", 1e12, "B"),
    Unit("KiB", "size", 2.0**10, "B"),
    Unit("MiB", "size", 2.0**20, "B"),
    Unit("GiB", "size", 2.0**30, "B"),
    # counts and shares
    Unit("count", "count", 1.0, "1"),
    Unit("pct", "fraction", 1e-2, "1"),
    # relative to a baseline configuration
    Unit("ratio", "ratio", 1.0, "1"),
    Unit("pct_change", "pct_change", 1.0, "%"),
]

UNITS: dict[str, Unit] = {u.name: u for u in _UNITS}
RELATIVE_DIMENSIONS = frozenset({"ratio", "pct_change"})


def unit(name: str) -> Unit:
    """Look up a unit by name; raise ValueError listing the known units."""
    try:
        return UNITS[name]
    except KeyError:
        raise ValueError(f"unknown unit {name!r}; known units: {', '.join(UNITS)}") from None


def to_si(value: float, unit_name: str) -> float:
    """Convert ``value`` in ``unit_name`` to SI (relative units unchanged)."""
    return value * unit(unit_name).to_si


def is_relative(unit_name: str) -> bool:
    """True for units that compare with a baseline configuration."""
    return unit(unit_name).dimension in RELATIVE_DIMENSIONS


def pct_change_to_ratio(pct_change):
    """Convert a percent change to a ratio: ``1 + pct / 100`` [-]."""
    return 1.0 + pct_change / 100.0
