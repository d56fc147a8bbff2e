"""Price tables: what a server of each platform costs, with a source and a date for every number.

The shipped tables are YAML files in ``data/prices/`` (``data/prices/README.md`` gives the format
and what is priced); a user's table in the same format, YAML or CSV, works wherever the shipped one
does and, loaded over it, replaces the entries of the platforms it names. Keys carry their unit
(``list_price_usd``, ``power_w``, ``on_demand_usd_per_hour``); the loader converts hourly and yearly
cloud prices to monthly ones once, here (x ``hours_per_month``, / 12).

>>> table = load_prices()
>>> entry = table.entries["aws-i3-8xlarge"]
>>> round(monthly_cost(entry), 2)   # 2.496 USD/h x 730 h
1822.08

:func:`monthly_cost` is the formula (USD per month per server):

* cloud: the on-demand (or 1-year or 3-year reserved) price per month, plus ``storage_usd_per_month``;
  over a horizon ``H`` not a whole number of reservations of ``R`` months (12 or 36) every reservation
  begun is paid whole, ``x R ceil(H / R) / H``;
* on premises: ``list_price_usd x ceil(H / A) / H`` (bought at the start, replaced every
  ``A = amortisation_months``; without a horizon ``list_price_usd / A``)
  ``+ power_w / 1000 x hours_per_month x pue x usd_per_kwh + support_usd_per_year / 12``.

The electricity price, PUE, amortisation months and hours per month are assumptions: defaults in
``data/prices/assumptions.yaml`` (each with its reason), overridden by a table's ``assumptions:``
section and by the function's arguments.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from perfmodel.inputs._data import data_dir, load_yaml
from perfmodel.inputs.errors import DataError, Problem, read_text

KINDS = ("cloud", "on_premises")
TERMS = ("on_demand", "reserved_1y", "reserved_3y")
#: months a reservation commits to, per reserved term [month]
TERM_MONTHS = {"reserved_1y": 12, "reserved_3y": 36}
#: the units a term's price may be given in (the loader keeps per month)
PRICE_UNITS = ("hour", "month", "year")
#: numeric fields of a cloud entry: each term's price per hour, month or year, and attached storage
CLOUD_FIELDS = tuple(f"{t}_usd_per_{u}" for t in TERMS for u in PRICE_UNITS) + ("storage_usd_per_month",)
#: numeric fields of an on-premises entry
ON_PREMISES_FIELDS = ("list_price_usd", "power_w", "rack_units", "support_usd_per_year")
#: text fields an entry may carry
TEXT_FIELDS = ("platform", "kind", "currency", "date", "provider", "instance_type", "region",
               "operating_system", "notes")  # fmt: skip
#: the assumptions of the formula, with their unit
ASSUMPTIONS = {
    "usd_per_kwh": "electricity price [USD/kWh]",
    "pue": "power usage effectiveness of the site [-], >= 1",
    "amortisation_months": "months over which a server's list price is spread [month]",
    "hours_per_month": "hours in a month [h]",
}
#: the prefixes a source string may start with besides a reference key
_SOURCE_PREFIXES = ("derived:", "assumption:")
_ASSUMPTIONS_FILE = "assumptions.yaml"


@dataclass(frozen=True)
class PriceEntry:
    """One platform's price, monthly figures in USD.

    ``on_demand_usd_per_month`` / ``reserved_1y_usd_per_month`` / ``reserved_3y_usd_per_month``
    [USD/month] (cloud; hourly prices converted with the table's ``hours_per_month``, yearly ones
    divided by 12), ``storage_usd_per_month`` [USD/month];
    ``list_price_usd`` [USD], ``power_w`` [W], ``rack_units`` [U], ``support_usd_per_year``
    [USD/year] (on premises). A field the source does not give is None. ``sources`` maps each
    numeric field as written in the file to its source; ``file`` is where the entry came from.
    """

    platform: str
    kind: str
    currency: str
    date: str
    on_demand_usd_per_month: float | None = None
    reserved_1y_usd_per_month: float | None = None
    reserved_3y_usd_per_month: float | None = None
    storage_usd_per_month: float | None = None
    list_price_usd: float | None = None
    power_w: float | None = None
    rack_units: float | None = None
    support_usd_per_year: float | None = None
    provider: str = ""
    instance_type: str = ""
    region: str = ""
    notes: str = ""
    sources: Mapping[str, str] = field(default_factory=dict)
    file: str = ""


@dataclass(frozen=True)
class PriceTable:
    """Price entries by platform id, the formula's assumptions and the files they came from."""

    entries: Mapping[str, PriceEntry]
    assumptions: Mapping[str, float]
    assumption_sources: Mapping[str, str]
    files: tuple[str, ...] = ()

    def __contains__(self, platform: str) -> bool:
        return platform in self.entries

    def describe(self) -> str:
        """One line: the files and the dates of their prices."""
        dates = sorted({e.date for e in self.entries.values()})
        span = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}" if dates else "no entries"
        names = ", ".join(Path(f).name for f in self.files) or "no files"
        return f"prices from {names} (dated {span})"


def shipped_files() -> list[Path]:
    """The shipped price tables, ``data/prices/*.yaml`` less the assumptions file."""
    folder = data_dir() / "prices"
    return sorted(p for p in folder.glob("*.yaml") if p.name != _ASSUMPTIONS_FILE)


def default_assumptions() -> tuple[dict[str, float], dict[str, str]]:
    """The formula's defaults and their sources, from ``data/prices/assumptions.yaml``."""
    path = data_dir() / "prices" / _ASSUMPTIONS_FILE
    doc = _yaml_doc(path)
    problems: list[Problem] = []
    values, sources = _assumptions(doc, str(path), _references(doc, str(path), problems), problems)
    missing = sorted(set(ASSUMPTIONS) - set(values))
    problems += [Problem(str(path), "assumptions", name, "missing") for name in missing]
    if problems:
        raise DataError(problems)
    return values, sources


def load_prices(paths: str | Path | Iterable[str | Path] | None = "shipped", *,
                base: PriceTable | str | None = "shipped") -> PriceTable:  # fmt: skip
    """Load price tables: ``"shipped"`` (or None) for ``data/prices/``, or a user's YAML / CSV file(s).

    A user's files are loaded over ``base`` (default: the shipped tables; None: on their own): an
    entry for a platform the base prices replaces the base's, and a file's ``assumptions:`` replace
    the base's. Raises :class:`~perfmodel.inputs.errors.DataError` naming file, entry and field for
    every problem found (all of them at once), :class:`FileNotFoundError` for a missing file.
    """
    defaults, default_sources = default_assumptions()
    if paths is None or (isinstance(paths, str) and paths == "shipped"):
        files, base = shipped_files(), None
    elif isinstance(paths, str | Path):
        files = [Path(paths)]
    else:
        files = [Path(p) for p in paths]
    if isinstance(base, str):
        if base != "shipped":
            raise ValueError(f"base: 'shipped', a PriceTable or None, got {base!r}")
        base = load_prices("shipped")
    entries = dict(base.entries) if base else {}
    assumptions = dict(base.assumptions) if base else dict(defaults)
    assumption_sources = dict(base.assumption_sources) if base else dict(default_sources)
    problems: list[Problem] = []
    for path in files:
        mine, values, sources = _load_file(path, assumptions["hours_per_month"], problems)
        entries.update(mine)
        assumptions.update(values)
        assumption_sources.update(sources)
    if problems:
        raise DataError(problems)
    return PriceTable(MappingProxyType(entries), MappingProxyType(assumptions),
                      MappingProxyType(assumption_sources),
                      tuple(base.files if base else ()) + tuple(str(p) for p in files))  # fmt: skip


def monthly_cost(entry: PriceEntry, *, term: str = "on_demand", horizon_months: float | None = None,
                 usd_per_kwh: float | None = None, pue: float | None = None,
                 amortisation_months: float | None = None, hours_per_month: float | None = None,
                 assumptions: Mapping[str, float] | None = None) -> float:  # fmt: skip
    """What one server of ``entry`` costs a month [USD/month] (the module doc's formula).

    ``term``: ``on_demand``, ``reserved_1y`` or ``reserved_3y`` (cloud; NaN when the entry has no
    price for it).
    ``horizon_months`` [month]: the period the cost is averaged over (None: the steady state).
    ``usd_per_kwh`` [USD/kWh], ``pue`` [-], ``amortisation_months`` [month], ``hours_per_month`` [h]:
    override ``assumptions`` (a table's), which override the shipped defaults.
    """
    if term not in TERMS:
        raise ValueError(f"term: one of {', '.join(TERMS)}, got {term!r}")
    given = {"usd_per_kwh": usd_per_kwh, "pue": pue, "amortisation_months": amortisation_months,
             "hours_per_month": hours_per_month}  # fmt: skip
    a = dict(assumptions) if assumptions is not None else default_assumptions()[0]
    a.update({k: v for k, v in given.items() if v is not None})
    _check_assumptions(a)
    if horizon_months is not None and not (_is_number(horizon_months) and horizon_months > 0):
        raise ValueError(f"horizon_months: a number of months > 0, got {horizon_months!r}")
    if entry.kind == "cloud":
        price = getattr(entry, f"{term}_usd_per_month")
        if price is None:
            return math.nan
        if term in TERM_MONTHS and horizon_months is not None:  # the whole reservation is paid
            months = TERM_MONTHS[term]
            price = price * months * math.ceil(horizon_months / months) / horizon_months
        return float(price + (entry.storage_usd_per_month or 0.0))
    if entry.list_price_usd is None:
        return math.nan
    months = float(a["amortisation_months"])
    if horizon_months is None:
        capital = entry.list_price_usd / months
    else:
        capital = entry.list_price_usd * math.ceil(horizon_months / months) / horizon_months
    energy = (entry.power_w or 0.0) / 1000.0 * a["hours_per_month"] * a["pue"] * a["usd_per_kwh"]
    return float(capital + energy + (entry.support_usd_per_year or 0.0) / 12.0)


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_assumptions(a: Mapping[str, Any]) -> None:
    for name in ASSUMPTIONS:
        value = a.get(name)
        low = 1.0 if name == "pue" else 0.0
        ok = _is_number(value) and (value >= low if name in ("pue", "usd_per_kwh") else value > low)
        if not ok:
            op = ">=" if name in ("pue", "usd_per_kwh") else ">"
            raise ValueError(f"{name}: {ASSUMPTIONS[name]}, must be a number {op} {low:g}, got {value!r}")


def _yaml_doc(path: Path):
    try:
        return load_yaml(read_text(path, "price table"))
    except yaml.YAMLError as exc:
        raise DataError(Problem(str(path), "", "", f"not valid YAML: {exc}")) from None


def _references(doc, file: str, problems: list[Problem]) -> dict[str, str]:
    refs = doc.get("references", {}) if isinstance(doc, dict) else {}
    if refs is None:
        refs = {}
    if not isinstance(refs, dict):
        problems.append(Problem(file, "references", "references", "must be a mapping key -> citation"))
        return {}
    return {str(k): str(v) for k, v in refs.items()}


def _source_ok(text, refs: Mapping[str, str] | None) -> bool:
    """A source string that names a reference key (YAML) or is non-empty (CSV: ``refs`` None)."""
    if not isinstance(text, str) or not text.strip():
        return False
    if text.startswith(_SOURCE_PREFIXES) or refs is None:
        return True
    return any(text == k or text.startswith(f"{k}:") or text.startswith(f"{k} ") for k in refs)


def _assumptions(doc, file: str, refs, problems) -> tuple[dict[str, float], dict[str, str]]:
    if not isinstance(doc, dict) or not doc.get("assumptions"):
        return {}, {}
    given, sources = doc["assumptions"], doc.get("sources") or {}
    if not isinstance(given, dict):
        problems.append(Problem(file, "assumptions", "assumptions", "must be a mapping name -> value"))
        return {}, {}
    values = {}
    for name, value in given.items():
        if name not in ASSUMPTIONS:
            problems.append(Problem(file, "assumptions", str(name),
                                    f"unknown assumption; known: {', '.join(ASSUMPTIONS)}"))  # fmt: skip
            continue
        try:
            _check_assumptions({**{k: 1.0 for k in ASSUMPTIONS}, name: value})
        except ValueError as exc:
            problems.append(Problem(file, "assumptions", name, str(exc).split(": ", 1)[1]))
            continue
        if not _source_ok(sources.get(name) if isinstance(sources, dict) else None, refs):
            problems.append(
                Problem(file, "assumptions", name, "no source: add sources.<name>: 'assumption: why'")
            )
            continue
        values[name] = float(value)
    return values, {k: str(sources[k]) for k in values}


def _load_file(path: Path, hours_per_month: float, problems: list[Problem]):
    """The entries, assumptions and assumption sources of one table (problems appended)."""
    file = str(path)
    if path.suffix.lower() == ".csv":
        rows, refs = _csv_rows(path, problems), None
        values, sources = {}, {}
    else:
        doc = _yaml_doc(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("prices", []), list):
            problems.append(Problem(file, "", "prices", "expected a mapping with a list 'prices:'"))
            return {}, {}, {}
        refs = _references(doc, file, problems)
        values, sources = _assumptions(doc, file, refs, problems)
        rows = doc.get("prices") or []
    hours = values.get("hours_per_month", hours_per_month)
    entries: dict[str, PriceEntry] = {}
    for i, row in enumerate(rows):
        entry = _entry(row, file, f"prices[{i}]", refs, hours, problems)
        if entry is None:
            continue
        if entry.platform in entries:
            problems.append(Problem(file, entry.platform, "platform", "priced twice in this file"))
        entries[entry.platform] = entry
    return entries, values, sources


def _csv_rows(path: Path, problems: list[Problem]) -> list[dict]:
    """CSV rows as entries: empty cells dropped, ``source_<field>`` columns gathered into ``sources``."""
    reader = csv.DictReader(io.StringIO(read_text(path, "price table")))
    rows = []
    for record in reader:
        row: dict[str, Any] = {"sources": {}}
        for key, cell in record.items():
            if key is None or cell is None or not str(cell).strip():
                continue
            key, cell = key.strip(), cell.strip()
            if key.startswith("source_"):
                row["sources"][key.removeprefix("source_")] = cell
            elif key in CLOUD_FIELDS + ON_PREMISES_FIELDS:
                try:
                    row[key] = float(cell)
                except ValueError:
                    row[key] = cell  # reported as not a number by _entry
            else:
                row[key] = cell
        rows.append(row)
    if not rows:
        problems.append(Problem(str(path), "", "", "no price rows"))
    return rows


def _entry(row, file: str, where: str, refs, hours: float, problems: list[Problem]) -> PriceEntry | None:
    """One entry checked: every problem appended (None when any)."""
    if not isinstance(row, dict):
        problems.append(Problem(file, where, "", "each price entry must be a mapping"))
        return None
    before = len(problems)

    def bad(key: str, message: str) -> None:
        problems.append(Problem(file, where, key, message))

    platform = row.get("platform")
    if not isinstance(platform, str) or not platform.strip():
        bad("platform", "missing: the catalog platform id this price is for")
    else:
        where = platform
    kind = row.get("kind")
    if kind not in KINDS:
        bad("kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    currency = str(row.get("currency", "")).upper()
    if currency != "USD":
        bad("currency", f"must be USD (the only currency converted today), got {row.get('currency')!r}")
    date = row.get("date")
    if isinstance(date, _dt.date):
        date = date.isoformat()
    try:
        _dt.date.fromisoformat(str(date))
    except ValueError:
        bad("date", f"the date the price was read, YYYY-MM-DD, got {date!r}")
    known = set(CLOUD_FIELDS + ON_PREMISES_FIELDS + TEXT_FIELDS + ("sources",))
    for key in sorted(set(row) - known, key=str):
        problems.append(Problem(file, where, str(key), f"unknown field; known: {', '.join(sorted(known))}"))
    own = CLOUD_FIELDS if kind == "cloud" else ON_PREMISES_FIELDS if kind == "on_premises" else ()
    other = ON_PREMISES_FIELDS if kind == "cloud" else CLOUD_FIELDS if kind == "on_premises" else ()
    for key in other:
        if key in row:
            bad(key, f"not a field of a {kind} price")
    sources = row.get("sources") or {}
    if not isinstance(sources, dict):
        bad("sources", "must be a mapping field -> source")
        sources = {}
    numbers = {}
    for key in own:
        if key not in row:
            continue
        value = row[key]
        if not _is_number(value) or value < 0:
            bad(key, f"must be a number >= 0, got {value!r}")
            continue
        if not _source_ok(sources.get(key), refs):
            hint = "a key of references:, 'derived: ...' or 'assumption: ...'" if refs is not None else "text"
            bad(key, f"no source: sources.{key} must start with {hint}")
            continue
        numbers[key] = float(value)
    if kind == "cloud":
        for key, message in _term_problems(row):
            bad(key, message)
    elif kind == "on_premises" and "list_price_usd" not in row:
        bad("list_price_usd", "missing: an on-premises price needs a list price or a quote per server")
    if len(problems) > before:
        return None
    text = {k: str(row.get(k, "") or "") for k in ("provider", "instance_type", "region", "notes")}
    cloud = kind == "cloud"
    monthly = {f"{t}_usd_per_month": _per_month(numbers, t, hours) if cloud else None for t in TERMS}
    return PriceEntry(
        platform=platform.strip(), kind=kind, currency=currency, date=str(date), **monthly,
        storage_usd_per_month=numbers.get("storage_usd_per_month"),
        list_price_usd=numbers.get("list_price_usd"), power_w=numbers.get("power_w"),
        rack_units=numbers.get("rack_units"), support_usd_per_year=numbers.get("support_usd_per_year"),
        sources=MappingProxyType({k: str(sources[k]) for k in numbers}), file=file, **text,
    )  # fmt: skip


def _term_problems(row: Mapping) -> list[tuple[str, str]]:
    """A cloud entry's (field, problem) pairs: a term priced in more than one unit, no on-demand price."""
    out = []
    for term in TERMS:
        given = [f"{term}_usd_per_{u}" for u in PRICE_UNITS if f"{term}_usd_per_{u}" in row]
        if len(given) > 1:
            several = "both" if len(given) == 2 else "all"
            out.append((given[-1], f"give one of {', '.join(given)}, not {several}"))
        elif term == "on_demand" and not given:
            out.append(("on_demand_usd_per_hour", "missing: a cloud price needs on_demand_usd_per_hour, "
                                                  "_per_month or _per_year"))  # fmt: skip
    return out


def _per_month(numbers: Mapping[str, float], term: str, hours: float) -> float | None:
    """``term``'s price per month from whichever unit the entry gives (x ``hours`` [h], / 12), or None."""
    if f"{term}_usd_per_month" in numbers:
        return numbers[f"{term}_usd_per_month"]
    if f"{term}_usd_per_year" in numbers:
        return numbers[f"{term}_usd_per_year"] / 12.0
    hourly = numbers.get(f"{term}_usd_per_hour")
    return None if hourly is None else hourly * hours
