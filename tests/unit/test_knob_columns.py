"""A knob and the figure column that sets it are declared once (issue 38, point 4).

:attr:`perfmodel.inputs.knobs.Knob.column` names the recorded-figure column that sets a knob as it
is; the figure predictor reads every such column from that declaration, so these tests check that
the two vocabularies agree: the column exists and describes a configuration, its kind can hold the
knob's values, a choice column offers exactly the knob's choices, a column that says which knob it
sets is that knob's column, and a figure's column reaches the knob (scaled to its unit).
"""

from __future__ import annotations

import re

import pytest

from perfmodel.evidence import figure_plan
from perfmodel.evidence.recorded import COLUMN_BY_NAME, COLUMNS
from perfmodel.inputs.knobs import COLUMN_KNOBS, KNOBS

#: knob kind -> the column kinds that can record its values
COMPATIBLE = {
    "count": {"int"},
    "number": {"float", "int"},
    "choice": {"choice"},
    "id": {"device", "network", "platform", "id"},
}


@pytest.mark.parametrize("column", sorted(COLUMN_KNOBS))
def test_a_knobs_column_exists_and_can_hold_its_values(column):
    knob = COLUMN_KNOBS[column]
    assert column in COLUMN_BY_NAME, f"knob {knob.name} names column {column}, which the schema lacks"
    col = COLUMN_BY_NAME[column]
    assert col.config, f"{column} sets knob {knob.name}: it describes the configuration"
    assert col.kind in COMPATIBLE[knob.kind], (column, col.kind, knob.kind)
    if knob.kind == "choice":
        assert col.choices == knob.choices
    assert knob.column_scale > 0


def test_a_column_that_names_its_knob_is_that_knobs_column():
    for col in COLUMNS:
        for name in re.findall(r"\(knob (\w+)", col.description):
            assert KNOBS[name].column == col.name, f"column {col.name} says it sets knob {name}"


def test_each_knob_has_at_most_one_column():
    columns = [k.column for k in KNOBS.values() if k.column]
    assert len(columns) == len(set(columns))


@pytest.mark.parametrize(
    ("column", "text", "knob", "value"),
    [
        ("cache_gb", "2", "cache_bytes", 2e9),
        ("zone_rtt_us", "500", "zone_rtt_s", 5e-4),
        ("shards", "12", "thread_cap", 12.0),
        ("cores_used", "4", "cores", 4.0),
        ("compactions", "off", "compactions", "off"),
        ("durability", "async", "durability", "async"),
    ],
)
def test_a_figures_column_sets_its_knob_in_the_knobs_unit(column, text, knob, value):
    row = {column: text}
    knobs = figure_plan._figure_knobs(row, lambda key, default=None: row.get(key, default) or default)
    assert knobs[knob] == pytest.approx(value) if isinstance(value, float) else knobs[knob] == value


def test_a_blank_column_sets_nothing():
    row = {"cache_gb": "", "compactions": float("nan")}
    knobs = figure_plan._figure_knobs(row, lambda key, default=None: default)
    assert "cache_bytes" not in knobs and "compactions" not in knobs
