"""RocksDB's write path, measured here: what the WAL append and the memtable's search cost a write.

``python -m tools.rocksdb_write_path [--runs N] [--num K]`` runs Debian's ``db_bench``
(rocksdb-tools) single-threaded on a database in ``/dev/shm`` (no device in the way: the time is
CPU), four ways, ``N`` times each, interleaved:

- ``fillrandom`` with the WAL (the write the shipped ``cpu_cycles_write[rocksdb]`` was fitted on:
  db_bench's default, the WAL on without sync), and with ``--disable_wal=1``;
- ``fillseq`` (keys in order) with the WAL off;
- ``fillrandom`` into a ``vector`` memtable with the WAL off (an append; sorted at flush).

From the medians it prints the shares of a random write's CPU that the system spec's parameters
``log_cpu_share[rocksdb]`` (the WAL append), ``ordered_insert_saving[rocksdb]`` (finding the
key's place in the skiplist, which an in-order insert skips) and ``vector_insert_saving[rocksdb]``
(the same search, which an append to a vector memtable defers to its flush) hold, and appends the runs to
``data/microbench/rocksdb-write-path.csv`` with the machine and the version. It is evidence from
outside the corpus (perfmodel.mechanisms.durability and .ordering use it), never fitted to a
recorded figure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from tools.microbench import append_runs, cpu_model

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "microbench" / "rocksdb-write-path.csv"
#: run name -> db_bench arguments
RUNS = {
    "fillrandom-wal": ["--benchmarks=fillrandom", "--disable_wal=0"],
    "fillrandom-nowal": ["--benchmarks=fillrandom", "--disable_wal=1"],
    "fillseq-nowal": ["--benchmarks=fillseq", "--disable_wal=1"],
    "fillrandom-vector-nowal": [
        "--benchmarks=fillrandom",
        "--disable_wal=1",
        "--memtablerep=vector",
        "--allow_concurrent_memtable_write=false",
    ],  # fmt: skip
}
COMMON = ["--value_size=100", "--key_size=16", "--threads=1", "--compression_type=none"]


def run_once(name: str, num: int, db_bench: str = "db_bench") -> float:
    """One db_bench run's time per write [us]."""
    folder = Path(tempfile.mkdtemp(prefix="rocksdb-write-path-", dir="/dev/shm"))
    try:
        out = subprocess.run(
            [db_bench, *RUNS[name], *COMMON, f"--num={num}", f"--db={folder}"],
            capture_output=True, text=True, timeout=600, check=True,
        ).stdout  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    match = re.search(r"^fill\w+\s*:\s*([\d.]+) micros/op", out, flags=re.M)
    if not match:
        raise RuntimeError(f"db_bench printed no result line for {name}:\n{out}")
    return float(match.group(1))


def shares(medians: dict[str, float]) -> dict[str, float]:
    """The shares of a random write's CPU [-]: the WAL append, and the skiplist search an in-order
    insert skips (from the WAL-off runs: random minus in-order)."""
    total = medians["fillrandom-wal"]
    return {
        "log_cpu_share": (total - medians["fillrandom-nowal"]) / total,
        "ordered_insert_saving": (medians["fillrandom-nowal"] - medians["fillseq-nowal"]) / total,
        "vector_insert_saving": (medians["fillrandom-nowal"] - medians["fillrandom-vector-nowal"]) / total,
    }


def version(db_bench: str = "db_bench") -> str:
    out = subprocess.run([db_bench, "--version"], capture_output=True, text=True, timeout=60).stdout
    return out.strip().splitlines()[0] if out.strip() else "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--num", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {name: [] for name in RUNS}
    for _ in range(args.runs):
        for name in RUNS:
            times[name].append(run_once(name, args.num))
    medians = {name: statistics.median(v) for name, v in times.items()}
    today, ver, cpu = dt.date.today().isoformat(), version(), cpu_model()
    rows = [{"date": today, "db_bench": ver, "cpu": cpu, "num": args.num, "run": name, "repetition": i + 1,
             "micros_per_op": value}
            for name, values in times.items() for i, value in enumerate(values)]  # fmt: skip
    append_runs(OUT, ["date", "db_bench", "cpu", "num", "run", "repetition", "micros_per_op"], rows)
    for name, value in medians.items():
        print(f"{name:26s} median {value:.3f} us/op over {args.runs} runs ({times[name]})")
    for key, value in shares(medians).items():
        print(f"{key}[rocksdb] = {value:.3f}")
    print(f"appended {sum(len(v) for v in times.values())} runs to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
