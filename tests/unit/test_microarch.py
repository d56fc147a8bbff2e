"""Work per clock cycle of server cores (issue 17, gap cpu-generation): each core's SPECint2017
rate-1 per GHz as its sources print it, the catalog's cores, and a thread's clock scaling with it."""

import math
import re
from dataclasses import replace

import numpy as np
import pytest

import perfmodel
from perfmodel.inputs import microarch
from perfmodel.inputs.catalog import default_catalog
from perfmodel.inputs.workload import Workload
from perfmodel.model import chain


def test_reference_core_is_one_and_every_family_has_a_default():
    table = microarch.table()
    assert microarch.perf_per_ghz(table.reference) == 1.0
    for arch in perfmodel.inputs.catalog.ARCHES:
        assert microarch.family_default(arch) in table.cores


def _runs(core):
    """The (score, clock GHz) pairs a core's source prints."""
    text = microarch.table().cores[core].source
    return [(float(a), float(b)) for a, b in re.findall(r"(\d+\.\d+) at (\d+\.\d+) GHz", text)]


MEASURED = [c for c in microarch.names() if _runs(c) and "chain" not in microarch.table().cores[c].source]
CHAINED = [c for c in microarch.names() if "chain" in microarch.table().cores[c].source]


@pytest.mark.parametrize("core", MEASURED)
def test_each_measured_value_is_its_printed_scores_over_their_clocks(core):
    """Where the source prints 'score at clock GHz', the recorded value is their quotient (the
    geometric mean over several runs) times any stated compiler rescaling -- a typo fails here."""
    entry = microarch.table().cores[core]
    value = math.exp(np.mean([math.log(s / f) for s, f in _runs(core)]))
    for factor in re.findall(r"x (0\.\d+) to the GCC 12 scale", entry.source):
        value *= float(factor)
    assert entry.int_rate1_per_ghz == pytest.approx(value, rel=3e-3)


@pytest.mark.parametrize("core", CHAINED)
def test_each_chained_value_is_ivy_bridge_over_its_generation_steps(core):
    """Older Intel cores: the Ivy Bridge value divided by the printed generation-to-generation
    ratios of their SPECint_base2006 chain (data/hardware/notes/cpu-perf-per-ghz.csv)."""
    entry = microarch.table().cores[core]
    steps = [float(x) for x in re.findall(r"[A-Za-z]+/[A-Za-z ]+? (1\.\d{3})", entry.source)]
    assert steps, entry.source
    value = microarch.table().cores["ivy-bridge"].int_rate1_per_ghz / math.prod(steps)
    assert entry.int_rate1_per_ghz == pytest.approx(value, rel=2e-3)


def test_generations_do_more_work_per_cycle():
    """Within each vendor's server line the published values rise generation by generation."""
    for line in (
        ["harpertown", "nehalem-ep", "westmere-ep", "sandy-bridge-ep", "ivy-bridge", "haswell-ep",
         "ice-lake-sp", "sapphire-rapids"],
        ["zen1", "zen2", "zen3", "zen4"],
        ["neoverse-n1", "neoverse-v1", "neoverse-v2"],
        ["power8", "power9"],
    ):  # fmt: skip
        values = [microarch.perf_per_ghz(c) for c in line]
        assert values == sorted(values), line


def test_catalog_platforms_name_their_core():
    catalog = default_catalog()
    unnamed = {p.id for p in catalog.platforms.values() if not p.microarchitecture}
    # their CPUs are not stated, or their cores (Cortex-A72, AMD Excavator) are not in
    # data/microarchitectures.yaml yet: they run on their architecture's default core
    assert unnamed == {"x86-aws-m1-xlarge", "x86-micron-cassandra-testbed", "arm-rpi-cm4-8gb",
                       "arm-rpi-cm4-8gb-oc2200", "x86-hp-microserver-gen10"}  # fmt: skip
    assert catalog.platform("arm-graviton4-c8g-8xlarge").core == "neoverse-v2"
    assert catalog.platform("x86-micron-cassandra-testbed").core == "broadwell-ep"  # the x86 default


def test_a_threads_clock_scales_with_its_cores_work_per_ghz():
    """Same box, another core: the CPU demand per request scales by the ratio of work per GHz."""
    base = default_catalog().platform("x86-dl380-e5-2630v4")
    newer = replace(base, id="same-box-zen4", microarchitecture="zen4")
    w = Workload(operation="read", read_fraction=1.0, object_bytes=200, dataset_bytes=1e8, clients=4,
                 replication_factor=1)  # fmt: skip
    old_m = chain.build(base, w, nodes=1, system="mysql", params="default")
    new_m = chain.build(newer, w, nodes=1, system="mysql", params="default")
    ratio = microarch.perf_per_ghz("zen4") / microarch.perf_per_ghz("broadwell-ep")
    np.testing.assert_allclose(new_m.cpu.thread_hz / old_m.cpu.thread_hz, ratio, rtol=1e-12)
    np.testing.assert_allclose(old_m.demands.cpu_read / new_m.demands.cpu_read, ratio, rtol=1e-12)


def test_unknown_core_is_named_with_the_valid_ones():
    with pytest.raises(perfmodel.inputs.errors.UnknownNameError, match="neoverse-v2"):
        microarch.perf_per_ghz("pentium-4")


def test_power10_is_power9_times_the_published_rate_ratio():
    """No single-thread Power10 result exists: its value is POWER9's times IBM's SPECrate2017 integer
    per core per maximum GHz, Power10 over POWER9 (3.397 / 2.423), as its source says."""
    cores = microarch.table().cores
    assert "3.397 / 2.423" in cores["power10"].source and cores["power10"].confidence == "low"
    value = cores["power9"].int_rate1_per_ghz * 3.397 / 2.423
    assert cores["power10"].int_rate1_per_ghz == pytest.approx(value, rel=2e-3)
