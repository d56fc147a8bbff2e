"""TPC-C result lines of HammerDB and BenchmarkSQL.

HammerDB (TPROC-C) prints ``TEST RESULT : System achieved 128176 NOPM from 298394 MariaDB TPM``
(HammerDB 3.0 and later; before: ``System achieved 298394 MariaDB TPM at 128176 NOPM``): NOPM,
New-Order transactions per minute, is the ``tpmc`` figure, TPM (all transactions, as the database
counts them) the ``throughput``. The load comes from ``24 Active Virtual Users configured``
(terminals) and ``Warehouses = 5 out of 120`` or the ``count_ware`` setting (warehouses).
Reference: HammerDB documentation (DocBook/docs.xml in TPC-Council/HammerDB, "Running the
workload").

BenchmarkSQL prints ``Measured tpmC (NewOrders) = 179.55`` and ``Measured tpmTOTAL = 329.17``, and,
in its log, the properties of the run (``warehouses=30``, ``terminals=10``, ``db=postgres``).
Reference: BenchmarkSQL HOW-TO-RUN (petergeoghegan/benchmarksql).
"""

from __future__ import annotations

import re

from perfmodel.evidence.ingest.common import IngestError, Parsed, lines, run_measurements

HAMMERDB = "hammerdb"
BENCHMARKSQL = "benchmarksql"
#: database names in the result line / db= property -> system
DATABASES = {"postgresql": "postgresql", "postgres": "postgresql", "mysql": "mysql"}
NEEDS = {"terminals": "virtual users / terminals of the run", "warehouses": "warehouses of the schema"}
TPCC = {"operation": "tpcc"}


def detect_hammerdb(text: str) -> bool:
    """A HammerDB log with a TEST RESULT line."""
    return bool(re.search(r"TEST RESULT : System achieved", text))


def detect_benchmarksql(text: str) -> bool:
    """A BenchmarkSQL log with its measured result."""
    return "Measured tpmC (NewOrders)" in text


def _hammerdb_load(text: str) -> dict:
    load = dict(TPCC)
    users = re.search(r"(\d+) Active Virtual Users configured", text) or re.search(
        r"= (\d+) Active Sessions configured", text
    )
    if users:
        load["terminals"] = int(users.group(1))
        load["clients"] = int(users.group(1))
        load["threads_per_client"] = 1
    ware = re.search(r"Warehouses = \d+ out of (\d+)", text) or re.search(
        r"Value (\d+) for tpcc:\w+_count_ware", text
    )
    if ware:
        load["warehouses"] = int(ware.group(1))
    return load


def parse_hammerdb(text: str) -> Parsed:
    """Figures of a HammerDB TPROC-C run: NOPM and TPM."""
    text = "\n".join(lines(text))
    new = re.search(r"TEST RESULT : System achieved (\d+) NOPM from (\d+) (\w[\w ]*?) TPM", text)
    old = re.search(r"TEST RESULT : System achieved (\d+) (\w[\w ]*?) TPM at (\d+) NOPM", text)
    if new:
        nopm, tpm, database = new.group(1), new.group(2), new.group(3)
    elif old:
        tpm, database, nopm = old.group(1), old.group(2), old.group(3)
    else:
        raise IngestError("the HammerDB log has no 'TEST RESULT : System achieved ...' line")
    values = [("tpmc", nopm, "tpm", "NOPM"), ("throughput", tpm, "tpm", f"{database} TPM")]
    out = run_measurements("result", "'TEST RESULT' line", _hammerdb_load(text), values)
    notes = [f"TPM is {database}'s own count of transactions per minute, not only TPC-C ones"]
    return Parsed(tuple(out), needs=NEEDS, notes=tuple(notes), system=DATABASES.get(database.lower(), ""))


def parse_benchmarksql(text: str) -> Parsed:
    """Figures of a BenchmarkSQL run: tpmC and tpmTOTAL."""
    text = "\n".join(lines(text))
    tpmc = re.findall(r"Measured tpmC \(NewOrders\) = ([\d.]+)", text)
    total = re.findall(r"Measured tpmTOTAL = ([\d.]+)", text)
    if not tpmc or not total:
        raise IngestError("the BenchmarkSQL log has no 'Measured tpmC (NewOrders)' and 'Measured tpmTOTAL'")
    load = dict(TPCC)
    props = dict(re.findall(r"Term-00, (warehouses|terminals|db)=(\S+)", text))
    if "warehouses" in props:
        load["warehouses"] = int(props["warehouses"])
    if "terminals" in props:
        load.update(terminals=int(props["terminals"]), clients=int(props["terminals"]), threads_per_client=1)
    values = [
        ("tpmc", tpmc[-1], "tpm", "'Measured tpmC (NewOrders)'"),
        ("throughput", total[-1], "tpm", "'Measured tpmTOTAL'"),
    ]
    out = run_measurements("result", "end report (Term-00)", load, values)
    return Parsed(tuple(out), needs=NEEDS, system=DATABASES.get(props.get("db", "").lower(), ""))
