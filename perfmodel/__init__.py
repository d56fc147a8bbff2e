"""perfmodel: performance modeling and capacity planning for databases and storage.

Models (``perfmodel.queueing`` ...), parameters (the hardware catalog and
calibrated parameter sets), workloads and runs stay apart; see README.md.

Public entry points::

    perfmodel.list_platforms(), perfmodel.load_platform(name_or_path)
    perfmodel.list_devices(),   perfmodel.load_device(name_or_path)
    perfmodel.list_networks(),  perfmodel.load_network(name_or_path)
    perfmodel.list_systems(),   perfmodel.load_system(name_or_path)
    perfmodel.load_benchmarks(path=None)
    perfmodel.Workload(...), perfmodel.predict(platform, workload, system=..., **knobs)
    perfmodel.grid(**axes), perfmodel.load_parameters(name_or_path)
    perfmodel.size(workload, target_ops_s=..., slo_p99_ms=..., system=...)
    perfmodel.size_uncertain(workload, target_ops_s={"p50": ..., "p95": ...}, ...)  (ranges, a confidence)
    perfmodel.size_many(workload, [{"target_ops_s": ..., "slo_p99_ms": ...}, ...], system=...)  (many at once)
    perfmodel.simulate(...), perfmodel.sweep(..., method="predict" | "simulate", scheduler=None),
    perfmodel.iter_sweep(...)  (predict chunk by chunk: any grid size at one chunk's memory)
    perfmodel.calibrate(benchmarks, ...), perfmodel.validate(cv=None | "group" | "loo", ...)

``calibrate`` and ``validate`` are imported on first use (they pull in the
optimiser and the execution layer).
"""

from perfmodel._version import __version__
from perfmodel.evidence.recorded import load_benchmarks, summarize_benchmarks
from perfmodel.inputs.catalog import (
    Device,
    Network,
    Platform,
    list_devices,
    list_networks,
    list_platforms,
    load_device,
    load_network,
    load_platform,
)
from perfmodel.inputs.errors import CatalogError, DataError, UnknownNameError
from perfmodel.inputs.params import ParameterSet, list_parameter_sets, load_parameters
from perfmodel.inputs.systems import SystemSpec, list_systems, load_system
from perfmodel.inputs.workload import Workload
from perfmodel.model.predict import grid, predict
from perfmodel.plan.sizing import size, size_many
from perfmodel.plan.sweeps import iter_sweep, sweep
from perfmodel.plan.uncertain import size_uncertain
from perfmodel.sim import simulate


def __getattr__(name: str):
    """``perfmodel.calibrate`` / ``perfmodel.validate``, imported on first use."""
    if name == "calibrate":
        from perfmodel.evidence.calibration import calibrate

        return calibrate
    if name == "validate":
        from perfmodel.evidence.validation import validate

        return validate
    raise AttributeError(f"module 'perfmodel' has no attribute {name!r}")


__all__ = [
    "CatalogError",
    "DataError",
    "Device",
    "Network",
    "ParameterSet",
    "Platform",
    "SystemSpec",
    "UnknownNameError",
    "Workload",
    "__version__",
    "calibrate",
    "grid",
    "iter_sweep",
    "list_parameter_sets",
    "list_devices",
    "list_networks",
    "list_platforms",
    "list_systems",
    "load_benchmarks",
    "load_device",
    "load_network",
    "load_parameters",
    "load_platform",
    "load_system",
    "predict",
    "simulate",
    "size",
    "size_many",
    "size_uncertain",
    "summarize_benchmarks",
    "sweep",
    "validate",
]
