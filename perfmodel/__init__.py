"""perfmodel: performance modeling and capacity planning for databases and storage.

Models (``perfmodel.queueing`` ...), parameters (the hardware catalog and
calibrated parameter sets), workloads and runs stay apart; see README.md.

Public entry points::

    perfmodel.list_platforms(), perfmodel.load_platform(name_or_path)
    perfmodel.list_devices(),   perfmodel.load_device(name_or_path)
    perfmodel.list_networks(),  perfmodel.load_network(name_or_path)
    perfmodel.load_benchmarks(path=None)
"""

from perfmodel.benchmarks import load_benchmarks, summarize_benchmarks
from perfmodel.catalog import (
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
from perfmodel.errors import CatalogError, DataError, UnknownNameError

__version__ = "0.1.0"

__all__ = [
    "CatalogError",
    "DataError",
    "Device",
    "Network",
    "Platform",
    "UnknownNameError",
    "__version__",
    "list_devices",
    "list_networks",
    "list_platforms",
    "load_benchmarks",
    "load_device",
    "load_network",
    "load_platform",
    "summarize_benchmarks",
]
