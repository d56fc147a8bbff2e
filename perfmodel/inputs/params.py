"""Named parameter sets: the numbers the system models need beyond the catalog.

A :class:`ParameterSet` maps keys such as ``smt_alpha[power8]`` or
``cpu_cycles_read[scylla]`` to values, each with a unit, bounds, a source and a
description. Sets are JSON files (never pickle), loadable by name; the shipped
``default`` set holds documented priors until calibration (issue 6) produces
a fitted one.

Keys with a qualifier in brackets are looked up per configuration:
``params.lookup("smt_alpha", arches)`` maps an array of architecture names to
an array of values, so a grid of configurations costs one lookup.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfmodel.inputs._data import PARAMETERS_DIR
from perfmodel.inputs.errors import read_text

_HERE = PARAMETERS_DIR


@dataclass(frozen=True)
class ParamInfo:
    """What a parameter means: unit, bounds, source (citation or 'prior: why').

    ``derived_from`` lists the recorded figures (ids or shell-style patterns)
    the value was derived from: those figures are not out of sample for it.
    """

    unit: str
    bounds: tuple[float, float]
    source: str
    description: str
    derived_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParameterSet:
    """A named, cited set of model parameters."""

    name: str
    values: Mapping[str, float]
    info: Mapping[str, ParamInfo] = field(default_factory=dict, repr=False)
    description: str = ""
    #: what the set was fitted to: "" (the shipped sets: the seed documents and the corpus) or "lab" (a
    #: user's own runs, ``perfmodel calibrate --data``): a lab's set takes the band of a lab fitted on
    #: its own figures (:func:`perfmodel.model.bands.own_lab_half_width`), not a new lab's
    scope: str = ""

    def __getitem__(self, key: str) -> float:
        try:
            return self.values[key]
        except KeyError:
            raise KeyError(
                f"parameter {key!r} is not in set {self.name!r}; known: {', '.join(sorted(self.values))}"
            ) from None

    def lookup(self, base: str, qualifiers: Iterable[str] | str) -> np.ndarray:
        """Values of ``base[q]`` for each qualifier ``q`` (array in, array out). A value held per
        configuration (:func:`stack_parameters`) is taken at each qualifier's own position."""
        quals = np.asarray(qualifiers, dtype=object)
        if quals.ndim == 0:
            return np.asarray(self[f"{base}[{quals.item()}]"], dtype=float)
        codes, uniques = pd.factorize(quals.ravel())  # hashing, not sorting: fast on 1e5 strings
        values = [self[f"{base}[{q}]"] for q in uniques]
        if not any(np.ndim(v) for v in values):
            return np.array(values, dtype=float)[codes].reshape(quals.shape)
        out = np.empty(codes.size)
        for j, v in enumerate(values):
            rows = codes == j
            out[rows] = np.asarray(v, dtype=float)[rows] if np.ndim(v) else v
        return out.reshape(quals.shape)

    def with_values(self, name: str | None = None, **updates: float) -> ParameterSet:
        """A copy with some values replaced (keys may use ``__`` for brackets:
        ``smt_alpha__power8__`` is ``smt_alpha[power8]``); unknown keys raise."""
        values = dict(self.values)
        for raw, value in updates.items():
            key = raw if raw in values else raw.replace("__", "[", 1).replace("__", "]", 1)
            if key not in values:
                raise KeyError(f"parameter {raw!r} is not in set {self.name!r}")
            lo, hi = self.info[key].bounds if key in self.info else (-np.inf, np.inf)
            if not lo <= value <= hi:
                raise ValueError(f"{key}: {value} is outside its bounds [{lo}, {hi}]")
            values[key] = float(value)
        return ParameterSet(name or self.name, values, self.info, self.description, self.scope)

    def to_json(self) -> dict[str, Any]:
        """The set as a JSON-ready mapping (the file format)."""
        return {
            "name": self.name,
            "description": self.description,
            **({"scope": self.scope} if self.scope else {}),
            "parameters": [
                {
                    "key": k,
                    "value": v,
                    "unit": self.info[k].unit,
                    "bounds": list(self.info[k].bounds),
                    "source": self.info[k].source,
                    "description": self.info[k].description,
                    **(
                        {"derived_from": list(self.info[k].derived_from)} if self.info[k].derived_from else {}
                    ),
                }
                if k in self.info
                else {"key": k, "value": v}
                for k, v in sorted(self.values.items())
            ],
        }

    def save(self, path: str | Path) -> None:
        """Write the set as JSON."""
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def from_json(cls, data: Mapping[str, Any], origin: str = "<data>") -> ParameterSet:
        """Build from the JSON format; errors name the origin and the key."""
        try:
            entries = data["parameters"]
            name = data["name"]
        except (KeyError, TypeError):
            raise ValueError(f"{origin}: a parameter file needs 'name' and 'parameters'") from None
        values: dict[str, float] = {}
        info: dict[str, ParamInfo] = {}
        for i, entry in enumerate(entries):
            key = entry.get("key") if isinstance(entry, Mapping) else None
            if not key:
                raise ValueError(f"{origin}: parameters[{i}] has no 'key'")
            value = entry.get("value")
            if not isinstance(value, int | float) or isinstance(value, bool) or not np.isfinite(value):
                raise ValueError(f"{origin}: parameter {key!r} value must be a finite number, got {value!r}")
            if key in values:
                raise ValueError(f"{origin}: parameter {key!r} appears twice")
            values[key] = float(value)
            if "unit" in entry:
                lo, hi = entry.get("bounds", [-np.inf, np.inf])
                if not float(lo) <= value <= float(hi):
                    raise ValueError(
                        f"{origin}: parameter {key!r} = {value:g} is outside its bounds [{lo}, {hi}]"
                    )
                info[key] = ParamInfo(
                    entry["unit"],
                    (float(lo), float(hi)),
                    entry.get("source", ""),
                    entry.get("description", ""),
                    tuple(str(f) for f in entry.get("derived_from", ())),
                )
        scope = data.get("scope", "")
        if scope not in ("", "lab"):
            raise ValueError(f"{origin}: scope must be 'lab' or absent, got {scope!r}")
        return cls(name, values, info, data.get("description", ""), scope)


def list_parameter_sets() -> list[str]:
    """Names of the parameter sets shipped with perfmodel."""
    return sorted(p.stem for p in _HERE.glob("*.json"))


def load_parameters(name_or_path: str | Path | ParameterSet | None = None) -> ParameterSet:
    """Load a parameter set by name, from a JSON file, or pass one through.

    ``None`` gives the shipped ``calibrated`` set (the seed documents and their context,
    :mod:`perfmodel.evidence.calibration`, then the corpus systems' own parameters on the public corpus,
    :mod:`perfmodel.evidence.corpus`) when present, else ``default`` (documented priors).
    """
    if isinstance(name_or_path, ParameterSet):
        return name_or_path
    if name_or_path is None:  # the calibrated set when one ships, else the documented priors
        name_or_path = "calibrated" if (_HERE / "calibrated.json").is_file() else "default"
    text = str(name_or_path)
    path = Path(text) if text.endswith(".json") or "/" in text else _HERE / f"{text}.json"
    if not path.is_file():
        if path.parent == _HERE:
            raise KeyError(f"unknown parameter set {text!r}; valid: {', '.join(list_parameter_sets())}")
        raise FileNotFoundError(f"parameter file not found: {path}")

    try:
        data = json.loads(read_text(path, "parameter file"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    loaded = ParameterSet.from_json(data, str(path))
    if path.parent != _HERE:  # a user's file: every value within the documented bounds
        shipped = load_parameters("default")
        for key, value in loaded.values.items():
            lo, hi = shipped.info[key].bounds if key in shipped.info else (-np.inf, np.inf)
            if not lo <= value <= hi:
                raise ValueError(
                    f"{path}: parameter {key!r} = {value:g} is outside its documented bounds [{lo:g}, {hi:g}]"
                )
    return loaded


# ---------------------------------------------------------------------------------------
# A fit's uncertainty (written by perfmodel.evidence.calibration.save_parameter_set)
# ---------------------------------------------------------------------------------------


def fit_uncertainty(fit=None):
    """A fit's parameters and their covariance in log space.

    ``fit``: a :class:`perfmodel.evidence.calibration.CalibrationResult`, the path or
    name of a parameter set written by
    :func:`perfmodel.evidence.calibration.save_parameter_set`, or ``None`` for the
    shipped ``calibrated`` set. Returns ``(base set, free keys, log values, covariance)``;
    parameters with an unknown (infinite) standard error get zero variance.
    """
    if hasattr(fit, "values_") and hasattr(fit, "params_"):  # a CalibrationResult
        base, free = fit.params_, list(fit.free_)
        values, stderr, corr = fit.values_, fit.stderr_, fit.correlation_
    else:
        here = PARAMETERS_DIR
        text = "calibrated" if fit is None else str(fit)
        path = Path(text) if text.endswith(".json") or "/" in text else here / f"{text}.json"
        doc = json.loads(path.read_text(encoding="utf-8"))
        if "fit" not in doc:
            raise ValueError(f"params: {path} has no fit uncertainty (not written by save_parameter_set)")
        base = load_parameters(path)
        rows = doc["fit"]["fit"]
        free = [r["parameter"] for r in rows]
        values = np.array([r["value"] for r in rows], dtype=float)
        stderr = np.array([np.inf if r["stderr"] is None else r["stderr"] for r in rows], dtype=float)
        corr = np.array(doc["fit"]["correlation"], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = stderr / values
    rel = np.where(np.isfinite(rel), rel, 0.0)
    corr = np.where(np.isfinite(corr), corr, 0.0)
    np.fill_diagonal(corr, 1.0)
    return base, free, np.log(values), corr * np.outer(rel, rel)


def stack_parameters(sets: list[ParameterSet], size: int) -> ParameterSet:
    """Several parameter sets as one, for a grid of ``len(sets) x size`` configurations (set ``d`` on
    configurations ``d * size`` to ``(d + 1) * size - 1``): a value that differs between the sets
    becomes an array with one entry per configuration, the others stay numbers. The model reads
    parameters element by element, so one run over the stacked grid equals one run per set -- the
    band's parameter draws in one pass (:func:`perfmodel.model.predict.predict` with ``interval``)."""
    first = sets[0]
    values = dict(first.values)
    for key in first.values:
        column = [s.values[key] for s in sets]
        if any(v != column[0] for v in column[1:]):
            values[key] = np.repeat(np.asarray(column, dtype=float), size)
    return ParameterSet(first.name, values, first.info, first.description)


def parameter_draws(fit=None, draws: int = 40, seed: int = 0):
    """Parameter sets sampled from a fit's uncertainty (log-normal, correlations included).

    ``fit``: as :func:`fit_uncertainty`. Draws are clipped to each parameter's
    bounds; parameters the fit flagged with an infinite standard error stay at
    their fitted value.
    """
    base, free, log_values, cov = fit_uncertainty(fit)
    rng = np.random.default_rng(seed)
    samples = rng.multivariate_normal(log_values, cov, size=draws, method="svd")
    out = []
    for row in samples:
        updates = {}
        for key, value in zip(free, np.exp(row), strict=True):
            lo, hi = base.info[key].bounds if key in base.info else (-np.inf, np.inf)
            updates[key] = float(np.clip(value, lo, hi))
        out.append(base.with_values(**updates))
    return out
