"""The grid between the model's stages is typed (issue 38, point 3): the workload's entries are the
fields of :class:`perfmodel.model.chain.ConfigArrays`, the resolved knobs those of
:class:`perfmodel.inputs.knobs.KnobArrays` (generated from the knob table), both frozen and as given;
what the stages derive has names of its own (``Inputs.layout``, ``Inputs.effective_think_time_s``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from perfmodel.inputs import knobs as settings
from perfmodel.inputs.params import load_parameters
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


def test_config_arrays_are_frozen_typed_arrays_one_entry_per_configuration():
    assert all(f.type == "np.ndarray" for f in dataclasses.fields(chain.ConfigArrays))
    inp = _inputs(nodes=[1, 2, 3])
    for f in dataclasses.fields(inp.cfg):
        assert np.shape(getattr(inp.cfg, f.name)) == (3,), f.name
    assert inp.cfg.nodes.dtype == float and inp.cfg.nodes.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        inp.cfg.nodes = np.ones(3)


def test_repeat_and_take_tile_and_slice_every_per_configuration_array():
    inp = _inputs(nodes=[1, 2, 3], cache_bytes=[1e9, 2e9, 3e9])
    twice = inp.repeat(2, inp.params)
    assert twice.size == 6 and twice.knobs.cache_bytes.tolist() == [1e9, 2e9, 3e9] * 2
    part = twice.take(slice(2, 4))
    assert part.size == 2 and part.knobs.cache_bytes.tolist() == [3e9, 1e9]
    assert part.cfg.nodes.tolist() == [3.0, 1.0] and part.layout.write_shards.shape == (2,)
    assert part.effective_think_time_s.shape == (2,)
    assert part.plat.cores.shape == (2,) and part.sys.codes.shape == (2,)


#: the workload entries the grid holds as given, each with the Workload attribute it broadcasts
AS_GIVEN = ("read_fraction", "object_bytes", "io_bytes", "message_bytes", "dataset_bytes", "think_time_s",
            "replication_factor", "acks", "read_acks")  # fmt: skip


def _as_given(inp, w):
    for name in AS_GIVEN:
        given = np.broadcast_to(np.asarray(getattr(w, name), dtype=float), (inp.size,))
        assert np.array_equal(getattr(inp.cfg, name), given), name


def test_an_erasure_coded_pool_leaves_the_workloads_copies_and_acks_as_given():
    """Ceph 4+2 waits for every shard it writes and gathers chunks on a read: what it waits for is
    derived (``layout``), the workload's replication factor, acks and read acks are kept."""
    w = Workload(read_fraction=0.5, object_bytes=[4096, 1 << 20], dataset_bytes=1e12, clients=8,
                 replication_factor=3, consistency="ALL", read_consistency="QUORUM")  # fmt: skip
    inp = chain.inputs("x86-ceph-osd-c220m5", w, nodes=8, params="default", system="ceph",
                       knobs={"ec_k": 4.0, "ec_m": 2.0})  # fmt: skip
    _as_given(inp, w)
    assert inp.cfg.acks.tolist() == [3.0, 3.0] and inp.cfg.read_acks.tolist() == [2.0, 2.0]
    assert inp.layout.write_shards.tolist() == [3.0, 6.0]  # a partial stripe: 1 + m; a full one: k + m
    assert inp.layout.acks_waited.tolist() == [3.0, 6.0]
    assert inp.layout.read_acks_waited.tolist() == [1.0, 1.0]  # an EC read gathers chunks instead
    assert inp.layout.data_copies.tolist() == [1.5, 1.5]


def test_a_coordinator_less_system_keeps_read_acks_and_think_time_as_given():
    """Redis answers a read from one copy whatever read_consistency says, and a load generator
    without cores of its own thinks its client_time_s more: both derived, the inputs kept."""
    w = Workload(read_fraction=0.9, object_bytes=100, dataset_bytes=1e9, clients=8, think_time_s=1e-3,
                 replication_factor=2, consistency="ALL", read_consistency="ALL")  # fmt: skip
    params = load_parameters("default").with_values(client_time_s=2e-4)
    inp = chain.inputs(PLATFORM, w, nodes=[2, 2], params=params, system="redis",
                       knobs={"client_cores": [np.nan, 4.0]})  # fmt: skip
    _as_given(inp, w)
    assert inp.cfg.read_acks.tolist() == [2.0, 2.0] and inp.cfg.think_time_s.tolist() == [1e-3, 1e-3]
    assert inp.layout.read_acks_waited.tolist() == [1.0, 1.0]
    assert inp.layout.acks_waited.tolist() == [2.0, 2.0] and inp.layout.write_shards.tolist() == [2.0, 2.0]
    assert inp.effective_think_time_s.tolist() == [1e-3 + 2e-4, 1e-3]  # own cores: the station client


def test_a_coordinator_waits_for_the_read_acks_given():
    w = Workload(read_fraction=0.9, object_bytes=100, dataset_bytes=1e9, clients=8,
                 replication_factor=3, consistency="QUORUM", read_consistency="ALL")  # fmt: skip
    inp = chain.inputs(PLATFORM, w, nodes=3, params="default", system="cassandra", knobs={})
    _as_given(inp, w)
    assert inp.layout.read_acks_waited.tolist() == [3.0] and inp.layout.acks_waited.tolist() == [2.0]
