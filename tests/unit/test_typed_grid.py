"""The grid between the model's stages is typed (issue 38, point 3): resolved knobs are the fields of
:class:`perfmodel.inputs.knobs.KnobArrays`, generated from the knob table, and frozen."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from perfmodel.inputs import knobs as settings
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain

PLATFORM = "x86-dl380-e5-2630v4"


def _inputs(system="redis", nodes=1, workload=None, **kw):
    w = workload or Workload(read_fraction=0.9, object_bytes=100, dataset_bytes=1e9, clients=8)
    return chain.inputs(PLATFORM, w, nodes=nodes, params="default", system=system, knobs=kw)


def test_knob_arrays_has_one_array_field_per_knob_in_the_tables_order():
    names = [f.name for f in dataclasses.fields(settings.KnobArrays)]
    assert names == list(settings.KNOBS)
    assert all(f.type is np.ndarray for f in dataclasses.fields(settings.KnobArrays))


def test_a_knob_added_to_the_table_is_a_field_with_no_second_edit(monkeypatch):
    monkeypatch.setitem(
        settings.KNOBS, "new_knob", settings.Knob("new_knob", "number", "s", 1.0, "a knob added in a test")
    )
    cls = settings._knob_arrays_class()
    assert [f.name for f in dataclasses.fields(cls)][-1] == "new_knob"


def test_resolved_knobs_are_frozen_arrays_one_entry_per_configuration():
    inp = _inputs(cache_bytes=[1e9, 2e9])
    assert isinstance(inp.knobs, settings.KnobArrays)
    assert inp.knobs.cache_bytes.tolist() == [1e9, 2e9]
    for f in dataclasses.fields(inp.knobs):
        assert np.shape(getattr(inp.knobs, f.name)) == (inp.size,), f.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        inp.knobs.cache_bytes = np.zeros(2)


def test_repeat_and_take_tile_and_slice_every_knob():
    inp = _inputs(cache_bytes=[1e9, 2e9, 3e9])
    twice = inp.repeat(2, inp.params)
    assert twice.size == 6 and twice.knobs.cache_bytes.tolist() == [1e9, 2e9, 3e9] * 2
    part = twice.take(slice(2, 4))
    assert part.size == 2 and part.knobs.cache_bytes.tolist() == [3e9, 1e9]
    assert part.plat.cores.shape == (2,) and part.sys.codes.shape == (2,)
