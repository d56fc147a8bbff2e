"""What the parsers share: the measurements an output states, the context it does not, and the
figure rows both make (the schema of :mod:`perfmodel.evidence.recorded`).

A parser turns the text of one tool's output into a :class:`Parsed`: one :class:`Measurement` per
number it records (a throughput, a latency percentile), each with the load and configuration the
output states (``load``: figure columns such as ``clients``, ``iodepth``, ``read_fraction``), and
``needs``: the columns the model needs that this output never states (redis-benchmark's CSV has no
client count). :func:`figure_rows` adds the :class:`Context` (what the user says on the command
line: system, platform, device, nodes, ``--set COLUMN=VALUE``) and returns schema rows, or an
:class:`IngestError` naming every flag still to give -- it never guesses a value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from perfmodel.evidence.recorded import COLUMN_BY_NAME, COLUMNS, CONFIG_COLUMNS, METRICS
from perfmodel.inputs.errors import InputError
from perfmodel.inputs.systems import list_systems

#: latency percentiles [%] and the figure metric each is recorded as
PERCENTILE_METRICS = {50.0: "latency_p50", 95.0: "latency_p95", 99.0: "latency_p99", 99.9: "latency_p999"}
#: the flag that supplies each context column
CONTEXT_FLAGS = {
    "system": "--system ID (a shipped spec: {systems}; or your spec's YAML path)",
    "platform_id": "--platform ID (`perfmodel platforms`; your own hardware with --catalog DIR)",
    "device_id": "--device ID (`perfmodel devices`; dram-in-memory for a store that keeps no data on "
    "a drive)",
}


class IngestError(InputError):
    """An output that cannot become figures as it stands: unreadable, of an unknown format, or
    lacking a value only the user can give (the message names the flag)."""


@dataclass(frozen=True)
class Measurement:
    """One number an output states, with where it is and what ran.

    ``value`` is the number as printed (a string), or computed from printed numbers (then ``note``
    says how); ``unit`` a unit of :mod:`perfmodel.inputs.units`; ``load`` the figure's
    configuration columns the output states; ``same_as`` the ``(key, metric)`` of the measurement
    this one restates (a closed loop's mean latency of its throughput); ``(key, metric)`` is unique
    in the output.
    """

    key: str
    metric: str
    value: str
    unit: str
    locator: str
    load: Mapping[str, object] = field(default_factory=dict)
    same_as: tuple[str, str] | tuple[()] = ()
    note: str = ""


@dataclass(frozen=True)
class Parsed:
    """A parser's result: the measurements, the columns the output never states (``needs``:
    column -> where the tool sets it), notes for the summary, the system the output names, and
    ``defaults``: columns the output does not print but the tool's defaults fix (sysbench 1.0's
    key distribution), recorded unless ``--set`` says otherwise."""

    measurements: tuple[Measurement, ...]
    needs: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    system: str = ""
    defaults: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """What the output does not carry, from the command line.

    ``source``: the ``source`` column (the file name, or the user's citation); ``source_id`` and
    ``file_id`` (prefix of the figure ids) are ids without spaces; ``group`` the lab (``--lab``);
    ``fields``: further configuration columns (``--set COLUMN=VALUE``), as text.
    """

    source: str
    source_id: str
    file_id: str = ""
    group: str = ""
    system: str = ""
    platform_id: str = ""
    device_id: str = ""
    nodes: int | None = None
    network_id: str = ""
    variant: str = ""
    fields: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Ingested:
    """Figure rows from one output: ``rows`` (dicts over :data:`COLUMNS`, text cells),
    ``left_out`` (measurements not recorded: ``(key, metric, reason)``), ``notes`` and
    ``system_note`` (where the system came from)."""

    format: str
    rows: tuple[dict, ...]
    left_out: tuple[tuple[str, str, str], ...] = ()
    notes: tuple[str, ...] = ()
    system_note: str = ""


def slug(text: str) -> str:
    """``text`` as an id: lower case, runs of other characters as one ``-``."""
    return re.sub(r"[^a-z0-9.]+", "-", str(text).lower()).strip("-.") or "x"


def lines(text: str) -> list[str]:
    """The output's lines, progress lines a carriage return overwrote split apart."""
    return re.split(r"\r\n|\r|\n", text)


def number(text: str) -> float:
    """A printed number (``1,000,000`` and ``12.5`` alike) as a float; IngestError otherwise."""
    try:
        value = float(str(text).replace(",", "").strip())
    except ValueError:
        raise IngestError(f"expected a number, got {text!r}") from None
    return value


def printed(value: float) -> str:
    """A computed number as a cell (12 significant digits)."""
    return f"{value:.12g}"


def percentile_metric(percent: float) -> str:
    """The metric of a latency percentile [%] (``latency_p99``); ``latency_pNN`` for one the
    figure format does not record (left out by :func:`figure_rows`)."""
    known = PERCENTILE_METRICS.get(round(float(percent), 4))
    return known or f"latency_p{printed(float(percent)).replace('.', '')}"


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return printed(value)
    return str(value)


def _missing(parsed: Parsed, context: Context, system: str) -> list[str]:
    """The flags still to give, one line each."""
    wanted = {"system": system, "platform_id": context.platform_id, "device_id": context.device_id}
    hint = {name: flag.format(systems=", ".join(list_systems())) for name, flag in CONTEXT_FLAGS.items()}
    out = [f"{name}: {hint[name]}" for name, value in wanted.items() if not value]
    for column, where in parsed.needs.items():
        stated = all(column in m.load for m in parsed.measurements)
        if not stated and column not in context.fields:
            out.append(f"{column}: --set {column}=VALUE ({where})")
    return out


def _check_fields(parsed: Parsed, context: Context) -> None:
    """``--set`` names configuration columns and does not contradict the output."""
    for column, value in context.fields.items():
        if column not in CONFIG_COLUMNS:
            valid = ", ".join(CONFIG_COLUMNS)
            raise IngestError(f"--set {column}: not a configuration column; valid: {valid}")
        for m in parsed.measurements:
            if column in m.load and not _same(m.load[column], value):
                raise IngestError(
                    f"--set {column}={value}: the output says {column}={_cell(m.load[column])} "
                    f"({m.locator}); leave it out or fix the output"
                )


def _same(stated: object, given: str) -> bool:
    if isinstance(stated, int | float) and not isinstance(stated, bool):
        try:
            return math.isclose(float(stated), float(given), rel_tol=1e-9)
        except ValueError:
            return False
    return _cell(stated).lower() == str(given).strip().lower()


def _row(m: Measurement, context: Context, system: str, fmt: str, defaults: Mapping[str, object]) -> dict:
    """One figure row (text cells over :data:`COLUMNS`): the tool's defaults, then what the output
    states, then the user's ``--set``."""
    row = dict.fromkeys((c.name for c in COLUMNS), "")
    fixed = {
        "figure_id": figure_id(context, m.key, m.metric),
        "source_id": context.source_id,
        "group": context.group,
        "source": context.source,
        "locator": m.locator,
        "role": "measured",
        "system": system,
        "platform_id": context.platform_id,
        "device_id": context.device_id,
        "nodes": context.nodes,
        "network_id": context.network_id,
        "variant": context.variant,
        "level": "client",
        "metric": m.metric,
        "value": m.value,
        "unit": m.unit,
    }
    row.update({k: _cell(v) for k, v in fixed.items()})
    row.update({k: _cell(v) for k, v in defaults.items() if k in COLUMN_BY_NAME})
    row.update({k: _cell(v) for k, v in m.load.items() if k in COLUMN_BY_NAME})
    row.update({k: str(v) for k, v in context.fields.items()})
    row["notes"] = f"read by perfmodel ingest ({fmt})" + (f"; {m.note}" if m.note else "")
    return row


def figure_id(context: Context, key: str, metric: str) -> str:
    """The figure id of measurement ``key`` / ``metric`` of this output."""
    return slug(f"{context.file_id or context.source_id}-{key}-{metric.removeprefix('latency_')}")


def figure_rows(
    parsed: Parsed, context: Context, fmt: str, implied_system: str = "", tool: str = ""
) -> Ingested:
    """The figure rows of ``parsed`` in ``context``.

    The system is the user's (``--system``), else the one the output names, else the one the tool
    implies (``implied_system``: pgbench runs on PostgreSQL); ``tool`` is the column
    ``load_generator`` (the tool whose output this is; ``--set load_generator=`` overrides it, as
    for a fork of the tool). Raises :class:`IngestError` listing
    every flag still needed, or a ``--set`` the output contradicts. Measurements of a metric the
    figure format does not record, or printed as zero (below the output's resolution), are left
    out and listed in ``left_out``.
    """
    system = context.system or parsed.system or implied_system
    missing = _missing(parsed, context, system)
    if missing:
        raise IngestError(f"the {fmt} output does not say:\n  " + "\n  ".join(missing))
    _check_fields(parsed, context)
    keys = [(m.key, m.metric) for m in parsed.measurements]
    if len(set(keys)) != len(keys):
        raise IngestError(f"{fmt}: the output names one measurement twice")
    defaults = {**({"load_generator": tool} if tool else {}), **parsed.defaults}
    left_out, kept = [], []
    for m in parsed.measurements:
        if m.metric not in METRICS:
            left_out.append((m.key, m.metric, "not a metric of the figure format"))
        elif number(m.value) <= 0:
            left_out.append((m.key, m.metric, f"printed as {m.value}, below the output's resolution"))
        else:
            kept.append((m, _row(m, context, system, fmt, defaults)))
    ids = {row["figure_id"] for _, row in kept}
    for m, row in kept:
        other = figure_id(context, *m.same_as) if m.same_as else ""
        row["same_measurement"] = other if other in ids else ""
    rows = tuple(row for _, row in kept)
    source = "--system" if context.system else ("the output" if parsed.system else "the tool")
    note = f"system {system} (from {source}; --system to change)" if system else ""
    return Ingested(fmt, rows, tuple(left_out), tuple(parsed.notes), note)


#: metrics of a rate of operations (a closed loop's mean latency restates one of them)
THROUGHPUT_METRICS = ("throughput", "iops", "tpmc")


def run_measurements(
    key: str,
    locator: str,
    load: Mapping[str, object],
    values: list[tuple[str, str, str, str]],
    *,
    note: str = "",
    closed_loop: bool = True,
) -> list[Measurement]:
    """The measurements of one run: ``values`` are ``(metric, value, unit, label)``, ``label``
    what the output calls the number (added to ``locator``). In a closed loop (``closed_loop``)
    the mean latency restates the run's throughput (Little's law), so it names it in ``same_as``.
    """
    rate = next((metric for metric, *_ in values if metric in THROUGHPUT_METRICS), "")
    out = []
    for metric, value, unit, label in values:
        same = (key, rate) if closed_loop and rate and metric == "latency_mean" else ()
        where = f"{locator}, {label}" if label else locator
        out.append(Measurement(key, metric, value, unit, where, dict(load), same, note))
    return out
