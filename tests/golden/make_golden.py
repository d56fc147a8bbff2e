"""Regenerate the golden predictions: ``python tests/golden/make_golden.py``.

``predict_grid.csv`` holds perfmodel.predict's every output column for a grid
of configurations -- every system on every platform, closed and open loops,
uniform and Zipf keys, replication, cache sizes and states, SMT modes, NUMA,
virtualisation, WAL devices, client links -- under the shipped default
(prior) parameter set. tests/golden/test_golden.py pins today's model to it
to 1e-9 relative: a refactor must not move a number. Regenerate only for a
deliberate model change, and say which numbers moved and why in the commit.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

import perfmodel
from perfmodel.inputs.workload import Workload

HERE = Path(__file__).resolve().parent
PARAMS = "default"

#: (system, workload kwargs, replication factor, consistency)
WORKLOADS = {
    "read-heavy": dict(
        read_fraction=0.95, object_bytes=1024, dataset_bytes=2e12, clients=64, threads_per_client=4
    ),
    "mixed": dict(read_fraction=0.5, object_bytes=4096, dataset_bytes=5e11, clients=32, iodepth=8),
    "write-heavy": dict(
        read_fraction=0.05, object_bytes=512, dataset_bytes=1e11, clients=16, threads_per_client=2
    ),
    "zipf": dict(
        read_fraction=0.8,
        object_bytes=1024,
        dataset_bytes=3e12,
        clients=128,
        key_distribution="zipf",
        zipf_s=0.9,
    ),
    "open": dict(read_fraction=0.7, object_bytes=2048, dataset_bytes=1e12, arrival_rate=2e4),
    # keys in order (mechanisms.ordering): only a store that keeps key order changes
    "sequential": dict(
        read_fraction=0.5, object_bytes=800, dataset_bytes=1e12, clients=16, access_pattern="sequential"
    ),
}
SYSTEMS = {
    "scylla": (3, "QUORUM"),
    "cassandra": (3, "ONE"),
    "rocksdb": (1, "ONE"),
    "dm8": (1, "ONE"),
    "ceph": (2, "ALL"),
    "fio": (1, "ONE"),
}
#: the systems the public corpus brought (issue 17): every platform, the default knobs
CORPUS_SYSTEMS = {
    "mysql": (1, "ONE"),
    "postgresql": (1, "ONE"),
    "opengauss": (1, "ONE"),
    "redis": (1, "ONE"),
    "memcached": (1, "ONE"),
}
#: the hand-curated catalog files (the seeds' hardware and current builds of issue 17) and one
#: platform per architecture the corpus added; the corpus's many cloud and lab machines add
#: no mechanism
CATALOG_FILES = ("power8.yaml", "x86.yaml", "kunpeng.yaml")
EXTRA_PLATFORMS = ("arm-graviton3-c7g-16xlarge", "power9-ac922-2x18c", "power10-e1050-2x24c")
#: platforms only a few special rows take, for a mechanism only they have: a guest with measured VM
#: exits (catalog vm_exit_us, vm_exits_per_message)
SPECIAL_PLATFORMS = ("x86-epyc-9124-sevsnp-30vcpu",)


def platforms() -> list[str]:
    from perfmodel.inputs.catalog import Catalog

    base = Path(perfmodel.__file__).resolve().parent
    folder = next(p for p in (base.parent / "data" / "hardware", base / "_data" / "hardware") if p.is_dir())
    curated = Catalog.from_files([folder / f for f in ("devices.yaml", "networks.yaml", *CATALOG_FILES)])
    return sorted(curated.platforms) + list(EXTRA_PLATFORMS)


KNOBS = [
    {},
    {"cache_bytes": 8e9},
    {"cache_state": "cold"},
    {"numa_binding": True},
    {"client_link_gbps": 10.0},
]


def _applies(system: str, knobs: dict) -> bool:
    """Every knob applies to the system (a knob of another system is refused: settings.APPLIES)."""
    from perfmodel.inputs.knobs import APPLIES, KNOBS
    from perfmodel.inputs.systems import load_system

    spec = load_system(system)
    return all(not KNOBS[k].applies or APPLIES[KNOBS[k].applies][0](spec) for k in knobs)


def configurations():
    rows = []
    for platform, name, system, knobs in itertools.product(platforms(), WORKLOADS, SYSTEMS, KNOBS):
        if _applies(system, knobs):  # fio has no cache; fio and RocksDB have no client link
            rows.append(_row(platform, name, system, knobs))
    for platform, name, system in itertools.product(platforms(), WORKLOADS, CORPUS_SYSTEMS):
        rows.append(_row(platform, name, system, {}))
    # the knobs only some systems or platforms take
    special = [
        ("kunpeng-r722", "dm8", {"virtualization": "untuned"}),
        ("kunpeng-r722", "dm8", {"virtualization": "boost", "log_files": 8}),
        ("kunpeng-r722", "dm8", {"cores": 48, "numa_binding": True}),
        ("kunpeng-r722", "dm8", {"device": "sata-ssd-dm8"}),
        ("x86-ceph-osd-c220m5", "ceph", {"wal_device": ""}),
        ("x86-ceph-osd-c220m5", "ceph", {"osds_per_device": 4, "cores_per_device": 6}),
        ("x86-ceph-osd-c220m5", "ceph", {"cache_bytes": 4e9}),
        ("power8-s821lc-10c", "scylla", {"threads_per_core": 8}),
        ("power8-s821lc-10c", "scylla", {"threads_per_core": 1, "cores": 4}),
        ("x86-dl380-e5-2630v4", "scylla", {"threads_per_core": 1}),
        ("x86-epyc-7351p", "rocksdb", {"device": "sata-ssd-800gb"}),
        ("x86-epyc-7351p", "rocksdb", {"thread_cap": 8}),
        ("x86-micron-cassandra-testbed", "cassandra", {"devices": 2}),
        # issue 17's mechanisms: placement, forwarding, statements, request messages, loopback
        ("x86-dl380-e5-2630v4", "cassandra", {"token_aware": 0.0}),
        ("x86-dl380-e5-2630v4", "scylla", {"placement_units": 4.0, "token_aware": 0.5}),
        ("x86-ceph-osd-c220m5", "ceph", {"placement_units": 16.0}),
        ("x86-ceph-osd-c220m5", "ceph", {"ec_k": 3, "ec_m": 2}),
        ("x86-dl380-e5-2630v4", "mysql", {"statements_per_op": 14}),
        ("x86-dl380-e5-2630v4", "redis", {"thread_cap": 8, "network": "loopback"}),
        ("x86-dl380-e5-2630v4", "memcached", {"thread_cap": 16}),
        # a load generator on the server's cores (chain.client_cycles)
        ("x86-dl380-e5-2630v4", "memcached", {"thread_cap": 16, "client_colocated": True}),
        ("x86-dl380-e5-2630v4", "redis", {"thread_cap": 8, "network": "loopback", "client_colocated": True}),
        # a guest's VM exits per request message (catalog vm_exit_us x vm_exits_per_message)
        (SPECIAL_PLATFORMS[0], "memcached", {"network": "loopback"}),
        (SPECIAL_PLATFORMS[0], "memcached", {"network": "loopback", "client_colocated": True}),
        (SPECIAL_PLATFORMS[0], "redis", {"network": "loopback"}),
        # commits that do not wait for their log, and no log at all (mechanisms.durability)
        ("x86-dl380-e5-2630v4", "mysql", {"durability": "async"}),
        ("x86-dl380-e5-2630v4", "postgresql", {"durability": "async"}),
        ("x86-epyc-7351p", "rocksdb", {"durability": "off"}),
        ("x86-epyc-7351p", "rocksdb", {"memtable": "vector"}),
        ("x86-epyc-7351p", "rocksdb", {"compactions": "off"}),
        ("x86-micron-cassandra-testbed", "cassandra", {"durability": "off"}),
    ]
    for platform, system, knobs in special:
        rows.extend(_row(platform, name, system, knobs) for name in WORKLOADS)
    return rows


def _row(platform, workload, system, knobs) -> dict:
    """One configuration: clusters of 5 for the replicated systems, one node otherwise."""
    rf, consistency = {**SYSTEMS, **CORPUS_SYSTEMS}[system]
    nodes = 5 if system in ("scylla", "cassandra", "ceph") else 1
    return dict(platform=platform, workload=workload, system=system, nodes=nodes, rf=rf,
                consistency=consistency, knobs=knobs)  # fmt: skip


def predict_row(row) -> pd.DataFrame:
    w = Workload(**WORKLOADS[row["workload"]], replication_factor=row["rf"], consistency=row["consistency"])
    if row["system"] == "redis" and "iodepth" not in WORKLOADS[row["workload"]] and w.closed:
        pipelined = {**WORKLOADS[row["workload"]], "iodepth": 16}
        w = Workload(**pipelined, replication_factor=row["rf"])
    out = perfmodel.predict(
        row["platform"], w, nodes=row["nodes"], system=row["system"], params=PARAMS, **row["knobs"]
    )
    out.insert(
        0, "case", f"{row['platform']}|{row['workload']}|{row['system']}|{sorted(row['knobs'].items())}"
    )
    return out


def golden() -> pd.DataFrame:
    return pd.concat([predict_row(r) for r in configurations()], ignore_index=True)


if __name__ == "__main__":
    frame = golden()
    frame.to_csv(HERE / "predict_grid.csv", index=False, float_format="%.13g")
    print(f"wrote {len(frame)} rows x {frame.shape[1]} columns to {HERE / 'predict_grid.csv'}")
    print(
        "saturated rows:",
        int(frame["saturated"].sum()),
        "; non-finite p99:",
        int((~np.isfinite(frame["latency_p99_ms"])).sum()),
    )
